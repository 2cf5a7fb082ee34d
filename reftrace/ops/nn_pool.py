"""Pooling: max (1d/2d, with indices, ceil_mode), average 2d, adaptive average 2d.

Recorded forms: ``F.max_pool2d(x, 2)`` records ``aten::max_pool2d`` with its stride as an EMPTY
list (torch's Python layer passes ``[]`` for stride=None; the kernel then uses the kernel size),
padding/dilation/ceil_mode materialised; ``return_indices=True`` records
``aten::max_pool2d_with_indices`` instead. Windows are strided views (``_im2col.windows``).
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, xp_of
from .nn_conv import sizes
from ._im2col import constant_padded, windows
from ._registry import composite, derivatives, op
from .casts import suggest_memory_format
from .._device import channels_last
from ._memory_format import like_input
from ..autograd._variable_type import attach_history
from ._layout_cache import keep_plan


def pooling_output_size(size, k, pad, stride, dilation, ceil_mode):
    """ATen's pooling_output_shape: floor (or ceil) division, and with ceil_mode the last window
    must start inside the input or the left padding."""
    num = size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = num // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_params(name, n, kernel_size, stride, padding, dilation):
    """Expand the int lists of a pooling call (one value applies to every spatial dim)."""
    two = n == 2
    def one(values, what, allow_empty=False):
        if allow_empty and not values:
            return None
        if len(values) == 1:
            return list(values) * n
        if len(values) == n:
            return list(values)
        if two:
            verb = {"kernel_size": "must either be a single int, or a tuple of two ints",
                    "stride": "must either be omitted, a single int, or a tuple of two ints",
                    "padding": "must either be a single int, or a tuple of two ints",
                    "dilation": "must be either a single int, or a tuple of two ints"}[what]
            raise RuntimeError(f"{name}: {what} {verb}")
        kinds = {"kernel_size": "an int, list of ints or tuple of ints",
                 "stride": "None, an int, list of ints, or tuple of ints",
                 "padding": "an int, list of ints or tuple of ints",
                 "dilation": "an int, list of ints or tuple of ints"}[what]
        raise RuntimeError(f"{name}() {what} must be {kinds} of size 1 but got size {len(values)}")
    k = one(kernel_size, "kernel_size")
    s = one(stride, "stride", allow_empty=True) or list(k)
    p = one(padding, "padding")
    d = one(dilation, "dilation") if dilation is not None else [1] * n
    return k, s, p, d


def _check_pool(x, name, k, s, p, d, ceil_mode):
    """pool2d_shape_check's conditions and messages; returns the output spatial sizes."""
    nd = len(k)
    if any(v == 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if nd == 2:
        if any(v <= 0 for v in d):
            raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                               f"dilationW: {d[1]}")
        if any(v <= 0 for v in k):
            raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
    elif k[0] <= 0:
        raise RuntimeError(f"{name}() kernel_size must be greater than zero, but got {k[0]}")
    for kk, pp, dd in zip(k, p, d):
        if name == "max_pool1d" and pp > kk // 2:
            raise RuntimeError(f"{name}() padding should be at most half of kernel size, but got "
                               f"padding={pp} and kernel_size={kk}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    shape = x.shape_tuple
    out = [pooling_output_size(L, kk, pp, ss, dd, ceil_mode)
           for L, kk, pp, ss, dd in zip(shape[-nd:], k, p, s, d)]
    if any(o < 1 for o in out):
        ins = shape[-nd - 1:] if x.ndim > nd else shape
        if nd == 1:  # reported as a 2d pooling of height 1, as ATen implements it
            raise RuntimeError(f"Given input size: ({ins[0]}x1x{ins[-1]}). Calculated output size: "
                               f"({ins[0]}x1x{out[0]}). Output size is too small")
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, ins))}). Calculated output size: "
                           f"({'x'.join(map(str, (ins[0], *out)))}). Output size is too small")
    return out


def _padded_windows(xp, a, k, s, p, d, out, fill):
    """Windows (…, *out, *k) of array ``a`` padded by ``fill``; extra right padding covers
    ceil_mode's last, partial window."""
    pairs = [(pp, max((o - 1) * ss + dd * (kk - 1) + 1 - L - pp, 0))
             for L, kk, pp, ss, dd, o in zip(a.shape[-len(k):], k, p, s, d, out)]
    if any(pair != (0, 0) for pair in pairs):
        a = constant_padded(xp, a, pairs, fill)
    win = windows(xp, a, k, s, d)
    return win[(Ellipsis,) + tuple(slice(0, o) for o in out) + (slice(None),) * len(k)]


def _lowest(dtype):
    return -np.inf if dtype.is_floating_point else np.iinfo(dtype.np).min


def _argmax_as_aten(xp, flat, values, valid):
    """The index ATen's scan reports: it starts at the first in-bounds position and moves on
    `val > max || isnan(val)`, so the FIRST maximum wins, but the LAST NaN (padding never wins)."""
    hit = (flat == values[..., None]) & valid
    arg = hit.argmax(axis=-1)
    if flat.dtype.kind == "f":
        nans = xp.isnan(flat) & valid
        if nans.any():
            last_nan = flat.shape[-1] - 1 - nans[..., ::-1].argmax(axis=-1)
            arg = xp.where(xp.isnan(values), last_nan, arg)
    return arg


def _window_max(a, padded, steps):
    """The windows' maxima by np.maximum over shifted strided slices, one kernel dim at a time
    (a reduction over the flattened windows runs one short inner loop per window: ~4x slower
    on a model's small maps), or None where the bits could differ from that reduction's: max
    is exact (so any order of comparisons gives its value), but which NaN a window yields
    (payloads, signs) and which zero a window holding both 0.0 and -0.0 yields depend on the
    order of comparisons. The caller then reduces as before.
    ``a``: the input's array; ``padded``: it padded as the windows need; ``steps``: per kernel
    dim (the last first), the index of each of its offsets (strided slices of that dim)."""
    values = padded
    for offsets in steps:
        if len(offsets) == 1:
            values = values[offsets[0]]
            continue
        reduced = np.maximum(values[offsets[0]], values[offsets[1]])
        for i in offsets[2:]:
            np.maximum(reduced, values[i], out=reduced)
        values = reduced
    if values.base is not None:  # (a kernel of ones: views of the input so far)
        values = values.copy()
    if values.dtype.kind == "f":
        top = np.maximum.reduce(values, axis=None)
        if top != top:  # a NaN (max propagates it)
            return None
        # (no sign bit set in the input, as after a ReLU: no -0.0, nothing more to check)
        if np.signbit(a).any() and (values == 0).any() and _has_negative_zero(a):
            return None
    return values


def _has_negative_zero(a):
    """Whether float array ``a`` holds a -0.0: the sign bit alone, compared as integers (one pass,
    no boolean indexing)."""
    bits = _SIGN_BIT.get(a.dtype.itemsize)
    if bits is None:
        return bool(np.signbit(a[a == 0]).any())
    return bool((a.view(bits.dtype) == bits).any())


# itemsize -> the integer whose bits are -0.0's (the sign bit alone)
_SIGN_BIT = {np.dtype(t).itemsize: t(np.iinfo(t).min) for t in (np.int16, np.int32, np.int64)}


def _pool_plan(x, name, nd, kernel_size, stride, padding, dilation, ceil_mode):
    """The checks of a max pooling call (raising ATen's errors) and what its values need from
    the geometry: (padding pairs or None, _window_max's steps, k, s, p, d, out). Made once per signature: a model pools the same shapes on every call."""
    key = (name, x._array.shape, tuple(kernel_size), tuple(stride), tuple(padding),
           None if dilation is None else tuple(dilation), ceil_mode)
    plan = _POOL_PLANS.get(key)
    if plan is not None:
        _check_pool_dtype(x, name)
        return plan
    k, s, p, d = _pool_params(name, nd, kernel_size, stride, padding, dilation)
    if nd == 2 and (x.ndim not in (3, 4) or x._array.size == 0):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    _check_pool_dtype(x, name)
    out = _check_pool(x, name, k, s, p, d, ceil_mode)
    # as _padded_windows pads: extra right padding covers ceil_mode's last, partial window
    pairs = [(pp, max((o - 1) * ss + dd * (kk - 1) + 1 - L - pp, 0))
             for L, kk, pp, ss, dd, o in zip(x._array.shape[-nd:], k, p, s, d, out)]
    steps = [[(Ellipsis, slice(i * d[dim], i * d[dim] + (out[dim] - 1) * s[dim] + 1, s[dim]))
              + (slice(None),) * (nd - 1 - dim) for i in range(k[dim])]
             for dim in reversed(range(nd))]
    plan = (pairs if any(pair != (0, 0) for pair in pairs) else None, steps, k, s, p, d, out)
    return keep_plan(_POOL_PLANS, key, plan, 1024)


_POOL_PLANS = {}  # max pooling signature -> _pool_plan's plan


def _check_pool_dtype(x, name):
    if x.dtype is D.bool or x.dtype.is_complex:
        raise NotImplementedError(f"\"{name}\" not implemented for '{x.dtype.ir_name}'")


def _max_pool(x, name, nd, kernel_size, stride, padding, dilation, ceil_mode, with_indices):
    pairs, steps, k, s, p, d, out = _pool_plan(x, name, nd, kernel_size, stride, padding,
                                                 dilation, ceil_mode)
    xp = xp_of(x)
    if not with_indices and xp is np:
        a = x._array
        padded = a if pairs is None else constant_padded(xp, a, pairs, _lowest(x.dtype))
        values = _window_max(a, padded, steps)
        if values is not None:
            return like_input(_fresh(values, x.dtype, x.device), x)
    win = _padded_windows(xp, x._array, k, s, p, d, out, _lowest(x.dtype))
    flat = win.reshape(win.shape[:-nd] + (-1,))
    values = flat.max(axis=-1)  # NaN propagates, as in ATen
    if not with_indices:
        return like_input(_fresh(values, x.dtype, x.device), x)
    inside = xp.ones(x.shape_tuple[-nd:], dtype=bool)
    valid = _padded_windows(xp, inside, k, s, p, d, out, False)
    arg = _argmax_as_aten(xp, flat, values, valid.reshape(valid.shape[:-nd] + (-1,)))
    # the winner's position in the (unpadded) input plane, flattened as ATen reports it; a window
    # with no in-bounds element reports ATen's initial position: the start stepped by the
    # dilation until it is >= 0 (possibly past the end)
    pos = xp.unravel_index(arg, tuple(k))
    empty = ~valid.any(axis=tuple(range(-nd, 0)))
    index = xp.zeros(arg.shape, dtype=np.int64)
    shape = x.shape_tuple[-nd:]
    for i in range(nd):
        start = xp.arange(out[i]).reshape((-1,) + (1,) * (nd - 1 - i)) * s[i] - p[i]
        stepped = start + (-(start // d[i])) * d[i] * (start < 0)
        coord = xp.where(empty, stepped, start + pos[i] * d[i])
        index = index * shape[i] + coord
    return (like_input(_fresh(values, x.dtype, x.device), x),
            like_input(_fresh(index, D.int64, x.device), x))


def _check_1d_input(x, name):
    if x.ndim not in (2, 3):
        raise RuntimeError(f"{name}: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
                           f"batch size for input, but got:{sizes(x.shape_tuple)}")


@op("max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
    "int[1] dilation=[1], bool ceil_mode=False) -> Tensor")
def max_pool1d(self, kernel_size, stride, padding, dilation, ceil_mode):
    # ATen's separate max_pool1d_impl, with its own checks and messages
    _check_1d_input(self, "max_pool1d")
    k, s, p, d = _pool_params("max_pool1d", 1, kernel_size, stride, padding, dilation)
    for what, v, low in (("kernel_size", k[0], 1), ("stride", s[0], 1), ("padding", p[0], 0)):
        if v < low:
            rule = "must be non-negative" if low == 0 else "must be greater than zero"
            raise RuntimeError(f"max_pool1d() {what} {rule}, but got {v}")
    if p[0] > k[0] // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p[0]} and kernel_size={k[0]}")
    if d[0] < 1:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d[0]}")
    out = pooling_output_size(self.shape_tuple[-1], k[0], p[0], s[0], d[0], ceil_mode)
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    if self.dtype.category < 2:
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{self.dtype.ir_name}'")
    return _max_pool(self, "max_pool1d", 1, kernel_size, stride, padding, dilation, ceil_mode, False)


@composite(max_pool1d)
def _max_pool1d_composite(self, kernel_size, stride, padding, dilation, ceil_mode):
    # MaxPooling.cpp max_pool1d with a gradient: a 2-d pool of the unsqueezed input
    max_pool1d.kernel(self, kernel_size, stride, padding, dilation, ceil_mode)  # its checks
    k, s, p, d = _pool_params("max_pool1d", 1, kernel_size, stride, padding, dilation)
    return max_pool2d(self.unsqueeze(-2), [1, k[0]], [1, s[0]], [0, p[0]], [1, d[0]],
                      ceil_mode).squeeze(-2)


@op("max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], "
    "int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)")
def max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    if self.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.ndim}-dimensional tensor for "
                           "argument #1 'self' (while checking arguments for max_pool1d)")
    return _max_pool(self, "max_pool1d", 1, kernel_size, stride, padding, dilation, ceil_mode, True)


@composite(max_pool1d_with_indices)
def _max_pool1d_with_indices_composite(self, kernel_size, stride, padding, dilation, ceil_mode):
    max_pool1d_with_indices.kernel(self, kernel_size, stride, padding, dilation, ceil_mode)  # checks
    k, s, p, d = _pool_params("max_pool1d", 1, kernel_size, stride, padding, dilation)
    values, indices = max_pool2d_with_indices(self.unsqueeze(-2), [1, k[0]], [1, s[0]], [0, p[0]],
                                              [1, d[0]], ceil_mode)
    return values.squeeze(-2), indices.squeeze(-2)


@op("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> Tensor")
def max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool(self, "max_pool2d", 2, kernel_size, stride, padding, dilation, ceil_mode, False)


@composite(max_pool2d)
def _max_pool2d_composite(self, kernel_size, stride, padding, dilation, ceil_mode):
    # MaxPooling.cpp max_pool2d: with a gradient, max_pool2d_with_indices's values
    return max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


@op("max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)", variants=())
def max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    return _max_pool(self, "max_pool2d", 2, kernel_size, stride, padding, dilation, ceil_mode, True)


derivatives(max_pool2d_with_indices, {
    "self": "max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, "
            "ceil_mode, result1)"}, output_differentiability=[True, False])


@op("avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    variants=())
def avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k, s, p, d = _pool_params("avg_pool2d", 2, kernel_size, stride, padding, None)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if self.ndim not in (3, 4):
        # ATen reads input.size(-3) first
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(self.ndim, 1)}, "
                         f"{max(self.ndim, 1) - 1}], but got -3)")
    if self.dtype is D.bool or self.dtype.is_complex:
        raise NotImplementedError(f"\"avg_pool2d\" not implemented for '{self.dtype.ir_name}'")
    return _avg_pool(self, "avg_pool2d", k, s, p, d, ceil_mode, count_include_pad, divisor_override)


def _avg_pool(self, name, k, s, p, d, ceil_mode, count_include_pad, divisor_override):
    """Average pooling over the last len(k) dims, ATen's divisor per output position."""
    nd = len(k)
    out = _check_pool(self, name, k, s, p, d, ceil_mode)
    xp = xp_of(self)
    acc = np.float64 if self.dtype.is_floating_point else np.int64
    total = _padded_windows(xp, self._array, k, s, p, d, out, 0).sum(axis=tuple(range(-nd, 0)),
                                                                      dtype=acc)
    if divisor_override is not None:
        div = xp.asarray(divisor_override)
    else:
        # per output position, as ATen: the window clipped to input+padding counts (or, without
        # count_include_pad, the window clipped to the input itself)
        div = 1
        for i, (L, kk, pp, ss, o) in enumerate(zip(self.shape_tuple[-nd:], k, p, s, out)):
            start = xp.arange(o) * ss - pp
            end = xp.minimum(start + kk, L + pp)
            count = end - start if count_include_pad else xp.minimum(end, L) - xp.maximum(start, 0)
            div = div * count.reshape((-1,) + (1,) * (nd - 1 - i))
    if self.dtype.is_floating_point:
        res = total / div
    else:  # integer division truncating toward zero, as C++
        res = xp.sign(total) * (xp.abs(total) // div)
    return like_input(_fresh(res.astype(self.dtype.np), self.dtype, self.device), self)


derivatives(avg_pool2d, {
    "self": "avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, "
            "count_include_pad, divisor_override)"})


@op("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", variants=())
def adaptive_avg_pool2d(self, output_size):
    output_size = [int(o) for o in output_size]  # (floats: interpolate's traced recomputed sizes)
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if self.ndim not in (3, 4) or any(v == 0 for v in self.shape_tuple[-2:]):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{sizes(self.shape_tuple)}")
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for '{self.dtype.ir_name}'")
    xp = xp_of(self)
    a = self._array.astype(np.float64)
    if output_size == [1, 1]:  # (a squeeze-excitation's global pool)
        # the integral image's one corner, as below: the same sequential sums (rows, then the
        # last row's columns) and its "- 0 - 0 + 0" (which makes a -0.0 sum 0.0)
        total = a.cumsum(-2)[..., -1:, :].cumsum(-1)[..., -1:]
        total += 0.0
        res = total / (a.shape[-2] * a.shape[-1])
        return like_input(_fresh(res.astype(self.dtype.np), self.dtype, self.device), self)
    # output cell i averages input rows floor(i*L/O) .. ceil((i+1)*L/O): region sums from an
    # integral image (cumulative sums with a leading zero row/column)
    integral = xp.zeros(a.shape[:-2] + (a.shape[-2] + 1, a.shape[-1] + 1))
    integral[..., 1:, 1:] = a.cumsum(-2).cumsum(-1)
    bounds = []
    for L, o in zip(a.shape[-2:], output_size):
        i = xp.arange(o)
        bounds.append(((i * L) // o, -((-(i + 1) * L) // o)))
    (h0, h1), (w0, w1) = bounds
    H0, H1, W0, W1 = h0[:, None], h1[:, None], w0[None, :], w1[None, :]
    sums = (integral[..., H1, W1] - integral[..., H0, W1]
            - integral[..., H1, W0] + integral[..., H0, W0])
    res = sums / ((H1 - H0) * (W1 - W0))
    return like_input(_fresh(res.astype(self.dtype.np), self.dtype, self.device), self)


@composite(adaptive_avg_pool2d)
def _adaptive_avg_pool2d_composite(self, output_size):
    # AdaptiveAveragePooling.cpp: output 1x1 is a mean (MeanBackward1), else _adaptive_avg_pool2d
    if list(output_size) == [1, 1] and self.numel() > 0:
        out = self.mean([-1, -2], True)
        if self.ndim == 4 and suggest_memory_format(self) is channels_last:
            # torch restrides it in place (out.as_strided_: AsStridedBackward1); reftrace has no
            # as_strided_, so a view gives the same strides and gradients (AsStridedBackward0)
            n, c = self.shape_tuple[:2]
            out = out.as_strided([n, c, 1, 1], [c, 1, c, c])
        return out
    return attach_history(adaptive_avg_pool2d, [self, output_size],
                          adaptive_avg_pool2d.kernel(self, output_size))


derivatives(adaptive_avg_pool2d, {"self": "_adaptive_avg_pool2d_backward(grad, self)"})


# -- nn-layers: 1d and 3d pooling --------------------------------------------------------------------

@op("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, "
    "bool ceil_mode=False, bool count_include_pad=True) -> Tensor")
def avg_pool1d(self, kernel_size, stride, padding, ceil_mode, count_include_pad):
    # ATen's checkDimRange and check1d, then avg_pool2d on a height-1 view
    if self.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {self.ndim}-dimensional tensor for "
                           "argument #1 'self' (while checking arguments for avg_pool1d)")
    for what, v in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding)):
        if len(v) > 1:
            raise RuntimeError(f"avg_pool1d() argument '{what}' should contain one int (got {len(v)})")
    if self.dtype is D.bool or self.dtype.is_complex or not self.dtype.is_floating_point and \
            self.dtype.name != "int64":
        raise NotImplementedError(f"\"avg_pool2d\" not implemented for '{self.dtype.ir_name}'")
    k, s, p, d = _pool_params("avg_pool1d", 1, kernel_size, stride, padding, None)
    return _avg_pool(self, "avg_pool2d", k, s, p, d, ceil_mode, count_include_pad, None)


@composite(avg_pool1d)
def _avg_pool1d_composite(self, kernel_size, stride, padding, ceil_mode, count_include_pad):
    # AveragePool1d.cpp: with a gradient, avg_pool2d of the unsqueezed input
    avg_pool1d.kernel(self, kernel_size, stride, padding, ceil_mode, count_include_pad)  # checks
    k, s, p, _ = _pool_params("avg_pool1d", 1, kernel_size, stride, padding, None)
    return avg_pool2d(self.unsqueeze(-2), [1, k[0]], [1, s[0]], [0, p[0]], ceil_mode,
                      count_include_pad, None).squeeze(-2)


@op("avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
    "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    variants=())
def avg_pool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k, s, p, d = _pool_params("avg_pool3d", 3, kernel_size, stride, padding, None)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if self.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    for dim in range(self.ndim - 4, self.ndim):
        if self.shape_tuple[dim] == 0:
            raise RuntimeError(f"avg_pool3d(): Expected input's non-batch dimensions to have "
                               f"positive length, but input has a shape of {sizes(self.shape_tuple)} "
                               f"and non-batch dimension {dim - (self.ndim - 4)} has length zero!")
    if self.dtype is D.bool or self.dtype.is_complex:
        raise NotImplementedError(f"\"avg_pool3d_out_frame\" not implemented for '{self.dtype.ir_name}'")
    return _avg_pool(self, "avg_pool3d", k, s, p, d, ceil_mode, count_include_pad, divisor_override)


derivatives(avg_pool3d, {"self": "avg_pool3d_backward(grad, self, kernel_size, stride, padding, "
                                 "ceil_mode, count_include_pad, divisor_override)"})


def _check_3d_input(x):
    if x.ndim not in (4, 5) or any(s == 0 for s in x.shape_tuple[-4:]):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")


@op("max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
    "int[3] dilation=1, bool ceil_mode=False) -> Tensor")
def max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode):
    _check_3d_input(self)
    return _max_pool(self, "max_pool3d", 3, kernel_size, stride, padding, dilation, ceil_mode, False)


@op("max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
    "int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)", variants=())
def max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    _check_3d_input(self)
    return _max_pool(self, "max_pool3d", 3, kernel_size, stride, padding, dilation, ceil_mode, True)


@composite(max_pool3d)
def _max_pool3d_composite(self, kernel_size, stride, padding, dilation, ceil_mode):
    # MaxPooling.cpp max_pool3d: with a gradient, max_pool3d_with_indices's values
    return max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


derivatives(max_pool3d_with_indices, {
    "self": "max_pool3d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, "
            "ceil_mode, result1)"}, output_differentiability=[True, False])


def _max_unpool(self, indices, output_size, name):
    nd = len(output_size)
    if indices.dtype.name != "int64":
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype.ir_name}")
    if self.shape_tuple != indices.shape_tuple:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({sizes(self.shape_tuple)}) but got indices tensor with shape: "
                           f"{sizes(indices.shape_tuple)}")
    if self.ndim not in (nd + 1, nd + 2) or any(v == 0 for v in self.shape_tuple[-nd:]):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{sizes(self.shape_tuple)}")
    xp = xp_of(self)
    lead = self.shape_tuple[:-nd]
    plane = int(np.prod(output_size))
    src = self._array.reshape(int(np.prod(lead)), int(np.prod(self.shape_tuple[-nd:])))
    idx = indices._array.reshape(src.shape)
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        bad = int(idx[(idx < 0) | (idx >= plane)][-1])  # ATen's loop keeps the last one
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, output_size))})")
    out = xp.zeros((src.shape[0], plane), dtype=self._array.dtype)
    xp.put_along_axis(out, idx, src, axis=1)
    return like_input(_fresh(out.reshape(tuple(lead) + tuple(output_size)), self.dtype,
                             self.device), self)


@op("max_unpool2d(Tensor self, Tensor indices, SymInt[2] output_size) -> Tensor", variants=())
def max_unpool2d(self, indices, output_size):
    if len(output_size) != 2:
        raise RuntimeError(f"There should be exactly two elements (height, width) in output_size, "
                           f"but got {len(output_size)} elements.")
    return _max_unpool(self, indices, output_size, "max_unpool2d")


derivatives(max_unpool2d, {"self": "max_pool_double_backward(grad, indices, 2)",
                           "indices": "non_differentiable"})


@op("max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, int[3] stride, "
    "int[3] padding) -> Tensor", variants=())
def max_unpool3d(self, indices, output_size, stride, padding):
    if len(output_size) != 3:
        raise RuntimeError(f"There should be exactly three elements (depth, height, width) in "
                           f"output_size, but got: {len(output_size)} elements.")
    return _max_unpool(self, indices, output_size, "max_unpool3d")


derivatives(max_unpool3d, {"self": "max_pool_double_backward(grad, indices, 3)",
                           "indices": "non_differentiable"})
