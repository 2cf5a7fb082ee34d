"""Spatial sampling: affine_grid_generator (F.affine_grid), grid_sampler (F.grid_sample, 2d and
3d: bilinear, nearest, bicubic; zeros, border and reflection padding), and exponential_ (the
Gumbel noise of F.gumbel_softmax).

grid_sampler: grid coordinates in [-1, 1] are unnormalised to pixel coordinates (align_corners:
-1 and 1 are the centres of the corner pixels, else their outer edges), padded (clipped to the
border, or reflected), then sampled; every output position is one gather per tap, never a loop
over positions. The kernels, forward and backward, are ATen's operation for operation in the
input's dtype: 2d in grid_sampler_vec.py (cpu/GridSamplerKernel.cpp), 3d in
grid_sampler_scalar.py (GridSampler.cpp). Their double backward is in
autograd/_functions_manual_grid.py.
"""
import numpy as np

from .._tensor import _fresh, xp_of
from ._registry import composite, derivatives, op
from .grid_sampler_scalar import grid_sampler_3d as _scalar_3d
from .grid_sampler_scalar import grid_sampler_3d_backward as _scalar_3d_backward
from .grid_sampler_vec import grid_sampler_2d as _vec_2d
from .grid_sampler_vec import grid_sampler_2d_backward as _vec_2d_backward
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


derivatives(exponential_, {"self": "zeros_like(grad)"})


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


def _check_grid_sampler(input, grid, interpolation_mode, dims=None, backward=False):
    """GridSampler.h's checks (check_grid_sampler_common, then _2d / _3d when ``dims`` says
    which kernel was called directly; ``backward`` names the backward kernel's dispatch)."""
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
        kernel = (("grid_sampler_2d_backward_cpu_kernel_impl", "grid_sampler_3d_backward_cpu")
                  if backward else ("grid_sampler_2d_cpu_kernel_impl", "grid_sampler3d_cpu"))[k - 2]
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype.ir_name}'")


def _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners):
    # 3d: GridSampler.cpp's scalar loop; 2d: the vectorized kernel (cpu/GridSamplerKernel.cpp)
    kernel = _scalar_3d if input.ndim == 5 else _vec_2d
    res = kernel(np.asarray(input._array), np.asarray(grid._array), interpolation_mode,
                 padding_mode, align_corners)
    return _fresh(np.ascontiguousarray(res), input.dtype, input.device)


@op("grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor")
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    _check_grid_sampler(input, grid, interpolation_mode)
    return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)


@composite(grid_sampler)
def _(input, grid, interpolation_mode, padding_mode, align_corners):
    # ATen's grid_sampler calls grid_sampler_2d / _3d (cudnn only on CUDA): their nodes record
    if input.dim() == 4:
        return grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)
    return grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners)


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


def _grid_sampler_backward(dims, grad_output, input, grid, interpolation_mode, padding_mode,
                           align_corners, output_mask):
    _check_grid_sampler(input, grid, interpolation_mode, dims=dims, backward=True)
    arrays = [np.asarray(t._array) for t in (grad_output, input, grid)]
    if dims == 2:  # the grid's strides pick the kernel's vector chunks (grad_input's order)
        grad_input, grad_grid = _vec_2d_backward(*arrays, interpolation_mode, padding_mode,
                                                 align_corners, output_mask[0], grid.stride()[1:])
    else:
        grad_input, grad_grid = _scalar_3d_backward(*arrays, interpolation_mode, padding_mode,
                                                    align_corners, output_mask[0])
    wrap = lambda a: None if a is None else _fresh(np.ascontiguousarray(a), input.dtype, input.device)  # noqa: E731
    return wrap(grad_input), wrap(grad_grid)


@op("grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, "
    "int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)")
def grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
                             align_corners, output_mask):
    return _grid_sampler_backward(2, grad_output, input, grid, interpolation_mode, padding_mode,
                                  align_corners, output_mask)


derivatives(grid_sampler_2d_backward, {
    "grad_output, input, grid": "grid_sampler_2d_double_backward(grads[0], grads[1], grad_output, "
                                "input, grid, interpolation_mode, padding_mode, align_corners, "
                                "grad_input_mask)"})


@op("grid_sampler_3d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, "
    "int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)")
def grid_sampler_3d_backward(grad_output, input, grid, interpolation_mode, padding_mode,
                             align_corners, output_mask):
    return _grid_sampler_backward(3, grad_output, input, grid, interpolation_mode, padding_mode,
                                  align_corners, output_mask)


derivatives(grid_sampler_3d_backward, {
    "grad_output, input, grid": "grid_sampler_3d_double_backward(grads[0], grads[1], grad_output, "
                                "input, grid, interpolation_mode, padding_mode, align_corners, "
                                "grad_input_mask)"})
