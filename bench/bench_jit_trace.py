"""Trace time of the example programs, reftrace.jit.trace vs torch.jit.trace, in one run.

    python bench/bench_jit_trace.py                # every program of examples/, both check modes
    python bench/bench_jit_trace.py --quick        # fewer, shorter repeats
    python bench/bench_jit_trace.py --profile NAME [--check]   # cProfile of reftrace tracing NAME
    python bench/bench_jit_trace.py --in-a-row mobilenet,unet  # 10 traces in a row, collector on

Programs: every traceable program of examples/*.py, loaded as the conformance runner loads them
(reftrace/conformance/programs.py: the models with their EXAMPLE_INPUTS, control_flow's
functions, programs.py's small functions), plus a 100-op elementwise chain (bench/_common.py).
Each is built once per library (reftrace gets torch's input values and parameters, so
data-dependent tracing takes the same path) and traced with its own trace kwargs, once with
check_trace=False and once with check_trace=True (the checker re-traces and compares graphs;
a program whose kwargs set check_trace is timed only in that mode).

Timing: both libraries single-threaded (torch.set_num_threads(1); OMP/OPENBLAS/MKL threads 1,
set before NumPy and torch load); the minimum over rounds of the mean time per trace, the
libraries taking turns within each round (bench/_common.py: per_call; BENCH_CPU_TIME=1 times CPU
time). The garbage collector runs, as it does for a user (timeit pauses it by default; a
trace allocates many long-lived objects, and the collector's passes over them are part of
reftrace's cost). Prints per-program ratios reftrace/torch and their geometric mean per mode.
Target (issue 15): reftrace <= 0.5x torch in both modes.
"""
import argparse
import glob
import math
import os
import sys
import time

# bench_models' set-up: one thread per library (set before NumPy and torch load), reftrace from
# this checkout, torch or None, torch's deprecation warning for jit.trace silenced
from bench_models import ROOT, torch
import reftrace  # noqa: E402
from reftrace.conformance import programs as conformance  # noqa: E402
from _common import chain, per_call  # noqa: E402


def program_files():
    return sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))


def built(lib, build, inputs_from=None):
    """(fn, inputs, kwargs) of one program under ``lib``; with ``inputs_from`` (another run's
    snapshot) its input values and module state, as the conformance runner transplants them."""
    lib.manual_seed(0)
    made = build()
    fn, inputs = made[0], made[1]
    kwargs = dict(made[2]) if len(made) > 2 else {}
    if inputs_from is not None:
        inputs = conformance.transplant(lib, inputs, inputs_from[0])
        conformance.load_state(lib, fn, inputs_from[1])
    return fn, inputs, kwargs


def programs(libs):
    """name -> {lib name: (fn, inputs, kwargs)} for every program that traces under every lib."""
    found = {}
    for path in program_files():
        stem = os.path.basename(path)[:-3]
        per_lib = {lib.__name__: conformance.load(path, lib) for lib in libs}
        first = libs[0].__name__
        for name, build in per_lib[first].items():
            label = f"{stem}:{name}" if name != "model" else stem
            made = {first: built(libs[0], build)}
            snap = (conformance.snapshot(libs[0], made[first][1]),
                    conformance.module_state(libs[0], made[first][0]))
            for lib in libs[1:]:
                made[lib.__name__] = built(lib, per_lib[lib.__name__][name], snap)
            found[label] = made
    for lib in libs:  # a small function with many nodes: the per-node cost
        found.setdefault("chain100", {})[lib.__name__] = (chain(100), lib.ones(16), {})
    return found


def tracer(lib, fn, inputs, kwargs, check):
    kwargs = dict(kwargs)
    kwargs.setdefault("check_trace", check)

    def trace():
        return lib.jit.trace(fn, inputs, **kwargs)
    return trace


def traces(lib, made, check):
    """The trace call, or None where tracing raises (nothing to time)."""
    fn, inputs, kwargs = made
    if "check_trace" in kwargs and kwargs["check_trace"] != check:
        return None
    call = tracer(lib, fn, inputs, kwargs, check)
    try:
        call()
    except Exception:
        return None
    return call


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def compare(repeat, min_time):
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}; "
          f"timer {'CPU' if os.environ.get('BENCH_CPU_TIME') == '1' else 'wall'}")
    progs = programs([torch, reftrace])
    for check in (False, True):
        print(f"\ncheck_trace={check}")
        print(f"{'program':<34}{'torch ms':>10}{'reftrace ms':>13}{'ratio':>8}")
        ratios = []
        for label, made in progs.items():
            fns = {lib.__name__: traces(lib, made[lib.__name__], check) for lib in (torch, reftrace)}
            if None in fns.values():
                continue
            t = per_call(fns, repeat, min_time, gc=True)
            ratios.append(t["reftrace"] / t["torch"])
            print(f"{label:<34}{t['torch'] * 1e3:>10.2f}{t['reftrace'] * 1e3:>13.2f}{ratios[-1]:>8.2f}",
                  flush=True)
        print(f"{'geometric mean':<57}{geomean(ratios):>8.2f}   (target <= 0.5; max {max(ratios):.2f})")


def in_a_row(names, rounds=3, n=10):
    """CPU ms per trace over ``n`` traces in a row, collector running, best of ``rounds``: what
    repeated tracing costs, full collections included (min-of-rounds batches mostly miss them)."""
    libs = [lib for lib in (torch, reftrace) if lib is not None]
    if torch is not None:
        torch.set_num_threads(1)
    progs = programs(libs)
    print(f"{'program':<28}" + "".join(f"{lib.__name__ + (' checked' if c else ''):>18}"
                                         for c in (False, True) for lib in libs))
    for name in names:
        row = []
        for check in (False, True):
            for lib in libs:
                call = traces(lib, progs[name][lib.__name__], check)
                best = float("inf")
                for _ in range(rounds if call else 0):
                    t0 = time.process_time()
                    for _ in range(n):
                        call()
                    best = min(best, (time.process_time() - t0) / n)
                row.append(f"{best * 1e3:>18.2f}" if call else f"{'-':>18}")
        print(f"{name:<28}" + "".join(row), flush=True)


def profile(name, check, rounds=20):
    import cProfile
    import pstats
    made = programs([reftrace])[name]["reftrace"]
    call = tracer(reftrace, *made, check)
    call()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(rounds):
        call()
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--profile", metavar="NAME")
    parser.add_argument("--check", action="store_true", help="--profile with check_trace=True")
    parser.add_argument("--in-a-row", metavar="NAMES", help="comma-separated programs: 10 traces in a row")
    args = parser.parse_args()
    if args.in_a_row:
        in_a_row(args.in_a_row.split(","))
    elif args.profile:
        profile(args.profile, args.check)
    elif torch is None:
        sys.exit("torch is not installed: nothing to compare with (--profile NAME still works)")
    else:
        compare(*((3, 0.05) if args.quick else (7, 0.2)))


if __name__ == "__main__":
    main()
