"""torch.special's erfcx, log_ndtr, ndtri, xlog1py and zeta (ATen/native/Math.h, computed by
UnaryOpsKernel.cpp's and BinaryOpsKernel.cpp's scalar ``cpu_kernel`` loops).

The kernels are Math.h's, step by step in its types: the float instantiation computes in float
where the header's expressions are float, in double where a double literal promotes them
(erfcx_y100's coefficients, zeta's ``acc_t``), and calls glibc's float functions (``_libm``).
torch's AVX2 build lets the compiler fuse ``a * b + c`` into an FMA: the ports fuse the same
expressions (``_fma``). Integer inputs compute in the default float dtype; these kernels exist
for float32 and float64 only (AT_DISPATCH_FLOATING_TYPES: Half raises).
"""
import math

import numpy as np

from .. import _dtype as D
from .._tensor import scalar_to_tensor
from . import _math_h_tables as _MH
from ._fma import fma, fma64
from ._iter import pointwise_result
from ._libm import float_fn
from ._pointwise_helpers import binary, float_of
from ._registry import derivatives, op
from .arithmetic import dispatch_check, not_implemented, quiet

_F32 = np.float32
_F = ("function",)


def _fused(t):
    """fma in type t (float32 or float64)."""
    return fma if t is _F32 else fma64


def _exp(x):
    return float_fn("expf")(x) if x.dtype == _F32 else np.exp(x)


def _log(x):
    return float_fn("logf")(x) if x.dtype == _F32 else np.log(x)


# -- erfcx: exp(x**2) erfc(x) (Steven G. Johnson's Faddeeva package) ---------------------------------

def _erfcx_y100(y100, t):
    """erfcx_y100: 100 Chebyshev polynomials in 2*y100 - (2k+1), k = int(y100). The argument is
    T; the coefficients are double literals, so the polynomial is double (Horner's
    ``c + p * t`` steps, which the compiler leaves unfused), rounded to T; y100 == 100 (x == 0)
    returns 1."""
    k = np.clip(y100, 0, 100).astype(np.int64)
    out = np.ones(y100.shape, np.float64)
    for case in np.unique(k):
        if case >= 100:
            continue
        sel = k == case
        tt = (t(2) * y100[sel] - t(2 * case + 1)).astype(t).astype(np.float64)
        coefficients = _MH.ERFCX_Y100[case]
        p = np.full(tt.shape, coefficients[-1])
        for c in coefficients[-2::-1]:
            p = p * tt + c
        out[sel] = p
    return out.astype(t)


def erfcx(x):
    """calc_erfcx, over an array of float32 or float64."""
    t = x.dtype.type
    f = _fused(t)
    with np.errstate(all="ignore"):
        out = np.empty_like(x)
        pos = x >= 0
        far = pos & (x > 50)
        mid = pos & ~far
        ispi = t(0.56418958354775628694807945156)
        xf = x[far]
        xx = xf * xf
        # ispi*((x*x) * (x*x+4.5) + 2) / (x * ((x*x) * (x*x+5) + 3.75)): the 4.5, 2 and 3.75 are
        # double, so float's numerator and denominator mix float and double steps
        num = np.float64(ispi) * fma64(xx.astype(np.float64), xx.astype(np.float64) + 4.5, 2.0)
        if t is _F32:
            den = x[far].astype(np.float64) * ((xx * (xx + t(5))).astype(np.float64) + 3.75)
        else:
            den = xf * fma64(xx, xx + 5.0, 3.75)
        cont = (num / den).astype(t)
        out[far] = np.where(xf > 5e7, ispi / xf, cont)
        xm = x[mid]
        out[mid] = _erfcx_y100((t(400) / (t(4) + xm)).astype(t), t)
        neg = x < 0
        xn = x[neg]
        # (an unqualified ``exp``: C's double exp even for float, so float's 2*exp(x*x) - y is
        # computed in double and rounded once)
        e = np.exp((xn * xn).astype(t).astype(np.float64))
        near = 2.0 * e - _erfcx_y100((t(400) / (t(4) - xn)).astype(t), t).astype(np.float64)
        out[neg] = np.where(xn < -26.7, np.inf, np.where(xn < -6.1, 2.0 * e, near)).astype(t)
        return np.where(np.isnan(x), x, out)


# -- ndtri: the inverse of the standard normal CDF (Cephes) ------------------------------------------

def _polevl(x, coefficients, t):
    """polevl in type t (coefficients highest order first, rounded to t as Math.h's static const T
    tables)."""
    f = _fused(t)
    out = np.zeros_like(x)
    for c in coefficients:
        out = f(out, x, t(c)).astype(t)
    return out


def ndtri(y0):
    """calc_ndtri: a rational approximation in y - 1/2 on the centre, in 1/sqrt(-2 log y) on the
    tails (two ranges), computed in T; its ``::log`` and ``::sqrt`` are C's double ones."""
    t = y0.dtype.type
    with np.errstate(all="ignore"):
        code = ~(y0 > t(1) - t(0.13533528323661269189))
        y = np.where(code, y0, (t(1) - y0).astype(t))
        central = y > t(0.13533528323661269189)
        yc = (y - t(0.5)).astype(t)
        y2 = (yc * yc).astype(t)
        ratio = ((y2 * _polevl(y2, _MH.CALC_NDTRI_P0, t)).astype(t) / _polevl(y2, _MH.CALC_NDTRI_Q0, t)).astype(t)
        xc = (_fused(t)(yc, ratio, yc).astype(t) * t(2.50662827463100050242E0)).astype(t)
        x = np.sqrt(-2.0 * np.log(y.astype(np.float64))).astype(t)
        x0 = (x - np.log(x.astype(np.float64)) / x).astype(t)
        z = (t(1) / x).astype(t)
        x1 = np.where(x < t(8.0),
                      ((z * _polevl(z, _MH.CALC_NDTRI_P1, t)).astype(t) / _polevl(z, _MH.CALC_NDTRI_Q1, t)),
                      ((z * _polevl(z, _MH.CALC_NDTRI_P2, t)).astype(t) / _polevl(z, _MH.CALC_NDTRI_Q2, t))).astype(t)
        xt = (x0 - x1).astype(t)
        out = np.where(central, xc, np.where(code, -xt, xt))
        out = np.where((y0 < 0) | (y0 > 1), np.nan, out)
        return np.where(y0 == 0, -np.inf, np.where(y0 == 1, np.inf, out)).astype(t)


# -- log_ndtr: log of the standard normal CDF (SciPy's) ------------------------------------------------

def _erfc(x):
    if x.dtype == _F32:
        return float_fn("erfcf")(x)
    return np.asarray(np.frompyfunc(math.erfc, 1, 1)(x), np.float64)


def _log1p(x):
    return float_fn("log1pf")(x) if x.dtype == _F32 else np.log1p(x)


def log_ndtr(x):
    """calc_log_ndtr: log(erfcx(-t) / 2) - t**2 below -1 (t = x / sqrt(2)), log1p(-erfc(t) / 2)
    above, with std::log / log1p / erfc: glibc's float functions for float."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        tt = (x * t(0.70710678118654752440)).astype(t)
        low = x < t(-1.0)
        out = np.empty_like(x)
        tl = tt[low]
        out[low] = (_log((erfcx((-tl).astype(t)) / t(2)).astype(t)) - (tl * tl).astype(t)).astype(t)
        th = tt[~low]
        out[~low] = _log1p((-_erfc(th) / t(2)).astype(t))
        return out


# -- zeta: the Hurwitz zeta function (Cephes) ---------------------------------------------------------

_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042E-16


def _zeta_long_sum(a, b, s, e, x, chunk=1 << 16):
    """The direct sum of element e (past its ninth step) continued in chunks of steps: the terms
    (a + k)**-x at once (a + k is exact, as the loop's a += 1), the running sum as the loop adds
    (add.accumulate: left to right). Returns the sum where a term becomes negligible, else None
    with a, b, s left where the loop leaves them (a > 9)."""
    a0, s0 = a[e], s[e]
    while True:
        steps = a0 + np.arange(1.0, chunk + 1.0)
        terms = np.power(steps, -x)
        sums = np.add.accumulate(np.concatenate([[s0], terms]))[1:]
        done = (-_MACHEP * sums < terms) & (terms < _MACHEP * sums)
        leave = steps > 9.0
        first = np.nonzero(done | leave)[0]
        if first.size:
            j = first[0]
            if done[j]:
                return sums[j]
            a[e], b[e], s[e] = steps[j], terms[j], sums[j]
            return None
        a0, s0 = steps[-1], sums[-1]


def zeta(x, q):
    """Math.h's zeta(x, q), elementwise over arrays of one float dtype: sum (q + k)**-x until
    the terms are negligible or k >= 9 and q + k > 9, then the Euler-Maclaurin tail. Computed
    in acc_type (double, for float too), but for its first term ``std::pow(q, -x)``, in T
    (float's is powf)."""
    t = x.dtype.type
    x, q = np.broadcast_arrays(x, q)
    out = np.full(x.shape, np.nan, np.float64)
    with np.errstate(all="ignore"):
        qint = q == np.floor(q)
        result = np.where(x == 1, np.inf, np.where(x < 1, np.nan, np.where(
            (q <= 0) & qint, np.inf, np.nan)))
        run = ~((x == 1) | (x < 1) | ((q <= 0) & (qint | (x != np.floor(x)))))
        out[~run] = result[~run]
        idx = np.nonzero(run.reshape(-1))[0]
        xs = x.reshape(-1)[idx].astype(np.float64)
        qs = q.reshape(-1)[idx]
        first = float_fn("powf")(qs, -qs.dtype.type(1) * x.reshape(-1)[idx]) if t is _F32 \
            else np.power(qs, -xs)
        s = first.astype(np.float64)
        a = qs.astype(np.float64)
        b = np.zeros_like(s)
        res = out.reshape(-1)
        # the direct sum: each element leaves when its terms are negligible (returning s) or
        # when i >= 9 and a > 9 (on to the tail, its a, b, s frozen)
        live = np.arange(idx.size)
        tail = []
        i = 0
        while live.size and i < 32:
            go = (i < 9) | (a[live] <= 9.0)
            tail.append(live[~go])
            live = live[go]
            if not live.size:
                break
            i += 1
            a[live] += 1.0
            b[live] = np.power(a[live], -xs[live])
            s[live] += b[live]
            sl, bl = s[live], b[live]
            done = (-_MACHEP * sl < bl) & (bl < _MACHEP * sl)
            res[idx[live[done]]] = sl[done]
            live = live[~done]
        # (a q far below 0 takes about -q steps: one element at a time, many steps at once)
        for e in live:
            value = _zeta_long_sum(a, b, s, e, xs[e])
            if value is None:
                tail.append(np.array([e]))
            else:
                res[idx[e]] = value
        rest = np.concatenate(tail) if tail else np.zeros(0, np.int64)
        if rest.size:
            xr, ar, br, sr = xs[rest], a[rest], b[rest], s[rest]
            w = ar
            sr = sr + br * w / (xr - 1.0)
            sr = sr - 0.5 * br
            ak = np.ones_like(sr)
            k = 0.0
            final = np.full(sr.shape, np.nan)
            open_ = np.ones(sr.shape, bool)
            for j in range(12):
                ak = ak * (xr + k)
                br = br / w
                tj = ak * br / _ZETA_A[j]
                sr = np.where(open_, sr + tj, sr)
                stop = open_ & (np.abs(tj / sr) < _MACHEP)
                final[stop] = sr[stop]
                open_ &= ~stop
                k += 1.0
                ak = ak * (xr + k)
                br = br / w
                k += 1.0
            final[open_] = sr[open_]
            res[idx[rest]] = final
    return out.astype(t)


# -- the ops ------------------------------------------------------------------------------------------

def _unary(kernel_name, fn):
    """A float op of AT_DISPATCH_FLOATING_TYPES: ints and bools compute in the default float dtype,
    Half, BFloat16 and complex raise."""
    @quiet
    def kernel(self):
        dt = dispatch_check(kernel_name, "f")(float_of(self.dtype))
        if dt not in (D.float32, D.float64):
            raise not_implemented(kernel_name, dt)
        arr = fn(self._array.astype(dt.np))
        return pointwise_result(np.asarray(arr, dt.np), dt, self.device, (self,))
    return kernel


special_erfcx = op("special_erfcx(Tensor self) -> Tensor", variants=_F)(_unary("erfcx_cpu", erfcx))
derivatives(special_erfcx, {"self": "(2.0 * self * result - 2.0 / math.sqrt(M_PI)) * grad"})
special_ndtri = op("special_ndtri(Tensor self) -> Tensor", variants=_F)(_unary("ndtri_cpu", ndtri))
derivatives(special_ndtri, {"self": "grad * math.sqrt(2 * M_PI) * (result.square() / 2).exp()"})
special_log_ndtr = op("special_log_ndtr(Tensor self) -> Tensor", variants=_F)(
    _unary("log_ndtr_cpu", log_ndtr))
derivatives(special_log_ndtr, {"self": "grad / math.sqrt(2 * M_PI) * (result + self.pow(2) / 2).neg().exp()"})


def _xlog1py_arrays(x, y):
    """x * std::log1p(y), 0 where x == 0, NaN where y is. float calls log1pf; Half's std::log1p
    (c10's BFloat16-math.h) is log1pf rounded to Half, and Half * Half multiplies in float."""
    t = x.dtype
    if t != np.float64:
        x, y = x.astype(_F32), y.astype(_F32)
    with np.errstate(all="ignore"):
        log = _log1p(y)
        if t == np.float16:
            log = log.astype(np.float16).astype(_F32)
        r = (x * log).astype(x.dtype)
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0, r)).astype(t)


@quiet
def _xlog1py(self, other):
    return binary(self, other, _xlog1py_arrays,
                  compute=lambda d: dispatch_check("xlog1py_cpu", "f")(float_of(d)))


@quiet
def _zeta(self, other):
    def compute(d):
        d = dispatch_check("zeta_cpu", "f")(float_of(d))
        if d not in (D.float32, D.float64):
            raise not_implemented("zeta_cpu", d)
        return d
    return binary(self, other, zeta, compute=compute)


def _scalar_overloads(name, kernel, tensor, self_scalar, other_scalar):
    """name's Tensor, Scalar-self and Scalar-other overloads (the Scalar ones are
    CompositeExplicitAutograd calls of the Tensor kernel with the number wrapped)."""
    functional = derivatives(op(f"{name}(Tensor self, Tensor other) -> Tensor", variants=_F)(kernel),
                             tensor)
    derivatives(op(f"{name}.self_scalar(Scalar self, Tensor other) -> Tensor", variants=_F)(
        lambda self, other: kernel(scalar_to_tensor(self, other.device), other)), self_scalar)
    derivatives(op(f"{name}.other_scalar(Tensor self, Scalar other) -> Tensor", variants=_F)(
        lambda self, other: kernel(self, scalar_to_tensor(other, self.device))), other_scalar)
    return functional


special_xlog1py = _scalar_overloads(
    "special_xlog1py", _xlog1py,
    {"self": "special_xlog1py(grad, other).masked_fill((self == 0.) & (other <= -1.), 0.)",
     "other": "grad * self / (other + 1)"},
    {"other": "grad * self / (other + 1)"},
    {"self": "(special_xlog1py(grad, other) if other > -1. "
             "else special_xlog1py(grad, other).masked_fill(self == 0., 0.))"})
special_zeta = _scalar_overloads(
    "special_zeta", _zeta,
    {"self": "not_implemented('zeta')", "other": "grad * -self * special_zeta(self + 1., other)"},
    {"other": "grad * -self * special_zeta(self + 1., other)"},
    {"self": "not_implemented('zeta')"})
