"""_upsample_bilinear2d_aa / _upsample_bicubic2d_aa for uint8 as torch's CPU runs it (ATen/native/cpu/UpSampleKernel.cpp
-> UpSampleKernelAVXAntialias.h upsample_avx_bilinear_bicubic_uint8, a port of Pillow-SIMD).

The antialiased weights are computed in double (HelperInterpBase::_compute_indices_min_size_
weights_aa), then made int16 with one precision for the whole axis
(_compute_indices_int16_weights_aa: the most bits that keep the largest weight below 2^15),
and every output pixel is ``clip8((2^(p-1) + sum_k w_k * pixel_k) >> p)`` in exact integer
arithmetic: first along W into a uint8 buffer, then along H. A pass whose size is unchanged is
skipped (and with both unchanged the input is copied)."""
import numpy as np


def _area_scale(in_size, out_size, align_corners, scale):
    """area_pixel_compute_scale<double>."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return in_size / out_size


def _linear(x):
    """HelperInterpLinear::aa_filter (Pillow's triangle)."""
    x = -x if x < 0.0 else x
    return 1.0 - x if x < 1.0 else 0.0


def _cubic(x):
    """HelperInterpCubic::aa_filter: Keys' cubic with a = -0.5 (Pillow's)."""
    A = -0.5
    x = abs(x)
    if x < 1.0:
        return ((A + 2) * x - (A + 3)) * x * x + 1
    if x < 2.0:
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return 0.0


FILTERS = {2: _linear, 4: _cubic}


def int16_weights(in_size, out_size, align_corners, scale, interp_size=2):
    """(xmin (out,), xsize (out,), weights int (out, K), precision)."""
    s = _area_scale(in_size, out_size, align_corners, scale)
    support = (interp_size * 0.5) * s if s >= 1.0 else interp_size * 0.5
    max_interp = int(np.ceil(support)) * 2 + 1
    invscale = 1.0 / s if s >= 1.0 else 1.0
    xmins, xsizes, rows = [], [], []
    for i in range(out_size):
        center = s * (i + 0.5)
        xmin = max(int(center - support + 0.5), 0)
        xsize = min(int(center + support + 0.5), in_size) - xmin
        xsize = min(max(xsize, 0), max_interp)
        ws, total = [], 0.0
        for j in range(xsize):
            w = FILTERS[interp_size]((j + xmin - center + 0.5) * invscale)
            ws.append(w)
            total += w
        if total != 0.0:
            ws = [w / total for w in ws]
        rows.append(ws + [0.0] * (max_interp - xsize))
        xmins.append(xmin)
        xsizes.append(xsize)
    flat = [w for r in rows for w in r]
    w_max = flat[0] if flat else 0.0
    for v in flat:
        if w_max < v:
            w_max = v
    prec = 0
    while prec < 22:
        if int(0.5 + w_max * (1 << (prec + 1))) >= (1 << 15):
            break
        prec += 1
    ints = np.array([[int(-0.5 + v * (1 << prec)) if v < 0 else int(0.5 + v * (1 << prec))
                      for v in r] for r in rows], dtype=np.int64).reshape(out_size, max_interp)
    return np.array(xmins, np.int64), np.array(xsizes, np.int64), ints, prec


def _pass(a, axis, out_size, align_corners, scale, interp_size):
    """One axis of (N, C, H, W) uint8 -> uint8, Pillow's fixed-point convolution."""
    in_size = a.shape[axis]
    xmin, xsize, w, prec = int16_weights(in_size, out_size, align_corners, scale, interp_size)
    moved = np.moveaxis(a, axis, -1).astype(np.int64)
    acc = np.full(moved.shape[:-1] + (out_size,), 1 << (prec - 1) if prec > 0 else 0, np.int64)
    for k in range(w.shape[1]):
        live = k < xsize                                   # taps past a window's end: none
        idx = np.minimum(xmin + k, in_size - 1)
        acc = acc + np.where(live, moved[..., idx] * w[:, k], 0)
    out = np.clip(acc >> prec, 0, 255).astype(np.uint8)
    return np.moveaxis(out, -1, axis)


def upsample2d_aa_uint8(a, output_size, align_corners, scales, interp_size):
    """a (N, C, H, W) uint8; output_size (oH, oW); scales (scale_h, scale_w); interp_size 2
    (bilinear) or 4 (bicubic)."""
    oh, ow = output_size
    if a.shape[2] == oh and a.shape[3] == ow:
        return a.copy()
    if a.shape[3] != ow:
        a = _pass(a, 3, ow, align_corners, scales[1], interp_size)
    if a.shape[2] != oh:
        a = _pass(a, 2, oh, align_corners, scales[0], interp_size)
    return a
