"""Print reftrace's OpInfo coverage: how many of torch 2.13's OpInfos outside torch.nn pass
tests/opinfo_support.check_opinfo (every compared sample equal to torch's).

    PYTHONPATH=$PWD python tests/opinfo_coverage.py           # first sample of each OpInfo
    PYTHONPATH=$PWD python tests/opinfo_coverage.py --full    # every dtype and reference input
    ... --write   also rewrites tests/data/opinfo_uncovered.json (the list test_opinfo.py holds
                  reftrace to; run it with --full, then review the diff: the list only shrinks)
    ... --prune   rechecks only the listed OpInfos and takes off the list those that now pass
                  (quick, after adding ops)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from opinfo_support import DATA, Uncovered, check_opinfo, key, selected_opinfos  # noqa: E402


def survey(full):
    failures = {}
    opinfos = selected_opinfos()
    for o in opinfos:
        try:
            check_opinfo(o, full=full)
        except Uncovered as e:
            failures[key(o)] = str(e)
        except Exception as e:  # a crash of the harness or of reftrace outside a sample
            failures[key(o)] = f"{type(e).__name__}: {e}"[:200]
    return opinfos, failures


def _check(o, full):
    try:
        check_opinfo(o, full=full)
        return None
    except Exception as e:
        return str(e) if isinstance(e, Uncovered) else f"{type(e).__name__}: {e}"[:200]


def prune():
    with open(DATA) as f:
        listed = json.load(f)
    kept = {}
    for o in selected_opinfos():
        k = key(o)
        if k not in listed:
            continue
        first = _check(o, False)
        full = first or _check(o, True)
        if full is None:
            print(f"{k}: now passes, taken off the list")
            continue
        kept[k] = {"reason": full, **({} if first else {"full_only": True})}
    with open(DATA, "w") as f:
        json.dump(kept, f, indent=1, sort_keys=True)
        f.write("\n")


def main(argv):
    if "--prune" in argv:
        return prune()
    full = "--full" in argv
    opinfos, failures = survey(full)
    if "--verbose" in argv:
        for k, why in failures.items():
            print(f"{k}: {why}")
    n = len(opinfos)
    ok = n - len(failures)
    print(f"OpInfo coverage ({'full: every dtype and reference input' if full else 'first sample'}): "
          f"{ok}/{n} OpInfos outside torch.nn pass ({100.0 * ok / n:.1f}%)")
    if "--write" in argv:
        old = {}
        if os.path.exists(DATA):
            with open(DATA) as f:
                old = json.load(f)
        if not full:
            # the default run only sees first samples: keep what the full run recorded
            failures = {k: v for k, v in old.items() if k in failures or v.get("full_only")}
        else:
            _, first = survey(False)
            failures = {k: {"reason": why, **({} if k in first else {"full_only": True})}
                        for k, why in failures.items()}
        with open(DATA, "w") as f:
            json.dump(failures, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
