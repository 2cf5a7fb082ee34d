"""The C library's math functions (libm), elementwise over NumPy arrays.

torch's scalar CPU code calls libm: ``std::lgamma(float)`` is ``lgammaf``, ``std::exp(double)`` is
``exp``. NumPy's ufuncs (its own SIMD exp/log) and Python's ``math`` module (its own lgamma) are
other implementations that differ in the last bit, so a kernel that must match torch bit for bit
calls the same libm through ctypes, in the argument's precision (``lgammaf`` for float32).
glibc's float functions are not correctly rounded (expf, logf, powf compute in double and
round; erfcf, log1pf compute in float), so neither NumPy's float32 ufuncs nor float64 rounded
to float32 give their results for every input.
Where no libm can be loaded, the double function of ``math`` stands in, rounded to the dtype.
"""
import ctypes
import ctypes.util
import math

import numpy as np

_LIB = None
try:  # pragma: no branch
    _name = ctypes.util.find_library("m")
    _LIB = ctypes.CDLL(_name) if _name else None
except OSError:  # pragma: no cover
    _LIB = None

_FALLBACK = {"lgamma": math.lgamma, "log": math.log, "exp": math.exp, "log1p": math.log1p,
             "expm1": math.expm1, "erfc": math.erfc, "pow": math.pow, "sin": math.sin}
_CACHE = {}


def _function(name, single, nargs):
    key = (name, single, nargs)
    fn = _CACHE.get(key)
    if fn is None:
        c_name = name + ("f" if single else "")
        if _LIB is not None and hasattr(_LIB, c_name):
            fn = getattr(_LIB, c_name)
            ctype = ctypes.c_float if single else ctypes.c_double
            fn.restype, fn.argtypes = ctype, [ctype] * nargs
        else:  # pragma: no cover
            fn = _python_fallback(_FALLBACK[name])
        _CACHE[key] = fn
    return fn


def _python_fallback(f):  # pragma: no cover
    def call(*args):
        try:
            return f(*args)
        except (ValueError, OverflowError):
            return math.nan
    return call


def libm(name, *arrays):
    """libm's ``name`` (``namef`` for float32 arguments) applied elementwise; arrays of one
    dtype (float32 or float64) and shape. The result has that dtype."""
    dtype = arrays[0].dtype
    fn = _function(name, dtype == np.float32, len(arrays))
    lists = [np.asarray(a).ravel().tolist() for a in arrays]
    out = np.fromiter(map(fn, *lists), dtype=np.float64, count=len(lists[0]))
    return out.astype(dtype).reshape(np.shape(arrays[0]))


def float_fn(name):
    """libm's float function ``name`` (``expf``, ``powf`` ...) as a NumPy-callable: its
    arguments broadcast and are taken as float32."""
    def call(*args):
        arrays = np.broadcast_arrays(*[np.asarray(a, np.float32) for a in args])
        return libm(name[:-1], *arrays)
    return call


def libm_lgamma(v):
    """C's lgamma(double) for one number (CPython's math.lgamma is its own, not libm's)."""
    return _function("lgamma", False, 1)(v)
