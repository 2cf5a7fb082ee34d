"""tril, triu (ATen/native/TriangularOps.cpp): the lower / upper triangle of the last two dims
(``diagonal`` shifts it), the rest zero; results are contiguous (empty_like with
LEGACY_CONTIGUOUS_MEMORY_FORMAT)."""
from .._tensor import _fresh, xp_of
from ._pointwise_helpers import write_inplace
from ._registry import derivatives, op


def _check(self, name):
    if self._array.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def _triangle(self, diagonal, lower):
    xp = xp_of(self)
    a = self._array
    rows, cols = a.shape[-2:]
    keep = xp.tri(rows, cols, diagonal, dtype=bool) if lower else ~xp.tri(rows, cols, diagonal - 1, dtype=bool)
    return _fresh(xp.where(keep, a, xp.zeros((), a.dtype)), self.dtype, self.device)


@op("tril(Tensor self, SymInt diagonal=0) -> Tensor", variants=("method", "function"))
def tril(self, diagonal):
    _check(self, "tril")
    return _triangle(self, diagonal, True)


derivatives(tril, {"self": "grad.tril(diagonal)"})


@op("tril_(Tensor(a!) self, SymInt diagonal=0) -> Tensor(a!)", variants=("method",))
def tril_(self, diagonal):
    _check(self, "tril")
    return write_inplace(self, _triangle(self, diagonal, True))


@op("triu(Tensor self, SymInt diagonal=0) -> Tensor", variants=("method", "function"))
def triu(self, diagonal):
    _check(self, "triu")
    return _triangle(self, diagonal, False)


derivatives(triu, {"self": "grad.triu(diagonal)"})


@op("triu_(Tensor(a!) self, SymInt diagonal=0) -> Tensor(a!)", variants=("method",))
def triu_(self, diagonal):
    _check(self, "triu")
    return write_inplace(self, _triangle(self, diagonal, False))


derivatives(tril_, tril.derivatives)  # (the functional's entries)
derivatives(triu_, triu.derivatives)
