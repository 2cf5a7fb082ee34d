"""``python -m reftrace.conformance [PATHS]``: run programs under torch and reftrace, diff them.

A path is a spec chapter (``spec/*.md``), a program file (``*.py``, convention in programs.py)
or a directory of either; the default is every chapter of the checkout's ``spec/``. Each spec
example and each program is run under real torch (when installed) and under reftrace; the
report says, per program, whether stdout or graph text, outputs, warnings and errors agree, with
a unified diff for each section that does not, then ``N agree, M differ, K skipped``. The exit
code is 1 when anything differs.

Without torch, spec examples are compared with the spec's own expected text (which is torch's
output, written down) and program files are skipped. torch is imported here, lazily, and
nowhere else in reftrace.
"""
import argparse
import os
import sys

from . import programs, spec_examples
from .canon import drop_locations
from .compare import Outcome, Verdict, compare, error_message, unified, warning_texts


def import_torch():
    """Real torch, or None. Only the conformance runner calls this."""
    try:
        import torch
    except ImportError:
        return None
    return torch


# -- spec examples ----------------------------------------------------------------------------

def _spec_run(ex, lib):
    out, error, _tb, caught = spec_examples.execute(ex, lib)
    outcome = Outcome(stdout=drop_locations(out), warnings=warning_texts(caught),
                      error=error_message(error))
    return outcome, (out, error, caught)


def against_spec(ex, raw, verdict, label, prefix=""):
    """Diff one run against the example's result blocks, as tests/test_spec.py judges it."""
    out, error, caught = raw
    if ex.expected is not None and out != ex.expected:
        verdict.add(prefix + "stdout", unified(ex.expected, out, "spec", label))
    warned = [spec_examples.warning_line(w) for w in caught]
    missing = [w for w in ex.warns or () if not any(spec_examples.matches(g, w) for g in warned)]
    if missing:
        verdict.add(prefix + "warnings", unified("\n".join(ex.warns), "\n".join(warned) or "(none)",
                                                 "spec", label))
    got = None if error is None else spec_examples.error_text(error)
    if (ex.raises is None) != (got is None) or (got is not None and not spec_examples.matches(got, ex.raises)):
        verdict.add(prefix + "error", unified(ex.raises or "(none)", got or "(none)", "spec", label))


def check_example(ex, torch):
    """The verdict on one spec example: reftrace against torch, or against the spec's text."""
    import reftrace
    verdict = Verdict(ex.id if ex.index >= 0 else f"{ex.chapter}:{ex.rule}:line-{ex.line}")
    problem = spec_examples.format_error(ex)
    if problem:
        verdict.add("spec format", problem)
        return verdict
    if ex.only == "torch-only":
        verdict.status, verdict.reason = "skipped", "torch-only: reftrace differs on purpose"
        return verdict
    ours, our_raw = _spec_run(ex, reftrace)
    if torch is None or ex.only == "reftrace-only":
        # no oracle to run: the spec's text is torch's output written down (or reftrace's own,
        # for a reftrace-only rule)
        against_spec(ex, our_raw, verdict, "reftrace")
        return verdict
    theirs, their_raw = _spec_run(ex, torch)
    if ex.raises and ex.raises.endswith("...") and their_raw[1] is not None and our_raw[1] is not None:
        # the spec pins only the start of this (long) message: compare what it pins
        for outcome, raw in ((theirs, their_raw), (ours, our_raw)):
            if spec_examples.matches(spec_examples.error_text(raw[1]), ex.raises):
                outcome.error = ex.raises
    compare(theirs, ours, verdict)
    # the spec is torch's output written down: if torch itself no longer prints it, say so
    against_spec(ex, their_raw, verdict, "torch", prefix="spec vs torch: ")
    return verdict


# -- program files ----------------------------------------------------------------------------

class ProgramFile:
    """One program file: loaded under reftrace when collected (to list its programs), under
    torch once, when the first of its programs runs."""

    def __init__(self, path):
        import reftrace
        self.path = path
        self.stem = os.path.splitext(os.path.basename(path))[0]
        self.load_error, self.theirs = None, None
        try:
            self.ours = programs.load(path, reftrace)
        except Exception as e:
            self.ours, self.load_error = {}, f"loading {path} under reftrace failed: {error_message(e)}"
        if not self.ours and not self.load_error:  # a verdict of '0 agree' would hide the mistake
            self.load_error = (f"{path} defines no programs: neither functions named "
                               "program_<name> nor, as `python -m reftrace trace` files do, "
                               "`model` with EXAMPLE_INPUTS or a NAME with NAME_inputs")

    def ids(self):
        if self.load_error:
            return [f"{self.stem}:<load>"]
        return [f"{self.stem}:{name}" for name in self.ours]

    def check(self, program_id, torch):
        import reftrace
        verdict = Verdict(program_id)
        if self.load_error:
            verdict.add("error", self.load_error)
            return verdict
        if torch is None:
            verdict.status, verdict.reason = "skipped", "no torch to compare with"
            return verdict
        if self.theirs is None:
            try:
                self.theirs = programs.load(self.path, torch)
            except Exception as e:
                self.theirs = f"loading {self.path} under torch failed: {error_message(e)}"
        name = program_id.split(":", 1)[1]
        if isinstance(self.theirs, str):
            verdict.add("error", self.theirs)
        elif name not in self.theirs:
            verdict.add("error", f"{name} is defined only under reftrace")
        else:
            # torch first: the reftrace run takes its input values and module state
            their_outcome, taken = _keeping_dtype(torch, programs.run, torch, self.theirs[name])
            our_outcome, _ = _keeping_dtype(reftrace, programs.run, reftrace, self.ours[name], taken)
            compare(their_outcome, our_outcome, verdict)
        return verdict


def _keeping_dtype(lib, fn, *args):
    saved = lib.get_default_dtype()
    try:
        return fn(*args)
    finally:
        lib.set_default_dtype(saved)


# -- the report -------------------------------------------------------------------------------

def collect(paths):
    """[(id, check(torch) -> Verdict)] for the paths, in order: one per spec example or program."""
    items = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(os.listdir(path))
            items.extend(collect([os.path.join(path, n) for n in names
                                  if (n.endswith(".md") and n != "README.md") or n.endswith(".py")]))
        elif path.endswith(".md"):
            for ex in spec_examples.parse_chapter(path):
                items.append((ex.id, lambda torch, ex=ex: check_example(ex, torch)))
        elif path.endswith(".py"):
            f = ProgramFile(path)
            items.extend((i, lambda torch, f=f, i=i: f.check(i, torch)) for i in f.ids())
        else:
            raise SystemExit(f"reftrace.conformance: {path}: not a spec chapter (.md), a program "
                             "file (.py) or a directory")
    return items


def report(verdict, i, n, out, quiet=False):
    status = {"ok": "ok", "skipped": f"skipped ({verdict.reason})",
              "differs": f"DIFFERS ({verdict.reason})"}[verdict.status]
    if quiet and verdict.status != "differs":
        return
    print(f"[{i}/{n}] {verdict.id} ... {status}", file=out, flush=True)
    for section, diff in verdict.diffs:
        print(f"    {section}:", file=out)
        print("\n".join("      " + line for line in diff.splitlines()), file=out)


def run(paths=None, torch=None, out=None, quiet=False, select=None):
    """Run and report; returns the verdicts. ``torch``: the module to compare with, or None."""
    out = out or sys.stdout
    items = [(i, check) for i, check in collect(paths or [spec_examples.SPEC_DIR])
             if not select or select in i]
    verdicts = []
    # with -q nothing prints until something differs: on a terminal, say where the run is
    progress = quiet and sys.stderr.isatty()
    for n, (program_id, check) in enumerate(items, 1):
        if progress:
            print(f"\r[{n}/{len(items)}] {program_id}"[:79].ljust(79), end="", file=sys.stderr, flush=True)
        verdicts.append(check(torch))
        report(verdicts[-1], n, len(items), out, quiet)
    if progress:
        print("\r" + " " * 79 + "\r", end="", file=sys.stderr, flush=True)
    counts = {s: sum(v.status == s for v in verdicts) for s in ("ok", "differs", "skipped")}
    print(f"{counts['ok']} agree, {counts['differs']} differ, {counts['skipped']} skipped", file=out)
    return verdicts


def main(argv=None, prog="python -m reftrace.conformance"):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run programs under torch (when installed) and reftrace and report whether "
                    "their graph text, outputs, warnings and errors agree.",
        epilog="PATHS: spec chapters (spec/*.md), program files (*.py: functions named "
               "program_<name> returning (fn, example_inputs[, trace_kwargs]), written against "
               "the name `torch`, which the runner binds), or directories of them. Default: "
               "the checkout's spec/. Exit code 1 when anything differs.")
    parser.add_argument("paths", nargs="*", metavar="PATHS")
    parser.add_argument("-k", dest="select", metavar="TEXT",
                        help="only programs whose id contains TEXT (e.g. -k PRO-4, -k checker:)")
    parser.add_argument("-q", "--quiet", action="store_true", help="report only what differs")
    parser.add_argument("--no-torch", action="store_true",
                        help="do not import torch: compare spec examples with the spec's text")
    args = parser.parse_args(argv)
    if not args.paths and not os.path.isdir(spec_examples.SPEC_DIR):
        parser.error(f"no spec/ at {spec_examples.SPEC_DIR} (reftrace installed without its "
                     "checkout?): pass the paths to run")
    torch = None if args.no_torch else import_torch()
    if torch is not None:
        note = "" if torch.__version__.startswith("2.13") else " (the spec's oracle is 2.13)"
        print(f"conformance: reftrace against torch {torch.__version__}{note}")
    else:
        why = "--no-torch" if args.no_torch else "torch is not installed"
        print(f"conformance: {why}: comparing reftrace with the spec's expected text only "
              "(program files are skipped)")
    verdicts = run(args.paths, torch, quiet=args.quiet, select=args.select)
    return 1 if any(v.status == "differs" for v in verdicts) else 0
