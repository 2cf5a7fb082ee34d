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


_SPLIT = 134217729.0  # 2**27 + 1: Dekker's splitter for float64


def _two_product(a, b):
    """p + e == a * b exactly, p = fl(a * b) (Dekker's TwoProduct over float64)."""
    p = a * b
    c = _SPLIT * a
    ah = c - (c - a)
    al = a - ah
    c = _SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fused(a, b, c):
    """TwoProduct of a * b, TwoSum with c, the error terms folded in last (arrays or Python
    floats alike: plain arithmetic)."""
    p, e = _two_product(a, b)
    s = p + c
    v = s - p
    return s + (((p - (s - v)) + (c - v)) + e)


def fma64(a, b, c):
    """a * b + c rounded once, for float64 operands (torch's float64 kernels fuse too, and its
    results show it). NumPy has no fma: the product is split exactly (TwoProduct), added to c
    exactly (TwoSum), and the two error terms folded in last; this misses the correctly rounded
    result only when the error terms themselves round across a tie (astronomically rare). Where
    the split overflows (|a| or |b| beyond ~1e300) or anything is not finite, a * b + c."""
    with np.errstate(all="ignore"):
        a, b, c = np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)
        r = _fused(a, b, c)
        return np.where(np.isfinite(r), r, a * b + c)


def fma64_scalar(a, b, c):
    """fma64 on Python floats (a long scalar loop's step: no array overhead)."""
    r = _fused(a, b, c)
    return r if r - r == 0 else a * b + c


def fma_of(a, b, c):
    """a * b + c rounded once in a's dtype (float32 or float64; arrays or NumPy scalars)."""
    if isinstance(a, np.floating):
        with np.errstate(all="ignore"):
            if isinstance(a, np.float32):
                return np.float32(float(a) * float(b) + float(c))
            return np.float64(fma64_scalar(float(a), float(b), float(c)))
    if np.asarray(a).dtype == np.float32:
        return fma(a, b, c)
    return fma64(a, b, c)
