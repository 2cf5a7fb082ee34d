"""Spatial sampling: affine_grid_generator (F.affine_grid), grid_sampler (F.grid_sample, 2d and
3d: bilinear, nearest, bicubic; zeros, border and reflection padding), and exponential_ (the
Gumbel noise of F.gumbel_softmax).

grid_sampler follows ATen's GridSampler.h: grid coordinates in [-1, 1] are unnormalised to pixel
coordinates (align_corners: -1 and 1 are the centres of the corner pixels, else their outer
edges), padded (clipped to the border, or reflected), then sampled; every output position is
one gather per tap, never a loop over positions. Computed in float64, rounded once.
"""
import numpy as np

from .._tensor import _fresh, xp_of
from ._registry import derivatives, op
from .grid_sampler_scalar import grid_sampler_3d as _scalar_3d
from .grid_sampler_vec import grid_sampler_2d as _vec_2d
from .nn_conv import sizes
from .random import _RANDOM, _fill, _rng, _uniform


@op("exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None) -> Tensor(a!)",
    variants=("method",), **_RANDOM)
def exponential_(self, lambd, generator):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"exponential_cpu\" not implemented for '{self.dtype.ir_name}'")
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    u = _uniform(_rng(self.device, generator), self.shape_tuple, self.dtype)
    return _fill(self, -np.log1p(-u.astype(np.float64)) / lambd)


@op("affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor")
def affine_grid_generator(theta, size, align_corners):
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    xp = xp_of(theta)
    n, spatial = size[0], list(size[2:])

    def linspace(steps):
        if steps <= 1:
            return np.zeros(steps)
        ramp = np.linspace(-1.0, 1.0, steps)
        return ramp if align_corners else ramp * (steps - 1) / steps
    # base grid (*spatial, k + 1): x fastest, then y (then z), then ones
    axes = [linspace(s) for s in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")              # each (*spatial)
    coords = [m for m in reversed(mesh)] + [np.ones(spatial)]
    base = np.stack(coords, -1).reshape(-1, len(spatial) + 1)
    th = theta._array.astype(np.float64)                 # (N, k, k + 1)
    grid = xp.asarray(base)[None] @ th.transpose(0, 2, 1)
    res = grid.reshape([n] + spatial + [len(spatial)])
    return _fresh(res.astype(theta.dtype.np), theta.dtype, theta.device)


derivatives(affine_grid_generator, {
    "theta": "affine_grid_generator_backward(grad, size, align_corners)"})


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return np.zeros_like(coord)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    coord = np.abs(coord - low)
    extra = np.fmod(coord, span)
    flips = np.floor(coord / span)
    return np.where(flips % 2 == 0, extra + low, span - extra + low)


def _pad_coordinates(coord, size, padding_mode, align_corners):
    if padding_mode == 1:      # border
        return np.clip(coord, 0, size - 1)
    if padding_mode == 2:      # reflection
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return np.clip(coord, 0, size - 1)
    return coord


def _gather(a, idx, valid):
    """a (N, C, *spatial); idx a tuple of integer arrays (N, *out): a[n, :, *idx] -> (N, C, *out),
    zero where not valid."""
    n = a.shape[0]
    safe = tuple(np.where(valid, i, 0) for i in idx)
    batch = np.arange(n).reshape((n,) + (1,) * (idx[0].ndim - 1))
    vals = np.moveaxis(a, 1, -1)[(batch,) + safe]         # channels last for the gather
    vals = np.where(valid[..., None], vals, 0.0)          # (N, *out, C)
    return np.moveaxis(vals, -1, 1)


def _cubic_coefficients(t):
    A = -0.75

    def c1(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def c2(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)]


def _sample(a, grid, mode, padding_mode, align_corners):
    k = grid.shape[-1]
    spatial = a.shape[2:]
    # grid's last axis is (x, y[, z]): x indexes the LAST spatial dim
    raw = [_unnormalize(grid[..., i], spatial[k - 1 - i], align_corners) for i in range(k)]
    raw = raw[::-1]                                       # now in spatial-dim order
    if mode == 2:  # bicubic (2d only): taps around the unpadded coordinate, each tap padded
        iy, ix = raw
        y0, x0 = np.floor(iy), np.floor(ix)
        wy, wx = _cubic_coefficients(iy - y0), _cubic_coefficients(ix - x0)
        out = 0.0
        for i in range(4):
            for j in range(4):
                ty = _pad_coordinates(y0 - 1 + i, spatial[0], padding_mode, align_corners)
                tx = _pad_coordinates(x0 - 1 + j, spatial[1], padding_mode, align_corners)
                yi, xi = ty.astype(np.int64), tx.astype(np.int64)
                valid = (yi >= 0) & (yi < spatial[0]) & (xi >= 0) & (xi < spatial[1])
                out = out + _gather(a, (yi, xi), valid) * (wy[i] * wx[j])[:, None]
        return out
    coords = [_pad_coordinates(c, s, padding_mode, align_corners) for c, s in zip(raw, spatial)]
    if mode == 1:  # nearest: round half to even (nearbyint)
        idx = [np.rint(c).astype(np.int64) for c in coords]
        valid = np.ones(idx[0].shape, dtype=bool)
        for i, s in zip(idx, spatial):
            valid &= (i >= 0) & (i < s)
        return _gather(a, tuple(idx), valid)
    # (bi/tri)linear: the 2^k corners around each point
    lo = [np.floor(c) for c in coords]
    frac = [c - f for c, f in zip(coords, lo)]
    out = 0.0
    for corner in np.ndindex(*(2,) * k):
        idx, weight = [], 1.0
        valid = np.ones(lo[0].shape, dtype=bool)
        for d, bit in enumerate(corner):
            i = lo[d].astype(np.int64) + bit
            weight = weight * (frac[d] if bit else 1 - frac[d])
            valid &= (i >= 0) & (i < spatial[d])
            idx.append(i)
        out = out + _gather(a, tuple(idx), valid) * weight[:, None]
    return out


def _check_grid_sampler(input, grid, interpolation_mode, dims=None):
    """GridSampler.h's checks (check_grid_sampler_common, then _2d / _3d when ``dims`` says
    which kernel was called directly)."""
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input "
                           f"has {input.dtype.ir_name} and grid has {grid.dtype.ir_name}")
    if dims is not None and (input.ndim != dims + 2 or grid.ndim != dims + 2):
        raise RuntimeError(f"grid_sampler(): expected {dims + 2}D input and grid with same number of "
                           f"dimensions, but got input with sizes {sizes(input.shape_tuple)} and "
                           f"grid with sizes {sizes(grid.shape_tuple)}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected grid to have same number of dimensions as "
                           f"input, but got input with sizes {sizes(input.shape_tuple)} and grid "
                           f"with sizes {sizes(grid.shape_tuple)}")
    k = input.ndim - 2
    if input.shape_tuple[0] != grid.shape_tuple[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {sizes(input.shape_tuple)} and grid with sizes "
                           f"{sizes(grid.shape_tuple)}")
    if grid.shape_tuple[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, but "
                           f"got grid with sizes {sizes(grid.shape_tuple)}")
    if interpolation_mode == 2 and k == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        kernel = "grid_sampler_2d_cpu_kernel_impl" if k == 2 else "grid_sampler3d_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype.ir_name}'")


def _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners):
    if input.ndim == 5:  # the scalar kernel, in the input's dtype (grid_sampler_scalar.py)
        res = _scalar_3d(np.asarray(input._array), np.asarray(grid._array), interpolation_mode,
                              padding_mode, align_corners)
        return _fresh(np.ascontiguousarray(res), input.dtype, input.device)
    if input.dtype.np == np.float16:  # Vectorized<Half>: rounds every operation (grid_sampler_vec.py)
        res = _vec_2d(np.asarray(input._array), np.asarray(grid._array), interpolation_mode,
                      padding_mode, align_corners)
        return _fresh(np.ascontiguousarray(res), input.dtype, input.device)
    a = np.asarray(input._array, dtype=np.float64)
    g = np.asarray(grid._array, dtype=np.float64)
    res = _sample(a, g, interpolation_mode, padding_mode, align_corners)
    return _fresh(np.ascontiguousarray(res).astype(input.dtype.np), input.dtype, input.device)


@op("grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor")
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    _check_grid_sampler(input, grid, interpolation_mode)
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


# grid_sampler is composite in ATen (it calls grid_sampler_2d / _3d, whose entries these are)
derivatives(grid_sampler, {"input, grid": "((grid_sampler_2d_backward if input.dim() == 4 else "
                                          "grid_sampler_3d_backward)(grad, input, grid, "
                                          "interpolation_mode, padding_mode, align_corners, "
                                          "grad_input_mask) if grad is not None else (None, None))"})


@op("grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor")
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    _check_grid_sampler(input, grid, interpolation_mode, dims=2)
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


derivatives(grid_sampler_2d, {
    "input, grid": "grid_sampler_2d_backward(grad, input, grid, interpolation_mode, padding_mode, "
                   "align_corners, grad_input_mask) if grad is not None else (None, None)"})


@op("grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor")
def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    _check_grid_sampler(input, grid, interpolation_mode, dims=3)
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


derivatives(grid_sampler_3d, {
    "input, grid": "grid_sampler_3d_backward(grad, input, grid, interpolation_mode, padding_mode, "
                   "align_corners, grad_input_mask) if grad is not None else (None, None)"})
