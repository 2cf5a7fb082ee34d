"""grid_sampler_3d's CPU kernel as ATen runs it: GridSampler.cpp grid_sampler_3d_cpu_impl, a
scalar loop templated on the input's dtype, with GridSampler.h's coordinate helpers.

Every operation is done in scalar_t: for Half each one rounds to half (c10::Half arithmetic
goes through float and rounds back), which NumPy's float16 arithmetic does the same way; for
float and double it is plain IEEE arithmetic (GridSampler.cpp is built without FMA
contraction). So the same operations in the same order, on arrays of the input's dtype, give
torch's bits. Integer constants are converted to scalar_t first, as C++ does."""
import numpy as np


def _c(dt, v):
    return dt.type(v)


def unnormalize(coord, size, align_corners):
    dt = coord.dtype
    if align_corners:  # ((coord + 1) / 2) * (size - 1)
        return ((coord + _c(dt, 1)) / _c(dt, 2)) * _c(dt, size - 1)
    return ((coord + _c(dt, 1)) * _c(dt, size) - _c(dt, 1)) / _c(dt, 2)


def clip_coordinates(x, clip_limit):
    dt = x.dtype
    x = np.where(x < 0, _c(dt, 0), x)                        # std::max(in, 0): NaN stays
    limit = _c(dt, clip_limit - 1)
    return np.where(x < limit, x, limit).astype(dt)          # std::min(limit, x): NaN -> limit


def reflect_coordinates(x, twice_low, twice_high):
    dt = x.dtype
    if twice_low == twice_high:
        return np.zeros_like(x)
    lo = _c(dt, twice_low) / _c(dt, 2)
    span = _c(dt, twice_high - twice_low) / _c(dt, 2)
    x = np.abs(x - lo)
    extra = np.fmod(x, span)
    with np.errstate(invalid="ignore"):
        flips = np.floor(x / span)
    even = np.fmod(flips, 2) == 0
    return np.where(even, extra + lo, (span - extra) + lo).astype(dt)


def compute_source_index(coord, size, padding_mode, align_corners):
    coord = unnormalize(coord, size, align_corners)
    if padding_mode == 1:    # border
        coord = clip_coordinates(coord, size)
    elif padding_mode == 2:  # reflection
        if align_corners:
            coord = reflect_coordinates(coord, 0, 2 * (size - 1))
        else:
            coord = reflect_coordinates(coord, -1, 2 * size - 1)
        coord = clip_coordinates(coord, size)
    return coord


def _to_index(v):
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(v), v, -1).astype(np.int64)


def _gather3d(a, iz, iy, ix):
    """a (N, C, D, H, W); indices (N, oD, oH, oW) -> values (N, C, oD, oH, oW) and validity."""
    _, _, D, H, W = a.shape
    valid = (iz >= 0) & (iz < D) & (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
    n = np.arange(a.shape[0]).reshape(-1, 1, 1, 1)
    vals = np.moveaxis(a, 1, -1)[n, np.where(valid, iz, 0), np.where(valid, iy, 0), np.where(valid, ix, 0)]
    return np.moveaxis(vals, -1, 1), valid[:, None]


def grid_sampler_3d(a, grid, interpolation_mode, padding_mode, align_corners):
    """a (N, C, D, H, W) and grid (N, oD, oH, oW, 3), one floating dtype -> (N, C, oD, oH, oW)."""
    dt = a.dtype
    _, C, D, H, W = a.shape
    ix = compute_source_index(grid[..., 0], W, padding_mode, align_corners)
    iy = compute_source_index(grid[..., 1], H, padding_mode, align_corners)
    iz = compute_source_index(grid[..., 2], D, padding_mode, align_corners)
    if interpolation_mode == 1:  # nearest: std::nearbyint (half to even)
        vals, valid = _gather3d(a, _to_index(np.rint(iz)), _to_index(np.rint(iy)), _to_index(np.rint(ix)))
        return np.where(valid, vals, _c(dt, 0)).astype(dt)
    x0, y0, z0 = (_to_index(np.floor(v)) for v in (ix, iy, iz))
    x1, y1, z1 = x0 + 1, y0 + 1, z0 + 1
    X0, Y0, Z0, X1, Y1, Z1 = (v.astype(dt) for v in (x0, y0, z0, x1, y1, z1))
    # surfaces to each neighbour, in GridSampler.cpp's order and association
    corners = [
        (z0, y0, x0, (X1 - ix) * (Y1 - iy) * (Z1 - iz)),   # tnw
        (z0, y0, x1, (ix - X0) * (Y1 - iy) * (Z1 - iz)),   # tne
        (z0, y1, x0, (X1 - ix) * (iy - Y0) * (Z1 - iz)),   # tsw
        (z0, y1, x1, (ix - X0) * (iy - Y0) * (Z1 - iz)),   # tse
        (z1, y0, x0, (X1 - ix) * (Y1 - iy) * (iz - Z0)),   # bnw
        (z1, y0, x1, (ix - X0) * (Y1 - iy) * (iz - Z0)),   # bne
        (z1, y1, x0, (X1 - ix) * (iy - Y0) * (iz - Z0)),   # bsw
        (z1, y1, x1, (ix - X0) * (iy - Y0) * (iz - Z0)),   # bse
    ]
    out = np.zeros((a.shape[0], C) + ix.shape[1:], dtype=dt)
    for z, y, x, w in corners:
        vals, valid = _gather3d(a, z, y, x)
        out = np.where(valid, out + vals * w[:, None], out).astype(dt)
    return out
