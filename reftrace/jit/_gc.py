"""The cyclic garbage collector paused while a trace is built.

A trace makes tens of thousands of small Python objects (nodes, values, their lists) that
live on in the graph, linked both ways (node.prev/next, value.node_): all tracked by the
collector. While it runs, every few hundred allocations start a young-generation pass, the
survivors are promoted, and the promotions soon trigger full passes over every object in the
process: on a model trace that was two thirds of the time (torch's graph is C++ and costs its
collector nothing). Paused, the collector sees the finished graph once, on its next pass.

Only the outermost pause resumes collection (the checker's re-trace nests one), and only if
it was running before. What a trace leaves unreachable is collected then, as it would have
been a little later anyway.
"""
import gc
from contextlib import contextmanager


@contextmanager
def collector_paused():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
