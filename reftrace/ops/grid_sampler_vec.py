"""grid_sampler_2d's CPU kernels (ATen/native/cpu/GridSamplerKernel.cpp: ComputeLocation,
ApplyGridSample's forward and backward for bilinear, nearest and bicubic), for every dtype.

The kernel runs on Vectorized<scalar_t>, and its operations are followed here in order, on
arrays of the input's dtype:
- Half: every Vectorized<Half> operation converts to float, computes and rounds back to half,
  which NumPy's float16 arithmetic does the same way.
- float and double: plain IEEE operations, except that the AVX2/AVX512 kernels are built with
  -mfma and GCC contracts ``a * b + c`` into one fused multiply-add. Which product it fuses
  follows from GCC evaluating an overloaded operator's operands right to left: in
  ``p0 + p1 + p2`` it is p1 (then p2) that is fused, ``fma(v1, w1, p0)``. Each ``_Arith.fma``
  below marks one such contraction; they were checked bit for bit against torch 2.13.
The kernel differs from GridSampler.h's scalar helpers: reflection uses trunc of
|x - low| / twice_span, clipping sends NaN to 0, and coordinates become integers by truncation
(convert_to_int_of_same_size).

The backward (grid_sampler_2d_backward) walks the grid in torch's vector chunks
(grid_sample_2d_grid_slice_iterator), because grad_input is accumulated by a scalar
scatter-add in (chunk, corner, lane) order and float addition is not associative."""
import numpy as np

from ._fma import fma_of

# bytes of one Vectorized<scalar_t>: the grid chunk is that many bytes of scalars. torch runs
# this kernel's AVX2 build (32-byte vectors) even where the CPU has AVX512 (measured: only 32
# gives torch's grad_input order for float64, float and half)
LANE_BYTES = 32


class _Arith:
    """a * b + c as the kernel computes it for one dtype: fused for float and double, two
    roundings for Half (its operations round through float one at a time)."""

    def __init__(self, dt):
        self.dt = dt
        self.h = dt.type
        self.fused = dt != np.float16

    def fma(self, a, b, c):
        if self.fused:
            return np.asarray(fma_of(np.asarray(a, self.dt), b, c), self.dt)
        return (a * b + c).astype(self.dt)


class _Location:
    """ComputeLocationBase<scalar_t, align_corners> plus ComputeLocation's padding."""

    def __init__(self, ar, size, padding, align_corners):
        h = ar.h
        self.ar, self.dt, self.padding, self.align = ar, ar.dt, padding, align_corners
        self.max_val = h(size - 1)
        if align_corners:
            self.scaling = h(size - 1) / h(2)
            self.low = h(0)
            self.twice_span = h(size - 1) * h(2)
            self.empty = size <= 1
        else:
            self.scaling = h(size) / h(2)
            self.low = h(-0.5)
            self.twice_span = h(size) * h(2)
            self.empty = size <= 0

    def unnormalize(self, x):
        h = self.ar.h
        if self.align:
            return (x + h(1)) * self.scaling
        return self.ar.fma(x + h(1), self.scaling, h(-0.5))

    def clip(self, x):
        h = self.ar.h
        x = np.where(h(0) < x, x, h(0))                      # clamp_min(Vec(0), in): NaN -> 0
        return np.where(self.max_val > x, x, self.max_val).astype(self.dt)

    def _fold(self, x):
        """|x - low| folded by twice_span: (extra, twice_span - extra, x - low < 0)."""
        shifted = x if self.align else (x - self.low).astype(self.dt)
        a = np.abs(shifted)
        flips = np.trunc(a / self.twice_span)
        extra = self.ar.fma(-flips, self.twice_span, a)
        return extra, (self.twice_span - extra).astype(self.dt), shifted < 0

    def reflect(self, x):
        if self.align and self.empty:
            return np.zeros_like(x)
        extra, reflected, _ = self._fold(x)
        r = np.minimum(extra, reflected)
        return r if self.align else (r + self.low).astype(self.dt)

    def compute_coordinates(self, x):
        if self.padding == 1:
            return self.clip(x)
        if self.padding == 2:
            return self.clip(self.reflect(x))
        return x

    def apply(self, x):
        return self.compute_coordinates(self.unnormalize(x))

    # -- backward: apply_get_grad, the coordinate and d coordinate / d grid --

    def _clip_get_grad(self, x):
        """clip_coordinates_get_grad: borders count as out of bounds (bit compares: -0.0 is
        made +0.0 by maximum)."""
        h = self.ar.h
        lo = np.where(np.isnan(x) | (x > 0), x, h(0)).astype(self.dt)    # maximum(in, 0)
        res = np.where(np.isnan(lo) | (lo < self.max_val), lo, self.max_val).astype(self.dt)
        return res, (lo != 0) & (res != self.max_val)

    def apply_get_grad(self, x):
        h = self.ar.h
        x = self.unnormalize(x)
        scale = np.full(x.shape, self.scaling, self.dt)
        if self.padding == 0:
            return x, scale
        if self.padding == 1:
            res, inside = self._clip_get_grad(x)
            return res, np.where(inside, scale, h(0))
        if self.align and self.empty:
            return np.zeros_like(x), np.zeros_like(x)
        extra, reflected, neg = self._fold(x)
        flip = extra > reflected
        res = np.where(flip, reflected, extra)
        if not self.align:
            res = (res + self.low).astype(self.dt)
        grad = (np.where(flip ^ neg, h(-1), h(1)) * scale).astype(self.dt)
        res, inside = self._clip_get_grad(res)
        return res, np.where(inside, grad, h(0))


def _to_int(v):
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(v), np.trunc(v), -1).astype(np.int64)


def _gather(a, iy, ix, mask):
    """a (N, C, H, W); iy, ix, mask (N, *pos) -> (N, C, *pos), 0 where not mask."""
    n = np.arange(a.shape[0]).reshape((-1,) + (1,) * (iy.ndim - 1))
    vals = np.moveaxis(a, 1, -1)[n, np.where(mask, iy, 0), np.where(mask, ix, 0)]
    vals = np.where(mask[..., None], vals, a.dtype.type(0))
    return np.moveaxis(vals, -1, 1)


def _cubic_coefficients(ar, tx):
    """get_cubic_coefficients: the far taps' constant products (5A, 8A, 4A) are the fused ones,
    and exact, so only the near taps' two contractions change bits."""
    h = ar.h
    A = h(-0.75)

    def far(x):
        return (((A * x - h(5) * A) * x + h(8) * A) * x - h(4) * A).astype(ar.dt)

    def near(x):
        return ar.fma(ar.fma(A + h(2), x, -(A + h(3))) * x, x, h(1))
    return [far(tx + h(1)), near(tx), near(h(1) - tx), far(h(2) - tx)]


def _cubic_coefficients_grad(ar, tx):
    """get_cubic_coefficients_grad (its fused products are the exact constant ones)."""
    h = ar.h
    A = h(-0.75)
    x = h(-1) - tx
    c0 = (h(-3) * A * x - h(10) * A) * x - h(8) * A
    x = h(0) - tx
    c1 = (h(-3) * (A + h(2)) * x - h(2) * (A + h(3))) * x
    x = h(1) - tx
    c2 = (h(3) * (A + h(2)) * x - h(2) * (A + h(3))) * x
    x = h(2) - tx
    c3 = (h(3) * A * x - h(10) * A) * x + h(8) * A
    return [c.astype(ar.dt) for c in (c0, c1, c2, c3)]


class _Sampler:
    """ApplyGridSample<scalar_t, 2, interp, padding, align_corners> over whole arrays of grid
    positions (N, *pos)."""

    def __init__(self, a, interpolation_mode, padding_mode, align_corners):
        self.a = a
        self.ar = _Arith(a.dtype)
        _, _, self.H, self.W = a.shape
        self.cw = _Location(self.ar, self.W, padding_mode, align_corners)
        self.ch = _Location(self.ar, self.H, padding_mode, align_corners)
        self.mode = interpolation_mode
        self.in_bound = padding_mode != 0

    def _mask(self, iy, ix):
        if self.in_bound:
            return np.ones(ix.shape, dtype=bool)
        return (ix > -1) & (ix < self.W) & (iy > -1) & (iy < self.H)

    def bilinear_params(self, x, y):
        """compute_interp_params: distances (n, s, w, e), weights and the four corners as
        (iy, ix, mask) in nw, ne, sw, se order."""
        h, W, H = self.ar.h, self.W, self.H
        x_w, y_n = np.floor(x), np.floor(y)
        w = (x - x_w).astype(self.ar.dt)
        e = (h(1) - w).astype(self.ar.dt)
        n = (y - y_n).astype(self.ar.dt)
        s = (h(1) - n).astype(self.ar.dt)
        weights = (s * e, s * w, n * e, n * w)
        ixw, iyn = _to_int(x_w), _to_int(y_n)
        ixe, iys = ixw + 1, iyn + 1
        full = np.ones(ixw.shape, dtype=bool)
        wm = full if self.in_bound else (ixw > -1) & (ixw < W)
        nm = full if self.in_bound else (iyn > -1) & (iyn < H)
        em = (ixe < W) if self.in_bound else (ixe > -1) & (ixe < W)
        sm = (iys < H) if self.in_bound else (iys > -1) & (iys < H)
        corners = ((iyn, ixw, wm & nm), (iyn, ixe, em & nm), (iys, ixw, wm & sm), (iys, ixe, em & sm))
        return (n, s, w, e), weights, corners

    def nearest_index(self, gx, gy):
        ix, iy = _to_int(np.rint(self.cw.apply(gx))), _to_int(np.rint(self.ch.apply(gy)))
        return iy, ix, self._mask(iy, ix)

    def bicubic_params(self, gx, gy):
        """Unnormalised coordinates' floors and fractions, and the tap reader (i, j) ->
        (iy, ix, mask) of get_value_bounded / add_value_bounded."""
        h = self.ar.h
        x, y = self.cw.unnormalize(gx), self.ch.unnormalize(gy)
        ix, iy = np.floor(x), np.floor(y)

        def tap(i, j):  # column ix - 1 + i, row iy - 1 + j
            jx = _to_int(self.cw.compute_coordinates((ix + h(-1 + i)).astype(self.ar.dt)))
            jy = _to_int(self.ch.compute_coordinates((iy + h(-1 + j)).astype(self.ar.dt)))
            return jy, jx, self._mask(jy, jx)
        return (x - ix).astype(self.ar.dt), (y - iy).astype(self.ar.dt), tap

    def forward(self, gx, gy):
        a, ar = self.a, self.ar
        if self.mode == 0:  # bilinear
            _, weights, corners = self.bilinear_params(self.cw.apply(gx), self.ch.apply(gy))
            out = None
            for (iy, ix, m), wt in zip(corners, weights):
                v = _gather(a, iy, ix, m)
                out = v * wt[:, None] if out is None else ar.fma(v, wt[:, None], out)
            return out
        if self.mode == 1:  # nearest: round half to even
            return _gather(a, *self.nearest_index(gx, gy))
        tx, ty, tap = self.bicubic_params(gx, gy)
        cx, cy = _cubic_coefficients(ar, tx), _cubic_coefficients(ar, ty)
        # measured: the rows' sums are not contracted, the column sum is (torch still differs
        # in a few last bits on ~4% of float/double values: not found yet)
        out = None
        for j in range(4):       # interp_x[j]: the row iy - 1 + j
            row = None
            for i in range(4):
                term = cx[i][:, None] * _gather(a, *tap(i, j))
                row = term if row is None else (row + term).astype(ar.dt)
            out = cy[j][:, None] * row if out is None else ar.fma(cy[j][:, None], row, out)
        return out


def grid_sampler_2d(a, grid, interpolation_mode, padding_mode, align_corners):
    """a (N, C, H, W) and grid (N, oH, oW, 2) of one dtype -> (N, C, oH, oW) in that dtype."""
    with np.errstate(all="ignore"):
        s = _Sampler(a, interpolation_mode, padding_mode, align_corners)
        return s.forward(grid[..., 0], grid[..., 1]).astype(a.dtype)


def _geometry_is_contiguous(sizes, strides):
    """at::geometry_is_contiguous: size-1 dims' strides do not count; empty is contiguous."""
    expected = 1
    for size, stride in zip(reversed(sizes), reversed(strides)):
        if size == 0:
            return True
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _chunk_of_position(out_h, out_w, grid_strides, step):
    """The vector chunk each output position (h * out_w + w) falls in, as
    grid_sample_2d_grid_slice_iterator walks a grid slice: chunks of ``step`` over the flattened
    positions when the grid (or its [H, W] per coordinate) is contiguous, else per row."""
    s_h, s_w, s_coor = grid_strides
    pos = np.arange(out_h * out_w)
    flat = _geometry_is_contiguous((out_h, out_w, 2), (s_h, s_w, s_coor)) or (
        (s_w == 1 or out_w == 1) and _geometry_is_contiguous((out_h, out_w), (s_h, s_w)))
    if flat:
        return pos // step
    per_row = -(-out_w // step)
    return (pos // out_w) * per_row + (pos % out_w) // step


def _scatter_add(shape, taps, chunk):
    """grad_input (N, C, H, W) from the kernel's mask_scatter_adds, in its order: per chunk,
    each tap in turn, its lanes in position order. ``taps`` lists (iy, ix, mask, delta) with
    iy, ix, mask (N, P) and delta (N, C, P)."""
    N, C, H, W = shape
    K, P = len(taps), chunk.shape[0]
    order = np.lexsort((np.arange(P)[None].repeat(K, 0).ravel(),
                        np.arange(K).repeat(P), np.tile(chunk, K)))
    dummy = H * W          # masked lanes add into a slot that is dropped (adding 0 flips -0.0)
    idx = np.concatenate([np.where(m, iy * W + ix, dummy) for iy, ix, m, _ in taps], 1)[:, order]
    vals = np.concatenate([np.moveaxis(d, 1, -1) for *_, d in taps], 1)[:, order]
    out = np.zeros((N, H * W + 1, C), dtype=vals.dtype)
    np.add.at(out, (np.arange(N)[:, None], idx), vals)
    return np.ascontiguousarray(np.moveaxis(out[:, :dummy], -1, 1)).reshape(shape)


def grid_sampler_2d_backward(grad_out, a, grid, interpolation_mode, padding_mode, align_corners,
                             input_grad, grid_strides):
    """grid_sampler_2d_backward_cpu_kernel_impl: grad_out (N, C, oH, oW), a (N, C, H, W), grid
    (N, oH, oW, 2) of one dtype; ``grid_strides`` the grid's strides (it picks the chunks).
    Returns (grad_input or None, grad_grid)."""
    N, C, H, W = a.shape
    _, oh, ow, _ = grid.shape
    dt = a.dtype
    P = oh * ow
    step = LANE_BYTES // dt.itemsize
    with np.errstate(all="ignore"):
        s = _Sampler(a, interpolation_mode, padding_mode, align_corners)
        ar, h = s.ar, s.ar.h
        gx_in, gy_in = grid[..., 0].reshape(N, P), grid[..., 1].reshape(N, P)
        g_out = grad_out.reshape(N, C, P)
        taps = []
        if interpolation_mode == 1:  # nearest: the grid's gradient is zero
            iy, ix, m = s.nearest_index(gx_in, gy_in)
            taps.append((iy, ix, m, g_out))
            grad_grid = np.zeros((N, P, 2), dt)
        elif interpolation_mode == 0:  # bilinear
            x, gx_mult = s.cw.apply_get_grad(gx_in)
            y, gy_mult = s.ch.apply_get_grad(gy_in)
            (n, so, w, e), weights, corners = s.bilinear_params(x, y)
            for (iy, ix, m), wt in zip(corners, weights):
                taps.append((iy, ix, m, wt[:, None] * g_out))
            nw, ne, sw, se = (_gather(a, iy, ix, m) for iy, ix, m in corners)
            gx = np.zeros((N, P), dt)
            gy = np.zeros((N, P), dt)
            for c in range(C):  # gx += ((ne - nw) * s + (se - sw) * n) * gOut: two contractions
                gx = ar.fma(ar.fma(se[:, c] - sw[:, c], n, (ne[:, c] - nw[:, c]) * so), g_out[:, c], gx)
                gy = ar.fma(ar.fma(se[:, c] - ne[:, c], w, (sw[:, c] - nw[:, c]) * e), g_out[:, c], gy)
            grad_grid = np.stack([gx * gx_mult, gy * gy_mult], -1)
        else:  # bicubic: taps (column i, row j); d coefficient / d x from the grad polynomials
            tx, ty, tap = s.bicubic_params(gx_in, gy_in)
            cx, cy = _cubic_coefficients(ar, tx), _cubic_coefficients(ar, ty)
            cxg, cyg = _cubic_coefficients_grad(ar, tx), _cubic_coefficients_grad(ar, ty)
            gx = np.zeros((N, P), dt)
            gy = np.zeros((N, P), dt)
            reads = [(i, j, tap(i, j)) for i in range(4) for j in range(4)]
            for i, j, (iy, ix, m) in reads:
                taps.append((iy, ix, m, g_out * cx[i][:, None] * cy[j][:, None]))
            vals = [_gather(a, iy, ix, m) for _, _, (iy, ix, m) in reads]
            for c in range(C):
                go = g_out[:, c]
                for (i, j, _), v in zip(reads, vals):
                    gx = ar.fma(-(v[:, c] * go * cxg[i]), cy[j], gx)
                    gy = ar.fma(-(v[:, c] * go * cyg[j]), cx[i], gy)
            grad_grid = np.stack([gx * s.cw.scaling, gy * s.ch.scaling], -1)
        grad_grid = grad_grid.astype(dt).reshape(N, oh, ow, 2)
        if not input_grad:
            return None, grad_grid
        if C == 0 or P == 0:
            return np.zeros(a.shape, dt), grad_grid
        chunk = _chunk_of_position(oh, ow, grid_strides, step)
        return _scatter_add(a.shape, taps, chunk), grad_grid
