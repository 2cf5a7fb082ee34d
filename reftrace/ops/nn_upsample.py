"""Upsampling: every mode of F.interpolate (nearest, nearest-exact, linear, bilinear, bicubic,
trilinear, antialiased bilinear/bicubic), in both overloads.

``F.interpolate`` calls the ``.vec`` overloads: ``(input, output_size, scale_factors)``. Given a
``scale_factor`` it records the scale factors and ``None`` for the size, so the trace computes the
output size from the input size on every run (it generalises); given a ``size`` it records the
size and ``None`` for the scales.

Index arithmetic follows ATen's UpSample.h in the op-math type (float32 for float32 inputs):
a scale given by the caller is used as ``1 / scale`` (so x2 and "size = 2*in" agree), otherwise
``in / out``; nearest picks ``min(floor(dst * scale), in - 1)``; bilinear samples at
``scale * (dst + 0.5) - 0.5`` clamped at 0 (``scale * dst`` with align_corners, where the scale
is ``(in - 1) / (out - 1)``).
"""

import numpy as np

from .._tensor import _fresh, xp_of
from ._memory_format import like_input, like_input_3d
from ._registry import composite, derivatives, op
from .upsample_aa_uint8 import upsample2d_aa_uint8
from ._layout_cache import keep_plan


def _output_size(x, output_size, scale_factors, dims):
    """compute_output_size of the .vec overloads."""
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        if len(output_size) != x.ndim - 2:
            raise RuntimeError("Expected static_cast<int64_t>(output_size->size()) == "
                               "spatial_dimensions to be true, but got false.  (Could this error "
                               "message be improved?  If so, please report an enhancement request "
                               "to PyTorch.)")
        return [int(o) for o in output_size], [None] * dims  # (floats: traced recomputed sizes)
    spatial = x.shape_tuple[-dims:]
    return [int(s * f) for s, f in zip(spatial, scale_factors)], list(scale_factors)


def _check(x, output_size, dims):
    if len(output_size) != dims:
        raise RuntimeError(f"It is expected output_size equals to {dims}, but got size {len(output_size)}")
    if x.ndim != dims + 2:
        raise RuntimeError(f"It is expected input_size equals to {dims + 2}, but got size {x.ndim}")
    spatial = x.shape_tuple[2:]
    if any(s <= 0 for s in spatial) or any(o <= 0 for o in output_size):
        names = "DHW"[-dims:] if dims > 1 else "W"
        ins = ", ".join(f"{n}: {s}" for n, s in zip(names, spatial))
        outs = ", ".join(f"{n}: {s}" for n, s in zip(names, output_size))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({ins}) "
                           f"output ({outs})")


def _scale(in_size, out_size, scale, ftype):
    """compute_scales_value: 1/scale when the caller gave a positive scale, else in/out."""
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(in_size) / ftype(out_size)


def _nearest_index(in_size, out_size, scale, exact=False):
    dst = np.arange(out_size)
    if exact:  # nearest_neighbor_exact_compute_source_index: pixel centres, rounded half up
        s = _scale(in_size, out_size, scale, np.float32)
        return np.minimum(np.floor((dst.astype(np.float32) + np.float32(0.5)) * s).astype(np.int64),
                          in_size - 1)
    if out_size == in_size:
        return dst
    if out_size == 2 * in_size:
        return dst >> 1
    s = _scale(in_size, out_size, scale, np.float32)
    return np.minimum(np.floor(dst.astype(np.float32) * s).astype(np.int64), in_size - 1)


def _nearest(x, output_size, scales, exact=False):
    output_size = [int(o) for o in output_size]  # (floats: traced recomputed sizes)
    dims = len(output_size)
    _check(x, output_size, dims)
    if not (x.dtype.is_floating_point or x.dtype.name == "uint8"):
        kernel = "upsample_nearest2d_channels_last" if dims == 2 else "compute_indices_weights_nearest"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{x.dtype.ir_name}'")
    a = x._array
    xp = xp_of(x)
    for i in range(dims):
        idx = _nearest_index(a.shape[2 + i], output_size[i], scales[i], exact)
        a = xp.take(a, xp.asarray(idx), axis=2 + i)
    return like_input_3d(_fresh(a, x.dtype, x.device), x)


@op("upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) "
    "-> Tensor", variants=())
def upsample_nearest1d_vec(input, output_size, scale_factors):
    return _nearest(input, *_output_size(input, output_size, scale_factors, 1))


@composite(upsample_nearest1d_vec)
def _upsample_nearest1d_vec_composite(input, output_size, scale_factors):
    size, scales = _output_size(input, output_size, scale_factors, 1)
    return upsample_nearest1d(input, size, *scales)


@op("upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor",
    variants=())
def upsample_nearest1d(self, output_size, scales):
    return _nearest(self, output_size, [scales])


derivatives(upsample_nearest1d, {
    "self": "upsample_backward(grad, self, output_size, [scales], 'nearest', False)"})


@op("upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) "
    "-> Tensor", variants=())
def upsample_nearest2d_vec(input, output_size, scale_factors):
    return _nearest(input, *_output_size(input, output_size, scale_factors, 2))


@composite(upsample_nearest2d_vec)
def _upsample_nearest2d_vec_composite(input, output_size, scale_factors):
    size, scales = _output_size(input, output_size, scale_factors, 2)
    return upsample_nearest2d(input, size, *scales)


@op("upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, "
    "float? scales_w=None) -> Tensor", variants=())
def upsample_nearest2d(self, output_size, scales_h, scales_w):
    return _nearest(self, output_size, [scales_h, scales_w])


derivatives(upsample_nearest2d, {
    "self": "upsample_backward(grad, self, output_size, [scales_h, scales_w], 'nearest', False)"})


def _linear_weights(in_size, out_size, align_corners, scale, ftype):
    """(index0, index1, lambda0, lambda1) per output position: compute_source_index_and_lambda."""
    dst = np.arange(out_size)
    if out_size == in_size:
        return dst, dst, np.ones(out_size, ftype), np.zeros(out_size, ftype)
    if align_corners:
        ratio = ftype(in_size - 1) / ftype(out_size - 1) if out_size > 1 else ftype(0)
        real = ratio * dst.astype(ftype)
    else:
        ratio = _scale(in_size, out_size, scale, ftype)
        real = np.maximum(ratio * (dst.astype(ftype) + ftype(0.5)) - ftype(0.5), ftype(0))
    i0 = np.minimum(np.floor(real).astype(np.int64), in_size - 1)
    lam1 = np.clip(real - i0.astype(ftype), 0, 1).astype(ftype)
    i1 = i0 + (i0 < in_size - 1)
    return i0, i1, (ftype(1) - lam1).astype(ftype), lam1


def _bilinear(x, output_size, align_corners, scales):
    ftype = np.float64 if x.dtype.np == np.float64 else np.float32
    xp = xp_of(x)
    plan = _bilinear_plan(x, tuple(output_size), align_corners, tuple(scales), ftype)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"upsample_bilinear2d_channels_last\" not implemented for "
                                  f"'{x.dtype.ir_name}'")
    a = x._array.astype(ftype, copy=False)
    # separable: interpolate along H, then along W; each step a[i0] * l0 + a[i1] * l1 with the
    # products rounded, then their sum: one take of both taps (i0 and i1 side by side on a new
    # axis), one product with both weights, one sum of the two halves
    for axis, (taps, weights) in enumerate(plan, 2):
        both = xp.take(a, xp.asarray(taps), axis=axis)          # (..., 2, out, ...)
        both *= xp.asarray(weights)
        a = xp.add(both[(slice(None),) * axis + (0,)], both[(slice(None),) * axis + (1,)])
    # (a is a new array: no second copy when the dtype is already the input's)
    return like_input(_fresh(a.astype(x.dtype.np, copy=False), x.dtype, x.device), x)


def _bilinear_plan(x, output_size, align_corners, scales, ftype):
    """The checks of a bilinear upsampling (raising ATen's errors) and, per spatial axis, its
    taps (2, out) (index0 over index1) and their weights (lambda0 over lambda1), repeated over
    the other spatial dims (the products then run as long inner loops, not one per row): made
    once per geometry (a traced model upsamples the same sizes on every call), read-only as
    they are shared."""
    key = (x._array.shape, output_size, align_corners, scales, ftype)
    plan = _BILINEAR_PLANS.get(key)
    if plan is None:
        _check(x, output_size, 2)
        plan = []
        spatial = list(x._array.shape[2:])  # (the sizes after the steps so far)
        for i, (out_size, scale) in enumerate(zip(output_size, scales)):
            i0, i1, l0, l1 = _linear_weights(spatial[i], out_size, align_corners, scale, ftype)
            spatial[i] = out_size
            taps, weights = np.stack([i0, i1]), np.stack([l0, l1])
            weights = weights.reshape((2, -1) + (1,) * (len(spatial) - 1 - i))
            weights = np.broadcast_to(weights, tuple(spatial[:i]) + (2,) + tuple(spatial[i:])).copy()
            taps.flags.writeable = weights.flags.writeable = False
            plan.append((taps, weights))
        keep_plan(_BILINEAR_PLANS, key, plan, 256)
    return plan


_BILINEAR_PLANS = {}  # geometry -> _bilinear_plan's plan


@op("upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
    "float[]? scale_factors) -> Tensor", variants=())
def upsample_bilinear2d_vec(input, output_size, align_corners, scale_factors):
    size, scales = _output_size(input, output_size, scale_factors, 2)
    return _bilinear(input, size, align_corners, scales)


@composite(upsample_bilinear2d_vec)
def _upsample_bilinear2d_vec_composite(input, output_size, align_corners, scale_factors):
    size, scales = _output_size(input, output_size, scale_factors, 2)
    return upsample_bilinear2d(input, size, align_corners, *scales)


@op("upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, "
    "float? scales_h=None, float? scales_w=None) -> Tensor", variants=())
def upsample_bilinear2d(self, output_size, align_corners, scales_h, scales_w):
    return _bilinear(self, output_size, align_corners, [scales_h, scales_w])


# -- nn-layers: every mode and rank of F.interpolate ------------------------------------------------
# Each mode has its .vec overload (what F.interpolate records) and the per-dimension-scales
# overload (what the .vec one decomposes to in ATen, and what derivatives.yaml describes).

def _register_nearest(name, dims, exact):
    scale_args = {1: "float? scales=None", 2: "float? scales_h=None, float? scales_w=None",
                  3: "float? scales_d=None, float? scales_h=None, float? scales_w=None"}[dims]

    @op(f"{name}.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
        variants=())
    def vec(input, output_size, scale_factors):
        return _nearest(input, *_output_size(input, output_size, scale_factors, dims), exact)

    @op(f"{name}(Tensor self, SymInt[{dims}] output_size, {scale_args}) -> Tensor", variants=())
    def direct(self, output_size, *scales):
        return _nearest(self, output_size, list(scales), exact)

    scales = ", ".join(s.split()[1].split("=")[0] for s in scale_args.split(", "))
    derivatives(direct, {"self": f"{name}_backward(grad, output_size, self.shape, {scales})"})

    @composite(vec)
    def _vec_composite(input, output_size, scale_factors):
        # UpSampleNearest*d.cpp: the .vec overload is CompositeImplicit, the direct one's node
        size, scales = _output_size(input, output_size, scale_factors, dims)
        return direct(input, size, *scales)
    return vec, direct


upsample_nearest3d_vec, upsample_nearest3d = _register_nearest("upsample_nearest3d", 3, False)
_upsample_nearest_exact1d_vec, _upsample_nearest_exact1d = _register_nearest(
    "_upsample_nearest_exact1d", 1, True)
_upsample_nearest_exact2d_vec, _upsample_nearest_exact2d = _register_nearest(
    "_upsample_nearest_exact2d", 2, True)
_upsample_nearest_exact3d_vec, _upsample_nearest_exact3d = _register_nearest(
    "_upsample_nearest_exact3d", 3, True)


def _cubic1(x, A):
    return ((A + 2) * x - (A + 3)) * x * x + 1


def _cubic2(x, A):
    return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A


def _cubic_weights(in_size, out_size, align_corners, scale, ftype):
    """(indices (out, 4), weights (out, 4)): ATen's bicubic taps, A = -0.75, the source index
    unclamped (area_pixel_compute_source_index with cubic=True), the taps clamped to the input."""
    dst = np.arange(out_size).astype(ftype)
    if align_corners:
        ratio = ftype(in_size - 1) / ftype(out_size - 1) if out_size > 1 else ftype(0)
        real = ratio * dst
    else:
        ratio = _scale(in_size, out_size, scale, ftype)
        real = ratio * (dst + ftype(0.5)) - ftype(0.5)
    i0 = np.floor(real).astype(np.int64)
    t = (real - i0.astype(ftype)).astype(ftype)
    A = ftype(-0.75)
    w = np.stack([_cubic2(t + 1, A), _cubic1(t, A), _cubic1(1 - t, A), _cubic2(2 - t, A)], -1)
    idx = np.clip(i0[:, None] + np.arange(-1, 3), 0, in_size - 1)
    return idx, w.astype(ftype)


def _aa_weights(in_size, out_size, align_corners, scale, ftype, interp_size, filt):
    """(indices (out, K), weights (out, K)): ATen's antialiased taps
    (_compute_indices_min_size_weights_aa): the filter widened by the scale when downsampling,
    every window normalised to sum 1; taps past a window's end get weight 0."""
    if align_corners:
        s = ftype(in_size - 1) / ftype(out_size - 1) if out_size > 1 else ftype(0)
    else:
        s = _scale(in_size, out_size, scale, ftype)
    s = float(s)
    support = interp_size * 0.5 * s if s >= 1.0 else interp_size * 0.5
    invscale = 1.0 / s if s >= 1.0 else 1.0
    center = s * (np.arange(out_size) + 0.5)
    xmin = np.maximum((center - support + 0.5).astype(np.int64), 0)
    xsize = np.minimum((center + support + 0.5).astype(np.int64), in_size) - xmin
    K = int(xsize.max()) if out_size else 0
    j = np.arange(K)
    w = filt((j[None, :] + xmin[:, None] - center[:, None] + 0.5) * invscale)
    w = np.where(j[None, :] < xsize[:, None], w, 0.0)
    total = w.sum(-1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w)
    idx = np.minimum(xmin[:, None] + j[None, :], in_size - 1)
    return idx, w.astype(ftype)


def _aa_linear(x):
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _aa_cubic(x):
    x = np.abs(x)
    return np.where(x < 1.0, _cubic1(x, -0.5), np.where(x < 2.0, _cubic2(x, -0.5), 0.0))


def _separable(x, output_size, taps, name, order=None):
    """Interpolate one spatial axis at a time: out = sum_k w[o, k] * in[idx[o, k]].
    ``taps(in_size, out_size, axis_index, ftype)`` gives (idx, w) for one axis."""
    output_size = [int(o) for o in output_size]  # (floats: traced recomputed sizes)
    dims = len(output_size)
    _check(x, output_size, dims)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{x.dtype.ir_name}'")
    xp = xp_of(x)
    ftype = np.float64 if x.dtype.np == np.float64 else np.float32
    a = x._array.astype(ftype, copy=False)
    for i in (order or range(dims)):
        axis = 2 + i
        idx, w = taps(a.shape[axis], output_size[i], i, ftype)
        idx, w = xp.asarray(idx), xp.asarray(w)
        moved = xp.moveaxis(a, axis, -1)                       # (..., in)
        picked = moved[..., idx]                               # (..., out, K)
        a = xp.moveaxis((picked * w).sum(-1, dtype=ftype), -1, axis)
    return like_input_3d(_fresh(xp.ascontiguousarray(a.astype(x.dtype.np)), x.dtype, x.device),
                         x)


def _linear_taps(align_corners, scales):
    def taps(in_size, out_size, i, ftype):
        i0, i1, l0, l1 = _linear_weights(in_size, out_size, align_corners, scales[i], ftype)
        return np.stack([i0, i1], -1), np.stack([l0, l1], -1)
    return taps


def _cubic_taps(align_corners, scales):
    def taps(in_size, out_size, i, ftype):
        if in_size == out_size:  # ATen copies the input unchanged
            return np.arange(in_size)[:, None], np.ones((in_size, 1), ftype)
        return _cubic_weights(in_size, out_size, align_corners, scales[i], ftype)
    return taps


def _aa_taps(align_corners, scales, interp_size, filt):
    def taps(in_size, out_size, i, ftype):
        return _aa_weights(in_size, out_size, align_corners, scales[i], ftype, interp_size, filt)
    return taps


_INTERP = {
    # name: (dims, taps factory, "not implemented" kernel name, axis order)
    "upsample_linear1d": (1, _linear_taps, "upsample_linear1d_channels_last", None),
    "upsample_trilinear3d": (3, _linear_taps, "upsample_trilinear3d_channels_last", None),
    "upsample_bicubic2d": (2, _cubic_taps, "upsample_bicubic2d_channels_last", None),
    "_upsample_bilinear2d_aa": (2, lambda ac, sc: _aa_taps(ac, sc, 2, _aa_linear),
                                "_upsample_bilinear2d_aa", (1, 0)),
    "_upsample_bicubic2d_aa": (2, lambda ac, sc: _aa_taps(ac, sc, 4, _aa_cubic),
                               "_upsample_bicubic2d_aa", (1, 0)),
}


# antialiased kernels with torch's uint8 path, and their filter's interp_size
_AA_UINT8 = {"_upsample_bilinear2d_aa": 2, "_upsample_bicubic2d_aa": 4}


def _register_interp(name):
    dims, taps, kname, order = _INTERP[name]
    scale_args = {1: "float? scales=None", 2: "float? scales_h=None, float? scales_w=None",
                  3: "float? scales_d=None, float? scales_h=None, float? scales_w=None"}[dims]

    @op(f"{name}.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
        "float[]? scale_factors) -> Tensor", variants=())
    def vec(input, output_size, align_corners, scale_factors):
        size, scales = _output_size(input, output_size, scale_factors, dims)
        return _interp(input, size, align_corners, scales)

    @op(f"{name}(Tensor self, SymInt[{dims}] output_size, bool align_corners, {scale_args}) "
        "-> Tensor", variants=())
    def direct(self, output_size, align_corners, *scales):
        return _interp(self, output_size, align_corners, list(scales))

    def _interp(x, size, align_corners, scales):
        if name in _AA_UINT8 and not x.dtype.is_floating_point:
            _check(x, [int(o) for o in size], dims)
            if x.dtype.np != np.uint8:
                raise NotImplementedError(
                    f"\"compute_index_ranges_weights\" not implemented for '{x.dtype.ir_name}'")
            # torch's uint8 kernel: fixed-point weights (upsample_aa_uint8.py)
            res = upsample2d_aa_uint8(np.asarray(x._array), [int(o) for o in size], align_corners,
                                      scales, _AA_UINT8[name])
            return like_input_3d(_fresh(np.ascontiguousarray(res), x.dtype, x.device), x)
        return _separable(x, size, taps(align_corners, scales), kname, order)

    scales = ", ".join(s.split()[1].split("=")[0] for s in scale_args.split(", "))
    derivatives(direct, {"self": f"{name}_backward(grad, output_size, self.shape, "
                                 f"align_corners, {scales})"})

    @composite(vec)
    def _vec_composite(input, output_size, align_corners, scale_factors):
        # UpSample.cpp: the .vec overload computes the size and calls the per-dimension one
        # (whose derivatives.yaml entry makes the grad_fn)
        size, scales = _output_size(input, output_size, scale_factors, dims)
        return direct(input, size, align_corners, *scales)
    return vec, direct


upsample_linear1d_vec, upsample_linear1d = _register_interp("upsample_linear1d")
upsample_trilinear3d_vec, upsample_trilinear3d = _register_interp("upsample_trilinear3d")
upsample_bicubic2d_vec, upsample_bicubic2d = _register_interp("upsample_bicubic2d")
_upsample_bilinear2d_aa_vec, _upsample_bilinear2d_aa = _register_interp("_upsample_bilinear2d_aa")
_upsample_bicubic2d_aa_vec, _upsample_bicubic2d_aa = _register_interp("_upsample_bicubic2d_aa")
derivatives(upsample_bilinear2d, {
    "self": "upsample_backward(grad, self, output_size, [scales_h, scales_w], 'bilinear', "
            "align_corners)"})
