"""grid_sampler_2d's CPU kernel for Half (ATen/native/cpu/GridSamplerKernel.cpp:
ComputeLocation, ApplyGridSample for bilinear, nearest and bicubic).

Half runs the vectorized kernel with Vectorized<Half>, whose every operation converts to float,
computes and rounds back to half, so NumPy float16 arithmetic in the kernel's operation order
gives torch's bits. The kernel differs from GridSampler.h's scalar helpers: reflection uses
trunc of |x - low| / twice_span, clipping sends NaN to 0, and the coordinates become integers
by truncation (convert_to_int_of_same_size)."""
import numpy as np


class _Location:
    """ComputeLocationBase<scalar_t, align_corners> plus ComputeLocation's padding."""

    def __init__(self, dt, size, padding, align_corners):
        h = dt.type
        self.dt, self.padding, self.align = dt, padding, align_corners
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
        h = self.dt.type
        if self.align:
            return (x + h(1)) * self.scaling
        return (x + h(1)) * self.scaling - h(0.5)

    def clip(self, x):
        h = self.dt.type
        x = np.where(h(0) < x, x, h(0))                      # clamp_min(Vec(0), in): NaN -> 0
        return np.where(self.max_val > x, x, self.max_val).astype(self.dt)

    def reflect(self, x):
        h = self.dt.type
        if self.align:
            if self.empty:
                return np.zeros_like(x)
            a = np.abs(x)
        else:
            a = np.abs(x - self.low)
        flips = np.trunc(a / self.twice_span)
        extra = a - flips * self.twice_span
        r = np.minimum(extra, self.twice_span - extra)
        return r if self.align else (r + self.low).astype(self.dt)

    def compute_coordinates(self, x):
        if self.padding == 1:
            return self.clip(x)
        if self.padding == 2:
            return self.clip(self.reflect(x))
        return x

    def apply(self, x):
        return self.compute_coordinates(self.unnormalize(x))


def _to_int(v):
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(v), np.trunc(v), -1).astype(np.int64)


def _gather(a, iy, ix, mask):
    """a (N, C, H, W); iy, ix, mask (N, oH, oW) -> (N, C, oH, oW), 0 where not mask."""
    n = np.arange(a.shape[0]).reshape(-1, 1, 1)
    vals = np.moveaxis(a, 1, -1)[n, np.where(mask, iy, 0), np.where(mask, ix, 0)]
    vals = np.where(mask[..., None], vals, a.dtype.type(0))
    return np.moveaxis(vals, -1, 1)


def _cubic_coefficients(tx):
    h = tx.dtype.type
    A = h(-0.75)

    def far(x):
        return ((A * x - h(5) * A) * x + h(8) * A) * x - h(4) * A

    def near(x):
        return ((A + h(2)) * x - (A + h(3))) * x * x + h(1)
    return [far(tx + h(1)), near(tx), near(h(1) - tx), far(h(2) - tx)]


def grid_sampler_2d(a, grid, interpolation_mode, padding_mode, align_corners):
    """a (N, C, H, W) and grid (N, oH, oW, 2) of one dtype -> (N, C, oH, oW) in that dtype."""
    dt = a.dtype
    h = dt.type
    _, _, H, W = a.shape
    cw = _Location(dt, W, padding_mode, align_corners)
    ch = _Location(dt, H, padding_mode, align_corners)
    gx, gy = grid[..., 0], grid[..., 1]
    in_bound = padding_mode != 0
    with np.errstate(all="ignore"):
        if interpolation_mode == 0:  # bilinear
            x, y = cw.apply(gx), ch.apply(gy)
            x_w, y_n = np.floor(x), np.floor(y)
            w = x - x_w
            e = h(1) - w
            n = y - y_n
            s = h(1) - n
            weights = (s * e, s * w, n * e, n * w)
            ixw, iyn = _to_int(x_w), _to_int(y_n)
            ixe, iys = ixw + 1, iyn + 1
            wm = True if in_bound else (ixw > -1) & (ixw < W)
            nm = True if in_bound else (iyn > -1) & (iyn < H)
            em = (ixe < W) if in_bound else (ixe > -1) & (ixe < W)
            sm = (iys < H) if in_bound else (iys > -1) & (iys < H)
            full = np.ones(ixw.shape, dtype=bool)
            corners = ((iyn, ixw, full if in_bound else wm & nm), (iyn, ixe, em & nm & full),
                       (iys, ixw, wm & sm & full), (iys, ixe, em & sm & full))
            out = None
            for (iy, ix, m), wt in zip(corners, weights):
                term = _gather(a, iy, ix, m) * wt[:, None]
                out = term if out is None else out + term
            return out.astype(dt)
        if interpolation_mode == 1:  # nearest: round half to even
            ix, iy = _to_int(np.rint(cw.apply(gx))), _to_int(np.rint(ch.apply(gy)))
            m = np.ones(ix.shape, dtype=bool) if in_bound else \
                (ix > -1) & (ix < W) & (iy > -1) & (iy < H)
            return _gather(a, iy, ix, m)
        # bicubic: taps around the unnormalised coordinate, each tap's coordinate padded
        x, y = cw.unnormalize(gx), ch.unnormalize(gy)
        ix, iy = np.floor(x), np.floor(y)
        cx, cy = _cubic_coefficients(x - ix), _cubic_coefficients(y - iy)

        def value(xx, yy):
            jx = _to_int(cw.compute_coordinates(xx))
            jy = _to_int(ch.compute_coordinates(yy))
            m = np.ones(jx.shape, dtype=bool) if in_bound else \
                (jx > -1) & (jx < W) & (jy > -1) & (jy < H)
            return _gather(a, jy, jx, m)
        rows = []
        for i in range(4):
            yy = iy + h(-1 + i)
            r = None
            for j, off in enumerate((-1, 0, 1, 2)):
                term = cx[j][:, None] * value(ix + h(off), yy)
                r = term if r is None else r + term
            rows.append(r)
        out = None
        for i in range(4):
            term = cy[i][:, None] * rows[i]
            out = term if out is None else out + term
        return out.astype(dt)
