"""The legacy typed constructors: torch.FloatTensor(2, 3), torch.LongTensor([1, 2]) ...

``torch.XTensor(*sizes)`` is an uninitialised tensor of that dtype (recorded as ``aten::empty``
with dtype, layout and device given); ``torch.XTensor(data)`` copies Python data (a constant of
the trace, converted by ``aten::to``, without torch.tensor's warning or detach).
``isinstance(t, torch.FloatTensor)`` asks whether t is a cpu float32 tensor.
"""
from . import _dtype as D
from ._device import CPU, strided
from ._dispatch import STATE
from ._tensor import Tensor, Size

__all__ = ["BoolTensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor",
           "HalfTensor", "FloatTensor", "DoubleTensor"]


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args):
        from .ops import get_packet
        if not args or all(type(a) is int for a in args) or (len(args) == 1 and isinstance(args[0], Size)):
            size = list(args[0]) if len(args) == 1 and isinstance(args[0], Size) else list(args)
            return get_packet("empty")(size, dtype=cls.dtype, layout=strided, device=CPU)
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype is not cls.dtype:
                raise TypeError(f"expected {cls.dtype} (got {args[0].dtype})")
            return args[0]
        if len(args) == 1:
            from ._creation import _new_from_data
            t = _new_from_data(args[0], cls.dtype, CPU)
            if STATE.tracer is not None:  # a constant of the trace, converted as torch records it
                t = get_packet("to")(t, CPU, cls.dtype, False, False)
            return t
        raise TypeError(f"{cls.__name__}(): expected sizes or one sequence of data, got {args!r}")

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype, "__module__": "torch"})


BoolTensor = _legacy("BoolTensor", D.bool)
ByteTensor = _legacy("ByteTensor", D.uint8)
CharTensor = _legacy("CharTensor", D.int8)
ShortTensor = _legacy("ShortTensor", D.int16)
IntTensor = _legacy("IntTensor", D.int32)
LongTensor = _legacy("LongTensor", D.int64)
HalfTensor = _legacy("HalfTensor", D.float16)
FloatTensor = _legacy("FloatTensor", D.float32)
DoubleTensor = _legacy("DoubleTensor", D.float64)
