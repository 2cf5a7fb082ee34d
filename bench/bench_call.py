"""Calling a trace: generated code vs the interpreter vs eager vs torch vs raw NumPy; and tracing
with check_trace=True, reftrace vs torch. Every ratio is measured within this one run.

    python bench/bench_call.py            # about a minute
    python bench/bench_call.py --quick    # fewer, shorter repeats

1. Per op, 16-element float32 tensors, a chain of N alternating ``x + 0.5`` / ``x * 1.0001``
   (N = 100, 1000): a traced call through generated code (what ``traced(x)`` runs) and through
   the interpreter (``traced.run_interpreted(x)``), against eager reftrace and torch's traced call.
   Targets (issue 5): generated code within 1.5x of torch's traced call, the interpreter within 3x.
2. The same chain (N = 20) on 1M-element float32 tensors, against the same chain written in raw
   NumPy. Target: generated code within 1.05x of NumPy (each intermediate must die at once).
3. Trace time per recorded op with check_trace=True (the default), reftrace vs torch, and what
   checking costs over check_trace=False in each library.

Figures are the minimum over rounds of the mean time per call; the contenders take turns within
each round so that a noisy moment on a shared machine slows all of them alike.
"""
import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import reftrace  # noqa: E402
from _common import TIMER, chain, per_call  # noqa: E402

try:
    import torch
except ImportError:  # torch is optional: its columns then say n/a
    torch = None

warnings.simplefilter("ignore")  # torch 2.13 deprecates torch.jit.trace itself


def ratio(a, b):
    return f"{a / b:6.2f}x" if a is not None and b else "    n/a"


def us(v):
    return f"{v * 1e6:8.2f}" if v is not None else "     n/a"


def small_chains(sizes, repeat, min_time):
    print("1. traced call, per op, 16-element float32 chain  [us/op]")
    head = (f"{'N':>6} {'eager':>8} {'interp':>8} {'codegen':>8} {'torch':>8}   "
            f"{'cg/torch':>8} {'int/torch':>9} {'cg/eager':>8} {'int/eager':>9}")
    print(head)
    for n in sizes:
        fn = chain(n)
        x = reftrace.from_numpy(np.ones(16, np.float32))
        traced = reftrace.jit.trace(fn, x, check_trace=False)
        fns = {"eager": lambda: fn(x), "interp": lambda: traced.run_interpreted(x),
               "codegen": lambda: traced(x)}
        if torch is not None:
            tx = torch.ones(16)
            ttraced = torch.jit.trace(fn, tx, check_trace=False)
            for _ in range(3):  # torch profiles and optimises its first runs
                ttraced(tx)
            fns["torch"] = lambda: ttraced(tx)
        t = {k: v / n for k, v in per_call(fns, repeat, min_time).items()}
        th = t.get("torch")
        print(f"{n:>6} {us(t['eager'])} {us(t['interp'])} {us(t['codegen'])} {us(th)}   "
              f"{ratio(t['codegen'], th):>8} {ratio(t['interp'], th):>9} "
              f"{ratio(t['codegen'], t['eager']):>8} {ratio(t['interp'], t['eager']):>9}")


def large_chain(n, repeat):
    print(f"\n2. traced call, {n}-op chain on 1M-element float32 tensors  [ms per call]")
    a = np.random.default_rng(0).random(1_000_000, dtype=np.float32)
    x = reftrace.from_numpy(a.copy())
    fn = chain(n)
    traced = reftrace.jit.trace(fn, x, check_trace=False)
    raw = chain(n)
    same = traced(x).numpy().tobytes() == raw(a).tobytes()
    fns = {"numpy": lambda: raw(a), "codegen": lambda: traced(x),
           "interp": lambda: traced.run_interpreted(x), "eager": lambda: fn(x)}
    # one call per timing, many rounds: a loop of back-to-back calls would also time how the
    # allocator recycles 4 MB blocks between calls, which is not what the trace costs
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(10 * repeat):
        for k, f in fns.items():
            t0 = TIMER()
            f()
            best[k] = min(best[k], TIMER() - t0)
    t = best
    print(f"{'numpy':>8} {'codegen':>8} {'interp':>8} {'eager':>8}   {'cg/numpy':>8} {'int/numpy':>9} "
          f"{'eager/numpy':>11}  bit-identical to numpy")
    ms = lambda v: f"{v * 1e3:8.2f}"  # noqa: E731
    print(f"{ms(t['numpy'])} {ms(t['codegen'])} {ms(t['interp'])} {ms(t['eager'])}   "
          f"{ratio(t['codegen'], t['numpy']):>8} {ratio(t['interp'], t['numpy']):>9} "
          f"{ratio(t['eager'], t['numpy']):>11}  {same}")


def checked_traces(sizes, repeat):
    print("\n3. trace time per recorded op, 16-element float32 chain  [us/op]")
    print(f"{'N':>6} {'rt check':>9} {'torch check':>11} {'rt/torch':>8}   "
          f"{'rt nocheck':>10} {'torch nocheck':>13}   {'rt check cost':>13} {'torch check cost':>16}")
    for n in sizes:
        fn = chain(n)
        x = reftrace.from_numpy(np.ones(16, np.float32))
        fns = {"rt": lambda: reftrace.jit.trace(fn, x),
               "rt0": lambda: reftrace.jit.trace(fn, x, check_trace=False)}
        if torch is not None:
            tx = torch.ones(16)
            fns["th"] = lambda: torch.jit.trace(fn, tx)
            fns["th0"] = lambda: torch.jit.trace(fn, tx, check_trace=False)
        t = {k: v / n for k, v in per_call(fns, repeat, 0.05).items()}
        th, th0 = t.get("th"), t.get("th0")
        print(f"{n:>6} {us(t['rt']):>9} {us(th):>11} {ratio(t['rt'], th):>8}   {us(t['rt0']):>10} "
              f"{us(th0):>13}   {ratio(t['rt'], t['rt0']):>13} {ratio(th, th0):>16}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    args = p.parse_args(argv)
    repeat, min_time = (3, 0.05) if args.quick else (7, 0.2)
    print(f"numpy {np.__version__}, reftrace {reftrace.__version__}, "
          + (f"torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else "torch not installed")
          + f"; min of {repeat} rounds\n")
    small_chains((100, 1000), repeat, min_time)
    large_chain(20, repeat)
    checked_traces((100, 1000), 3 if args.quick else 5)


if __name__ == "__main__":
    main()
