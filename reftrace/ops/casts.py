"""Casts and copies: to / _to_copy, type_as, clone, detach, copy_, fill_, zero_.

Two torch rules run through this family:

- **Aliasing.** ``x.to(dtype)`` returns ``x`` itself when nothing would change (same dtype,
  device and acceptable layout, ``copy=False``): ``to_will_alias`` in TensorConversions.cpp.
- **Layout of copies.** ``memory_format=torch.preserve_format`` (the default of clone, _to_copy
  and the ``*_like`` factories) keeps the input's strides when they are non-overlapping and dense
  (``x.t().clone()`` is still transposed), and otherwise infers dense strides in the same
  dimension order (``infer_dense_strides``, TensorIterator's sort).

Casting follows torch on CPU (x86): float -> integer truncates toward zero; out-of-range values and
NaN become the lowest value of int32/int64, and 8/16-bit targets take the low bits of that int32
(so NaN -> 0, 300.0 -> int8 44); complex -> real keeps the real part and warns once, as torch does.
NumPy's casts behave the same on x86, so arrays are cast with ``astype``; Python numbers given for
a tensor's dtype go through ``checked_scalar`` (c10::checked_convert and its overflow error).
"""
import math
import weakref

import numpy as np

from .. import _dtype as D
from .._device import channels_last, contiguous_format, preserve_format
from .._tensor import Tensor, _fresh, _init, _new, _strided, contiguous_strides, xp_of_device
from .._frames import warn_at_caller
from ._iter import channels_last_strides, empty_strided_array, is_non_overlapping_and_dense, output_strides
from ._pointwise_helpers import write_inplace
from ._registry import composite, derivatives, op
from reftrace_backends import cuda_is_available, get_backend


# -- devices ---------------------------------------------------------------------------------

def check_device(device):
    """torch's error for a device this process cannot use (a CPU-only torch says the same)."""
    if device.type == "cuda" and not cuda_is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    return device


def _same_device(a, b):
    # 'cuda' means the current device (index 0 here): torch's ensure_has_index
    return a.type == b.type and (a.index or 0) == (b.index or 0)


def _move(array, src, dst):
    """``array`` (living on device ``src``) on device ``dst``; no copy when they are the same."""
    if _same_device(src, dst):
        return array
    host = get_backend(src.type).to_host(array)
    return host if dst.type == "cpu" else get_backend(check_device(dst).type).from_host(host)


# -- casting arrays and numbers --------------------------------------------------------------

_complex_warned = [False]


def _warn_complex_to_real():
    if not _complex_warned[0]:  # TORCH_WARN_ONCE: once per process
        _complex_warned[0] = True
        warn_at_caller("Casting complex values to real discards the imaginary part")


def cast_array(array, src, dst):
    """``array`` (of dtype ``src``) as dtype ``dst`` with torch's CPU cast semantics (see above)."""
    if src is dst:
        return array
    if src.is_complex and not dst.is_complex:
        _warn_complex_to_real()
        if dst is D.bool:  # (c10's complex -> bool is true where either part is nonzero)
            return (array.real != 0) | (array.imag != 0)
        array = array.real
    if dst is D.float16 and src is not D.float32:
        array = array.astype(np.float32)  # c10::Half is built from a float: round via float32
    if src.category >= 2 or dst is D.float16:  # out-of-range casts are silent in torch
        with np.errstate(invalid="ignore", over="ignore"):
            return array.astype(dst.np)
    return array.astype(dst.np)


# C++ type names, as torch's messages print them
CPP_NAMES = {D.bool: "bool", D.uint8: "uint8_t", D.int8: "int8_t", D.int16: "int16_t",
             D.int32: "int", D.int64: "int64_t", D.float16: "c10::Half", D.float32: "float",
             D.float64: "double", D.complex64: "c10::complex<float>",
             D.complex128: "c10::complex<double>"}


def _overflow(dtype):
    return RuntimeError(f"value cannot be converted to type {CPP_NAMES[dtype]} without overflow")


_FLOAT_MAX = {d: float(np.finfo(d.np).max) for d in (D.float16, D.float32, D.float64)}


def checked_scalar(value, dtype):
    """A Python number as ``dtype`` holds it (c10::checked_convert): truncated and wrapped like
    the C++ cast, or torch's overflow error where c10::overflows says so."""
    if dtype is D.bool:
        return bool(value)
    if dtype.is_complex:
        return complex(value)
    if isinstance(value, complex):
        if value.imag != 0:
            raise _overflow(dtype)  # complex -> real overflows when the imaginary part is lost
        value = value.real
    if dtype.is_floating_point:
        value = float(value) if not isinstance(value, float) else value
        limit = _FLOAT_MAX[dtype]
        if math.isfinite(value) and not -limit <= value <= limit:
            raise _overflow(dtype)
        return value
    info = np.iinfo(dtype.np)
    if isinstance(value, float):
        if math.isnan(value) or not info.min <= value <= info.max:
            raise _overflow(dtype)
        return int(value)  # truncation toward zero
    value = int(value)
    if dtype is D.uint8 and value < 0:
        # unsigned targets accept negatives that wrap (two's complement), down to -max
        if -value > info.max:
            raise _overflow(dtype)
        return value % (info.max + 1)
    if not info.min <= value <= info.max:
        raise _overflow(dtype)
    return value


# -- layouts ---------------------------------------------------------------------------------

def _channels_last_strides(shape, rank):
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use channels_last"
                           f"{'_3d' if rank == 5 else ''} format")
    return channels_last_strides(shape)


def suggest_memory_format(t):
    """Tensor::suggest_memory_format: channels_last when a 4-d tensor is laid out that way."""
    shape, strides = t.shape_tuple, t.stride()
    if len(shape) == 4 and t._stride is not None and strides == _channels_last_strides(shape, 4):
        return channels_last
    return contiguous_format


def layout_strides(t, memory_format):
    """The strides of a new tensor shaped like ``t`` in ``memory_format`` (None: contiguous)."""
    shape = t.shape_tuple
    if memory_format is None or memory_format is preserve_format:
        if t._stride is None:
            return None
        strides = t.stride()
        if is_non_overlapping_and_dense(shape, strides):
            return strides
        return output_strides(shape, [t])  # infer_dense_strides: keep the dims' order
    if memory_format is contiguous_format:
        return None
    return _channels_last_strides(shape, 4 if memory_format is channels_last else 5)


def new_array(shape, np_dtype, device, strides):
    """An uninitialised array on ``device`` with torch strides ``strides`` (None: contiguous)."""
    xp = xp_of_device(device)
    if strides is None:
        return xp.empty(shape, np_dtype)
    return empty_strided_array(xp, shape, strides, np_dtype)


def wrap_new(array, dtype, device, strides):
    """Wrap an array made by ``new_array`` (no copy, whatever its layout)."""
    if strides is None:
        return _fresh(array, dtype, device)
    return _strided(array, dtype, device, strides)


def wrap_copy(data, dtype, device, strides):
    """A tensor owning ``data`` (a private copy) laid out with torch ``strides`` (None:
    contiguous); ``data`` is copied once more only when its own layout differs."""
    expected = contiguous_strides(data.shape) if strides is None else strides
    if data.strides == tuple(s * data.itemsize for s in expected) or data.size <= 1:
        return wrap_new(data, dtype, device, strides)
    out = new_array(data.shape, data.dtype, device, strides)
    out[...] = data
    return wrap_new(out, dtype, device, strides)


# -- ops -------------------------------------------------------------------------------------

@op("_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
    variants=())  # not in torch's Python namespace
def _to_copy(self, dtype, layout, device, pin_memory, non_blocking, memory_format):
    dtype = dtype or self.dtype
    device = check_device(device) if device is not None else self.device
    data = _move(cast_array(self._array, self.dtype, dtype), self.device, device)
    if data is self._array:  # neither the cast nor the move copied
        data = data.copy(order="K")
    return wrap_copy(data, dtype, device, layout_strides(self, memory_format))


derivatives(_to_copy, {"self": "_to_copy_backward(grad, self)"})


def _to_will_alias(self, dtype, device, copy, memory_format):
    return (not copy and (dtype is None or dtype is self.dtype)
            and (device is None or _same_device(device, self.device))
            and (memory_format is None or memory_format is preserve_format
                 or suggest_memory_format(self) is memory_format))


def _to(self, dtype, device, copy, memory_format):
    """to_impl: ``self`` itself when nothing changes (to_will_alias), else a _to_copy."""
    if _to_will_alias(self, dtype, device, copy, memory_format):
        return self
    return _to_copy.kernel(self, dtype, None, device, None, False, memory_format)


def _to_composite(self, dtype, device, non_blocking, copy, memory_format):
    """to_impl as autograd sees it: self, or a recorded _to_copy (ToCopyBackward0)."""
    if _to_will_alias(self, dtype, device, copy, memory_format):
        return self
    return _to_copy(self, dtype=dtype, device=device, non_blocking=non_blocking,
                    memory_format=memory_format)


@op("to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, "
    "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", variants=("method",))
def to_device(self, device, dtype, non_blocking, copy, memory_format):
    return _to(self, dtype, device, copy, memory_format)


@composite(to_device)
def _to_device_composite(self, device, dtype, non_blocking, copy, memory_format):
    return _to_composite(self, dtype, device, non_blocking, copy, memory_format)


@op("to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)", variants=("method",))
def to_dtype(self, dtype, non_blocking, copy, memory_format):
    return _to(self, dtype, None, copy, memory_format)


@composite(to_dtype)
def _to_dtype_composite(self, dtype, non_blocking, copy, memory_format):
    return _to_composite(self, dtype, None, non_blocking, copy, memory_format)


@op("to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)", variants=("method",))
def to_other(self, other, non_blocking, copy, memory_format):
    return _to(self, other.dtype, other.device, copy, memory_format)


@composite(to_other)
def _to_other_composite(self, other, non_blocking, copy, memory_format):
    return _to_composite(self, other.dtype, other.device, non_blocking, copy, memory_format)


@op("to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)", variants=("method",))
def to_dtype_layout(self, dtype, layout, device, pin_memory, non_blocking, copy, memory_format):
    return _to(self, dtype, device, copy, memory_format)


@composite(to_dtype_layout)
def _to_dtype_layout_composite(self, dtype, layout, device, pin_memory, non_blocking, copy,
                               memory_format):
    return _to_composite(self, dtype, device, non_blocking, copy, memory_format)


@op("type_as(Tensor self, Tensor other) -> Tensor", variants=("method",))
def type_as(self, other):
    # native: self.to(other.options()), so it aliases when dtype and device already match
    return _to(self, other.dtype, other.device, False, None)


@composite(type_as)
def _type_as_composite(self, other):
    return _to_composite(self, other.dtype, other.device, False, False, None)


@op("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
    variants=("function", "method"))
def clone(self, memory_format):
    # order="K" keeps a dense layout, so preserve_format usually needs this one copy only
    return wrap_copy(self._array.copy(order="K"), self.dtype, self.device,
                     layout_strides(self, memory_format))


derivatives(clone, {"self": "grad"})


# detach's results share data with their input but are not autograd views: detach_ accepts them
# (keyed by id: Tensor.__eq__ is elementwise, so tensors cannot be set members)
_DETACHED = weakref.WeakValueDictionary()


@op("detach(Tensor(a) self) -> Tensor(a)", variants=("function", "method"), differentiable=False)
def detach(self):
    alias = _init(_new(Tensor), self._array, self.dtype, self.device, self._stride,
                  self._base if self._base is not None else self)
    alias._vc = self._vc  # torch: detach shares the version counter
    alias._view_meta = False  # shares data, but is not an autograd view
    if self._mbits:  # (a detached conjugate view is one too)
        alias.__dict__["_mbits"] = self._mbits
    _DETACHED[id(alias)] = alias
    return alias


@op("detach_(Tensor(a!) self) -> Tensor(a!)", variants=("function", "method"),
    differentiable=False)
def detach_(self):
    if self._base is not None and _DETACHED.get(id(self)) is not self:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
            "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
            "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
            "function in torch/optim/optimizer.py as the solution.")
    self.requires_grad = False
    if self._grad_fn is not None:
        self._grad_fn = None  # detach_ makes a non-leaf a leaf
    return self


def _span(t):
    begin = t.data_ptr()
    return begin, begin + t._array.size * t.dtype.itemsize


def _check_no_partial_overlap(dst, src):
    """MemOverlap.cpp: dst and src may be the same memory (same span and strides) or disjoint;
    anything in between would read values already overwritten."""
    root = lambda t: t._base if t._base is not None else t  # noqa: E731
    if dst is src or root(dst) is not root(src) or not dst._array.size or not src._array.size:
        return
    if not (is_non_overlapping_and_dense(dst.shape_tuple, dst.stride())
            and is_non_overlapping_and_dense(src.shape_tuple, src.stride())):
        return  # torch cannot tell cheaply either ("TooHard"): allowed
    (a0, a1), (b0, b1) = _span(dst), _span(src)
    if (a0, a1) == (b0, b1) and dst.stride() == src.stride():
        return
    if a0 < b1 and b0 < a1:
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to tensor "
            "refer to a single memory location. Please clone() the tensor before performing the "
            "operation.")


@op("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    variants=("method",))
def copy_(self, src, non_blocking):
    # any dtype may be copied into any other (no in-place cast check); src broadcasts to self
    _check_no_partial_overlap(self, src)
    data = _move(cast_array(src._array, src.dtype, self.dtype), src.device, self.device)
    return write_inplace(self, _init(_new(Tensor), data, self.dtype, self.device))


# torch's CopyBackwards (a hand-written node, torch/csrc/autograd/functions/tensor.h)
derivatives(copy_, {"self": "zeros_like(grad)", "src": "handle_r_to_c(src.dtype, grad)"})


def _fill(self, value):
    self._array.fill(checked_scalar(value, self.dtype))  # fill writes through views
    self._version += 1
    return self


# Tensor before Scalar: torch's parser tries a 0-dim tensor as a Tensor first
@op("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", variants=("function", "method"))
def fill__tensor(self, value):
    if value._array.ndim:
        raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._array.ndim} dimensions.")
    return _fill(self, value._to_number())


derivatives(fill__tensor, {"self": "zeros_like(grad)", "value": "grad.sum()"})


@op("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", variants=("function", "method"))
def fill__scalar(self, value):
    return _fill(self, value)


derivatives(fill__scalar, {"self": "zeros_like(grad)"})


@op("zero_(Tensor(a!) self) -> Tensor(a!)", variants=("function", "method"))
def zero_(self):
    return _fill(self, 0)


derivatives(zero_, {"self": "zeros_like(grad)"})
