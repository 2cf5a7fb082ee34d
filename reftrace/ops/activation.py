"""Activations: the clamp family (relu, relu6, hardtanh, threshold, leaky_relu), the smooth ones
(elu, gelu, silu, softplus) and softmax / log_softmax.

Most of these live in torch's ``nn`` Python module (``python_module: nn`` in
native_functions.yaml: ``torch._C._nn.gelu``), so they are registered without a ``reftrace.<name>``
function; ``nn.functional`` reaches them through the op table, and a trace records them by their
ATen name (``F.relu6`` records ``aten::relu6``, not ``hardtanh``).

Precision: the smooth activations compute float32 in float64 and float16 in float32 (torch's CPU
kernels use a wider accumulation type for half) and round once; the clamp family is exact in any
dtype. NumPy has no erf, so exact GELU uses ``_erf`` below.
"""
import functools
import math

import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, _wrap_dim, xp_of
from ._pointwise_helpers import write_inplace
from .arithmetic import run_quiet
from ._iter import pointwise_result
from ._registry import composite, derivatives, op
from .reduction import empty_like_layout, not_implemented


# -- helpers --------------------------------------------------------------------------------------

_C_TYPES = {D.bool: "bool", D.uint8: "uint8_t", D.int8: "int8_t", D.int16: "int16_t",
            D.int32: "int", D.int64: "int64_t"}


def scalar_as(value, dtype):
    """A Scalar argument as the kernel's scalar_t (c10's checked_convert): truncated for integral
    types, with torch's overflow check (unsigned types accept negatives down to -max: they wrap)."""
    if dtype.category >= 2:
        return value
    if dtype is D.bool:
        return bool(value)
    info = np.iinfo(dtype.np)
    low = -int(info.max) if info.min == 0 else int(info.min)
    if not low <= value <= info.max:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype]} without overflow")
    v = int(value)
    return v & int(info.max) if info.min == 0 else v


def _register_inplace(schema, functional, variants=()):
    """``name_`` computes ``name`` and writes it back into self (torch's in-place variants)."""
    def kernel(self, *args):
        return write_inplace(self, functional.kernel(self, *args))
    kernel.__name__ = schema.split("(")[0]
    return op(schema, variants=variants)(kernel)


# float16 computes in float32, float32 in float64: one rounding at the end, as close to torch's
# (wider-accumulating) CPU kernels as NumPy gets.
_WIDER = {D.float16: np.float32, D.float32: np.float64}


def _smooth(self, kernel_name, fn, allow_complex=False):
    """fn(x) for a floating input (torch's "<kernel> not implemented for <dtype>" otherwise)."""
    dt = self.dtype
    if not (dt.is_floating_point or (allow_complex and dt.is_complex)):
        raise not_implemented(kernel_name, dt)
    a = self._array
    wide = _WIDER.get(dt)
    arr = run_quiet(fn, a.astype(wide) if wide is not None else a)
    return _like_input(arr, self)


def _like_input(arr, self):
    """Wrap a kernel's array (NumPy returns scalars for 0-dim inputs) with the input's layout."""
    dt = self.dtype
    if type(arr) is np.ndarray and arr.dtype is dt.np and (
            arr.ndim <= 1 or (self._stride is None and 0 not in arr.shape and 1 not in arr.shape)):
        # what pointwise_result gives when the layout is contiguous (its pointwise_strides rule),
        # without its calls: relu on a small tensor is mostly such overhead
        return _fresh(arr, dt, self.device)
    return pointwise_result(np.asarray(arr, dtype=dt.np), dt, self.device, (self,))


def _clamp(self, lo, hi, name):
    """clamp(self, lo, hi) in self's dtype: the limits are converted to self's scalar type."""
    dt = self.dtype
    if dt is D.bool:
        raise RuntimeError(f"{'Boolean' if name == 'relu' else 'Bool'} inputs not supported for {name}")
    if dt.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    lo = None if lo is None else scalar_as(lo, dt)
    hi = None if hi is None else scalar_as(hi, dt)
    # std::min(std::max(x, lo), hi): a tie keeps x (relu(-0.0) is -0.0) and NaN passes through;
    # NumPy's maximum/clip would return the limit's +0.0
    xp = xp_of(self)
    arr = self._array
    if lo is not None:
        arr = xp.where(arr < lo, xp.asarray(lo, arr.dtype), arr)
    if hi is not None:
        arr = xp.where(hi < arr, xp.asarray(hi, arr.dtype), arr)
    return _like_input(arr, self)


# -- the clamp family -----------------------------------------------------------------------------

_ZEROS = {}  # dtype -> a 0-d zero array of that dtype (relu's limit)


def _maximum_is_relu(np_dtype):
    """Whether ``np.maximum(zero, x)`` gives relu's bits (see _clamp: x itself unless x < 0, so
    -0.0 and every NaN keep their bits) for 1-d x below _RELU_BITS_MIN elements on this machine.
    NumPy's x86 loops do (the max instruction returns its second operand on a tie and for a
    NaN), but NumPy documents maximum as where(x1 >= x2, x1, x2) (+0.0 for -0.0 here), which
    other builds or CPUs (NEON's max) may follow. So relu's fast path is taken only after this check: every class of value (signed zeros,
    quiet and signalling NaNs of both signs, infinities, subnormals) at every lane, over the
    lengths, offsets and strides that select the loop's vector, unrolled and tail parts."""
    uint = {4: np.uint32, 8: np.uint64}[np.dtype(np_dtype).itemsize]
    info = np.finfo(np_dtype)
    bits = info.bits
    nans = [(0b11 << (info.nmant - 1)) | 5, (0b10 << (info.nmant - 1)) | 3]  # quiet, signalling
    exp = ((1 << info.nexp) - 1) << info.nmant
    nans = [exp | n for n in nans] + [(1 << (bits - 1)) | exp | n for n in nans]  # both signs
    values = np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, info.max, -info.max,
                       info.smallest_subnormal, -info.smallest_subnormal, info.tiny, -info.tiny],
                      np_dtype)
    values = np.concatenate([values, np.array(nans, uint).view(np_dtype)])
    # repeating 29 values (prime): each value comes at every lane of every vector width
    pattern = np.resize(np.concatenate([values, values[:-3]]), 2 * _RELU_BITS_MIN + 8)
    zero = np.zeros((), np_dtype)
    with np.errstate(all="ignore"):  # (the signalling NaNs)
        return all(_maximum_agrees(pattern[offset:offset + step * n:step], zero)
                   for n in [*range(300), 1000, _RELU_BITS_MIN - 1] for offset in (0, 1, 3)
                   for step in (1, 2))  # (2: NumPy's strided loop, should an array not be dense)


def _maximum_agrees(x, zero):
    """maximum(0, x) and relu's where (the general path's form) give the same bytes."""
    return np.maximum(zero, x).tobytes() == np.where(x < zero, zero, x).tobytes()


_MAXIMUM_ZEROS = {}  # float dtype -> its 0-d zero where _maximum_is_relu, else None


@op("relu(Tensor self) -> Tensor", variants=("function", "method"))
def relu(self):
    arr, dt = self._array, self.dtype
    if self._stride is None and type(arr) is np.ndarray and arr.ndim == 1 \
            and arr.size < _RELU_BITS_MIN:
        # a small contiguous 1-d tensor (the commonest eager case): one NumPy call, where this
        # machine's np.maximum(0, x) is relu (see _maximum_is_relu), not three; its 1-d result
        # is C-contiguous (from _RELU_BITS_MIN elements _relu_contiguous's bitwise form is faster)
        zero = _MAXIMUM_ZEROS.get(dt)
        if zero is None and (dt is D.float32 or dt is D.float64) and dt not in _MAXIMUM_ZEROS:
            zero = _MAXIMUM_ZEROS[dt] = np.zeros((), dt.np) if _maximum_is_relu(dt.np) else None
        if zero is not None:
            return _fresh(np.maximum(zero, arr), dt, self.device, True)
    if (dt.category == 1 or dt.category == 2) and type(arr) is np.ndarray:
        # _clamp(self, 0, None) for integral and floating NumPy data (bool and complex raise
        # there), with the limit as a 0-d zero of self's dtype: comparing with a Python 0 means
        # the same zero (exact in every dtype) but resolves its type on each call, ~1 us
        zero = _ZEROS.get(dt)
        if zero is None:
            zero = _ZEROS[dt] = np.zeros((), dt.np)
        if self._stride is not None or arr.ndim == 0:
            return _like_input(np.where(arr < zero, zero, arr), self)
        return _like_input(_relu_contiguous(arr, zero, dt), self)
    return _clamp(self, 0, None, "relu")


_SAME_SIZE_INTS = {2: np.int16, 4: np.int32, 8: np.int64}
_RELU_BITS_MIN = 4096  # from this many elements the bitwise form beats where's copy loop


def _relu_contiguous(arr, zero, dt):
    """where(x < 0, 0, x) of a contiguous array, by cheaper NumPy calls giving the same bits.
    NumPy's maximum(x, 0) cannot stand in for floats: its result for NaN (a canonical NaN) and
    for max(-0.0, 0) is not torch's (x itself), and maximum(0, x) is only on some machines (see
    _maximum_is_relu); for integers it is the same function."""
    if dt.category == 1:
        return np.maximum(arr, zero)
    negative = arr < zero
    if arr.size < _RELU_BITS_MIN:
        out = arr.copy()  # (copy then putmask: cheaper than where's broadcast of a 0-d zero)
        np.putmask(out, negative, zero)
        return out
    # where's loop over a broadcast 0-d zero costs ~4 ns an element (10x maximum): instead, the
    # bits of x and-ed with a mask that is all ones where not x < 0 (so -0.0 and NaN keep theirs)
    # and zero where x < 0 (+0.0)
    keep = negative.view(np.int8)
    keep -= 1  # True (1) -> 0, False (0) -> -1: all ones once widened
    ints = _SAME_SIZE_INTS[arr.itemsize]
    return np.bitwise_and(arr.view(ints), keep, dtype=ints).view(dt.np)


derivatives(relu, {"self": "threshold_backward(grad, result, 0)"})


@op("relu6(Tensor self) -> Tensor", variants=())
def relu6(self):
    # ATen's relu6 is hardtanh(self, 0, 6): the error messages say hardtanh
    return hardtanh.kernel(self, 0, 6)


@composite(relu6)
def _relu6_composite(self):
    return hardtanh(self, 0, 6)


@op("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", variants=())
def hardtanh(self, min_val, max_val):
    # integral inputs: the limits are truncated first (int(-0.5) == 0 is a valid uint8 limit)
    if self.dtype is D.uint8 and (int(min_val) < 0 or int(max_val) < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    # ATen writes clamp's result into empty_like(self): an empty input keeps its strides
    result = _clamp(self, min_val, max_val, "hardtanh")
    return empty_like_layout(self, result._array, result.dtype)


derivatives(hardtanh, {"self": "hardtanh_backward(grad, self, min_val, max_val)"})


@op("threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor", variants=("function",))
def threshold(self, threshold, value):
    dt = self.dtype
    if dt is D.bool or dt.is_complex:
        raise not_implemented("threshold_cpu", dt)
    xp = xp_of(self)
    a = self._array
    # NaN <= threshold is false: NaN passes through, as in torch
    arr = xp.where(a <= scalar_as(threshold, dt), xp.asarray(scalar_as(value, dt), dtype=dt.np), a)
    return _like_input(arr, self)


derivatives(threshold, {"self": "threshold_backward(grad, self, threshold)"})


@op("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", variants=())
def leaky_relu(self, negative_slope):
    dt = self.dtype
    if not dt.is_floating_point:
        raise not_implemented("leaky_relu_cpu", dt)
    xp = xp_of(self)
    a = self._array
    # the slope is a scalar_t, except for half, which torch multiplies in float32
    slope = xp.asarray(negative_slope, dtype=np.float32 if dt is D.float16 else dt.np)
    return _like_input(xp.where(a > 0, a, a * slope), self)


derivatives(leaky_relu, {"self": "leaky_relu_backward(grad, self, negative_slope, False)"})


# -- smooth activations ---------------------------------------------------------------------------

@op("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", variants=())
def elu(self, alpha, scale, input_scale):
    def fn(x):
        return np.where(x > 0, x * scale, np.expm1(x * input_scale) * (alpha * scale))
    return _smooth(self, "elu_cpu", fn)


derivatives(elu, {"self": "elu_backward(grad, alpha, scale, input_scale, False, self)"})


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_SQRT_HALF = math.sqrt(0.5)
# gelu's constants as operands: Python numbers (each NumPy call converts them to the array's
# type), and for float64 arrays the same values as 0-d float64 arrays, which NumPy takes as they
# are (~0.4 us less a call). Only ever with float64 arrays: next to a float32 one a 0-d float64
# array would promote the result.
_GELU_PY = (0.044715, _SQRT_2_OVER_PI, 1, 0.5, _SQRT_HALF)
_GELU_F64 = tuple(np.array(v, np.float64) for v in _GELU_PY)


@op('gelu(Tensor self, *, str approximate="none") -> Tensor', variants=())
def gelu(self, approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    dt, a = self.dtype, self._array
    if (dt is D.float32 or dt is D.float64) and type(a) is np.ndarray and a.ndim:
        # _smooth's steps without its generality: float32 is widened into a float64 array of
        # our own, which then holds the result
        x = a.astype(np.float64) if dt is D.float32 else a
        kernel = _gelu_tanh if approximate == "tanh" else _gelu_erf
        arr = run_quiet(kernel, x, x if x is not a else None, _GELU_F64)
        return _like_input(arr.astype(dt.np, copy=False), self)

    def fn(x):
        if approximate == "tanh" and not x.ndim:  # (NumPy's 0-dim results are scalars: no out=)
            return 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
        return (_gelu_tanh if approximate == "tanh" else _gelu_erf)(x, None, _GELU_PY)
    return _smooth(self, "GeluKernelImpl", fn)


def _gelu_tanh(x, out, consts):
    """0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x * x * x))) step by step, in place
    (the same operations in the same order, so the same roundings, without a temporary array
    per step); the result is written into ``out`` (x itself when it is ours) or a new array."""
    kappa, beta, one, half, _ = consts
    t = np.multiply(kappa, x)
    t *= x
    t *= x
    t += x
    t *= beta
    np.tanh(t, out=t)
    t += one
    out = np.multiply(half, x, out=out)
    out *= t
    return out


def _gelu_erf(x, out, consts):
    """torch's formula 0.5 * x * (1 + erf(x * sqrt(0.5))) (not erfc's: 1 + erf(...) underflows
    to 0 for very negative x there too), the sums and products in place (each the same
    rounding)."""
    _, _, one, half, sqrt_half = consts
    r = _erf(np.multiply(x, sqrt_half))
    r += one
    if out is None:
        r *= np.multiply(half, x)
    else:
        r *= np.multiply(half, x, out=out)
    return r


derivatives(gelu, {"self": "gelu_backward(grad, self, approximate=approximate)"})


@op("silu(Tensor self) -> Tensor", variants=())
def silu(self):
    return _smooth(self, "silu_cpu", lambda x: x / (1 + np.exp(-x)), allow_complex=True)


derivatives(silu, {"self": "(infinitely_differentiable_silu_backward(grad, self) if is_grad_enabled() "
                           "else silu_backward(grad, self))"})


@op("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", variants=())
def softplus(self, beta, threshold):
    def fn(x):
        # above the threshold torch returns x itself (log1p(exp(bx))/b == x to working precision)
        return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)
    return _smooth(self, "softplus_cpu", fn)


derivatives(softplus, {"self": "softplus_backward(grad, self, beta, threshold)"})


# In-place variants: relu_ is a function and a method; the nn ones have no Python variant.
@op("relu_(Tensor(a!) self) -> Tensor(a!)", variants=("function", "method"))
def relu_(self):
    a = self._array
    if self.dtype.is_floating_point and type(a) is np.ndarray and a.flags.writeable:
        # relu computed into self directly (what writing relu's result back gives, one pass
        # instead of a new array and a copy): negatives become 0; NaN and -0.0 stay. (The
        # zero: a 0-d array of a's dtype, which copyto takes faster than the Python int.)
        zero = _ZEROS.get(a.dtype)
        if zero is None:
            zero = _ZEROS[a.dtype] = np.zeros((), a.dtype)
            zero.flags.writeable = False
        np.copyto(a, zero, where=a < 0)
        self._version += 1
        return self
    return write_inplace(self, relu.kernel(self))


_ZEROS = {}  # dtype -> a read-only 0-d +0.0 of it, for relu_
relu6_ = _register_inplace("relu6_(Tensor(a!) self) -> Tensor(a!)", relu6)
hardtanh_ = _register_inplace(
    "hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)", hardtanh)
threshold_ = _register_inplace(
    "threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)", threshold, ("function",))
leaky_relu_ = _register_inplace(
    "leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)", leaky_relu)
elu_ = _register_inplace(
    "elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)", elu)
gelu_ = _register_inplace('gelu_(Tensor(a!) self, *, str approximate="none") -> Tensor(a!)', gelu)
silu_ = _register_inplace("silu_(Tensor(a!) self) -> Tensor(a!)", silu)
derivatives(relu_, relu.derivatives)
composite(relu6_)(lambda self: hardtanh_(self, 0, 6))
derivatives(hardtanh_, hardtanh.derivatives)
derivatives(threshold_, threshold.derivatives)
derivatives(leaky_relu_, {"self": "leaky_relu_backward(grad, result, negative_slope, True)"})
derivatives(elu_, {"self": "elu_backward(grad, alpha, scale, input_scale, True, result)"})
derivatives(gelu_, gelu.derivatives)
derivatives(silu_, silu.derivatives)


# -- erf ------------------------------------------------------------------------------------------
#
# NumPy has no erf and math.erf is one Python call per element. erf is a piecewise polynomial
# here: 48 segments of [0, 6], degree 8 in each segment's local variable s in [-1, 1]. Below 1 the
# polynomial is g(x) = erf(x) / x (smooth and even: tiny x keep their relative precision), from
# 1 on it is erfc(x) and erf = 1 - erfc (the small term carries the error: near 1 the result
# keeps float64's absolute precision); past 6, erf(x) == 1 in float64. Each element picks its
# segment's coefficients by index (one gather per power, then Horner), so an array costs ~30
# NumPy calls whatever its values. Fitted once, on first use, against math.erf / math.erfc at
# Chebyshev nodes (max error ~4e-16; tests compare with torch.erf in float64).

_ERF_SEGMENTS, _ERF_DEGREE, _ERF_END = 48, 8, 6.0
_ERF_SMALL = 8  # segments below x = 1: erf(x) / x


@functools.lru_cache(maxsize=None)
def _erf_coefficients():
    """(degree + 1, segments) array: row k holds every segment's coefficient of s**(degree - k)."""
    cheb = np.polynomial.chebyshev
    width = _ERF_END / _ERF_SEGMENTS
    nodes = np.cos(np.pi * (np.arange(200) + 0.5) / 200)
    coefs = np.empty((_ERF_DEGREE + 1, _ERF_SEGMENTS))
    for k in range(_ERF_SEGMENTS):
        x = k * width + (nodes + 1) * (width / 2)  # (never 0: nodes are interior)
        f = [math.erf(v) / v for v in x] if k < _ERF_SMALL else [math.erfc(v) for v in x]
        coefs[:, k] = cheb.cheb2poly(cheb.chebfit(nodes, f, _ERF_DEGREE))[::-1]
    return coefs


@functools.lru_cache(maxsize=None)
def _erf_table():
    """The coefficients as _erf evaluates them: the erfc segments negated (rounding to nearest is
    symmetric, so Horner's steps give exactly -erfc), and a segment past the end whose
    polynomial is 0 (so 1 - 0 = erf there, as erf(x >= 6) == 1 in float64)."""
    table = np.zeros((_ERF_DEGREE + 1, _ERF_SEGMENTS + 1))
    table[:, :_ERF_SEGMENTS] = _erf_coefficients()
    table[:, _ERF_SMALL:_ERF_SEGMENTS] *= -1
    return table


_FLOAT64 = np.dtype(np.float64)
# _erf's scalars: Python numbers (NumPy converts them to the array's type on every call) and, for
# float64 arrays, the same values as 0-d float64 arrays, which NumPy takes as they are (~0.4 us
# less a call; next to a float32 array a 0-d float64 one would promote the result)
_ERF_SCALARS = (_ERF_END, _ERF_SEGMENTS / _ERF_END, 2, 1)
_ERF_FLOAT64 = tuple(np.array(v, np.float64) for v in _ERF_SCALARS)


def _erf(x):
    """erf of a float64 (or float32) array, to float64 precision."""
    x = np.asarray(x)
    if not x.ndim:  # (NumPy's 0-dim results are scalars: no out=, no masks)
        return _erf(x.reshape(1)).reshape(())
    end, scale, two, one = _ERF_FLOAT64 if x.dtype is _FLOAT64 else _ERF_SCALARS
    first, rest = _erf_rows()
    ax = np.abs(x)
    s = np.fmin(ax, end)  # (fmin: NaN -> the end)
    s *= scale  # (a power of two: exact, so only x >= 6 reach segment 48)
    whole = np.trunc(s)
    s -= whole  # the position in the segment, mapped to [-1, 1] (in place: no temporaries)
    s *= two
    s -= one
    seg = whole.astype(np.intp)
    # (mode="clip": seg is in range; NumPy's default mode buffers and checks every index)
    # (the other powers' coefficients in one gather: a row each)
    r = first.take(seg, mode="clip")
    for coefficients in rest.take(seg, axis=1, mode="clip"):
        r *= s
        r += coefficients
    # x * g(x) + 0 below 1 (segments below _ERF_SMALL: |x| < 1), -erfc(x) * 1 + 1 from 1 on:
    # the 1 is floor(min(|x|, 1)), 1 exactly from segment _ERF_SMALL on
    np.minimum(ax, one, out=ax)
    r *= ax
    r += np.floor(ax, out=ax)
    r[np.isnan(x)] = np.nan
    return np.copysign(r, x, out=r)


@functools.lru_cache(maxsize=None)
def _erf_rows():
    """_erf_table's first row (the leading coefficients) and the rest (a row per power)."""
    table = _erf_table()
    return table[0], np.ascontiguousarray(table[1:])


# -- softmax --------------------------------------------------------------------------------------

def _softmax_impl(self, dim, half_to_float, log):
    """ATen's _softmax / _log_softmax on CPU."""
    name = "log_softmax" if log else "softmax"
    if half_to_float:  # the same words for _log_softmax
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    ndim = self._array.ndim
    dim = _wrap_dim(dim, ndim)
    dt = self.dtype
    if self._array.size == 0:  # torch returns before choosing a kernel: no dtype check
        return _fresh(self._array.copy(), dt, self.device)
    if not dt.is_floating_point:
        kind = "lastdim_" if dim == max(ndim, 1) - 1 else ""
        raise not_implemented(f"{name}_{kind}kernel_impl", dt)
    a = self._array
    wide = _WIDER.get(dt)
    x = a.astype(wide) if wide is not None else a
    axis = dim if ndim else None
    arr = run_quiet(_softmax_array, x, axis, log, dt, dim == max(ndim, 1) - 1)
    return _fresh(np.asarray(arr, dtype=dt.np), dt, self.device)  # _fresh makes it contiguous


def _softmax_array(x, axis, log, dt, last_dim):
    """_softmax_impl's arithmetic on the (widened) array ``x``, in ``dt``'s result type."""
    shifted = x - np.maximum.reduce(x, axis=axis, keepdims=True)
    if not log:  # (softmax needs no shifted copy: exp in place, then normalised in place)
        e = np.exp(shifted, out=shifted) if shifted.ndim else np.exp(shifted)
        total = np.add.reduce(e, axis=axis, keepdims=True)
        if e.ndim:
            e /= total
            return e.astype(dt.np, copy=False)
        return np.asarray(e / total, dtype=dt.np)
    e = np.exp(shifted)
    total = np.add.reduce(e, axis=axis, keepdims=True)
    if dt is D.float16 and last_dim:
        # torch's last-dim kernel keeps the sum and its log in half-precision buffers
        half = np.float16
        total = np.log(total.astype(half).astype(np.float32)).astype(half).astype(np.float32)
        return shifted - total
    return shifted - np.log(total)


def _softmax_int(self, dim, dtype, log):
    # softmax.int: with dtype= the input is converted first, then _softmax(half_to_float=False)
    if dtype is not None and dtype is not self.dtype:
        self = _fresh(self._array.astype(dtype.np), dtype, self.device)
    return _softmax_impl(self, dim, False, log)


@op("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", variants=("function", "method"))
def softmax(self, dim, dtype):
    return _softmax_int(self, dim, dtype, log=False)


@op("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    variants=("function", "method"))
def log_softmax(self, dim, dtype):
    return _softmax_int(self, dim, dtype, log=True)


@composite(softmax)
def _softmax_composite(self, dim, dtype):
    # SoftMax.cpp softmax: with dtype, convert then _softmax (no half_to_float)
    x = self if dtype is None else self.to(dtype)
    return _softmax(x, dim, False)


@composite(log_softmax)
def _log_softmax_composite(self, dim, dtype):
    x = self if dtype is None else self.to(dtype)
    return _log_softmax(x, dim, False)


@op("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
def _softmax(self, dim, half_to_float):
    return _softmax_impl(self, dim, half_to_float, log=False)


derivatives(_softmax, {"self": "_softmax_backward_data(grad, result, dim, self.dtype)"})


@op("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor")
def _log_softmax(self, dim, half_to_float):
    return _softmax_impl(self, dim, half_to_float, log=True)


derivatives(_log_softmax, {"self": "_log_softmax_backward_data(grad, result, dim, self.dtype)"})


@op("_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
def _safe_softmax(self, dim, dtype):
    """SoftMax.cpp _safe_softmax (attention's masked softmax): softmax, with the rows that are
    -inf throughout giving 0 instead of NaN."""
    out = softmax.kernel(self, dim, dtype)
    xp = xp_of(self)
    axis = _wrap_dim(dim, self.ndim) if self.ndim else None
    masked_rows = xp.all(self._array == -xp.inf, axis=axis, keepdims=self.ndim > 0)
    return _fresh(xp.where(masked_rows, out._array.dtype.type(0), out._array), out.dtype, out.device)


derivatives(_safe_softmax, {"self": "_softmax_backward_data(grad, result, dim, self.dtype)"})
