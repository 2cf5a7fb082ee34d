"""The C library's float (single precision) math functions, element by element: torch's scalar
CPU kernels (calc_erfcx, calc_log_ndtr, zeta ... instantiated for float) call ``std::exp(float)``,
which is glibc's ``expf``. glibc's float functions are not correctly rounded (expf, logf, powf
compute in double and round; erfcf, log1pf compute in float), so neither NumPy's float32 ufuncs
(its own SIMD code) nor float64 rounded to float32 give their results for every input.

Float64 needs no help: NumPy's float64 exp/log/log1p/pow and Python's math.erfc call the same
libm. Without a loadable libm (not glibc), the float functions fall back to float64 rounded to
float32, which agrees with glibc's for all but a few inputs in a thousand.
"""
import ctypes
import ctypes.util
import math

import numpy as np

try:
    _LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
except OSError:  # (no C math library to call: the float64 fallback)
    _LIBM = None

_FALLBACK = {"expf": np.exp, "logf": np.log, "log1pf": np.log1p,
             "erfcf": np.frompyfunc(math.erfc, 1, 1), "powf": np.power, "sinf": np.sin,
             "lgammaf": np.frompyfunc(math.lgamma, 1, 1)}
_CACHE = {}


def libm_lgamma(v):
    """C's lgamma(double) for one number (CPython's math.lgamma is its own, not libm's)."""
    fn = getattr(_LIBM, "lgamma", None) if _LIBM is not None else None
    if fn is None:
        return math.lgamma(v)
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double]
    return fn(v)


def float_fn(name):
    """A NumPy-callable float32 version of libm's ``name`` (``expf``, ``powf`` ...)."""
    if name in _CACHE:
        return _CACHE[name]
    arity = 2 if name == "powf" else 1
    c_fn = getattr(_LIBM, name, None) if _LIBM is not None else None
    if c_fn is not None:
        c_fn.restype = ctypes.c_float
        c_fn.argtypes = [ctypes.c_float] * arity
        ufunc = np.frompyfunc(c_fn, arity, 1)

        def call(*args):
            args = [np.asarray(a, np.float32) for a in args]
            return np.asarray(ufunc(*args), np.float32)
    else:
        wide = _FALLBACK[name]

        def call(*args):
            with np.errstate(all="ignore"):
                out = wide(*[np.asarray(a, np.float32).astype(np.float64) for a in args])
            return np.asarray(out, np.float64).astype(np.float32)
    _CACHE[name] = call
    return call
