"""Pointwise math: sqrt rsqrt exp log log2 log10 log1p expm1 sin cos tan tanh sigmoid (integer and
bool inputs compute in the default float dtype, as torch's int -> float ops), and the rounding
family floor ceil round trunc frac (integer inputs keep their dtype), each with its in-place
variant (``x.sqrt_()``; in place, an integer tensor cannot hold the float result).

Precision: float16 computes in float32 and float32 in float64, then rounds once: torch's CPU
kernels (Sleef, float opmath for half) are within an ulp of the correctly rounded result, and so
is this. The rounding family is exact in any dtype.
"""
import numpy as np

from .. import _dtype as D
from ._iter import pointwise_result
from ._pointwise_helpers import float_of
from ._registry import derivatives, op
from .arithmetic import dispatch_check, inplace, quiet, register_alias

_WIDER = {D.float16: np.float32, D.float32: np.float64}
_FM = ("function", "method")


def _unary_float(fn):
    """A kernel computing fn in a float dtype: ints and bools become the default float."""
    @quiet
    def kernel(self):
        dt = float_of(self.dtype)
        a = self._array
        arr = fn(a.astype(_WIDER.get(dt, dt.np), copy=False))
        return pointwise_result(arr.astype(dt.np, copy=False), dt, self.device, (self,))
    return kernel


def _positive_nan(fn):
    """torch's sqrt and logs of a negative number are NaN with the sign bit clear (printed
    ``nan``); NumPy's (the x86 default NaN) have it set (``-nan`` in a graph constant)."""
    def f(x):
        r = fn(x)
        if x.dtype.kind != "f":  # complex results are not NaN here
            return r
        return np.where(x < 0, np.abs(r), r) if r.ndim else (np.abs(r) if x < 0 else r)
    return f


def _log2(x):
    """torch's complex log2 is log(x) / log(2), each part divided by the real log(2)
    (Vectorized<complex>::log2); NumPy's multiplies by log2(e)."""
    if x.dtype.kind != "c":
        return _positive_nan(np.log2)(x)
    ln = np.log(x)
    out = np.empty_like(ln)
    out.real, out.imag = ln.real / ln.real.dtype.type(np.log(2)), ln.imag / ln.real.dtype.type(np.log(2))
    return out


_FLOAT_FUNCTIONS = {
    "sqrt": _positive_nan(np.sqrt), "rsqrt": lambda x: 1 / np.sqrt(x), "exp": np.exp,
    "log": _positive_nan(np.log), "log2": _log2, "log10": _positive_nan(np.log10),
    "log1p": np.log1p, "expm1": np.expm1, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}


def _rounding(name, fn):
    """floor/ceil/trunc/round: an integer tensor is returned as a copy (torch skips the kernel);
    bool has no kernel, complex is refused."""
    kernel_name = f"{name}_vml_cpu"

    def kernel(self):
        dt = self.dtype
        if dt.is_complex and name != "round":
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        if dt.category == 1:
            return pointwise_result(self._array.copy(), dt, self.device, (self,))
        dispatch_check(kernel_name, "f")(dt)
        return pointwise_result(fn(self._array), dt, self.device, (self,))
    return kernel


@quiet
def _frac(self):
    dt = dispatch_check("frac_cpu", "f")(self.dtype)
    x = self._array
    return pointwise_result(x - np.trunc(x), dt, self.device, (self,))


def _round_decimals(self, decimals):
    """round(x, decimals): torch scales by 10**|decimals| in the opmath type, rounds half to even
    and scales back (so the result is the nearest float to the decimal, not always it)."""
    dt = self.dtype
    if decimals == 0:  # straight to the rounding kernel: no integer shortcut here
        dispatch_check("round_vml_cpu", "f")(dt)
        return pointwise_result(np.rint(self._array), dt, self.device, (self,))
    dispatch_check("round_cpu", "f")(dt)
    work = np.float32 if dt is D.float16 else dt.np.type
    x, scale = self._array.astype(work), work(10.0 ** abs(decimals))
    arr = np.rint(x / scale) * scale if decimals < 0 else np.rint(x * scale) / scale
    return pointwise_result(arr.astype(dt.np, copy=False), dt, self.device, (self,))


_KERNELS = {name: _unary_float(fn) for name, fn in _FLOAT_FUNCTIONS.items()}
_KERNELS.update(floor=_rounding("floor", np.floor), ceil=_rounding("ceil", np.ceil),
                trunc=_rounding("trunc", np.trunc), round=_rounding("round", np.rint), frac=_frac)

# derivatives.yaml's formulas of these ops (the in-place variants share them)
_DERIVATIVES = {
    "sqrt": "grad / (2 * result.conj())",
    "rsqrt": "-0.5 * grad * result.pow(3).conj()",
    "exp": "grad * result.conj()",
    "log": "grad.div(self.conj())",
    "log2": "grad / (self.conj() * 0.6931471805599453)",
    "log10": "grad / (self.conj() * 2.3025850929940456)",
    "log1p": "log1p_backward(grad, self)",
    "expm1": "grad * (result.conj() + 1)",
    "sin": "grad * self.cos().conj()",
    "cos": "grad * -self.sin().conj()",
    "tan": "grad * (1 + result.pow(2)).conj()",
    "tanh": "tanh_backward(grad, result)",
    "sigmoid": "sigmoid_backward(grad, result)",
    "floor": "zeros_like(grad)", "ceil": "zeros_like(grad)", "trunc": "zeros_like(grad)",
    "round": "zeros_like(grad)", "frac": "grad",
}
for _name, _kernel in _KERNELS.items():
    _formulas = {"self": _DERIVATIVES[_name]}
    derivatives(op(f"{_name}(Tensor self) -> Tensor", variants=_FM)(_kernel), _formulas)
    derivatives(op(f"{_name}_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(inplace(_kernel)),
                _formulas)
derivatives(op("round.decimals(Tensor self, *, int decimals) -> Tensor", variants=_FM)(
    quiet(_round_decimals)), {"self": "zeros_like(grad)"})
derivatives(op("round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)", variants=_FM)(
    inplace(_round_decimals)), {"self": "zeros_like(grad)"})
register_alias("fix", "trunc")
