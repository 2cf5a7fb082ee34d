"""scatter with a reduction and scatter_add (ATen/native/TensorAdvancedIndexing.cpp).

``scatter(..., reduce='add'|'multiply')`` and ``scatter_add`` accumulate: every index writes,
duplicates included, in torch's order (NumPy's ``ufunc.at`` applies repeated indices one after
the other, unbuffered, as torch's sequential CPU kernel does).
"""
from .._frames import warn_at_caller
from .._tensor import xp_of
from ._registry import derivatives, op
from .indexing import _scatter_gather_checks, _src_block
from .shape import _dense_copy

_REDUCE_UFUNCS = {"add": "add", "multiply": "multiply"}
_WARNED = []


def _reduce_ufunc(xp, reduce):
    if reduce not in _REDUCE_UFUNCS:
        raise RuntimeError("reduce argument must be either add or multiply.")
    return getattr(xp, _REDUCE_UFUNCS[reduce])


def _accumulate(out, dim, index, values, ufunc):
    """out[... index ...] (ufunc)= values along ``dim``, one index at a time."""
    xp = xp_of(out)
    a, idx = out._array, index._array
    if not idx.size:
        return out
    if a.ndim == 0:
        flat = values.reshape(-1) if xp.ndim(values) else xp.full(idx.size, values)
        for v in flat[:idx.size]:
            a[...] = ufunc(a, v)
        return out
    coords = list(xp.indices(idx.shape, sparse=True))
    coords[dim] = idx.astype(xp.int64)
    if xp.ndim(values):
        values = _src_block(values, idx.shape)
    ufunc.at(a, tuple(coords), values)
    return out


def _warn_tensor_src_reduce():
    # TORCH_WARN_ONCE: once per process
    if not _WARNED:
        _WARNED.append(True)
        warn_at_caller("The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                       "removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                       "reduction options.")


def _src_check(self, src):
    if src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")


@op("scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor",
    variants=("function", "method"))
def scatter_reduce_src(self, dim, index, src, reduce):
    _src_check(self, src)
    dim, _ = _scatter_gather_checks(self, dim, index, src._array, op="scatter")
    ufunc = _reduce_ufunc(xp_of(self), reduce)
    _warn_tensor_src_reduce()
    return _accumulate(_dense_copy(self), dim, index, src._array, ufunc)


@op("scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor",
    variants=("function", "method"))
def scatter_reduce_value(self, dim, index, value, reduce):
    dim, _ = _scatter_gather_checks(self, dim, index, op="scatter")
    ufunc = _reduce_ufunc(xp_of(self), reduce)
    return _accumulate(_dense_copy(self), dim, index, xp_of(self).asarray(value).astype(self._array.dtype), ufunc)


@op("scatter_.reduce(Tensor(a!) self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor(a!)",
    variants=("method",))
def scatter__reduce_src(self, dim, index, src, reduce):
    _src_check(self, src)
    dim, _ = _scatter_gather_checks(self, dim, index, src._array, op="scatter")
    ufunc = _reduce_ufunc(xp_of(self), reduce)
    _warn_tensor_src_reduce()
    self._version += 1
    return _accumulate(self, dim, index, src._array, ufunc)


@op("scatter_.value_reduce(Tensor(a!) self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor(a!)",
    variants=("method",))
def scatter__reduce_value(self, dim, index, value, reduce):
    dim, _ = _scatter_gather_checks(self, dim, index, op="scatter")
    ufunc = _reduce_ufunc(xp_of(self), reduce)
    self._version += 1
    return _accumulate(self, dim, index, xp_of(self).asarray(value).astype(self._array.dtype), ufunc)


@op("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", variants=("function", "method"))
def scatter_add(self, dim, index, src):
    _src_check(self, src)
    dim, _ = _scatter_gather_checks(self, dim, index, src._array, op="scatter")
    return _accumulate(_dense_copy(self), dim, index, src._array, xp_of(self).add)


derivatives(scatter_add, {"self": "grad", "index": "non_differentiable", "src": "grad.gather(dim, index)"})


@op("scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)", variants=("method",))
def scatter_add_(self, dim, index, src):
    _src_check(self, src)
    dim, _ = _scatter_gather_checks(self, dim, index, src._array, op="scatter")
    self._version += 1
    return _accumulate(self, dim, index, src._array, xp_of(self).add)


derivatives(scatter_add_, scatter_add.derivatives)  # (the functional's entry)
