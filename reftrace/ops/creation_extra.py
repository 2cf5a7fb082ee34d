"""new_empty_strided and empty_permuted (ATen/native/TensorFactories.cpp): uninitialised
tensors with given strides, or laid out in a given dimension order; logspace
(RangeFactories.cpp)."""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh
from ._registry import op
from .casts import checked_scalar
from .creation import _OPTIONS, _check_0dim, _check_0dims, _filled, _range_setup


@op(f"new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, {_OPTIONS}) -> Tensor",
    variants=("method",))
def new_empty_strided(self, size, stride, dtype, layout, device, pin_memory):
    return _filled(size, None, dtype or self.dtype, device or self.device, tuple(stride))


@op(f"empty_permuted(SymInt[] size, int[] physical_layout, *, {_OPTIONS}) -> Tensor")
def empty_permuted(size, physical_layout, dtype, layout, device, pin_memory):
    n = len(size)
    if sorted(physical_layout) != list(range(n)):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                           f"i.e. len(size) = {n} is not equal to len(physical_layout) = {len(physical_layout)}"
                           if len(physical_layout) != n else "physical_layout must be a permutation")
    # the strides of a contiguous tensor of the permuted sizes, put back in logical order
    strides = [0] * n
    step = 1
    for d in reversed(physical_layout):
        strides[d] = step
        step *= max(size[d], 1)
    return _filled(size, None, dtype or D.get_default_dtype(), device, tuple(strides))


# -- logspace (RangeFactories.cpp's logspace_out) ---------------------------------------------------

def _logspace(start, end, steps, base, dtype, device):
    """``base ** exponent``: the exponents step from start in the first half and back from end in
    the second, in the result type (double for integral results), the power in double."""
    dtype, device, xp = _range_setup(start, end, steps, dtype, device, "logspace")
    if steps <= 1:  # base ** start, filled in (no conversion of start and end to the dtype)
        wide = complex if isinstance(start, complex) or dtype.is_complex else float
        values = np.full(steps, checked_scalar(wide(base) ** wide(start), dtype) if steps else 0,
                         dtype=dtype.np)
        return _fresh(values if xp is np else xp.asarray(values), dtype, device)
    s, e = (np.asarray(checked_scalar(v, dtype)).astype(dtype.np) for v in (start, end))
    # exponents in double for integral results, float for half (its opmath type), else the dtype
    compute = np.dtype(np.float64 if dtype.category <= 1 else np.float32 if dtype is D.float16 else dtype.np)
    with np.errstate(all="ignore"):
        s, e = s.astype(compute), e.astype(compute)
        step = (e - s) / compute.type(steps - 1)
        idx = np.arange(steps)
        exps = np.where(idx < steps // 2, s + step * idx.astype(compute),
                        e - step * (steps - 1 - idx).astype(compute))
        wide = np.complex128 if dtype.is_complex else np.float64
        values = np.power(wide(base), exps.astype(wide)).astype(dtype.np)
    return _fresh(values if xp is np else xp.asarray(values), dtype, device)


_LOGSPACE = "int steps, float base=10.0, *, " + _OPTIONS + ") -> Tensor"
# registration order = torch's parser order: the Tensor overloads before the Scalar one


@op("logspace.Tensor_Tensor(Tensor start, Tensor end, " + _LOGSPACE)
def logspace_tensor_tensor(start, end, steps, base, dtype, layout, device, pin_memory):
    return _logspace(*_check_0dims(start, end, "logspace"), steps, base, dtype, device)


@op("logspace.Tensor_Scalar(Tensor start, Scalar end, " + _LOGSPACE)
def logspace_tensor_scalar(start, end, steps, base, dtype, layout, device, pin_memory):
    return _logspace(_check_0dim(start, "start", "logspace"), end, steps, base, dtype, device)


@op("logspace.Scalar_Tensor(Scalar start, Tensor end, " + _LOGSPACE)
def logspace_scalar_tensor(start, end, steps, base, dtype, layout, device, pin_memory):
    return _logspace(start, _check_0dim(end, "end", "logspace"), steps, base, dtype, device)


@op("logspace(Scalar start, Scalar end, " + _LOGSPACE)
def logspace(start, end, steps, base, dtype, layout, device, pin_memory):
    return _logspace(start, end, steps, base, dtype, device)
