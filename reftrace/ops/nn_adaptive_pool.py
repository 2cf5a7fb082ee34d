"""Adaptive pooling in 1d/3d (average) and 1d/2d/3d (max, with indices).

Output cell i of a dim of size L pooled to O covers input positions floor(i*L/O) ..
ceil((i+1)*L/O) - 1 (ATen's start_index / end_index). Regions differ in size, so every cell
gathers the largest region's worth of positions and masks the ones past its end: one gather, no
loop over cells. Max reports ATen's index: the flat position in the input plane of the first
maximum (a NaN wins, the last one).
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, xp_of
from ._memory_format import like_input
from ._registry import composite, derivatives, op
from .nn_conv import sizes
from .nn_pool import _argmax_as_aten, adaptive_avg_pool2d


def _regions(L, O):
    i = np.arange(O)
    start = (i * L) // O
    end = -((-(i + 1) * L) // O)
    K = int((end - start).max()) if O else 0
    pos = start[:, None] + np.arange(K)[None, :]
    return np.minimum(pos, L - 1), pos < end[:, None]


def _gathered(xp, a, output_size):
    """(…, *out, prod(K)) values and validity mask, and the flat input index of each tap."""
    nd = len(output_size)
    spatial = a.shape[-nd:]
    flat_index = np.zeros((1,) * (2 * nd), dtype=np.int64)
    valid = np.ones((1,) * (2 * nd), dtype=bool)
    for i, (L, O) in enumerate(zip(spatial, output_size)):
        pos, ok = _regions(L, O)
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = pos.shape
        flat_index = flat_index * L + pos.reshape(shape)
        valid = valid & ok.reshape(shape)
    out_shape = tuple(output_size)
    flat_index = np.broadcast_to(flat_index, out_shape + valid.shape[nd:]).reshape(out_shape + (-1,))
    valid = np.broadcast_to(valid, out_shape + valid.shape[nd:]).reshape(out_shape + (-1,))
    plane = a.reshape(a.shape[:-nd] + (int(np.prod(spatial)),))
    values = plane[..., xp.asarray(flat_index)]
    return values, xp.asarray(valid), xp.asarray(flat_index)


def _adaptive_avg(x, output_size):
    xp = xp_of(x)
    values, valid, _ = _gathered(xp, x._array.astype(np.float64), [int(o) for o in output_size])
    res = (values * valid).sum(-1) / valid.sum(-1)
    return _fresh(res.astype(x.dtype.np), x.dtype, x.device)


def _check_1d(x, name):
    if x.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {name})")


@op("adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor")
def adaptive_avg_pool1d(self, output_size):
    _check_1d(self, "adaptive_avg_pool1d")
    if len(output_size) != 1:
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain one int "
                           f"(got {len(output_size)})")
    # ATen: adaptive_avg_pool2d on a height-1 view (its checks and messages)
    out = adaptive_avg_pool2d.kernel(self.unsqueeze(-2), [1, output_size[0]])
    return out.squeeze(-2)


@composite(adaptive_avg_pool1d)
def _adaptive_avg_pool1d_composite(self, output_size):
    # AdaptiveAveragePooling.cpp: with a gradient, the 2-d op on the unsqueezed input
    adaptive_avg_pool1d.kernel(self, output_size)  # its checks and messages
    return adaptive_avg_pool2d(self.unsqueeze(-2), [1, output_size[0]]).squeeze(-2)


@op("adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor", variants=())
def adaptive_avg_pool3d(self, output_size):
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    if self.ndim not in (4, 5) or any(v == 0 for v in self.shape_tuple[-3:]):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{sizes(self.shape_tuple)}")
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_avg_pool3d_cpu\" not implemented for "
                                  f"'{self.dtype.ir_name}'")
    return _adaptive_avg(self, output_size)


@op("_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor", variants=())
def _adaptive_avg_pool3d(self, output_size):
    return adaptive_avg_pool3d.kernel(self, output_size)


derivatives(_adaptive_avg_pool3d, {"self": "_adaptive_avg_pool3d_backward(grad, self)"})


@composite(adaptive_avg_pool3d)
def _adaptive_avg_pool3d_composite(self, output_size):
    # AdaptiveAveragePooling3d.cpp: output 1x1x1 is a mean (MeanBackward1), else _adaptive_avg_pool3d
    if list(output_size) == [1, 1, 1] and self.numel() > 0:
        return self.mean([-1, -2, -3], True)
    return _adaptive_avg_pool3d(self, output_size)


def _adaptive_max(x, name, nd, output_size):
    if len(output_size) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    expected = {2: "3D or 4D", 3: "4D or 5D"}[nd]
    if x.ndim not in (nd + 1, nd + 2) or any(v == 0 for v in x.shape_tuple[-nd:]):
        raise RuntimeError(f"{name}(): Expected {expected} tensor, but got: {sizes(x.shape_tuple)}")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{x.dtype.ir_name}'")
    xp = xp_of(x)
    values, valid, flat_index = _gathered(xp, x._array, [int(o) for o in output_size])
    masked = xp.where(valid, values, -np.inf)
    best = masked.max(-1)
    arg = _argmax_as_aten(xp, masked, best, valid)
    index = xp.take_along_axis(xp.broadcast_to(flat_index, masked.shape), arg[..., None], -1)[..., 0]
    return (like_input(_fresh(best.astype(x.dtype.np), x.dtype, x.device), x),
            like_input(_fresh(index, D.int64, x.device), x))


@op("adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)")
def adaptive_max_pool1d(self, output_size):
    _check_1d(self, "adaptive_max_pool1d")
    if len(output_size) != 1:
        raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain one int "
                           f"(got {len(output_size)})")
    values, index = adaptive_max_pool2d.kernel(self.unsqueeze(-2), [1, output_size[0]])
    return values.squeeze(-2), index.squeeze(-2)


@composite(adaptive_max_pool1d)
def _adaptive_max_pool1d_composite(self, output_size):
    # AdaptiveMaxPooling.cpp: with a gradient, the 2-d op on the unsqueezed input
    adaptive_max_pool1d.kernel(self, output_size)  # its checks and messages
    values, index = adaptive_max_pool2d(self.unsqueeze(-2), [1, output_size[0]])
    return values.squeeze(-2), index.squeeze(-2)


@op("adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)", variants=())
def adaptive_max_pool2d(self, output_size):
    return _adaptive_max(self, "adaptive_max_pool2d", 2, output_size)


derivatives(adaptive_max_pool2d, {"self": "adaptive_max_pool2d_backward(grad, self, result1)"},
            output_differentiability=[True, False])


@op("adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)", variants=())
def adaptive_max_pool3d(self, output_size):
    return _adaptive_max(self, "adaptive_max_pool3d", 3, output_size)


derivatives(adaptive_max_pool3d, {"self": "adaptive_max_pool3d_backward(grad, self, result1)"},
            output_differentiability=[True, False])
