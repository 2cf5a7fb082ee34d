"""Remembered layout arithmetic: a model asks the same questions of the same layouts every call.

View kernels and TensorIterator's layout rules are pure functions of sizes, strides and int
arguments, yet each costs microseconds of Python, where the kernel's NumPy work costs less than
one. ``remembered`` keeps such a function's answers per arguments, in a bounded dict (emptied
when full: a model's layouts are few). A call that raises is not kept (the next one raises the
same error again), nor one whose arguments are anything but ints, None and tuples of those: a
0-dim tensor standing in for a traced size may change its value, a bool is no int to torch.
"""
import functools

_LIMIT = 4096
_MISS = object()


def _plain(key):
    for k in key:
        if type(k) is tuple:
            if not _plain(k):
                return False
        elif type(k) is not int and k is not None:
            return False
    return True


def keep_plan(cache, key, value, limit):
    """Store ``value`` under ``key`` in a kernel's bounded plan cache (emptied when full: a
    model's signatures are few) and return it: the one store every plan cache of ops/ uses."""
    if len(cache) >= limit:
        cache.clear()
    cache[key] = value
    return value


def remembered(compute):
    """``compute`` with its answers kept per (positional, hashable) arguments."""
    cache = {}

    @functools.wraps(compute)
    def get(*key):
        try:
            value = cache.get(key, _MISS)
        except TypeError:  # an unhashable argument (a list): computed, not kept
            return compute(*key)
        if value is _MISS:
            value = compute(*key)
            if _plain(key):
                keep_plan(cache, key, value, _LIMIT)
        return value
    get.cache = cache
    return get
