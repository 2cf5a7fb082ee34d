"""torch.special's Bessel and Airy functions (ATen/native/Math.h): bessel_j0/j1/y0/y1,
modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1, spherical_bessel_j0, airy_ai.

Each is Math.h's ``<name>_forward`` (Cephes' rational and Chebyshev approximations) vectorised:
every branch is computed over the whole array and the element's branch picked with ``where``,
in torch's CPU compute type: ``AT_DISPATCH_FLOATING_TYPES``, so float32 computes in float32 (its
roundings, its overflows) and float64 in float64; integer and bool inputs compute in the default
float dtype; float16 and complex raise torch's "not implemented" error. Where the header mixes
a double literal into float arithmetic (``std::log(0.5 * x)``), the double step is kept.
torch's CPU kernels are built with FMA contraction (its AVX2/AVX512 kernels: ``-mfma``), so
``a * b + c`` in the header is one rounding there: ``fma`` below does that for float32 (float64
keeps two roundings: its error is far inside float64's tolerance). The coefficient tables are torch's (``_math_h_tables``, generated from the header). None of
these is differentiable (derivatives.yaml: non_differentiable).
"""
import math

import numpy as np

from .. import _dtype as D
from . import _math_h_tables as M
from ._iter import pointwise_result
from ._pointwise_helpers import float_of
from ._registry import op
from .arithmetic import quiet
from .reduction import not_implemented


def float_kernel(kernel_name, fn):
    """A CPU kernel dispatched over float32/float64 (ints and bools promote to the default float)
    that runs ``fn`` on the array in that dtype."""
    @quiet
    def kernel(x):
        dt = float_of(x.dtype)
        if dt not in (D.float32, D.float64):
            raise not_implemented(kernel_name, dt)
        out = fn(x._array.astype(dt.np))
        return pointwise_result(np.asarray(out, dt.np), dt, x.device, (x,))
    kernel.__name__ = kernel_name
    return kernel


def fma(a, b, c):
    """a * b + c rounded once for float32 (the float32 product is exact in float64)."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32)
    return a * b + c


def polevl(y, coefficients):
    """Math.h's loops ``r = 0; r = r * y + C[i]`` (highest order first), in y's dtype."""
    t = y.dtype.type
    r = np.zeros_like(y)
    for c in coefficients:
        r = fma(r, y, t(c))
    return r


def clenshaw(y, coefficients):
    """Math.h's Chebyshev loops ``p = q; q = a; a = y * q - p + A[i]``, returning ``(a, p)``."""
    t = y.dtype.type
    a, p, q = np.full_like(y, t(coefficients[0])), np.zeros_like(y), np.zeros_like(y)
    for c in coefficients[1:]:
        p, q = q, a
        a = fma(y, q, -p) + t(c)
    return a, p


_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448
_PI_4 = 0.785398163397448309615660845819875721
_3PI_4 = 2.356194490192344928846982537459627163


def _asymptotic(x, w, PP, PQ, QP, QQ, shift, second_order):
    """The large-x form of j0/j1/y0/y1: P cos(x - shift) - 5/x Q sin(x - shift) (j), or with
    sin and cos swapped and a plus (y), times sqrt(2/pi) / sqrt(x)."""
    t = x.dtype.type
    p = polevl(w, PP) / polevl(w, PQ)
    q = t(5.0) / x * (polevl(w, QP) / polevl(w, QQ))
    s = x - t(shift)
    if second_order:  # y: sin, + cos
        return (p * np.sin(s) + q * np.cos(s)) * t(_SQRT_2_OVER_PI) / np.sqrt(x)
    return (p * np.cos(s) - q * np.sin(s)) * t(_SQRT_2_OVER_PI) / np.sqrt(x)


def bessel_j0_forward(x):
    t = x.dtype.type
    x = np.abs(x)
    xx = x * x
    tiny = t(1.0) - xx / t(4.0)
    small = fma(x, x, t(-5.78318596294678452118e+00)) * fma(x, x, t(-3.04712623436620863991e+01)) * \
        polevl(xx, M.BESSEL_J0_FORWARD_RP) / polevl(xx, M.BESSEL_J0_FORWARD_RQ)
    large = _asymptotic(x, t(25.0) / xx, M.BESSEL_J0_FORWARD_PP, M.BESSEL_J0_FORWARD_PQ,
                        M.BESSEL_J0_FORWARD_QP, M.BESSEL_J0_FORWARD_QQ, _PI_4, False)
    return np.where(x <= t(5.0), np.where(x < t(0.00001), tiny, small), large)


def bessel_j1_forward(x):
    t = x.dtype.type
    sign = np.where(x < t(0.0), t(-1.0), t(1.0))  # j1(-x) = -j1(x)
    x = np.abs(x)
    xx = x * x
    small = polevl(xx, M.BESSEL_J1_FORWARD_RP) / polevl(xx, M.BESSEL_J1_FORWARD_RQ) * x * \
        fma(x, x, t(-1.46819706421238932572e+01)) * fma(x, x, t(-4.92184563216946036703e+01))
    five_x = t(5.0) / x
    large = _asymptotic(x, five_x * five_x, M.BESSEL_J1_FORWARD_PP, M.BESSEL_J1_FORWARD_PQ,
                        M.BESSEL_J1_FORWARD_QP, M.BESSEL_J1_FORWARD_QQ, _3PI_4, False)
    return sign * np.where(x <= t(5.0), small, large)


def bessel_y0_forward(x):
    t = x.dtype.type
    xx = x * x
    small = polevl(xx, M.BESSEL_Y0_FORWARD_YP) / polevl(xx, M.BESSEL_Y0_FORWARD_YQ) + \
        t(_TWO_OVER_PI) * np.log(x) * bessel_j0_forward(x)
    large = _asymptotic(x, t(25.0) / xx, M.BESSEL_Y0_FORWARD_PP, M.BESSEL_Y0_FORWARD_PQ,
                        M.BESSEL_Y0_FORWARD_QP, M.BESSEL_Y0_FORWARD_QQ, _PI_4, True)
    small = np.where(x == t(0.0), t(-np.inf), np.where(x < t(0.0), t(np.nan), small))
    return np.where(x <= t(5.0), small, large)


def bessel_y1_forward(x):
    t = x.dtype.type
    xx = x * x
    small = x * (polevl(xx, M.BESSEL_Y1_FORWARD_YP) / polevl(xx, M.BESSEL_Y1_FORWARD_YQ)) + \
        t(_TWO_OVER_PI) * (bessel_j1_forward(x) * np.log(x) - t(1.0) / x)
    five_x = t(5.0) / x
    large = _asymptotic(x, five_x * five_x, M.BESSEL_Y1_FORWARD_PP, M.BESSEL_Y1_FORWARD_PQ,
                        M.BESSEL_Y1_FORWARD_QP, M.BESSEL_Y1_FORWARD_QQ, _3PI_4, True)
    small = np.where(x == t(0.0), t(-np.inf), np.where(x < t(0.0), t(np.nan), small))
    return np.where(x <= t(5.0), small, large)


# -- modified Bessel functions: Chebyshev series on [0, 8] (I) / [0, 2] (K) and past them ----------

def modified_bessel_i0_forward(x):
    t = x.dtype.type
    ax = np.abs(x)
    a, p = clenshaw(ax / t(2.0) - t(2.0), M.MODIFIED_BESSEL_I0_FORWARD_A)
    small = np.exp(ax) * (t(0.5) * (a - p))
    b, p = clenshaw(t(32.0) / ax - t(2.0), M.MODIFIED_BESSEL_I0_FORWARD_B)
    large = np.exp(ax) * (t(0.5) * (b - p)) / np.sqrt(ax)
    return np.where(ax <= t(8.0), small, large)


def modified_bessel_i1_forward(x):
    t = x.dtype.type
    ax = np.abs(x)
    a, p = clenshaw(ax / t(2.0) - t(2.0), M.MODIFIED_BESSEL_I1_FORWARD_A)
    small = t(0.5) * (a - p) * ax * np.exp(ax)
    b, p = clenshaw(t(32.0) / ax - t(2.0), M.MODIFIED_BESSEL_I1_FORWARD_B)
    large = np.exp(ax) * (t(0.5) * (b - p)) / np.sqrt(ax)
    out = np.where(ax <= t(8.0), small, large)
    return np.where(x < t(0.0), -out, out)


def _k_domain(x, out):
    """K0/K1 (scaled or not): +inf at 0, NaN below."""
    t = x.dtype.type
    return np.where(x == t(0.0), t(np.inf), np.where(x < t(0.0), t(np.nan), out))


def _k_large(x, B):
    b, p = clenshaw(x.dtype.type(8.0) / x - x.dtype.type(2.0), B)
    return x.dtype.type(0.5) * (b - p)


def modified_bessel_k0_forward(x):
    t = x.dtype.type
    a, p = clenshaw(fma(x, x, t(-2.0)), M.MODIFIED_BESSEL_K0_FORWARD_A)
    # std::log(0.5 * x): a double literal, so the log (and what follows it) is double
    log_half = np.log(0.5 * x.astype(np.float64))
    small = (t(0.5) * (a - p)).astype(np.float64) - log_half * modified_bessel_i0_forward(x)
    large = np.exp(-x) * _k_large(x, M.MODIFIED_BESSEL_K0_FORWARD_B) / np.sqrt(x)
    return _k_domain(x, np.where(x <= t(2.0), small.astype(x.dtype), large))


def modified_bessel_k1_forward(x):
    t = x.dtype.type
    a, p = clenshaw(fma(x, x, t(-2.0)), M.MODIFIED_BESSEL_K1_FORWARD_A)
    small = np.log(t(0.5) * x) * modified_bessel_i1_forward(x) + t(0.5) * (a - p) / x
    large = np.exp(-x) * _k_large(x, M.MODIFIED_BESSEL_K1_FORWARD_B) / np.sqrt(x)
    return _k_domain(x, np.where(x <= t(2.0), small, large))


def scaled_modified_bessel_k0_forward(x):
    t = x.dtype.type
    a, p = clenshaw(fma(x, x, t(-2.0)), M.SCALED_MODIFIED_BESSEL_K0_FORWARD_A)
    small = (t(0.5) * (a - p) - np.log(t(0.5) * x) * modified_bessel_i0_forward(x)) * np.exp(x)
    large = _k_large(x, M.SCALED_MODIFIED_BESSEL_K0_FORWARD_B) / np.sqrt(x)
    return _k_domain(x, np.where(x <= t(2.0), small, large))


def scaled_modified_bessel_k1_forward(x):
    t = x.dtype.type
    a, p = clenshaw(fma(x, x, t(-2.0)), M.SCALED_MODIFIED_BESSEL_K1_FORWARD_A)
    small = (np.log(t(0.5) * x) * modified_bessel_i1_forward(x) + t(0.5) * (a - p) / x) * np.exp(x)
    large = _k_large(x, M.SCALED_MODIFIED_BESSEL_K1_FORWARD_B) / np.sqrt(x)
    return _k_domain(x, np.where(x <= t(2.0), small, large))


def spherical_bessel_j0_forward(x):
    """sin(x) / x, by its Taylor series below |x| = 1/2; 0 at +-inf."""
    t = x.dtype.type
    xx = x * x
    series = t(0.0)
    for k in (6227020800.0, -39916800.0, 362880.0, -5040.0, 120.0, -6.0):  # 1/13! .. -1/3!
        series = xx * (t(1.0 if k > 0 else -1.0) / t(abs(k)) + series)
    small = t(1.0) + series
    out = np.where(np.abs(x) < t(0.5), small, np.sin(x) / x)
    return np.where(np.isinf(x), t(0.0), out)


def airy_ai_forward(x):
    """Ai(x): asymptotic forms below -2.09 and from 2.09 (exponentially small), the Maclaurin
    series run to the dtype's epsilon between; 0 past 103.892, NaN at +-inf."""
    t = x.dtype.type
    # x < -2.09: the oscillating asymptotic form
    root = np.sqrt(-x)
    zeta_neg = t(-2.0) * x * root / t(3.0)
    z = t(1.0) / zeta_neg
    zz = z * z
    f_ratio = zz * polevl(zz, M.AIRY_AI_FORWARD_AFN) / polevl(zz, M.AIRY_AI_FORWARD_AFD)
    g_ratio = z * polevl(zz, M.AIRY_AI_FORWARD_AGN) / polevl(zz, M.AIRY_AI_FORWARD_AGD)
    theta = zeta_neg + t(0.25) * t(math.pi)
    negative = t(5.64189583547756286948e-01) / np.sqrt(root) * \
        (np.sin(theta) * (t(1.0) + f_ratio) - np.cos(theta) * g_ratio)
    # x >= 2.09: the decaying asymptotic form
    zeta = t(2.0) * x * np.sqrt(x) / t(3.0)
    inv = t(1.0) / zeta
    positive = t(5.64189583547756286948e-01) * (polevl(inv, M.AIRY_AI_FORWARD_AN) /
                                                 polevl(inv, M.AIRY_AI_FORWARD_AD)) / \
        (t(2.0) * np.sqrt(np.sqrt(x)) * np.exp(zeta))
    series = _airy_series(np.where((x < t(-2.09)) | (x >= t(2.09)), t(0.0), x))  # (NaN stays)
    out = np.where(x < t(-2.09), negative, np.where(x >= t(2.09), positive, series))
    out = np.where(x > t(103.892), t(0.0), out)
    return np.where(np.isinf(x), t(np.nan), out)


def _airy_series(x):
    """c1 f(x) - c2 g(x), f and g's power series summed until |m / f| <= epsilon (per element:
    an element stops where torch's loop would)."""
    t = x.dtype.type
    eps = np.finfo(x.dtype).eps
    f, g, m, n = np.ones_like(x), x.copy(), np.ones_like(x), x.copy()
    z = x * x * x
    k = t(1.0)
    live = np.ones(x.shape, bool)  # (t = 1 > eps at the start; NaN stops at once: t > eps fails)
    live &= ~np.isnan(x)
    while live.any():
        m2 = m * z
        k += t(1.0)
        m2 = m2 / k
        n2 = n * z
        k += t(1.0)
        n2 = n2 / k
        m2 = m2 / k
        f2 = f + m2
        k += t(1.0)
        n2 = n2 / k
        g2 = g + n2
        m, n = np.where(live, m2, m), np.where(live, n2, n)
        f, g = np.where(live, f2, f), np.where(live, g2, g)
        live &= np.abs(m / f) > eps
    return t(0.355028053887817239260) * f - t(0.258819403792806798405) * g


_FORWARDS = (("special_bessel_j0", "self", bessel_j0_forward),
             ("special_bessel_j1", "self", bessel_j1_forward),
             ("special_bessel_y0", "self", bessel_y0_forward),
             ("special_bessel_y1", "self", bessel_y1_forward),
             ("special_modified_bessel_i0", "self", modified_bessel_i0_forward),
             ("special_modified_bessel_i1", "self", modified_bessel_i1_forward),
             ("special_modified_bessel_k0", "self", modified_bessel_k0_forward),
             ("special_modified_bessel_k1", "self", modified_bessel_k1_forward),
             ("special_scaled_modified_bessel_k0", "x", scaled_modified_bessel_k0_forward),
             ("special_scaled_modified_bessel_k1", "x", scaled_modified_bessel_k1_forward),
             ("special_spherical_bessel_j0", "x", spherical_bessel_j0_forward),
             ("special_airy_ai", "x", airy_ai_forward))

for _name, _arg, _fn in _FORWARDS:
    op(f"{_name}(Tensor {_arg}) -> Tensor", variants=("function",), differentiable=False)(
        float_kernel(_name[len("special_"):] + "_cpu", _fn))
