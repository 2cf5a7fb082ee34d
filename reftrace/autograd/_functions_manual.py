"""The helpers derivatives.yaml formulas call (torch/csrc/autograd/FunctionsManual.cpp).

Same names and argument order as torch's C++ (``sum_backward(grad, sizes, dims, keepdim)``), so a
formula reads as the yaml's. Each is written with reftrace ops through the public API (the funnel):
under ``create_graph=True`` what they compute is recorded, so double backward works through them.
C++ conventions: an undefined tensor is None, ``self.sym_sizes()`` is ``self.shape``,
``self.scalar_type()`` is ``self.dtype``; where torch overloads a helper on a Tensor or a
ScalarType, both are accepted.
"""
import math

import numpy as _np

import reftrace as _rt
from .. import _dtype as D


def _dtype_of(x):
    return x if isinstance(x, D.dtype) else x.dtype


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    return dim + n if dim < 0 else dim


def _dims(dim, ndim):
    """An OptionalIntArrayRef dim list: None or [] mean every dimension."""
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    if len(dim) == 0:
        return list(range(ndim))
    return sorted(_wrap_dim(d, ndim) for d in dim)


# -- dtype and scalar helpers -------------------------------------------------------------------

def handle_r_to_c(self_st, gradient_result):
    """A real input's gradient is the real part of a complex gradient."""
    if gradient_result is None:
        return None
    if not _dtype_of(self_st).is_complex and gradient_result.is_complex():
        return _rt.real(gradient_result)
    return gradient_result


def maybe_multiply(t, s):
    """t * s, skipping the multiplication when s is 1 (as torch does, so no node is recorded)."""
    if isinstance(s, bool) or not (type(s) in (int, float) and s == 1):
        return t * s
    return t


def wrap_opt_if(t, cond):
    """torchgen's wrap_opt_if: the saved tensor when ``cond`` holds (an input whose gradient
    needs it is wanted), else nullopt (None); torch saves it only then (see _derivatives)."""
    return t if cond else None


def scale_grad_by_count(grad, mask, dims):
    return (grad / mask.sum(dims, True)) * mask


# -- arithmetic ---------------------------------------------------------------------------------------

def mul_tensor_backward(grad, other, self_st):
    if isinstance(other, _rt.Tensor):
        out = grad * other.conj()
    else:  # torch's Scalar instance of the template: `grad * other.conj()` is mul.Scalar in C++
        from ..ops import OVERLOADS
        out = OVERLOADS["aten::mul.Scalar"](grad, _conj(other))
    return handle_r_to_c(self_st, out)


def _conj(x):
    return x.conj() if isinstance(x, _rt.Tensor) else x.conjugate()


def div_tensor_self_backward(grad, other, self_st, rounding_mode=None):
    if rounding_mode is not None:
        return _rt.zeros_like(grad, dtype=_dtype_of(self_st))
    result = grad / _conj(other)
    return handle_r_to_c(self_st, result)


def div_tensor_other_backward(grad, self, other, rounding_mode=None):
    if rounding_mode is not None:
        return _rt.zeros_like(grad, dtype=other.dtype)
    result = -grad * ((self / other) / other).conj()
    return handle_r_to_c(other, result)


def pow_backward(grad, self, exponent):
    if exponent == 0:
        return _rt.zeros_like(self)
    exp = complex(exponent) if isinstance(exponent, complex) else float(exponent)
    out = grad * (exp * self.pow(exp - 1)).conj()
    return handle_r_to_c(self, out)


def pow_backward_self(grad, self, exponent):
    out = _rt.where(exponent == 0.0, _rt.zeros((), dtype=grad.dtype),
                    grad * (exponent * self.pow(exponent - 1)).conj())
    return handle_r_to_c(self, out)


def pow_backward_exponent(grad, self, exponent, result):
    """d(self ** exponent)/d exponent = result * log(self), 0 where self == 0 and exponent >= 0
    (``self`` a tensor, or a Python number for pow.Scalar)."""
    if isinstance(self, _rt.Tensor) or hasattr(self, "dtype"):
        cond = (self == 0).logical_and(_nonnegative_real(exponent))
        promoted = _rt.result_type(self, exponent)
        self_ = self.to(promoted)
        out = grad * _rt.where(cond, _rt.zeros((), dtype=grad.dtype), (result * self_.log()).conj())
        return handle_r_to_c(exponent, out)
    log_base = _scalar_log(self)
    if self == 0:
        out = grad * _rt.where(_nonnegative_real(exponent), _rt.zeros((), dtype=grad.dtype),
                               (result * log_base).conj())
    else:
        out = grad * (result * log_base).conj()
    return handle_r_to_c(exponent, out)


def _nonnegative_real(exponent):
    """exponent >= 0; a complex exponent: imag == 0 and real >= 0 (complex has no order)."""
    if exponent.is_complex():
        return (_rt.imag(exponent) == 0).logical_and(_rt.real(exponent) >= 0)
    return exponent >= 0


def _scalar_log(x):
    import cmath
    if isinstance(x, complex) or x < 0:
        return cmath.log(x)
    return math.log(x) if x > 0 else float("-inf")


def log1p_backward(grad, self):
    return grad / (self + 1).conj()


def clamp_backward(grad, self, min, max):
    if max is not None and min is not None:
        return _rt.where((self >= min).logical_and(self <= max), grad, _zero(grad))
    if min is not None:
        return _rt.where(self >= min, grad, _zero(grad))
    if max is not None:
        return _rt.where(self <= max, grad, _zero(grad))
    return grad


def clamp_backward_min_max(grad, self, min, max, grad_input_mask):
    ret = [None, None]
    if max is not None and min is not None:
        if grad_input_mask[0]:
            ret[0] = _rt.where(min > max, _zero(grad), _rt.where(self < min, grad, _zero(grad)))
        if grad_input_mask[1]:
            ret[1] = _rt.where(min > max, grad, _rt.where(self > max, grad, _zero(grad)))
    elif min is not None and grad_input_mask[0]:
        ret[0] = _rt.where(self < min, grad, _zero(grad))
    elif max is not None and grad_input_mask[1]:
        ret[1] = _rt.where(self > max, grad, _zero(grad))
    return tuple(ret)


def _zero(grad):
    return _rt.zeros((), dtype=grad.dtype, device=grad.device)


def sgn_backward(x, gx, sgn):
    if not x.is_complex():   # torch: at::_efficientzerotensor, a zero gradient with no graph
        return _rt.zeros(list(sgn.shape), dtype=sgn.dtype, device=sgn.device)
    abs_ = x.abs()
    return ((gx - (sgn * sgn) * gx.conj()) / (2. * abs_)).masked_fill_(abs_ == 0., 0.)


def angle_backward(grad, self):
    if self.is_complex():
        return _rt.where(self == 0.0, _rt.zeros((), dtype=self.dtype, device=self.device),
                         grad * self / self.abs().pow(2) * 1j)
    return _rt.zeros_like(self, memory_format=_rt.preserve_format)


def polar_backward(grad, result):
    """(grad_abs, grad_angle) of polar(abs, angle) = result."""
    if grad is None:
        return None, None
    grad_conj = grad.conj()
    grad_abs = _rt.real(grad_conj * _rt.sgn(result))
    result_mul_1_j = result * 1j
    grad_angle = _rt.real(grad_conj * result_mul_1_j)
    return grad_abs, grad_angle


def abs_backward(grad, self):
    return grad * self.sgn()


def reciprocal_backward(grad, result):
    return -grad * (result * result).conj()


# -- reductions -------------------------------------------------------------------------------------

def unsqueeze_multiple(t, dim, n_dims):
    dims = _dims(dim, n_dims)
    for d in dims:
        t = t.unsqueeze(d)
    return t


def sum_backward(grad, sizes, dims, keepdim):
    sizes = list(sizes)
    if not keepdim and len(sizes) > 0:
        if dims is not None and not isinstance(dims, int) and len(dims) == 1:
            return grad.unsqueeze(dims[0]).expand(sizes)
        if isinstance(dims, int):
            return grad.unsqueeze(dims).expand(sizes)
        return unsqueeze_multiple(grad, dims, len(sizes)).expand(sizes)
    return grad.expand(sizes)


def _safe_size(sizes, dims):
    n = 1
    for d in _dims(dims, len(sizes)):
        n *= sizes[d] if len(sizes) else 1
    return n


def mean_backward(grad, shape, opt_dim, numel, keepdim):
    is_all_reduce = opt_dim is None or len(opt_dim) == 0
    n = numel if is_all_reduce else _safe_size(shape, opt_dim)
    return sum_backward(grad, shape, opt_dim, keepdim) / n


def restore_reduced_dims(output, dims, keepdim):
    if keepdim:
        return output
    total_dims = output.dim() + len(dims)
    target = list(output.shape_tuple)
    for d in sorted(_wrap_dim(d, total_dims) for d in dims):
        target.insert(d, 1)
    return output.reshape(target)


def unsqueeze_to(grad, dim_or_sizes, sizes=None):
    """unsqueeze_to(grad, sizes): the size-1 dims of ``sizes`` put back (squeeze's backward);
    unsqueeze_to(grad, dim, sizes): only those among ``dim``."""
    if sizes is None:
        sizes, dims = list(dim_or_sizes), None
    else:
        sizes = list(sizes)
        dims = [dim_or_sizes] if isinstance(dim_or_sizes, int) else list(dim_or_sizes)
    nd = len(sizes)
    wanted = set(range(nd)) if dims is None else {_wrap_dim(d, nd) for d in dims}
    for d in range(nd):
        if d in wanted and sizes[d] == 1:
            grad = grad.unsqueeze(d)
    return grad


def sum_to(grad, shape):
    """at::sum_to: sum ``grad`` down to ``shape`` (the inverse of broadcasting)."""
    shape = tuple(shape)
    gshape = grad.shape_tuple
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    dims = list(range(lead))
    for i, s in enumerate(shape):
        if s == 1 and gshape[lead + i] != 1:
            dims.append(lead + i)
    if dims:
        grad = grad.sum(dims, True)
    if lead:
        grad = grad.view(list(shape)) if grad.is_contiguous() else grad.reshape(list(shape))
    return grad


def evenly_distribute_backward(grad, input, value):
    mask = (input == value).logical_or(input.isnan().logical_and(value.isnan())) \
        if input.is_floating_point() else (input == value)
    count = mask.sum()
    return mask * (grad / count)


def evenly_read_jvp(fw_grad, input, value):  # pragma: no cover - forward mode is not modelled
    raise NotImplementedError


def value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim):
    sizes = list(sizes)
    if not keepdim:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return _rt.zeros(sizes, dtype=grad.dtype, device=grad.device).scatter(dim, indices, grad)


def prod_backward(grad, input, result, dim=None, keepdim=False):
    if dim is None:
        # prod of everything
        if input.dim() == 0:
            return grad
        zero = input == 0
        n_zero = int(zero.sum()._to_number())
        if n_zero == 0:
            return grad * (result / input).conj()
        if n_zero > 1:
            return _rt.zeros_like(input)
        return _prod_safe_zeros_backward(grad, input.contiguous().view(-1), 0).view_as(input)
    if input.dim() == 0:
        return grad
    dim = _wrap_dim(dim, input.dim())
    if not keepdim:
        grad = grad.unsqueeze(dim)
        result = result.unsqueeze(dim)
    zero = input == 0
    if int(zero.sum()._to_number()) == 0:
        return grad * (result / input).conj()
    return _prod_safe_zeros_backward(grad, input, dim)


def _prod_safe_zeros_backward(grad, inp, dim):
    if inp.shape_tuple[dim] == 1:
        return grad
    ones_size = list(inp.shape_tuple)
    ones_size[dim] = 1
    ones = _rt.ones(ones_size, dtype=grad.dtype)
    exclusive_normal_nocp = _rt.cat([ones, inp.narrow(dim, 0, inp.shape_tuple[dim] - 1)], dim)
    exclusive_normal = exclusive_normal_nocp.cumprod(dim)
    narrow_reverse = inp.narrow(dim, 1, inp.shape_tuple[dim] - 1).flip([dim])
    exclusive_reverse_nocp = _rt.cat([ones, narrow_reverse], dim)
    exclusive_reverse = exclusive_reverse_nocp.cumprod(dim).flip([dim])
    return grad * (exclusive_normal * exclusive_reverse).conj()


def logsumexp_backward(grad, self, result, dim, keepdim):
    if not keepdim and self.dim() != 0:
        grad = unsqueeze_multiple(grad, dim, self.dim())
        result = unsqueeze_multiple(result, dim, self.dim())
    return grad * (self - result).exp().conj()


def norm_backward(grad, self, p_, norm, dim=None, keepdim=False):
    p = 2.0 if p_ is None else float(p_)
    ndim = self.dim()
    if not keepdim and ndim != 0 and dim is not None and len(list(dim)) != 0:
        grad = unsqueeze_multiple(grad, dim, ndim)
        norm = unsqueeze_multiple(norm, dim, ndim)
    elif not keepdim and ndim != 0 and (dim is None or len(list(dim)) == 0):
        pass  # a full reduction: 0-dim grad broadcasts
    if p == 0.0:
        return _rt.zeros_like(self)
    if p == 1.0:
        return self.sgn() * grad
    if p == 2.0:
        return grad * (self / norm).masked_fill_(norm == 0, 0)
    if math.isinf(p):
        mask = (self.abs() == norm)
        self_scaled = self.sgn() * mask
        scale_v = grad / mask.sum(dim if dim is not None else [], True) if dim is not None \
            else grad / mask.sum()
        return self_scaled * scale_v
    if p < 1.0:
        self_scaled = self.sgn() * self.abs().pow(p - 1).masked_fill_(self == 0, 0)
        return self_scaled * grad * norm.pow(1 - p)
    if p < 2.0:
        self_scaled = self.sgn() * self.abs().pow(p - 1)
        scale_v = grad / norm.pow(p - 1)
        scale_v.masked_fill_(norm == 0, 0)
        return self_scaled * scale_v
    self_scaled = self * self.abs().pow(p - 2)
    scale_v = grad / norm.pow(p - 1)
    scale_v.masked_fill_(norm == 0, 0)
    return self_scaled * scale_v


def linalg_vector_norm_backward(grad, self, ord, result, dim, keepdim):
    dim = None if dim is None else list(dim)
    return norm_backward(grad, self, ord, result, dim, keepdim)


def cumsum_backward(grad, dim):
    if grad.dim() == 0 or grad.shape_tuple[_wrap_dim(dim, grad.dim())] == 0:
        return grad
    return grad.flip([dim]).cumsum(dim).flip([dim])


def cumprod_backward(grad, input, dim, output):
    if input.numel() <= 1:
        return grad
    dim = _wrap_dim(dim, input.dim())
    if int((input == 0).sum()._to_number()) == 0:
        return cumsum_backward((grad * output.conj()), dim) / input.conj()
    # torch's zero-aware path: per position k, d out_j / d in_k for j >= k
    n = input.shape_tuple[dim]
    pieces = []
    for k in range(n):
        before = input.narrow(dim, 0, k).prod(dim, True) if k else _rt.ones_like(input.narrow(dim, 0, 1))
        after_in = input.narrow(dim, k + 1, n - k - 1)
        after_cp = _rt.cat([_rt.ones_like(input.narrow(dim, 0, 1)), after_in.cumprod(dim)], dim) \
            if n - k - 1 > 0 else _rt.ones_like(input.narrow(dim, 0, 1))
        g = grad.narrow(dim, k, n - k)
        pieces.append((g * (before * after_cp).conj()).sum(dim, True))
    return _rt.cat(pieces, dim)


def cummaxmin_backward(grad, input, indices, dim):
    if input.numel() == 0:
        return input
    return _scatter_add(_rt.zeros_like(input), dim, indices, grad)


def _scatter_add(self, dim, index, src):
    """self.scatter_add(dim, index, src) as an accumulating index_put (differentiable)."""
    nd = index.dim()
    if nd == 0:
        return self + src
    dim = _wrap_dim(dim, nd)
    where = []
    for d in range(nd):
        if d == dim:
            where.append(index)
        else:
            shape = [1] * nd
            shape[d] = index.shape_tuple[d]
            where.append(_rt.arange(index.shape_tuple[d]).view(shape).expand(list(index.shape_tuple)))
    return self.index_put(tuple(where), src, True)


def _sum_over(t, dims):
    return t.sum(dims) if dims else t


# -- shape ------------------------------------------------------------------------------------------

def permute_backwards(grad, fwd_dims):
    ndims = len(fwd_dims)
    dims = [0] * ndims
    for i in range(ndims):
        dims[_wrap_dim(fwd_dims[i], ndims)] = i
    return grad.permute(dims)


def unbind_backward(grads, dim):
    like = next(g for g in grads if g is not None) if any(g is not None for g in grads) else None
    return _rt.stack([g if g is not None else _rt.zeros_like(like) for g in grads], dim)


def split_with_sizes_backward(grads, split_sizes, dim, sizes, options):
    dim = _wrap_dim(dim, len(sizes))
    all_defined = []
    for j, g in enumerate(grads):
        if g is not None:
            all_defined.append(g)
        else:
            length = split_sizes[j]
            shape = list(sizes)
            shape[dim] = length
            all_defined.append(_rt.zeros(shape, dtype=options.dtype, device=options.device))
    return _rt.cat(all_defined, dim)


def split_backward(grads, split_size, dim, sizes, options):
    dim = _wrap_dim(dim, len(sizes))
    dim_size = sizes[dim]
    num_splits = max((dim_size + split_size - 1) // split_size, 1)
    split_sizes = [split_size] * num_splits
    split_sizes[-1] = split_size - (split_size * num_splits - dim_size)
    return split_with_sizes_backward(grads, split_sizes, dim, sizes, options)


def chunk_backward_nested(*args):  # pragma: no cover - nested tensors are not modelled
    raise NotImplementedError


def repeat_backward(grad, repeats, input_shape):
    input_dims = len(input_shape)
    num_unsqueezed = grad.dim() - input_dims
    for _ in range(num_unsqueezed):
        grad = grad.sum(0, False)
    sizes = []
    for i in range(input_dims):
        sizes += [repeats[num_unsqueezed + i], input_shape[i]]
    grad = grad.reshape(sizes)
    return grad.sum(list(range(0, 2 * input_dims, 2)), False) if input_dims else grad


def cat_tensors_backward(grad, sizes, dtypes, dim):
    """cat's gradient, split back into one piece per input (0-element inputs of rank 1 get none)."""
    if grad is None:
        return [None] * len(sizes)
    grad_inputs = [None] * len(sizes)
    dim = _legacy_cat_wrap_dim(dim, sizes)
    accumulate = 0
    grad_is_complex = grad.is_complex()
    for i, shape in enumerate(sizes):
        if len(shape) == 1 and shape[0] == 0:
            grad_inputs[i] = _rt.zeros([0], dtype=grad.dtype, device=grad.device)
            continue
        size = shape[dim]
        accumulate += size
        g = grad.narrow(dim, accumulate - size, size)
        if grad_is_complex and not dtypes[i].is_complex:
            g = _rt.real(g)
        grad_inputs[i] = g
    return grad_inputs


def _legacy_cat_wrap_dim(dim, sizes):
    for s in sizes:
        if not (len(s) == 1 and s[0] == 0):
            return _wrap_dim(dim, len(s))
    return dim


def stack_tensors_backward(grad, dim, dtypes):
    # one select per input, as torch (an unbind's outputs would be multi-output views: their
    # graph under create_graph is SelectBackward0s, and they may be accumulated into in place)
    grad_inputs = [grad.select(dim, i) for i in range(len(dtypes))]
    if grad.is_complex():
        grad_inputs = [_rt.real(g) if not dt.is_complex else g for g, dt in zip(grad_inputs, dtypes)]
    return grad_inputs


def to_type_tensors(x):
    return x


def index_backward(zeros_like_self, indices, grad):
    return _rt.index_put(zeros_like_self, indices, grad, True)


def select_backward_symint(grad, input_sizes, dim, index):
    return _rt.ops.get_packet("select_backward")(grad, list(input_sizes), dim, index)


def _maybe_overlapping_memory(sizes, strides):
    """True unless the strides, taken from the smallest, each step past everything the smaller
    ones reach (torch's NOTE [ Detecting Memory Overlap Within A Strided Tensor ])."""
    max_index_in_slice = 0
    for i in sorted(range(len(sizes)), key=lambda i: strides[i]):   # std::sort by stride
        if strides[i] <= max_index_in_slice:
            return True
        max_index_in_slice += strides[i] * (sizes[i] - 1)
    return False


def _min_storage_size(sizes, strides, storage_offset):
    storage_size = storage_offset + 1
    for size_i, stride_i in zip(sizes, strides):
        if size_i == 0:
            return storage_offset
        storage_size += (size_i - 1) * stride_i
    return storage_size


def as_strided_backward(grad, input_geometry, sizes, strides, storage_offset):
    """as_strided's gradient: scatter the gradient into a zero storage through the output's
    geometry (index_add_ where output elements share memory, e.g. stft's overlapping frames),
    divide by how often the input's geometry sees each element when it overlaps itself, and read
    the input's geometry back."""
    inp_sizes, inp_strides, inp_offset = input_geometry
    if storage_offset is None:
        storage_offset = inp_offset
    # output geometry: size-0 dims give zeros, size-1 dims are dropped, expanded dims summed
    out_sizes_, out_strides_ = [], []
    for i in range(grad.dim() - 1, -1, -1):
        size_i, stride_i = sizes[i], strides[i]
        if size_i == 0:
            return _rt.zeros(list(inp_sizes), dtype=grad.dtype, device=grad.device)
        if size_i == 1:
            grad = grad.squeeze(i)
        elif stride_i == 0:
            grad = grad.sum(i, False)
        else:
            out_sizes_.insert(0, size_i)
            out_strides_.insert(0, stride_i)
    out_maybe_overlap = _maybe_overlapping_memory(out_sizes_, out_strides_)
    inp_sizes_, inp_strides_ = [], []
    for i in range(len(inp_sizes) - 1, -1, -1):
        if inp_sizes[i] == 0:
            return _rt.zeros(list(inp_sizes), dtype=grad.dtype, device=grad.device)
        if inp_sizes[i] != 1:
            inp_sizes_.insert(0, inp_sizes[i])
            inp_strides_.insert(0, inp_strides[i])
    inp_maybe_overlap = _maybe_overlapping_memory(inp_sizes_, inp_strides_)
    # (1) the underlying storage, as flattened zeros
    shared_offset = min(inp_offset, storage_offset)
    inp_effective_offset = inp_offset - shared_offset
    out_effective_offset = storage_offset - shared_offset
    base_size = max(_min_storage_size(inp_sizes_, inp_strides_, inp_effective_offset),
                    _min_storage_size(out_sizes_, out_strides_, out_effective_offset))
    storage = grad.new_zeros([base_size])
    flatten_full_indices = None
    if inp_maybe_overlap or out_maybe_overlap:
        flatten_full_indices = _rt.arange(0, base_size, dtype=_rt.int64, device=grad.device)
    # (2) scatter the gradient through the output geometry
    if out_maybe_overlap:
        out_indices = flatten_full_indices.as_strided(out_sizes_, out_strides_, out_effective_offset)
        storage.index_add_(0, out_indices.reshape(-1), grad.reshape(-1))
    else:
        storage.as_strided(out_sizes_, out_strides_, out_effective_offset).copy_(grad)
    # (3) an element the input sees k times gets 1/k of the gradient at each place
    if inp_maybe_overlap:
        count = _rt.zeros_like(storage)
        inp_indices = flatten_full_indices.as_strided(inp_sizes_, inp_strides_,
                                                      inp_effective_offset).reshape(-1)
        count.index_add_(0, inp_indices, _rt.ones([1], dtype=grad.dtype, device=grad.device)
                         .expand_as(inp_indices))
        storage.div_(count)   # nan outside the visible range, as torch
    # (4) the input's geometry over that storage
    return storage.as_strided(list(inp_sizes), list(inp_strides), inp_effective_offset)


def infinitely_differentiable_gelu_backward(grad, self):
    kAlpha = 1.0 / math.sqrt(2.0)
    kBeta = 2.0 / math.sqrt(math.pi) * 0.5
    cdf = (self * kAlpha).erf().add_(1.0).mul_(0.5)
    pdf = (-0.5 * self * self).exp()
    return grad * (cdf + self * pdf * (kAlpha * kBeta))


def masked_fill_backward(grad, mask):
    return _rt.where(mask, grad, _zero(grad)).sum()


def softmax_double_backward(grad, grad_output, dim, output):
    return grad_output * grad - (output * grad_output).sum(dim, True) * grad - \
        grad_output * (output * grad).sum(dim, True)


def _sym_numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def slice_backward_wrapper(grad, input_sizes, dim, start, end, step):
    start_val = start if start is not None else 0
    end_val = end if end is not None else _INT64_MAX
    return _rt.ops.get_packet("slice_backward")(grad, list(input_sizes), dim, start_val, end_val, step)


_INT64_MAX = 2 ** 63 - 1


# -- linear algebra -----------------------------------------------------------------------------------

def mm_mat1_backward(grad, mat2, mat1_sizes, mat1_strides, mat1_layout, alpha):
    # a column-major mat1 gets its gradient column-major too
    if mat1_strides[0] == 1 and mat1_strides[1] == mat1_sizes[0]:
        return maybe_multiply(mat2.conj().mm(grad.t()).t(), _conj_scalar(alpha))
    return maybe_multiply(grad.mm(mat2.t().conj()), _conj_scalar(alpha))


def mm_mat2_backward(grad, mat1, mat2_sizes, mat2_strides, mat2_layout, alpha):
    if mat2_strides[0] == 1 and mat2_strides[1] == mat2_sizes[0]:
        return maybe_multiply(grad.t().mm(mat1.conj()).t(), _conj_scalar(alpha))
    return maybe_multiply(mat1.t().conj().mm(grad), _conj_scalar(alpha))


def _conj_scalar(s):
    return s.conjugate() if isinstance(s, complex) else s


def _trilinear_backward(grad_out, i1, i2, i3, expand1, expand2, expand3, sumdim, grad_mask):
    """Each input's gradient is _trilinear again, grad_out standing for that input: its expand
    dims become the sum dims and the sum dims the ones grad_out is expanded at."""
    grad_i1 = grad_i2 = grad_i3 = None
    if grad_out is not None:
        if grad_mask[0]:
            grad_i1 = _rt._trilinear(grad_out, i2, i3, sumdim, expand2, expand3, expand1)
        if grad_mask[1]:
            grad_i2 = _rt._trilinear(i1, grad_out, i3, expand1, sumdim, expand3, expand2)
        if grad_mask[2]:
            grad_i3 = _rt._trilinear(i1, i2, grad_out, expand1, expand2, sumdim, expand3)
    return grad_i1, grad_i2, grad_i3


# -- metadata of saved tensors (torch saves these instead of the tensors) ----------------------------

def to_args_sizes(tensors):
    return [list(t.shape) for t in tensors]


to_args_sizes_symint = to_args_sizes


def to_args_scalartypes(tensors):
    return [t.dtype for t in tensors]


def sinc_backward(grad, self):
    """d/dx sin(pi x)/(pi x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2); 0 at x = 0."""
    self_pi = self * M_PI
    self_squared_pi = self * self * M_PI
    out = grad * ((self_pi * self_pi.cos() - self_pi.sin()) / self_squared_pi).conj()
    return _rt.where(self_squared_pi == 0.0, _rt.zeros_like(out), out)


def copysign_tensor_self_backward(grad, self, result):
    ratio = result / self
    ratio.masked_fill_(self == 0, 0)
    return grad * ratio


def infinitely_differentiable_logit_backward(grad, self, eps):
    """logit's backward written with differentiable ops (used with grad mode on)."""
    if eps is not None:
        lo, hi = eps, 1.0 - eps
        return _rt.where(_rt.logical_and(self >= lo, self <= hi), grad / (self * (1.0 - self)),
                         _rt.zeros_like(self))
    return _rt.where(_rt.logical_and(self >= 0.0, self <= 1.0), grad / (self * (1.0 - self)),
                     _rt.full_like(self, float("nan")))


def take_backward(grad, self, indices):
    return _rt.zeros_like(self).put_(indices, grad, True)


def nansum_backward(grad, self, dims, keepdim):
    return sum_backward(grad, self.shape, dims, keepdim) * self.isnan().logical_not()


def aminmax_backward(self, dim, keepdim, grad_min, grad_max, min, max):
    dims = [dim] if dim is not None else []
    grad_input = _rt.zeros_like(self)
    if grad_min is not None:
        min_reduced = restore_reduced_dims(min, dims, keepdim)
        grad_input = grad_input + scale_grad_by_count(
            restore_reduced_dims(grad_min, dims, keepdim), self == min_reduced, dims)
    if grad_max is not None:
        max_reduced = restore_reduced_dims(max, dims, keepdim)
        grad_input = grad_input + scale_grad_by_count(
            restore_reduced_dims(grad_max, dims, keepdim), self == max_reduced, dims)
    return grad_input


def std_mean_backward(grad_std, grad_mean, self, std, dim, correction, keepdim):
    grad = std_backward(std, grad_std, self, dim, correction, keepdim) if grad_std is not None else None
    if grad_mean is not None:
        gmean = mean_backward(grad_mean, self.shape, dim if dim is not None else [], self.numel(), keepdim)
        grad = gmean if grad is None else grad + gmean
    return grad


def var_mean_backward(gvar, gmean, self, dim, correction, keepdim):
    gself = var_backward(gvar, self, dim, correction, keepdim) if gvar is not None else None
    if gmean is not None:
        aux = mean_backward(gmean, self.shape, dim if dim is not None else [], self.numel(), keepdim)
        gself = aux if gself is None else gself + aux
    return gself


def logcumsumexp_backward(grad, self, result, dim):
    """FunctionsManual.cpp: the positive and negative parts of grad summed in log space, from
    the end (tensorflow's stable formulation, as torch); a complex grad needs no split (its log
    is defined): the conjugate of exp(reverse logcumsumexp(log(conj(grad)) - result) + self)."""
    if grad.dim() == 0 or grad.numel() == 0:
        return grad

    def reverse_logcumsumexp(x):
        return _rt.flip(_rt.logcumsumexp(_rt.flip(x, [dim]), dim), [dim])
    if grad.is_complex():
        log_grad = grad.conj().log()
        return (reverse_logcumsumexp(log_grad - result) + self).exp().conj()
    import numpy  # (std::numeric_limits<scalar_t>::lowest())
    lowest = float(numpy.finfo(grad.dtype.np).min)
    grad_min = _rt.full_like(grad, lowest)
    log_abs_grad = grad.abs().log()
    log_grad_positive = _rt.where(grad > 0, log_abs_grad, grad_min)
    log_grad_negative = _rt.where(grad < 0, log_abs_grad, grad_min)
    output_pos = (reverse_logcumsumexp(log_grad_positive - result) + self).exp()
    output_neg = (reverse_logcumsumexp(log_grad_negative - result) + self).exp()
    return output_pos - output_neg


def block_diag_backward(grad, sizes, dtypes):
    """Each input's block of grad (a 0-d input's 1x1 block, a 1-d input's one row)."""
    out = []
    r = c = 0
    for shape, dtype in zip(sizes, dtypes):
        h, w = (1, 1) if len(shape) == 0 else (1, shape[0]) if len(shape) == 1 else shape
        g = grad.slice(0, r, r + h).slice(1, c, c + w)
        g = handle_r_to_c(dtype, g.reshape(list(shape)) if len(shape) < 2 else g)
        out.append(g)
        r, c = r + h, c + w
    return out


def TensorGeometry(t):
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset())


def _to_copy_backward(grad, self_options):
    """The gradient of a dtype/device conversion: converted back (a real input's gradient is the
    real part of a complex one)."""
    if not self_options.dtype.is_complex and grad.is_complex():
        grad = _rt.real(grad)
    return grad.to(dtype=self_options.dtype, device=self_options.device)


# -- activations -------------------------------------------------------------------------------------

def infinitely_differentiable_silu_backward(grad_output, input):
    sigmoid = input.sigmoid()
    return grad_output * sigmoid * (1.0 + input * (1.0 - sigmoid))


def silu_double_backward(grad, grad_output, self):
    sigmoid = self.sigmoid()
    tmp = (1 - sigmoid)
    return grad * grad_output * sigmoid * tmp * (2 + self * (1 - 2 * sigmoid))


def softplus_double_backward(grad, input, beta, threshold):
    z = (input * beta).sigmoid()
    return grad * (z * (1 - z) * beta).masked_fill((input * beta) > threshold, 0)


def elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    negative = (self_or_result < 0).type_as(grad)
    if is_result:
        return grad * grad_output * input_scale * negative
    return _rt.ops.get_packet("elu_backward")(grad * grad_output * input_scale, alpha, scale,
                                              input_scale, is_result, self_or_result) * negative


def log_sigmoid_double_backward(grad, input):
    z = input.sigmoid()
    return grad * (z - 1) * z


def gelu_double_backward(ggI, gO, input, approximate):
    """d/dx of gelu's derivative, times both incoming gradients."""
    if approximate == "tanh":
        kBeta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
        kKappa = 0.044715
        tanh_inner = (kBeta * (input + kKappa * input.pow(3))).tanh()
        dinner = kBeta * (1 + 3 * kKappa * input * input)
        d2inner = kBeta * 6 * kKappa * input
        dtanh = 1 - tanh_inner * tanh_inner
        d2tanh = -2 * tanh_inner * dtanh
        return ggI * gO * (dtanh * dinner + 0.5 * input * (d2tanh * dinner * dinner + dtanh * d2inner))
    kBeta = 1.0 / math.sqrt(2.0 * math.pi)
    input_pdf = (-0.5 * input * input).exp() * kBeta
    return ggI * gO * (2 * input_pdf - input * input * input_pdf)


# -- variance ----------------------------------------------------------------------------------------

def var_backward(grad, self, dim, correction, keepdim):
    correction = 1 if correction is None else correction
    if self.dim() == 0 or dim is None:
        dof = self.numel() - correction
        if dof <= 0:
            # 2 / (n - correction) is infinite: nan where self is its mean, inf elsewhere
            return grad * _rt.where(self == self.mean(), float("nan"), float("inf"))
        return (2.0 / dof) * grad * (self - self.mean())
    dim = [dim] if isinstance(dim, int) else list(dim)
    if not keepdim and self.dim() > 1:
        grad = unsqueeze_multiple(grad, dim, self.dim())
    rnumel = _safe_size(self.shape, dim)
    return (2.0 / (rnumel - correction)) * grad * (self - self.mean(dim, True))


def std_backward(result, grad, self, dim, correction, keepdim):
    grad_var = (grad / (result * 2)).masked_fill_(result == 0, 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


value_selecting_reduction_backward_symint = value_selecting_reduction_backward


# -- nn: normalisation, losses, embedding, padding (written with ops: differentiable again) ----------

def _normalize_backward(g, xhat, invstd, axes):
    """d/dx of xhat = (x - mean) * invstd, reduced over ``axes``, for an incoming g (= grad * w)."""
    n = 1
    for a in axes:
        n *= xhat.shape_tuple[a]
    mean_g = g.sum(axes, True) / n
    mean_gx = (g * xhat).sum(axes, True) / n
    return (g - mean_g - xhat * mean_gx) * invstd


def batchnorm_backward(grad, input, weight, running_mean, running_var, training, eps, grad_input_mask):
    """native_batch_norm_backward, with ops: the batch statistics are recomputed from input."""
    nd = input.dim()
    axes = [0] + list(range(2, nd))
    shape = [1, -1] + [1] * (nd - 2)
    if training:
        mean = input.mean(axes, True)
        var = ((input - mean) * (input - mean)).mean(axes, True)
    else:
        mean = running_mean.reshape(shape)
        var = running_var.reshape(shape)
    invstd = (var + eps).rsqrt()
    xhat = (input - mean) * invstd
    g = grad * weight.reshape(shape) if weight is not None else grad
    grad_input = grad_weight = grad_bias = None
    if grad_input_mask[0]:
        grad_input = _normalize_backward(g, xhat, invstd, axes) if training else g * invstd
    if grad_input_mask[1] and weight is not None:
        grad_weight = (grad * xhat).sum(axes)
    if grad_input_mask[2]:
        grad_bias = grad.sum(axes)
    return grad_input, grad_weight, grad_bias


def layer_norm_backward(grad, input, normalized_shape, weight, eps, grad_input_mask):
    k = len(normalized_shape)
    nd = input.dim()
    axes = list(range(nd - k, nd))
    mean = input.mean(axes, True)
    var = ((input - mean) * (input - mean)).mean(axes, True)
    invstd = (var + eps).rsqrt()
    xhat = (input - mean) * invstd
    g = grad * weight if weight is not None else grad
    lead = list(range(nd - k))
    grad_input = _normalize_backward(g, xhat, invstd, axes) if grad_input_mask[0] else None
    grad_weight = _sum_over(grad * xhat, lead) if grad_input_mask[1] and weight is not None else None
    grad_bias = _sum_over(grad, lead) if grad_input_mask[2] else None
    return grad_input, grad_weight, grad_bias


def group_norm_backward(grad, input, num_groups, weight, eps, grad_input_mask):
    shape = list(input.shape_tuple)
    n, c = shape[0], shape[1]
    cshape = [1, -1] + [1] * (len(shape) - 2)
    grouped = input.reshape([n, num_groups, -1])
    mean = grouped.mean([2], True)
    var = ((grouped - mean) * (grouped - mean)).mean([2], True)
    invstd = (var + eps).rsqrt()
    xhat = ((grouped - mean) * invstd).reshape(shape)
    g = grad * weight.reshape(cshape) if weight is not None else grad
    others = [0] + list(range(2, len(shape)))
    grad_input = None
    if grad_input_mask[0]:
        gi = _normalize_backward(g.reshape([n, num_groups, -1]), xhat.reshape([n, num_groups, -1]),
                                 invstd, [2])
        grad_input = gi.reshape(shape)
    grad_weight = (grad * xhat).sum(others) if grad_input_mask[1] and weight is not None else None
    grad_bias = grad.sum(others) if grad_input_mask[2] else None
    return grad_input, grad_weight, grad_bias


def nll_loss_backward(grad, self, target, weight, reduction, ignore_index):
    """-w[target] (over the weight total for 'mean') at each target class, 0 elsewhere."""
    class_dim = 0 if self.dim() == 1 else 1
    t = target.unsqueeze(class_dim)
    ignored = target == ignore_index
    safe = target.masked_fill(ignored, 0)
    w = weight.index_select(0, safe.reshape([-1])).reshape(safe.shape) if weight is not None \
        else _rt.ones(list(target.shape_tuple), dtype=self.dtype)
    w = w.masked_fill(ignored, 0)
    g = grad / w.sum() if reduction == 1 else grad  # 1: mean over the weights of the targets
    scale = (-(w * g)).masked_fill(ignored, 0)  # ignored targets get 0, even when g is nan
    out = _rt.zeros_like(self)
    return out.scatter(class_dim, t.masked_fill(ignored.unsqueeze(class_dim), 0),
                       scale.unsqueeze(class_dim))


def mse_loss_backward(grad, self, target, reduction):
    norm = 2.0 / self.numel() if reduction == 1 else 2.0
    return norm * (self - target) * grad


def embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    """The rows of grad summed into the rows their indices name (padding_idx's row stays 0)."""
    flat = indices.reshape([-1])
    g = grad.reshape([flat.numel(), grad.shape_tuple[-1]])
    if scale_grad_by_freq:
        counts = _rt.zeros([num_weights], dtype=g.dtype).index_put(
            (flat,), _rt.ones([flat.numel()], dtype=g.dtype), True)
        g = g / counts.index_select(0, flat).unsqueeze(1)
    if padding_idx >= 0:
        g = g.masked_fill((flat == padding_idx).unsqueeze(1), 0)
    out = _rt.zeros([num_weights, g.shape_tuple[-1]], dtype=g.dtype)
    return out.index_put((flat,), g, True)


def constant_pad_nd_backward(grad, pad):
    return _rt.ops.get_packet("constant_pad_nd")(grad, [-p for p in pad], 0)


def max_pool_double_backward(grad, indices, dim):
    """The gradient of max-pooling's backward with respect to its grad_output: grad read back at
    the argmax positions."""
    n = indices.dim() - dim
    flat_grad = grad.flatten(n)
    flat_indices = indices.flatten(n)
    return flat_grad.gather(-1, flat_indices).view(list(indices.shape_tuple))


# -- indexing ----------------------------------------------------------------------------------------

def index_select_backward_symint(grad, self_sizes, dim, index):
    """zeros(self_sizes).index_add_(dim, index, grad), as an accumulating index_put."""
    dim = _wrap_dim(dim, len(self_sizes))
    zeros = _rt.zeros(list(self_sizes), dtype=grad.dtype, device=grad.device)
    if len(self_sizes) == 0:  # a 0-dim self: every index picked the one element
        return grad.sum() + zeros
    return zeros.index_put(tuple([None] * dim + [index.reshape([-1])]), grad, True)


def gather_backward(grad, self, dim, index, sparse_grad):
    return _scatter_add(_rt.zeros(list(self.shape), dtype=grad.dtype, device=grad.device), dim,
                        index, grad)


def masked_select_backward(grad, input, mask):
    """zeros of the broadcast shape with grad written at the mask's true positions (the engine
    sums the broadcast dimensions away)."""
    from ..ops._iter import broadcast_shapes
    shape = list(broadcast_shapes(input.shape_tuple, mask.shape_tuple))
    zeros = _rt.zeros(shape, dtype=grad.dtype, device=grad.device)
    return zeros.index_put((mask.expand(shape),), grad, True)


def padding_backward(grad, self, padding, mode):
    """reflection/replication padding's gradient: each output element's gradient added back to
    the input element it copies, one padded dimension at a time (an accumulating index_put)."""
    import numpy as np
    nd = self.dim()
    dims = len(padding) // 2
    for j in range(dims):
        d = nd - 1 - j
        b, e = padding[2 * j], padding[2 * j + 1]
        L = self.shape_tuple[d]
        pos = np.arange(-b, L + e)
        if mode == "reflect":
            pos = np.abs(pos)
            pos = np.where(pos >= L, 2 * (L - 1) - pos, pos)
        else:
            pos = np.clip(pos, 0, L - 1)
        shape = list(grad.shape_tuple)
        shape[d] = L
        zeros = _rt.zeros(shape, dtype=grad.dtype, device=grad.device)
        grad = zeros.index_put(tuple([None] * d + [_rt.from_numpy(pos.astype(np.int64))]), grad, True)
    return grad


def upsample_backward(grad, self, output_size, scales, mode, align_corners):
    """upsample_{nearest,bilinear}*_backward with ops: each output element's gradient added back
    to the input element(s) it was read from, one spatial dimension at a time (the forward is
    separable), with the forward's own index and weight computations."""
    import numpy as np
    from ..ops.nn_upsample import _linear_weights, _nearest_index
    nd = self.dim()
    dims = len(output_size)
    for i in reversed(range(dims)):
        axis = nd - dims + i
        in_size = self.shape_tuple[axis]
        shape = list(grad.shape_tuple)
        shape[axis] = in_size
        zeros = _rt.zeros(shape, dtype=grad.dtype, device=grad.device)
        lead = [None] * axis
        if mode == "nearest":
            idx = _nearest_index(in_size, output_size[i], scales[i])
            grad = zeros.index_put(tuple(lead + [_rt.from_numpy(np.asarray(idx, np.int64))]), grad, True)
            continue
        ftype = np.float64 if grad.dtype.name == "float64" else np.float32
        i0, i1, l0, l1 = _linear_weights(in_size, output_size[i], align_corners, scales[i], ftype)
        wshape = [-1] + [1] * (nd - 1 - axis)
        w0 = _rt.from_numpy(np.ascontiguousarray(l0)).to(grad.dtype).view(wshape)
        w1 = _rt.from_numpy(np.ascontiguousarray(l1)).to(grad.dtype).view(wshape)
        grad = zeros.index_put(tuple(lead + [_rt.from_numpy(np.asarray(i0, np.int64))]), grad * w0, True) \
            .index_put(tuple(lead + [_rt.from_numpy(np.asarray(i1, np.int64))]), grad * w1, True)
    return grad


def convolution_backward_backward(grads, grad_output, input, weight, stride, padding, dilation,
                                  transposed, output_padding, groups, grad_input_mask):
    """The gradients of convolution_backward's three outputs with respect to its inputs
    (torch's _convolution_double_backward), from the bilinearity of a convolution:
    grad_input is linear in (grad_output, weight), grad_weight in (grad_output, input),
    grad_bias in grad_output."""
    ggI, ggW, ggb = (list(grads) + [None, None, None])[:3]
    conv = _rt.ops.get_packet("convolution")
    conv_bw = _rt.ops.get_packet("convolution_backward")
    args = (stride, padding, dilation, transposed, output_padding, groups)
    g_out = g_in = g_w = None

    def add(a, b):
        return b if a is None else a + b
    # (as torch's: an empty input contributes no ggO term and leaves gI and gW undefined)
    nonempty = input.numel() != 0
    if ggI is not None and nonempty:
        if grad_input_mask[0]:
            g_out = add(g_out, conv(ggI, weight, None, *args))
        if grad_input_mask[2]:
            g_w = add(g_w, conv_bw(grad_output, ggI, weight, None, *args, [False, True, False])[1])
    if ggW is not None and nonempty:
        if grad_input_mask[0]:
            g_out = add(g_out, conv(input, ggW, None, *args))
        if grad_input_mask[1]:
            g_in = add(g_in, conv_bw(grad_output, input, ggW, None, *args, [True, False, False])[0])
    if ggb is not None and grad_input_mask[0]:
        shape = [1, -1] + [1] * (grad_output.dim() - 2)
        g_out = add(g_out, ggb.view(shape).expand(list(grad_output.shape_tuple)))
    return g_out, g_in, g_w


# -- helpers of the op-surface formulas (FunctionsManual.cpp) -------------------------------------

M_PI = math.pi
M_LN2 = math.log(2.0)
M_2_SQRTPI = 2.0 / math.sqrt(math.pi)  # erf's 2.0 / sqrt(M_PI), as <cmath> spells it


def atan2_backward(grad, self, other, output_mask):
    if grad is None:
        return None, None
    recip = (self * self + other * other).reciprocal()
    return (grad * other * recip if output_mask[0] else None,
            grad * -self * recip if output_mask[1] else None)


def deg2rad_backward(grad):
    return grad * 0.017453292519943295769236907684886127134428718885417  # M_PI_180


def rad2deg_backward(grad):
    return grad * 57.295779513082320876798154814105170332405472466564  # M_180_PI


def reverse_list(xs):
    return list(reversed(xs))


reverse_list_symint = reverse_list
# -- nn activations' and losses' helpers (double backward of their backward ops) ---------------

def _div_scalar(tensor, number):
    """C++'s ``tensor / number``: div.Scalar (DivBackward1), not Python's div.Tensor."""
    return _rt.ops.get_packet("div").Scalar(tensor, number)


def _scalar_minus(number, tensor):
    """C++'s ``number - tensor`` (TensorOperators.h): empty_like(t).fill_(n).sub_(t), so
    SubBackward0 with no edge for the number (Python's ``1 - t`` records RsubBackward1)."""
    return _rt.empty_like(tensor).fill_(number).sub_(tensor)


def infinitely_differentiable_mish_backward(grad_output, input):
    sigmoid = input.sigmoid()
    softplus = input.exp().log1p()  # (torch's formula: not softplus, whose node differs)
    tanh_softplus = softplus.tanh()
    return grad_output * (tanh_softplus + input * sigmoid * _scalar_minus(1.0, tanh_softplus * tanh_softplus))


def glu_double_backward(grad, grad_output, input, dim):
    gO = grad_output
    input_size = input.size(dim) // 2
    first_half = input.narrow(dim, 0, input_size)
    second_half = input.narrow(dim, input_size, input_size)
    sig_second_half = second_half.sigmoid()
    one_sub_sig_second_half = 1 - sig_second_half
    sig_one_sub_sig = sig_second_half * one_sub_sig_second_half
    ggI_first_half = grad.narrow(dim, 0, input_size)
    ggI_second_half = grad.narrow(dim, input_size, input_size)
    ggI_second_half_times_first_half = ggI_second_half * first_half
    gI_first_half = ggI_second_half * gO * sig_one_sub_sig
    second_order_sh = (sig_one_sub_sig * one_sub_sig_second_half
                       - sig_second_half * sig_one_sub_sig)
    gI_second_half = (ggI_second_half_times_first_half * gO * second_order_sh
                      + ggI_first_half * gO * sig_one_sub_sig)
    return _rt.cat([gI_first_half, gI_second_half], dim)


def glu_double_backward_grad_output(grad, input, dim):
    dim = _wrap_dim(dim, input.dim())
    sizes = list(input.shape)
    sizes[dim] //= 2
    tmp = grad * _rt.ops.get_packet("glu_backward")(_rt.ones(sizes, dtype=input.dtype), input, dim)
    return tmp.narrow(dim, 0, sizes[dim]) + tmp.narrow(dim, sizes[dim], sizes[dim])


def smooth_l1_loss_double_backward(grad, input, target, reduction, beta):
    if beta == 0:  # guards the division by beta
        return _rt.zeros(grad.shape, dtype=grad.dtype)
    d = (input - target).abs()
    grad_input = _div_scalar(grad * (d < beta).type_as(grad), beta)
    if reduction == 1:
        grad_input = _div_scalar(grad_input, input.numel())
    return grad_input


def huber_loss_double_backward(grad, input, target, reduction, delta):
    d = (input - target).abs()
    grad_input = grad * (d < delta)
    if reduction == 1:
        grad_input = _div_scalar(grad_input, input.numel())
    return grad_input


def huber_loss_double_backward_grad_output(grad, grad_output, input, target, reduction, delta):
    backward = _rt.ops.get_packet("huber_loss_backward")
    if reduction == 0:
        return backward(grad, input, target, reduction, delta)
    r = backward(_rt.ones_like(grad_output), input, target, reduction, delta)
    return (r * grad).sum()


def soft_margin_loss_double_backward(grad, input, target, reduction):
    z = (input * -target).exp()
    zplus1 = z + 1
    grad_input = grad * (target * target) * z / (zplus1 * zplus1)
    if reduction == 1:
        grad_input = _div_scalar(grad_input, input.numel())
    return grad_input


def soft_margin_loss_double_backward_grad_output(grad, grad_output, input, target, reduction):
    backward = _rt.ops.get_packet("soft_margin_loss_backward")
    if reduction == 0:
        return backward(grad, input, target, reduction)
    r = backward(_rt.ones_like(grad_output), input, target, reduction)
    return (r * grad).sum()


def binary_cross_entropy_target_backward(grad, self, target, weight, reduction):
    grad_target = -(self / (1 - self)).log() * grad  # at::logit(self), reftrace has no logit op
    if weight is not None:
        grad_target = grad_target * weight
    if reduction == 1:
        grad_target = _div_scalar(grad_target, target.numel())
    return grad_target


def binary_cross_entropy_double_backward(grad_output, grad, input, target, weight, reduction):
    eps = 1e-12
    inp_pl_eps = input + eps
    one_m_inp_pl_eps = 1 - input + eps
    gI = (input * input - 2 * input * target + target) / (inp_pl_eps.pow(2) * one_m_inp_pl_eps.pow(2))
    gI = gI * (grad * grad_output)
    if weight is not None:
        gI = gI * weight
    if reduction == 1:
        return _div_scalar(gI, input.numel())
    return gI


def binary_cross_entropy_double_backward_grad_output(grad, input, target, weight, reduction):
    eps = 1e-12
    ggO = (input - target) / ((input + eps) * (1 - input + eps))
    ggO = ggO * grad
    if weight is not None:
        ggO = ggO * weight
    if reduction == 1:
        return _div_scalar(ggO.sum(), input.numel())
    if reduction == 2:
        return ggO.sum()
    return ggO


def binary_cross_entropy_double_backward_target(grad, grad_output, self, target, weight, reduction):
    res = -grad * grad_output
    if weight is not None:
        res = res * weight
    neg_self = 1 - self
    denom = self * neg_self
    # torch clamps denom in place under NoGradGuard: the clamp is not differentiated
    denom = denom + (denom.clamp_min(1e-12) - denom).detach()
    res = res / denom
    if reduction == 1:
        res = _div_scalar(res, self.numel())
    return res


def binary_cross_entropy_with_logits_backward(grad, input, target, weight, pos_weight, reduction):
    if pos_weight is not None:
        t = pos_weight * target
        grad_input = (t + 1 - target) * input.sigmoid() - t
    else:
        grad_input = input.sigmoid() - target
    grad_input = grad_input * grad
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == 1:
        grad_input = _div_scalar(grad_input, input.numel())
    return grad_input


def binary_cross_entropy_with_logits_target_backward(grad_output, self, target, weight,
                                                     pos_weight, reduction):
    log_sigmoid = _rt.nn.functional.logsigmoid  # at::log_sigmoid
    if pos_weight is not None:
        grad_target = (log_sigmoid(-self) - log_sigmoid(self) * pos_weight) * grad_output
    else:
        grad_target = -self * grad_output
    if weight is not None:
        grad_target = grad_target * weight
    if reduction == 1:
        grad_target = _div_scalar(grad_target, target.numel())
    return grad_target


def not_implemented(name, reason=""):
    """A derivatives.yaml entry torch declares but does not implement: using it raises."""
    raise NotImplementedError(f"the derivative for '{name}' is not implemented." +
                              (f" {reason}" if reason else ""))


# -- special functions -----------------------------------------------------------------------------

def _not_tiny(self):
    """i1_backward's guard: x == 0 gives 0/0 in the formula; torch substitutes eps (and 0.5)."""
    eps = float(_np.finfo(self.dtype.np).eps)  # std::numeric_limits<scalar_t>::epsilon()
    is_not_tiny = self.abs() > eps
    safe_self = _rt.where(is_not_tiny, self, _rt.full([], eps, dtype=self.dtype))
    return is_not_tiny, safe_self


def i1_backward(grad, self, result):
    is_not_tiny, safe_self = _not_tiny(self)
    gradx = safe_self.i0() - result * safe_self.reciprocal()
    return grad * _rt.where(is_not_tiny, gradx, _rt.full([], 0.5, dtype=self.dtype))


def i1e_backward(grad, self, result):
    is_not_tiny, safe_self = _not_tiny(self)
    gradx = _rt.special.i0e(safe_self) - result * (safe_self.sgn() + safe_self.reciprocal())
    return grad * _rt.where(is_not_tiny, gradx, _rt.full([], 0.5, dtype=self.dtype))


def mvlgamma_backward(grad, self, p):
    args = _rt.arange(-p / 2. + 0.5, 0.5, 0.5, dtype=self.dtype)
    args = args.add(self.unsqueeze(-1))
    return grad * args.digamma_().sum(-1)


# -- distances ------------------------------------------------------------------------------------------

def _euclidean_dist_backward(grad, x1, x2, res):
    if grad is None:
        return (None, None)
    # handle case at 0 where we return a subgradient containing 0
    ratio = grad / res
    ratio.masked_fill_(res == 0, 0)
    return (x1 * ratio.sum(-1, True) - ratio.matmul(x2),
            x2 * ratio.sum(-2, False).unsqueeze(-1) - ratio.mT.matmul(x1))


# -- linear algebra: decompositions (FunctionsManual.cpp, in its order) ------------------------------

def cholesky_backward(gL, upper, L):
    # From cholesky_jvp we have that dL = L\pi(L^{-1}dA(L^-H)). Taking adjoints,
    # gA = L^{-H}\pi^*((L^HgL).tril())L^{-1} where \pi^*(X) = 0.5 * (X + X^H - diag(X));
    # tril(L^H gL) = tril(L^H tril(gL)), so gL need not be projected first
    L_ = L.mH if upper else L
    gL_ = gL.mH if upper else gL
    gA = L_.mH.matmul(gL_).tril()
    # Equivalent to 0.5 * (gA + gA^H - diag(gA))
    gA = 0.5 * (gA + gA.tril(-1).mH)
    gA = _rt.linalg_solve_triangular(L_.mH, gA, upper=True, left=True)
    gA = _rt.linalg_solve_triangular(L_, gA, upper=False, left=False)
    return gA


def cholesky_inverse_backward(grad, L, upper, inverse):
    grad_L = None
    if grad is not None:
        common_term = grad + grad.mH
        common_term = _rt.matmul(inverse, _rt.matmul(common_term, inverse))
        if upper:
            grad_L = -_rt.matmul(L, common_term)
        else:
            grad_L = -_rt.matmul(common_term, L)
    return grad_L


def pinv_backward(grad, pinvA, A):
    m = A.shape[-2]
    n = A.shape[-1]
    pinvAh = pinvA.mH
    gradh = grad.mH
    # optimization to produce matrices of the smallest dimension
    if m <= n:
        K = gradh.matmul(pinvA)
        KpinvAh = K.matmul(pinvAh)
        return (-(pinvA.matmul(K)).mH + KpinvAh - (A.matmul(pinvA)).matmul(KpinvAh)
                + (pinvAh.matmul(pinvA)).matmul(gradh - K.matmul(A)))
    K = pinvA.matmul(gradh)
    pinvAhK = pinvAh.matmul(K)
    return (-(K.matmul(pinvA)).mH + (gradh - A.matmul(K)).matmul(pinvA).matmul(pinvAh)
            + pinvAhK - pinvAhK.matmul(pinvA).matmul(A))


def svd_backward(gU, gS, gVh, U, S, Vh):
    # Throughout both the real and complex case we assume A has distinct singular values;
    # if A is rectangular or complex, we assume it's full-rank (see FunctionsManual.cpp)
    # Trivial case
    if gS is None and gU is None and gVh is None:
        return None
    m = U.shape[-2]
    n = Vh.shape[-1]
    # Optimisation for svdvals: gA = U @ diag(gS) @ Vh
    if gU is None and gVh is None:
        return (_rt.matmul(U, gS.unsqueeze(-1) * Vh) if m >= n
                else _rt.matmul(U * gS.unsqueeze(-2), Vh))
    # At this point, at least one of gU, gVh is defined
    is_complex = U.is_complex()

    def skew(A):
        return A - A.mH
    UhgU = skew(_rt.matmul(U.mH, gU)) if gU is not None else None
    VhgV = skew(_rt.matmul(Vh, gVh.mH)) if gVh is not None else None
    # Check for the invariance of the loss function, i.e.
    # Im(diag(U^H gU)) + Im(diag(V^H gV)) = 0
    if is_complex:
        imdiag_UhgU = (_rt.imag(UhgU.diagonal(0, -2, -1)) if gU is not None
                       else _rt.zeros_like(S))
        imdiag_VhgV = (_rt.imag(VhgV.diagonal(0, -2, -1)) if gVh is not None
                       else _rt.zeros_like(S))
        # Rather lax atol and rtol, as we don't want false positives
        if not _rt.allclose(imdiag_UhgU, -imdiag_VhgV, rtol=1e-2, atol=1e-2):
            raise RuntimeError(
                "svd_backward: The singular vectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this phase "
                "term, making it ill-defined.")

    # gA = ((U^H gU) / E) S +  S (((V^H gV) / E) + I o (gS + diag(U^H gU) / (2 * S))
    # ret holds everything but the diagonal of gA
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    # Any number a != 0 would, as we are just going to use it to compute 0 / a later on
    E.diagonal(0, -2, -1).fill_(1)
    if gU is not None:
        if gVh is not None:
            gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
        else:
            gA = (UhgU / E) * S.unsqueeze(-2)
    else:  # gVh is defined
        gA = S.unsqueeze(-1) * (VhgV / E)
    # Fill the diagonal
    if gS is not None:
        gA = gA + gS.diag_embed()
    if is_complex and gU is not None and gVh is not None:
        gA = gA + (UhgU.diagonal(0, -2, -1) / (2. * S)).diag_embed()

    if m > n and gU is not None:
        # gA = [UgA + (I_m - UU^H)gU S^{-1}]V^H
        gA = _rt.matmul(U, gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - _rt.matmul(U, _rt.matmul(U.mH, gUSinv))
        gA = _rt.matmul(gA, Vh)
    elif m < n and gVh is not None:
        #   gA = U[gA V^H + S^{-1} (gV)^H (I_n - VV^H)]
        gA = _rt.matmul(gA, Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - _rt.matmul(_rt.matmul(SinvgVh, Vh.mH), Vh)
        gA = _rt.matmul(U, gA)
    else:
        # gA = U gA V^H
        gA = (_rt.matmul(U, _rt.matmul(gA, Vh)) if m >= n
              else _rt.matmul(_rt.matmul(U, gA), Vh))
    return gA


def linalg_eig_backward(gL, gV, L, V, is_hermitian, symeig_eigenvectors=True):
    # https://arxiv.org/pdf/1701.00392.pdf Eq 4.77. For A = VLV^{-1}:
    # gA = V^{-H}(diag_embed(gL) + (V^H gV -V^HV diag(real(V^H gV))) / E*)V^H
    # with E_{ij} = L_j - L_i if i != j, 1 otherwise; the Hermitian case uses V^{-1} = V^H
    if not symeig_eigenvectors:
        raise RuntimeError("linalg_eig_backward: torch.symeig(A, eigenvectors=False) is not "
                           "differentiable. Use torch.linalg.eigvalsh(A) instead.")
    # Trivial case
    if gL is None and gV is None:
        return None
    # Shortcut for linalg.eigvals/eigvalsh: compute V^-H gL V^H
    if gV is None:
        if is_hermitian:
            return _rt.matmul(V * gL.unsqueeze(-2), V.mH)
        return _rt.linalg.solve(V.mH, gL.unsqueeze(-1) * V.mH)
    VhgV = _rt.matmul(V.mH, gV)
    diag_VhgV = VhgV.diagonal(0, -2, -1)
    if V.is_complex():
        # Check invariance of the loss function wrt the transformation
        # V -> V * e^{i\phi} for an arbitrary phi in RR^n
        imdiag_VhgV = _rt.imag(diag_VhgV)
        if not _rt.allclose(imdiag_VhgV, _rt.zeros_like(imdiag_VhgV), rtol=1e-2, atol=1e-2):
            raise RuntimeError(
                ("linalg_eigh_backward" if is_hermitian else "linalg_eig_backward")
                + ": The eigenvectors in the complex case are specified up to multiplication by "
                "e^{i phi}. The specified loss function depends on this quantity, so it is "
                "ill-defined.")
    if is_hermitian:
        # Project onto the tangent space at the identity of U(n), that is, the
        # skew-Hermitian matrices
        VhgV = 0.5 * (VhgV - VhgV.mH)
    else:
        # Project onto the tangent space at V^H V of complex matrices with columns of norm 1
        VhgV = VhgV - _rt.matmul(V.mH, V * _rt.real(diag_VhgV).unsqueeze(-2))
    Lconj = L.conj()
    Econj = Lconj.unsqueeze(-2) - Lconj.unsqueeze(-1)
    Econj.diagonal(0, -2, -1).fill_(1.)
    gA = VhgV.div_(Econj)
    if gL is not None:
        gA.diagonal(0, -2, -1).copy_(gL)
    # Conjugate by V^{-H}
    if is_hermitian:
        return _rt.matmul(V, _rt.matmul(gA, V.mH))
    return _rt.linalg.solve(V.mH, _rt.matmul(gA, V.mH))


def _linalg_solve_is_vector_rhs(input, other):
    """at::native::linalg_solve_is_vector_rhs: B is a (batch of) vector(s)."""
    vector_case = other.dim() == 1 or (input.dim() - 1 == other.dim()
                                       and tuple(other.shape) == tuple(input.shape[:-1]))
    return vector_case


def linalg_lstsq_backward(gX_, gL_, A, B_, X_, grad_input_mask):
    A_requires_grad = grad_input_mask[0]
    B_requires_grad = grad_input_mask[1]
    if ((gX_ is None and (gL_ is None or not gL_.numel()))  # gL_ undefined or of shape [0]
            or (not A_requires_grad and not B_requires_grad)):
        return (None, None)
    vector_case = _linalg_solve_is_vector_rhs(A, B_)

    def vector_to_matrix(X):
        return X.unsqueeze(-1) if vector_case else X

    def matrix_to_vector(X):
        return X.squeeze(-1) if vector_case else X
    B = vector_to_matrix(B_)
    A_grad_X = B_grad_X = A_grad = B_grad = None
    if gX_ is not None:  # Gradient from solution
        gX = vector_to_matrix(gX_)
        pinvA = _rt.linalg.pinv(A)
        if A_requires_grad:
            pinvA_grad = gX.matmul(B.mH)
            A_grad_X = pinv_backward(pinvA_grad, pinvA, A)
        if B_requires_grad:
            # Equivalent to B_grad = linalg_lstsq(A.mH, gX, rcond, driver)[0],
            # but we avoid this approach as `gelsy` is non-deterministic
            B_grad_X = matrix_to_vector(pinvA.mH.matmul(gX))
    if gL_ is not None and gL_.numel():  # Gradient from residuals
        X = vector_to_matrix(X_)
        r = A.matmul(X) - B
        gL = gL_.unsqueeze(-2)
        if A_requires_grad:
            A_grad_L = 2 * (gL * r).matmul(X.mH)
            A_grad = A_grad_X + A_grad_L if A_grad_X is not None else A_grad_L
        if B_requires_grad:
            B_grad_L = matrix_to_vector(-2 * gL * r)
            B_grad = B_grad_X + B_grad_L if B_grad_X is not None else B_grad_L
    else:  # gX_ is defined
        A_grad = A_grad_X
        B_grad = B_grad_X
    return (A_grad, B_grad)


def _parse_qr_mode(mode):
    if mode == "reduced":
        return True, True
    if mode == "complete":
        return True, False
    if mode == "r":
        return False, True
    raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                       "(default), 'r', or 'complete'")


def linalg_qr_backward(gQ, gR, Q, R, mode):
    # Case m >= n: gA = (gQ + syminvadj(triu(gR R^H - Q^H gQ)))R^{-H}
    # Case m < n: gA = QgR + pi*(Q trilImInv*(Q^H gQ - gR R^H)R_1^{-H})
    compute_q, reduced = _parse_qr_mode(mode)
    if not compute_q:
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
            "linalg.qr.")
    m = Q.shape[-2]
    n = R.shape[-1]
    if not (reduced or m <= n):
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    if gQ is None and gR is None:
        return None
    if gQ is not None:
        if gR is not None:
            gA = gR.matmul(R.mH) - Q.mH.matmul(gQ)
        else:
            gA = -Q.mH.matmul(gQ)
    else:
        gA = gR.matmul(R.mH)
    if m >= n:
        def syminvadj(X):
            ret = X + X.mH
            diag = ret.diagonal(0, -2, -1)
            (_rt.real(diag) if diag.is_complex() else diag).mul_(0.5)
            return ret
        gA = Q.matmul(syminvadj(gA.triu()))
        if gQ is not None:
            gA = gA + gQ
        gA = _rt.linalg_solve_triangular(R.mH, gA, upper=False, left=False)
        return gA

    def trilImInvAdjSkew(X):
        ret = (X - X.mH).tril()
        if X.is_complex():
            _rt.imag(ret.diagonal(0, -2, -1)).mul_(0.5)
        return ret
    gA = Q.matmul(trilImInvAdjSkew(-gA))
    gA = _rt.linalg_solve_triangular(R.narrow(-1, 0, m).mH, gA, upper=False, left=False)
    shape = list(R.shape)
    shape[-1] = n - m
    gA = _rt.cat([gA, gA.new_zeros(shape)], -1)
    if gR is not None:
        gA = gA + Q.matmul(gR)
    return gA


def _differential_analytic_matrix_function(self, grad, matrix_function, adjoint):
    """Mathias, "A Chain Rule for Matrix Functions and Applications" (1996): f applied to the
    block matrix [[A, grad], [0, A]] has the differential (adjoint=False) or its adjoint
    (adjoint=True, with A^H) in its upper-right block."""
    A = self.transpose(-2, -1).conj() if adjoint else self
    meta_grad_sizes = list(A.shape)
    meta_grad_sizes[A.dim() - 2] *= 2
    meta_grad_sizes[A.dim() - 1] *= 2
    n = A.shape[-1]
    meta_grad = _rt.zeros(meta_grad_sizes, dtype=grad.dtype, device=grad.device)
    meta_grad.narrow(-2, 0, n).narrow(-1, 0, n).copy_(A)
    meta_grad.narrow(-2, n, n).narrow(-1, n, n).copy_(A)
    meta_grad.narrow(-2, 0, n).narrow(-1, n, n).copy_(grad)
    return matrix_function(meta_grad).narrow(-2, 0, n).narrow(-1, n, n)


def linalg_matrix_exp_differential(self, grad, adjoint):
    return _differential_analytic_matrix_function(self, grad, _rt.linalg.matrix_exp, adjoint)


def triangular_solve_backward(grad_x, grad_m, b, a, x, upper, transpose, unitriangular,
                              output_mask):
    grad_b = grad_a = None
    if grad_x is not None or grad_m is not None:
        if grad_x is not None:
            grad_b = grad_x.triangular_solve(a.conj(), upper, not transpose, unitriangular)[0]
            if output_mask[1]:
                grad_a = -x.conj().matmul(grad_b.mT) if transpose else -grad_b.matmul(x.mH)
                if upper:
                    grad_a = grad_a.triu(int(unitriangular))
                else:
                    grad_a = grad_a.tril(-int(unitriangular))
        if grad_a is None:
            grad_a = _rt.zeros([1], dtype=a.dtype, device=a.device).expand_as(a)
        if grad_b is None:
            grad_b = _rt.zeros([1], dtype=b.dtype, device=b.device).expand_as(b)
        if output_mask[1] and grad_m is not None:
            grad_a = grad_a.add(grad_m)
    return (grad_b, grad_a)


def linalg_solve_triangular_backward(grad, A, X, upper, left, unitriangular, output_mask):
    # Assume left=True for simplicity. If f(A, B) = A^{-1}B, reverse AD gives
    # gB = A^{-H}gX, gA = -gB X^H, projected onto triangular
    A_requires_grad = output_mask[0]
    B_requires_grad = output_mask[1]
    if grad is None or (not A_requires_grad and not B_requires_grad):
        return (None, None)
    # We always need to compute G_B
    A_H = A.mH
    G_B = _rt.linalg_solve_triangular(A_H, grad, upper=not upper, left=left,
                                      unitriangular=unitriangular)
    if A_requires_grad:
        X_H = X.mH
        G_A = -_rt.matmul(G_B, X_H) if left else -_rt.matmul(X_H, G_B)
        G_A = G_A.triu(int(unitriangular)) if upper else G_A.tril(-int(unitriangular))
        return (G_A, G_B if B_requires_grad else None)
    return (None, G_B)


def cholesky_solve_backward(grad_x, self, input2, result, upper, output_mask):
    grad_self = grad_input2 = None
    if grad_x is not None:
        grad_self = grad_x.cholesky_solve(input2, upper=upper)
        if output_mask[1]:
            common_term = _rt.matmul(grad_self, result.mH)
            common_term = common_term + common_term.mH
            if upper:
                grad_input2 = -_rt.matmul(input2, common_term)
            else:
                grad_input2 = -_rt.matmul(common_term, input2)
    return (grad_self, grad_input2)


def _get_epsilon(dtype):
    """at::native::_get_epsilon: the machine epsilon of a real dtype."""
    return float(_np.finfo(dtype.np).eps)


def _masked_fmap(mask, f1, f2, t, *ts):
    """Apply f1 where ``mask`` is true and f2 elsewhere (over the batch entries)."""
    t_masked = t[mask]
    n = t_masked.numel()
    if n == t.numel():
        return f1(t, *ts)
    if n == 0:
        return f2(t, *ts)
    not_mask = mask.logical_not()
    return (_rt.empty_like(t).index_put_((mask,), f1(t_masked, *(x[mask] for x in ts)))
            .index_put_((not_mask,), f2(t[not_mask], *(x[not_mask] for x in ts))))


def linalg_det_backward(grad, det, A, LU, pivots):
    if grad is None:
        return None
    if A.numel() == 0:  # (the singular case needs A.numel() != 0; torch 2.13 gives A an empty
        return _rt.zeros_like(A)  # gradient here, not an undefined one)
    # The gradient G is the matrix solving A.mH G = det(A).conj() * grad * I
    d_diag = grad * det.conj()
    # Optimisation, Make it F-transposed as it's what lu_solve expects
    d = _rt.diag_embed(d_diag.unsqueeze(-1).expand_as(pivots)).mT
    eps = _get_epsilon(LU.dtype.to_real() if LU.dtype.is_complex else LU.dtype)
    # Optimisation if we are not going to compute higher-order gradients
    if not _rt.is_grad_enabled():
        # The formula is given by the solution of AX = det.conj() * det * I when A is
        # invertible; det is C^1, so if it's not invertible, we can apply a perturbation to the
        # LU decomposition and use the resulting matrix as a non-singular approximation
        LU_ = LU + _rt.diag_embed(_rt.where(LU.diagonal(0, -2, -1) == 0., eps, 0.))
        use_A_T = A.is_contiguous() and not A.is_complex()
        return _rt.linalg.lu_solve(LU_, pivots, d, left=True, adjoint=not use_A_T)
    # If we want to compute higher-order gradients, we need to recompute the LU decomposition
    # so that autograd computes the correct gradients wrt to A (cf. solve_backward)

    def non_singular(A, d, grad):
        return _rt.linalg.solve(A.mH, d)

    # The derivative may be then computed explicitly by noting that the gradient of the
    # derivative of the determinant is given in terms of the adjugate of a matrix (see
    # https://nhigham.com/2020/06/16/what-is-the-adjugate-of-a-matrix/)
    def singular(A, d, grad):
        U, S, Vh = _rt.linalg.svd(A)
        alpha = (_rt.linalg.det(U) * _rt.linalg.det(Vh)).conj() * grad
        D = _prod_safe_zeros_backward(alpha.unsqueeze(-1), S, S.dim() - 1)
        return (U * D.unsqueeze(-2)).matmul(Vh)

    # We could use the singular formula for all inputs but we try to filter out some inputs
    # via the masking, as computing an SVD is about 100 times slower than an lu_solve
    return _masked_fmap(det.abs() < 100. * eps, singular, non_singular, A, d, grad)


def slogdet_backward(grad_sign, grad_logabsdet, A, signdet, LU, pivots):
    # (d slogabs)*_A(g_sign, g_abs) = (g_abs - g_sign.conj() * sgn) * A^{-H}
    if grad_sign is None and grad_logabsdet is None:
        return None
    is_complex = A.is_complex()
    # In the real case grad_sign is always zero
    if not is_complex and grad_logabsdet is None:
        return None
    g = grad_logabsdet
    if is_complex:
        if grad_sign is not None:
            i = 1j
            if g is not None:
                g = g - i * _rt.imag(grad_sign.conj() * signdet)
            else:
                g = -i * _rt.imag(grad_sign.conj() * signdet)
        else:
            # Cast to complex explicitly
            g = g.to(A.dtype)
    # No need to handle the singular case separately here (as we do in det) since this
    # function is not differentiable on singular matrices
    # Optimisation, Make it F-transposed as it's what lu_solve expects
    d = _rt.diag_embed(g.unsqueeze(-1).expand_as(pivots)).mT
    if not _rt.is_grad_enabled():
        use_A_T = A.is_contiguous() and not A.is_complex()
        return _rt.linalg.lu_solve(LU, pivots, d, left=True, adjoint=not use_A_T)
    # If we want to compute further gradients, we need to recompute the LU decomposition so
    # that autograd computes the correct gradients wrt to A (cf. solve_backward)
    return _rt.linalg.solve(A.mH, d)


def linalg_solve_backward(gX, X, A, LU, pivots, left, B_requires_grad):
    # for X = A^{-1}B: gB = A^{-H}gX, gA = -gB X^H
    A_requires_grad = A.requires_grad
    if gX is None or (not A_requires_grad and not B_requires_grad):
        return (None, None)
    vector_case = _linalg_solve_is_vector_rhs(LU, gX)

    def vector_to_matrix(X):
        return X.unsqueeze(-1) if vector_case else X

    def matrix_to_vector(X):
        return X.squeeze(-1) if vector_case else X
    # If the user is going to compute higher order gradients, then we need to recompute the LU
    # and the pivots
    if _rt.is_grad_enabled():
        gB_ = _rt.linalg.solve(A.mH, vector_to_matrix(gX), left=left)
    else:
        use_A_T = A.is_contiguous() and not A.is_complex()
        gB_ = _rt.linalg.lu_solve(LU, pivots, vector_to_matrix(gX), left=left,
                                  adjoint=not use_A_T)
    gA_ = None
    if A_requires_grad:
        X_ = vector_to_matrix(X)
        gA_ = -gB_.matmul(X_.mH) if left else -X_.mH.matmul(gB_)
    return (gA_ if A_requires_grad else None,
            matrix_to_vector(gB_) if B_requires_grad else None)


# -- native normalisation and dropout kernels (ops/nn_norm_native.py) --------------------------------

def native_dropout_double_backward(ggI, grad, mask, scale):
    return ggI.type_as(grad) * (mask.type_as(grad) * scale)


def infinitely_differentiable_native_group_norm_backward(dY, dmean, drstd, X, mean, rstd, gamma,
                                                         N, C, HxW, group, eps, grad_input_mask):
    """FunctionsManual's: the gradients of native_group_norm's three outputs, with ops. Per group
    of D = C / group * HxW elements, xhat = (x - mean) * rstd; mean's gradient spreads evenly
    (1 / D), rstd's through d rstd / dx = -rstd^3 (x - mean) / D."""
    G, D_ = group, (C // group) * HxW
    X_ = X.reshape([N, G, D_])
    mean_, rstd_ = mean.reshape([N, G, 1]), rstd.reshape([N, G, 1])
    xhat = (X_ - mean_) * rstd_
    dX = dgamma = dbeta = None
    if dY is not None:
        dY_ = dY.reshape([N, C, HxW])
        g = (dY_ * gamma.reshape([1, C, 1]) if gamma is not None else dY_).reshape([N, G, D_])
        if grad_input_mask[0]:
            dX = (g - g.sum([2], True) / D_ - xhat * ((g * xhat).sum([2], True) / D_)) * rstd_
        if grad_input_mask[1] and gamma is not None:
            dgamma = (dY_ * xhat.reshape([N, C, HxW])).sum([0, 2])
        if grad_input_mask[2]:
            dbeta = dY_.sum([0, 2])
    if grad_input_mask[0]:
        if dmean is not None:
            term = (dmean.reshape([N, G, 1]) / D_).expand([N, G, D_])
            dX = term if dX is None else dX + term
        if drstd is not None:
            term = drstd.reshape([N, G, 1]) * (rstd_ * rstd_) * xhat * (-1.0 / D_)
            dX = term if dX is None else dX + term
        if dX is not None:
            dX = dX.reshape(list(X.shape))
    return dX, dgamma, dbeta


# -- FFT (FunctionsManual.cpp: fft_r2c_backward, fft_c2r_backward) ------------------------------

def fft_r2c_backward(grad, dim, normalization, onesided, last_dim_size):
    """_fft_r2c's gradient. A one-sided r2c is "view the real input as complex, c2c, keep the
    first half", so its adjoint zero-fills the dropped half, runs the inverse c2c and keeps the
    real part (the imaginary part is the gradient of the zero imaginary input)."""
    c2c = _rt.ops.get_packet("_fft_c2c")
    if not onesided:
        return _rt.real(c2c(grad, list(dim), normalization, False))
    last = _wrap_dim(dim[-1], grad.dim())
    half = grad.shape[last]
    full = grad
    if last_dim_size - half > 0:
        shape = list(grad.shape)
        shape[last] = last_dim_size
        full = grad.new_zeros(shape)
        full.slice(last, 0, half).copy_(grad)   # CopySlices under create_graph, as in torch
    return _rt.real(c2c(full, list(dim), normalization, False))


def fft_c2r_backward(grad, dim, normalization):
    """_fft_c2r's gradient. A c2r fills the missing half of its one-sided input by conjugate
    symmetry; its adjoint is the one-sided r2c of the gradient, with the entries that also stand
    for their mirrored partner (last-dim indices 1 .. n - (n // 2 + 1)) counted twice."""
    gI = _rt.ops.get_packet("_fft_r2c")(grad, list(dim), normalization, True)
    double_length = grad.shape[_wrap_dim(dim[-1], grad.dim())] - gI.shape[_wrap_dim(dim[-1], gI.dim())]
    if double_length > 0:  # also covers a signal of size zero
        gI.narrow(dim[-1], 1, double_length).mul_(2)
    return gI
