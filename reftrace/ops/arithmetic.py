"""Pointwise arithmetic: add sub rsub mul div true_divide floor_divide remainder fmod pow, the
unary sign ops (neg abs sign reciprocal positive), lerp, clamp, maximum/minimum, where and
masked_fill, each with its in-place variants.

Every kernel computes in torch's result type (``_promotion.result_type``), never NumPy's. Kernels
call NumPy's functions on the tensors' arrays, which CuPy arrays answer through NumPy's dispatch
protocols; numbers enter as NumPy scalars and new arrays come from ``xp_of(t)``. Integer
division by zero raises torch's ``RuntimeError: ZeroDivisionError``; floats give IEEE inf/nan.
NumPy's floating-point warnings are switched off inside the kernels (``quiet``): torch never warns
about an inf or a nan.

This module also holds the helpers the other pointwise families (``pointwise_math``,
``comparison``) share: ``quiet``, ``dispatch_check``, ``register_binary`` and ``inplace``.
"""
import functools
import math
import operator
import inspect
import os

import numpy as np

from .. import _dtype as D
from .._promotion import check_inplace_cast, result_type
from .._tensor import Tensor, _data_ptr, _fresh, scalar_to_tensor, xp_of
from .._frames import warn_at_caller
from ._iter import broadcast_shapes, like_result, pointwise_result, pointwise_strides
from ._cpu_loops import pointwise_plan
from . import _complex_arith
from ._fma import fma
from ._pointwise_helpers import as_np, binary, float_of, unary, write_inplace
from ._registry import OVERLOADS, PACKETS, composite, derivatives, op
from .._dispatch import dispatch
from .casts import CPP_NAMES, checked_scalar as _checked_real, is_non_overlapping_and_dense
from .reduction import not_implemented

# -- shared helpers -------------------------------------------------------------------------------

try:  # NumPy 2 keeps its error state in a context variable: setting it costs ~0.1 us, errstate ~1.5
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE
    with np.errstate(all="ignore"):
        _IGNORE_ALL = _ERRSTATE.get()
except ImportError:  # pragma: no cover - other NumPy versions
    _ERRSTATE = None


# quiet's wrapper, made with as many parameters as the kernel has when that number is fixed:
# packing and unpacking ``*args`` costs ~75 ns of x + y's ~2 us
_QUIET_RUN = """
def run({params}):
    token = _ERRSTATE.set(_IGNORE_ALL)
    try:
        return kernel({params})
    finally:
        _ERRSTATE.reset(token)
"""


def quiet(kernel):
    """Run ``kernel`` with NumPy's floating-point warnings off (1/0, log(-1), overflowing casts)."""
    if _ERRSTATE is None:  # pragma: no cover
        def run(*args):
            with np.errstate(all="ignore"):
                return kernel(*args)
        return functools.wraps(kernel)(run)
    code = kernel.__code__ if inspect.isfunction(kernel) else None
    fixed = code is not None and not kernel.__defaults__ and not kernel.__kwdefaults__ \
        and not code.co_kwonlyargcount and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    params = ", ".join(f"a{i}" for i in range(code.co_argcount)) if fixed else "*args"
    scope = {"kernel": kernel, "_ERRSTATE": _ERRSTATE, "_IGNORE_ALL": _IGNORE_ALL}
    # (a file name inside reftrace: reftrace/_frames.py counts the wrapper's frames as machinery)
    exec(compile(_QUIET_RUN.format(params=params), _QUIET_FILE, "exec"), scope)
    return functools.wraps(kernel)(scope["run"])


_QUIET_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "<quiet>")


def run_quiet(fn, *args):
    """fn(*args) with NumPy's floating-point warnings off: quiet's setting for one call
    (np.errstate as a with-block costs a few microseconds, on every call of a small kernel)."""
    if _ERRSTATE is None:  # pragma: no cover
        with np.errstate(all="ignore"):
            return fn(*args)
    token = _ERRSTATE.set(_IGNORE_ALL)
    try:
        return fn(*args)
    finally:
        _ERRSTATE.reset(token)


# The names c10's TypeMeta prints for a dtype (``self.dtype()`` in a TORCH_CHECK message).
TYPE_META_NAMES = {D.bool: "bool", D.uint8: "unsigned char", D.int8: "signed char",
                   D.int16: "short int", D.int32: "int", D.int64: "long int", D.float16: "c10::Half",
                   D.float32: "float", D.float64: "double", D.complex64: "c10::complex<float>",
                   D.complex128: "c10::complex<double>"}

_KINDS = {"b": 0, "i": 1, "f": 2, "c": 3}  # dtype.category of bool, integral, floating, complex


@functools.lru_cache(maxsize=None)  # built once per kernel name, so kernels may call it inline
def dispatch_check(kernel_name, kinds):
    """torch's AT_DISPATCH macros: ``kernel_name`` exists for the dtype kinds in ``kinds``
    ('b'ool, 'i'ntegral, 'f'loating, 'c'omplex); other dtypes raise NotImplementedError.
    Returns a dtype -> dtype function, the ``compute=`` hook of ``binary``/``unary``."""
    allowed = frozenset(_KINDS[k] for k in kinds)

    def check(dtype):
        if dtype.category not in allowed:
            raise not_implemented(kernel_name, dtype)
        return dtype
    return check


def checked_scalar(value, dtype):
    """Scalar.to<T>() for the kernel's scalar type T (c10::checked_convert): truncated and
    wrapped as the C++ cast does, or torch's overflow error. Complex targets check both parts."""
    if not dtype.is_complex:
        return _checked_real(value, dtype)
    real = dtype.to_real()
    try:
        for part in ((value.real, value.imag) if isinstance(value, complex) else (value,)):
            _checked_real(part, real)
    except RuntimeError:
        raise RuntimeError(f"value cannot be converted to type {CPP_NAMES[dtype]} without "
                           "overflow") from None
    return complex(value)


_FM = ("function", "method")  # native_functions.yaml's "variants: function, method"


def binary_kernel(fn, check):
    """A two-tensor kernel computing fn(x, y) after ``check`` accepted the promoted dtype."""
    return lambda self, other: binary(self, other, fn, compute=check)


def _wrap(value, like):
    """A Python number as torch's wrapped_scalar_tensor: 0-dim, promotes like a Python number."""
    return scalar_to_tensor(value, like.device)


def _int64_scalars(a, b):
    """Whether a and b are both 0-dim int64 NumPy tensors: a traced model's size arithmetic
    (``bsz * heads``, ``d // heads`` on sizes the trace made tensors), which binary's general
    path computes as fn(x, y) into a fresh 0-dim int64 tensor; the kernels below call fn
    directly there (a few microseconds less per node)."""
    x, y = a._array, b._array
    return a.dtype is D.int64 and b.dtype is D.int64 and type(x) is np.ndarray \
        and type(y) is np.ndarray and x.ndim == 0 and y.ndim == 0


def _int64_scalar(value, device):
    """The 0-dim int64 result of fn on two 0-dim int64 arrays (NumPy returns a scalar)."""
    return _fresh(np.asarray(value, np.int64), D.int64, device)


_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _int64_exact(a, b, exact, fn):
    """_int64_scalar(fn(x, y)) of two _int64_scalars, computed as ``exact`` on Python ints (a
    few NumPy 0-dim calls fewer): the same number wherever it fits in int64; where it does not,
    NumPy's wrapping ``fn`` decides, as before."""
    r = exact(int(a._array), int(b._array))
    if _INT64_MIN <= r <= _INT64_MAX:
        return _fresh(np.asarray(r, np.int64), D.int64, a.device)
    return _int64_scalar(fn(a._array, b._array), a.device)


def c_div(x, y):
    """C++ integer division (truncates toward zero, unlike Python's //); y nonzero."""
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def inplace(kernel, precheck=False, before=None):
    """The in-place variant of ``kernel``: compute out of place, then write through ``self`` (so
    views of it see the change). Checks in torch's order: ``before`` (an op's own early check),
    memory overlap, the output shape, then (``precheck``) the cast rule on the promoted type,
    for ops whose kernel would otherwise fail first with a dtype error (bitwise ops)."""
    kernel = getattr(kernel, "__wrapped__", kernel)  # run() itself is quiet

    @quiet  # the write-back casts too (float64 -> float32 may overflow to inf)
    def run(self, *args):
        if before is not None:
            before(self, *args)
        _check_overlap(self, args)
        _check_inplace_shape(self, *args)
        if precheck:
            check_inplace_cast(result_type(self, *args), self.dtype)
        return write_inplace(self, kernel(self, *args))
    return run


_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to "
                    "tensor refer to a single memory location. Please clone() the tensor before "
                    "performing the operation.")
_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor "
                     "refers to a single memory location. Please clone() the tensor before "
                     "performing the operation.")


def _dense(t):
    return t._stride is None or is_non_overlapping_and_dense(t._array.shape, t._stride)


def _check_overlap(self, args):
    """TensorIterator's memory-overlap checks: self may not write one element twice (an expanded
    tensor), and an input may share self's memory only exactly (x.add_(x), not x.add_(x.t()))."""
    if self._stride is not None and not _dense(self) and any(
            st == 0 and n > 1 for n, st in zip(self._array.shape, self._stride)):
        raise RuntimeError(_INTERNAL_OVERLAP)
    root = self._base if self._base is not None else self
    for t in args:
        if isinstance(t, Tensor) and t is not self and (t._base if t._base is not None else t) is root \
                and _partial_overlap(self, t):
            raise RuntimeError(_PARTIAL_OVERLAP)


def _partial_overlap(a, b):
    """c10's get_overlap_status(a, b) == PARTIAL, for two views of one storage."""
    if not a._array.size or not b._array.size or not _dense(a) or not _dense(b):
        return False  # nothing to overlap, or "too hard" (not checked)
    a0, b0 = _data_ptr(a._array), _data_ptr(b._array)
    a1, b1 = a0 + a._array.nbytes, b0 + b._array.nbytes
    if (a0, a1) == (b0, b1):
        return a.stride() != b.stride()
    return a0 < b1 and b0 < a1


def _check_inplace_shape(self, *others):
    """An in-place result must keep self's shape (checked before any dtype error, as torch)."""
    own = self._array.shape
    shapes = [t._array.shape for t in others if isinstance(t, Tensor) and t._array.shape != own]
    if not shapes:
        return
    shape = broadcast_shapes(own, *shapes)
    if shape != own:
        raise RuntimeError(f"output with shape [{', '.join(map(str, self.shape_tuple))}] doesn't "
                           f"match the broadcast shape [{', '.join(map(str, shape))}]")


_SCHEMA_ARGS = {"Tensor": "Tensor self, Tensor other", "Scalar": "Tensor self, Scalar other",
                "Scalar_Tensor": "Scalar self, Tensor other"}


def _kind(overload):
    """An overload's argument kinds, from its name: '' (the default) and 'Tensor' take two
    tensors, 'Scalar'/'Tensor_Scalar' a number as other, 'Scalar_Tensor' a number as self."""
    if overload == "Scalar_Tensor":
        return overload
    return "Scalar" if overload.endswith("Scalar") else "Tensor"


def register_binary(name, kernel, overloads=("Tensor", "Scalar"), *, inplace_name=None,
                    inplace_overloads=("Tensor", "Scalar"), variants=("function", "method"),
                    precheck=False):
    """Register one binary op under all its overloads, each computed by ``kernel(self, other)``
    on two tensors (a Python number is wrapped, as ATen's wrapped_scalar_tensor does). The schema
    strings come out verbatim as torch's (tests/test_ops_pointwise.py compares them). Overloads
    are registered in torch's Python parser order: Tensor ones first. Returns the first overload."""
    kernel = quiet(kernel)
    kernels = {"Tensor": kernel,
               "Scalar": lambda self, other: kernel(self, _wrap(other, self)),
               "Scalar_Tensor": lambda self, other: kernel(_wrap(self, other), other)}
    registered = []
    for overload in overloads:
        kind = _kind(overload)
        dotted = f"{name}.{overload}" if overload else name
        vs = ("function",) if kind == "Scalar_Tensor" else variants  # no method: self is a number
        registered.append(op(f"{dotted}({_SCHEMA_ARGS[kind]}) -> Tensor", variants=vs)(kernels[kind]))
    inplace_name = inplace_name or name + "_"
    for overload in inplace_overloads:
        kind = _kind(overload)
        dotted = f"{inplace_name}.{overload}" if overload else inplace_name
        args = _SCHEMA_ARGS[kind].replace("Tensor self", "Tensor(a!) self")
        op(f"{dotted}({args}) -> Tensor(a!)", variants=("method",))(inplace(kernels[kind], precheck))
    return registered[0]


def register_alias(alias, target, inplace_variants=None):
    """One of torch's alias ops (``subtract`` for ``sub``): every overload of ``target`` and
    ``target_`` again under the alias's name, same kernels. A trace records the alias; the
    tracer's NormalizeOps pass then renames the node to ``target``, as torch's does."""
    for suffix in ("", "_"):
        for ov in PACKETS[f"aten::{target}{suffix}"].overloads:
            dotted = alias + suffix + (f".{ov.overload}" if ov.overload else "")
            variants = inplace_variants if suffix and inplace_variants else ov.variants
            alias_ov = op(dotted + "(" + ov.schema.text.split("(", 1)[1], variants=variants)(ov.kernel)
            # autograd records the target's node (an alias is a call of its target in ATen)
            composite(alias_ov)(functools.partial(_call_target, ov))


def _call_target(target, *args):
    return dispatch(target, list(args))


# -- add, sub, rsub, mul --------------------------------------------------------------------------

def _alpha_check(dtype, alpha):
    """BinaryOps.cpp alpha_check: alpha must not be of a higher kind than the result."""
    if type(alpha) is bool and dtype is not D.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dtype.category <= 1 and isinstance(alpha, (float, complex)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not dtype.is_complex and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


def _axpy(self, other, alpha):
    """self + alpha * other (ufunc/add.h), alpha checked, then converted to the computation
    type. float32: Vectorized<float>'s fmadd and the (contracted) scalar op both round once.
    float16: alpha becomes a Half; the vectorized op computes fmadd in float (the product of
    two halves is exact there) and rounds once, the scalar op rounds alpha * other to Half
    before adding (c10::Half arithmetic), so which elements take which path matters."""
    def fn(x, y):
        dt = D.BY_NUMPY[x.dtype]
        _alpha_check(dt, alpha)
        if dt is D.float16:
            a = np.float32(np.float16(checked_scalar(alpha, dt)))
            xf, prod = x.astype(np.float32), y.astype(np.float32) * a
            with np.errstate(over="ignore"):
                vec = (xf + prod).astype(np.float16)
                scal = (xf + prod.astype(np.float16).astype(np.float32)).astype(np.float16)
            shape = np.broadcast_shapes(x.shape, y.shape)
            plan = pointwise_plan(shape, pointwise_strides(shape, (self, other)), (self, other), dt)
            # vectorized_loop's blocks: 2 * Vectorized<Half>::size() == 32 elements
            return np.where(plan.row_index() < plan.body_end(32), vec, scal)
        if dt is D.float32:
            # the compiler contracts the scalar op too (fmadd). Not modelled: in a vectorized
            # row's tail with other the broadcast scalar, GCC's auto-vectorized remainder
            # hoists alpha * other, rounding it (an ulp apart in some tail elements)
            return fma(y, np.float32(checked_scalar(alpha, dt)), x)
        if dt.is_complex:
            return _complex_arith.axpy(x, y, checked_scalar(alpha, dt))
        return x + y * x.dtype.type(checked_scalar(alpha, dt))
    return binary(self, other, fn)


def _is_one(alpha):
    return type(alpha) is int and alpha == 1  # True == 1 and 1.0 == 1 still need alpha_check


@op("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", variants=("function", "method"))
@quiet
def add(self, other, alpha):
    # (complex: torch's kernel multiplies by alpha even when it is 1, which NaNs infinities)
    # (_is_one(alpha), inlined: x + y is the commonest eager call)
    if type(alpha) is int and alpha == 1 and not (self.dtype.is_complex or other.dtype.is_complex):
        return binary(self, other, np.add)
    return _axpy(self, other, alpha)


_ADD = {"self": "handle_r_to_c(self.dtype, grad)",
        "other": "handle_r_to_c(other.dtype, maybe_multiply(grad, alpha.conjugate()))"}
derivatives(add, _ADD)
add_ = derivatives(op("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
                      variants=("method",))(inplace(add.kernel)), _ADD)


def _sub_check(a, b, *_):
    if a.dtype is D.bool and b.dtype is D.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a.dtype is D.bool or b.dtype is D.bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


@quiet
def _sub(self, other, alpha):
    """ATen's sub: sub_check, alpha_check, then add(self, other, -alpha)."""
    _sub_check(self, other)
    if _is_one(alpha) and not (self.dtype.is_complex or other.dtype.is_complex):
        return binary(self, other, np.subtract)
    if type(alpha) is bool:  # checked here: -True is no longer a bool
        _alpha_check(result_type(self, other), alpha)
    return _axpy(self, other, -alpha)


def _sub_scalar(self, other, alpha):
    return _sub(self, _wrap(other, self), alpha)


def _rsub(self, other, alpha):
    return _sub(other, self, alpha)


def _rsub_scalar(self, other, alpha):
    return _sub(_wrap(other, self), self, alpha)


_SUB = {"self": "handle_r_to_c(self.dtype, grad)",
        "other": "handle_r_to_c(other.dtype, maybe_multiply(-grad, alpha.conjugate()))"}
_SUB_SCALAR = {"self": "handle_r_to_c(self.dtype, grad)"}
sub = derivatives(op("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                     variants=_FM)(_sub), _SUB)
derivatives(op("sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", variants=_FM)(
    _sub_scalar), _SUB_SCALAR)
derivatives(op("sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
               variants=("method",))(inplace(_sub, before=_sub_check)), _SUB)
derivatives(op("sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
               variants=("method",))(
    inplace(_sub_scalar, before=lambda a, b, *_: _sub_check(a, _wrap(b, a)))), _SUB_SCALAR)
derivatives(op("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")(_rsub), {
    "self": "handle_r_to_c(self.dtype, maybe_multiply(-grad, alpha.conjugate()))",
    "other": "handle_r_to_c(other.dtype, grad)"})
derivatives(op("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")(_rsub_scalar), {
    "self": "handle_r_to_c(self.dtype, maybe_multiply(-grad, alpha.conjugate()))"})


@op("mul.Tensor(Tensor self, Tensor other) -> Tensor", variants=("function", "method"))
@quiet
def mul(self, other):
    dt = self.dtype
    if dt is other.dtype and dt.is_floating_point:
        # one real floating dtype (the commonest eager and traced call): neither the complex
        # loop nor the int64 scalars below apply, so straight to binary (~15% of x * y on
        # 16 elements)
        return binary(self, other, np.multiply)
    if dt.is_complex or other.dtype.is_complex:
        return binary(self, other, _looped_cmul(self, other))
    if _int64_scalars(self, other):
        return _int64_exact(self, other, operator.mul, np.multiply)
    return binary(self, other, np.multiply)


def _looped_cmul(*inputs, into=None):
    """The complex product over ``inputs``' TensorIterator (``into``: the in-place output): the
    vector and scalar loops of torch's mul kernel round differently (_complex_arith.mul_on)."""
    def fn(*arrays):
        shape = broadcast_shapes(*(a.shape for a in arrays))
        out_strides = pointwise_strides(shape, inputs) if into is None else into.stride()
        plan = pointwise_plan(shape, out_strides, inputs, D.BY_NUMPY[arrays[0].dtype])
        if into is not None:
            plan.aliased = True
        return _complex_arith.mul_on(*arrays, plan)
    return fn


def _mul_inplace(self, other):
    if self.dtype.is_complex or other.dtype.is_complex:
        return binary(self, other, _looped_cmul(self, other, into=self))
    return binary(self, other, np.multiply)


_MUL = {"self": "mul_tensor_backward(grad, other, self.dtype)",
        "other": "mul_tensor_backward(grad, self, other.dtype)"}
derivatives(mul, _MUL)
mul_ = derivatives(op("mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                      variants=("method",))(inplace(_mul_inplace)), _MUL)

# The Scalar overloads that torch's C++ composites reach: `t * 0.5` and `1 + t` in C++ call
# mul.Scalar / add.Scalar, whose nodes are MulBackward1 / AddBackward1. Python never binds them
# (torchgen skips a .Scalar overload that duplicates a .Tensor one), hence no variants.
mul_scalar = derivatives(op("mul.Scalar(Tensor self, Scalar other) -> Tensor", variants=())(
    lambda self, other: mul.kernel(self, _wrap(other, self))),
    {"self": "mul_tensor_backward(grad, other, self.dtype)"})
add_scalar = derivatives(op("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
                            variants=())(lambda self, other, alpha: add.kernel(self, _wrap(other, self), alpha)),
    {"self": "handle_r_to_c(self.dtype, grad)"})


# -- division -------------------------------------------------------------------------------------

def _nonzero_divisor(fn):
    """Integer division by zero is an error in torch (floats give inf/nan)."""
    def run(x, y):
        # (count_nonzero: the same test as ``not y.all()``, ~0.7 us cheaper on small arrays,
        # where a traced size's ``n // 2`` spends most of its time)
        if x.dtype.kind in "iu" and np.count_nonzero(y) != y.size:
            raise RuntimeError("ZeroDivisionError")
        return fn(x, y)
    return run


def _div_floor_arrays(x, y):
    """c10::div_floor_floating (CPython's float floor division, as NumPy's floor_divide), but
    float16 runs its steps in Half arithmetic, each rounded (NumPy's float16 floor_divide
    computes them in float)."""
    if x.dtype != np.float16:
        return np.floor_divide(x, y)
    mod = np.fmod(x, y)
    div = (x - mod) / y
    div = np.where((mod != 0) & ((y < 0) != (mod < 0)), div - np.float16(1), div)
    floor = np.floor(div)
    floor = np.where(div - floor > np.float16(0.5), floor + np.float16(1), floor)
    q = x / y
    return np.where(y == 0, q, np.where(div != 0, floor, np.copysign(np.float16(0), q)))


def _trunc_divide(x, y):
    if x.dtype.kind in "iu":
        # C's truncating division: x - fmod(x, y) is an exact multiple of y
        return np.floor_divide(x - np.fmod(x, y), y)
    return np.trunc(x / y)


# torch's div_floor_floating is CPython's float floor division, as NumPy's floor_divide is
_ROUNDING = {
    "trunc": (_nonzero_divisor(_trunc_divide), dispatch_check("div_trunc_cpu", "if")),
    "floor": (_nonzero_divisor(_div_floor_arrays), dispatch_check("div_floor_cpu", "if")),
}


@quiet
def _true_divide(self, other):
    return binary(self, other, np.true_divide, compute=float_of)  # ints divide as default floats


@quiet
def _div_mode(self, other, rounding_mode):
    if rounding_mode is None:
        return _true_divide(self, other)
    if rounding_mode not in _ROUNDING:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    fn, check = _ROUNDING[rounding_mode]
    if _int64_scalars(self, other):
        if not other._array:  # (fn's own check)
            raise RuntimeError("ZeroDivisionError")
        # (int64 floor division is NumPy's floor_divide, Python's //; trunc is C's)
        return _int64_exact(self, other, c_div if rounding_mode == "trunc" else operator.floordiv, fn)
    return binary(self, other, fn, compute=check)


def _div_scalar_mode(self, other, rounding_mode):
    return _div_mode(self, _wrap(other, self), rounding_mode)


def _floor_divide(self, other):
    if _int64_scalars(self, other):  # (_div_mode's floor path, without its wrappers: 6 per
        if not other._array:          # gpt2_block call)
            raise RuntimeError("ZeroDivisionError")
        return _int64_exact(self, other, operator.floordiv, np.floor_divide)
    return _div_mode(self, other, "floor")


_DIV = {"self": "div_tensor_self_backward(grad, other, self.dtype)",
        "other": "div_tensor_other_backward(grad, self, other)"}
_DIV_MODE = {"self": "div_tensor_self_backward(grad, other, self.dtype, rounding_mode)",
             "other": "div_tensor_other_backward(grad, self, other, rounding_mode)"}
_DIV_SCALAR = {"self": "div_tensor_self_backward(grad, other, self.dtype)"}
_DIV_SCALAR_MODE = {"self": "div_tensor_self_backward(grad, other, self.dtype, rounding_mode)"}
div = derivatives(op("div.Tensor(Tensor self, Tensor other) -> Tensor", variants=_FM)(_true_divide), _DIV)
derivatives(op("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
               variants=_FM)(_div_mode), _DIV_MODE)
derivatives(op("div.Scalar(Tensor self, Scalar other) -> Tensor", variants=_FM)(
    lambda self, other: _true_divide(self, _wrap(other, self))), _DIV_SCALAR)
derivatives(op("div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
               variants=_FM)(_div_scalar_mode), _DIV_SCALAR_MODE)
derivatives(op("div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", variants=("method",))(
    inplace(_true_divide)), _DIV)
derivatives(op("div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode) -> Tensor(a!)",
               variants=("method",))(inplace(_div_mode)), _DIV_MODE)
derivatives(op("div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", variants=("method",))(
    inplace(lambda self, other: _true_divide(self, _wrap(other, self)))), _DIV_SCALAR)
derivatives(op("div_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)",
               variants=("method",))(inplace(_div_scalar_mode)), _DIV_SCALAR_MODE)
# true_divide is div: the tracer's NormalizeOps pass records it as aten::div
register_binary("true_divide", _true_divide)
for _suffix in ("", "_"):  # true_divide calls div: autograd records div's node
    for _overload in ("Tensor", "Scalar"):
        composite(OVERLOADS[f"aten::true_divide{_suffix}.{_overload}"])(
            functools.partial(_call_target, OVERLOADS[f"aten::div{_suffix}.{_overload}"]))
floor_divide = register_binary("floor_divide", _floor_divide, ("", "Scalar"))


def _remainder_arrays(x, y):
    """Python's modulo (the result takes the divisor's sign), as torch's kernels compute it."""
    mod = np.remainder(x, y)
    if x.dtype.kind in "iu":
        return mod
    # torch adjusts C's fmod, whose zeros have the dividend's sign; NumPy's have the divisor's
    return np.where(mod == 0, np.copysign(mod, x), mod)


remainder = register_binary(
    "remainder", binary_kernel(_nonzero_divisor(_remainder_arrays), dispatch_check("remainder_cpu", "if")),
    ("Tensor", "Scalar", "Scalar_Tensor"))
fmod = register_binary("fmod", binary_kernel(_nonzero_divisor(np.fmod), dispatch_check("fmod_cpu", "if")))


def _declare_binary(name, tensor_formulas, scalar_formulas):
    """derivatives for name.Tensor / name.Scalar and their in-place variants."""
    for suffix in ("", "_"):
        derivatives(OVERLOADS[f"aten::{name}{suffix}.Tensor"], tensor_formulas)
        derivatives(OVERLOADS[f"aten::{name}{suffix}.Scalar"], scalar_formulas)


_declare_binary("remainder", {"self": "grad", "other": '-grad * self.div(other, rounding_mode="floor")'},
                {"self": "grad"})
_declare_binary("fmod", {"self": "grad", "other": '-grad * self.div(other, rounding_mode="trunc")'},
                {"self": "grad"})
composite(OVERLOADS["aten::remainder.Scalar_Tensor"])(
    lambda self, other: OVERLOADS["aten::remainder.Tensor"](_wrap(self, other), other))


# -- pow ------------------------------------------------------------------------------------------

def _powi(base, exp):
    """torch's integer pow: wraps around on overflow; a negative exponent truncates the result
    to 0, except for the bases 1 and -1."""
    if exp.dtype.kind == "u" or (exp >= 0).all():
        return np.power(base, exp)
    negative = exp < 0
    result = np.power(base, np.where(negative, 0, exp))
    odd = (exp & 1).astype(bool)
    special = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, special, result).astype(base.dtype)


def _pow_arrays(base, exp):
    if base.dtype.kind == "c":
        return _complex_arith.cpow(base, exp)
    return _powi(base, exp) if base.dtype.kind in "iu" else np.power(base, exp)


_POW_CHECK = dispatch_check("pow", "ifc")


@quiet
def _pow_tensor(self, exponent):
    return binary(self, exponent, _pow_arrays, compute=_POW_CHECK)


def _is_integral_number(v):
    return isinstance(v, int)  # bool included, as c10's Scalar::isIntegral(/*includeBool=*/true)


# pow_tensor_scalar_kernel's fast paths for float, double and complex: these are not only faster,
# they differ from pow at the edges (-0.0 ** 0.5 is -0.0, -inf ** 0.5 is nan).
_POW_SPECIAL = {0.5: np.sqrt, -0.5: lambda x: 1 / np.sqrt(x), -1: lambda x: 1 / x,
                2: lambda x: x * x, 3: lambda x: x * x * x, -2: lambda x: 1 / (x * x)}


@quiet
def _pow_scalar(self, exponent):
    if self.dtype.category <= 1 and _is_integral_number(exponent) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    dt = result_type(self, exponent)
    x = as_np(self, dt)
    if exponent == 0:  # also for False and 0j; pow(nan, 0) is 1 too
        return pointwise_result(np.ones_like(x), dt, self.device, (self,))
    if exponent == 1:
        return pointwise_result(x.copy(), dt, self.device, (self,))
    special = _POW_SPECIAL.get(exponent) if type(exponent) is not bool else None
    if dt is D.float16:  # no fast paths: pow in float with a Half exponent
        arr = np.power(x, np.float16(checked_scalar(exponent, dt)))
    elif dt.is_complex and exponent in (2, 3):  # torch's base * base (* base): its complex product
        shape = x.shape
        plan = pointwise_plan(shape, pointwise_strides(shape, (self,)), (self,), dt)
        arr = _complex_arith.power_on(x, exponent, plan)
    elif special is not None and (dt.category >= 2 or exponent in (2, 3)):
        arr = special(x)
    elif dt.category <= 1:
        arr = _powi(x, dt.np.type(checked_scalar(exponent, dt)))
    else:
        arr = (_complex_arith.cpow if dt.is_complex else np.power)(x, dt.np.type(exponent))
    return pointwise_result(arr.astype(dt.np, copy=False), dt, self.device, (self,))


@quiet
def _pow_number_base(self, exponent):
    """pow.Scalar: 1 ** t is all ones (even for nan); otherwise pow(wrapped(self), t)."""
    if self == 1 and type(self) is not bool:
        dt = result_type(self, exponent)
        return _fresh(xp_of(exponent).ones(exponent.shape_tuple, dtype=dt.np), dt, exponent.device)
    # pow.Scalar's meta function allocates a contiguous output (set_output_raw_strided with no
    # strides) before the TensorIterator runs, whatever the exponent's layout
    r = _pow_tensor(_wrap(self, exponent), exponent)
    return r if r._stride is None else _fresh(xp_of(r).ascontiguousarray(r._array), r.dtype, r.device)


_POW_TENSOR = {"self": "pow_backward_self(grad, self, exponent)",
               "exponent": "pow_backward_exponent(grad, self, exponent, result)"}
_POW_SCALAR = {"self": "pow_backward(grad, self, exponent)"}
derivatives(op("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", variants=_FM)(_pow_tensor),
            _POW_TENSOR)
derivatives(op("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", variants=_FM)(_pow_scalar),
            _POW_SCALAR)
derivatives(op("pow.Scalar(Scalar self, Tensor exponent) -> Tensor")(_pow_number_base),
            {"exponent": "pow_backward_exponent(grad, self, exponent, result)"})
derivatives(op("pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", variants=("method",))(
    inplace(_pow_tensor)), _POW_TENSOR)
derivatives(op("pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)", variants=("method",))(
    inplace(_pow_scalar)), _POW_SCALAR)


# -- unary: neg abs sign reciprocal positive --------------------------------------------------------

def _no_bool(message):
    def check(dtype):
        if dtype is D.bool:
            raise RuntimeError(message)
        return dtype
    return check


_NEG_CHECK = _no_bool("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                      "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
_ABS_CHECK = dispatch_check("abs_cpu", "ifc")


def _sign_check(dtype):
    if dtype.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    return dtype


def _sign_arrays(x):
    # (0 < x) - (x < 0): nan and -0.0 give +0, unlike np.sign
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype) if x.dtype != np.bool_ else x.copy()


def _abs(self):
    _ABS_CHECK(self.dtype)
    arr = np.abs(self._array)  # complex -> its real dtype, as torch
    if self.dtype.is_complex:  # unary_op_impl_with_complex_to_float: into empty_like(self)
        return like_result(arr, D.BY_NUMPY[arr.dtype], self.device, self)
    return pointwise_result(arr, D.BY_NUMPY[arr.dtype], self.device, (self,))


def _no_complex_abs_(self):
    if self.dtype.is_complex:
        raise RuntimeError("In-place abs is not supported for complex tensors.")


_UNARY = {  # name: (kernel, in-place variants' function variants, derivative)
    "neg": (lambda self: unary(self, np.negative, compute=_NEG_CHECK), _FM, "grad.neg()"),
    "sign": (lambda self: unary(self, _sign_arrays, compute=_sign_check), ("method",),
             "zeros_like(grad)"),
    "reciprocal": (quiet(lambda self: unary(self, np.reciprocal, compute=float_of)), _FM,
                   "-grad * (result * result).conj()"),
}
for _name, (_kernel, _inplace_variants, _formula) in _UNARY.items():
    derivatives(op(f"{_name}(Tensor self) -> Tensor", variants=_FM)(_kernel), {"self": _formula})
    derivatives(op(f"{_name}_(Tensor(a!) self) -> Tensor(a!)", variants=_inplace_variants)(
        inplace(_kernel)), {"self": _formula})
derivatives(op("abs(Tensor self) -> Tensor", variants=_FM)(_abs), {"self": "grad * self.sgn()"})
derivatives(op("abs_(Tensor(a!) self) -> Tensor(a!)", variants=_FM)(
    inplace(_abs, before=_no_complex_abs_)), {"self": "grad * self.sgn()"})


@op("positive(Tensor(a) self) -> Tensor(a)", variants=_FM)
def positive(self):
    if self.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self  # torch returns the very same tensor


# -- lerp -----------------------------------------------------------------------------------------

def _same_dtype(self, other, what):
    if other.dtype is not self.dtype:
        raise RuntimeError(f"expected dtype {TYPE_META_NAMES[self.dtype]} for `{what}` but got "
                           f"dtype {TYPE_META_NAMES[other.dtype]}")


_OPMATH = {D.float16: D.float32}  # torch's CPU kernels compute float16 in float32


@quiet
def _lerp(self, end, weight, kernel_name):
    """torch's lerp: the formula switches at |weight| = 0.5 for accuracy near both ends."""
    _same_dtype(self, end, "end")
    tensors, dt = (self, end), self.dtype
    if not isinstance(weight, (int, float, complex)):
        tensors += (weight,)
        if weight._array.ndim:
            _same_dtype(self, weight, "weight")
        else:  # a 0-dim weight (a CPU scalar to TensorIterator) promotes with the others
            dt = result_type(*tensors)
    dispatch_check(kernel_name, "fc")(dt)
    broadcast_shapes(*(t.shape_tuple for t in tensors))
    work = _OPMATH.get(dt, dt)
    s, e = as_np(self, work), as_np(end, work)
    diff = e - s
    if len(tensors) == 3:
        w = as_np(weight, work)
        arr = np.where(np.abs(w) < 0.5, s + w * diff, e - diff * (1 - w))
    else:
        w = work.np.type(checked_scalar(weight, work))
        arr = s + w * diff if abs(weight) < 0.5 else e - diff * (1 - w)
    return pointwise_result(arr.astype(dt.np, copy=False), dt, self.device, tensors)


def _lerp_scalar(self, end, weight):
    return _lerp(self, end, weight, "lerp_kernel_scalar")


def _lerp_tensor(self, end, weight):
    return _lerp(self, end, weight, "lerp_kernel_tensor")


# Tensor first (torch's parser order): a 0-dim weight tensor picks lerp.Tensor
_LERP_TENSOR = {"self": "grad * (1 - weight).conj()", "end": "grad * weight.conj()",
                "weight": "grad * (end - self).conj()"}
_LERP_SCALAR = {"self": "grad * (1 - weight.conjugate())", "end": "grad * weight.conjugate()"}
derivatives(op("lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor", variants=_FM)(
    _lerp_tensor), _LERP_TENSOR)
derivatives(op("lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", variants=_FM)(
    _lerp_scalar), _LERP_SCALAR)
derivatives(op("lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)",
               variants=("method",))(inplace(_lerp_tensor)), _LERP_TENSOR)
derivatives(op("lerp_.Scalar(Tensor(a!) self, Tensor end, Scalar weight) -> Tensor(a!)",
               variants=("method",))(inplace(_lerp_scalar)), _LERP_SCALAR)


# -- clamp, maximum, minimum ----------------------------------------------------------------------

_NO_COMPLEX_CLAMP = "clamp is not supported for complex types"


def _clamp_dtype(self, limits, inplace_):
    """TensorCompare.cpp's manual promotion: floating tensors keep their dtype, integral ones
    promote with the Python-number limits; in place, the dtype may not change."""
    dt = self.dtype
    if dt.is_complex:
        raise NotImplementedError(_NO_COMPLEX_CLAMP)
    if not dt.is_floating_point:
        dt = result_type(self, *limits)
        if inplace_ and dt is not self.dtype:
            raise RuntimeError(f"result type {dt.ir_name} can't be cast to the desired output "
                               f"type {TYPE_META_NAMES[self.dtype]}")
        if dt.is_complex:
            raise NotImplementedError(_NO_COMPLEX_CLAMP)
    return dt


def _as_double(v):
    """Scalar::toDouble: a complex with an imaginary part does not fit."""
    if isinstance(v, complex):
        return checked_scalar(v, D.float64)
    return float(v)


def _limit(v, dt):
    return dt.np.type(checked_scalar(v, dt))


def _first_on_tie(fn):
    """np.maximum/np.minimum as clamp with Scalar limits picks: on a tie the value, not the
    limit, in torch's scalar and vector kernels alike (std::max(a, min), _mm256_max_ps(min, a)),
    so clamp(-0.0, min=0) and relu(-0.0) keep -0.0 where NumPy returns +0.0. NaN propagates.
    (Tensor-tensor maximum/minimum tie differently in torch's vector and scalar loops: spec
    NUM-5.)"""
    def pick(a, b):
        r = fn(a, b)
        return np.where(r == a, a, r) if r.dtype.kind in "fc" else r
    pick.__name__ = fn.__name__
    return pick


_max, _min = _first_on_tie(np.maximum), _first_on_tie(np.minimum)


@quiet
def _clamp_scalar(self, lo, hi, inplace_=False):
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dt = _clamp_dtype(self, [v for v in (lo, hi) if v is not None], inplace_)
    x = as_np(self, dt)
    doubles = [_as_double(v) for v in (lo, hi) if v is not None]
    if lo is not None and hi is not None:
        if any(d != d for d in doubles):  # a nan limit makes everything nan
            return pointwise_result(np.full_like(x, np.nan), dt, self.device, (self,))
        dispatch_check("clamp_scalar_cpu", "if")(dt)
        arr = _min(_max(x, _limit(lo, dt)), _limit(hi, dt))
    elif lo is not None:
        dispatch_check("clamp_min_scalar_cpu", "if")(dt)
        arr = _max(x, _limit(lo, dt))
    else:
        dispatch_check("clamp_max_scalar_cpu", "if")(dt)
        arr = _min(x, _limit(hi, dt))
    return pointwise_result(arr.astype(dt.np, copy=False), dt, self.device, (self,))


def _clamp_scalar_(self, lo, hi):
    return _clamp_scalar(self, lo, hi, True)  # in place, the result type may not change


@quiet
def _clamp_tensor(self, lo, hi):
    """clamp.Tensor: ordinary TensorIterator promotion over self and the given limits."""
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self.dtype.is_complex:
        raise NotImplementedError(_NO_COMPLEX_CLAMP)
    if hi is None:
        return _clamp_bound(self, lo, np.maximum)
    if lo is None:
        return _clamp_bound(self, hi, np.minimum)
    tensors = (self, lo, hi)
    dt = dispatch_check("clamp_cpu", "if")(result_type(*tensors))
    broadcast_shapes(*(t.shape_tuple for t in tensors))
    arr = np.minimum(np.maximum(as_np(self, dt), as_np(lo, dt)), as_np(hi, dt))  # (spec NUM-5)
    return pointwise_result(arr, dt, self.device, tensors)


@quiet
def _extremum(self, other, fn):
    # maximum/minimum propagate NaN (np.maximum does; np.fmax would not)
    if self.dtype.is_complex or other.dtype.is_complex:
        raise RuntimeError(f"{fn.__name__} not implemented for complex tensors.")
    return binary(self, other, fn)


_BOUND_CHECKS = {np.maximum: dispatch_check("maximum_cpu", "bif"),
                 np.minimum: dispatch_check("minimum_cpu", "bif")}


@quiet
def _clamp_bound(self, bound, fn):
    """clamp_min/clamp_max with a tensor bound: the maximum/minimum kernels, without maximum()'s
    own complex check (so complex fails in dispatch, as torch's does)."""
    return binary(self, bound, fn, compute=_BOUND_CHECKS[fn])


_CLAMP_TENSOR = {"self": "clamp_backward(grad, self, min, max)",
                 "min, max": "clamp_backward_min_max(grad, self, min, max, grad_input_mask)"}
_CLAMP_SCALAR = {"self": "clamp_backward(grad, self, min, max)"}
derivatives(op("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
               variants=_FM)(_clamp_tensor), _CLAMP_TENSOR)
derivatives(op("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", variants=_FM)(
    _clamp_scalar), _CLAMP_SCALAR)
derivatives(op("clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
               variants=_FM)(inplace(_clamp_tensor, precheck=True)), _CLAMP_TENSOR)
derivatives(op("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)",
               variants=_FM)(inplace(_clamp_scalar_)), _CLAMP_SCALAR)
# clamp_min / clamp_max: where(self >= min, grad, 0) and the other side for a tensor bound
_BOUND_DERIVATIVES = {
    "min": ({"self": "where(self >= min, grad, scalar_tensor(0., dtype=grad.dtype))",
             "min": "where(self < min, grad, scalar_tensor(0., dtype=grad.dtype))"}),
    "max": ({"self": "where(self <= max, grad, scalar_tensor(0., dtype=grad.dtype))",
             "max": "where(self > max, grad, scalar_tensor(0., dtype=grad.dtype))"}),
}
for _bound, (_fn, _lo) in {"min": (np.maximum, True), "max": (np.minimum, False)}.items():
    _name = f"clamp_{_bound}"

    def _scalar(self, v, _lo=_lo, inplace_=False):
        if isinstance(v, complex):  # clamp_min/clamp_max refuse before converting (clamp converts)
            raise NotImplementedError(_NO_COMPLEX_CLAMP)
        return _clamp_scalar(self, v if _lo else None, None if _lo else v, inplace_)

    def _scalar_(self, v, _scalar=_scalar):
        return _scalar(self, v, inplace_=True)

    def _tensor(self, v, _fn=_fn):
        return _clamp_bound(self, v, _fn)

    _tensor_formulas = _BOUND_DERIVATIVES[_bound]
    _scalar_formulas = {"self": _tensor_formulas["self"]}
    derivatives(op(f"{_name}.Tensor(Tensor self, Tensor {_bound}) -> Tensor", variants=_FM)(_tensor),
                _tensor_formulas)
    derivatives(op(f"{_name}(Tensor self, Scalar {_bound}) -> Tensor", variants=_FM)(_scalar),
                _scalar_formulas)
    derivatives(op(f"{_name}_.Tensor(Tensor(a!) self, Tensor {_bound}) -> Tensor(a!)",
                   variants=_FM)(inplace(_tensor, precheck=True)), _tensor_formulas)
    derivatives(op(f"{_name}_(Tensor(a!) self, Scalar {_bound}) -> Tensor(a!)", variants=_FM)(
        inplace(_scalar_)), _scalar_formulas)

maximum = op("maximum(Tensor self, Tensor other) -> Tensor", variants=_FM)(
    lambda self, other: _extremum(self, other, np.maximum))
minimum = op("minimum(Tensor self, Tensor other) -> Tensor", variants=_FM)(
    lambda self, other: _extremum(self, other, np.minimum))
derivatives(maximum, {
    "self": "where(self == other, grad / 2, grad).masked_fill_(self < other, 0)",
    "other": "where(self == other, grad / 2, grad).masked_fill_(self > other, 0)"})
derivatives(minimum, {
    "self": "where(self == other, grad / 2, grad).masked_fill_(self > other, 0)",
    "other": "where(self == other, grad / 2, grad).masked_fill_(self < other, 0)"})


# -- where ----------------------------------------------------------------------------------------

def _where_condition(condition):
    if condition.dtype is D.uint8:
        warn_at_caller("where received a uint8 condition tensor. This behavior is deprecated and "
                      "will be removed in a future version of PyTorch. Use a boolean condition "
                      "instead.")
    elif condition.dtype is not D.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype.ir_name}")


def _where_operand(v, dt, like):
    """A where() branch: a tensor, or a Python number converted to the result type with torch's
    overflow check (but not for float16, where an overflow gives inf)."""
    if isinstance(v, (int, float, complex)):
        return _wrap(checked_scalar(v, dt) if dt is not D.float16 else v, like)
    return v


@quiet
def _where(condition, self, other):
    dt = result_type(self, other)
    a, b = _where_operand(self, dt, condition), _where_operand(other, dt, condition)
    _where_condition(condition)  # after converting numbers (where.Scalar* convert, then call where)
    broadcast_shapes(condition.shape_tuple, a.shape_tuple, b.shape_tuple)
    arr = np.where(condition._array, as_np(a, dt), as_np(b, dt))
    return pointwise_result(arr, dt, condition.device, (condition, a, b))


where = derivatives(op("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
                       variants=_FM)(_where), {
    "condition": "non_differentiable", "self": "where(condition, grad, 0)",
    "other": "where(condition, 0, grad)"})


def _where_composite(condition, self, other):
    # TensorCompare.cpp where(cond, Scalar, ...): the number wrapped, then where.self
    dt = result_type(self, other)
    return where(condition, _where_operand(self, dt, condition), _where_operand(other, dt, condition))


composite(op("where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor")(_where))(
    _where_composite)
composite(op("where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
             variants=_FM)(_where))(_where_composite)
op("where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor")(_where)


@op("where(Tensor condition) -> Tensor[]")
def where_nonzero(condition):
    """torch.where(condition) is nonzero(condition, as_tuple=True)."""
    return tuple(_fresh(np.ascontiguousarray(ix, dtype=np.int64), D.int64, condition.device)
                 for ix in np.nonzero(np.atleast_1d(condition._array)))


# -- masked_fill (in torch's TensorAdvancedIndexing.cpp) ------------------------------------------

def _masked_fill_(self, mask, value):
    """Checks in torch's order: a value tensor must be 0-dim, the mask bool, the mask must
    broadcast to self; the value is converted to self's dtype with c10's overflow check."""
    a = self._array
    fill = _FLOAT_FILLS.get(self.dtype) if type(value) is float else None
    if fill is not None and mask.dtype is D.bool and mask._array.shape == a.shape \
            and type(a) is np.ndarray and (-fill[1] <= value <= fill[1] or not math.isfinite(value)):
        # a float filled into a float tensor through a bool mask of its shape (an attention
        # mask's -inf): the checks below pass, and checked_scalar returns the value as it is
        np.copyto(a, fill[0](value), where=mask._array)
        self._vc[0] += 1
        return self
    if not isinstance(value, (int, float, complex)):
        if value._array.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._array.ndim} dimension(s).")
        value = value._to_number()
    if mask.dtype is not D.bool:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{TYPE_META_NAMES[mask.dtype]}")
    _check_inplace_shape(self, mask)
    fill = self.dtype.np.type(checked_scalar(value, self.dtype))
    xp_of(self).copyto(self._array, fill, where=mask._array)  # writes through views
    self._version += 1
    return self


_FLOAT_FILLS = {d: (d.np.type, float(np.finfo(d.np).max)) for d in (D.float32, D.float64)}


def _masked_fill(self, mask, value):
    """Out of place: self broadcast with mask (mask first, for torch's error text), copied
    contiguously, then filled."""
    shape = self.shape_tuple
    if mask.shape_tuple != shape:
        shape = broadcast_shapes(mask.shape_tuple, shape)
    out = _fresh(np.broadcast_to(self._array, shape).copy(), self.dtype, self.device)
    return _masked_fill_(out, mask, value)


_MASKED_FILL = {"Tensor": {"self": "grad.masked_fill(mask, 0)",
                            "value": "masked_fill_backward(grad, mask)",
                            "mask": "non_differentiable"},
                "Scalar": {"self": "grad.masked_fill(mask, 0)", "mask": "non_differentiable"}}
for _value_type in ("Tensor", "Scalar"):  # Tensor first: torch's parser order
    derivatives(op(f"masked_fill.{_value_type}(Tensor self, Tensor mask, {_value_type} value) -> Tensor",
                   variants=_FM)(_masked_fill), _MASKED_FILL[_value_type])
    derivatives(op(f"masked_fill_.{_value_type}(Tensor(a!) self, Tensor mask, {_value_type} value) "
                   "-> Tensor(a!)", variants=("method",))(_masked_fill_), _MASKED_FILL[_value_type])


for _alias, _target in (("subtract", "sub"), ("multiply", "mul"), ("divide", "div"),
                        ("negative", "neg"), ("clip", "clamp")):
    register_alias(_alias, _target)
register_alias("absolute", "abs", inplace_variants=("method",))
