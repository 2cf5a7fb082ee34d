"""Python-level constructors that are not ATen ops: tensor, as_tensor, from_numpy.

torch.tensor infers its dtype from the data: bool -> bool, int -> int64, float -> the default
dtype, complex -> the default complex dtype; NumPy arrays and scalars keep their dtype.
While tracing, the result is a constant of the trace (the tracer says so with a TracerWarning).
"""
import numbers
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from . import _dtype as D
from ._device import CPU, as_device
from ._dispatch import STATE
from ._tensor import Tensor, _fresh
from reftrace_backends import get_backend

if TYPE_CHECKING:
    from .types import Device

__all__ = ["tensor", "as_tensor", "from_numpy"]


def _infer_dtype(data):
    """torch's dtype inference for nested Python data (internal_new_from_data)."""
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        return D.from_numpy_dtype(data.dtype)
    if isinstance(data, bool):
        return D.bool
    if isinstance(data, numbers.Integral):
        return D.int64
    if isinstance(data, numbers.Real):
        return D.get_default_dtype()
    if isinstance(data, numbers.Complex):
        return D.default_complex_dtype()
    if isinstance(data, (list, tuple)):
        result = None
        for item in data:
            d = _infer_dtype(item)
            result = d if result is None else _promote_inferred(result, d)
        return result if result is not None else D.get_default_dtype()
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _promote_inferred(a, b):
    from ._promotion import promote_types
    return promote_types(a, b)


def _to_host_nested(data):
    if isinstance(data, Tensor):
        return get_backend(data.device.type).to_host(data._array)
    if isinstance(data, (list, tuple)):
        return [_to_host_nested(x) for x in data]
    return data


def _new_from_data(data, dtype, device):
    dtype = dtype or _infer_dtype(data)
    device = as_device(device) or (data.device if isinstance(data, Tensor) else CPU)
    host = np.array(_to_host_nested(data), dtype=dtype.np)
    if np.shape(host) != () and host.dtype == object:
        raise ValueError("expected sequence of equal-length sequences")
    array = host if device.type == "cpu" else get_backend(device.type).from_host(host)
    # _fresh makes the array contiguous (np.ascontiguousarray would turn a 0-dim array into 1-dim)
    return _fresh(array, dtype, device)


def tensor(data: Any, *, dtype: Optional[D.dtype] = None, device: "Device" = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """torch.tensor: always copies; the dtype is inferred from the data unless given."""
    if isinstance(data, Tensor):
        import warnings
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
            "or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    t = _new_from_data(data, dtype, device)
    tracer = STATE.tracer
    if tracer is not None:
        t = tracer.constructor_result(t)
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data: Any, dtype: Optional[D.dtype] = None, device: "Device" = None) -> Tensor:
    """torch.as_tensor: shares memory with a tensor or a NumPy array when dtype/device allow."""
    device = as_device(device)
    if isinstance(data, Tensor):
        if (dtype is None or dtype is data.dtype) and (device is None or device == data.device):
            return data
        return data.to(device=device or data.device, dtype=dtype or data.dtype)
    if isinstance(data, np.ndarray) and (device is None or device.type == "cpu"):
        t = from_numpy(data)
        return t if dtype is None or dtype is t.dtype else t.to(dtype)
    t = _new_from_data(data, dtype, device)
    tracer = STATE.tracer
    if tracer is not None:
        t = tracer.constructor_result(t, "torch.as_tensor")
    return t


def from_numpy(array: Any) -> Tensor:
    """torch.from_numpy: a tensor sharing memory with the NumPy array."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtype = D.from_numpy_dtype(array.dtype)
    itemsize = array.itemsize
    if any(s % itemsize or s < 0 for s in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making a "
            "copy of your array  with array.copy().) ")
    strides = tuple(s // itemsize for s in array.strides)
    from ._tensor import _strided
    # torch keeps NumPy's strides; size-1 dims included
    t = _strided(array, dtype, CPU, strides)
    tracer = STATE.tracer
    if tracer is not None:
        t = tracer.constructor_result(t, "torch.from_numpy")
    return t
