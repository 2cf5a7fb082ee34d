"""Ops that build one tensor from others or choose its layout: cat, stack, flip, contiguous,
as_strided, broadcast_tensors. Their results are laid out as torch lays them out (contiguous,
channels_last where torch keeps it, or the input's own layout for flip)."""
from .._promotion import result_type
from .._tensor import _fresh, _strided, _view_of, _wrap_dim, contiguous_strides, xp_of
from ._iter import broadcast_shapes, empty_strided_array
from ._layout_cache import keep_plan
from ._registry import composite, derivatives, op
from .shape import (_CL_ORDER, _CL_RANK, _PRESERVE, _dense_copy, _fmt, _restride, _view_as_shape,
                    channels_last_strides, expand_to, preserve_strides, strides_like_channels_last,
                    unsqueeze)


# -- cat, stack, flip, contiguous, as_strided ------------------------------------------------------

def _cat_check(tensors, dim):
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # torch skips legacy empty 1-D tensors (size [0]) when the others have more dims
    real = [t for t in tensors if not (t._array.ndim == 1 and t._array.shape[0] == 0)]
    for i, t in enumerate(tensors):
        if t._array.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    if not real:
        return real, _wrap_dim(dim, 1)
    ref = real[0]._array
    dim = _wrap_dim(dim, ref.ndim)
    for i, t in enumerate(tensors):
        s = t._array.shape
        if t._array.ndim == 1 and s[0] == 0:
            continue
        if len(s) != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {len(s)}")
        for d in range(ref.ndim):
            if d != dim and s[d] != ref.shape[d]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected "
                                   f"size {ref.shape[d]} but got size {s[d]} for tensor number {i} in the list.")
    return real, dim


@op("cat(Tensor[] tensors, int dim=0) -> Tensor")
def cat(tensors, dim):
    # the checks depend on the shapes only: a signature that passed them once skips them (a
    # model concatenates the same shapes on every call); kept: the wrapped dim, which inputs
    # count, whether all of those may be channels-last (contiguous ones decided by the shapes)
    key = (dim,) + tuple(t._array.shape for t in tensors)
    plan = _CAT_PLANS.get(key)
    if plan is None:
        real, wrapped = _cat_check(tensors, dim)
        kept = [i for i, t in enumerate(tensors)
                if not (t._array.ndim == 1 and t._array.shape[0] == 0)]  # (real's, by index)
        contiguous_cl = bool(real) and real[0]._array.ndim in _CL_ORDER and all(
            strides_like_channels_last(t._array.shape, contiguous_strides(t._array.shape))
            for t in real)
        plan = (kept, wrapped, contiguous_cl)
        keep_plan(_CAT_PLANS, key, plan, 1024)
    kept, dim, contiguous_cl = plan
    real = [tensors[i] for i in kept]
    dtype = result_type(*[t for t in tensors])  # cat promotes like a binary op over all inputs
    xp = xp_of(tensors[0])
    if not real:
        return _fresh(xp.empty((0,), dtype=dtype.np), dtype, tensors[0].device)
    arr = xp.concatenate([t._array.astype(dtype.np, copy=False) for t in real], axis=dim)
    # torch keeps channels_last(_3d) only when every input suggests it; else contiguous
    if all(t._stride is None for t in real):
        channels_last = contiguous_cl
    else:
        channels_last = arr.ndim in _CL_ORDER and all(
            strides_like_channels_last(t._array.shape, t.stride()) for t in real)
    if channels_last:
        strides = channels_last_strides(arr.shape)
        out = empty_strided_array(xp, arr.shape, strides, arr.dtype)
        out[...] = arr
        return _strided(out, dtype, tensors[0].device, strides)
    return _fresh(arr, dtype, tensors[0].device)


_CAT_PLANS = {}  # (dim, input shapes) -> what cat keeps of its checks


derivatives(cat, {"tensors": "cat_tensors_backward(grad, to_args_sizes_symint(tensors), to_args_scalartypes(tensors), dim)"})


@op("stack(Tensor[] tensors, int dim=0) -> Tensor")
def stack(tensors, dim):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._array.shape
    dim = _wrap_dim(dim, len(first) + 1)
    for i, t in enumerate(tensors):
        if t._array.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {_fmt(first)} "
                               f"at entry 0 and {_fmt(t._array.shape)} at entry {i}")
    # torch: cat the inputs along dim and view the result, or (dim == ndim) cat them unsqueezed;
    # only a 4-D/5-D cat can keep a channels-last layout, otherwise the result is contiguous
    if dim < len(first) and len(first) in _CL_ORDER:
        out = cat.kernel(tensors, dim)
        return _view_as_shape(out, first[:dim] + (len(tensors),) + first[dim:])
    if dim == len(first) and dim + 1 in _CL_ORDER:
        return cat.kernel([unsqueeze.kernel(t, dim) for t in tensors], dim)
    dtype = result_type(*tensors)
    arr = xp_of(tensors[0]).stack([t._array for t in tensors], axis=dim)
    return _fresh(arr.astype(dtype.np, copy=False), dtype, tensors[0].device)


derivatives(stack, {"tensors": "stack_tensors_backward(grad, dim, to_args_scalartypes(tensors))"})


@op("flip(Tensor self, int[] dims) -> Tensor", variants=("function", "method"))
def flip(self, dims):
    a = self._array
    wrapped = []
    for d in dims:
        w = _wrap_dim(d, a.ndim)
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.append(w)
    flipped = xp_of(self).flip(a, axis=tuple(wrapped)) if wrapped else a
    # flip allocates with empty_like (preserve format) and always copies, even with no dims
    strides = preserve_strides(self) or contiguous_strides(a.shape)
    out = empty_strided_array(xp_of(self), a.shape, strides, a.dtype)
    out[...] = flipped
    return _strided(out, self.dtype, self.device, strides)


derivatives(flip, {"self": "grad.flip(dims)"})


def _channels_last_contiguous(shape, strides):
    """torch's is_contiguous(memory_format=channels_last(_3d)): dense in the channels-last order
    (size-1 dims ignored)."""
    expected = 1
    for d in _CL_ORDER[len(shape)]:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


@op("contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    variants=("method",))
def contiguous(self, memory_format):
    if memory_format is _PRESERVE:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    rank = _CL_RANK.get(memory_format.name)
    if rank is None:
        return self if self._stride is None or self.is_contiguous() else _dense_copy(self)
    shape = self._array.shape
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {memory_format.name} format")
    if _channels_last_contiguous(shape, self.stride()):
        return self  # torch returns the input itself
    return _dense_copy(self, channels_last_strides(shape))


@composite(contiguous)
def _contiguous_composite(self, memory_format):
    # TensorProperties.cpp contiguous: self when already contiguous, else a recorded clone
    out = contiguous.kernel(self, memory_format)
    return self if out is self else self.clone(memory_format=memory_format)


def _storage_array(t):
    """A 1-D view of t's whole storage (the root tensor's data), and t's offset into it."""
    root = t._base if t._base is not None else t
    ra = root._array
    extent = 1 + sum((s - 1) * st for s, st in zip(ra.shape, root.stride())) if ra.size else 0
    flat = _restride(ra, (extent,), (1,)) if extent else ra.reshape(-1)[:0]
    if t.dtype.itemsize != root.dtype.itemsize:
        # a view_as_real (view_as_complex) of the root: the same bytes, read as its dtype
        whole = flat.shape[0] * root.dtype.itemsize // t.dtype.itemsize
        flat = flat.view("u1")[:whole * t.dtype.itemsize].view(t._array.dtype)
    return flat, t.storage_offset()


@op("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
    variants=("function", "method"))
def as_strided(self, size, stride, storage_offset):
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {_fmt(stride)}")
    flat, own = _storage_array(self)
    offset = own if storage_offset is None else storage_offset
    need = offset + 1 + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else 0
    if need > flat.shape[0]:
        raise RuntimeError(
            f"setStorage: sizes {_fmt(size)}, strides {_fmt(stride)}, storage offset {offset}, and "
            f"itemsize {self.dtype.itemsize} requiring a storage size of {need * self.dtype.itemsize} "
            f"are out of bounds for storage of size {flat.shape[0] * self.dtype.itemsize}")
    start = flat[offset:] if offset <= flat.shape[0] else flat[:0]
    return _view_of(self, _restride(start, tuple(size), stride), stride)


derivatives(as_strided, {"self": "as_strided_backward(grad, TensorGeometry(self), size, stride, storage_offset)"})


@op("broadcast_tensors(Tensor[] tensors) -> Tensor[]", variants=())
def broadcast_tensors(tensors):
    shape = broadcast_shapes(*(t._array.shape for t in tensors))
    # expand_outplace returns a tensor that already has the shape itself, not a view: while
    # tracing, that tensor is then rebound to the node's output (torch's graphs show it)
    return [t if t._array.shape == shape else expand_to(t, list(shape)) for t in tensors]


@composite(broadcast_tensors)
def _broadcast_tensors_composite(tensors):
    # ExpandUtils.cpp expand_outplace: each tensor expanded to the common shape
    shape = list(broadcast_shapes(*[t.shape_tuple for t in tensors]))
    return tuple(t if list(t.shape_tuple) == shape else t.expand(shape) for t in tensors)
