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
