"""The shared shape of pointwise kernels: promote, broadcast, compute in NumPy, lay out as torch.

A binary kernel is then a line: ``return binary(a, b, np.add)``. The compute dtype is torch's
result type, never NumPy's promotion; in-place variants check torch's cast rule and write through
the destination's array, so views see the change.
"""
from .. import _dtype as D
from .._promotion import check_inplace_cast, result_type
from .._tensor import xp_of
from ._iter import broadcast_shapes, pointwise_result


def as_np(t, dtype):
    """t's array in dtype (no copy when it already is)."""
    a = t._array
    return a if a.dtype == dtype.np else a.astype(dtype.np)


def binary(a, b, fn, *, compute=None, out_dtype=None):
    """a (op) b with torch's promotion. ``compute``: override the computation dtype (e.g. true
    division of integers computes in the default float); ``out_dtype``: result dtype (comparisons)."""
    if a._array.ndim and b._array.ndim and a._array.shape != b._array.shape:
        broadcast_shapes(a._array.shape, b._array.shape)  # torch's error text, before dtype errors
    if b._wrapped and a.dtype.category == 2 and b.dtype.category <= 2 and not a._wrapped \
            and a._array.ndim:
        # (result_type's answer, without its general walk: a floating tensor with dimensions
        # and a wrapped bool, int or float number, as in ``x * 1.5``, stays the tensor's dtype)
        common = a.dtype
    else:
        common = result_type(a, b)
    cdt = compute(common) if compute is not None else common
    arr = fn(as_np(a, cdt), as_np(b, cdt))
    odt = out_dtype or cdt
    if arr.dtype != odt.np:
        arr = arr.astype(odt.np)
    return pointwise_result(arr, odt, a.device, (a, b))


def unary(a, fn, *, compute=None):
    """fn(a); ``compute`` maps the input dtype to the computation dtype (int -> float for sin...)."""
    cdt = compute(a.dtype) if compute is not None else a.dtype
    arr = fn(as_np(a, cdt))
    if arr.dtype != cdt.np:
        arr = arr.astype(cdt.np)
    return pointwise_result(arr, cdt, a.device, (a,))


def float_of(d):
    """Integral and bool inputs compute in the default float dtype (torch's int -> float ops)."""
    return d if d.is_floating_point or d.is_complex else D.get_default_dtype()


def write_inplace(self, result):
    """Store a pointwise result into ``self`` after torch's in-place cast check."""
    check_inplace_cast(result.dtype, self.dtype)
    if result._array.shape != self._array.shape:
        shape = broadcast_shapes(self._array.shape, result._array.shape)
        if shape != self._array.shape:
            raise RuntimeError(
                f"output with shape [{', '.join(map(str, self._array.shape))}] doesn't match the "
                f"broadcast shape [{', '.join(map(str, shape))}]")
    xp_of(self).copyto(self._array, result._array, casting="unsafe")
    self._version += 1
    return self
