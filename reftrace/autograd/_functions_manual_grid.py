"""FunctionsManual's grid_sampler_2d_double_backward and grid_sampler_3d_double_backward (torch
2.13's derivatives.yaml entries of grid_sampler_{2,3}d_backward): the gradients of
(grad_input, grad_grid) = grid_sampler_backward(grad_output, input, grid) with respect to
grad_output, input and grid, given the incoming gradients (ggI, ggGrid) of its two outputs.

Every output position reads K taps of input with weights w_k(grid): output = sum_k w_k input[k].
With dw_k the weights' gradient in the grid coordinates (the padding's slope folded in) and
H_k their Hessian:
  d grad_output = sum_k w_k ggI[k] + sum_k (dw_k . ggGrid) input[k]
  d input       = scatter_k (dw_k . ggGrid) grad_output
  d grid        = sum_c grad_output sum_k (ggI[k] dw_k + input[k] H_k ggGrid)
computed in float64 and rounded once. torch writes these with differentiable ATen ops (its
results' grad_fns are Gather/ScatterAdd/Mul...); here they are computed on arrays, so their
values are torch's to rounding but they record no graph (a third derivative is not taken).
"""
import numpy as np

from .._tensor import _fresh


def _cubic_derivatives(t):
    """The bicubic tap weights at offsets -1, 0, 1, 2 (A = -0.75) and their first and second
    derivatives in the fraction t."""
    A = -0.75

    def far(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A, (3 * A * x - 10 * A) * x + 8 * A, 6 * A * x - 10 * A

    def near(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1, (3 * (A + 2) * x - 2 * (A + 3)) * x, 6 * (A + 2) * x - 2 * (A + 3)
    f0, n1, n2, f3 = far(t + 1), near(t), near(1 - t), far(2 - t)
    w = [f0[0], n1[0], n2[0], f3[0]]
    dw = [f0[1], n1[1], -n2[1], -f3[1]]
    d2w = [f0[2], n1[2], n2[2], f3[2]]
    return w, dw, d2w


def _taps_2d(shape, grid, mode, padding, align_corners):
    """[(flat index, valid, w, dw (.., 2), H (.., 2, 2))] per tap, positions (N, P)."""
    from ..ops.grid_sampler_vec import _Sampler
    N, _, H, W = shape
    s = _Sampler(np.empty((N, 1, H, W)), mode, padding, align_corners)
    gx, gy = grid[..., 0], grid[..., 1]
    zeros = np.zeros(gx.shape)
    taps = []
    if mode == 1:
        iy, ix, m = s.nearest_index(gx, gy)
        return [(iy * W + ix, m, np.ones(gx.shape), np.zeros(gx.shape + (2,)), np.zeros(gx.shape + (2, 2)))]
    if mode == 0:
        x, mx = s.cw.apply_get_grad(gx)
        y, my = s.ch.apply_get_grad(gy)
        (n, so, w, e), _, corners = s.bilinear_params(x, y)
        factors = (((e, -1), (so, -1)), ((w, 1), (so, -1)), ((e, -1), (n, 1)), ((w, 1), (n, 1)))
        for (iy, ix, m), ((fx, sx), (fy, sy)) in zip(corners, factors):
            dw = np.stack([sx * mx * fy, sy * my * fx], -1)
            hxy = sx * sy * mx * my
            hess = np.stack([np.stack([zeros, hxy], -1), np.stack([hxy, zeros], -1)], -2)
            taps.append((iy * W + ix, m, fx * fy, dw, hess))
        return taps
    tx, ty, tap = s.bicubic_params(gx, gy)
    mx, my = s.cw.scaling, s.ch.scaling
    cx, dcx, d2cx = _cubic_derivatives(tx)
    cy, dcy, d2cy = _cubic_derivatives(ty)
    for i in range(4):
        for j in range(4):
            iy, ix, m = tap(i, j)
            dw = np.stack([mx * dcx[i] * cy[j], my * cx[i] * dcy[j]], -1)
            hxy = mx * my * dcx[i] * dcy[j]
            hess = np.stack([np.stack([mx * mx * d2cx[i] * cy[j], hxy], -1),
                             np.stack([hxy, my * my * cx[i] * d2cy[j]], -1)], -2)
            taps.append((iy * W + ix, m, cx[i] * cy[j], dw, hess))
    return taps


def _taps_3d(shape, grid, mode, padding, align_corners):
    from ..ops.grid_sampler_scalar import _gather3d_valid, _to_index, compute_source_index_set_grad
    N, _, D, H, W = shape
    coords = [compute_source_index_set_grad(grid[..., k], size, padding, align_corners)
              for k, size in enumerate((W, H, D))]                 # (x, y, z)
    if mode == 1:
        x, y, z = (_to_index(np.rint(c)) for c, _ in coords)
        return [((z * H + y) * W + x, _gather3d_valid(z, y, x, D, H, W), np.ones(x.shape),
                 np.zeros(x.shape + (3,)), np.zeros(x.shape + (3, 3)))]
    lo = [_to_index(np.floor(c)) for c, _ in coords]
    fac = [((l + 1) - c, c - l) for (c, _), l in zip(coords, lo)]  # weight of the low/high tap
    taps = []
    for dz in (0, 1):
        for dy in (0, 1):
            for dx in (0, 1):
                bits = (dx, dy, dz)
                f = [fac[k][bits[k]] for k in range(3)]
                slope = [(1 if bits[k] else -1) * coords[k][1] for k in range(3)]
                dw = np.stack([slope[k] * f[(k + 1) % 3] * f[(k + 2) % 3] for k in range(3)], -1)
                hess = np.zeros(f[0].shape + (3, 3))
                for a in range(3):
                    for b in range(3):
                        if a != b:
                            hess[..., a, b] = slope[a] * slope[b] * f[3 - a - b]
                x, y, z = lo[0] + dx, lo[1] + dy, lo[2] + dz
                taps.append(((z * H + y) * W + x, _gather3d_valid(z, y, x, D, H, W),
                             f[0] * f[1] * f[2], dw, hess))
    return taps


def _double_backward(taps_of, ggI, ggGrid, grad_output, input, grid, interpolation_mode,
                     padding_mode, align_corners, mask):
    N, C = input.shape_tuple[:2]
    dims = grid.shape_tuple[-1]
    spatial = int(np.prod(input.shape_tuple[2:]))
    out_shape = grid.shape_tuple[1:-1]
    P = int(np.prod(out_shape))
    g = np.asarray(grid._array, np.float64).reshape(N, P, dims)
    go = np.asarray(grad_output._array, np.float64).reshape(N, C, P)
    x = np.asarray(input._array, np.float64).reshape(N, C, spatial)
    ggi = None if ggI is None else np.asarray(ggI._array, np.float64).reshape(N, C, spatial)
    ggg = None if ggGrid is None else np.asarray(ggGrid._array, np.float64).reshape(N, P, dims)
    if interpolation_mode == 1:
        ggg = None  # the nearest weights are flat in the grid
    with np.errstate(all="ignore"):
        taps = taps_of(input.shape_tuple, g, interpolation_mode, padding_mode, align_corners)
    batch = np.arange(N)[:, None]

    def gather(a, idx, valid):  # a (N, C, S) -> (N, C, P), zero off the input
        vals = a[batch[:, None], np.arange(C)[None, :, None], np.where(valid, idx, 0)[:, None]]
        return np.where(valid[:, None], vals, 0.0)
    directional = [None if ggg is None else (dw * ggg).sum(-1) for *_, dw, _ in taps]
    d_go = d_in = d_grid = None
    if mask[0] and (ggi is not None or ggg is not None):
        d_go = np.zeros((N, C, P))
        for (idx, valid, w, _, _), dirn in zip(taps, directional):
            if ggi is not None:
                d_go += gather(ggi, idx, valid) * w[:, None]
            if dirn is not None:
                d_go += gather(x, idx, valid) * dirn[:, None]
    if mask[1] and ggg is not None:
        acc = np.zeros((N, spatial + 1, C))
        for (idx, valid, *_), dirn in zip(taps, directional):
            np.add.at(acc, (batch, np.where(valid, idx, spatial)), np.moveaxis(go * dirn[:, None], 1, -1))
        d_in = np.moveaxis(acc[:, :spatial], -1, 1)
    if mask[2] and (ggi is not None or ggg is not None):
        d_grid = np.zeros((N, P, dims))
        for idx, valid, _, dw, hess in taps:
            if ggi is not None:
                d_grid += (go * gather(ggi, idx, valid)).sum(1)[..., None] * dw
            if ggg is not None:
                d_grid += (go * gather(x, idx, valid)).sum(1)[..., None] * (hess @ ggg[..., None])[..., 0]

    def tensor(a, shape):
        if a is None:
            return None
        return _fresh(np.ascontiguousarray(a.reshape(shape)).astype(input.dtype.np), input.dtype,
                      input.device)
    return (tensor(d_go, grad_output.shape_tuple), tensor(d_in, input.shape_tuple),
            tensor(d_grid, grid.shape_tuple))


def grid_sampler_2d_double_backward(ggI, ggGrid, grad_output, input, grid, interpolation_mode,
                                    padding_mode, align_corners, mask):
    return _double_backward(_taps_2d, ggI, ggGrid, grad_output, input, grid, interpolation_mode,
                            padding_mode, align_corners, mask)


def grid_sampler_3d_double_backward(ggI, ggGrid, grad_output, input, grid, interpolation_mode,
                                    padding_mode, align_corners, mask):
    return _double_backward(_taps_3d, ggI, ggGrid, grad_output, input, grid, interpolation_mode,
                            padding_mode, align_corners, mask)
