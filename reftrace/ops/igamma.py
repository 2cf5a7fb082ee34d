"""igamma / igammac: the regularized lower and upper incomplete gamma functions P(a, x), Q(a, x)
(ATen/native/Math.h's calc_igamma / calc_igammac, SciPy's port of Cephes' igam / igamc; CPU
kernel igamma_kernel in native/cpu/BinaryOpsKernel.cpp).

The kernel dispatches over float64, float32, float16 and bfloat16 ("igamma_cpu"); float16 and
bfloat16 compute calc_igamma<float> (Math.h's specialisations, and Vectorized<Half>::igamma
converts to float too). Vectorized<float>::igamma is no SIMD algorithm: it calls calc_igamma on
each lane, so every element takes the scalar path below.

The port keeps C++'s types statement by statement: in calc_igamma<float> a ``double`` literal
makes its expression double (``0.4 * std::fabs(a)``, ``1.0 - igammac``, the asymptotic series'
``std::exp(-0.5 * a * eta * eta)``), and the result is rounded to float when stored. ``W`` marks
those double steps. Transcendental calls go to libm (``_libm``), in the argument's precision, as
std:: calls do. Multiply-adds (``mad``: Horner steps, ``a * log(x) - lgamma(a)``, the continued
fraction's ``pkm1 * z - pkm2 * yc``) are where builds differ: a compiler targeting FMA may fuse
them into one rounding. torch 2.13's CPU wheel fuses them in the igammac kernel and not in the
igamma one (measured against it, bit for bit, over every branch: igamma's ``1.0 - igammac``
branch is unfused too), so each entry point passes its ``mad`` down.

Each helper takes the elements of its branch as 1-d arrays of one dtype ``t`` and loops with a
mask of the elements still iterating (the C loops' ``break`` per element).
"""
import math

import numpy as np

from . import _math_h_tables as _MH
from ._libm import libm
from ._pointwise_helpers import binary
from ._registry import composite, derivatives, get_packet, op
from .arithmetic import dispatch_check, inplace, quiet

W = np.float64  # C++'s double: literals like 0.5, 1.0 and expressions they promote

_LANCZOS_G = 6.024680040776729583740234375
_EXP1 = 2.718281828459045
_MAXITER = 2000
_D = np.array(_MH.IGAM_HELPER_ASYMPTOTIC_SERIES_D, np.float64)


def _machep(t):
    return t(1.11022302462515654042E-16 if t is np.float64 else 5.9604644775390625E-8)


def _sum_to_odd(x, y):
    """x + y rounded to odd: the nearest sum, moved one ulp toward the exact sum where it is
    inexact and its last bit even (TwoSum gives the error exactly)."""
    s = x + y
    bb = s - x
    err = (x - (s - bb)) + (y - bb)
    odd = np.isfinite(s) & (err != 0) & ((s.view(np.int64) & 1) == 0)
    if odd.any():
        s[odd] = np.nextafter(s[odd], np.where(err[odd] > 0, np.inf, -np.inf))
    return s


def _fma64(a, b, c):
    """fma in double, vectorised (Boldo and Melquiond's emulation with rounding to odd): a * b
    = uh + ul exactly (Dekker's product), c + uh = th + tl exactly (TwoSum), then
    RN(th + RO(tl + ul)) is the correctly rounded a * b + c. Overflowing operands keep the
    plain expression, whose inf or nan is the fma's."""
    a, b, c = (np.asarray(v, W) for v in np.broadcast_arrays(a, b, c))
    with np.errstate(all="ignore"):
        uh = a * b
        split = W(134217729.0)  # 2**27 + 1: Veltkamp's split into 26-bit halves
        ah = a * split - (a * split - a)
        bh = b * split - (b * split - b)
        al, bl = a - ah, b - bh
        ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl
        th = c + uh
        bb = th - c
        tl = (c - (th - bb)) + (uh - bb)
        out = th + _sum_to_odd(tl, ul)
        plain = ~(np.isfinite(out) & np.isfinite(ul) & np.isfinite(tl))
        if plain.any():
            out[plain] = (a * b + c)[plain]
    return out


def _fma32(a, b, c):
    """fmaf: the product of two floats is exact in double, and the double sum rounded to odd
    rounds to float as the exact sum does: no double rounding."""
    with np.errstate(all="ignore"):
        p, c = np.broadcast_arrays(np.asarray(a, W) * np.asarray(b, W), np.asarray(c, W))
        return _sum_to_odd(np.array(p), c).astype(np.float32)


def _fused(a, b, c):
    """a * b + c in one fused multiply-add, in a's dtype."""
    if np.asarray(a).dtype == np.float32:
        return _fma32(a, b, c)
    return _fma64(a, b, c)


def _unfused(a, b, c):
    """a * b + c, two roundings."""
    with np.errstate(all="ignore"):
        return (np.asarray(a) * b + c).astype(np.asarray(a).dtype)


# -- ratevl, lanczos_sum_expg_scaled ----------------------------------------------------------------

def _ratevl(x, num, denom, mad):
    """ratevl: num(x) / denom(x), evaluated in 1/x (coefficients reversed) where |x| > 1. The
    pow(x, N - M) factor is pow(x, 0) for the Lanczos sum: 1."""
    t = x.dtype.type
    big = np.abs(x) > 1
    with np.errstate(all="ignore"):
        y = np.where(big, t(1) / x, x)
    num_t = np.array(num, W).astype(t)
    den_t = np.array(denom, W).astype(t)

    def horner(coefficients):
        forward, backward = coefficients, coefficients[::-1]
        ans = np.where(big, backward[0], forward[0]).astype(t)
        for i in range(1, len(coefficients)):
            ans = mad(ans, y, np.where(big, backward[i], forward[i]).astype(t))
        return ans
    n, d = horner(num_t), horner(den_t)
    with np.errstate(all="ignore"):
        # big: std::pow(x, i) (a double) * num_ans / denom_ans, in double
        return np.where(big, (W(1.0) * n.astype(W) / d.astype(W)).astype(t), n / d)


def _lanczos_sum_expg_scaled(x, mad):
    return _ratevl(x, _MH.LANCZOS_SUM_EXPG_SCALED_NUM, _MH.LANCZOS_SUM_EXPG_SCALED_DENOM, mad)


# -- _igam_helper_fac: x^a e^-x / Gamma(a) ----------------------------------------------------------

def _igam_helper_fac(a, x, mad):
    """x^a e^-x / Gamma(a): directly where x is far from a, else Boost's Lanczos form (with
    [igam2]'s exp(x - a) corrected to exp(a - x)), whose cancellations are exact."""
    t = a.dtype.type
    maxlog = t(7.09782712893383996843E2 if t is np.float64 else 88.72283905206835)
    g, e1 = t(_LANCZOS_G), t(_EXP1)
    out = np.empty_like(a)
    with np.errstate(all="ignore"):
        far = np.abs(a - x).astype(W) > W(0.4) * np.abs(a).astype(W)
        # |x - a| > 0.4 |a|: a log x - x - lgamma(a) directly
        af, xf = a[far], x[far]
        ax = mad(af, libm("log", xf), -xf) - libm("lgamma", af)
        out[far] = np.where(ax < -maxlog, t(0), libm("exp", ax))
        # otherwise the Lanczos form, (15)/(16) of [igam2]
        near = ~far
        an, xn = a[near], x[near]
        fac = ((an + g).astype(W) - W(0.5)).astype(t)
        res = np.sqrt(fac / e1) / _lanczos_sum_expg_scaled(an, mad)
        small = (an < 200) & (xn < 200)
        # a, x < 200: exp(a - x) (x / fac)^a
        a1, x1, f1 = an[small], xn[small], fac[small]
        r1 = res[small] * (libm("exp", a1 - x1) * libm("pow", x1 / f1, a1))
        # else exp(a (log1p(n) - n) + x (0.5 - g) / fac), n = (x - a - g + 0.5) / fac
        a2, x2, f2, res2 = an[~small], xn[~small], fac[~small], res[~small]
        num = (((x2 - a2) - g).astype(W) + W(0.5)).astype(t)
        numfac = num / f2
        l1 = libm("log1p", numfac) - numfac
        if t is np.float64:
            arg = mad(a2, l1, x2 * (W(0.5) - W(g)) / f2)
            r2 = res2 * libm("exp", arg)
        else:  # a float product, then promoted: a double exp of a double sum
            arg = (a2 * l1).astype(W) + x2.astype(W) * (W(0.5) - W(g)) / f2.astype(W)
            r2 = (res2.astype(W) * libm("exp", arg)).astype(t)
        near_out = np.empty_like(an)
        near_out[small], near_out[~small] = r1, r2
        out[near] = near_out
    return out


# -- the series and the continued fraction ---------------------------------------------------------

def _igam_helper_series(a, x, mad):
    """igam by DLMF 8.11.4: ax/a * sum x^n / ((a+1)...(a+n))."""
    t = a.dtype.type
    eps = _machep(t)
    ax = _igam_helper_fac(a, x, mad)
    r, c, ans = a.copy(), np.ones_like(a), np.ones_like(a)
    live = np.flatnonzero(ax != 0)
    with np.errstate(all="ignore"):
        for _ in range(_MAXITER):
            if live.size == 0:
                break
            r[live] = (r[live].astype(W) + W(1.0)).astype(t)
            c[live] = c[live] * (x[live] / r[live])
            ans[live] = ans[live] + c[live]
            live = live[~(c[live] <= eps * ans[live])]
        return np.where(ax == 0, t(0), ans * ax / a)


def _igamc_helper_series(a, x, mad):
    """igamc by DLMF 8.7.3 (the series above, arranged against cancellation)."""
    t = a.dtype.type
    eps = _machep(t)
    fac, total = np.ones_like(a), np.zeros_like(a)
    live = np.arange(a.size)
    with np.errstate(all="ignore"):
        for n in range(1, _MAXITER):
            if live.size == 0:
                break
            fac[live] = fac[live] * (-x[live] / t(n))
            term = fac[live] / (a[live] + t(n))
            total[live] = total[live] + term
            live = live[~(np.abs(term) <= eps * np.abs(total[live]))]
        logx = libm("log", x)
        term = -libm("expm1", mad(a, logx, -libm("lgamma", t(1) + a)))
        return mad(-libm("exp", mad(a, logx, -libm("lgamma", a))), total, term)


def _igamc_helper_continued_fraction(a, x, mad):
    """igamc by DLMF 8.9.2: Cephes' continued fraction, rescaled when it grows past BIG."""
    t = a.dtype.type
    eps = _machep(t)
    big = t(4.503599627370496e15 if t is np.float64 else 16777216.)
    biginv = t(2.22044604925031308085e-16 if t is np.float64 else 5.9604644775390625E-8)
    ax = _igam_helper_fac(a, x, mad)
    with np.errstate(all="ignore"):
        y = (W(1.0) - a.astype(W)).astype(t)
        z = ((x + y).astype(W) + W(1.0)).astype(t)
        c = np.zeros_like(a)
        pkm2 = np.ones_like(a)
        qkm2 = x.copy()
        pkm1 = (x.astype(W) + W(1.0)).astype(t)
        qkm1 = z * x
        ans = pkm1 / qkm1
        live = np.flatnonzero(ax != 0)
        for _ in range(_MAXITER):
            if live.size == 0:
                break
            L = live
            c[L] = (c[L].astype(W) + W(1.0)).astype(t)
            y[L] = (y[L].astype(W) + W(1.0)).astype(t)
            z[L] = (z[L].astype(W) + W(2.0)).astype(t)
            yc = y[L] * c[L]
            pk = mad(pkm1[L], z[L], -(pkm2[L] * yc))
            qk = mad(qkm1[L], z[L], -(qkm2[L] * yc))
            nz = qk != 0
            r = pk / qk
            tt = np.where(nz, np.abs((ans[L] - r) / r), t(1))
            ans[L] = np.where(nz, r, ans[L])
            pkm2[L], pkm1[L], qkm2[L], qkm1[L] = pkm1[L], pk, qkm1[L], qk
            scale = np.abs(pk) > big
            S = L[scale]
            pkm2[S] *= biginv
            pkm1[S] *= biginv
            qkm2[S] *= biginv
            qkm1[S] *= biginv
            live = L[~(tt <= eps)]
        return np.where(ax == 0, t(0), ans * ax)


def _igam_helper_asymptotic_series(a, x, igam):
    """igam / igamc by DLMF 8.12.3 / 8.12.4: Temme's uniform expansion for large a, x ~ a."""
    t = a.dtype.type
    eps = _machep(t)
    sgn = -1 if igam else 1
    d = _D.astype(t)
    with np.errstate(all="ignore"):
        lam = x / a
        sigma = (x - a) / a
        root = np.sqrt(t(-2) * (libm("log1p", sigma) - sigma))
        eta = np.where(lam > 1, root, np.where(lam < 1, -root, t(0))).astype(t)
        res = (W(0.5) * libm("erfc", (t(sgn) * eta) * np.sqrt(a / t(2))).astype(W)).astype(t)
        etapow = [np.ones_like(a)]
        for _ in range(1, 25):
            etapow.append(eta * etapow[-1])
        total, afac = np.zeros_like(a), np.ones_like(a)
        absold = np.full_like(a, np.inf)
        live = np.arange(a.size)
        for k in range(25):
            if live.size == 0:
                break
            ck = np.full(live.size, d[k][0], t)
            inner = np.arange(live.size)
            for n in range(1, 25):
                if inner.size == 0:
                    break
                ckterm = d[k][n] * etapow[n][live[inner]]
                ck[inner] = ck[inner] + ckterm
                inner = inner[~(np.abs(ckterm) < eps * np.abs(ck[inner]))]
            term = ck * afac[live]
            absterm = np.abs(term)
            grows = absterm > absold[live]
            keep = ~grows
            L, term, absterm = live[keep], term[keep], absterm[keep]
            total[L] = total[L] + term
            go_on = ~(absterm < eps * np.abs(total[L]))
            L, absterm = L[go_on], absterm[go_on]
            absold[L] = absterm
            afac[L] = afac[L] / a[L]
            live = L
        # sgn * std::exp(-0.5 * a * eta * eta) * sum / std::sqrt(2 * c10::pi<float> * a): the
        # literal makes the exp a double one; the pi is float's, even for double a
        e = libm("exp", W(-0.5) * a.astype(W) * eta.astype(W) * eta.astype(W))
        two_pi = t(W(2) * W(np.float32(math.pi)))
        tail = W(sgn) * e * total.astype(W) / np.sqrt(two_pi * a).astype(W)
        return (res.astype(W) + tail).astype(t)


# -- calc_igamma, calc_igammac ----------------------------------------------------------------------

_SMALL, _LARGE, _SMALLRATIO, _LARGERATIO = 20.0, 200.0, 0.3, 4.5


def _asymptotic_region(a, x):
    """Both functions' test for the uniform expansion: a ~ x, a large."""
    t = a.dtype.type
    with np.errstate(all="ignore"):
        absxma_a = np.abs(x - a) / a
        return (((a > t(_SMALL)) & (a < t(_LARGE)) & (absxma_a < t(_SMALLRATIO)))
                | ((a > t(_LARGE)) & (absxma_a < t(_LARGERATIO) / np.sqrt(a))))


def _boundary(a, x, upper):
    """The boundary values (SciPy's): the result where defined by them, and the mask of the
    elements left to compute. NaN inputs fall through every test, as in C."""
    t = a.dtype.type
    # lo: the value at x = 0 (and a = inf), hi: at x = inf (and a = 0 < x)
    lo, hi = (t(1), t(0)) if upper else (t(0), t(1))
    out = np.full(a.shape, np.nan, t)
    done = (x < 0) | (a < 0)
    zero_a = ~done & (a == 0)
    out[zero_a & (x > 0)] = hi
    done |= zero_a
    zero_x = ~done & (x == 0)
    out[zero_x] = lo
    done |= zero_x
    inf_a = ~done & np.isinf(a)
    out[inf_a & ~np.isinf(x)] = lo
    done |= inf_a
    inf_x = ~done & np.isinf(x)
    out[inf_x] = hi
    done |= inf_x
    return out, ~done


def _one_minus(v):
    """``1.0 - v``: a double subtraction, returned as scalar_t."""
    return (W(1.0) - v.astype(W)).astype(v.dtype)


def _igammac_interior(a, x, mad):
    """calc_igammac past its boundary tests."""
    t = a.dtype.type
    out = np.empty_like(a)
    asym = _asymptotic_region(a, x)
    out[asym] = _igam_helper_asymptotic_series(a[asym], x[asym], False)
    with np.errstate(all="ignore"):
        xw, aw = x.astype(W), a.astype(W)
        big_x = xw > W(1.1)
        small_x = xw <= W(0.5)
        lower = np.where(big_x, x < a, xw * W(1.1) < aw)
        # x <= 0.5: -0.4 / std::log(x) < a (a float log, a double quotient)
        lower[small_x] = W(-0.4) / libm("log", x[small_x]).astype(W) < aw[small_x]
    cf = ~asym & big_x & ~lower
    sub = ~asym & lower
    ser = ~asym & ~big_x & ~lower
    out[sub] = _one_minus(_igam_helper_series(a[sub], x[sub], mad))
    out[cf] = _igamc_helper_continued_fraction(a[cf], x[cf], mad)
    out[ser] = _igamc_helper_series(a[ser], x[ser], mad)
    return out


def calc_igammac(a, x):
    """Q(a, x) for arrays a, x of one float dtype (float32 or float64) and shape. torch's
    igammac kernel is built with its multiply-adds fused."""
    out, rest = _boundary(a, x, True)
    out[rest] = _igammac_interior(a[rest], x[rest], _fused)
    return out


def calc_igamma(a, x):
    """P(a, x) for arrays a, x of one float dtype (float32 or float64) and shape. torch's
    igamma kernel is built without fused multiply-adds, calc_igammac's steps included."""
    mad = _unfused
    out, rest = _boundary(a, x, False)
    a, x = a[rest], x[rest]
    inner = np.empty_like(a)
    asym = _asymptotic_region(a, x)
    inner[asym] = _igam_helper_asymptotic_series(a[asym], x[asym], True)
    via_q = ~asym & (x > 1) & (x > a)
    # 1.0 - calc_igammac(a, x): igammac's own boundary tests pass these, and its asymptotic
    # test is this one, already false
    inner[via_q] = _one_minus(_igammac_interior(a[via_q], x[via_q], mad))
    ser = ~asym & ~via_q
    inner[ser] = _igam_helper_series(a[ser], x[ser], mad)
    out[rest] = inner
    return out


# -- the ops: igamma, igammac, their in-place forms and torch.special's spellings ---------------------

def _binary_kernel(calc, name):
    """igamma_kernel / igammac_kernel: a binary op of torch's promotion (integer and bool
    operands promote among themselves: "igamma_cpu" not implemented for 'Long'); float16 and
    bfloat16 compute in float."""
    check = dispatch_check(name, "f")

    def arrays(a, x):
        work = np.float64 if a.dtype == np.float64 else np.float32
        a, x = np.broadcast_arrays(a.astype(work), x.astype(work))
        shape = a.shape
        out = calc(a.reshape(-1), x.reshape(-1))
        return out.reshape(shape)

    @quiet
    def kernel(self, other):
        return binary(self, other, arrays, compute=check)
    kernel.__name__ = name
    return kernel


_igamma = _binary_kernel(calc_igamma, "igamma_cpu")
_igammac = _binary_kernel(calc_igammac, "igammac_cpu")
_FM, _F, _M = ("function", "method"), ("function",), ("method",)
# d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); Q = 1 - P. No derivative in a (torch has none).
_IGAMMA_D = {"self": 'not_implemented("igamma: input")',
             "other": "grad * exp((self - 1) * log(other) - other - lgamma(self))"}
_IGAMMAC_D = {"self": 'not_implemented("igammac: input")',
              "other": "-grad * exp((self - 1) * log(other) - other - lgamma(self))"}

igamma = op("igamma(Tensor self, Tensor other) -> Tensor", variants=_FM)(_igamma)
derivatives(igamma, _IGAMMA_D)
igamma_ = op("igamma_(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=_M)(
    inplace(_igamma, precheck=True))
derivatives(igamma_, _IGAMMA_D)
igammac = op("igammac(Tensor self, Tensor other) -> Tensor", variants=_FM)(_igammac)
derivatives(igammac, _IGAMMAC_D)
igammac_ = op("igammac_(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=_M)(
    inplace(_igammac, precheck=True))
derivatives(igammac_, _IGAMMAC_D)

# torch.special.gammainc / gammaincc: CompositeImplicit calls of igamma / igammac
composite(op("special_gammainc(Tensor self, Tensor other) -> Tensor", variants=_F)(_igamma))(
    lambda self, other: get_packet("igamma")(self, other))
composite(op("special_gammaincc(Tensor self, Tensor other) -> Tensor", variants=_F)(_igammac))(
    lambda self, other: get_packet("igammac")(self, other))
