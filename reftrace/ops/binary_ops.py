"""atan2, logaddexp, logaddexp2 (ATen/native/BinaryOps.cpp), with torch's promotion: atan2
promotes integer inputs to the default float; the logaddexps have no integer kernels."""
import numpy as np

from ._pointwise_helpers import binary, float_of
from ._registry import derivatives, op
from .arithmetic import dispatch_check, inplace, quiet
from .pointwise_math import _WIDER

_WIDE_NP = {d.np: w for d, w in _WIDER.items()}


def _wide(fn):
    """fn computed one float wider (float16 in float32, float32 in float64), rounded once."""
    def compute(x, y):
        t = _WIDE_NP.get(x.dtype)
        return fn(x, y) if t is None else fn(x.astype(t), y.astype(t))
    return compute


@quiet
def _atan2(self, other):
    def compute(common):
        return dispatch_check("atan2_cpu", "f")(float_of(common))
    return binary(self, other, _wide(np.arctan2), compute=compute)


atan2 = op("atan2(Tensor self, Tensor other) -> Tensor", variants=("method", "function"))(_atan2)
derivatives(atan2, {"self, other": "atan2_backward(grad, self, other, grad_input_mask)"})
atan2_ = op("atan2_(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=("method",))(inplace(_atan2))
derivatives(atan2_, atan2.derivatives)  # (the functional's entry, with self as it was)


def _logaddexp_arrays(x, y):
    if x.dtype.kind != "c":
        return _wide(np.logaddexp)(x, y)
    # NumPy's logaddexp has no complex loop: torch's _log_add_exp_helper (BinaryOpsKernel.cpp):
    # log1p(exp(min - max)) + max, ordered by real part (ties: min is y), NaN in either -> NaN,
    # equal infinite real parts: min when -inf, log(exp(min) + exp(max)) when +inf
    x, y = np.broadcast_arrays(x, y)
    lt = x.real < y.real
    lo, hi = np.where(lt, x, y), np.where(lt, y, x)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        out = np.log1p(np.exp(lo - hi)) + hi
        same_inf = ~np.isfinite(lo.real) & (lo.real == hi.real)
        if same_inf.any():
            out = np.where(same_inf & (lo.real < 0), lo, out)
            out = np.where(same_inf & (lo.real > 0), np.log(np.exp(lo) + np.exp(hi)), out)
    nan = np.isnan(x.real) | np.isnan(x.imag) | np.isnan(y.real) | np.isnan(y.imag)
    return np.where(nan, x.dtype.type(complex(np.nan, np.nan)), out)


@quiet
def _logaddexp(self, other):
    return binary(self, other, _logaddexp_arrays, compute=dispatch_check("logaddexp_cpu", "fc"))


logaddexp = op("logaddexp(Tensor self, Tensor other) -> Tensor", variants=("method", "function"))(_logaddexp)
derivatives(logaddexp, {"self": "grad / (1 + exp(other - self)).conj()",
                        "other": "grad / (1 + exp(self - other)).conj()"})


@quiet
def _logaddexp2(self, other):
    return binary(self, other, _wide(np.logaddexp2), compute=dispatch_check("logaddexp2_cpu", "f"))


logaddexp2 = op("logaddexp2(Tensor self, Tensor other) -> Tensor", variants=("method", "function"))(_logaddexp2)
derivatives(logaddexp2, {"self": "grad / (1 + pow(2, other - self))",
                         "other": "grad / (1 + pow(2, self - other))"})


@quiet
def _hypot(self, other):
    return binary(self, other, _wide(np.hypot), compute=dispatch_check("hypot_cpu", "f"))


hypot = op("hypot(Tensor self, Tensor other) -> Tensor", variants=("method", "function"))(_hypot)
derivatives(hypot, {"self": "grad * self / result", "other": "grad * other / result"})
hypot_ = op("hypot_(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=("method",))(inplace(_hypot))
derivatives(hypot_, hypot.derivatives)


def _no_complex(name):
    def compute(common):
        if common.is_complex:
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return common
    return compute


@quiet
def _fmax(self, other):
    return binary(self, other, np.fmax, compute=_no_complex("fmax"))


fmax = op("fmax(Tensor self, Tensor other) -> Tensor", variants=("method", "function"))(_fmax)
derivatives(fmax, {
    "self": "grad.masked_fill((self >= other).logical_or_(other.isnan()).logical_not_(), 0)",
    "other": "grad.masked_fill((self >= other).logical_or_(other.isnan()), 0)"})


@quiet
def _fmin(self, other):
    return binary(self, other, np.fmin, compute=_no_complex("fmin"))


fmin = op("fmin(Tensor self, Tensor other) -> Tensor", variants=("method", "function"))(_fmin)
derivatives(fmin, {
    "self": "grad.masked_fill((self <= other).logical_or_(other.isnan()).logical_not_(), 0)",
    "other": "grad.masked_fill((self <= other).logical_or_(other.isnan()), 0)"})


@quiet
def _nextafter(self, other):
    return binary(self, other, np.nextafter, compute=dispatch_check("nextafter_cpu", "f"))


nextafter = op("nextafter(Tensor self, Tensor other) -> Tensor", variants=("method", "function"))(_nextafter)
derivatives(nextafter, {"self": "where(self != other, grad, 0)", "other": "zeros_like(other)"})
nextafter_ = op("nextafter_(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=("method",))(inplace(_nextafter))
derivatives(nextafter_, nextafter.derivatives)
