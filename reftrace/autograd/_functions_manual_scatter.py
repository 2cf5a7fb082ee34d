"""FunctionsManual's backward functions of the reducing scatters and of renorm (torch 2.13's
torch/csrc/autograd/FunctionsManual.cpp): scatter_reduce_backward, index_reduce_backward,
as_strided_scatter_backward, renorm_backward.

Written with reftrace ops through the public API, as torch's are written with ATen ops, so that
under ``create_graph=True`` the computation is recorded and differentiated again.
"""
import reftrace as _rt
from .. import _dtype as D


def _double_backward_error(msg, grad_src1, src_num_zeros):
    """torch wraps the prod gradient in a DelayedError node when several zeros of src reach one
    position of self: the first backward is fine, differentiating it again raises."""
    if _rt.is_grad_enabled() and bool((src_num_zeros > 1).any().item()):
        from .function import DelayedError
        return DelayedError(msg, 1)(grad_src1)
    return grad_src1


def scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result):
    grad_self = grad_src = None
    if grad is None:
        return grad_self, grad_src
    if reduce == "sum":
        grad_self = grad
        grad_src = grad.gather(dim, index)
    elif reduce == "prod":
        # the exclusive product, computed explicitly for the elements of self/src that are 0
        masked_self = self.masked_fill(self == 0, 1)
        masked_self_result = masked_self.scatter_reduce(dim, index, src, reduce,
                                                        include_self=include_self)
        grad_self = grad * masked_self_result / masked_self
        src_zero = src == 0
        src_num_zeros = (_rt.zeros_like(self).scatter_add(dim, index, src_zero.to(self.dtype))
                         .gather(dim, index))
        src_single_zero = _rt.bitwise_and(src_zero, src_num_zeros == 1)
        # at a src position holding the only zero, grad * result.gather(dim, index) /
        # src.masked_fill(src_zero, 1) would wrongly give zero
        masked_src = src.masked_fill(src_single_zero, 1)
        masked_src_result = self.scatter_reduce(dim, index, masked_src, reduce,
                                                include_self=include_self)
        grad_src1 = _rt.where(src_single_zero,
                              (grad * masked_src_result).gather(dim, index),
                              (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1))
        grad_src = _double_backward_error(
            "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are "
            "scattered to the same position in self", grad_src1, src_num_zeros)
    elif reduce == "mean":
        N = _rt.ones_like(grad) if include_self else _rt.zeros_like(grad)
        N = N.scatter_add(dim, index, _rt.ones_like(src))
        N.masked_fill_(N == 0, 1)
        grad_self = grad / N
        N_src = N.gather(dim, index)
        grad_src = grad.gather(dim, index) / N_src
    elif reduce in ("amax", "amin"):
        # the gradient is distributed evenly between the maxima (minima)
        value = result.gather(dim, index)
        self_is_result = (self == result).to(self.dtype)
        src_is_result = (src == value).to(self.dtype)
        N_to_distribute = self_is_result.scatter_add(dim, index, src_is_result)
        grad_distributed = grad / N_to_distribute
        grad_self = (self == result) * grad_distributed
        grad_src = (src == value) * grad_distributed.gather(dim, index)
    else:
        raise RuntimeError("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")
    if not include_self:
        grad_self = grad_self.scatter(dim, index, 0)
    return grad_self, grad_src


def index_reduce_backward(grad, self, dim, index, source, reduce, include_self, result):
    grad_self = grad_src = None
    if grad is None:
        return grad_self, grad_src
    if reduce == "prod":
        masked_self = self.masked_fill(self == 0, 1)
        masked_self_result = masked_self.index_reduce(dim, index, source, reduce,
                                                      include_self=include_self)
        grad_self = grad * masked_self_result / masked_self
        src_zero = source == 0
        src_num_zeros = (_rt.zeros_like(self).index_add(dim, index, src_zero.to(self.dtype))
                         .index_select(dim, index))
        src_single_zero = _rt.bitwise_and(src_zero, src_num_zeros == 1)
        # as in scatter_reduce_backward: the only zero's gradient is computed explicitly
        masked_src = source.masked_fill(src_single_zero, 1)
        masked_src_result = self.index_reduce(dim, index, masked_src, reduce,
                                              include_self=include_self)
        grad_src1 = _rt.where(src_single_zero,
                              (grad * masked_src_result).index_select(dim, index),
                              (grad * result).index_select(dim, index)
                              / source.masked_fill(src_zero, 1))
        grad_src = _double_backward_error(
            "index_reduce(): Double backward is unsupported for source when >1 zeros in source "
            "are scattered to the same position in self", grad_src1, src_num_zeros)
    elif reduce == "mean":
        N = _rt.ones_like(grad) if include_self else _rt.zeros_like(grad)
        N = N.index_add(dim, index, _rt.ones_like(source))
        N.masked_fill_(N == 0, 1)
        grad_self = grad / N
        N_src = N.index_select(dim, index)
        grad_src = grad.index_select(dim, index) / N_src
    elif reduce in ("amax", "amin"):
        value = result.index_select(dim, index)
        self_is_result = (self == result).to(self.dtype)
        source_is_result = (source == value).to(self.dtype)
        N_to_distribute = self_is_result.index_add(dim, index, source_is_result)
        grad_distributed = grad / N_to_distribute
        grad_self = self_is_result * grad_distributed
        grad_src = source_is_result * grad_distributed.index_select(dim, index)
    else:
        raise RuntimeError("Expected 'reduce' to be one of 'prod', 'amax', 'amin' or 'mean' but "
                           f"got {reduce}.")
    if not include_self:
        grad_self = grad_self.index_fill(dim, index, 0)
    return grad_self, grad_src


def as_strided_scatter_backward(grad, input_geometry, src_geometry, sizes, strides,
                                storage_offset):
    """torch's (Note [as_strided_scatter backward support]): the input is taken as contiguous,
    grad is made contiguous, and the strided slice of grad is copied into a zero buffer of the
    input's geometry, which is what is returned (torch's formula, kept as it is)."""
    shape, stride, _ = input_geometry
    grad_ = grad.contiguous()
    grad_slice = grad_.as_strided(list(sizes), list(strides), storage_offset)
    result_buffer = grad_.new_zeros(list(shape))
    result = result_buffer.as_strided(list(shape), list(stride))
    result_slice = result_buffer.as_strided(list(sizes), list(strides), storage_offset)
    result_slice.copy_(grad_slice)
    return result


# at::toAccumulateType(dtype, kCPU): the dtype CPU kernels accumulate a reduction in
_CPU_ACC = {D.float16: D.float32, D.float32: D.float64,
            D.float64: D.float64, D.complex64: D.complex128, D.complex128: D.complex128}


def renorm_backward(grad, self, p, dim, maxnorm):
    from ._functions_manual import norm_backward
    n = self.dim()
    dim = dim + n if dim < 0 else dim
    reduce_dims = [d for d in range(n) if d != dim]
    acc_type = _CPU_ACC.get(self.dtype, self.dtype)
    norm = _rt.linalg.vector_norm(self, p, reduce_dims, True, dtype=acc_type)
    real_acc_type = acc_type.to_real() if acc_type.is_complex else acc_type
    grad_output = self.conj() * grad
    # vector_norm's output is real, so grad_output must be real too
    if real_acc_type != acc_type:
        grad_output = _rt.real(grad_output)
    grad_output = grad_output.sum(reduce_dims, True, dtype=real_acc_type)
    nb = norm_backward(grad_output, self, p, norm, reduce_dims, True)
    invnorm = (norm + 1e-7).reciprocal()
    grad_norm = maxnorm * invnorm * (grad - invnorm * nb)
    return _rt.where(norm > maxnorm, grad_norm.to(grad.dtype), grad)
