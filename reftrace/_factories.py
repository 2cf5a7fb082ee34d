"""torch's Python-level bindings that are more than a call of one ATen schema.

Factories (``torch.zeros(2, 3, requires_grad=True)``): torch's generated Python bindings take
``requires_grad=``, which is no schema argument, and fill in TensorOptions before calling ATen, so
a trace records ``device="cpu"`` (the default device) and ``pin_memory=False`` where the schema's
defaults say None. ``*_like`` and ``new_*`` record ``pin_memory=False`` and leave the device None.

Tensor methods from python_variable_methods.cpp that are not ATen ops: ``to`` (its own argument
parser, then ``aten::to.dtype`` / ``to.device`` / ``to.dtype_layout``, or nothing at all for a
bare ``x.to()``), ``float()``/``long()``/... (``to.dtype``), ``cpu()``/``cuda()``
(``to.dtype_layout``), ``type()``, and ``new_tensor`` (a constant of the trace, as torch.tensor).
Installed on Tensor here; hand-written names win over the generated ones (see _install.py).
"""
import builtins
import warnings
from typing import TYPE_CHECKING

from . import _dtype as D
from ._creation import _new_from_data
from ._device import CPU, as_device, device as _device, strided
from ._dispatch import dispatch
from ._schema import parse_schema
from ._tensor import Tensor
from .ops import OVERLOADS, get_packet
from .ops._registry import NoMatch, OpOverload, _invalid_arguments, restate_error
from .ops.casts import check_device

_FACTORIES = ["zeros", "ones", "full", "empty", "empty_strided", "eye", "arange", "linspace",
              "logspace", "scalar_tensor", "empty_permuted"]
_LIKES = ["zeros_like", "ones_like", "full_like", "empty_like"]
__all__ = _FACTORIES + _LIKES


def _set_requires_grad(t, requires_grad):
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _given_options(requires_grad, device, pin_memory):
    """The keyword arguments the caller gave of those a factory wrapper takes (the ones not at
    their defaults): what torch's parser error lists."""
    return {k: v for k, v, default in (("requires_grad", requires_grad, False),
                                       ("device", device, None), ("pin_memory", pin_memory, False))
            if v is not default}


def _factory(name, default_device):
    packet = get_packet(name)

    def factory(*args, requires_grad=False, device=None, pin_memory=False, **kwargs):
        try:
            if kwargs.get("out") is not None:  # the out tensor decides dtype and device (.out overload)
                return _set_requires_grad(packet(*args, **kwargs), requires_grad)
            dev = as_device(device) if device is not None else default_device
            return _set_requires_grad(packet(*args, device=dev, pin_memory=pin_memory, **kwargs),
                                      requires_grad)
        except TypeError as e:
            # the parser's message names what the caller gave, not the device= added here
            given = dict(kwargs, **_given_options(requires_grad, device, pin_memory))
            raise restate_error(e, packet, args, given) from None
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"torch.{name}: aten::{name} plus torch's Python-level requires_grad=."
    return factory


for _name in _FACTORIES:
    globals()[_name] = _factory(_name, CPU)
for _name in _LIKES:
    globals()[_name] = _factory(_name, None)
if TYPE_CHECKING:  # their signatures: the schema's plus requires_grad= (tests/gen_stubs.py)
    from ._variable_functions import (arange, empty, empty_like, empty_strided, eye, full,  # noqa: F401
                                      full_like, linspace, logspace, ones, ones_like, scalar_tensor,
                                      zeros, zeros_like)


# -- Tensor methods --------------------------------------------------------------------------

def _new_method(name):
    packet = get_packet(name)

    def method(self, *args, requires_grad=False, pin_memory=False, **kwargs):
        try:
            return _set_requires_grad(packet(self, *args, pin_memory=pin_memory, **kwargs),
                                      requires_grad)
        except TypeError as e:
            given = dict(kwargs, **_given_options(requires_grad, None, pin_memory))
            raise restate_error(e, packet, (self, *args), given, method=True) from None
    method.__name__, method.__qualname__ = name, "Tensor." + name
    return method


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """Like torch.tensor(data), but dtype and device default to self's (never inferred)."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
    t = _new_from_data(data, dtype or self.dtype, as_device(device) or self.device)
    # internal_new_from_data's to() and new_tensor's detach_(): recorded in a trace (the data
    # becomes a constant there), but torch does not warn about it as it does for torch.tensor
    t = dispatch(_TO_DEVICE, [t, t.device, t.dtype, False, False, None]).detach_()
    return _set_requires_grad(t, requires_grad)


# Tensor.to's own parser (python_variable_methods.cpp, parse_to_conversion), in its order
_TO_SIGNATURES = [OpOverload(parse_schema(text), None, False, ()) for text in (
    "to(Device? device=None, ScalarType? dtype=None, bool non_blocking=False, bool copy=False, "
    "*, MemoryFormat? memory_format=None) -> Tensor",
    "to(ScalarType dtype, bool non_blocking=False, bool copy=False, *, "
    "MemoryFormat? memory_format=None) -> Tensor",
    "to(Tensor tensor, bool non_blocking=False, bool copy=False, *, "
    "MemoryFormat? memory_format=None) -> Tensor")]
_TO_DEVICE = OVERLOADS["aten::to.device"]
_TO_DTYPE = OVERLOADS["aten::to.dtype"]
_TO_OPTIONS = OVERLOADS["aten::to.dtype_layout"]


def _parse_to(args, kwargs):
    """-> (device, dtype, non_blocking, copy, memory_format), as parse_to_conversion."""
    for i, sig in enumerate(_TO_SIGNATURES):
        try:
            bound = sig.bind(args, kwargs)
        except NoMatch:
            continue
        if i == 0:
            return bound
        if i == 1:
            return [None] + bound
        other = bound[0]
        return [other.device, other.dtype] + bound[1:]
    raise TypeError(_invalid_arguments("aten::to", _TO_SIGNATURES, args, kwargs))


def _to_options(self, device, non_blocking, copy, memory_format):
    # dispatch_to(self, device, ...): self.options() with the device replaced, so the trace
    # records every option (dtype, layout=strided, device) explicitly
    return dispatch(_TO_OPTIONS, [self, self.dtype, strided, device, None, non_blocking, copy,
                                  memory_format])


def to(self, *args, **kwargs):
    """Tensor.to: which ATen overload is recorded depends on what was given (THPVariable_to)."""
    if not kwargs and len(args) == 1 and builtins.type(args[0]) is D.dtype:
        return dispatch(_TO_DTYPE, [self, args[0], False, False, None])  # x.to(dtype), fast
    device, dtype, non_blocking, copy, memory_format = _parse_to(args, kwargs)
    if device is not None:
        check_device(device)
    if device is None and dtype is None:
        if not copy and memory_format is None:
            return self  # nothing asked: no op at all, not even in a trace
        return _to_options(self, self.device, non_blocking, copy, memory_format)
    if device is None:
        return dispatch(_TO_DTYPE, [self, dtype, non_blocking, copy, memory_format])
    if dtype is None:
        return _to_options(self, device, non_blocking, copy, memory_format)
    return dispatch(_TO_DEVICE, [self, device, dtype, non_blocking, copy, memory_format])


def _cast_method(name, dtype):
    def method(self, *, memory_format=None):
        return dispatch(_TO_DTYPE, [self, dtype, False, False, memory_format])
    method.__name__, method.__qualname__ = name, "Tensor." + name
    method.__doc__ = f"self.to(torch.{dtype.name}): recorded as aten::to.dtype."
    return method


def cpu(self, *, memory_format=None):
    return _to_options(self, CPU, False, False, memory_format)


def cuda(self, device=None, non_blocking=False, *, memory_format=None):
    device = check_device(as_device(device) if device is not None else _device("cuda"))
    return _to_options(self, device, non_blocking, False, memory_format)


_LEGACY_TYPES = {f"torch.{d.ir_name}Tensor": d for d in D.ALL_DTYPES}


def type(self, dtype=None, non_blocking=False, *, memory_format=None):
    """x.type() -> 'torch.FloatTensor'; x.type(torch.int32) / x.type('torch.IntTensor') cast."""
    if dtype is None:
        cuda_part = "cuda." if self.device.type == "cuda" else ""
        return f"torch.{cuda_part}{self.dtype.ir_name}Tensor"
    if isinstance(dtype, D.dtype):
        return dispatch(_TO_DTYPE, [self, dtype, non_blocking, False, memory_format])
    if not isinstance(dtype, (str, builtins.type)):  # `type` here is this method
        raise TypeError("dtype must be a type, str, or dtype object")
    name = dtype if isinstance(dtype, str) else dtype.__name__
    device_type = "cuda" if name.startswith("torch.cuda.") else "cpu"
    target = _LEGACY_TYPES.get(name.replace("torch.cuda.", "torch."))
    if target is None:
        raise ValueError(f"invalid type: '{name}'")
    device = self.device if device_type == self.device.type else check_device(_device(device_type))
    return dispatch(_TO_DEVICE, [self, device, target, non_blocking, False, memory_format])


_CAST_METHODS = {"float": D.float32, "double": D.float64, "half": D.float16, "long": D.int64,
                 "int": D.int32, "short": D.int16, "char": D.int8, "byte": D.uint8,
                 "bool": D.bool, "cfloat": D.complex64, "cdouble": D.complex128}


def _install_methods():
    methods = {"to": to, "cpu": cpu, "cuda": cuda, "type": type, "new_tensor": new_tensor}
    methods.update({n: _cast_method(n, d) for n, d in _CAST_METHODS.items()})
    methods.update({n: _new_method(n) for n in ("new_zeros", "new_ones", "new_full", "new_empty",
                                                      "new_empty_strided")})
    for name, fn in methods.items():
        setattr(Tensor, name, fn)


_install_methods()
