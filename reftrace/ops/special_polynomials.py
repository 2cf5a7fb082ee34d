"""torch.special's orthogonal polynomials (ATen/native/Math.h): chebyshev_polynomial_{t,u,v,w},
shifted_chebyshev_polynomial_{t,u,v,w}, hermite_polynomial_{h,he}, laguerre_polynomial_l,
legendre_polynomial_p, each ``(x, n)`` with a Scalar x or n overload.

Binary float ops dispatched over float32/float64 (integer inputs compute in the default float
dtype). Each element is Math.h's ``<name>_forward(T x, T n)`` in the common dtype T:

- ``n`` is cast to T first (an int64 n above 2**24 rounds in float32) and then truncated to
  int64 (``static_cast<int64_t>``: NaN, inf and out-of-range give INT64_MIN, so 0);
- wherever the header mixes that int64 n (or the loop's k) into float arithmetic (``n + T(0.5)``,
  ``(n + 1) * acos(x)``, ``k * p``), it is converted to T and the arithmetic rounds in T;
- torch's CPU kernels are compiled with FMA contraction (``-mfma``), so every ``a * b - c`` of a
  recurrence is one rounding there, float32 and float64 alike (``_fma.fma_of``);
- the closed forms (Chebyshev: for n above a threshold inside (-1, 1)) call libm's acos, cos and
  sin in T: NumPy's float64 ones are libm's; for float32, NumPy's arccos is libm's acosf (on
  x86-64 without AVX-512, where NumPy has no SVML path: measured identical here), and
  cosf/sinf are taken as the correctly rounded float64 value (glibc's differ from that by one
  ulp now and then, far inside float32's tolerance, unlike an error in the argument, which
  the large n multiplies);
- the special cases at the interval's ends (shifted: at x == 0 and x == 1) are the header's.

None is differentiable (derivatives.yaml: non_differentiable).
"""
import numpy as np

from .. import _dtype as D
from .._promotion import result_type
from ._fma import fma64_scalar, fma_of
from ._iter import broadcast_shapes, pointwise_result
from ._pointwise_helpers import float_of
from ._registry import op
from .arithmetic import _wrap, quiet
from .reduction import not_implemented


def _recurrence(x, n, p0, p1, step, k0=1, needed=None):
    """Math.h's loops: p_0 = p0, p_1 = p1, p_{k+1} = step(k, x, p_k, p_{k-1}, T, fma) for k = k0,
    ... (T converts the loop's int64 k, fma is the fused multiply-add in T),
    each element run to its own n (only the ``needed`` elements: the others take a closed form).

    The loop runs over the elements still going (an element whose value became NaN stays NaN,
    as torch's ``!isnan(q)`` exit returns); once only a few remain with a long way to go (torch's
    loop is n steps: a float64 n of millions stays finite for some x) they finish one by one on
    scalars, where a step costs a microsecond or two rather than a dozen vector calls."""
    t = x.dtype.type
    x, n = np.broadcast_arrays(x, n)
    out = np.where(n == 0, t(p0), np.broadcast_to(p1, x.shape)).astype(x.dtype).reshape(-1)
    run = (n.reshape(-1) >= 2) & (True if needed is None else np.broadcast_to(needed, x.shape).reshape(-1))
    idx = np.flatnonzero(run)
    xs, ns = x.reshape(-1)[idx], n.reshape(-1)[idx]
    p = np.broadcast_to(t(p0), x.shape).reshape(-1)[idx]
    q = np.broadcast_to(p1, x.shape).reshape(-1)[idx]
    j = 2  # the index of the value the next step makes
    while idx.size:
        if idx.size <= 4 and int(ns.max()) - j > 2000:
            for i in range(idx.size):
                out[idx[i]] = _scalar_tail(xs[i], int(ns[i]), p[i], q[i], step, k0 + j - 2, j)
            break
        r = step(k0 + j - 2, xs, q, p, t, fma_of)
        p, q = q, r
        done = (ns == j) | np.isnan(r)
        out[idx[done]] = np.where(ns[done] == j, r[done], t(np.nan))
        keep = ~done
        idx, xs, ns, p, q = idx[keep], xs[keep], ns[keep], p[keep], q[keep]
        j += 1
    return out.reshape(x.shape)


def _scalar_tail(x, n, p, q, step, k, j):
    """The rest of one element's loop (value index j onwards, loop counter k), on scalars:
    Python floats for float64 (the same IEEE double arithmetic, without NumPy's scalar
    overhead), NumPy float32 scalars for float32."""
    t, f = np.float32, fma_of
    if x.dtype == np.float64:
        t, f, x, p, q = float, fma64_scalar, float(x), float(p), float(q)
    while j <= n:
        p, q = q, step(k, x, q, p, t, f)
        if q != q:
            break
        k += 1
        j += 1
    return x.dtype.type(q) if isinstance(x, np.generic) else q


# libm in T (see the module docstring)
def _acos(x):
    return np.arccos(x)


def _cos(x):
    return np.cos(x.astype(np.float64)).astype(x.dtype) if x.dtype == np.float32 else np.cos(x)


def _sin(x):
    return np.sin(x.astype(np.float64)).astype(x.dtype) if x.dtype == np.float32 else np.sin(x)


def _of(n, x):
    """An int64 (array) converted to x's float dtype, as C++ does in ``n * T``."""
    return np.asarray(n).astype(x.dtype)


def _chebyshev_step():
    """(y + y) * q - p, fused."""
    return lambda k, y, q, p, t, fma: fma(y + y, q, -p)


def _cheb(y, n, p1, threshold, closed, ends_at, ends):
    """The Chebyshev shape of Math.h: ``ends`` where ``ends_at``; ``closed(theta)`` for
    n > threshold and |y| < 1 (theta = acos(y)); else the recurrence from p_1 = ``p1``."""
    t = y.dtype.type
    trig = (n > threshold) & (np.abs(y) < 1) & ~ends_at
    out = _recurrence(y, n, t(1), p1, _chebyshev_step(), needed=~(trig | ends_at))
    with np.errstate(all="ignore"):
        out = np.where(trig, closed(_acos(y)), out)
    return np.where(ends_at, ends, out)


def _sign(n, even, odd):
    return np.where(n % 2 == 0, even, odd)


def _t(y, n, threshold, ends_at, ends):
    return _cheb(y, n, y, threshold, lambda th: _cos(_of(n, y) * th), ends_at, ends)


def _u(y, n, threshold, ends_at, ends):
    def closed(th):
        s, m = _sin(th), _of(n + 1, y)
        return np.where(s != 0, _sin(m * th) / s, m * _cos(m * th) / y)
    return _cheb(y, n, y + y, threshold, closed, ends_at, ends)


def _v(y, n, threshold, ends_at, ends):
    t = y.dtype.type

    def closed(th):
        half = th / t(2)
        return np.where(_sin(half) != 1, _cos((_of(n, y) + t(0.5)) * th) / _cos(half),
                        _of(_sign(n, n + n + 1, -(n + n + 1)), y))
    return _cheb(y, n, y + y - t(1), threshold, closed, ends_at, ends)


def _w(y, n, threshold, ends_at, ends, flat):
    """``flat``: the value where cos(acos(y) / 2) rounds to 1 (the two headers differ there)."""
    t = y.dtype.type

    def closed(th):
        half = th / t(2)
        return np.where(_cos(half) != 1, _sin((_of(n, y) + t(0.5)) * th) / _sin(half), flat)
    return _cheb(y, n, y + y + t(1), threshold, closed, ends_at, ends)


def _ends(x, n, at_one, at_minus_one, unit):
    """Math.h's end values: ``at_one`` at 1, ``at_minus_one`` at -1 (int64 n arithmetic, then T)."""
    return _of(np.where(x > 0, at_one, at_minus_one), unit)


def chebyshev_t(x, n):
    one = np.ones_like(n)
    return _t(x, n, 6, np.abs(x) == 1, _ends(x, n, one, _sign(n, 1, -1), x))


def chebyshev_u(x, n):
    return _u(x, n, 8, np.abs(x) == 1, _ends(x, n, n + 1, _sign(n, n + 1, -(n + 1)), x))


def chebyshev_v(x, n):
    return _v(x, n, 8, np.abs(x) == 1, _ends(x, n, np.ones_like(n), _sign(n, n + n + 1, -(n + n + 1)), x))


def chebyshev_w(x, n):
    ends = _ends(x, n, n + n + 1, _sign(n, 1, -1), x)
    return _w(x, n, 8, np.abs(x) == 1, ends, ends)


# shifted_chebyshev_polynomial_*: the polynomial at y = x + x - 1, with the header's own end
# tests (x == 1 and x == 0, rather than |y| == 1) and closed-form thresholds.

def _shift(x):
    return x + x - x.dtype.type(1)


def shifted_t(x, n):
    y = _shift(x)
    return _t(y, n, 6, (x == 1) | (x == 0), _ends(x, n, np.ones_like(n), _sign(n, 1, -1), x))


def shifted_u(x, n):
    y = _shift(x)
    return _u(y, n, 6, (x == 1) | (x == 0), _ends(x, n, n + 1, _sign(n, n + 1, -(n + 1)), x))


def shifted_v(x, n):
    y = _shift(x)
    return _v(y, n, 6, (x == 1) | (x == 0),
              _ends(x, n, np.ones_like(n), _sign(n, n + n + 1, -(n + n + 1)), x))


def shifted_w(x, n):
    y = _shift(x)
    return _w(y, n, 4, (x == 1) | (x == 0), _ends(x, n, n + n + 1, _sign(n, 1, -1), x),
              _of(_sign(n, 1, -1), x))


# Hermite: NaN beyond n = 128 (float32) / 512 (float64): getHermitianLimit.
_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}


def _hermite(x, n, out):
    return np.where(n > _HERMITE_LIMIT[x.dtype], x.dtype.type(np.nan), out)


def hermite_h(x, n):
    # r = (x + x) * q - k * p, k = 2, 4, ...: the first product is fused with the subtraction
    t = x.dtype.type
    live = n <= _HERMITE_LIMIT[x.dtype]
    return _hermite(x, n, _recurrence(x, n, t(1), x + x,
                                      lambda k, x, q, p, t, fma: fma(x + x, q, -(t(2 * k) * p)), needed=live))


def hermite_he(x, n):
    t = x.dtype.type
    live = n <= _HERMITE_LIMIT[x.dtype]
    return _hermite(x, n, _recurrence(x, n, t(1), x, lambda k, x, q, p, t, fma: fma(x, q, -(t(k) * p)),
                                      needed=live))


def laguerre_l(x, n):
    # r = (((k + k) + (1 - x)) * q - k * p) / (k + 1)
    t = x.dtype.type
    out = _recurrence(x, n, t(1), t(1) - x,
                      lambda k, x, q, p, t, fma: fma(t(k + k) + (t(1) - x), q, -(t(k) * p)) / t(k + 1))
    return np.where(x == 0, t(1), out)


def legendre_p(x, n):
    # r = ((k + k + 1) * x * q - k * p) / (k + 1)
    t = x.dtype.type
    out = _recurrence(x, n, t(1), x, lambda k, x, q, p, t, fma: fma(t(k + k + 1) * x, q, -(t(k) * p)) / t(k + 1))
    ends = np.where((x > 0) | (n % 2 == 0), t(1), t(-1))
    return np.where(np.abs(x) == 1, ends, out)


_POLYNOMIALS = {
    "chebyshev_polynomial_t": chebyshev_t, "chebyshev_polynomial_u": chebyshev_u,
    "chebyshev_polynomial_v": chebyshev_v, "chebyshev_polynomial_w": chebyshev_w,
    "shifted_chebyshev_polynomial_t": shifted_t, "shifted_chebyshev_polynomial_u": shifted_u,
    "shifted_chebyshev_polynomial_v": shifted_v, "shifted_chebyshev_polynomial_w": shifted_w,
    "hermite_polynomial_h": hermite_h, "hermite_polynomial_he": hermite_he,
    "laguerre_polynomial_l": laguerre_l, "legendre_polynomial_p": legendre_p,
}


def _degree(n, dt):
    """``static_cast<int64_t>(n)`` of n already in T: truncation; NaN, inf and values outside
    int64 give INT64_MIN (x86's cvttss2si), a negative degree (so 0)."""
    nf = n.real if np.iscomplexobj(n) else n
    nf = nf.astype(dt.np)
    ok = np.isfinite(nf) & (np.abs(nf) < 2.0 ** 63)
    with np.errstate(all="ignore"):
        return np.where(ok, np.trunc(np.where(ok, nf, 0)), -1).astype(np.int64)


def _kernel(name, fn):
    @quiet
    def kernel(x, n):
        shape = broadcast_shapes(x._array.shape, n._array.shape)
        dt = float_of(result_type(x, n))
        if dt not in (D.float32, D.float64):  # AT_DISPATCH_FLOATING_TYPES
            raise not_implemented(name + "_cpu", dt)
        xa = np.broadcast_to(x._array.astype(dt.np), shape)
        na = np.broadcast_to(_degree(n._array, dt), shape)
        out = np.where(na < 0, dt.np.type(0), fn(xa, np.maximum(na, 0)) if xa.size else xa)
        return pointwise_result(np.asarray(out, dt.np), dt, x.device if x._array.ndim or not n._array.ndim else n.device, (x, n))
    return kernel


for _name, _fn in _POLYNOMIALS.items():
    _k = _kernel(_name, _fn)
    _full = "special_" + _name
    op(f"{_full}(Tensor x, Tensor n) -> Tensor", variants=("function",), differentiable=False)(_k)
    op(f"{_full}.x_scalar(Scalar x, Tensor n) -> Tensor", variants=("function",),
       differentiable=False)(lambda x, n, _k=_k: _k(_wrap(x, n), n))
    op(f"{_full}.n_scalar(Tensor x, Scalar n) -> Tensor", variants=("function",),
       differentiable=False)(lambda x, n, _k=_k: _k(x, _wrap(n, x)))
