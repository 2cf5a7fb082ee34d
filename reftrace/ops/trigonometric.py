"""The inverse and hyperbolic trigonometric functions and sinc (ATen/native/UnaryOps.cpp):
acos asin atan acosh asinh atanh cosh sinh sinc, each with its in-place variant. Integer and
bool inputs compute in the default float dtype; float16 in float32 and float32 in float64,
rounded once (pointwise_math.py's rule)."""
import numpy as np

from ._registry import derivatives, op
from .arithmetic import inplace
from .pointwise_math import _unary_float

_FM = ("function", "method")


def _positive_nan(fn):
    """Outside the domain (acos(2)) torch's NaN has its sign bit clear; NumPy's (x86's default
    NaN) has it set, which a graph constant would print as ``-nan``."""
    def f(x):
        r = fn(x)
        if r.dtype.kind != "f":
            return r
        return np.where(np.isnan(r), np.abs(r), r) if r.ndim else (abs(r) if np.isnan(r) else r)
    return f


def _sinc(x):
    # sin(pi x) / (pi x), 1 at 0 (NumPy's sinc is this function)
    return np.sinc(x)


_FUNCTIONS = {
    "acos": np.arccos, "asin": np.arcsin, "atan": np.arctan, "acosh": np.arccosh,
    "asinh": np.arcsinh, "atanh": np.arctanh, "cosh": np.cosh, "sinh": np.sinh, "sinc": _sinc,
}
# derivatives.yaml's formulas (the in-place variants share them)
_DERIVATIVES = {
    "acos": "grad * -((-self * self + 1).rsqrt()).conj()",
    "asin": "grad * (-self * self + 1).rsqrt().conj()",
    "atan": "grad / (self * self + 1).conj()",
    "acosh": "(grad * ((self + 1).rsqrt() * (self - 1).rsqrt()).conj() if self.is_complex() "
             "else grad * (self * self - 1).rsqrt())",
    "asinh": "grad * (self.pow(2) + 1).rsqrt().conj()",
    "atanh": "grad * 1 / (1 - self.pow(2)).conj()",
    "cosh": "grad * self.sinh().conj()",
    "sinh": "grad * self.cosh().conj()",
    "sinc": "sinc_backward(grad, self)",
}

for _name, _fn in _FUNCTIONS.items():
    _kernel = _unary_float(_positive_nan(_fn))
    _formulas = {"self": _DERIVATIVES[_name]}
    globals()[_name] = derivatives(op(f"{_name}(Tensor self) -> Tensor", variants=_FM)(_kernel), _formulas)
    globals()[_name + "_"] = derivatives(
        op(f"{_name}_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(_kernel)), _formulas)
