"""Upsampling: nearest (1d, 2d) and bilinear (2d), in both overloads.

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
from ._registry import composite, derivatives, op


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
        return list(output_size), [None] * dims
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


def _nearest_index(in_size, out_size, scale):
    dst = np.arange(out_size)
    if out_size == in_size:
        return dst
    if out_size == 2 * in_size:
        return dst >> 1
    s = _scale(in_size, out_size, scale, np.float32)
    return np.minimum(np.floor(dst.astype(np.float32) * s).astype(np.int64), in_size - 1)


def _nearest(x, output_size, scales):
    dims = len(output_size)
    _check(x, output_size, dims)
    if not (x.dtype.is_floating_point or x.dtype.name == "uint8"):
        kernel = "upsample_nearest2d_channels_last" if dims == 2 else "compute_indices_weights_nearest"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{x.dtype.ir_name}'")
    a = x._array
    xp = xp_of(x)
    for i in range(dims):
        idx = _nearest_index(a.shape[2 + i], output_size[i], scales[i])
        a = xp.take(a, xp.asarray(idx), axis=2 + i)
    return _fresh(a, x.dtype, x.device)


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
    _check(x, output_size, 2)
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"upsample_bilinear2d_channels_last\" not implemented for "
                                  f"'{x.dtype.ir_name}'")
    xp = xp_of(x)
    ftype = np.float64 if x.dtype.np == np.float64 else np.float32
    a = x._array.astype(ftype, copy=False)
    # separable: interpolate along H, then along W
    for axis, (in_size, out_size, scale) in enumerate(zip(a.shape[2:], output_size, scales), 2):
        i0, i1, l0, l1 = (xp.asarray(v) for v in _linear_weights(in_size, out_size, align_corners,
                                                                  scale, ftype))
        shape = (-1,) + (1,) * (a.ndim - 1 - axis)
        a = (xp.take(a, i0, axis=axis) * l0.reshape(shape)
             + xp.take(a, i1, axis=axis) * l1.reshape(shape))
    return _fresh(a.astype(x.dtype.np), x.dtype, x.device)


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


derivatives(upsample_bilinear2d, {
    "self": "upsample_backward(grad, self, output_size, [scales_h, scales_w], 'bilinear', "
            "align_corners)"})
