"""What the benchmarks share: the op chain they trace and the timing loop.

BENCH_CPU_TIME=1 times with the process's CPU time instead of the wall clock: on a machine shared
with other jobs, waiting for a core then costs nothing (the single-threaded calls compared here
use one core either way; torch must then run with one thread, as these benchmarks set it).
"""
import os
import time
import timeit

TIMER = time.process_time if os.environ.get("BENCH_CPU_TIME") == "1" else time.perf_counter


def chain(n):
    """n elementwise ops with Python-number operands; runs on reftrace and torch tensors and on
    NumPy arrays alike (NumPy 2 keeps Python floats weak, as torch's wrapped numbers)."""
    def f(x):
        for i in range(n):
            x = x * 1.0001 if i % 2 else x + 0.5
        return x
    return f


def loop_count(timer, min_time):
    """Calls per timing so that one timing lasts at least ``min_time`` seconds."""
    number = 1
    while timer.timeit(number) < min_time:
        number *= 2 if number < 1000 else 10
    return number


def per_call(fns, repeat, min_time, gc=False):
    """Seconds per call of each function: the best of ``repeat`` timings.

    The libraries take turns within each round, so a noisy moment on a shared machine slows
    all of them alike instead of skewing one ratio. timeit pauses the garbage collector while it
    times; ``gc=True`` keeps it running (for work that allocates many long-lived objects, such as
    building a graph, the collector's passes are part of the cost a user sees).
    """
    setup = "import gc; gc.enable()" if gc else "pass"
    timers = {name: timeit.Timer(fn, setup, timer=TIMER) for name, fn in fns.items()}
    numbers = {name: loop_count(t, min_time) for name, t in timers.items()}
    best = dict.fromkeys(timers, float("inf"))
    for _ in range(repeat):
        for name, t in timers.items():
            best[name] = min(best[name], t.timeit(numbers[name]) / numbers[name])
    return best


def best(fn, repeat=5):
    """Seconds of the fastest of ``repeat`` single calls (for calls long enough to time alone)."""
    times = []
    for _ in range(repeat):
        t0 = TIMER()
        fn()
        times.append(TIMER() - t0)
    return min(times)
