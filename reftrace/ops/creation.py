"""Factories: zeros, ones, full, empty, eye, arange, linspace, scalar_tensor, the ``*_like`` and
``new_*`` families.

Kernels receive the schema's ``dtype, layout, device, pin_memory`` (all optional). What torch's
Python layer adds on top (``requires_grad=``, the default device recorded as ``cpu``,
``pin_memory=False``) lives in ``reftrace/_factories.py``, as it lives in torch's generated
Python bindings rather than in ATen.

Defaults, as ATen decides them: plain factories use the default dtype; ``full`` and ``arange``
infer it from their numbers (bool -> bool for full, int -> int64, float -> default dtype);
``*_like`` keep the input's dtype, device and (with ``preserve_format``) its layout; ``new_*``
keep the input's dtype and device and are contiguous.
"""
import math

import numpy as np

from .. import _dtype as D
from .._device import CPU, channels_last, channels_last_3d, preserve_format
from .._tensor import _fresh, xp_of_device
from .casts import (_channels_last_strides, check_device, checked_scalar, layout_strides,
                    new_array, wrap_new)
from ._registry import op
from .arithmetic import c_div

_OPTIONS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_LIKE_OPTIONS = _OPTIONS + ", MemoryFormat? memory_format=None"


def _xp_device(device):
    """The device a factory creates on (cpu by default) and its array namespace."""
    if device is None or device.type == "cpu":
        return CPU, np
    return check_device(device), xp_of_device(device)


def _check_sizes(size):
    shape = tuple(size)
    if shape and min(shape) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"[{', '.join(map(str, shape))}]")
    return shape


def _number_dtype(value):
    """The dtype ``full`` infers from its fill value (infer_full_options)."""
    if isinstance(value, bool):
        return D.bool
    if isinstance(value, int):
        return D.int64
    if isinstance(value, complex):
        return D.default_complex_dtype()
    return D.get_default_dtype()


def _filled(size, value, dtype, device, strides=None):
    """A new ``dtype`` tensor on ``device`` holding ``value`` everywhere (None: uninitialised)."""
    device, xp = _xp_device(device)
    shape = _check_sizes(size)
    if strides is None and value is not None:
        # (xp.zeros is faster; -0.0 must stay -0.0)
        plain_zero = value == 0 and not (isinstance(value, float) and math.copysign(1.0, value) < 0)
        array = xp.zeros(shape, dtype.np) if plain_zero else xp.full(shape, value, dtype.np)
        return _fresh(array, dtype, device)
    array = new_array(shape, dtype.np, device, strides)
    if value is not None:
        array[...] = value
    return wrap_new(array, dtype, device, strides)


# -- plain factories ---------------------------------------------------------------------------

@op(f"zeros(SymInt[] size, *, {_OPTIONS}) -> Tensor")
def zeros(size, dtype, layout, device, pin_memory):
    if size and min(size) < 0:
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled(size, 0, dtype or D.get_default_dtype(), device)


@op(f"ones(SymInt[] size, *, {_OPTIONS}) -> Tensor")
def ones(size, dtype, layout, device, pin_memory):
    return _filled(size, 1, dtype or D.get_default_dtype(), device)


@op(f"full(SymInt[] size, Scalar fill_value, *, {_OPTIONS}) -> Tensor")
def full(size, fill_value, dtype, layout, device, pin_memory):
    dtype = dtype or _number_dtype(fill_value)
    return _filled(size, checked_scalar(fill_value, dtype), dtype, device)


@op(f"empty.memory_format(SymInt[] size, *, {_LIKE_OPTIONS}) -> Tensor")
def empty(size, dtype, layout, device, pin_memory, memory_format):
    strides = None
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    if memory_format is channels_last or memory_format is channels_last_3d:
        strides = _channels_last_strides(tuple(size), 4 if memory_format is channels_last else 5)
    return _filled(size, None, dtype or D.get_default_dtype(), device, strides)


@op(f"empty_strided(SymInt[] size, SymInt[] stride, *, {_OPTIONS}) -> Tensor")
def empty_strided(size, stride, dtype, layout, device, pin_memory):
    return _filled(size, None, dtype or D.get_default_dtype(), device, tuple(stride))


@op(f"scalar_tensor(Scalar s, *, {_OPTIONS}) -> Tensor")
def scalar_tensor(s, dtype, layout, device, pin_memory):
    dtype = dtype or D.get_default_dtype()  # not inferred: scalar_tensor(3) is a float tensor
    return _filled((), checked_scalar(s, dtype), dtype, device)


def _eye(n, m, dtype, device):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    t = _filled((n, m), 0, dtype or D.get_default_dtype(), device)
    t._array[np.arange(min(n, m)), np.arange(min(n, m))] = 1
    return t


@op(f"eye(SymInt n, *, {_OPTIONS}) -> Tensor")
def eye(n, dtype, layout, device, pin_memory):
    return _eye(n, n, dtype, device)


@op(f"eye.m(SymInt n, SymInt m, *, {_OPTIONS}) -> Tensor")
def eye_m(n, m, dtype, layout, device, pin_memory):
    return _eye(n, m, dtype, device)


# -- ranges ------------------------------------------------------------------------------------

def _cpp_number(x):
    """A number as C++'s ostream prints it (``0 -> inf``)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def _to_double(x):
    if isinstance(x, complex):
        raise RuntimeError("value cannot be converted to type double without overflow")
    return float(x)


def _arange(start, end, step, dtype, device):
    """RangeFactories.cpp: the length in double (exact int64 arithmetic for int64), then
    ``start + step * i`` in the accumulate type (double for floats, int64 for integers)."""
    if dtype is None:
        dtype = D.get_default_dtype() if any(isinstance(v, float) for v in (start, end, step)) \
            else D.int64
    if dtype is D.bool or dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dtype.ir_name}'")
    dstart, dend, dstep = _to_double(start), _to_double(end), _to_double(step)
    # the checks look at the numbers as given (in double) ...
    if dstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(dstart) and math.isfinite(dend)):
        raise RuntimeError(f"unsupported range: {_cpp_number(dstart)} -> {_cpp_number(dend)}")
    if not ((dstep > 0 and dend >= dstart) or (dstep < 0 and dend <= dstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    # ... the values use them in the accumulate type: int64 (truncated) for integer results
    xstart, xstep = (int(start), int(step)) if dtype.category <= 1 else (dstart, dstep)
    if dtype is D.int64:  # exact integer length; a step truncated to 0 is a ValueError
        if xstep == 0:
            raise ValueError("step must be nonzero")
        sign = (xstep > 0) - (xstep < 0)
        size_d = float(c_div(int(end) - xstart + xstep - sign, xstep))
    else:
        size_d = math.ceil((dend - dstart) / dstep)
    if not 0 <= size_d <= 2 ** 63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    device, xp = _xp_device(device)
    index = xp.arange(int(size_d), dtype=np.int64 if dtype.category <= 1 else np.float64)
    acc = index * xstep + xstart
    return _fresh(acc.astype(dtype.np, copy=False), dtype, device)


def _counted(start, end, dtype, device):
    """arange(start, end) of ints in int64 (a traced model's positions), or None where that is
    not the case: _arange's values start + 1 * i, as NumPy counts them. Its checks pass for such
    bounds, and its length (end - start in double) is exact below 2**53."""
    if type(start) is int and type(end) is int and (dtype is None or dtype is D.int64) \
            and -2 ** 53 < start <= end < 2 ** 53:
        device, xp = _xp_device(device)
        return _fresh(xp.arange(start, end, dtype=np.int64), D.int64, device)
    return None


@op(f"arange(Scalar end, *, {_OPTIONS}) -> Tensor")
def arange(end, dtype, layout, device, pin_memory):
    counted = _counted(0, end, dtype, device)
    return counted if counted is not None else _arange(0, end, 1, dtype, device)


@op(f"arange.start(Scalar start, Scalar end, *, {_OPTIONS}) -> Tensor")
def arange_start(start, end, dtype, layout, device, pin_memory):
    counted = _counted(start, end, dtype, device)
    return counted if counted is not None else _arange(start, end, 1, dtype, device)


@op(f"arange.start_step(Scalar start, Scalar end, Scalar step=1, *, {_OPTIONS}) -> Tensor")
def arange_start_step(start, end, step, dtype, layout, device, pin_memory):
    return _arange(start, end, step, dtype, device)


def _range_setup(start, end, steps, dtype, device, name):
    """linspace / logspace: the checks, the result dtype (complex ends: the complex default) and
    the device with its array namespace."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype is None:
        dtype = D.default_complex_dtype() if isinstance(start, complex) or \
            isinstance(end, complex) else D.get_default_dtype()
    if dtype is D.bool:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for 'Bool'")
    return (dtype,) + _xp_device(device)


def _linspace(start, end, steps, dtype, device):
    """RangeFactoriesKernel.cpp: the first half counts up from start, the second half down from
    end, with ``step`` in the result type (double for integer results)."""
    dtype, device, xp = _range_setup(start, end, steps, dtype, device, "linspace")
    # integer results step in double; others compute in their own type (Half rounds every op)
    compute = np.dtype(np.float64 if dtype.category <= 1 else dtype.np)
    s, e = (np.asarray(checked_scalar(v, dtype)).astype(compute) for v in (start, end))
    step = (e - s) / compute.type(max(steps - 1, 1))
    idx = np.arange(steps, dtype=compute)
    values = np.where(idx < steps // 2, s + step * idx, e - step * (steps - 1 - idx))
    if steps == 1:
        values = s.reshape(1)
    with np.errstate(invalid="ignore", over="ignore"):
        array = values.astype(dtype.np)  # float -> int truncates, as the C++ cast
    return _fresh(array if xp is np else xp.asarray(array), dtype, device)


@op(f"linspace.Tensor_Tensor(Tensor start, Tensor end, int steps, *, {_OPTIONS}) -> Tensor")
def linspace_tensor_tensor(start, end, steps, dtype, layout, device, pin_memory):
    return _linspace(*_check_0dims(start, end), steps, dtype, device)


def _check_0dims(start, end, op_name="linspace"):
    """The numbers of a 0-dim start and end (the Tensor_Tensor overloads)."""
    if start._array.ndim or end._array.ndim:
        raise RuntimeError(
            f"{op_name} only supports 0-dimensional start and end tensors, but got start with "
            f"{start._array.ndim} dimension(s) and end with {end._array.ndim} dimension(s).")
    return start._to_number(), end._to_number()


def _check_0dim(t, name, op_name="linspace"):
    if t._array.ndim:
        raise RuntimeError(f"{op_name} only supports 0-dimensional start and end tensors, but got "
                           f"{name} with {t._array.ndim} dimension(s).")
    return t._to_number()


@op(f"linspace.Tensor_Scalar(Tensor start, Scalar end, int steps, *, {_OPTIONS}) -> Tensor")
def linspace_tensor_scalar(start, end, steps, dtype, layout, device, pin_memory):
    return _linspace(_check_0dim(start, "start"), end, steps, dtype, device)


@op(f"linspace.Scalar_Tensor(Scalar start, Tensor end, int steps, *, {_OPTIONS}) -> Tensor")
def linspace_scalar_tensor(start, end, steps, dtype, layout, device, pin_memory):
    return _linspace(start, _check_0dim(end, "end"), steps, dtype, device)


@op(f"linspace(Scalar start, Scalar end, int steps, *, {_OPTIONS}) -> Tensor")
def linspace(start, end, steps, dtype, layout, device, pin_memory):
    return _linspace(start, end, steps, dtype, device)


# -- *_like: the input's dtype, device and layout ----------------------------------------------

def _like(self, value, dtype, device, memory_format):
    dtype = dtype or self.dtype
    strides = layout_strides(self, memory_format)
    value = None if value is None else checked_scalar(value, dtype)
    return _filled(self.shape_tuple, value, dtype, device or self.device, strides)


@op(f"zeros_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", differentiable=False)
def zeros_like(self, dtype, layout, device, pin_memory, memory_format):
    return _like(self, 0, dtype, device, memory_format)


@op(f"ones_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", differentiable=False)
def ones_like(self, dtype, layout, device, pin_memory, memory_format):
    return _like(self, 1, dtype, device, memory_format)


@op(f"full_like(Tensor self, Scalar fill_value, *, {_LIKE_OPTIONS}) -> Tensor", differentiable=False)
def full_like(self, fill_value, dtype, layout, device, pin_memory, memory_format):
    return _like(self, fill_value, dtype, device, memory_format)


@op(f"empty_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", differentiable=False)
def empty_like(self, dtype, layout, device, pin_memory, memory_format):
    return _like(self, None, dtype, device, memory_format)


# -- new_*: the input's dtype and device, contiguous -------------------------------------------

def _new(self, size, value, dtype, device):
    dtype = dtype or self.dtype
    value = None if value is None else checked_scalar(value, dtype)
    return _filled(size, value, dtype, device or self.device)


@op(f"new_zeros(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=("method",), differentiable=False)
def new_zeros(self, size, dtype, layout, device, pin_memory):
    return _new(self, size, 0, dtype, device)


@op(f"new_ones(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=("method",), differentiable=False)
def new_ones(self, size, dtype, layout, device, pin_memory):
    return _new(self, size, 1, dtype, device)


@op(f"new_full(Tensor self, SymInt[] size, Scalar fill_value, *, {_OPTIONS}) -> Tensor",
    variants=("method",), differentiable=False)
def new_full(self, size, fill_value, dtype, layout, device, pin_memory):
    return _new(self, size, fill_value, dtype, device)


@op(f"new_empty(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor", variants=("method",), differentiable=False)
def new_empty(self, size, dtype, layout, device, pin_memory):
    return _new(self, size, None, dtype, device)
