"""The shared shape of pointwise kernels: promote, broadcast, compute in NumPy, lay out as torch.

A binary kernel is then a line: ``return binary(a, b, np.add)``. The compute dtype is torch's
result type, never NumPy's promotion; in-place variants check torch's cast rule and write through
the destination's array, so views see the change.
"""
import numpy as np

from .. import _dtype as D
from .._promotion import check_inplace_cast, result_type
from .._tensor import Tensor, _fresh, _init, _new, contiguous_strides, xp_of
from ._iter import broadcast_shapes, empty_strided_array, pointwise_result, strides_for
from ._layout_cache import remembered


def as_np(t, dtype):
    """t's array in dtype (no copy when it already is)."""
    a = t._array
    return a if a.dtype is dtype.np or a.dtype == dtype.np else a.astype(dtype.np)


_UFUNC = np.ufunc


def binary(a, b, fn, *, compute=None, out_dtype=None):
    """a (op) b with torch's promotion. ``compute``: override the computation dtype (e.g. true
    division of integers computes in the default float); ``out_dtype``: result dtype (comparisons)."""
    x, y = a._array, b._array
    dt = a.dtype
    if dt is b.dtype and compute is None and out_dtype is None and a._stride is None \
            and b._stride is None and not a._wrapped and not b._wrapped:
        # the plain case, as the general path below computes it: one dtype (promotion has
        # nothing to do), contiguous operands (broadcast ones too: ``x + bias``), so a
        # contiguous result (pointwise_result's rule; not 0-d, where NumPy's ufuncs return
        # scalars)
        shape = x.shape
        if y.shape != shape:  # (torch's error for shapes that do not broadcast, as below)
            shape = broadcast_shapes(shape, y.shape) if x.ndim and y.ndim else shape or y.shape
        nd = len(shape)
        if nd == 1 or (nd > 1 and 0 not in shape and 1 not in shape):
            arr = fn(x, y)
            # (``is`` first: NumPy hands out one descriptor per builtin dtype, == costs ~100 ns;
            # a ufunc's fresh 1-d result is contiguous, so _fresh need not check)
            if arr.dtype is dt.np or arr.dtype == dt.np:
                return _fresh(arr, dt, a.device, nd == 1 and type(fn) is _UFUNC)
            return pointwise_result(arr.astype(dt.np), dt, a.device, (a, b))
    if dt is b.dtype and fn in _EXACT and x.shape == y.shape and compute is None \
            and out_dtype is None and not a._wrapped and not b._wrapped and type(x) is np.ndarray \
            and type(y) is np.ndarray and x.ndim > 1 and (dt is D.float32 or dt is D.float64):
        # two strided operands of one shape and float dtype (``x.transpose(0, 1) + y`` in an
        # encoder layer), as the general path below computes it: torch's output layout
        # (remembered per operand layout), the values written straight into it. Only correctly
        # rounded ufuncs: their values cannot depend on the loop NumPy picks for a layout
        strides = _same_shape_strides(x.shape, a._stride, b._stride)
        if strides is None:
            return _fresh(fn(x, y), dt, a.device)
        out = empty_strided_array(np, x.shape, strides, dt.np)
        fn(x, y, out=out)
        return _init(_new(Tensor), out, dt, a.device, strides)
    if b._wrapped and not a._wrapped and b.dtype.category <= a.dtype.category \
            and (x.ndim == 1 or (x.ndim > 1 and a._stride is None and 0 not in x.shape
                                 and 1 not in x.shape)):
        # a tensor and a wrapped number of no higher category (``x * 1.5``, ``mask == 0``, the
        # constants of a traced chain), as the general path below computes it: a's dtype
        # (result_type's answer) through ``compute``, the number cast to it, and a contiguous
        # result (pointwise_result's rule for a 1-d or contiguous operand, the number being
        # 0-d; not 0-d: NumPy would return a scalar)
        if compute is None:  # (a traced chain's constants: a's own array, the number cast)
            cdt = a.dtype
            arr = fn(x, y if y.dtype is cdt.np else y.astype(cdt.np))
        else:
            cdt = compute(a.dtype)
            arr = fn(as_np(a, cdt), as_np(b, cdt))
        odt = out_dtype or cdt
        if arr.dtype is not odt.np and arr.dtype != odt.np:
            arr = arr.astype(odt.np)
        return _fresh(arr, odt, a.device)
    if x.ndim and y.ndim and x.shape != y.shape:
        broadcast_shapes(x.shape, y.shape)  # torch's error text, before dtype errors
    if b._wrapped and not a._wrapped and b.dtype.category <= a.dtype.category:
        # (result_type's answer, without its general walk: a tensor and a wrapped number of no
        # higher category, as in ``x * 1.5`` or a traced ``size // 2``, keep the tensor's dtype)
        common = a.dtype
    else:
        common = result_type(a, b)
    cdt = compute(common) if compute is not None else common
    arr = fn(as_np(a, cdt), as_np(b, cdt))
    odt = out_dtype or cdt
    if arr.dtype != odt.np:
        arr = arr.astype(odt.np)
    return pointwise_result(arr, odt, a.device, (a, b))


_EXACT = (np.add, np.subtract, np.multiply, np.true_divide)  # (== tests identity for ufuncs)


@remembered
def _same_shape_strides(shape, stride_a, stride_b):
    """pointwise_strides for two operands of ``shape`` with these kept strides (None:
    contiguous), as a tensor keeps them (None when contiguous)."""
    layouts = tuple((shape, contiguous_strides(shape) if st is None else st)
                    for st in (stride_a, stride_b))
    if 0 not in shape and 1 not in shape and stride_a is None and stride_b is None:
        return None
    strides = strides_for(shape, layouts)
    return None if strides is None or strides == contiguous_strides(shape) else tuple(strides)


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
