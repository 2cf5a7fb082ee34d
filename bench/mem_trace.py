"""Memory of traces (defects D20, D15), measured with tracemalloc; run on demand, not in CI.

    python bench/mem_trace.py free  [N]    # D20: an N-op trace (default 100,000) deleted while
                                           #      its input lives: how much memory stays
    python bench/mem_trace.py depth [D]    # D15: a D-deep chain of modules (default 3,000):
                                           #      peak RSS and time of trace_module
"""
import gc
import sys
import time
import tracemalloc

import reftrace as torch


def free(n):
    x = torch.ones(4)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]

    def f(x):
        for _ in range(n):
            x = x + 1
        return x

    tr = torch.jit.trace(f, x, check_trace=False)
    tr(x)  # generated code too
    held = tracemalloc.get_traced_memory()[0] - base
    del tr
    gc.collect()
    left = tracemalloc.get_traced_memory()[0] - base
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    print(f"{n}-op trace: held {held / 2**20:.1f} MiB while alive, peak {peak / 2**20:.1f} MiB, "
          f"{left / 2**10:.1f} KiB left after `del` with the input alive")


class Leaf(torch.nn.Module):
    def forward(self, x):
        return x + 1


class Wrap(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x) * 1


def depth(d):
    """Peak resident memory of the whole process (ru_maxrss) and wall time: tracemalloc slows a
    trace this deep by orders of magnitude."""
    import resource
    m = Leaf()
    for _ in range(d):
        m = Wrap(m)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20 * d + 1000))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    tr = torch.jit.trace(m, torch.ones(2), check_trace=False)
    dt = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert tr(torch.ones(2)).tolist() == [2.0, 2.0]
    print(f"depth {d}: trace_module {dt:.1f} s, process peak RSS {peak / 2**10:.0f} MiB "
          f"({before / 2**10:.0f} MiB before tracing)")


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "free"
    arg = int(sys.argv[2]) if len(sys.argv) > 2 else None
    free(arg or 100_000) if what == "free" else depth(arg or 3000)
