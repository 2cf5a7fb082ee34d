"""Indexing ops: index (advanced indexing), index_put_, index_select, gather, scatter, masked_select.

``aten::index(self, Tensor?[] indices)`` is what ``x[idx]`` lowers to once the Python layer
(reftrace/_indexing.py) has applied the basic (view) part of the index. Its semantics are
NumPy's advanced indexing (index tensors broadcast together; when the indexed dims are not
adjacent, the result's indexed dims go first), so kernels build a NumPy index tuple; what torch
adds and reftrace mirrors is its checks, its messages, and the layout of the result, which
comes from TensorIterator over a restrided view of ``self`` and the index tensors.
"""

import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, _is_contiguous, _strided, _wrap_dim, contiguous_strides, xp_of
from .._frames import warn_at_caller
from ._iter import broadcast_shapes, empty_strided_array, output_strides
from ._registry import derivatives, op
from .shape import _dense_copy, _fmt, compute_stride, preserve_strides


# -- advanced indexing ---------------------------------------------------------------------------

def _check_index_types(indices):
    for i in indices:
        if i is not None and i.dtype not in (D.int64, D.int32, D.uint8, D.bool):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _expand_masks(self, indices):
    """torch's expandTensors: a bool/byte mask over k dims becomes k long index arrays (the
    columns of its nonzero()). Returns, per dim, None (not indexed) or (NumPy index array,
    torch strides of that index tensor)."""
    shape = self._array.shape
    out = []
    for index in indices:
        if index is None:
            out.append(None)
            continue
        if index.dtype in (D.bool, D.uint8):
            if index.dtype is D.uint8:
                warn_at_caller("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                              "torch.bool instead.")
            mshape = index._array.shape
            for j, size in enumerate(mshape):
                src = len(out) + j
                if src >= len(shape) or size != shape[src]:
                    raise IndexError(f"The shape of the mask {_fmt(mshape)} at index {j} does not match "
                                     f"the shape of the indexed tensor {_fmt(shape)} at index {src}")
            # nonzero() is (n, k) contiguous; column j is select(1, j): stride k
            cols = xp_of(index).nonzero(index._array.astype(bool))
            out.extend((col, (len(mshape),)) for col in cols)
        else:
            out.append((index._array, index.stride()))
    return out


class _Operand:
    """The shape/strides of one TensorIterator operand (what output_strides reads)."""
    __slots__ = ("shape", "strides")

    def __init__(self, shape, strides):
        self.shape, self.strides = tuple(shape), tuple(strides)

    @property
    def _array(self):
        return self

    @property
    def _stride(self):
        return self.strides

    def stride(self):
        return self.strides

    def is_contiguous(self):
        return _is_contiguous(self.shape, self.strides)


class _AdvancedIndex:
    """torch's make_info + AdvancedIndex: checked, broadcast index arrays and the result layout."""

    def __init__(self, self_, indices):
        ndim = self_._array.ndim
        if len(indices) > ndim:
            raise IndexError(f"too many indices for tensor of dimension {ndim} (got {len(indices)})")
        _check_index_types(indices)
        expanded = _expand_masks(self_, indices)
        arrays = [e if e is None else e[0] for e in expanded]
        # (shape, strides, is int32) of each index tensor torch iterates over
        self.index_layouts = [(e[0].shape, e[1], e[0].dtype == np.int32) for e in expanded if e is not None]
        defined = [a for a in arrays if a is not None]
        if not defined:
            raise IndexError("at least one index must be provided")
        try:
            bshape = broadcast_shapes(*[a.shape for a in defined])
        except RuntimeError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                             f"shapes {', '.join(_fmt(a.shape) for a in defined)}") from None
        arrays += [None] * (ndim - len(arrays))
        self.arrays = arrays
        self.bshape = bshape
        positions = [d for d, a in enumerate(arrays) if a is not None]
        # indexed dims not adjacent: torch (as NumPy) moves them to the front
        self.adjacent = positions == list(range(positions[0], positions[-1] + 1))
        order = positions + [d for d in range(ndim) if d not in positions] if not self.adjacent \
            else list(range(ndim))
        shape, strides = self_._array.shape, self_.stride()
        self.plain = self_._stride is None and self.adjacent  # see result_strides
        self.src_shape = [shape[d] for d in order]
        self.src_strides = [strides[d] for d in order]
        self.before = 0 if not self.adjacent else positions[0]
        self.n_indexed = len(positions)
        self.positions = positions
        sizes = [shape[d] for d in positions]
        if 0 in sizes and 0 not in bshape:
            raise IndexError("index is out of bounds for dimension with size 0")

    def check_bounds(self, numel):
        """The kernel's bound check: it only runs when there are elements to visit."""
        if not numel:
            return
        shape = [self.src_shape[i] for i in range(self.n_indexed)] if not self.adjacent else \
            self.src_shape[self.before:self.before + self.n_indexed]
        for k, (d, size) in enumerate(zip(self.positions, shape)):
            a = self.arrays[d]
            if a.size and (a.min() < -size or a.max() >= size):
                bad = int(a[(a < -size) | (a >= size)].ravel()[0])
                raise IndexError(f"index {bad} is out of bounds for dimension {k} with size {size}")

    def result_shape(self):
        b, n = self.before, self.n_indexed
        return tuple(self.src_shape[:b]) + self.bshape + tuple(self.src_shape[b + n:])

    def result_strides(self):
        """The output layout TensorIterator picks over [self restrided to the result shape with
        0 strides in the indexed dims, each index broadcast and reshaped to the result's rank]."""
        b, n = self.before, self.n_indexed
        shape = self.result_shape()
        if self.plain and len(self.bshape) == 1 and all(s > 1 for s in shape):
            # contiguous self, one index dim, no size-0/1 dims: no stride ties, so the sort keeps
            # the contiguous order (the common x[idx], x[mask], x[:, idx])
            return None
        after = len(shape) - b - len(self.bshape)
        ops = [_Operand(shape, self.src_strides[:b] + [0] * len(self.bshape) + self.src_strides[b + n:])]
        full = (1,) * b + self.bshape + (1,) * after
        for ishape, istrides, is_int32 in self.index_layouts:
            st = istrides if ishape == self.bshape else _broadcast_strides(ishape, istrides, self.bshape)
            if is_int32:  # converted with .to(kLong): empty_like's preserve-format strides
                st = output_strides(self.bshape, (_Operand(self.bshape, st),)) or contiguous_strides(self.bshape)
            if full != self.bshape:  # index.reshape(full): a view, strides by computeStride
                st = compute_stride(self.bshape, st, full)
            ops.append(_Operand(full, st))
        return output_strides(shape, ops)

    def numpy_index(self):
        return tuple(slice(None) if a is None else a for a in self.arrays)


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _broadcast_strides(shape, strides, target):
    """Strides of a tensor expanded to ``target`` (0 for new and broadcast dims)."""
    lead = len(target) - len(shape)
    out = [0] * len(target)
    for i, (s, st) in enumerate(zip(shape, strides)):
        out[lead + i] = 0 if (s == 1 and target[lead + i] != 1) else st
    return out


@op("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", variants=("function", "method"))
def index(self, indices):
    info = _AdvancedIndex(self, indices)
    shape = info.result_shape()
    info.check_bounds(_numel(shape))
    # NumPy checks bounds even when nothing is selected; torch's kernel never looks then
    values = self._array[info.numpy_index()] if _numel(shape) else \
        xp_of(self).empty(shape, dtype=self._array.dtype)
    strides = info.result_strides()
    if strides is None:
        return _fresh(values, self.dtype, self.device)
    out = empty_strided_array(xp_of(self), values.shape, strides, values.dtype)
    out[...] = values
    return _strided(out, self.dtype, self.device, strides)


derivatives(index, {"self": "index_backward(grad.new_zeros(self.shape), indices, grad)"})


def _is_expandable_to(shape, target):
    if len(shape) > len(target):
        return False
    return all(s == 1 or s == t for s, t in zip(reversed(shape), reversed(target)))


def _masked_fill_mask(self, indices, values):
    """torch's canDispatchToMaskedFill: one bool/byte mask and a one-element value -> the mask
    (index_put_ then behaves as masked_fill_, with no dtype check); else None."""
    if values._array.size != 1 or values.device.type != "cpu":
        return None
    mask, before = None, 0
    for i in indices:
        if i is None:
            if mask is None:
                before += 1
            continue
        if i.dtype not in (D.bool, D.uint8) or mask is not None:
            return None
        mask = i
    if mask is None:
        return None
    shape = self._array.shape
    for j, size in enumerate(mask._array.shape):
        if size != shape[before + j]:
            raise IndexError(f"The shape of the mask {_fmt(mask._array.shape)} at index {j} does not match "
                             f"the shape of the indexed tensor {_fmt(shape)} at index {before + j}")
    return (slice(None),) * before + (mask._array.astype(bool),)


@op("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
    variants=("function", "method"))
def index_put_(self, indices, values, accumulate):
    ndim = self._array.ndim
    if len(indices) > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {len(indices)})")
    if not accumulate:
        mask_index = _masked_fill_mask(self, indices, values)
        if mask_index is not None:
            self._array[mask_index] = values._array.reshape(()).astype(self._array.dtype)
            self._version += 1
            return self
    info = _AdvancedIndex(self, indices)
    target = info.result_shape()
    if not _is_expandable_to(values._array.shape, target):
        raise RuntimeError(f"shape mismatch: value tensor of shape {_fmt(values._array.shape)} cannot be "
                           f"broadcast to indexing result of shape {_fmt(target)}")
    if values.dtype is not self.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{self.dtype.ir_name} for the destination and {values.dtype.ir_name} for the source.")
    if not _numel(target):
        return self  # nothing to write (and no bound check, as torch's kernel)
    info.check_bounds(_numel(target))
    where = info.numpy_index()
    if accumulate:
        xp_of(self).add.at(self._array, where, values._array)
    else:
        self._array[where] = values._array
    self._version += 1
    return self


derivatives(index_put_, {"self": "(grad if accumulate else grad.index_put(indices, zeros_like(values), False))",
                        "values": "grad.index(indices)"})


@op("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
    variants=("function", "method"))
def index_put(self, indices, values, accumulate):
    return index_put_.kernel(_dense_copy(self, preserve_strides(self)), indices, values, accumulate)


derivatives(index_put, {"self": "(grad if accumulate else grad.index_put(indices, zeros_like(values), False))",
                       "values": "grad.index(indices)"})


# -- index_select, gather, scatter, masked_select ------------------------------------------------

@op("index_select(Tensor self, int dim, Tensor index) -> Tensor", variants=("method", "function"))
def index_select(self, dim, index):
    a = self._array
    dim = _wrap_dim(dim, a.ndim)
    if index._array.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    idx = index._array.reshape(-1)
    size = a.shape[dim] if a.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError("index out of range in self")
    if a.ndim == 0:
        return _fresh(a.copy(), self.dtype, self.device)
    return _fresh(xp_of(self).take(a, idx, axis=dim), self.dtype, self.device)


derivatives(index_select, {"self": "index_select_backward_symint(grad, self.shape, dim, index)",
                          "index": "non_differentiable"})


def _scatter_gather_checks(self, dim, index, src=None, op="gather"):
    """torch's shape/dtype checks shared by gather and scatter; returns (wrapped dim, index array)."""
    a, idx = self._array, index._array
    dim = _wrap_dim(dim, a.ndim)
    if idx.size and index.dtype not in (D.int64, D.int32):  # (an empty index of any dtype is fine)
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    if not idx.size:  # an empty index skips the shape checks (torch's gather / scatter meta)
        return dim, idx
    if max(idx.ndim, 1) != max(a.ndim, 1):
        what = "input" if op == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} tensor")
    ishape, sshape = idx.shape or (1,), a.shape or (1,)
    for d in range(len(ishape)):
        if d == dim:
            continue
        if op == "gather" and ishape[d] > sshape[d]:
            raise RuntimeError(f"Size does not match at dimension {d} expected index {_fmt(idx.shape)} to "
                               f"be no larger than self {_fmt(a.shape)} apart from dimension {dim}")
        if op == "scatter" and (ishape[d] > sshape[d] or (src is not None and ishape[d] > (src.shape or (1,))[d])):
            msg = f"Expected index {_fmt(idx.shape)} to be no larger than self {_fmt(a.shape)} apart from dimension {dim}"
            if src is not None:
                msg += f" and to be no larger size than src {_fmt(src.shape)}"
            raise RuntimeError(msg)
    if op == "scatter" and src is not None and len(ishape) and (idx.size and ishape[dim] > (src.shape or (1,))[dim]):
        raise RuntimeError(f"Expected index {_fmt(idx.shape)} to be no larger than self {_fmt(a.shape)} apart "
                           f"from dimension {dim} and to be no larger size than src {_fmt(src.shape)}")
    size = sshape[dim]
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = int(idx[(idx < 0) | (idx >= size)].ravel()[0])
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    return dim, idx


def _leading_block(a, shape, dim):
    """The part of ``a`` that an index of ``shape`` addresses (all of dim ``dim``)."""
    return a[tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(shape))]


def _src_block(src, shape):
    """The part of a scatter's ``src`` that an index of ``shape`` reads: src is read at the
    index's own positions (``self[index[i][j]][j] = src[i][j]``), so in every dim, ``dim`` too."""
    return src[tuple(slice(0, s) for s in shape)]


@op("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
    variants=("method", "function"))
def gather(self, dim, index, sparse_grad):
    dim, idx = _scatter_gather_checks(self, dim, index)
    a = self._array
    if not idx.size:
        return _fresh(xp_of(self).empty(idx.shape, dtype=a.dtype), self.dtype, self.device)
    if a.ndim == 0 or idx.ndim == 0:
        return _fresh(a.reshape(idx.shape).copy(), self.dtype, self.device)
    values = xp_of(self).take_along_axis(_leading_block(a, idx.shape, dim), idx.astype(np.int64), axis=dim)
    return _fresh(values, self.dtype, self.device)


derivatives(gather, {"self": "gather_backward(grad, self, dim, index, sparse_grad)",
                    "index": "non_differentiable"})


def _scatter_into(out, dim, index, values):
    """Write ``values`` (array or number) into ``out`` at ``index`` along ``dim`` (last write wins,
    as torch's sequential CPU kernel)."""
    a, idx = out._array, index._array
    if not idx.size:
        return out
    if a.ndim == 0:
        if idx.size:
            a[...] = values if np.ndim(values) == 0 else values.reshape(-1)[0]
        return out
    if np.ndim(values):
        values = _src_block(values, idx.shape)
    xp_of(out).put_along_axis(_leading_block(a, idx.shape, dim), idx.astype(np.int64), values, axis=dim)
    return out


@op("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", variants=("function", "method"))
def scatter(self, dim, index, src):
    if src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    dim, _ = _scatter_gather_checks(self, dim, index, src._array, op="scatter")
    return _scatter_into(_dense_copy(self), dim, index, src._array)


derivatives(scatter, {"self": "grad.scatter(dim, index, 0)", "index": "non_differentiable",
                     "src": "grad.gather(dim, index)"})


@op("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor", variants=("function", "method"))
def scatter_value(self, dim, index, value):
    dim, _ = _scatter_gather_checks(self, dim, index, op="scatter")
    return _scatter_into(_dense_copy(self), dim, index, xp_of(self).asarray(value).astype(self._array.dtype))


derivatives(scatter_value, {"self": "grad.scatter(dim, index, 0)", "index": "non_differentiable"})


@op("scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)", variants=("method",))
def scatter_(self, dim, index, src):
    if src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    dim, _ = _scatter_gather_checks(self, dim, index, src._array, op="scatter")
    self._version += 1
    return _scatter_into(self, dim, index, src._array)


derivatives(scatter_, {"self": "grad.scatter(dim, index, 0)", "index": "non_differentiable",
                      "src": "grad.gather(dim, index)"})


@op("scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)", variants=("method",))
def scatter__value(self, dim, index, value):
    dim, _ = _scatter_gather_checks(self, dim, index, op="scatter")
    self._version += 1
    return _scatter_into(self, dim, index, xp_of(self).asarray(value).astype(self._array.dtype))


derivatives(scatter__value, {"self": "grad.scatter(dim, index, 0)", "index": "non_differentiable"})


@op("masked_select(Tensor self, Tensor mask) -> Tensor", variants=("method", "function"))
def masked_select(self, mask):
    if mask.dtype is not D.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    xp = xp_of(self)
    shape = broadcast_shapes(self._array.shape, mask._array.shape)
    a, m = xp.broadcast_to(self._array, shape), xp.broadcast_to(mask._array, shape)
    return _fresh(a[m], self.dtype, self.device)


derivatives(masked_select, {"self": "masked_select_backward(grad, self, mask)",
                           "mask": "non_differentiable"})

