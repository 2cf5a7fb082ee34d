"""exp2, erf, erfc (ATen/native/UnaryOps.cpp): integer and bool inputs compute in the default
float dtype; float16 in float32 and float32 in float64, rounded once (as pointwise_math.py).

NumPy has no erf: math.erf / math.erfc per element (correctly rounded in float64), vectorised
with np.frompyfunc, so these are slower than the other pointwise ops. erf of float16 is torch's
vectorised float approximation (``_erf_vectorized_float``), which its Half kernel runs.
"""
import math

import numpy as np

from .. import _dtype as D

from ._fma import fma
from ._iter import like_result, pointwise_result
from ._pointwise_helpers import float_of
from ._registry import derivatives, op
from .arithmetic import dispatch_check, inplace, quiet
from .pointwise_math import _WIDER

_FM = ("function", "method")
_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _float_kernel(fn, kernel_name=None):
    @quiet
    def kernel(self):
        dt = float_of(self.dtype)
        if kernel_name is not None:
            dispatch_check(kernel_name, "f")(dt)
        wide = _WIDER.get(dt, dt.np)
        arr = np.asarray(fn(self._array.astype(wide, copy=False)), dtype=wide)
        return pointwise_result(arr.astype(dt.np, copy=False), dt, self.device, (self,))
    return kernel


exp2 = op("exp2(Tensor self) -> Tensor", variants=_FM)(_float_kernel(np.exp2))
derivatives(exp2, {"self": "grad * result.conj() * M_LN2"})
exp2_ = op("exp2_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(exp2.kernel))
derivatives(exp2_, exp2.derivatives)  # (the functional's entry; result is self after the op)

def _erf_vectorized_float(x):
    """Vectorized<float>::erf (vec256_float.h), which vml::verf runs for Half (MKL's vsErf serves
    float and double): Abramowitz and Stegun's 7.1.26, 1 - (a1 t + ... + a5 t^5) exp(-x^2) with
    t = 1 / (1 + p|x|), in float with FMAs (Sleef's expf: float64's exp rounded)."""
    f = np.float32
    x = np.asarray(x, f)
    with np.errstate(all="ignore"):
        t = (f(1) / fma(f(0.3275911), np.abs(x), f(1))).astype(f)
        r = fma(f(1.061405429), t, f(-1.453152027))
        for c in (1.421413741, -0.284496736, 0.254829592):
            r = fma(r, t, f(c))
        e = np.exp(-(x * x).astype(np.float64)).astype(f)
        out = fma((-e * t).astype(f), r, f(1))
        return np.copysign(out, x)


def _erf(x):
    return _erf_vectorized_float(x) if x.dtype == np.float32 else _ERF(x)


erf = op("erf(Tensor self) -> Tensor", variants=_FM)(_float_kernel(_erf, "erf_vml_cpu"))
derivatives(erf, {"self": "M_2_SQRTPI * exp(-(self.pow(2))) * grad"})
erf_ = op("erf_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(erf.kernel))
derivatives(erf_, erf.derivatives)  # (self as it was before the op)

erfc = op("erfc(Tensor self) -> Tensor", variants=_FM)(_float_kernel(_ERFC, "erfc_vml_cpu"))
derivatives(erfc, {"self": "-M_2_SQRTPI * exp(-(self.pow(2))) * grad"})
erfc_ = op("erfc_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(erfc.kernel))
derivatives(erfc_, erfc.derivatives)


def _angle_kernel(name, factor):
    """deg2rad / rad2deg: self * (pi/180 or 180/pi), the factor in the (float) result dtype,
    written into ``empty_like(self)`` as UnaryOps.cpp does (so self's layout, not
    TensorIterator's)."""
    @quiet
    def kernel(self):
        if self.dtype.is_complex:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        dt = float_of(self.dtype)
        arr = self._array.astype(dt.np, copy=False) * dt.np.type(factor)
        return like_result(arr, dt, self.device, self)
    return kernel


deg2rad = op("deg2rad(Tensor self) -> Tensor", variants=_FM)(_angle_kernel("deg2rad", math.pi / 180))
derivatives(deg2rad, {"self": "deg2rad_backward(grad)"})
deg2rad_ = op("deg2rad_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(deg2rad.kernel))
derivatives(deg2rad_, deg2rad.derivatives)
rad2deg = op("rad2deg(Tensor self) -> Tensor", variants=_FM)(_angle_kernel("rad2deg", 180 / math.pi))
derivatives(rad2deg, {"self": "rad2deg_backward(grad)"})
rad2deg_ = op("rad2deg_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(rad2deg.kernel))
derivatives(rad2deg_, rad2deg.derivatives)


def _bool_predicate(name, fn, complex_error):
    """isposinf / isneginf / signbit: bool results; integers and bools computed directly."""
    def kernel(self):
        if self.dtype.is_complex:
            raise complex_error
        return pointwise_result(np.asarray(fn(self._array)), D.bool, self.device, (self,))
    return op(f"{name}(Tensor self) -> Tensor", variants=_FM, differentiable=False)(kernel)


isposinf = _bool_predicate("isposinf", np.isposinf, RuntimeError("isposinf does not support complex inputs."))
isneginf = _bool_predicate("isneginf", np.isneginf, RuntimeError("isneginf does not support complex inputs."))
signbit = _bool_predicate("signbit", np.signbit,
                          NotImplementedError("signbit is not implemented for complex tensors."))
