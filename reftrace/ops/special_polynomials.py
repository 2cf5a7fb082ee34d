"""torch.special's orthogonal polynomials (ATen/native/Math.h): chebyshev_polynomial_{t,u,v,w},
shifted_chebyshev_polynomial_{t,u,v,w}, hermite_polynomial_{h,he}, laguerre_polynomial_l,
legendre_polynomial_p, each ``(x, n)`` with a Scalar x or n overload.

Binary float ops (integer inputs compute in the default float dtype); ``n`` is truncated to an
integer per element. Each value is torch's three-term recurrence run to that element's n, in the
result dtype (float32 arithmetic for float32), with torch's closed forms where it uses them (for
large n inside [-1, 1], and at the interval's ends). None is differentiable (derivatives.yaml:
non_differentiable).
"""
import numpy as np

from .._promotion import result_type
from ._iter import broadcast_shapes, pointwise_result
from ._pointwise_helpers import float_of
from ._registry import op
from .arithmetic import _wrap, quiet


def _recurrence(x, n, p0, p1, step, k0=1, needed=None):
    """p_0 = p0, p_1 = p1, p_{k+1} = step(k, p_k, p_{k-1}) for k = k0 .. per element n (up to
    the largest n among the ``needed`` elements: the others take a closed form)."""
    out = np.where(n == 0, p0, p1)
    p, q = np.broadcast_to(p0, x.shape).copy(), np.broadcast_to(p1, x.shape).copy()
    live = n if needed is None else n[needed]
    top = int(live.max()) if live.size else 0
    for i, k in enumerate(range(k0, k0 + top - 1)):
        r = step(k, q, p)
        p, q = q, r
        out = np.where(n == i + 2, r, out)
        later = n > i + 2
        if not np.isfinite(np.where(later, q, 0)).all() and \
                not np.isfinite(np.where(later, p, np.nan)).any():
            # every value still running has overflowed: the recurrence only makes NaNs now
            # (inf - inf), however long torch's loop runs
            return np.where(later, np.nan, out)
    return out


def _t(x, n):
    t = x.dtype.type
    out = _recurrence(x, n, t(1), x, lambda k, q, p: (x + x) * q - p,
                      needed=~(((n > 6) & (np.abs(x) < 1)) | (np.abs(x) == 1)))
    with np.errstate(all="ignore"):
        closed = np.cos(n * np.arccos(x)).astype(x.dtype)
    out = np.where((n > 6) & (np.abs(x) < 1), closed, out)
    ends = np.where((x > 0) | (n % 2 == 0), t(1), t(-1))
    return np.where(np.abs(x) == 1, ends, out)


def _u(x, n):
    t = x.dtype.type
    out = _recurrence(x, n, t(1), x + x, lambda k, q, p: (x + x) * q - p,
                      needed=~(((n > 8) & (np.abs(x) < 1)) | (np.abs(x) == 1)))
    with np.errstate(all="ignore"):
        theta = np.arccos(x)
        s = np.sin(theta)
        closed = np.where(s != 0, np.sin((n + 1) * theta) / s, (n + 1) * np.cos((n + 1) * theta) / x)
    out = np.where((n > 8) & (np.abs(x) < 1), closed.astype(x.dtype), out)
    ends = np.where((x > 0) | (n % 2 == 0), n + 1, -(n + 1)).astype(x.dtype)
    return np.where(np.abs(x) == 1, ends, out)


def _v(x, n):
    t = x.dtype.type
    out = _recurrence(x, n, t(1), x + x - t(1), lambda k, q, p: (x + x) * q - p,
                      needed=~(((n > 8) & (np.abs(x) < 1)) | (np.abs(x) == 1)))
    odd_end = np.where(n % 2 == 0, n + n + 1, -(n + n + 1)).astype(x.dtype)
    with np.errstate(all="ignore"):
        theta = np.arccos(x)
        closed = np.where(np.sin(theta / t(2)) != 1, np.cos((n + t(0.5)) * theta) / np.cos(theta / t(2)),
                          odd_end)
    out = np.where((n > 8) & (np.abs(x) < 1), closed.astype(x.dtype), out)
    ends = np.where(x > 0, t(1), odd_end)
    return np.where(np.abs(x) == 1, ends, out)


def _w(x, n):
    t = x.dtype.type
    out = _recurrence(x, n, t(1), x + x + t(1), lambda k, q, p: (x + x) * q - p,
                      needed=~(((n > 8) & (np.abs(x) < 1)) | (np.abs(x) == 1)))
    ends = np.where(x > 0, n + n + 1, np.where(n % 2 == 0, 1, -1)).astype(x.dtype)
    with np.errstate(all="ignore"):
        theta = np.arccos(x)
        closed = np.where(np.cos(theta / t(2)) != 1, np.sin((n + t(0.5)) * theta) / np.sin(theta / t(2)),
                          ends)
    out = np.where((n > 8) & (np.abs(x) < 1), closed.astype(x.dtype), out)
    return np.where(np.abs(x) == 1, ends, out)


def _shifted(fn):
    """shifted_chebyshev_polynomial_*: the polynomial at 2x - 1 (torch: x + x - 1)."""
    def f(x, n):
        return fn(x + x - x.dtype.type(1), n)
    return f


def _h(x, n):
    t = x.dtype.type
    return _recurrence(x, n, t(1), x + x, lambda k, q, p: (x + x) * q - (2 * k) * p)


def _he(x, n):
    t = x.dtype.type
    return _recurrence(x, n, t(1), x, lambda k, q, p: x * q - k * p)


def _laguerre(x, n):
    t = x.dtype.type
    out = _recurrence(x, n, t(1), t(1) - x,
                      lambda k, q, p: (((k + k) + (t(1) - x)) * q - k * p) / t(k + 1))
    return np.where(x == 0, t(1), out)


def _legendre(x, n):
    t = x.dtype.type
    out = _recurrence(x, n, t(1), x, lambda k, q, p: (t(k + k + 1) * x * q - k * p) / t(k + 1))
    ends = np.where((x > 0) | (n % 2 == 0), t(1), t(-1))
    return np.where(np.abs(x) == 1, ends, out)


_POLYNOMIALS = {
    "chebyshev_polynomial_t": _t, "chebyshev_polynomial_u": _u,
    "chebyshev_polynomial_v": _v, "chebyshev_polynomial_w": _w,
    "shifted_chebyshev_polynomial_t": _shifted(_t), "shifted_chebyshev_polynomial_u": _shifted(_u),
    "shifted_chebyshev_polynomial_v": _shifted(_v), "shifted_chebyshev_polynomial_w": _shifted(_w),
    "hermite_polynomial_h": _h, "hermite_polynomial_he": _he,
    "laguerre_polynomial_l": _laguerre, "legendre_polynomial_p": _legendre,
}


def _kernel(fn):
    @quiet
    def kernel(x, n):
        shape = broadcast_shapes(x._array.shape, n._array.shape)
        dt = float_of(result_type(x, n))
        xa = np.broadcast_to(x._array.astype(dt.np), shape)
        nf = np.broadcast_to(n._array, shape)
        na = np.trunc(nf.real if np.iscomplexobj(nf) else nf).astype(np.int64) if nf.dtype.kind in "fc" \
            else nf.astype(np.int64)
        out = np.where(na < 0, dt.np.type(0), fn(xa, np.maximum(na, 0)) if xa.size else xa)
        return pointwise_result(np.asarray(out, dt.np), dt, x.device if x._array.ndim or not n._array.ndim else n.device, (x, n))
    return kernel


for _name, _fn in _POLYNOMIALS.items():
    _k = _kernel(_fn)
    _full = "special_" + _name
    op(f"{_full}(Tensor x, Tensor n) -> Tensor", variants=("function",), differentiable=False)(_k)
    op(f"{_full}.x_scalar(Scalar x, Tensor n) -> Tensor", variants=("function",),
       differentiable=False)(lambda x, n, _k=_k: _k(_wrap(x, n), n))
    op(f"{_full}.n_scalar(Tensor x, Scalar n) -> Tensor", variants=("function",),
       differentiable=False)(lambda x, n, _k=_k: _k(x, _wrap(n, x)))
