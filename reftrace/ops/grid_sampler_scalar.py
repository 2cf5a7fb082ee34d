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


def _clip_set_grad(x, size):
    """clip_coordinates_set_grad: (coordinate, its slope); the borders count as outside."""
    dt = x.dtype
    limit = _c(dt, size - 1)
    res = np.where(x <= 0, _c(dt, 0), np.where(x >= limit, limit, x)).astype(dt)
    return res, np.where((x <= 0) | (x >= limit), _c(dt, 0), _c(dt, 1)).astype(dt)


def _reflect_set_grad(x, twice_low, twice_high):
    dt = x.dtype
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    lo = _c(dt, twice_low) / _c(dt, 2)
    span = _c(dt, twice_high - twice_low) / _c(dt, 2)
    x = (x - lo).astype(dt)
    sign = np.where(x < 0, _c(dt, -1), _c(dt, 1)).astype(dt)
    x = np.abs(x)
    extra = np.fmod(x, span)
    with np.errstate(invalid="ignore"):
        even = np.fmod(np.floor(x / span), 2) == 0
    res = np.where(even, extra + lo, (span - extra) + lo).astype(dt)
    return res, np.where(even, sign, -sign).astype(dt)


def compute_source_index_set_grad(coord, size, padding_mode, align_corners):
    """grid_sampler_compute_source_index_set_grad: (coordinate, d coordinate / d grid)."""
    dt = coord.dtype
    mult = _c(dt, size - 1 if align_corners else size) / _c(dt, 2)
    coord = unnormalize(coord, size, align_corners)
    mult = np.full(coord.shape, mult, dt)
    if padding_mode == 1:
        coord, g_clip = _clip_set_grad(coord, size)
        mult = (mult * g_clip).astype(dt)
    elif padding_mode == 2:
        twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        coord, g_refl = _reflect_set_grad(coord, *twice)
        coord, g_clip = _clip_set_grad(coord, size)
        mult = (mult * g_refl * g_clip).astype(dt)
    return coord, mult


def grid_sampler_3d_backward(grad_out, a, grid, interpolation_mode, padding_mode, align_corners,
                             input_grad):
    """grid_sampler_3d_backward_cpu_impl: grad_out (N, C, oD, oH, oW), a (N, C, D, H, W), grid
    (N, oD, oH, oW, 3). Returns (grad_input or None, grad_grid). grad_input is accumulated as
    the loop does, per output position then per corner; each position's grid gradient sums over
    channels, then corners, in scalar_t."""
    dt = a.dtype
    N, C, D, H, W = a.shape
    out = grid.shape[1:4]
    P = int(np.prod(out))
    with np.errstate(all="ignore"):
        ix, gx_mult = compute_source_index_set_grad(grid[..., 0], W, padding_mode, align_corners)
        iy, gy_mult = compute_source_index_set_grad(grid[..., 1], H, padding_mode, align_corners)
        iz, gz_mult = compute_source_index_set_grad(grid[..., 2], D, padding_mode, align_corners)
        if interpolation_mode == 1:
            taps = [(_to_index(np.rint(iz)), _to_index(np.rint(iy)), _to_index(np.rint(ix)),
                     grad_out)]
            grad_grid = np.zeros(grid.shape, dt)
        else:
            x0, y0, z0 = (_to_index(np.floor(v)) for v in (ix, iy, iz))
            X0, Y0, Z0 = (v.astype(dt) for v in (x0, y0, z0))
            X1, Y1, Z1 = (v + 1 for v in (x0, y0, z0))
            fx = ((X1.astype(dt) - ix).astype(dt), (ix - X0).astype(dt))   # to the far side
            fy = ((Y1.astype(dt) - iy).astype(dt), (iy - Y0).astype(dt))
            fz = ((Z1.astype(dt) - iz).astype(dt), (iz - Z0).astype(dt))
            gix, giy, giz = (np.zeros((N,) + out, dt) for _ in range(3))
            corners = [(dz, dy, dx) for dz in (0, 1) for dy in (0, 1) for dx in (0, 1)]
            taps, reads = [], []
            for dz, dy, dx in corners:   # tnw, tne, tsw, tse, bnw, bne, bsw, bse
                w = (fx[dx] * fy[dy] * fz[dz]).astype(dt)
                taps.append((z0 + dz, y0 + dy, x0 + dx, (w[:, None] * grad_out).astype(dt)))
                reads.append(_gather3d(a, z0 + dz, y0 + dy, x0 + dx))
            for c in range(C):
                go = grad_out[:, c]
                for (dz, dy, dx), (vals, valid) in zip(corners, reads):
                    v, ok = vals[:, c], valid[:, 0]
                    sx, sy, sz = (_c(dt, 1) if d else _c(dt, -1) for d in (dx, dy, dz))
                    gix = np.where(ok, gix + sx * (v * fy[dy] * fz[dz] * go), gix).astype(dt)
                    giy = np.where(ok, giy + sy * (v * fx[dx] * fz[dz] * go), giy).astype(dt)
                    giz = np.where(ok, giz + sz * (v * fx[dx] * fy[dy] * go), giz).astype(dt)
            grad_grid = np.stack([gx_mult * gix, gy_mult * giy, gz_mult * giz], -1).astype(dt)
        if not input_grad:
            return None, grad_grid
        # each (n, c) plane receives its deltas in (position, corner) order
        K = len(taps)
        flat = [np.where(_gather3d_valid(z, y, x, D, H, W), (z * H + y) * W + x, D * H * W)
                .reshape(N, P) for z, y, x, _ in taps]
        idx = np.stack(flat, -1).reshape(N, P * K)
        vals = np.stack([np.moveaxis(d.reshape(N, C, P), 1, -1) for *_, d in taps], 2)
        acc = np.zeros((N, D * H * W + 1, C), dt)
        np.add.at(acc, (np.arange(N)[:, None], idx), vals.reshape(N, P * K, C))
        grad_input = np.moveaxis(acc[:, :-1], -1, 1).reshape(a.shape)
        return np.ascontiguousarray(grad_input), grad_grid


def _gather3d_valid(z, y, x, D, H, W):
    return (z >= 0) & (z < D) & (y >= 0) & (y < H) & (x >= 0) & (x < W)
