"""torch/nn/modules/utils.py: the argument normalisers the layers share."""
import collections.abc
from itertools import repeat


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")


def _reverse_repeat_tuple(t, n):
    """(1, 2) -> (2, 2, 1, 1): per-dim padding in F.pad's order (last dim first, both sides)."""
    return tuple(x for x in reversed(t) for _ in range(n))
