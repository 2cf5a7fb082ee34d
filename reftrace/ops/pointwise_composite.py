"""Pointwise ops torch composes from others but records as themselves: square, nan_to_num,
addcmul, addcdiv (ATen/native/PointwiseOps.cpp, UnaryOps.cpp), with torch's promotion
(the common dtype of all tensor operands) and TensorIterator's output layout."""
import numpy as np

from .. import _dtype as D
from .._promotion import result_type
from ._iter import broadcast_shapes, like_result, pointwise_result
from ._pointwise_helpers import as_np
from ._registry import composite, derivatives, op
from .arithmetic import _pow_scalar, inplace, quiet

_FM = ("function", "method")


@op("square(Tensor self) -> Tensor", variants=_FM)
def square(self):
    return _pow_scalar(self, 2)  # at::pow(self, 2)


derivatives(square, {"self": "pow_backward(grad, self, 2)"})  # CompositeImplicit: pow's formula
square_ = op("square_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(square.kernel))


@composite(square_)
def _square__composite(self):
    return self.pow_(2)  # CompositeImplicit: self.pow_(2), so PowBackward0


@quiet
def _nan_to_num(self, nan, posinf, neginf):
    a = self._array
    # torch writes into empty_like(self) (nan_to_num_out): self's layout
    if self.dtype.category <= 1:  # integers and bools have no nan or inf: a copy
        return like_result(a.copy(), self.dtype, self.device, self)
    info = np.finfo(a.dtype)
    arr = np.nan_to_num(a, nan=0.0 if nan is None else nan,
                        posinf=info.max if posinf is None else posinf,
                        neginf=info.min if neginf is None else neginf)
    return like_result(arr.astype(a.dtype, copy=False), self.dtype, self.device, self)


nan_to_num = op("nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
                variants=_FM)(_nan_to_num)
derivatives(nan_to_num, {"self": "grad * isfinite(self)"})
nan_to_num_ = op("nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None) -> "
                 "Tensor(a!)", variants=_FM)(inplace(_nan_to_num))
derivatives(nan_to_num_, {"self": "grad * isfinite(self)"})  # (the functional's entry)


def _ternary(self, tensor1, tensor2, value, fn):
    shape = broadcast_shapes(self._array.shape, tensor1._array.shape, tensor2._array.shape)
    dt = result_type(self, tensor1, tensor2)
    if dt.category <= 1 and isinstance(value, float):
        raise RuntimeError("For integral input tensors, argument value must not be a floating point number.")
    work = D.float32 if dt is D.float16 else dt  # (half computes in float: torch's opmath type)
    arr = fn(as_np(self, work), as_np(tensor1, work), as_np(tensor2, work), value)
    arr = np.broadcast_to(np.asarray(arr, dtype=dt.np), shape)
    return pointwise_result(np.array(arr), dt, self.device, (self, tensor1, tensor2))


@quiet
def _addcmul(self, tensor1, tensor2, value):
    return _ternary(self, tensor1, tensor2, value, lambda s, a, b, v: s + v * a * b)


addcmul = op("addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
             variants=("method", "function"))(_addcmul)
derivatives(addcmul, {
    "self": "handle_r_to_c(self.dtype, grad)",
    "tensor1": "handle_r_to_c(tensor1.dtype, grad * (tensor2 * value).conj())",
    "tensor2": "handle_r_to_c(tensor2.dtype, grad * (tensor1 * value).conj())"})
addcmul_ = op("addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",
              variants=("method",))(inplace(_addcmul))
derivatives(addcmul_, addcmul.derivatives)  # (the functional's entry)


@quiet
def _addcdiv(self, tensor1, tensor2, value):
    if tensor1.dtype.category <= 1 and tensor2.dtype.category <= 1:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv "
            "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
            "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
            "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
            "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
            "for all dtypes.")
    return _ternary(self, tensor1, tensor2, value, lambda s, a, b, v: s + v * (a / b))


addcdiv = op("addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor",
             variants=("method", "function"))(_addcdiv)
derivatives(addcdiv, {
    "self": "handle_r_to_c(self.dtype, grad)",
    "tensor1": "handle_r_to_c(tensor1.dtype, grad * (value / tensor2).conj())",
    "tensor2": "handle_r_to_c(tensor2.dtype, -grad * (value * tensor1 / (tensor2 * tensor2)).conj())"})
addcdiv_ = op("addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)",
              variants=("method",))(inplace(_addcdiv))
derivatives(addcdiv_, addcdiv.derivatives)
