"""ATen's backward ops: the ops derivatives.yaml formulas call (threshold_backward,
select_backward, slice_backward, _unsafe_view, the softmax backwards ...).

They are ordinary ops of the table (torch's schemas, verbatim), so a backward pass run with
``create_graph=True`` records them and differentiates them again (double backward): each carries
its own derivatives.yaml entry, as every other op.
"""
import numpy as np

from .._tensor import _fresh, xp_of
from ._registry import derivatives, op
from .shape import slice_bounds


def _zeros(sizes, like):
    return _fresh(xp_of(like).zeros(tuple(sizes), dtype=like.dtype.np), like.dtype, like.device)


@op("threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor")
def threshold_backward(grad_output, self, threshold):
    xp = xp_of(grad_output)
    from .._promotion import result_type
    dt = result_type(grad_output, self)
    arr = xp.where(self._array <= threshold, xp.zeros((), dtype=dt.np),
                   grad_output._array.astype(dt.np, copy=False))
    return _fresh(xp.asarray(arr, dtype=dt.np), dt, grad_output.device)


derivatives(threshold_backward, {"grad_output": "threshold_backward(grad, self, threshold)",
                                 "self": "zeros_like(grad)"})


@op("select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor")
def select_backward(grad_output, input_sizes, dim, index):
    out = _zeros(input_sizes, grad_output)
    n = len(input_sizes)
    dim = dim + n if dim < 0 else dim
    out._array[(slice(None),) * dim + (index,)] = grad_output._array
    return out


derivatives(select_backward, {"grad_output": "grad.select(dim, index)"})


@op("slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
    "SymInt step) -> Tensor")
def slice_backward(grad_output, input_sizes, dim, start, end, step):
    out = _zeros(input_sizes, grad_output)
    n = len(input_sizes)
    dim = dim + n if dim < 0 else dim
    s, e = slice_bounds(input_sizes[dim], start, end)
    out._array[(slice(None),) * dim + (slice(s, e, step),)] = grad_output._array
    return out


derivatives(slice_backward, {"grad_output": "grad.slice(dim, start, end, step)"})


@op("_unsafe_view(Tensor self, SymInt[] size) -> Tensor")
def _unsafe_view(self, size):
    from .shape import view
    return view.kernel(self, size) if self.is_contiguous() else \
        _fresh(np.ascontiguousarray(self._array).reshape(_infer(size, self._array.size)),
               self.dtype, self.device)


def _infer(size, numel):
    size = list(size)
    if -1 in size:
        i = size.index(-1)
        rest = 1
        for j, s in enumerate(size):
            if j != i:
                rest *= s
        size[i] = numel // rest if rest else 0
    return tuple(size)


derivatives(_unsafe_view, {"self": "grad.reshape(self.shape)"})


@op("_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor")
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    g, y = grad_output._array, output._array
    arr = y * (g - (g * y).sum(axis=dim, keepdims=True))
    return _fresh(arr.astype(input_dtype.np, copy=False), input_dtype, grad_output.device)


derivatives(_softmax_backward_data, {
    "grad_output": "_softmax_backward_data(grad.to(output.dtype), output, dim, input_dtype)",
    "output": "softmax_double_backward(grad.to(output.dtype), grad_output, dim, output).to(output.dtype)"})


@op("_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor")
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    g, y = grad_output._array, output._array
    arr = g - xp_of(output).exp(y) * g.sum(axis=dim, keepdims=True)
    return _fresh(arr.astype(input_dtype.np, copy=False), input_dtype, grad_output.device)


derivatives(_log_softmax_backward_data, {
    "grad_output": "grad.to(output.dtype) - (grad.to(output.dtype) * output.exp()).sum(dim, True)",
    "output": "(-grad_output.sum(dim, True) * output.exp() * grad.to(output.dtype)).to(output.dtype)"})


