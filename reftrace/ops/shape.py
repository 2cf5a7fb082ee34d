"""Shape and view ops: view, reshape, squeeze, transpose, expand, select, slice, split ...

A view op returns a tensor that shares its base's data, with the strides torch computes for it
(traced graphs print strides, and in-place ops through views must reach the base). Each kernel
works out torch's sizes/strides from the input's (``t.stride()``), and gets the data accessor
from a cheap NumPy view (indexing, transpose, reshape) or, when no basic NumPy view expresses
the layout (expand's 0 strides, views of non-contiguous data), by restriding the array.

Copying ops (repeat here; cat, stack, flip, contiguous in layout.py) lay their result out as
torch does: contiguous, or "preserve format" where torch uses ``empty_like``.
"""
import sys

import numpy as np

from .._device import MEMORY_FORMATS
from .._tensor import (_array_strides, _fresh, _strided, _view_of, _view_with, _wrap_dim,
                       contiguous_strides, xp_of)
from ._iter import (channels_last_strides, empty_strided_array, is_non_overlapping_and_dense,
                    output_strides, preserve_strides)
from ._layout_cache import keep_plan, remembered
from ._registry import composite, derivatives, op

INT64_MAX = 2 ** 63 - 1
_CL_RANK = {"channels_last": 4, "channels_last_3d": 5}
_PRESERVE = MEMORY_FORMATS["preserve_format"]


# -- helpers -------------------------------------------------------------------------------------

def _fmt(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _restride(array, shape, strides):
    """A view of ``array``'s data (from its first element) with torch element ``strides``."""
    item = array.itemsize
    bstrides = tuple(s * item for s in strides)
    if type(array) is np.ndarray:
        if array.flags.c_contiguous:
            return np.ndarray(shape, array.dtype, array, 0, bstrides)  # ~5x cheaper than as_strided
        base = array.base
        if type(base) is np.ndarray and base.flags.c_contiguous and base.flags.writeable \
                and array.flags.writeable:
            # a strided view: the same, over the contiguous array that holds its data
            offset = array.__array_interface__["data"][0] - base.__array_interface__["data"][0]
            return np.ndarray(shape, array.dtype, base, offset, bstrides)
    xp = np if type(array) is np.ndarray else sys.modules["cupy"]
    return xp.lib.stride_tricks.as_strided(array, shape, bstrides)


def _kept(shape, strides):
    """``strides`` as a tensor keeps them: a tuple, or None when contiguous for ``shape``."""
    strides = tuple(strides)
    return None if strides == contiguous_strides(shape) else strides


def _infer_size(shape, numel):
    """torch's infer_size: resolve one -1 in a requested shape, with torch's messages."""
    shape = list(shape)
    infer, newsize = None, 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s >= 0:
            newsize *= s
        else:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {_fmt(shape)}")
    if numel == newsize or (infer is not None and newsize > 0 and numel % newsize == 0):
        if infer is not None:
            if newsize == 0:
                raise RuntimeError(
                    f"cannot reshape tensor of 0 elements into shape {_fmt(shape)} because the "
                    "unspecified dimension size -1 can be any value and is ambiguous")
            shape[infer] = numel // newsize
        return tuple(shape)
    raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")


def compute_stride(oldshape, oldstride, newshape):
    """torch's computeStride: the strides of a view of (oldshape, oldstride) as newshape, or None
    when some new dimension would span two non-contiguous chunks of the old layout."""
    if not oldshape:
        return (1,) * len(newshape)
    numel = 1
    for s in oldshape:
        numel *= s
    if numel == 0:
        return tuple(oldstride) if tuple(oldshape) == tuple(newshape) else contiguous_strides(tuple(newshape))
    newstride = [0] * len(newshape)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        # at the end of a chunk of dims laid out contiguously with each other: fill the view dims
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = view_numel = 1
    return tuple(newstride) if view_d == -1 else None


def _viewed(self, shape):
    """(shape with -1 resolved, self viewed as it -- or None where torch's computeStride refuses)."""
    a = self._array
    shape, strides, kept = _view_layout(a.shape, self._stride, tuple(shape))
    if self._stride is None:  # contiguous: NumPy reshapes it without a copy, contiguously
        return shape, _view_with(self, a.reshape(shape), None)
    if strides is None:
        return shape, None
    if type(a) is np.ndarray:
        # torch's view exists, so NumPy's no-copy reshape does too (the same row-major reading of
        # the same elements; NumPy may stride size-1 dimensions differently, which reads nothing);
        # it is several times cheaper than rebuilding the array from its base in _restride
        try:
            return shape, _view_with(self, a.reshape(shape, copy=False), kept)
        except ValueError:
            pass
    return shape, _view_with(self, _restride(a, shape, strides), kept)


@remembered
def _view_layout(oldshape, oldstride, size):
    """(size with -1 resolved, computeStride's strides for it -- None where it refuses -- and
    those strides as the view keeps them); ``oldstride`` None: contiguous."""
    numel = 1
    for n in oldshape:
        numel *= n
    shape = _infer_size(size, numel)
    if oldstride is None:
        return shape, contiguous_strides(shape), None
    strides = _strides_for_view(oldshape, oldstride, shape)
    return shape, strides, (None if strides is None else _kept(shape, strides))


# compute_stride, remembered: a model views the same layouts as the same shapes each call
_strides_for_view = remembered(compute_stride)


def _view_as_shape(self, shape):
    """view's kernel: torch's strides for the new shape, or torch's error."""
    view = _viewed(self, shape)[1]
    if view is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return view


def _dense_copy(t, strides=None):
    """A copy of t owning fresh data, laid out with ``strides`` (None: contiguous)."""
    if strides is None:
        return _fresh(t._array.copy(order="C"), t.dtype, t.device)
    out = empty_strided_array(xp_of(t), t._array.shape, strides, t._array.dtype)
    out[...] = t._array
    return _strided(out, t.dtype, t.device, strides)


_CL_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}  # channels_last / channels_last_3d, fastest first


def strides_like_channels_last(shape, strides):
    """torch's is_channels_last_strides_2d/_3d (what suggest_memory_format asks of 4-D/5-D tensors)."""
    order = _CL_ORDER.get(len(shape))
    if order is None or strides[1] == 0:
        return False
    low = 0
    for d in order:
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:  # ambiguous N111-like layouts count as contiguous
            return False
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


# -- view, reshape, flatten ----------------------------------------------------------------------

@op("view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", variants=("method",))
def view_dtype(self, dtype):
    a, old = self._array, self.dtype
    if dtype.itemsize == old.itemsize:
        return _view_of(self, a.view(dtype.np), self.stride(), dtype)
    what = f"to view {old.ir_name} as {dtype.ir_name} (different element sizes)"
    if a.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    strides = list(self.stride())

    def check_last_stride():
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
    if dtype.itemsize > old.itemsize:
        ratio = dtype.itemsize // old.itemsize
        if a.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {a.shape[-1]}")
        if self.storage_offset() % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                               f"but got {self.storage_offset()}")
        check_last_stride()
        for i, s in enumerate(strides[:-1]):
            if s % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {what}, but got {s}")
        new = [s // ratio for s in strides[:-1]] + [1]
    else:
        check_last_stride()
        ratio = old.itemsize // dtype.itemsize
        new = [s * ratio for s in strides[:-1]] + [1]
    # NumPy reinterprets along a contiguous last axis, which the checks above guarantee
    return _view_of(self, a.view(dtype.np), new, dtype)


derivatives(view_dtype, {}, output_differentiability=[False])


@op("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", variants=("method",))
def view(self, size):
    a = self._array
    if self._stride is None:  # _viewed's contiguous case, two calls fewer (x.view(4, -1))
        return _view_with(self, a.reshape(_view_layout(a.shape, None, tuple(size))[0]), None)
    return _view_as_shape(self, size)


derivatives(view, {"self": "grad.reshape(self.shape)"})


@op("view_as(Tensor(a) self, Tensor other) -> Tensor(a)", variants=("method",))
def view_as(self, other):
    return _view_as_shape(self, other._array.shape)


@composite(view_as)
def _view_as_composite(self, other):
    return self.view(other.shape)


def reshape_to(self, shape):
    """reshape's rule: a view when torch's computeStride allows one, else a contiguous copy."""
    shape, view = _viewed(self, shape)
    if view is not None:
        return view
    return _fresh(self._array.copy(order="C").reshape(shape), self.dtype, self.device)


@op("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", variants=("function", "method"))
def reshape(self, shape):
    return reshape_to(self, shape)


@composite(reshape)
def _reshape_composite(self, shape):
    # TensorShape.cpp reshape_symint: a contiguous tensor is viewed (ViewBackward0); another is
    # aliased with computeStride's strides when they exist (_reshape_alias: ReshapeAliasBackward0),
    # else copied (_unsafe_view of a contiguous clone: UnsafeViewBackward0)
    if self.is_contiguous():
        return self.view(shape)
    shape, view = _viewed(self, shape)
    if view is not None:
        return _reshape_alias(self, list(shape), list(view.stride()))
    from .backward import _unsafe_view
    return _unsafe_view(self.clone(memory_format=MEMORY_FORMATS["contiguous_format"]), shape)


@op("_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a)",
    variants=())   # (torchgen's _SKIP_PYTHON_BINDINGS: torch.ops.aten._reshape_alias only)
def _reshape_alias(self, size, stride):
    """alias_with_sizes_and_strides: self's storage and offset under another geometry (reshape
    passes computeStride's strides; like torch, nothing checks them against the storage)."""
    from .layout import as_strided
    return as_strided.kernel(self, list(size), list(stride), None)


derivatives(_reshape_alias, {"self": "grad.reshape(self.shape)"})


@op("reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)", variants=("method",))
def reshape_as(self, other):
    return reshape_to(self, other._array.shape)


@composite(reshape_as)
def _reshape_as_composite(self, other):
    return self.reshape(other.shape)


@op("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    variants=("function", "method"))
def flatten(self, start_dim, end_dim):
    shape = self._array.shape
    start, end = _wrap_dim(start_dim, len(shape)), _wrap_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if not shape:
        return reshape_to(self, (1,))
    if start == end:
        return self  # torch returns the input itself
    n = 1
    for s in shape[start:end + 1]:
        n *= s
    return reshape_to(self, shape[:start] + (n,) + shape[end + 1:])


@composite(flatten)
def _flatten_composite(self, start_dim, end_dim):
    shape = self.shape_tuple
    if not shape:
        return self.reshape([1])
    start, end = _wrap_dim(start_dim, len(shape)), _wrap_dim(end_dim, len(shape))
    if start == end:
        return self
    n = 1
    for s in shape[start:end + 1]:
        n *= s
    return self.reshape(list(shape[:start]) + [n] + list(shape[end + 1:]))


@op("unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
    variants=("function", "method"))
def unflatten(self, dim, sizes):
    return _view_as_shape(self, _unflattened(self._array.shape, dim, tuple(sizes)))


@remembered
def _unflattened(shape, dim, sizes):
    """unflatten's new shape, or torch's error."""
    dim = _wrap_dim(dim, len(shape))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = _infer_size(sizes, shape[dim])
    except RuntimeError as e:  # torch rewords only the "doesn't multiply up" case
        if "is invalid for input of size" not in str(e):
            raise
        raise RuntimeError(f"unflatten: Provided sizes {_fmt(sizes)} don't multiply up to the size "
                           f"of dim {dim} ({shape[dim]}) in the input tensor") from None
    return shape[:dim] + sizes + shape[dim + 1:]


@composite(unflatten)
def _unflatten_composite(self, dim, sizes):
    shape = self.shape_tuple
    dim = _wrap_dim(dim, len(shape))
    sizes = _infer_size(sizes, shape[dim])
    return self.view(list(shape[:dim]) + list(sizes) + list(shape[dim + 1:]))


# -- squeeze, unsqueeze, transpose, permute --------------------------------------------------------

def _squeezed(self, dims):
    """The view without the size-1 dims among ``dims`` (wrapped, a set)."""
    a = self._array
    drop, strides = _squeeze_plan(a.shape, self.stride(), dims)
    return (a.squeeze(drop) if drop else a), strides


def _squeeze_plan(shape, strides, dims):
    """(the dims squeeze drops, the strides it keeps) of a layout: the size-1 dims among
    ``dims`` (wrapped, a set)."""
    keep = [d for d in range(len(shape)) if not (d in dims and shape[d] == 1)]
    if len(keep) == len(shape):
        return (), strides
    return tuple(d for d in range(len(shape)) if d not in keep), tuple(strides[d] for d in keep)


@remembered
def _squeeze_dim_layout(shape, stride, dim):
    """squeeze.dim's (dropped dims, strides as the view keeps them) of a layout."""
    drop, strides = _squeeze_plan(shape, stride or contiguous_strides(shape),
                                  {_wrap_dim(dim, len(shape))})
    if not drop:
        return drop, stride
    return drop, _kept(tuple(n for d, n in enumerate(shape) if d not in drop), strides)


def dim_list_to_bitset(dims, ndim):
    """ATen's dim_list_to_bitset: the wrapped dims (a set), each given at most once."""
    wrapped = set()
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.add(w)
    return wrapped


def _squeeze_dims(self, dims):
    return dim_list_to_bitset(dims, self._array.ndim)


def _set_meta(self, pair):
    """In-place view ops (squeeze_, t_ ...) change self's metadata, not its data."""
    array, strides = pair
    self._array = array
    self._stride = None if strides is None else _kept(array.shape, strides)
    return self


@op("squeeze(Tensor(a) self) -> Tensor(a)", variants=("function", "method"))
def squeeze(self):
    return _view_of(self, *_squeezed(self, range(self._array.ndim)))


derivatives(squeeze, {"self": "unsqueeze_to(grad, self.shape)"})


@op("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", variants=("function", "method"))
def squeeze_dim(self, dim):
    a = self._array
    drop, strides = _squeeze_dim_layout(a.shape, self._stride, dim)
    return _view_with(self, a.squeeze(drop) if drop else a, strides)


derivatives(squeeze_dim, {"self": "unsqueeze_to(grad, dim, self.shape)"})


@op("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", variants=("function", "method"))
def squeeze_dims(self, dim):
    return _view_of(self, *_squeezed(self, _squeeze_dims(self, dim)))


derivatives(squeeze_dims, {"self": "unsqueeze_to(grad, dim, self.shape)"})


@op("squeeze_(Tensor(a!) self) -> Tensor(a!)", variants=("method",))
def squeeze_(self):
    return _set_meta(self, _squeezed(self, range(self._array.ndim)))


derivatives(squeeze_, {"self": "unsqueeze_to(grad, self.shape)"})


@op("squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)", variants=("method",))
def squeeze__dim(self, dim):
    return _set_meta(self, _squeezed(self, {_wrap_dim(dim, self._array.ndim)}))


derivatives(squeeze__dim, {"self": "unsqueeze_to(grad, dim, self.shape)"})


@op("squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)", variants=("method",))
def squeeze__dims(self, dim):
    return _set_meta(self, _squeezed(self, _squeeze_dims(self, dim)))


derivatives(squeeze__dims, {"self": "unsqueeze_to(grad, dim, self.shape)"})


def _unsqueezed(self, dim):
    a = self._array
    index, strides = _unsqueeze_layout(a.shape, self._stride, dim)
    return a[index], strides


@remembered
def _unsqueeze_layout(shape, stride, dim):
    """unsqueeze's (NumPy index adding the dim, strides as the view keeps them) of a layout."""
    ndim = len(shape)
    dim = _wrap_dim(dim, ndim + 1)
    strides = list(stride or contiguous_strides(shape))
    # torch: the new dim's stride is size*stride of the dim it precedes (1 at the end)
    strides.insert(dim, shape[dim] * strides[dim] if dim < ndim else 1)
    return (slice(None),) * dim + (None,), _kept(shape[:dim] + (1,) + shape[dim:], strides)


@op("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", variants=("function", "method"))
def unsqueeze(self, dim):
    return _view_with(self, *_unsqueezed(self, dim))


derivatives(unsqueeze, {"self": "grad.squeeze(dim)"})


@op("unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)", variants=("method",))
def unsqueeze_(self, dim):
    return _set_meta(self, _unsqueezed(self, dim))


derivatives(unsqueeze_, {"self": "grad.squeeze(dim)"})


def _transposed(self, dim0, dim1):
    """(the transposed array, its strides as the view keeps them)."""
    a = self._array
    if a.ndim == 0:  # t() of a 0-dim tensor: itself (0 and -1 both name its one pseudo-dim)
        _wrap_dim(dim0, 1), _wrap_dim(dim1, 1)
        return a, None
    d0, d1, strides = _transpose_layout(a.shape, self._stride, dim0, dim1)
    return a.swapaxes(d0, d1), strides


@remembered
def _transpose_layout(shape, stride, dim0, dim1):
    """transpose's (wrapped dims, strides as the view keeps them) of a layout of >= 1 dims."""
    d0, d1 = _wrap_dim(dim0, len(shape)), _wrap_dim(dim1, len(shape))
    shape, strides = list(shape), list(stride or contiguous_strides(shape))
    strides[d0], strides[d1] = strides[d1], strides[d0]
    shape[d0], shape[d1] = shape[d1], shape[d0]
    return d0, d1, _kept(tuple(shape), strides)


@op("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", variants=("function", "method"))
def transpose(self, dim0, dim1):
    return _view_with(self, *_transposed(self, dim0, dim1))


derivatives(transpose, {"self": "grad.transpose(dim0, dim1)"})


@op("transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", variants=("method",))
def transpose_(self, dim0, dim1):
    return _set_meta(self, _transposed(self, dim0, dim1))


derivatives(transpose_, {"self": "grad.transpose(dim0, dim1)"})


def _t_check(self, name):
    if self._array.ndim > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {self._array.ndim}D")
    return 0, (1 if self._array.ndim == 2 else 0)


@op("t(Tensor(a) self) -> Tensor(a)", variants=("function", "method"))
def t(self):
    return _view_with(self, *_transposed(self, *_t_check(self, "t")))


derivatives(t, {"self": "grad.t()"})


@op("t_(Tensor(a!) self) -> Tensor(a!)", variants=("method",))
def t_(self):
    return _set_meta(self, _transposed(self, *_t_check(self, "t_")))


derivatives(t_, {"self": "grad.t()"})


@op("permute(Tensor(a) self, int[] dims) -> Tensor(a)", variants=("function", "method"))
def permute(self, dims):
    a = self._array
    dims, strides = _permute_layout(a.shape, self._stride, tuple(dims))
    return _view_with(self, a.transpose(dims), strides)


@remembered
def _permute_layout(shape, stride, dims):
    """permute's (wrapped dims, strides as the view keeps them) of a layout, or torch's error."""
    ndim = len(shape)
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length "
            f"of the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to "
            f"len(dims) = {len(dims)}")
    dims = tuple([_wrap_dim(d, ndim) for d in dims])
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    strides = stride or contiguous_strides(shape)
    return dims, _kept(tuple(shape[d] for d in dims), [strides[d] for d in dims])


derivatives(permute, {"self": "permute_backwards(grad, dims)"})


def _dim_list(dims, ndim, what):
    out = [_wrap_dim(d, ndim) for d in dims]
    if len(set(out)) != len(out):
        raise RuntimeError(f"movedim: repeated dim in `{what}` ({_fmt(dims)})")
    return out


def _movedim(self, source, destination):
    order = _movedim_order(self, source, destination)
    strides = self.stride()
    return _view_of(self, self._array.transpose(order), [strides[d] for d in order])


def _movedim_order(self, source, destination):
    """The permutation movedim applies (source dims go to their destinations, the rest keep
    their order)."""
    ndim = self._array.ndim
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({_fmt(source)} dims) should "
            f"contain the same number of dims as destination ({_fmt(destination)} dims)")
    src, dst = _dim_list(source, ndim, "source"), _dim_list(destination, ndim, "destination")
    order = [None] * ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src)
    return [o if o is not None else next(rest) for o in order]


@op("movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)", variants=("function", "method"))
def movedim(self, source, destination):
    return _movedim(self, [source], [destination])


@composite(movedim)
def _movedim_composite(self, source, destination):
    return self.movedim([source], [destination])


@op("movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
    variants=("function", "method"))
def movedim_intlist(self, source, destination):
    return _movedim(self, source, destination)


@composite(movedim_intlist)
def _movedim_intlist_composite(self, source, destination):
    # TensorShape.cpp movedim: a permute with the same order as the kernel's
    return self.permute(_movedim_order(self, source, destination))


@op("swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)", variants=("function", "method"))
def swapaxes(self, axis0, axis1):
    return transpose.kernel(self, axis0, axis1)


@composite(swapaxes)
def _swapaxes_composite(self, axis0, axis1):
    return self.transpose(axis0, axis1)


@op("swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", variants=("function", "method"))
def swapdims(self, dim0, dim1):
    return transpose.kernel(self, dim0, dim1)


@composite(swapdims)
def _swapdims_composite(self, dim0, dim1):
    return self.transpose(dim0, dim1)


@op("alias(Tensor(a) self) -> Tensor(a)", variants=("method", "function"))
def alias(self):
    return _view_of(self, self._array[...], self.stride())


derivatives(alias, {"self": "grad"})


# -- expand, repeat --------------------------------------------------------------------------------

def expand_to(self, size):
    """expand's kernel: size-1 and new leading dims get stride 0 (no data is copied)."""
    a, size = self._array, tuple(size)
    if len(size) < a.ndim:
        raise RuntimeError(
            f"expand(torch.{self.dtype.ir_name}Tensor"
            f"{{{_fmt(a.shape)}}}, size={_fmt(size)}): the number of sizes provided ({len(size)}) "
            f"must be greater or equal to the number of dimensions in the tensor ({a.ndim})")
    size, strides, kept = _expand_layout(a.shape, self._stride, size)
    if size == a.shape:
        return _view_with(self, a[...], kept)
    return _view_with(self, _restride(a, size, strides), kept)


@remembered
def _expand_layout(shape, stride, size):
    """expand's (sizes, strides, those strides as the view keeps them) of a layout of no more
    dims than ``size`` has, or torch's error."""
    strides_in = stride or contiguous_strides(shape)
    size = list(size)
    lead = len(size) - len(shape)
    strides = [0] * len(size)
    for i, target in enumerate(size):
        if i < lead and target < 0:
            raise RuntimeError(f"The expanded size of the tensor ({target}) isn't allowed in a "
                               f"leading, non-existing dimension {i}")
    # inferExpandGeometry, right to left: a kept dim keeps its stride, a broadcast one gets 0,
    # and a new leading dim of size 1 gets size * stride of the dim after it (not 0)
    for i in range(len(size) - 1, -1, -1):
        target = size[i]
        if i < lead:
            # (a 0-dim tensor has no dim after its new ones: all its strides are 0)
            after = size[i + 1] * strides[i + 1] if i + 1 < len(size) else 0
            strides[i] = after if target == 1 else 0
            continue
        have = shape[i - lead]
        if target == -1:
            target = size[i] = have
        if have == target:
            strides[i] = strides_in[i - lead]
        elif have != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: {_fmt(size)}.  Tensor sizes: {_fmt(shape)}")
    size = tuple(size)
    return size, tuple(strides), _kept(size, strides)


@op("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", variants=("method",))
def expand(self, size, implicit):
    return expand_to(self, size)


derivatives(expand, {"self": "sum_to(grad, self.shape)"})


@op("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", variants=("method",))
def expand_as(self, other):
    return expand_to(self, other._array.shape)


@composite(expand_as)
def _expand_as_composite(self, other):
    return self.expand(other.shape)


@op("repeat(Tensor self, SymInt[] repeats) -> Tensor", variants=("method",))
def repeat(self, repeats):
    a = self._array
    if len(repeats) < a.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    lead = len(repeats) - a.ndim
    shape = [1] * lead + list(a.shape)
    target = [s * r for s, r in zip(shape, repeats)]
    for s in target:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {_fmt(target)}")
    return _fresh(xp_of(self).tile(a, repeats), self.dtype, self.device)


derivatives(repeat, {"self": "repeat_backward(grad, repeats, self.shape)"})


# -- select, slice, narrow, split ------------------------------------------------------------------

def select_view(self, dim, index):
    a = self._array
    if a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    if not 0 <= dim < a.ndim:  # (a valid non-negative dim, the usual case, needs no call)
        dim = _wrap_dim(dim, a.ndim)
    size = a.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {_fmt(a.shape)} "
                         f"at dimension {dim}")
    # `..., ` keeps a 0-d result a view (a[i] alone would give a NumPy scalar copy)
    arr = a[index, ...] if dim == 0 else a[(slice(None),) * dim + (index, Ellipsis)]
    strides = self._stride
    if strides is None:  # contiguous: what self.stride() gives, without the method call
        if dim == 0:  # the rows of a contiguous tensor are contiguous
            return _view_of(self, arr, None)
        strides = _array_strides(a.shape)
    return _view_of(self, arr, strides[:dim] + strides[dim + 1:])


# (select_view is the kernel itself: one Python frame fewer under x[i])
select = op("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
            variants=("function", "method"))(select_view)


derivatives(select, {"self": "select_backward_symint(grad, self.shape, dim, index)"})


def slice_bounds(size, start, end):
    """torch's clamping of slice bounds: None defaults, negatives wrap once, then clamp."""
    start = 0 if start is None else start
    end = INT64_MAX if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = 0 if start < 0 else min(start, size)
    end = start if end < start else min(end, size)
    return start, end


def slice_view(self, dim, start, end, step):
    a = self._array
    if a.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, a.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start, end = slice_bounds(a.shape[dim], start, end)
    strides = list(self.stride())
    strides[dim] *= step
    arr = a[start:end:step] if dim == 0 else a[(slice(None),) * dim + (slice(start, end, step),)]
    return _view_of(self, arr, strides)


@op("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
    variants=("function", "method"))
def slice_tensor(self, dim, start, end, step):
    return slice_view(self, dim, start, end, step)


derivatives(slice_tensor, {"self": "slice_backward_wrapper(grad, self.shape, dim, start, end, step)"})


def _narrow(self, dim, start, length):
    a = self._array
    if a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = _wrap_dim(dim, a.ndim)
    size = a.shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return slice_view(self, dim, start, start + length, 1)


@op("narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a)",
    variants=("function", "method"))
def narrow_tensor(self, dim, start, length):
    if start._array.ndim != 0 or start.dtype.category != 1:
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return _narrow(self, dim, start._to_number(), length)


@composite(narrow_tensor)
def _narrow_tensor_composite(self, dim, start, length):
    return self.narrow(dim, start._to_number(), length)


@op("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
    variants=("function", "method"))
def narrow(self, dim, start, length):
    return _narrow(self, dim, start, length)


@composite(narrow)
def _narrow_composite(self, dim, start, length):
    if start < 0:
        start += self.shape_tuple[_wrap_dim(dim, self.dim())]
    return self.slice(dim, start, start + length, 1)


@op("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", variants=("function", "method"))
def unbind(self, dim):
    a = self._array
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = _wrap_dim(dim, a.ndim)
    return tuple(select_view(self, dim, i) for i in range(a.shape[dim]))


derivatives(unbind, {"self": "unbind_backward(grads, dim)"})


def _split_sizes(self, split_size, dim):
    if self._array.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    size = self._array.shape[_wrap_dim(dim, self._array.ndim)]
    if split_size == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    n = max((size + split_size - 1) // split_size, 1) if split_size else 1
    return [split_size] * (n - 1) + [split_size - (split_size * n - size)]


def _split_with_sizes(self, sizes, dim):
    a = self._array
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = _wrap_dim(dim, a.ndim)
    if any(s < 0 for s in sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={_fmt(sizes)}")
    if sum(sizes) != a.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {a.shape[dim]} "
                           f"(input tensor's size at dimension {dim}), but got split_sizes={_fmt(sizes)}")
    return _consecutive_slices(self, dim, sizes)


def _consecutive_slices(self, dim, sizes):
    """slice_view(self, dim, start, start + size, 1) for each size in turn, the sizes known to
    be non-negative and to sum to the dimension's size (no bounds to clamp): every view keeps
    self's strides."""
    a = self._array
    strides = self.stride()
    lead = (slice(None),) * dim
    out, start = [], 0
    for s in sizes:
        out.append(_view_of(self, a[lead + (slice(start, start + s),)], strides))
        start += s
    return tuple(out)  # torch's Python binding returns Tensor[] results as tuples


@op("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    variants=("function", "method"))
def split(self, split_size, dim):
    a = self._array
    key = (a.shape, self._stride, split_size, dim)
    plan = _SPLIT_PLANS.get(key) if type(split_size) is int and type(dim) is int else None
    if plan is not None:  # a layout split before (a model splits the same qkv every call)
        return tuple([_view_with(self, a[index], stride) for index, stride in plan])
    sizes = _split_sizes(self, split_size, dim)  # (its checks: a dim that exists)
    dim = _wrap_dim(dim, a.ndim)
    out = _consecutive_slices(self, dim, sizes)
    if type(split_size) is int and type(a) is np.ndarray:
        # each view's index into the array and its kept strides (_consecutive_slices' answers,
        # which depend on the shape, strides and arguments only)
        lead, start, plan = (slice(None),) * dim, 0, []
        for s, t in zip(sizes, out):
            plan.append((lead + (slice(start, start + s),), t._stride))
            start += s
        keep_plan(_SPLIT_PLANS, key, tuple(plan), 256)
    return out


_SPLIT_PLANS = {}  # (shape, kept strides, split_size, dim) -> ((index, kept strides) per view)


derivatives(split, {"self": "split_backward(grads, split_size, dim, self.shape, self)"})


@op("split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]",
    variants=("function", "method"))
def split_sizes(self, split_size, dim):
    return _split_with_sizes(self, split_size, dim)


@composite(split_sizes)
def _split_sizes_composite(self, split_size, dim):
    return self.split_with_sizes(split_size, dim)


@op("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
    variants=("function", "method"))
def split_with_sizes(self, split_sizes, dim):
    return _split_with_sizes(self, split_sizes, dim)


derivatives(split_with_sizes, {"self": "split_with_sizes_backward(grads, split_sizes, dim, self.shape, self)"})


@op("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", variants=("function", "method"))
def chunk(self, chunks, dim):
    a = self._array
    if a.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = a.shape[_wrap_dim(dim, a.ndim)]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:  # torch keeps the number of (empty) chunks
        return _split_with_sizes(self, [0] * chunks, dim)
    return _consecutive_slices(self, _wrap_dim(dim, a.ndim), _split_sizes(self, split_size, dim))


@composite(chunk)
def _chunk_composite(self, chunks, dim):
    # TensorShape.cpp chunk: split by ceil(size / chunks)
    size = self.shape_tuple[_wrap_dim(dim, self.dim())]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return self.split_with_sizes([0] * chunks, dim)
    return self.split(split_size, dim)
