"""More pointwise ops of ATen/native/BinaryOps.cpp and UnaryOps.cpp: copysign, heaviside,
float_power, ldexp, gcd, lcm, xlogy, logit, frexp, the functional fill, and sgn. Integer inputs
of the float ops (copysign, xlogy, logit) compute in the default float dtype, as torch's
``promote_integer_inputs_to_float`` iterators do."""
import numpy as np

from .. import _dtype as D
from .._tensor import scalar_to_tensor
from ._decomposed import decomposed
from ._iter import like_result, pointwise_result
from ._pointwise_helpers import binary, float_of, unary
from ._registry import derivatives, get_packet, op
from .arithmetic import _sign_arrays, dispatch_check, inplace, quiet
from .binary_ops import _wide

_FM = ("function", "method")


def _P(name):
    return get_packet(name)


# -- copysign --------------------------------------------------------------------------------------

@quiet
def _copysign(self, other):
    return binary(self, other, np.copysign, compute=lambda d: dispatch_check("copysign_cpu", "f")(float_of(d)))


copysign = op("copysign.Tensor(Tensor self, Tensor other) -> Tensor", variants=_FM)(_copysign)
derivatives(copysign, {"self": "copysign_tensor_self_backward(grad, self, result)",
                       "other": "zeros_like(other)"})
copysign_scalar = op("copysign.Scalar(Tensor self, Scalar other) -> Tensor", variants=_FM)(
    lambda self, other: _copysign(self, scalar_to_tensor(other, self.device)))
derivatives(copysign_scalar, {"self": "copysign_tensor_self_backward(grad, self, result)"})
copysign_ = op("copysign_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=("method",))(
    inplace(_copysign))
derivatives(copysign_, {"self": "copysign_tensor_self_backward(grad, self, result)",
                        "other": "zeros_like(other)"})
copysign__scalar = op("copysign_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", variants=("method",))(
    inplace(lambda self, other: _copysign(self, scalar_to_tensor(other, self.device))))
derivatives(copysign__scalar, {"self": "copysign_tensor_self_backward(grad, self, result)"})


# -- heaviside ----------------------------------------------------------------------------------

def _heaviside_arrays(x, v):
    return np.where(x == 0, v, (x > 0).astype(x.dtype)).astype(x.dtype, copy=False)


def _heaviside(self, values):
    if self.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return binary(self, values, _heaviside_arrays, compute=dispatch_check("heaviside_cpu", "bif"))


heaviside = op("heaviside(Tensor self, Tensor values) -> Tensor", variants=_FM)(_heaviside)
derivatives(heaviside, {"self": "not_implemented('heaviside')", "values": "not_implemented('heaviside')"})
heaviside_ = op("heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)", variants=("method",))(inplace(_heaviside))


# -- float_power: pow in double (complex double) ------------------------------------------------

def _float_power_dtype(*args):
    return D.complex128 if any(a.dtype.is_complex if hasattr(a, "dtype") else isinstance(a, complex)
                               for a in args) else D.float64


@decomposed("float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", variants=_FM)
def float_power(self, exponent):
    dt = _float_power_dtype(self, exponent)
    return _P("pow")(self.to(dt), exponent.to(dt))


@decomposed("float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", variants=_FM)
def float_power_tensor_scalar(self, exponent):
    dt = _float_power_dtype(self, exponent)
    return _P("pow")(self.to(dt), complex(exponent) if dt.is_complex else float(exponent))


@decomposed("float_power.Scalar(Scalar self, Tensor exponent) -> Tensor")
def float_power_scalar(self, exponent):
    dt = _float_power_dtype(self, exponent)
    return _P("pow")(complex(self) if dt.is_complex else float(self), exponent.to(dt))


def _float_power_inplace_dtype(self, exponent):
    """float_power_ computes in double: only a double (complex double) base can hold it."""
    dt = _float_power_dtype(self, exponent)
    if self.dtype != dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {_cpp_name(self.dtype)} but the "
                           f"operation's result requires dtype {_cpp_name(dt)}")
    return dt


@decomposed("float_power_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", variants=("method",))
def float_power__tensor(self, exponent):
    dt = _float_power_inplace_dtype(self, exponent)
    return self.pow_(exponent.to(dt))


@decomposed("float_power_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)", variants=("method",))
def float_power__scalar(self, exponent):
    dt = _float_power_inplace_dtype(self, exponent)
    return self.pow_(complex(exponent) if dt.is_complex else float(exponent))


def _cpp_name(dt):
    return {D.float32: "Float", D.float64: "Double", D.float16: "Half", D.complex64: "ComplexFloat",
            D.complex128: "ComplexDouble", D.int64: "Long", D.int32: "Int", D.int16: "Short",
            D.int8: "Char", D.uint8: "Byte", D.bool: "Bool"}[dt]


# -- ldexp: self * 2 ** other -------------------------------------------------------------------

def _ldexp(self, other):
    return _P("mul")(self, _P("pow")(2.0, other))  # (kernel nesting: not recorded)


_LDEXP = {"self": "grad * pow(2, other).conj()", "other": "grad * result.conj() * M_LN2"}
ldexp = derivatives(op("ldexp.Tensor(Tensor self, Tensor other) -> Tensor", variants=_FM)(_ldexp), _LDEXP)
ldexp_ = derivatives(op("ldexp_(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=_FM)(
    lambda self, other: self.mul_(_P("pow")(2.0, other))), _LDEXP)


# -- gcd, lcm (integers only) ----------------------------------------------------------------------

def _gcd(self, other):
    return binary(self, other, np.gcd, compute=dispatch_check("gcd_cpu", "i"))


def _lcm(self, other):
    return binary(self, other, np.lcm, compute=dispatch_check("lcm_cpu", "i"))


gcd = op("gcd(Tensor self, Tensor other) -> Tensor", variants=_FM, differentiable=False)(_gcd)
gcd_ = op("gcd_(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=_FM, differentiable=False)(inplace(_gcd))
lcm = op("lcm(Tensor self, Tensor other) -> Tensor", variants=_FM, differentiable=False)(_lcm)
lcm_ = op("lcm_(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=_FM, differentiable=False)(inplace(_lcm))


# -- xlogy: x * log(y), 0 where x == 0 (unless y is NaN) --------------------------------------------

def _xlogy_arrays(x, y):
    r = x * np.log(y)
    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0, r)).astype(r.dtype, copy=False)


@quiet
def _xlogy(self, other):
    return binary(self, other, _wide(_xlogy_arrays), compute=lambda d: dispatch_check("xlogy_cpu", "f")(float_of(d)))


_XLOGY = {"self": "xlogy(grad, other).masked_fill((self == 0.) & (other <= 0.), 0.)",
          "other": "grad * self / other"}
_XLOGY_SCALAR_OTHER = {"self": "(xlogy(grad, other) if other > 0. "
                               "else xlogy(grad, other).masked_fill(self == 0., 0.))"}


def _xlogy_scalar_other(self, other):
    return _xlogy(self, scalar_to_tensor(other, self.device))


xlogy = derivatives(op("xlogy.Tensor(Tensor self, Tensor other) -> Tensor", variants=_FM)(_xlogy), _XLOGY)
xlogy_scalar_self = derivatives(op("xlogy.Scalar_Self(Scalar self, Tensor other) -> Tensor")(
    lambda self, other: _xlogy(scalar_to_tensor(self, other.device), other)), {"other": "grad * self / other"})
xlogy_scalar_other = derivatives(op("xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor", variants=_FM)(
    _xlogy_scalar_other), _XLOGY_SCALAR_OTHER)
xlogy_ = derivatives(op("xlogy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=_FM)(
    inplace(_xlogy)), _XLOGY)
xlogy__scalar_other = derivatives(op("xlogy_.Scalar_Other(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                                     variants=_FM)(inplace(_xlogy_scalar_other)), _XLOGY_SCALAR_OTHER)


# -- logit ----------------------------------------------------------------------------------------

def _logit_arrays(eps):
    def f(x):
        if eps is not None:
            x = np.clip(x, eps, 1 - eps)
        if x.dtype == np.float16:
            # Vectorized<Half> rounds after each operation: log(x / (1 - x)) step by step, each
            # computed in float32 (NumPy's float16 arithmetic does the same)
            return np.log((x / (np.float16(1) - x)).astype(np.float32)).astype(np.float16)
        return np.log(x / (1 - x))
    return f


def _logit(self, eps):
    return unary(self, quiet(_wide1(_logit_arrays(eps))),
                 compute=lambda d: dispatch_check("logit_cpu", "f")(float_of(d)))


def _wide1(fn):
    """float32 computed in float64 (torch's SLEEF log is within an ulp of the rounded exact
    value); float16 is left to ``fn``, which rounds per step as torch's Half kernels do."""
    def compute(x):
        return fn(x.astype(np.float64)) if x.dtype == np.float32 else fn(x)
    return compute


logit = op("logit(Tensor self, float? eps=None) -> Tensor", variants=_FM)(_logit)
_LOGIT = {"self": "(infinitely_differentiable_logit_backward(grad, self, eps) if is_grad_enabled() "
                  "else logit_backward(grad, self, eps))"}
derivatives(logit, _LOGIT)
logit_ = derivatives(op("logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)", variants=_FM)(inplace(_logit)), _LOGIT)


@quiet
def _logit_backward(grad_output, self, eps):
    x = self._array
    g = grad_output._array
    if eps is None:
        r = np.where((x < 0) | (x > 1), np.nan, g / (x * (1 - x)))
    else:
        r = np.where((x < eps) | (x > 1 - eps), 0, g / (x * (1 - x)))
    dt = grad_output.dtype
    return pointwise_result(np.asarray(r).astype(dt.np, copy=False), dt, self.device, (grad_output, self))


logit_backward = op("logit_backward(Tensor grad_output, Tensor self, float? eps=None) -> Tensor")(_logit_backward)
derivatives(logit_backward, {"grad_output": "logit_backward(grad, self, eps)",
                             "self": "grad * grad_output * (2 * self - 1) / (self * (1 - self)).pow(2)"})


# -- frexp ----------------------------------------------------------------------------------------

@op("frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)", variants=_FM)
def frexp(self):
    if not self.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(self._array)
    # UnaryOps.cpp allocates both outputs with empty_like(self): self's layout
    return (like_result(m.astype(self.dtype.np, copy=False), self.dtype, self.device, self),
            like_result(e.astype(np.int32), D.int32, self.device, self))


derivatives(frexp, {"self": "grad / exponent.exp2()"}, output_differentiability=[True, False])


# -- fill (functional), sgn ------------------------------------------------------------------------

@op("fill.Scalar(Tensor self, Scalar value) -> Tensor", variants=("function",))
def fill_scalar(self, value):
    return _P("fill_")(_P("clone")(self), value)


derivatives(fill_scalar, {"self": "zeros_like(grad)"})


@op("fill.Tensor(Tensor self, Tensor value) -> Tensor", variants=("function",))
def fill_tensor(self, value):
    return _P("fill_")(_P("clone")(self), value)


derivatives(fill_tensor, {"self": "zeros_like(grad)", "value": "grad.sum()"})


@quiet
def _sgn(self):
    if not self.dtype.is_complex:
        return unary(self, _sign_arrays)
    z = self._array
    mag = np.abs(z)
    return unary(self, lambda a: np.where(mag == 0, 0, a / np.where(mag == 0, 1, mag)).astype(a.dtype))


sgn = derivatives(op("sgn(Tensor self) -> Tensor", variants=_FM)(_sgn), {"self": "sgn_backward(self, grad, result)"})
sgn_ = derivatives(op("sgn_(Tensor(a!) self) -> Tensor(a!)", variants=("method",))(inplace(_sgn)),
                   {"self": "sgn_backward(self, grad, result)"})
