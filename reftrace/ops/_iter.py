"""Broadcasting and output layout for pointwise kernels, as torch's TensorIterator does them.

torch does not always return contiguous results: ``x.t() + 1`` keeps ``x.t()``'s layout
(strides [1, 3]). TensorIterator sorts the dimensions by the inputs' strides
(``reorder_dimensions``) and lays the output out in that order. Traced graphs print strides, so
reftrace reproduces the rule; NumPy's own "K" order is close but not the same.
"""
import numpy as np

from ._layout_cache import remembered
from .._tensor import (_fresh, _is_channels_last, _is_contiguous, _strided, contiguous_strides, xp_of,
                       xp_of_device)


def broadcast_shapes(*shapes):
    """The broadcast shape as TensorIterator computes it: infer_size folded over the shapes, left
    to right, so a mismatch names the pair and the dimension (the rightmost bad one) torch names."""
    if len(shapes) == 2:  # (a binary op's question, asked of the same pairs every model call)
        return _broadcast_pair(*shapes)
    return _broadcast_shapes(shapes)


def _broadcast_shapes(shapes):
    out = ()
    for s in shapes:
        out = out if tuple(s) == out else _infer_size(out, s)
    return tuple(out)


@remembered
def _broadcast_pair(a, b):
    return _broadcast_shapes((a, b))


def _infer_size(a, b):
    ndim = max(len(a), len(b))
    result = [1] * ndim
    for i in range(ndim - 1, -1, -1):
        ia, ib = len(a) - ndim + i, len(b) - ndim + i
        sa = a[ia] if ia >= 0 else 1
        sb = b[ib] if ib >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) "
                               f"at non-singleton dimension {i}")
        result[i] = sb if sa == 1 else sa
    return tuple(result)


def output_strides(shape, tensors):
    """The strides torch gives the output of a pointwise op over ``tensors`` (None: contiguous)."""
    return _strides_for(shape, tuple([(t._array.shape, t.stride()) for t in tensors]))


def strides_for(shape, layouts):
    """output_strides over operand layouts ``(shape, strides)``: lets a kernel that torch
    composes of several TensorIterator ops (isinf is ``self.abs() == inf``) follow the layout
    of each step without computing it."""
    ndim = len(shape)
    if ndim <= 1:
        return None
    # fast path (compute_fast_setup_type): all same shape and contiguous -> contiguous;
    # all channels-last (4-d) -> channels-last; all the same non-overlapping-and-dense strides
    # -> those strides.
    same_shape = all(tshape == shape for tshape, _ in layouts)
    if same_shape:
        if all(_is_contiguous(shape, st) for _, st in layouts):
            return None
        if ndim == 4 and all(_is_channels_last(shape, st) for _, st in layouts):
            return channels_last_strides(shape)
        first = layouts[0][1]
        if all(st == first for _, st in layouts) and is_non_overlapping_and_dense(shape, first):
            return first
    # general path: per-operand strides with broadcast dims as 0, then torch's insertion sort
    op_strides = []
    for tshape, tstride in layouts:
        offset = ndim - len(tshape)
        st = [0] * ndim
        for i in range(len(tshape)):
            if not (tshape[i] == 1 and shape[offset + i] != 1):
                st[offset + i] = tstride[i]
        op_strides.append(st)

    def should_swap(d0, d1):
        for st in op_strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))  # perm[0] is the fastest-moving dim
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(ndim - 1, -1, -1)):
        return None  # the unpermuted order: torch allocates a plain contiguous output (size-0 dims too)
    strides = [0] * ndim
    acc = 1
    for d in perm:
        strides[d] = acc
        acc *= shape[d]
    strides = tuple(strides)
    return None if strides == contiguous_strides(shape) else strides


_strides_for = remembered(strides_for)


def channels_last_strides(shape):
    """c10's get_channels_last_strides_2d/_3d: channels fastest, then the spatial dims from the
    last, then the batch. Sizes are multiplied as they are (a size-0 dim zeroes the slower
    strides, as torch's do)."""
    order = [1] + list(range(len(shape) - 1, 1, -1)) + [0]
    strides, acc = [0] * len(shape), 1
    for d in order:
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def is_non_overlapping_and_dense(shape, strides):
    """TensorImpl's is_non_overlapping_and_dense: is_contiguous (always true of an empty tensor)
    or c10's compute_non_overlapping_and_dense (some permutation of the dims is contiguous)."""
    if 0 in shape:
        return True
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    order = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in order:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def preserve_strides(t):
    """The strides of ``empty_like(t)`` (preserve format): t's own when dense, else the dense
    strides that keep t's dimension order (torch's infer_dense_strides); None: contiguous."""
    if t._stride is None:
        return None
    if is_non_overlapping_and_dense(t._array.shape, t._stride):
        return t._stride  # exactly, size-1 dims' strides included
    return output_strides(t._array.shape, (t,))


def like_result(array, dtype, device, t):
    """Wrap the result of a kernel that torch writes into ``at::empty_like(t)`` (deg2rad,
    frexp, nan_to_num, ...): t's layout (preserve format), not TensorIterator's."""
    return wrap_strided(array, dtype, device, preserve_strides(t))


def wrap_strided(array, dtype, device, strides):
    """A new tensor holding ``array`` laid out with torch ``strides`` (None: contiguous)."""
    if isinstance(array, np.generic):  # NumPy ufuncs return scalars for 0-dim inputs
        array = np.asarray(array)
    if strides is None or strides == contiguous_strides(array.shape):
        return _fresh(array, dtype, device)
    out = empty_strided_array(xp_of_device(device), array.shape, strides, array.dtype)
    out[...] = array
    return _strided(out, dtype, device, strides)


def empty_strided_array(xp, shape, strides, np_dtype):
    """An uninitialised array whose element strides are ``strides`` (over a dense buffer)."""
    n = 1
    for s in shape:
        n *= s
    buf = xp.empty(max(n, 1), dtype=np_dtype)
    itemsize = np.dtype(np_dtype).itemsize
    if xp is np:
        try:  # (the ndarray constructor: several times cheaper than as_strided)
            return np.ndarray(shape, buf.dtype, buf, 0, tuple([s * itemsize for s in strides]))
        except ValueError:  # strides reaching past the dense buffer (empty_strided's own)
            pass
        return np.lib.stride_tricks.as_strided(buf, shape, [s * itemsize for s in strides])
    return xp.ndarray(shape, dtype=np_dtype, memptr=buf.data, strides=[s * itemsize for s in strides])


def pointwise_strides(shape, inputs):
    """The strides pointwise_result gives a result of ``shape`` over ``inputs`` (None: contiguous)."""
    if len(shape) <= 1 or (all(t._stride is None for t in inputs) and 0 not in shape and 1 not in shape):
        # contiguous inputs (even broadcast ones) give a contiguous result; with size-0/1 dims,
        # equal strides leave the order to the sizes (TensorIterator's reorder_dimensions)
        return None
    return output_strides(shape, inputs)


def pointwise_result(array, dtype, device, inputs):
    """Wrap a pointwise kernel's result with the layout torch would give it."""
    if isinstance(array, np.generic):  # NumPy ufuncs return scalars for 0-dim inputs
        array = np.asarray(array)
    strides = pointwise_strides(array.shape, inputs)
    if strides is None:
        return _fresh(array, dtype, device)
    if strides is not None and array.strides == tuple(s * array.itemsize for s in strides) \
            and array.base is None and all(array is not t._array for t in inputs):
        # NumPy's "K" order already laid the new result out as torch does (the usual case for
        # inputs that share one permuted layout): no strided copy needed
        return _strided(array, dtype, device, strides)
    return wrap_strided(array, dtype, device, strides)
