"""Trace cost and traced-call cost, reftrace vs torch, measured side by side in one run.

    python bench/bench_trace.py            # full run (N up to 10,000; a 100,000-op scaling row)
    python bench/bench_trace.py --quick    # smaller N

Reports, per recorded op: trace time (check_trace=False) for reftrace and torch.jit.trace, the
traced call (reftrace's generated code vs torch's executor; bench_call.py also times the
interpreter and raw NumPy) against eager reftrace, and the memory
a reftrace graph holds per node. Workloads: a chain of N elementwise ops on 16-element float32
tensors, and a 10-layer MLP written with functional ops (batch 8, width 64).
"""
import gc
import sys
import time
import tracemalloc
import warnings

import numpy as np

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
import reftrace  # noqa: E402
from _common import best, chain  # noqa: E402

try:
    import torch
except ImportError:  # torch is optional: its columns then say n/a
    torch = None

warnings.simplefilter("ignore")


def mlp(lib, weights):
    F = lib.nn.functional

    def f(x):
        for w, b in weights:
            x = F.relu(F.linear(x, w, b))
        return x
    return f


def measure(lib, fn, example, n_ops, repeat):
    trace = best(lambda: lib.jit.trace(fn, example, check_trace=False), repeat)
    traced = lib.jit.trace(fn, example, check_trace=False)
    traced(example)  # warm up (torch profiles and optimises its first runs)
    traced(example)
    call = best(lambda: traced(example), repeat)
    eager = best(lambda: fn(example), repeat)
    return trace / n_ops * 1e6, call / n_ops * 1e6, eager / n_ops * 1e6


def bytes_per_node(fn, example):
    gc.collect()
    tracemalloc.start()
    traced = reftrace.jit.trace(fn, example, check_trace=False)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return held / max(1, len(traced.graph.nodes()))


def row(name, rt, th):
    fmt = lambda v: f"{v:9.2f}" if v is not None else "      n/a"  # noqa: E731
    ratio = lambda a, b: f"{a / b:6.2f}x" if b else "    n/a"  # noqa: E731
    print(f"{name:<24} trace {fmt(rt[0])} vs torch {fmt(th[0] if th else None)} ({ratio(rt[0], th[0] if th else None)})"
          f" | call {fmt(rt[1])} vs torch {fmt(th[1] if th else None)} ({ratio(rt[1], th[1] if th else None)})"
          f" | reftrace eager {fmt(rt[2])} (call/eager {rt[1] / rt[2]:.2f}x)   [us/op]")


def main():
    quick = "--quick" in sys.argv
    sizes = (100, 1000) if quick else (100, 1000, 10000)
    x = np.ones(16, np.float32)
    for n in sizes:
        repeat = 3 if n >= 10000 else 5
        rt = measure(reftrace, chain(n), reftrace.from_numpy(x.copy()), n, repeat)
        th = measure(torch, chain(n), torch.from_numpy(x.copy()), n, repeat) if torch and n <= 1000 else None
        row(f"chain N={n}", rt, th)
    if not quick:
        t0 = time.perf_counter()
        reftrace.jit.trace(chain(100000), reftrace.from_numpy(x.copy()), check_trace=False)
        print(f"chain N=100000          trace {(time.perf_counter() - t0) / 100000 * 1e6:9.2f} us/op (linear scaling check)")
    print(f"memory held per graph node: {bytes_per_node(chain(10000), reftrace.from_numpy(x.copy())):.0f} bytes")
    if hasattr(reftrace, "nn") and hasattr(reftrace.nn, "functional"):
        rng = np.random.default_rng(0)
        ws = [(rng.standard_normal((64, 64)).astype(np.float32) * 0.1, rng.standard_normal(64).astype(np.float32))
              for _ in range(10)]
        xin = rng.standard_normal((8, 64)).astype(np.float32)
        rw = [(reftrace.from_numpy(w), reftrace.from_numpy(b)) for w, b in ws]
        rt = measure(reftrace, mlp(reftrace, rw), reftrace.from_numpy(xin), 20, 5)
        th = None
        if torch:
            tw = [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in ws]
            th = measure(torch, mlp(torch, tw), torch.from_numpy(xin), 20, 5)
        row("MLP 10 layers", rt, th)


if __name__ == "__main__":
    main()
