"""torch.hash_tensor (ATen/native/ReduceOps.cpp ``hash_tensor``; the CPU kernel is
cpu/ReduceOpsKernel.cpp ``xor_sum_kernel_impl``): the xor of the elements' bits over ``dim``.

Each element becomes a uint64 first (``XorSumOps::reduce``): floating types through their value as
a double, whose bit pattern is taken; integers by C++'s static_cast<uint64_t> (sign-extended, so
-1 is all ones); bools as 0 or 1. The result is always uint64 (torch's barebones unsigned type,
reftrace._dtype.uint64), contiguous in the reduced shape. Not differentiable
(derivatives.yaml: output_differentiability [False]).
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _wrap_dim
from ._out import resize_output
from ._registry import op
from .reduction import _axes, _result, not_implemented


def _zero_numel_check_dims(self, dim, name):
    """ReduceOpsUtils.h zero_numel_check_dims: an empty input needs dims, none of them empty."""
    if not dim:
        raise RuntimeError(f"{name}: Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    for d in dim:
        if self._array.shape[_wrap_dim(d, self._array.ndim)] == 0:
            raise IndexError(f"{name}: Expected reduction dim {d} to have non-zero size.")


def _bits(a, dtype):
    """The uint64 each element contributes (XorSumOps::reduce)."""
    if dtype.is_floating_point:
        return a.astype(np.float64).view(np.uint64)
    return a.astype(np.int64).view(np.uint64)


@op("hash_tensor(Tensor self, int[1] dim=[], *, bool keepdim=False, int mode=0) -> Tensor",
    variants=("function", "method"), differentiable=False)
def hash_tensor(self, dim, keepdim, mode):
    a = self._array
    if a.size == 0:
        _zero_numel_check_dims(self, dim, "hash_tensor")
    axes = _axes(self, dim)
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if a.size == 0:
        # (the kernel is not reached: the result is filled with zeros, whatever the dtype)
        shape = tuple(1 if i in axes else s for i, s in enumerate(a.shape) if keepdim or i not in axes)
        return _result(np.zeros(shape, np.uint64), D.uint64, self.device)
    if self.dtype.is_complex:
        raise not_implemented("xor_sum_cpu", self.dtype)
    out = np.bitwise_xor.reduce(_bits(a, self.dtype), axis=axes, keepdims=keepdim)
    return _result(out, D.uint64, self.device)


@op("hash_tensor.out(Tensor self, int[1] dim=[], *, bool keepdim=False, int mode=0, Tensor(a!) out) "
    "-> Tensor(a!)", differentiable=False)
def hash_tensor_out(self, dim, keepdim, mode, out):
    # written by hand: the meta function refuses an out tensor of any other dtype, first thing
    # (a generated out= would cast into it)
    if out.dtype is not D.uint64:
        raise RuntimeError(f"Expected result to be of dtype uint64, but got {out.dtype.ir_name}")
    resize_output(out, hash_tensor.kernel(self, dim, keepdim, mode))
    return out
