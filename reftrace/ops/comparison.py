"""Comparisons (eq ne lt le gt ge), the float predicates (isnan isinf isfinite), the bitwise ops
(bitwise_and/or/xor/not, shifts, and the ``__and__``-style ops Python's operators record) and
the logical ops, with their in-place variants.

Comparisons and logical ops return bool; they compare in the promoted type (``uint8 == -1``
compares with 255, as torch). In place, the bool result is written back in self's dtype
(``x.eq_(y)`` leaves 1.0s and 0.0s in a float tensor). Bitwise ops exist for bool and integral
dtypes only; shifts for integral ones only.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import contiguous_strides, xp_of
from ._iter import like_result, pointwise_result, strides_for, wrap_strided
from ._pointwise_helpers import binary
from ._registry import op
from .arithmetic import binary_kernel, dispatch_check, inplace, register_alias, register_binary

_FM = ("function", "method")


# -- comparisons ----------------------------------------------------------------------------------

def _comparison(name, fn):
    check = dispatch_check(f"{name}_cpu", "bifc" if name in ("eq", "ne") else "bif")  # no complex <
    return lambda self, other: binary(self, other, fn, compute=check, out_dtype=D.bool)


_COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                "gt": np.greater, "ge": np.greater_equal}
for _name, _fn in _COMPARISONS.items():
    register_binary(_name, _comparison(_name, _fn))
for _alias, _target in (("greater", "gt"), ("less", "lt"), ("greater_equal", "ge"),
                        ("less_equal", "le"), ("not_equal", "ne")):
    register_alias(_alias, _target)


def _predicate(fn, integral_value, steps):
    """isnan/isinf/isfinite: bool and integer tensors are never nan or inf (torch returns
    ``zeros_like``/``ones_like(self)``: self's layout). Float ones are compositions in
    TensorCompare.cpp, and the result has the layout of the last step: ``steps(shape, strides)``
    gives it."""
    def kernel(self):
        if self.dtype.category <= 1:
            return like_result(xp_of(self).full(self.shape_tuple, integral_value), D.bool, self.device, self)
        arr = fn(self._array)
        shape = self.shape_tuple
        return wrap_strided(arr, D.bool, self.device, steps(shape, self.stride()))
    return kernel


def _unary_step(shape, strides):
    return strides_for(shape, [(shape, strides)]) or contiguous_strides(shape)


def _scalar_step(shape, strides):  # x (op) a Python scalar: a 0-dim operand joins TensorIterator
    return strides_for(shape, [(shape, strides), ((), ())]) or contiguous_strides(shape)


def _isnan_steps(shape, strides):  # self != self
    return _unary_step(shape, strides)


def _isinf_steps(shape, strides):  # self.abs() == inf
    return _scalar_step(shape, _unary_step(shape, strides))


def _isfinite_steps(shape, strides):  # (self == self) * (self.abs() != inf)
    both = _unary_step(shape, strides)
    return strides_for(shape, [(shape, both), (shape, _isinf_steps(shape, strides))]) \
        or contiguous_strides(shape)


for _name, _fn, _int_value, _steps in (("isnan", np.isnan, False, _isnan_steps),
                                       ("isinf", np.isinf, False, _isinf_steps),
                                       ("isfinite", np.isfinite, True, _isfinite_steps)):
    op(f"{_name}(Tensor self) -> Tensor", variants=_FM)(_predicate(_fn, _int_value, _steps))


# -- bitwise --------------------------------------------------------------------------------------

def _bitwise(kernel_name, fn, kinds="bi"):
    return binary_kernel(fn, dispatch_check(kernel_name, kinds))


for _name, _fn in (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)):
    _kernel = _bitwise(f"bitwise_{_name}_cpu", _fn)
    register_binary(f"bitwise_{_name}", _kernel, ("Tensor", "Scalar", "Scalar_Tensor"), precheck=True)
    # x & y records aten::__and__, x &= y aten::__iand__ (the operators' own ATen ops)
    register_binary(f"__{_name}__", _kernel, inplace_name=f"__i{_name}__", precheck=True)

# shifts: torch's kernels give 0 (left) or the sign fill (right) for shifts past the width or
# negative ones, as NumPy's do
for _short, _long, _fn in (("l", "left", np.left_shift), ("r", "right", np.right_shift)):
    _kernel = _bitwise(f"{_short}shift_cpu", _fn, "i")
    register_binary(f"__{_short}shift__", _kernel, inplace_name=f"__i{_short}shift__", precheck=True)
    register_binary(f"bitwise_{_long}_shift", _kernel, ("Tensor", "Tensor_Scalar", "Scalar_Tensor"),
                    inplace_overloads=("Tensor", "Tensor_Scalar"), precheck=True)


def _bitwise_not(self):
    dispatch_check("bitwise_not_cpu", "bi")(self.dtype)
    return pointwise_result(np.invert(self._array), self.dtype, self.device, (self,))


op("bitwise_not(Tensor self) -> Tensor", variants=_FM)(_bitwise_not)
op("bitwise_not_(Tensor(a!) self) -> Tensor(a!)", variants=("method",))(inplace(_bitwise_not))


# -- logical --------------------------------------------------------------------------------------

for _name, _fn in (("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)):
    register_binary(f"logical_{_name}",
                    lambda self, other, _fn=_fn: binary(self, other, _fn, out_dtype=D.bool),
                    ("",), inplace_overloads=("",))


def _logical_not(self):
    return pointwise_result(np.logical_not(self._array), D.bool, self.device, (self,))


op("logical_not(Tensor self) -> Tensor", variants=_FM)(_logical_not)
op("logical_not_(Tensor(a!) self) -> Tensor(a!)", variants=("method",))(inplace(_logical_not))


# -- closeness ------------------------------------------------------------------------------------

@op("isclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, "
    "bool equal_nan=False) -> Tensor", variants=("function", "method"), differentiable=False)
def isclose(self, other, rtol, atol, equal_nan):
    """|self - other| <= atol + rtol * |other| (torch's formula), elementwise; no promotion."""
    if self.dtype is not other.dtype:
        raise RuntimeError(f"{self.dtype.ir_name} did not match {other.dtype.ir_name}")
    xp = xp_of(self)
    a, b = self._array, other._array
    if self.dtype is D.bool:
        a, b = a.astype(np.int64), b.astype(np.int64)
    with np.errstate(all="ignore"):
        close = xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return pointwise_result(xp.asarray(close), D.bool, self.device, (self, other))


@op("allclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, "
    "bool equal_nan=False) -> bool", variants=("function", "method"), differentiable=False)
def allclose(self, other, rtol, atol, equal_nan):
    return bool(isclose.kernel(self, other, rtol, atol, equal_nan)._array.all())
