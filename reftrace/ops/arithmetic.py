"""Pointwise arithmetic: add, sub, mul (more to come in this family)."""
import numpy as np

from ._pointwise_helpers import binary, write_inplace
from ._registry import op


def _scaled(other, alpha):
    # alpha * other with alpha's Python type: torch computes other * alpha in the result type
    return other if alpha == 1 else other * alpha


@op("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", variants=("function", "method"))
def add(self, other, alpha):
    if alpha == 1:
        return binary(self, other, np.add)
    return binary(self, other, lambda x, y: x + y * np.asarray(alpha, dtype=x.dtype))


@op("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", variants=("method",))
def add_(self, other, alpha):
    return write_inplace(self, add.kernel(self, other, alpha))


@op("mul.Tensor(Tensor self, Tensor other) -> Tensor", variants=("function", "method"))
def mul(self, other):
    return binary(self, other, np.multiply)


@op("mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=("method",))
def mul_(self, other):
    return write_inplace(self, mul.kernel(self, other))
