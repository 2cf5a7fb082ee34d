"""Python operators on Tensor, each mapped to the ATen op torch's own binding calls.

torch/_tensor.py and python_variable_methods.cpp decide these, and the tracer records exactly
what is called: ``x + 2`` is ``aten::add`` with a wrapped-number constant (add takes numbers as
tensors), ``x == 2`` is ``aten::eq`` with an int constant (eq.Scalar), ``2 - x`` is
``aten::rsub``, ``2 / x`` is ``reciprocal`` then ``mul``, ``2 ** x`` is ``pow.Scalar``.
An operator whose op is not registered raises TypeError through the normal protocol.
"""
from .ops import PACKETS
from ._tensor import Tensor


def _p(name):
    return PACKETS.get("aten::" + name)


def _binary(name, swap=False):
    def dunder(self, other):
        packet = _p(name)
        if packet is None:
            return NotImplemented
        try:
            return packet(other, self) if swap else packet(self, other)
        except TypeError:
            return NotImplemented
    dunder.__name__ = name
    return dunder


def _unary(name):
    def dunder(self):
        return _p(name)(self)
    dunder.__name__ = name
    return dunder


def _rtruediv(self, other):
    # torch/_tensor.py: __rdiv__ = self.reciprocal() * other
    return _p("reciprocal")(self) * other


def _rpow(self, other):
    # torch/_tensor.py: __rpow__ = torch.pow(other, self) -> pow.Scalar
    return _p("pow")(other, self)


def _rsub(self, other):
    return _p("rsub")(self, other)


OPERATORS = {
    "__add__": _binary("add"), "__radd__": _binary("add"), "__iadd__": _binary("add_"),
    "__sub__": _binary("sub"), "__rsub__": _rsub, "__isub__": _binary("sub_"),
    "__mul__": _binary("mul"), "__rmul__": _binary("mul"), "__imul__": _binary("mul_"),
    "__truediv__": _binary("div"), "__rtruediv__": _rtruediv, "__itruediv__": _binary("div_"),
    "__floordiv__": _binary("floor_divide"), "__rfloordiv__": _binary("floor_divide", swap=True),
    "__ifloordiv__": _binary("floor_divide_"),
    "__mod__": _binary("remainder"), "__rmod__": _binary("remainder", swap=True),
    "__imod__": _binary("remainder_"),
    "__pow__": _binary("pow"), "__rpow__": _rpow, "__ipow__": _binary("pow_"),
    "__matmul__": _binary("matmul"), "__rmatmul__": _binary("matmul", swap=True),
    "__and__": _binary("bitwise_and"), "__rand__": _binary("bitwise_and"),
    "__iand__": _binary("bitwise_and_"),
    "__or__": _binary("bitwise_or"), "__ror__": _binary("bitwise_or"), "__ior__": _binary("bitwise_or_"),
    "__xor__": _binary("bitwise_xor"), "__rxor__": _binary("bitwise_xor"),
    "__ixor__": _binary("bitwise_xor_"),
    "__lshift__": _binary("__lshift__"), "__rshift__": _binary("__rshift__"),
    "__eq__": _binary("eq"), "__ne__": _binary("ne"), "__lt__": _binary("lt"),
    "__le__": _binary("le"), "__gt__": _binary("gt"), "__ge__": _binary("ge"),
    "__neg__": _unary("neg"), "__abs__": _unary("abs"), "__invert__": _unary("bitwise_not"),
    "__pos__": _unary("positive"),
}


def install():
    for name, fn in OPERATORS.items():
        setattr(Tensor, name, fn)
    Tensor.__div__ = Tensor.__truediv__
    Tensor.__hash__ = lambda self: id(self)  # __eq__ is elementwise, so restore identity hashing
