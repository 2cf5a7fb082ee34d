"""torch/masked/_ops.py, strided layout: masked reductions and normalizations.

Each function is torch's, line for line: it replaces the masked-out elements of the input by the
operation's identity (``_combine_input_and_mask``: a ``where`` with a constant tensor) and runs
the plain reduction on the result, so eager values and traced graphs are torch's (the same ATen
calls in the same order). Gradients flow through those ATen ops.

What is left out, and why:
- sparse COO / CSR inputs and masks: reftrace has only the strided layout (NumPy has no sparse
  storage), so torch's sparse branches are unreachable; the layout checks that end them keep
  torch's messages.
- MaskedTensor (torch/masked/maskedtensor): not implemented; ``_combine_input_and_mask`` takes
  plain tensors only.
- the docstrings torch generates from templates (torch/masked/_docs.py): one line each here.
"""
import numpy as np

import reftrace as torch
from reftrace import Tensor

__all__: list[str] = []


def _public(func):
    """torch's _apply_docstring_templates, less the templates: exposes ``func``."""
    __all__.append(func.__name__)
    return func


def _iinfo(dtype):
    """torch.iinfo(dtype) (its ``min`` and ``max``)."""
    return np.iinfo(dtype.np)


def _reduction_identity(op_name: str, input: Tensor, *args):
    """The identity of a reduction as a 0-dim tensor (``op(identity, x) == x``), or None where
    it is not defined for the input (mean, var, std; amax of bool)."""
    dtype = input.dtype
    device = input.device
    op_name = op_name.rsplit(".", 1)[-1]  # lstrip module name when present
    if op_name in {"sum", "cumsum"}:
        return torch.tensor(0, dtype=dtype, device=device)
    elif op_name in {"prod", "cumprod"}:
        return torch.tensor(1, dtype=dtype, device=device)
    elif op_name in {"amax", "argmax", "logaddexp"}:
        if input.is_floating_point():
            return torch.tensor(-float("inf"), dtype=dtype, device=device)
        elif dtype.is_signed or dtype == torch.uint8:
            return torch.tensor(int(_iinfo(dtype).min), dtype=dtype, device=device)
    elif op_name == "logsumexp":
        if input.is_floating_point():
            return torch.tensor(-float("inf"), dtype=dtype, device=device)
        elif input.is_complex():
            return torch.tensor(-float("inf") + 0j, dtype=dtype, device=device)
        elif dtype.is_signed or dtype == torch.uint8:
            return torch.tensor(int(_iinfo(dtype).min), dtype=dtype, device=device)
    elif op_name in {"amin", "argmin"}:
        if input.is_floating_point():
            return torch.tensor(float("inf"), dtype=dtype, device=device)
        elif dtype.is_signed or dtype == torch.uint8:
            return torch.tensor(int(_iinfo(dtype).max), dtype=dtype, device=device)
    elif op_name == "mean":
        # the identity of mean would be the mean itself (it depends on dim): ambiguous
        return None
    elif op_name == "norm":
        ord = args[0] if args else 2
        if ord == float("-inf"):
            if not input.is_floating_point():
                raise AssertionError(f"input must be floating point, got {input.dtype}")
            return torch.tensor(float("inf"), dtype=dtype, device=device)
        return torch.tensor(0, dtype=dtype, device=device)
    elif op_name == "median":
        # NaN: the implementation is nanmedian, which ignores NaNs
        dtype = input.dtype if input.is_floating_point() else torch.float
        return torch.tensor(float("nan"), dtype=dtype, device=device)
    elif op_name in {"var", "std"}:
        return None
    raise NotImplementedError(f"identity of {op_name} on {dtype} input")


def _canonical_dim(dim, ndim: int) -> tuple[int, ...]:
    """Return dim argument as a tuple of sorted dim values."""
    dims: list[int] = []
    if dim == ():
        # `dim=()` reduces over all dimensions today (pytorch/pytorch#29137)
        dim = None
    if dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dim_ = (dim,) if isinstance(dim, int) else dim
    for d in dim_:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _any(input: Tensor, dim: tuple, keepdim: bool):
    # torch.any with a tuple dim, one dim at a time (pytorch/pytorch#56586)
    r = input
    for d in reversed(dim):
        r = r.any(dim=d, keepdim=keepdim)
    return r


def _not_strided(what, layout):
    """The message torch gives where its sparse branches would take over."""
    return ValueError(f"{what} expects strided tensor (got {layout} tensor)")


def _where(mask: Tensor, input: Tensor, fill_value: Tensor) -> Tensor:
    """torch.where (torch's _where also takes sparse masks; reftrace has none)."""
    if mask.layout == torch.strided:
        return torch.where(mask, input, fill_value)
    raise ValueError(f"_where expects strided or sparse COO or sparse CSR tensor but got {mask.layout}")


def _input_mask(input: Tensor, *args, **kwargs) -> Tensor:
    """The canonical input mask: a bool tensor of the input's shape (the mask broadcast and
    converted), as torch builds it."""
    if input.layout != torch.strided:
        raise ValueError(
            f"_input_mask expects strided or sparse COO or sparse CSR tensor but got {input.layout}")
    mask = kwargs.get("mask")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError(
                "_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)")
        mask = torch.broadcast_to(mask.clone(), input.shape).to(dtype=torch.bool)
    return mask.to(dtype=torch.bool)


_REDUCTIONS = {"sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm",
               "var", "std", "logsumexp"}
_NORMALIZATIONS = {"softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"}


def _output_mask(op, input: Tensor, *args, **kwargs) -> Tensor:
    """Return output mask of masked operation applied to given arguments."""
    if not callable(op):
        raise ValueError(f"_output_mask expected masked operation (got {type(op).__name__} object)")
    if op.__name__ in _REDUCTIONS:
        if op.__name__ == "norm" and args:
            args = args[1:]  # lstrip ord argument
        dim = args[0] if args else kwargs.get("dim")
        outmask = _input_mask(input, *args, **kwargs)
        keepdim = kwargs.get("keepdim", False)
        dim_ = _canonical_dim(dim, input.ndim)
        return _any(outmask, dim_, bool(keepdim))
    if op.__name__ in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    raise ValueError(
        f"_output_mask expected masked operation (got callable {op.__module__}.{op.__name__})")


def _combine_input_and_mask(op, input: Tensor, mask, *args) -> Tensor:
    """The input with its masked-out elements replaced by the identity of ``op``."""
    if mask is None:
        return input
    canonical_mask = _input_mask(input, mask=mask)
    if not callable(op):
        raise ValueError(
            f"_combine_input_and_mask expected masked operation (got {type(op).__name__} object)")
    fill_value = _reduction_identity(op.__name__, input, *args)
    return _where(canonical_mask, input, fill_value)


# integer inputs sum and multiply in int64 unless a dtype is given (torch.sum's rule)
_PROMOTED_TO_INT64 = {torch.uint8, torch.bool, torch.int8, torch.int16, torch.int32}


@_public
def sum(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Sum of the masked-in elements (identity 0)."""
    if dtype is None:
        dtype = input.dtype
        if input.dtype in _PROMOTED_TO_INT64:
            dtype = torch.int64
    dim_ = _canonical_dim(dim, input.ndim)
    mask_input = _combine_input_and_mask(sum, input, mask)
    if mask_input.layout == torch.strided:
        return torch.sum(mask_input, dim_, bool(keepdim), dtype=dtype)
    raise ValueError(f"masked sum expects strided, sparse_coo or sparse_csr tensor (got {mask_input.layout} tensor)")


@_public
def prod(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Product of the masked-in elements (identity 1)."""
    if dtype is None:
        dtype = input.dtype
        if input.dtype in _PROMOTED_TO_INT64:
            dtype = torch.int64
    dim_ = _canonical_dim(dim, input.ndim)
    mask_input = _combine_input_and_mask(prod, input, mask)
    if mask_input.layout == torch.strided:
        # one dim at a time (pytorch/pytorch#56586)
        result = mask_input
        result = result.to(dtype=dtype)
        for d in reversed(dim_):
            result = result.prod(dim=d, keepdim=bool(keepdim))
        return result
    raise ValueError(f"masked prod expects strided, sparse_coo or sparse_csr tensor (got {mask_input.layout} tensor)")


@_public
def cumsum(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """Cumulative sum with masked-out elements counting as 0."""
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    mask_input = _combine_input_and_mask(sum, input, mask)
    if mask_input.layout == torch.strided:
        return torch.cumsum(mask_input, dim_, dtype=dtype).to(dtype=dtype)
    raise _not_strided("masked cumsum", mask_input.layout)


@_public
def cumprod(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """Cumulative product with masked-out elements counting as 1."""
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    mask_input = _combine_input_and_mask(prod, input, mask)
    if mask_input.layout == torch.strided:
        return torch.cumprod(mask_input, dim_, dtype=dtype).to(dtype=dtype)
    raise _not_strided("masked cumprod", mask_input.layout)


@_public
def amax(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Maximum of the masked-in elements (identity: the dtype's lowest value)."""
    if dtype is None:
        dtype = input.dtype
    mask_input = _combine_input_and_mask(amax, input, mask)
    dim_ = _canonical_dim(dim, mask_input.ndim)
    if mask_input.layout == torch.strided:
        return torch.amax(mask_input, dim_, bool(keepdim)).to(dtype=dtype)
    raise ValueError(f"masked amax expects strided, sparse_coo or sparse_csr tensor (got {mask_input.layout} tensor)")


@_public
def amin(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Minimum of the masked-in elements (identity: the dtype's highest value)."""
    if dtype is None:
        dtype = input.dtype
    mask_input = _combine_input_and_mask(amin, input, mask)
    dim_ = _canonical_dim(dim, mask_input.ndim)
    if mask_input.layout == torch.strided:
        return torch.amin(mask_input, dim_, bool(keepdim)).to(dtype=dtype)
    raise ValueError(f"masked amin expects strided, sparse_coo or sparse_csr tensor (got {mask_input.layout} tensor)")


@_public
def argmax(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Index of the maximum of the masked-in elements."""
    if dtype is None:
        dtype = input.dtype
    mask_input = _combine_input_and_mask(argmax, input, mask)
    if mask_input.layout == torch.strided:
        return torch.argmax(mask_input, dim, bool(keepdim)).to(dtype=dtype)
    raise _not_strided("masked argmax", mask_input.layout)


@_public
def argmin(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Index of the minimum of the masked-in elements."""
    if dtype is None:
        dtype = input.dtype
    mask_input = _combine_input_and_mask(argmin, input, mask)
    if mask_input.layout == torch.strided:
        return torch.argmin(mask_input, dim, bool(keepdim)).to(dtype=dtype)
    raise _not_strided("masked argmin", mask_input.layout)


@_public
def mean(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Mean of the masked-in elements: their sum over their count (nan where none is)."""
    dtype_source = "Optional"
    if dtype is None:
        dtype = input.dtype
        dtype_source = "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(
            f"mean(): Could not infer output dtype. {dtype_source} dtype must be either "
            f"a floating point or complex dtype. Got: {dtype}")
    if input.layout == torch.strided:
        if mask is None:
            # (torch: "TODO: compute count analytically")
            count = sum(torch.ones(input.shape, dtype=torch.int64, device=input.device), dim,
                        keepdim=keepdim)
            total = sum(input, dim, keepdim=keepdim, dtype=dtype)
        else:
            inmask = _input_mask(input, mask=mask)
            count = inmask.sum(dim=dim, keepdim=bool(keepdim))
            total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
        return total / count
    raise ValueError(f"masked mean expects strided or sparse_csr tensor (got {input.layout} tensor)")


@_public
def median(input: Tensor, dim: int = -1, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Median of the masked-in elements (nanmedian over masked-out NaNs)."""
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    is_float = input.is_floating_point()
    if not is_float:
        input = input.to(dtype=torch.float)
    mask_input = _combine_input_and_mask(median, input, mask)
    if mask_input.layout == torch.strided:
        output = torch.nanmedian(mask_input, dim_, keepdim).values
        if is_float:
            return output
        elif not is_float and not torch.isnan(output).any():
            return output.to(dtype=dtype)
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    raise _not_strided("masked median", mask_input.layout)


@_public
def logsumexp(input: Tensor, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """log(sum(exp(x))) over the masked-in elements (identity -inf)."""
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.ndim)
    mask_input = _combine_input_and_mask(logsumexp, input, mask)
    if mask_input.layout == torch.strided:
        return torch.logsumexp(mask_input, dim_, keepdim=keepdim).to(dtype=dtype)
    raise _not_strided("masked logsumexp", mask_input.layout)


def logaddexp(input: Tensor, other: Tensor, *, dtype=None, input_mask=None, other_mask=None) -> Tensor:
    """logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None) -> Tensor

    logaddexp of ``input`` and ``other``, their masked-out elements taken as -inf."""
    if dtype is None:
        dtype = input.dtype
    if input.layout == torch.strided and other.layout == torch.strided:
        mask_input = _combine_input_and_mask(logaddexp, input, input_mask)
        mask_other = _combine_input_and_mask(logaddexp, other, other_mask)
        return torch.logaddexp(mask_input, mask_other).to(dtype=dtype)
    raise ValueError(
        f"masked logaddexp expects strided tensors (got {input.layout} tensor for input, {other.layout} for other)")


@_public
def norm(input: Tensor, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Vector norm of the masked-in elements (identity 0; inf for ord=-inf)."""
    if dtype is None:
        dtype = input.dtype
    mask_input = _combine_input_and_mask(norm, input, mask, ord)
    if mask_input.layout == torch.strided:
        dim_ = _canonical_dim(dim, input.ndim)
        return torch.linalg.vector_norm(mask_input, ord, dim_, bool(keepdim), dtype=dtype)
    raise _not_strided("masked norm", mask_input.layout)


def _std_var(input: Tensor, dim, unbiased, *, correction_opt, keepdim, dtype, mask,
             take_sqrt) -> Tensor:
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)  # (torch: sym_float)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = torch.float32
    compute_dtype = dtype
    if not (compute_dtype.is_floating_point or compute_dtype.is_complex):
        compute_dtype = torch.float32
    if input.layout != torch.strided:
        raise _not_strided("masked std/var", input.layout)
    if mask is None:
        # (torch: "TODO: compute count analytically")
        count = sum(torch.ones(input.shape, dtype=torch.int64, device=input.device), dim,
                    keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype)
    else:
        inmask = _input_mask(input, mask=mask)
        count = inmask.sum(dim=dim, keepdim=True)
        sample_total = sum(input, dim, keepdim=True, dtype=dtype, mask=inmask)
    sample_mean = torch.divide(sample_total, count)
    x = torch.subtract(input, sample_mean)
    if mask is None:
        total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute_dtype)
    else:
        total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        real_dtype = compute_dtype.to_real()  # (torch: corresponding_real_dtype)
        count = count.to(real_dtype)
        count = torch.subtract(count, correction)
        count = torch.maximum(count, count.new_zeros([]))
    output = torch.divide(total, count).to(dtype=dtype)
    if take_sqrt:
        output = torch.sqrt(output)
    return output


@_public
def var(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor:
    """Sample variance of the masked-in elements (nan where none is)."""
    return _std_var(input=input, dim=dim, unbiased=unbiased, correction_opt=correction,
                    keepdim=keepdim, dtype=dtype, mask=mask, take_sqrt=False)


@_public
def std(input: Tensor, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor:
    """Sample standard deviation of the masked-in elements (nan where none is)."""
    return _std_var(input=input, dim=dim, unbiased=unbiased, correction_opt=correction,
                    keepdim=keepdim, dtype=dtype, mask=mask, take_sqrt=True)


@_public
def softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """softmax with masked-out elements at -inf (so they come out 0)."""
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    mask_input = _combine_input_and_mask(amax, input, mask)
    if mask_input.layout == torch.strided:
        return torch.nn.functional.softmax(mask_input, dim_, dtype=dtype)
    raise _not_strided("masked softmax", mask_input.layout)


@_public
def log_softmax(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """log_softmax with masked-out elements at -inf."""
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    mask_input = _combine_input_and_mask(amax, input, mask)
    if mask_input.layout == torch.strided:
        return torch.nn.functional.log_softmax(mask_input, dim_, dtype=dtype)
    raise _not_strided("masked log_softmax", mask_input.layout)


@_public
def softmin(input: Tensor, dim: int, *, dtype=None, mask=None) -> Tensor:
    """softmin with masked-out elements at +inf (so they come out 0)."""
    if dtype is None:
        dtype = input.dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    mask_input = _combine_input_and_mask(amin, input, mask)
    if mask_input.layout == torch.strided:
        return torch.nn.functional.softmin(mask_input, dim_, dtype=dtype)
    raise _not_strided("masked softmin", mask_input.layout)


@_public
def normalize(input: Tensor, ord: float, dim: int, *, eps: float = 1e-12, dtype=None,
              mask=None) -> Tensor:
    """The input over its masked norm along ``dim`` (at least ``eps``); masked-out elements 0."""
    if dtype is None:
        dtype = input.dtype
    # (torch: "TODO: eliminate mask_input as unnecessary when using masked divide")
    mask_input = _combine_input_and_mask(sum, input, mask)
    if mask_input.layout == torch.strided:
        nrm_ = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
        denom = torch.maximum(nrm_, nrm_.new_full([], eps))
        return torch.divide(mask_input, denom)
    raise _not_strided("masked normalize", mask_input.layout)

