"""Memory of traces (defects D20, D15), measured as resident memory; run on demand, not in CI.

    python bench/mem_trace.py free  [N]    # D20: an N-op trace (default 100,000) deleted while
                                           #      its input lives: RSS held and left, graph freed
    python bench/mem_trace.py depth [D]    # D15: a D-deep chain of modules (default 3,000):
                                           #      peak RSS and time of trace_module
"""
import gc
import os
import sys
import time
import weakref

import reftrace as torch


def _rss_mib():
    """Resident memory now (Linux /proc; tracemalloc makes a 100,000-op trace take many minutes)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def free(n):
    x = torch.ones(4)

    def f(x):
        for _ in range(n):
            x = x + 1
        return x

    gc.collect()
    base = _rss_mib()
    t0 = time.perf_counter()
    tr = torch.jit.trace(f, x, check_trace=False)
    tr(x)  # generated code too
    dt = time.perf_counter() - t0
    graph = weakref.ref(tr.graph)
    held = _rss_mib() - base
    del tr
    gc.collect()
    left = _rss_mib() - base
    print(f"{n}-op trace ({dt:.0f} s): RSS +{held:.0f} MiB while alive, +{left:.0f} MiB after `del` "
          f"with the input alive (the allocator keeps some pages); graph freed: {graph() is None}")


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
