"""Complex arithmetic as torch's CPU kernels compute it (c10/util/complex.h, vec256/512_complex_*.h).

torch multiplies complex numbers with the textbook formula, each product rounded on its own:
``(a + bi)(c + di) = (ac - bd) + (ad + bc)i``; and its add/sub kernels compute
``self + alpha * other`` for every alpha, 1 included. NumPy differs where it matters for
infinities and large values: its SIMD loops fuse ``ad + bc`` into one FMA, and ``a + b`` never
multiplies by 1 + 0i (so ``inf * 0`` never makes a NaN). These helpers take the place of
``np.multiply`` / ``np.add`` on complex arrays; real arrays go straight to NumPy.
"""
import numpy as np


def _xp(a):
    if isinstance(a, (np.ndarray, np.generic)):
        return np
    from reftrace_backends import get_backend
    return get_backend("cuda").xp


def cmul(x, y):
    """x * y, elementwise, torch's formula (both complex arrays of one dtype, or broadcastable)."""
    xr, xi, yr, yi = x.real, x.imag, y.real, y.imag
    re = xr * yr
    re -= xi * yi
    im = xr * yi
    im += xi * yr
    out = _xp(x).empty(re.shape, dtype=np.result_type(x.dtype, y.dtype))
    out.real, out.imag = re, im
    return out


def multiply(x, y):
    """np.multiply, with torch's complex product."""
    if x.dtype.kind == "c" and y.dtype.kind == "c":
        return cmul(x, y)
    return np.multiply(x, y)


def axpy(x, y, alpha):
    """x + alpha * y as torch's complex add kernel computes it (alpha a complex scalar)."""
    xp = _xp(y)
    return xp.add(x, cmul(xp.asarray(alpha, dtype=y.dtype), y))
