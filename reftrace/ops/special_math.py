"""Special functions (ATen/native/Math.h, UnaryOps.cpp) as pointwise float ops: i0, i0e, i1, i1e.

Integer and bool inputs compute in the default float dtype (torch's int -> float ops). The
algorithms are torch's (Cephes' Chebyshev expansions, with torch's float-specific coefficient
tables), computed in torch's compute type: float32 in float32 (so an intermediate ``exp(x)``
overflows where torch's does), float16 upcast to float32 (torch's "upcast for accuracy").
"""
import math

import numpy as np

from .. import _dtype as D
from .._tensor import _fresh
from . import _math_h_tables as _MH
from ._fma import fma, fma64
from ._iter import pointwise_result
from ._libm import float_fn, libm_lgamma
from ._pointwise_helpers import float_of
from ._registry import composite, derivatives, get_packet, op
from .arithmetic import inplace, quiet
from .special_functions import zeta

_FM = ("function", "method")
_F = ("function",)


def _float_kernel(fn):
    """fn in torch's compute type (float16 -> float32), the result in the op's float dtype."""
    @quiet
    def kernel(self):
        dt = float_of(self.dtype)
        if dt.is_complex:
            raise NotImplementedError(f"\"{kernel.__name__}\" not implemented for '{dt.ir_name}'")
        arr = fn(self._array.astype(np.float64 if dt is D.float64 else np.float32))
        return pointwise_result(np.asarray(arr).astype(dt.np, copy=False), dt, self.device, (self,))
    return kernel


def unary_special(name, fn, formula=None, variants=_FM, with_inplace=True, alias=None):
    """Register ``name`` (and ``name_``), and torch's ``special_<alias>`` spelling of it."""
    kernel = _float_kernel(fn)
    kernel.__name__ = name + "_cpu"
    functional = op(f"{name}(Tensor self) -> Tensor", variants=variants)(kernel)
    if formula:
        derivatives(functional, {"self": formula})
    if with_inplace:
        inplace_op = op(f"{name}_(Tensor(a!) self) -> Tensor(a!)", variants=variants)(inplace(kernel))
        if formula:
            derivatives(inplace_op, {"self": formula})
    if alias:
        # special_<alias> is a CompositeImplicit call of the op (NormalizeOps renames the node)
        spelled = op(f"special_{alias}(Tensor self) -> Tensor", variants=_F)(kernel)
        composite(spelled)(lambda self: get_packet(name)(self))
    return functional


# -- modified Bessel functions of the first kind (Cephes i0, i0e, i1, i1e) ------------------------

def chbevl(x, coefficients):
    """Cephes chbevl: the Chebyshev series at x/2 (coefficients highest order first). torch's
    AVX2 build fuses its ``x * b1 - b2`` into an FMA (then adds the coefficient), but for the
    first step, where b2 is 0 and ``x * b1 + c`` is the FMA."""
    t = x.dtype.type
    f = fma if t is np.float32 else fma64
    b0, b1, b2 = np.full_like(x, coefficients[0]), np.zeros_like(x), np.zeros_like(x)
    for i, c in enumerate(coefficients[1:]):
        b2, b1 = b1, b0
        if i == 0:
            # (the first step's b2 is a known 0: x * b1 - 0 + c folds to one FMA)
            b0 = f(x, b1, t(c)).astype(t)
        else:
            b0 = (f(x, b1, -b2).astype(t) + t(c)).astype(t)
    return t(0.5) * (b0 - b2)


# Cephes' Chebyshev tables for exp(-|x|) I0 and I1 on [0, 8] and sqrt(x) exp(-x) I on (8, inf):
# Math.h's, generated from the header (the float overloads use the last 17 and 7 of I1's)
_I0E_A, _I0E_B = _MH.MODIFIED_BESSEL_I0_FORWARD_A, _MH.MODIFIED_BESSEL_I0_FORWARD_B
_I1E_A, _I1E_B = _MH.MODIFIED_BESSEL_I1_FORWARD_A, _MH.MODIFIED_BESSEL_I1_FORWARD_B


def _odd(x, out):
    return np.where(x < 0, -out, out)


def _bessel_i(A, B, order, scaled, float_lengths=None):
    """calc_i0 / calc_i0e / calc_i1 / calc_i1e: a Chebyshev series on [0, 8] and one in 1/x past
    8, over |x|; order 1 is odd (the sign of x) and carries a factor x on [0, 8]."""
    def f(x):
        t = x.dtype.type
        a, b = A, B
        if float_lengths and t is np.float32:
            a, b = A[-float_lengths[0]:], B[-float_lengths[1]:]
        ax = np.abs(x)
        small = ax <= 8
        with np.errstate(all="ignore"):
            near = chbevl(ax / t(2) - t(2), a)
            if not scaled:
                # calc_i0 / calc_i1: std::exp(x) * chbevl (calc_i1: (std::exp(x) * x) * chbevl)
                # and (std::exp(x) * chbevl) / sqrt(x), in that order, with glibc's expf for float
                e = float_fn("expf")(ax) if t is np.float32 else np.exp(ax)
                chb = chbevl(t(32) / ax - t(2), b)
                out = np.where(small, (e * ax if order == 1 else e) * near, (e * chb) / np.sqrt(ax))
                return _odd(x, out) if order == 1 else out
            far = chbevl(t(32) / ax - t(2), b) / np.sqrt(ax)
            if order == 1:
                near = near * ax
        out = np.where(small, near, far)
        return np.where(x < 0, -out, out) if order == 1 else out
    return f


i0 = unary_special("i0", _bessel_i(_I0E_A, _I0E_B, 0, False), "grad * special_i1(self)",
                   alias="i0")
special_i0e = unary_special("special_i0e", _bessel_i(_I0E_A, _I0E_B, 0, True),
                            "grad * (special_i1e(self) - self.sgn() * result)", _F, False)
special_i1 = unary_special("special_i1", _bessel_i(_I1E_A, _I1E_B, 1, False, (17, 7)),
                           "i1_backward(grad, self, result)", _F, False)
special_i1e = unary_special("special_i1e", _bessel_i(_I1E_A, _I1E_B, 1, True, (17, 7)),
                            "i1e_backward(grad, self, result)", _F, False)


# -- gamma family: lgamma, digamma, polygamma, mvlgamma (zeta: special_functions.py) --------------

_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)


def _lgamma(x):
    """std::lgamma (libm); +inf at the poles, as C's lgamma."""
    with np.errstate(all="ignore"):
        out = np.empty(x.shape, np.float64)
        flat, res = x.reshape(-1).astype(np.float64), out.reshape(-1)
        for i, v in enumerate(flat):
            try:
                res[i] = math.lgamma(v) if math.isfinite(v) else (math.inf if not math.isnan(v) else v)
            except ValueError:  # a pole
                res[i] = math.inf
        return out


_PSI_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
          -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
          8.33333333333333333333E-2)


def _digamma(x):
    """calc_digamma: reflection below 0, recurrence up to 10, then the asymptotic series. Its
    float overload computes in float (the reflection term in double, then cast), so float32
    inputs are computed in float32 step by step; others in double."""
    x = np.asarray(x)
    t = np.float32 if x.dtype == np.float32 else np.float64
    x = x.astype(t)
    with np.errstate(all="ignore"):
        neg = x < 0
        integer = x == np.trunc(x)
        r = np.modf(x.astype(np.float64))[0]
        pi_over_tan = (math.pi / np.tan(math.pi * r)).astype(t)
        reflected = (_digamma_positive((t(1) - x).astype(t)) - pi_over_tan).astype(t)
        out = np.where(neg, np.where(integer, np.nan, reflected), _digamma_positive(x))
        return np.where(x == 0, np.copysign(np.inf, -x), out).astype(t)


def _digamma_positive(x):
    """calc_digamma for x > 0, in x's precision (float32 or float64)."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        x = np.where((x > 0) | np.isnan(x), x, t(1)).astype(t)
        result = np.zeros_like(x)
        for _ in range(11):  # push x up to >= 10
            small = x < 10
            result = np.where(small, result - t(1) / x, result).astype(t)
            x = np.where(small, x + t(1), x).astype(t)
        z = (t(1) / (x * x)).astype(t)
        poly = np.full_like(z, t(_PSI_A[0]))
        for c in _PSI_A[1:]:  # polevl
            poly = (poly * z + t(c)).astype(t)
        y = np.where(x < t(1.0e17), z * poly, t(0)).astype(t)
        # (float32's log: float64's rounded, the correctly rounded logf; glibc's differs from it
        # in the last bit for about 1 input in 2000)
        log = np.log(x.astype(np.float64)).astype(t)
        out = (((result + log).astype(t) - (t(0.5) / x)).astype(t) - y).astype(t)
        return np.where(x == 10, (result + t(2.25175258906672110764)).astype(t), out)


def _trigamma(x):
    """Math.h's trigamma, step by step in T (its float overload computes in float): the
    reflection's sin is glibc's sinf for float, and torch's AVX2 build fuses the asymptotic
    series' ``c - ixx * p`` and ``1 + 1/(2x) + ixx * p`` into FMAs."""
    x = np.asarray(x)
    t = x.dtype.type if x.dtype in (np.float32, np.float64) else np.float64
    f = fma if t is np.float32 else fma64
    x = x.astype(t)
    with np.errstate(all="ignore"):
        pi = t(math.pi)
        neg = x < t(0.5)
        sin = float_fn("sinf") if t is np.float32 else np.sin
        s = sin((pi * x).astype(t))
        result = np.where(neg, -((pi * pi).astype(t) / (s * s).astype(t)).astype(t), t(0))
        sign = np.where(neg, t(-1), t(1))
        x = np.where(neg, (t(1) - x).astype(t), x)
        for _ in range(6):
            result = (result + (t(1) / (x * x)).astype(t)).astype(t)
            x = (x + t(1)).astype(t)
        ixx = (t(1) / (x * x)).astype(t)
        p = f(-ixx, t(1) / t(42), t(1) / t(30)).astype(t)
        p = f(-ixx, p, t(1) / t(6)).astype(t)
        series = f(ixx, p, (t(1) + (t(1) / (t(2) * x)).astype(t)).astype(t)).astype(t)
        return (sign * (result + (series / x).astype(t)).astype(t)).astype(t)


def _polygamma(n, x):
    """calc_polygamma: (-1)**(n+1) * exp(lgamma(n + 1)) * zeta(n + 1, x), in T (float: glibc's
    lgammaf and expf, Math.h's zeta<float>)."""
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    x = np.asarray(x)
    t = np.float32 if x.dtype == np.float32 else np.float64
    x = x.astype(t)
    with np.errstate(all="ignore"):
        if t is np.float32:
            g = float_fn("expf")(float_fn("lgammaf")(np.float32(n) + np.float32(1)))
        else:
            g = np.float64(math.exp(libm_lgamma(n + 1.0)))
        factor = (t(1.0 if n % 2 else -1.0) * g).astype(t)
        return (factor * zeta(np.full_like(x, t(n + 1)), x)).astype(t)


lgamma = unary_special("lgamma", _lgamma, "grad * digamma(self)")
digamma = unary_special("digamma", _digamma, "grad * polygamma(1, self)")
_alias_normalized = (("special_gammaln", "lgamma"), ("special_psi", "digamma"),
                     ("special_digamma", "digamma"))
for _alias, _target in _alias_normalized:
    composite(op(f"{_alias}(Tensor self) -> Tensor", variants=_F)(
        (lgamma if _target == "lgamma" else digamma).kernel))(
        lambda self, _t=_target: get_packet(_t)(self))


def _polygamma_kernel(n, self):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _float_kernel(lambda x: _polygamma(n, x))(self)


polygamma = op("polygamma(int n, Tensor self) -> Tensor", variants=_F)(_polygamma_kernel)
derivatives(polygamma, {"self": "grad * polygamma(n + 1, self)"})
composite(op("special_polygamma(int n, Tensor self) -> Tensor", variants=_F)(_polygamma_kernel))(
    lambda n, self: get_packet("polygamma")(n, self))


def _mvlgamma(self, p):
    if self.dtype is D.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = self._array
    args = np.arange(-p * 0.5 + 0.5, 0.5, 0.5)
    dt = float_of(self.dtype)
    # torch's steps (arange in self's dtype, add, lgamma_, sum(-1), add_), each rounded to the
    # result dtype; float16 steps compute in float32 (opmath), as torch's CPU kernels do
    work = np.float64 if dt is D.float64 else np.float32
    r = dt.np.type
    args = args.astype(r).astype(work)
    vals = (x.astype(work)[..., None] + args).astype(r)
    lg = _lgamma(vals).astype(r).astype(work)
    const = work(r(p * (p - 1) * math.log(math.pi) * 0.25))  # the scalar is cast to self's dtype
    out = (lg.sum(-1).astype(r).astype(work) + const).astype(r)
    # torch's mvlgamma ends in a sum over the last dim: a reduction's output is contiguous
    return _fresh(np.array(out, dtype=dt.np, order="C"), dt, self.device)


mvlgamma = op("mvlgamma(Tensor self, int p) -> Tensor", variants=_FM)(quiet(_mvlgamma))
derivatives(mvlgamma, {"self": "mvlgamma_backward(grad, self, p)"})
composite(op("special_multigammaln(Tensor self, int p) -> Tensor", variants=_F)(quiet(_mvlgamma)))(
    lambda self, p: get_packet("mvlgamma")(self, p))


# -- erfinv, ndtr, entr ---------------------------------------------------------------------------

def _erfinv(y):
    """calc_erfinv: a rational first guess, then two Newton steps on erf."""
    from .unary_ops import _ERF
    y = np.asarray(y, np.float64)
    a = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
    b = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
    c = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
    d = (3.543889200, 1.637067800)
    with np.errstate(all="ignore"):
        ya = np.abs(y)
        z = y * y
        central = y * (((a[3] * z + a[2]) * z + a[1]) * z + a[0]) / \
            ((((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1.0)
        zt = np.sqrt(-np.log((1.0 - ya) / 2.0))
        tail = np.copysign(((c[3] * zt + c[2]) * zt + c[1]) * zt + c[0], y) / ((d[1] * zt + d[0]) * zt + 1.0)
        x = np.where(ya <= 0.7, central, tail)
        for _ in range(2):
            erf = np.asarray(_ERF(x), np.float64)
            x = x - (erf - y) / ((2.0 / math.sqrt(math.pi)) * np.exp(-x * x))
        x = np.where(ya == 1, np.copysign(np.inf, y), x)
        return np.where(ya > 1, np.nan, x)


erfinv = unary_special("erfinv", _erfinv, "0.5 * math.sqrt(math.pi) * exp(self.erfinv().pow(2)) * grad",
                       alias="erfinv")


def _entr(x):
    with np.errstate(all="ignore"):
        return np.where(np.isnan(x), x, np.where(x > 0, -x * np.log(x),
                                                 np.where(x == 0, 0.0, -np.inf)))


special_entr = unary_special("special_entr", _entr, "grad * (-(1 + self.log()))", _F, False)


@op("special_ndtr(Tensor self) -> Tensor", variants=_F)
def special_ndtr(self):
    from .unary_ops import erf
    dt = float_of(self.dtype)
    # self * M_SQRT1_2: a Scalar multiplies in opmath (float for Half), unrounded to Half
    work = np.float64 if dt is D.float64 else np.float32
    x = (self._array.astype(work) * work(math.sqrt(0.5))).astype(dt.np)
    e = erf.kernel(pointwise_result(x, dt, self.device, (self,)))._array
    return pointwise_result(((1 + e) * dt.np.type(0.5)).astype(dt.np), dt, self.device, (self,))


@composite(special_ndtr)
def _ndtr_composite(self):
    # torch's C++: `(1 + at::erf(self * M_SQRT1_2)) * 0.5`; a C++ double operand picks the Scalar
    # overloads (mul.Scalar, add.Scalar: MulBackward1 / AddBackward1 nodes), not mul.Tensor
    from . import OVERLOADS
    mul, add = OVERLOADS["aten::mul.Scalar"], OVERLOADS["aten::add.Scalar"]
    return mul(add(mul(self, math.sqrt(0.5)).erf(), 1), 0.5)
