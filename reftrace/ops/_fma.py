"""fma(a, b, c) = a * b + c with one rounding, as torch's AVX2 CPU kernels compute some float32
expressions (the compiler fuses the vector multiply and add: addr's ``beta * self + ...``).

NumPy has no fma ufunc. The product of two float32s is exact in float64, so one float64 add
then a cast to float32 gives the fused result (up to a double rounding, which needs a tie in the
29 extra bits: vanishingly rare).
"""
import numpy as np


def fma(a, b, c):
    """a * b + c rounded once, for float32 operands."""
    with np.errstate(all="ignore"):
        return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + c).astype(np.float32)


def _split(a):
    """Veltkamp's split of float64s into high and low halves of 26 bits (exact products)."""
    c = a * 134217729.0  # 2**27 + 1
    high = c - (c - a)
    return high, a - high


def fma64(a, b, c):
    """a * b + c rounded once, for float64 operands (torch's double kernels built for AVX2 fuse
    these too). Dekker's exact product and Knuth's exact sum, then one final addition: the
    correctly rounded result but for rare double-rounding ties (and overflowing products)."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        bb = s - p
        serr = (p - (s - bb)) + (c - bb)
        out = s + (perr + serr)
        # (infinite or NaN operands and overflowing products: the plain expression)
        return np.where(np.isfinite(out) & np.isfinite(p), out, p + c)
