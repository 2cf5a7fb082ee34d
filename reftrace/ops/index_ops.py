"""Indexing ops of ATen/native/TensorAdvancedIndexing.cpp, Sorting/Bucketization.cpp,
Repeat.cpp, SummaryOps.cpp: nonzero, argwhere, take, take_along_dim, index_add / index_copy /
index_fill (and in place), masked_scatter, put, count_nonzero, searchsorted, bucketize, isin,
tril_indices / triu_indices, repeat_interleave, bincount, scatter_reduce, index_reduce.

The index_* kernels move ``dim`` to the front and write with NumPy: ``ufunc.at`` for the
accumulating ones (duplicates applied one after the other, as torch's sequential CPU kernel),
assignment for copy and fill (the last duplicate wins)."""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, _strided, _wrap_dim, contiguous_strides, xp_of
from ._decomposed import decomposed
from ._registry import derivatives, get_packet, op
from .shape import _fmt

_FM = ("function", "method")
_CPP = {D.float32: "Float", D.float64: "Double", D.float16: "Half", D.complex64: "ComplexFloat",
        D.complex128: "ComplexDouble", D.int64: "Long", D.int32: "Int", D.int16: "Short",
        D.int8: "Char", D.uint8: "Byte", D.bool: "Bool"}


def _P(name):
    return get_packet(name)


def _clone(t):
    return _P("clone")(t)


# -- nonzero, argwhere ---------------------------------------------------------------------------

@op("nonzero(Tensor self) -> Tensor", variants=_FM, differentiable=False)
def nonzero(self):
    # torch's CPU kernel fills the (n, ndim) result column by column: strides (1, n)
    a = self._array
    xp = xp_of(self)
    cols = xp.nonzero(a) if a.ndim else ((xp.zeros(int(bool(a)), dtype=np.int64),)[:0])
    n = int(cols[0].shape[0]) if a.ndim else int(bool(a))
    by_dim = xp.stack(cols).astype(np.int64) if cols else xp.zeros((0, n), dtype=np.int64)
    return _strided(by_dim.T, D.int64, self.device, (1, n))


@op("nonzero_numpy(Tensor self) -> Tensor[]", variants=("function",), differentiable=False)
def nonzero_numpy(self):
    # torch: self.nonzero().unbind(1) (a 0-d tensor unsqueezed first): views of one result
    t = _P("unsqueeze")(self, 0) if self.dim() == 0 else self
    return _P("unbind")(nonzero.kernel(t), 1)


@op("nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor", variants=_FM, differentiable=False)
def nonzero_static(self, size, fill_value):
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got size = {size}")
    found = nonzero.kernel(self)._array
    ndim = max(self._array.ndim, 0)
    out = np.full((size, ndim), fill_value, dtype=np.int64)
    k = min(size, found.shape[0])
    out[:k] = found[:k]
    return _fresh(xp_of(self).asarray(out), D.int64, self.device)


@decomposed("argwhere(Tensor self) -> Tensor", variants=_FM)
def argwhere(self):
    return self.nonzero()


# -- take, take_along_dim, put ------------------------------------------------------------------

def _check_long(index, name):
    if index.dtype != D.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {_CPP[index.dtype]}")


@op("take(Tensor self, Tensor index) -> Tensor", variants=_FM)
def take(self, index):
    _check_long(index, "take")
    flat = self._array.reshape(-1)
    idx = index._array
    n = flat.shape[0]
    if idx.size:
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(f"out of range: tried to access index {int(idx[bad].ravel()[0])} on a tensor of {n} elements.")
    if n == 0 and idx.size:
        raise IndexError("take(): tried to take from an empty tensor")
    return _fresh(flat[idx % max(n, 1)] if idx.size else flat[:0].reshape(idx.shape), self.dtype, self.device)


derivatives(take, {"self": "take_backward(grad, self, index)", "index": "non_differentiable"})


@decomposed("take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor", variants=_FM)
def take_along_dim(self, indices, dim):
    if indices.dtype != D.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_CPP[indices.dtype]}")
    if dim is None:
        return self.view([-1]).gather(0, indices.view([-1]))
    dim = _wrap_dim(dim, self.dim())
    if self.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of "
                           f"dimensions, but got {self.dim()} dimensions for input, and {indices.dim()} "
                           "dimensions for indices")
    from ._iter import broadcast_shapes
    if self.shape[dim]:  # along a dim, indices wrap around (torch 2.13: any int, Python's modulo)
        indices = indices.remainder(self.shape[dim])
    sizes = list(self.shape)
    sizes[dim] = indices.shape[dim]
    idx_b = indices.broadcast_to(list(broadcast_shapes(sizes, tuple(indices.shape))))
    isizes = list(indices.shape)
    isizes[dim] = self.shape[dim]
    self_b = self.broadcast_to(list(broadcast_shapes(isizes, tuple(self.shape))))
    return self_b.gather(dim, idx_b)


def _put_into(out, index, source, accumulate):
    _check_long(index, "put_")
    if out.dtype != source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_CPP[out.dtype]} and source.dtype = {_CPP[source.dtype]}")
    if index._array.size != source._array.size:
        raise RuntimeError("put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source._array.size}, index.numel() = {index._array.size}")
    a = out._array
    flat = a.reshape(-1) if a.flags.c_contiguous else None
    work = flat if flat is not None else a.flatten()
    n = work.shape[0]
    idx = index._array.reshape(-1)
    if idx.size:
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(f"out of range: tried to access index {int(idx[bad][0])} on a tensor of {n} elements.")
        idx = idx % n
        if accumulate:
            np.add.at(work, idx, source._array.reshape(-1))
        else:
            work[idx] = source._array.reshape(-1)
    if flat is None:
        a[...] = work.reshape(a.shape)
    return out


@op("put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor", variants=_FM)
def put(self, index, source, accumulate):
    return _put_into(_clone(self), index, source, accumulate)


_PUT = {"self": "(grad if accumulate else grad.put(index, zeros_like(source), False))",
        "index": "non_differentiable", "source": "grad.take(index).reshape_as(source)"}
derivatives(put, _PUT)


@op("put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)", variants=("method",))
def put_(self, index, source, accumulate):
    _put_into(self, index, source, accumulate)
    self._version += 1
    return self


derivatives(put_, _PUT)


# -- index_add / index_copy / index_fill -------------------------------------------------------------

def _index_prep(self, dim, index, source, name):
    if index._array.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if source is not None and source.dtype != self.dtype:
        raise RuntimeError(f"{name}(): self ({_CPP[self.dtype]}) and source ({_CPP[source.dtype]}) must "
                           "have the same scalar type")
    d = _wrap_dim(dim, self._array.ndim)
    return d, index._array.reshape(-1).astype(np.int64)


def _front(a, d):
    """a with dim d first (a 0-d array as a 1-element vector); a view."""
    return np.moveaxis(a, d, 0) if a.ndim else a.reshape(1)


def _check_bounds(idx, size, name):
    if idx.size and (idx.min() < -size or idx.max() >= size):
        bad = int(idx[(idx < -size) | (idx >= size)][0])
        raise IndexError(f"{name}(): index {bad} is out of bounds for dimension with size {size}" if name
                         else f"index out of range in self")


def _index_add_into(out, dim, index, source, alpha):
    d, idx = _index_prep(out, dim, index, source, "index_add_")
    a = _front(out._array, d)
    s = _front(source._array, d) if source._array.ndim else source._array.reshape((1,) * max(a.ndim, 1))
    if idx.size != (s.shape[0] if s.ndim else 1):
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim) "
                           f"({s.shape[0] if s.ndim else 1})")
    if idx.size and (idx.min() < 0 or idx.max() >= a.shape[0]):
        bad = int(idx[(idx < 0) | (idx >= a.shape[0])][0])
        raise IndexError(f"index out of range in self" if False else
                         f"index_add_(): index {bad} is out of bounds for dimension {d} with size {a.shape[0]}")
    # alpha converted to the dtype first (C++'s alpha.to<scalar_t>(): -1 is 255 for uint8)
    with np.errstate(over="ignore"):
        vals = s if alpha == 1 else s * np.asarray(alpha).astype(s.dtype)[()]
    np.add.at(a, idx, vals)
    return out


@op("index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor", variants=_FM)
def index_add(self, dim, index, source, alpha):
    return _index_add_into(_clone(self), dim, index, source, alpha)


_INDEX_ADD = {"self": "grad", "index": "non_differentiable",
              "source": "maybe_multiply((grad.index_select(dim, index).expand_as(source) if source.dim() > 0 "
                        "else grad.index_select(dim, index.squeeze(0))), alpha)"}
derivatives(index_add, _INDEX_ADD)


@op("index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)",
    variants=("method",))
def index_add_(self, dim, index, source, alpha):
    _index_add_into(self, dim, index, source, alpha)
    self._version += 1
    return self


derivatives(index_add_, _INDEX_ADD)


def _index_copy_into(out, dim, index, source):
    d, idx = _index_prep(out, dim, index, source, "index_copy_")
    a = _front(out._array, d)
    s = _front(source._array, d) if source._array.ndim else source._array.reshape(1)
    if idx.size != s.shape[0]:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to source.size(dim) "
                         f"({s.shape[0]})")
    if idx.size and (idx.min() < 0 or idx.max() >= a.shape[0]):
        bad = int(idx[(idx < 0) | (idx >= a.shape[0])][0])
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with size {a.shape[0]}")
    for i, j in enumerate(idx):  # in order: the last of duplicate indices wins
        a[j] = s[i]
    return out


@op("index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor", variants=_FM)
def index_copy(self, dim, index, source):
    return _index_copy_into(_clone(self), dim, index, source)


_INDEX_COPY = {"self": "grad.index_fill(dim, index, 0)", "index": "non_differentiable",
               "source": "(grad.index_select(dim, index).expand_as(source) if source.dim() > 0 "
                         "else grad.index_select(dim, index.squeeze(0)))"}
derivatives(index_copy, _INDEX_COPY)


@op("index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)", variants=("method",))
def index_copy_(self, dim, index, source):
    _index_copy_into(self, dim, index, source)
    self._version += 1
    return self


derivatives(index_copy_, _INDEX_COPY)


def _index_fill_into(out, dim, index, value):
    if index.dtype != D.int64:
        raise RuntimeError("index_fill_(): Expected dtype int64 for index.")
    d = _wrap_dim(dim, out._array.ndim)
    idx = index._array.reshape(-1)
    a = _front(out._array, d)
    n = a.shape[0]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx[(idx < -n) | (idx >= n)][0])
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    a[idx % max(n, 1)] = value
    return out


def _tensor_value(value):
    if value._array.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._array.ndim} dimension(s).")
    return value._to_number()


@op("index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor", variants=_FM)
def index_fill_tensor(self, dim, index, value):
    return _index_fill_into(_clone(self), dim, index, _tensor_value(value))


derivatives(index_fill_tensor, {
    "self": "grad.index_fill(dim, index, 0)", "index": "non_differentiable",
    "value": "grad.index_select(dim, _unique(index, False)[0]).sum()"})


@op("index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor", variants=_FM)
def index_fill(self, dim, index, value):
    return _index_fill_into(_clone(self), dim, index, value)


derivatives(index_fill, {"self": "grad.index_fill(dim, index, 0)", "index": "non_differentiable"})


@op("index_fill_.int_Tensor(Tensor(a!) self, int dim, Tensor index, Tensor value) -> Tensor(a!)", variants=("method",))
def index_fill__tensor(self, dim, index, value):
    _index_fill_into(self, dim, index, _tensor_value(value))
    self._version += 1
    return self


derivatives(index_fill__tensor, {
    "self": "grad.index_fill(dim, index, 0)", "index": "non_differentiable",
    "value": "grad.index_select(dim, _unique(index, False)[0]).sum()"})


@op("index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)", variants=("method",))
def index_fill_(self, dim, index, value):
    _index_fill_into(self, dim, index, value)
    self._version += 1
    return self


derivatives(index_fill_, {"self": "grad.index_fill(dim, index, 0)", "index": "non_differentiable"})


# -- masked_scatter --------------------------------------------------------------------------------

def _masked_scatter_into(out, mask, source):
    if mask.dtype != D.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    if out.dtype != source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got "
                           f"{_CPP[out.dtype]} and {_CPP[source.dtype]}")
    a = out._array
    m = np.broadcast_to(mask._array, a.shape)
    count = int(m.sum())
    src = source._array.reshape(-1)
    if count > src.size:
        raise RuntimeError("masked_scatter: Number of elements of source < number of ones in mask")
    a[m] = src[:count]
    return out


@op("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", variants=_FM)
def masked_scatter(self, mask, source):
    from ._iter import broadcast_shapes
    shape = list(broadcast_shapes(tuple(mask.shape), tuple(self.shape)))
    base = self if list(self.shape) == shape else _P("expand")(self, shape)
    out = _P("clone")(base, memory_format=_contiguous())
    return _masked_scatter_into(out, mask, source)


def _contiguous():
    from .._device import contiguous_format
    return contiguous_format


_MASKED_SCATTER = {"self": "grad.masked_fill(mask, 0)", "mask": "non_differentiable",
                   "source": "masked_scatter_backward(grad, mask, source.shape)"}
derivatives(masked_scatter, _MASKED_SCATTER)


@op("masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)", variants=("method",))
def masked_scatter_(self, mask, source):
    _masked_scatter_into(self, mask, source)
    self._version += 1
    return self


derivatives(masked_scatter_, _MASKED_SCATTER)


@op("masked_scatter_backward(Tensor grad_output, Tensor mask, SymInt[] sizes) -> Tensor")
def masked_scatter_backward(grad_output, mask, sizes):
    g = np.broadcast_to(grad_output._array, np.broadcast_shapes(grad_output._array.shape, mask._array.shape))
    m = np.broadcast_to(mask._array, g.shape)
    sel = g[m]
    n = int(np.prod(sizes)) if sizes else 1
    out = np.zeros(n, dtype=g.dtype)
    out[:min(n, sel.size)] = sel[:n]
    return _fresh(out.reshape(tuple(sizes)), grad_output.dtype, grad_output.device)


derivatives(masked_scatter_backward, {"grad_output": "zeros_like(grad_output).masked_scatter(mask, grad)",
                                      "mask": "non_differentiable"})


# -- count_nonzero ---------------------------------------------------------------------------------

@op("count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor", variants=_FM, differentiable=False)
def count_nonzero_dims(self, dim):
    a = self._array
    axes = tuple(_wrap_dim(d, a.ndim) for d in dim)
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
    r = np.count_nonzero(a, axis=axes if axes else None) if a.ndim else np.count_nonzero(a)
    return _fresh(np.asarray(r, dtype=np.int64), D.int64, self.device)


@op("count_nonzero(Tensor self, int? dim=None) -> Tensor", variants=_FM, differentiable=False)
def count_nonzero(self, dim):
    return count_nonzero_dims.kernel(self, [] if dim is None else [dim])


# -- searchsorted, bucketize, isin -----------------------------------------------------------------

def _searchsorted(seq, values, out_int32, right, side, sorter):
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side is not None and (side == "right") != right and right:
        raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, got side of "
                           f"{side} while right was True")
    use_right = right or side == "right"
    s = seq._array
    v = values._array
    if sorter is not None:
        s = np.take_along_axis(s, sorter._array.astype(np.int64), axis=-1)
    if s.ndim > 1 and s.shape[:-1] != v.shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got "
                           f"boundaries tensor {_fmt(seq.shape)} and input value tensor {_fmt(values.shape)}")
    side_s = "right" if use_right else "left"
    if not v.size:
        r = np.zeros(v.shape, dtype=np.int64)
    elif s.ndim <= 1:
        r = np.searchsorted(s.reshape(-1), v, side=side_s)
    else:
        sf, vf = s.reshape(-1, s.shape[-1]), v.reshape(-1, v.shape[-1])
        r = np.stack([np.searchsorted(a, b, side=side_s) for a, b in zip(sf, vf)]).reshape(v.shape)
    dt = D.int32 if out_int32 else D.int64
    return _fresh(np.asarray(r).astype(dt.np), dt, values.device)


@op("searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, "
    "str? side=None, Tensor? sorter=None) -> Tensor", differentiable=False)
def searchsorted(sorted_sequence, self, out_int32, right, side, sorter):
    return _searchsorted(sorted_sequence, self, out_int32, right, side, sorter)


@op("searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, "
    "str? side=None, Tensor? sorter=None) -> Tensor", differentiable=False)
def searchsorted_scalar(sorted_sequence, self, out_int32, right, side, sorter):
    if sorted_sequence.dim() != 1:
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({sorted_sequence.dim()}) and "
                           "input value's dim(0) numel(1)")
    v = _fresh(np.asarray(self, dtype=sorted_sequence.dtype.np), sorted_sequence.dtype, sorted_sequence.device)
    return _searchsorted(sorted_sequence, v, out_int32, right, side, sorter)


@op("bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
    differentiable=False)
def bucketize(self, boundaries, out_int32, right):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return _searchsorted(boundaries, self, out_int32, right, None, None)


@op("bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
    differentiable=False)
def bucketize_scalar(self, boundaries, out_int32, right):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    v = _fresh(np.asarray(self, dtype=boundaries.dtype.np), boundaries.dtype, boundaries.device)
    return _searchsorted(boundaries, v, out_int32, right, None, None)


def _isin(elements, test, invert):
    r = np.isin(elements, test, invert=invert)
    return np.asarray(r, dtype=bool)


@op("isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) "
    "-> Tensor", differentiable=False)
def isin(elements, test_elements, assume_unique, invert):
    return _fresh(_isin(elements._array, test_elements._array, invert), D.bool, elements.device)


@op("isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False) "
    "-> Tensor", differentiable=False)
def isin_tensor_scalar(elements, test_element, assume_unique, invert):
    return _fresh(_isin(elements._array, np.asarray([test_element]), invert), D.bool, elements.device)


@op("isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False) "
    "-> Tensor", differentiable=False)
def isin_scalar_tensor(element, test_elements, assume_unique, invert):
    return _fresh(_isin(np.asarray(element), test_elements._array, invert), D.bool, test_elements.device)


# -- tril_indices / triu_indices ------------------------------------------------------------------------

def _tri_indices(name, fn):
    @op(f"{name}(int row, int col, int offset=0, *, ScalarType? dtype=long, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None) -> Tensor", differentiable=False)
    def kernel(row, col, offset, dtype, layout, device, pin_memory):
        if row < 0:
            raise RuntimeError(f"row must be non-negative, got{row}")
        if col < 0:
            raise RuntimeError(f"col must be non-negative, got{col}")
        dtype = dtype or D.int64
        r = np.stack(fn(row, offset, col)).astype(dtype.np) if row and col else np.zeros((2, 0), dtype.np)
        from .._device import as_device
        dev = as_device(device) if device is not None else as_device("cpu")
        xp = xp_of(_fresh(np.zeros(0), D.float32)) if dev.type == "cpu" else None
        return _fresh(r if xp is np or xp is None else xp.asarray(r), dtype, dev)
    return kernel


tril_indices = _tri_indices("tril_indices", np.tril_indices)
triu_indices = _tri_indices("triu_indices", np.triu_indices)


# -- repeat_interleave ----------------------------------------------------------------------------------

@op("repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor", differentiable=False)
def repeat_interleave(repeats, output_size):
    r = repeats._array
    if r.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (D.int64, D.int32):
        raise RuntimeError("repeats has to be Long or Int tensor")
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    out = np.repeat(np.arange(r.size, dtype=r.dtype), r)
    if output_size is not None and output_size != out.size:
        raise RuntimeError("allocated size does not match required size")
    return _fresh(out, repeats.dtype, repeats.device)


@decomposed("repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, "
            "SymInt? output_size=None) -> Tensor", variants=_FM)
def repeat_interleave_self_tensor(self, repeats, dim, output_size):
    inp = self
    if dim is None:
        inp, dim = self.flatten(), 0
    dim = _wrap_dim(dim, inp.dim())
    size = inp.shape[dim] if inp.dim() else 1
    if repeats.dim() == 0 or (repeats.dim() == 1 and repeats.shape[0] == 1):
        reps = repeats.reshape([1]).expand([size])
    elif repeats.dim() == 1:
        if repeats.shape[0] != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = {size}")
        reps = repeats
    else:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    return inp.index_select(dim, repeat_interleave.kernel(reps, output_size))


@decomposed("repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, "
            "SymInt? output_size=None) -> Tensor", variants=_FM)
def repeat_interleave_self_int(self, repeats, dim, output_size):
    # Repeat.cpp's int fast path: unsqueeze after dim, expand, copy contiguous, view merged
    inp = self
    if dim is None:
        inp, dim = self.flatten(), 0
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    d = _wrap_dim(dim, inp.dim())
    shape = list(inp.shape)
    if output_size is not None and output_size != shape[d] * repeats:
        raise RuntimeError("allocated size does not match required size")
    expanded = shape[:d + 1] + [repeats] + shape[d + 1:]
    merged = shape[:d] + [shape[d] * repeats] + shape[d + 1:]
    return inp.unsqueeze(d + 1).expand(expanded).clone(memory_format=_contiguous()).view(merged)


# -- bincount (histc: histogram.py) ---------------------------------------------------------------

@op("bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor", variants=_FM, differentiable=False)
def bincount(self, weights, minlength):
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = self._array
    if self.dtype.category != 1 and self.dtype != D.bool or a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights._array.ndim != 1 or weights._array.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        r = np.bincount(a, minlength=minlength).astype(np.int64)
        return _fresh(r, D.int64, self.device)
    dt = D.float32 if weights.dtype == D.float32 else D.float64
    r = np.bincount(a, weights=weights._array.astype(np.float64), minlength=minlength)
    return _fresh(r.astype(dt.np), dt, self.device)


# -- scatter_reduce, index_reduce ---------------------------------------------------------------------

_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}


def _reduce_identity(reduce, dtype):
    if reduce in _IDENTITY:
        return _IDENTITY[reduce]
    if dtype.is_floating_point:
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype.np) if dtype != D.bool else None
    return (info.min if reduce == "amax" else info.max) if info else (reduce != "amax")


_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _reduce_at(a, coords, values, reduce, include_self, dtype):
    """a[coords] (reduce)= values; a modified in place."""
    count = None
    if not include_self:
        a[coords] = _reduce_identity(reduce, dtype)
    if reduce == "mean":
        count = np.zeros(a.shape, dtype=np.int64) + (1 if include_self else 0)
        np.add.at(count, coords, 1)
    _UFUNC[reduce].at(a, coords, values)
    if reduce == "mean":
        touched = np.zeros(a.shape, dtype=bool)
        touched[coords] = True
        c = np.maximum(count, 1)
        if dtype.is_floating_point or dtype.is_complex:
            a[touched] = (a / c)[touched]
        else:
            a[touched] = (a // c)[touched]


def _check_reduce(reduce, allowed, name):
    if reduce not in allowed:
        raise RuntimeError(f"{name}(): Expected reduce argument to be one of " + ", ".join(allowed)
                           + f", but got {reduce}" if False else
                           f"reduce argument must be either {', '.join(allowed[:-1])} or {allowed[-1]}, got {reduce}")


def _scatter_reduce_into(out, dim, index, src, reduce, include_self):
    from .indexing import _scatter_gather_checks, _src_block
    _check_reduce(reduce, ("sum", "prod", "mean", "amax", "amin"), "scatter_reduce")
    if src.dtype != out.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    dim, idx = _scatter_gather_checks(out, dim, index, src._array, "scatter")
    a = out._array
    if not idx.size:
        return out
    if a.ndim == 0:
        a1, idx1, v1 = a.reshape(1), idx.reshape(-1).astype(np.int64), src._array.reshape(-1)[:idx.size]
        _reduce_at(a1, (idx1,), v1, reduce, include_self, out.dtype)
        return out
    coords = list(np.indices(idx.shape, sparse=True))
    coords[dim] = idx.astype(np.int64)
    values = _src_block(src._array, idx.shape)
    coords = tuple(np.broadcast_arrays(*coords))
    _reduce_at(a, coords, values, reduce, include_self, out.dtype)
    return out


@op("scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) "
    "-> Tensor", variants=_FM)
def scatter_reduce(self, dim, index, src, reduce, include_self):
    return _scatter_reduce_into(_clone(self), dim, index, src, reduce, include_self)


@op("scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, "
    "bool include_self=True) -> Tensor(a!)", variants=("method",))
def scatter_reduce_(self, dim, index, src, reduce, include_self):
    _scatter_reduce_into(self, dim, index, src, reduce, include_self)
    self._version += 1
    return self


_SCATTER_REDUCE = {"self, src": "scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result)",
                   "index": "non_differentiable"}
derivatives(scatter_reduce, _SCATTER_REDUCE)
derivatives(scatter_reduce_, _SCATTER_REDUCE)


def _index_reduce_into(out, dim, index, source, reduce, include_self):
    _check_reduce(reduce, ("prod", "mean", "amax", "amin"), "index_reduce")
    d, idx = _index_prep(out, dim, index, source, "index_reduce_")
    a = _front(out._array, d)
    s = _front(source._array, d) if source._array.ndim else source._array.reshape(1)
    if idx.size and (idx.min() < 0 or idx.max() >= a.shape[0]):
        bad = int(idx[(idx < 0) | (idx >= a.shape[0])][0])
        raise IndexError(f"index_reduce_(): index {bad} is out of bounds for dimension {d} with size {a.shape[0]}")
    if idx.size:
        coords = (idx.reshape((-1,) + (1,) * (a.ndim - 1)),) + tuple(
            np.arange(n).reshape((1,) * (i + 1) + (n,) + (1,) * (a.ndim - i - 2)) for i, n in enumerate(a.shape[1:]))
        coords = tuple(np.broadcast_arrays(*coords))
        _reduce_at(a, coords, s, reduce, include_self, out.dtype)
    return out


@op("index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) "
    "-> Tensor", variants=_FM)
def index_reduce(self, dim, index, source, reduce, include_self):
    return _index_reduce_into(_clone(self), dim, index, source, reduce, include_self)


@op("index_reduce_(Tensor(a!) self, int dim, Tensor index, Tensor source, str reduce, *, "
    "bool include_self=True) -> Tensor(a!)", variants=("method",))
def index_reduce_(self, dim, index, source, reduce, include_self):
    _index_reduce_into(self, dim, index, source, reduce, include_self)
    self._version += 1
    return self


_INDEX_REDUCE = {"self, source": "index_reduce_backward(grad, self, dim, index, source, reduce, include_self, result)",
                 "index": "non_differentiable"}
derivatives(index_reduce, _INDEX_REDUCE)
derivatives(index_reduce_, _INDEX_REDUCE)


# -- unique ---------------------------------------------------------------------------------------------
# (sorted=False gives the sorted result too: torch's CPU kernel sorts unless it can skip it, and
# the order of an unsorted unique is unspecified)

def _unique_flat(self, return_inverse, return_counts):
    a = self._array.reshape(-1)
    out, inv, cnt = np.unique(a, return_inverse=True, return_counts=True)
    dev = self.device
    output = _fresh(out.astype(a.dtype, copy=False), self.dtype, dev)
    inverse = _fresh(inv.reshape(self._array.shape).astype(np.int64) if return_inverse else np.zeros(0, np.int64),
                     D.int64, dev)
    counts = _fresh(cnt.astype(np.int64) if return_counts else np.zeros(0, np.int64), D.int64, dev)
    return output, inverse, counts


@op("_unique(Tensor self, bool sorted=True, bool return_inverse=False) -> (Tensor, Tensor)", differentiable=False)
def _unique(self, sorted, return_inverse):
    return _unique_flat(self, return_inverse, False)[:2]


@op("_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) "
    "-> (Tensor, Tensor, Tensor)", differentiable=False)
def _unique2(self, sorted, return_inverse, return_counts):
    return _unique_flat(self, return_inverse, return_counts)


def _moved_back(out, d, dtype, device):
    """unique over ``dim`` as torch lays it out: Unique.cpp works on ``self.moveaxis(dim, 0)``
    made contiguous and returns ``output.moveaxis(0, dim)``, a permuted view."""
    moved = np.ascontiguousarray(np.moveaxis(out, d, 0))
    strides = contiguous_strides(moved.shape)
    strides = strides[1:d + 1] + strides[:1] + strides[d + 1:]
    return _strided(np.moveaxis(moved, 0, d), dtype, device, strides)


@op("unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) "
    "-> (Tensor, Tensor, Tensor)", differentiable=False)
def unique_dim(self, dim, sorted, return_inverse, return_counts):
    a = self._array
    d = _wrap_dim(dim, a.ndim)
    if a.shape[d] == 0 and a.size == 0 and any(s == 0 for i, s in enumerate(a.shape) if i != d):
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    if a.shape[d] == 0:
        out, inv, cnt = a, np.zeros(0, np.int64), np.zeros(0, np.int64)
    else:
        out, inv, cnt = np.unique(a, axis=d, return_inverse=True, return_counts=True)
    dev = self.device
    return (_fresh(out.copy(), self.dtype, dev) if a.shape[d] == 0 else _moved_back(out, d, self.dtype, dev),
            _fresh(inv.reshape(-1).astype(np.int64) if return_inverse else np.zeros(0, np.int64), D.int64, dev),
            _fresh(cnt.astype(np.int64) if return_counts else np.zeros(0, np.int64), D.int64, dev))


@op("unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) "
    "-> (Tensor, Tensor, Tensor)", differentiable=False)
def unique_consecutive(self, return_inverse, return_counts, dim):
    a = self._array
    if dim is None:
        flat = a.reshape(-1)
        keep = np.ones(flat.shape[0], dtype=bool)
        keep[1:] = flat[1:] != flat[:-1]
        out = flat[keep]
        inv_shape = a.shape
    else:
        d = _wrap_dim(dim, a.ndim)
        if a.shape[d] == 0:  # Unique.cpp returns an empty tensor of self's sizes
            return unique_dim.kernel(self, d, True, return_inverse, return_counts)
        moved = np.moveaxis(a, d, 0).reshape(a.shape[d], -1)
        keep = np.ones(moved.shape[0], dtype=bool)
        if moved.shape[0] > 1:
            keep[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        out = np.ascontiguousarray(np.compress(keep, a, axis=d))
        inv_shape = (a.shape[d],)
    groups = np.cumsum(keep) - 1
    cnt = np.bincount(groups, minlength=int(keep.sum())) if keep.size else np.zeros(0, np.int64)
    dev = self.device
    return (_fresh(out.copy(), self.dtype, dev) if dim is None else _moved_back(out, d, self.dtype, dev),
            _fresh(groups.reshape(inv_shape).astype(np.int64) if return_inverse else np.zeros(0, np.int64),
                   D.int64, dev),
            _fresh(cnt.astype(np.int64) if return_counts else np.zeros(0, np.int64), D.int64, dev))
