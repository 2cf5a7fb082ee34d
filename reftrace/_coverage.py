"""``python -m reftrace coverage``: which of torch 2.13's public names reftrace implements.

    python -m reftrace coverage                 # per namespace: implemented / torch's total
    python -m reftrace coverage --missing       # ... and the names reftrace lacks
    python -m reftrace coverage --implemented   # ... and the names it has

torch's names are the checked-in list reftrace/_torch_names.py (tests/gen_torch_names.py).
"""
import argparse

from ._torch_names import TORCH_NAMES


def _namespaces():
    import reftrace
    return {"torch": reftrace, "torch.Tensor": reftrace.Tensor, "torch.linalg": reftrace.linalg,
            "torch.special": reftrace.special, "torch.fft": reftrace.fft,
            "torch.signal.windows": reftrace.signal.windows, "torch.masked": reftrace.masked}


def survey():
    """{namespace: (implemented names, missing names)}"""
    out = {}
    for ns, obj in _namespaces().items():
        have, lack = [], []
        for name in TORCH_NAMES[ns]:
            (have if hasattr(obj, name) else lack).append(name)
        out[ns] = (have, lack)
    return out


def main(argv, prog="python -m reftrace coverage"):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0].split(": ", 1)[1])
    parser.add_argument("--missing", action="store_true", help="list the torch names reftrace lacks")
    parser.add_argument("--implemented", action="store_true", help="list the torch names reftrace has")
    args = parser.parse_args(argv)
    total_have = total = 0
    for ns, (have, lack) in survey().items():
        n = len(have) + len(lack)
        total_have, total = total_have + len(have), total + n
        print(f"{ns:20s} {len(have):5d} / {n:5d} implemented ({100.0 * len(have) / n:5.1f}%)")
        if args.implemented:
            print("  implemented: " + ", ".join(have))
        if args.missing:
            print("  missing: " + ", ".join(lack))
    print(f"{'all':20s} {total_have:5d} / {total:5d} implemented ({100.0 * total_have / total:5.1f}%)")
    return 0
