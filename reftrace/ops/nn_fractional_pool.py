"""Fractional max pooling (2d, 3d): pooling windows of a fixed size at pseudo-random strides.

Each (sample, channel) plane has its own random samples u in [0, 1), one per spatial dim
(``random_samples``: (N, C, dims), drawn by F.fractional_max_pool*d unless given). ATen's
generate_intervals places window i at ``int((i + u) * alpha) - int(u * alpha)`` with
``alpha = (in - pool) / (out - 1)`` (in the input's scalar type), the last window flush with
the end. The max over each window and its flat index in the plane are returned; every window
is one gather, no loop over positions.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, xp_of
from ._registry import derivatives, op
from .nn_conv import sizes
from .nn_pool import _argmax_as_aten


def _intervals(u, in_size, out_size, pool, ftype):
    """(planes, out) window starts for samples u (planes,)."""
    starts = np.empty(u.shape + (out_size,), dtype=np.int64)
    if out_size > 1:
        alpha = ftype(in_size - pool) / ftype(out_size - 1)
        i = np.arange(out_size - 1, dtype=ftype)
        starts[:, :-1] = ((i[None, :] + u[:, None].astype(ftype)) * alpha).astype(np.int64) \
            - (u[:, None].astype(ftype) * alpha).astype(np.int64)
    if out_size > 0:
        starts[:, -1] = in_size - pool
    return starts


def _fractional(name, x, kernel_size, output_size, random_samples):
    nd = len(kernel_size)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{sizes(x.shape_tuple)}")
    spatial = x.shape_tuple[-nd:]
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    where = name if nd == 2 else name + "_out"
    for k, o, s, dim in zip(kernel_size, output_size, spatial, names):
        if o + k - 1 > s:
            raise RuntimeError(f"{where}(): pool {dim} {k} too large relative to input {dim} {s}")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}_out_frame\" not implemented for '{x.dtype.ir_name}'")
    xp = xp_of(x)
    a = x._array
    batched = x.ndim == nd + 2
    planes = a.reshape((-1,) + spatial)                        # (P, *spatial)
    P = planes.shape[0]
    u = random_samples._array.reshape(P, nd)
    ftype = np.float64 if x.dtype is D.float64 else np.float32
    # ATen's sample order: 2d (W, H); 3d (T, H, W)
    dims_of_sample = [1, 0] if nd == 2 else [0, 1, 2]
    idx = []
    for d in range(nd):
        starts = _intervals(np.asarray(u[:, dims_of_sample.index(d)]), spatial[d], output_size[d],
                            kernel_size[d], ftype)
        pos = starts[:, :, None] + np.arange(kernel_size[d])[None, None, :]   # (P, out, k)
        shape = [P] + [1] * (2 * nd)
        shape[1 + d], shape[1 + nd + d] = output_size[d], kernel_size[d]
        idx.append(pos.reshape(shape))
    plane_idx = np.arange(P).reshape([P] + [1] * (2 * nd))
    win = planes[(plane_idx,) + tuple(idx)]                    # (P, *out, *kernel)
    flat = win.reshape(win.shape[:1 + nd] + (-1,))
    values = flat.max(-1)
    arg = _argmax_as_aten(xp, flat, values, xp.ones(flat.shape, dtype=bool))
    coords = np.unravel_index(arg, tuple(kernel_size))
    index = np.zeros(arg.shape, dtype=np.int64)
    for d in range(nd):
        full = np.broadcast_to(idx[d], win.shape).reshape(flat.shape)
        pick = np.take_along_axis(full, np.ravel_multi_index(coords, tuple(kernel_size))[..., None],
                                  -1)[..., 0]
        index = index * spatial[d] + pick
    lead = x.shape_tuple[:-nd] if batched else x.shape_tuple[:1]
    out_shape = tuple(lead) + tuple(output_size)
    return (_fresh(values.reshape(out_shape), x.dtype, x.device),
            _fresh(index.reshape(out_shape), D.int64, x.device))


@op("fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, "
    "Tensor random_samples) -> (Tensor, Tensor)", variants=())
def fractional_max_pool2d(self, kernel_size, output_size, random_samples):
    return _fractional("fractional_max_pool2d", self, kernel_size, output_size, random_samples)


derivatives(fractional_max_pool2d, {
    "self": "fractional_max_pool2d_backward(grad, self, kernel_size, output_size, result1)"},
    output_differentiability=[True, False])


@op("fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, "
    "Tensor random_samples) -> (Tensor, Tensor)", variants=())
def fractional_max_pool3d(self, kernel_size, output_size, random_samples):
    return _fractional("fractional_max_pool3d", self, kernel_size, output_size, random_samples)


derivatives(fractional_max_pool3d, {
    "self": "fractional_max_pool3d_backward(grad, self, kernel_size, output_size, result1)"},
    output_differentiability=[True, False])
