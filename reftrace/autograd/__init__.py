"""torch.autograd: reverse-mode gradients (the engine, grad_fn nodes, grad mode, gradcheck).

``backward`` and ``grad`` are torch/autograd/__init__.py's, over reftrace's engine
(``engine.py``); nodes are made per op call from derivatives.yaml formulas
(``_derivatives.py``, recorded by ``_variable_type.py``).
"""
import warnings
from collections.abc import Mapping

from .grad_mode import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode,
                        is_inference_mode_enabled)
from .variable import Variable
from . import graph
from .engine import run_backward
from ._variable_type import _is_tensor
from . import function
from .function import Function

__all__ = ["Function", "Variable", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "inference_mode", "is_inference_mode_enabled", "backward", "grad", "graph",
           "gradcheck", "gradgradcheck"]


def _tensor_or_tensors_to_tuple(tensors, length):
    if tensors is None:
        return (None,) * length
    if _is_tensor(tensors):
        return (tensors,)
    return tuple(tensors)


def _make_grads(outputs, grads, is_grads_batched=False):
    """torch/autograd/__init__.py _make_grads: the default gradient of a scalar output is 1; a
    given gradient must have its output's shape."""
    import reftrace
    new_grads = []
    for out, grad in zip(outputs, grads):
        if _is_tensor(grad):
            first = grad if not is_grads_batched else grad[0]
            if first.shape_tuple != out.shape_tuple:
                out_shape = out.shape
                grad_shape = grad.shape if not is_grads_batched else grad.shape[1:]
                if is_grads_batched:
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each "
                        "grad_output as the batch dimension. The sizes of the remaining dimensions "
                        "are expected to match the shape of corresponding output, but a mismatch "
                        f"was detected: grad_output[{_index(grads, grad)}] has a shape of "
                        f"{grad_shape} and output[{_index(outputs, out)}] has a shape of "
                        f"{out_shape}. If you only want some tensors in `grad_output` to be "
                        "considered batched, consider using vmap.")
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{_index(grads, grad)}] has a shape of "
                    f"{grad_shape} and output[{_index(outputs, out)}] has a shape of {out_shape}.")
            if out.dtype.is_complex != grad.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{_index(grads, grad)}] has a "
                    f"dtype of {grad.dtype} and output[{_index(outputs, out)}] has a dtype of "
                    f"{out.dtype}.")
            new_grads.append(grad)
        elif grad is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError("grad can be implicitly created only for real scalar "
                                       f"outputs but got {out.dtype}")
                new_grads.append(reftrace.ones_like(out, memory_format=reftrace.preserve_format))
            else:
                new_grads.append(None)
        else:
            raise TypeError("gradients can be either Tensors or None, but got "
                            + type(grad).__name__)
    return tuple(new_grads)


def _index(seq, item):
    # list.index compares with ==, which is elementwise on tensors: find by identity
    for i, v in enumerate(seq):
        if v is item:
            return i
    return 0


def _inputs_tuple(inputs, fn):
    if _is_tensor(inputs):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{fn}()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    return tuple(inputs)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (or ``inputs``)."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
    inputs_tuple = () if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and len(inputs_tuple) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = (tensors,) if _is_tensor(tensors) else tuple(tensors)
    grad_tensors_ = _tensor_or_tensors_to_tuple(grad_tensors, len(tensors))
    grad_tensors_ = _make_grads(tensors, grad_tensors_, is_grads_batched=False)
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(tensors, grad_tensors_, retain_graph, create_graph, inputs_tuple,
                 allow_unused=True, accumulate_grad=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated)."""
    import reftrace
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = (outputs,) if _is_tensor(outputs) else tuple(outputs)
    inputs_tuple = _inputs_tuple(inputs, "grad")
    if len(inputs_tuple) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). "
                      "To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    grad_outputs_ = _tensor_or_tensors_to_tuple(grad_outputs, len(outputs))
    grad_outputs_ = _make_grads(outputs, grad_outputs_, is_grads_batched=is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        # torch vmaps the vector-Jacobian product over the first dimension; one product per
        # batch entry, stacked, gives the same values
        n = next(g.shape_tuple[0] for g in grad_outputs_ if g is not None)
        per = [run_backward(outputs, [g[b] if g is not None else None for g in grad_outputs_],
                            True if b < n - 1 else retain_graph, create_graph, inputs_tuple,
                            allow_unused, accumulate_grad=False) for b in range(n)]
        result = tuple(None if per[0][k] is None else reftrace.stack([p[k] for p in per])
                       for k in range(len(inputs_tuple)))
    else:
        result = run_backward(outputs, grad_outputs_, retain_graph, create_graph, inputs_tuple,
                              allow_unused, accumulate_grad=False)
    if materialize_grads:
        result = tuple(r if r is not None else reftrace.zeros_like(inp, requires_grad=create_graph)
                       for r, inp in zip(result, inputs_tuple))
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), result))
    return result


# the functions shadow their module's name, as in torch.autograd
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
