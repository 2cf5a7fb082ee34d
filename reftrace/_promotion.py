"""Type promotion exactly as torch 2.13 computes it.

``promote_types`` mirrors c10's promoteTypes table; ``result_type`` mirrors
aten/src/ATen/native/TypeProperties.cpp: operands fall into three buckets (tensors with dims,
0-dim tensors, wrapped Python numbers) and a lower-priority bucket only matters when it is of a
higher category (bool < integral < floating < complex). NumPy's own promotion differs (NumPy 2
rules), so kernels never rely on it: they cast to the dtype computed here.
"""
from . import _dtype as D

_INT_ORDER = (D.int8, D.int16, D.int32, D.int64)


def _promote_uncached(a, b):
    if a is b:
        return a
    if a is D.bool:
        return b
    if b is D.bool:
        return a
    if a.is_complex or b.is_complex:
        if a.is_complex and b.is_complex:
            return a if a.itemsize >= b.itemsize else b
        c, other = (a, b) if a.is_complex else (b, a)
        if other is D.float64:
            return D.complex128
        return c
    if a.is_floating_point or b.is_floating_point:
        if a.is_floating_point and b.is_floating_point:
            return a if a.itemsize >= b.itemsize else b
        return a if a.is_floating_point else b
    # both integral
    if a is D.uint8 or b is D.uint8:
        other = b if a is D.uint8 else a
        return D.int16 if other is D.int8 else other
    return a if _INT_ORDER.index(a) >= _INT_ORDER.index(b) else b


_TABLE = {(a, b): _promote_uncached(a, b) for a in D.ALL_DTYPES for b in D.ALL_DTYPES}


def promote_types(a, b):
    """torch.promote_types: the smallest dtype both can be cast to without loss of category."""
    try:
        return _TABLE[a, b]
    except KeyError:
        return _promote_barebones_unsigned(a, b)


def _promote_barebones_unsigned(a, b):
    """c10's promoteTypes for uint16/32/64: only with itself or a floating type (which wins)."""
    if a is b:
        return a
    if a.is_floating_point:
        return a
    if b.is_floating_point:
        return b
    raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted "
                       f"to promote {a.ir_name} and {b.ir_name}")


def _combine(higher, lower):
    # TypeProperties.cpp: promote_skip_undefined + combine_categories
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        # a float keeps its size: float32 with a complex128 0-dim tensor is complex64
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is D.bool or lower.is_floating_point or lower.is_complex:
        return promote_types(higher, lower)
    return higher


def _wrapped_dtype(t):
    # a wrapped Python float counts as the default dtype, a complex as the default complex dtype
    d = t.dtype
    if d.is_floating_point:
        return D.get_default_dtype()
    if d.is_complex:
        return D.default_complex_dtype()
    return d


def result_type(*operands):
    """torch.result_type over tensors (wrapped numbers flagged) and Python numbers."""
    if len(operands) == 2:
        # the common case first: two tensors of one dtype, neither a wrapped number, promote to
        # that dtype whatever their buckets
        a, b = operands
        if getattr(a, "dtype", None) is getattr(b, "dtype", 0) and not a._wrapped and not b._wrapped:
            return a.dtype
    dim_r = zero_r = wrapped_r = None
    for t in operands:
        if t is None:
            continue
        if not hasattr(t, "_wrapped"):  # a bare Python number behaves as a wrapped number
            d = D.python_scalar_dtype(t)
            d = D.get_default_dtype() if d.is_floating_point else D.default_complex_dtype() if d.is_complex else d
            wrapped_r = d if wrapped_r is None else promote_types(wrapped_r, d)
        elif t._array.ndim:
            dim_r = t.dtype if dim_r is None else promote_types(dim_r, t.dtype)
        elif t._wrapped:
            d = _wrapped_dtype(t)
            wrapped_r = d if wrapped_r is None else promote_types(wrapped_r, d)
        else:
            zero_r = t.dtype if zero_r is None else promote_types(zero_r, t.dtype)
    return _combine(dim_r, _combine(zero_r, wrapped_r))


def can_cast(from_, to):
    """torch.can_cast: no float->integral, no complex->non-complex, no non-bool->bool."""
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    if from_ is not D.bool and to is D.bool:
        return False
    return True


def check_inplace_cast(result, out_dtype):
    """The in-place / out= rule: the computed type must be castable to the destination."""
    if not can_cast(result, out_dtype):
        raise RuntimeError(
            f"result type {result.ir_name} can't be cast to the desired output type {out_dtype.ir_name}")
