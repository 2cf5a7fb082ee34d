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
from ._iter import pointwise_result
from ._pointwise_helpers import float_of
from ._registry import composite, derivatives, get_packet, op
from .arithmetic import inplace, quiet

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
    """Cephes chbevl: the Chebyshev series at x/2 (coefficients highest order first)."""
    t = x.dtype.type
    b0, b1, b2 = np.full_like(x, coefficients[0]), np.zeros_like(x), np.zeros_like(x)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + t(c)
    return t(0.5) * (b0 - b2)


_I0E_A = (  # exp(-x) I0(x) on [0, 8]
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (  # exp(-x) sqrt(x) I0(x) on [8, inf)
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1)
_I1E_A = (  # exp(-x) I1(x) on [0, 8] (float uses the last 17)
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
    3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
    -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
    4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
    -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
    2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
    -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B = (  # exp(-x) sqrt(x) I1(x) on [8, inf) (float uses the last 7)
    7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
    3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
    -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
    7.78576235018280120474E-1)


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
            far = chbevl(t(32) / ax - t(2), b) / np.sqrt(ax)
            if order == 1:
                near = near * ax
            if not scaled:
                e = np.exp(ax)
                near, far = e * near, e * far
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


# -- gamma family: lgamma, digamma, polygamma, mvlgamma, zeta ----------------------------------------

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
    x = np.asarray(x)
    t = x.dtype.type if x.dtype in (np.float32, np.float64) else np.float64
    x = x.astype(t)
    with np.errstate(all="ignore"):
        sign = np.where(x < 0.5, t(-1.0), t(1.0))
        result = np.where(x < 0.5, -(t(math.pi) * t(math.pi)) / np.sin(t(math.pi) * x) ** 2, t(0.0))
        x = np.where(x < 0.5, 1 - x, x)
        for _ in range(6):
            result = result + 1 / (x * x)
            x = x + 1
        ixx = 1 / (x * x)
        result = result + (1 + 1 / (2 * x) + ixx * (1. / 6 - ixx * (1. / 30 - ixx * (1. / 42)))) / x
        return sign * result


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def _zeta_scalar(x, q):
    """Cephes zeta(x, q), the Hurwitz zeta function (Math.h's zeta), for one pair."""
    MACHEP = 1.11022302462515654042E-16
    if x == 1:
        return math.inf
    if x < 1:
        return math.nan
    if q <= 0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan
    try:
        s = q ** -x
    except (OverflowError, ZeroDivisionError):
        return math.inf
    a, i, b = q, 0, 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if -MACHEP * s < b < MACHEP * s:
            return s
    w = a
    s += b * w / (x - 1)
    s -= 0.5 * b
    a, k = 1.0, 0.0
    for i in range(12):
        a *= x + k
        b /= w
        t = a * b / _ZETA_A[i]
        s = s + t
        if abs(t / s) < MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


_ZETA = np.frompyfunc(lambda x, q: _zeta_scalar(float(x), float(q)) if not (
    math.isnan(x) or math.isnan(q)) else math.nan, 2, 1)


def _polygamma(n, x):
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    with np.errstate(all="ignore"):
        z = _ZETA(float(n + 1), np.asarray(x, np.float64)).astype(np.float64)
        return (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1.0)) * z


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


# -- erfinv, ndtr, entr, xlog1py, zeta ---------------------------------------------------------------

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
    x = self._array.astype(dt.np) * dt.np.type(math.sqrt(0.5))
    e = erf.kernel(pointwise_result(x, dt, self.device, (self,)))._array
    return pointwise_result(((1 + e) * dt.np.type(0.5)).astype(dt.np), dt, self.device, (self,))


composite(special_ndtr)(lambda self: (1 + (self * math.sqrt(0.5)).erf()) * 0.5)
