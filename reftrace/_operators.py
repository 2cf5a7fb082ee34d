"""Python operators on Tensor, each mapped to the ATen op torch's own binding calls.

torch/_tensor.py and python_variable_methods.cpp decide these, and the tracer records exactly
what is called (checked against ``torch.jit.trace`` graphs in tests/test_ops_pointwise.py):

- ``x + 2`` is ``aten::add`` with a wrapped-number constant (add takes numbers as tensors);
  ``x - 2``, ``x * 2``, ``x / 2``, ``x // 2`` likewise (sub, mul, div, floor_divide);
- ``x == 2`` is ``aten::eq.Scalar``, ``x % 2`` ``remainder.Scalar``, ``x ** 2``
  ``pow.Tensor_Scalar`` (these ops take no numbers as tensors, so a Scalar overload matches);
- ``x & y`` is ``aten::__and__`` (and ``__or__``, ``__xor__``, ``__lshift__``, ``__rshift__``,
  with ``__iand__``... in place), but the reflected ``1 & x`` is ``bitwise_and(x, 1)``;
- reflected operators: ``2 - x`` is ``rsub``, ``2 / x`` is ``reciprocal`` then ``mul``,
  ``2 ** x`` is ``pow.Scalar``, ``2 // x`` ``floor_divide(2, x)``, ``2 % x``
  ``remainder.Scalar_Tensor``, ``1 << x`` ``bitwise_left_shift.Scalar_Tensor``;
- ``-x`` neg, ``+x`` positive, ``abs(x)`` abs, ``~x`` bitwise_not (a TypeError for floats).

A TypeError while binding (an operand of the wrong type) returns NotImplemented, as torch's
binding does, so Python can try the other operand or raise its own TypeError.

Some of these torch writes in Python (torch/_tensor.py: ``__pow__``, ``__floordiv__``, the
reflected ones); the tracer takes value names from the frame that calls the op, so for those
the caller is torch's function, whose locals name nothing: after ``y = x * 1; y **= 2`` the
graph leaves ``y`` unnamed. Their reftrace equivalents are marked ``python_level`` likewise.
"""
from ._dispatch import PLAIN
from ._frames import python_level
from .ops import PACKETS, _registry
from ._tensor import Tensor, scalar_to_tensor


def _p(name):
    return PACKETS.get("aten::" + name)


def _binary(name, swap=False):
    """``self (op) other`` as ``name(self, other)`` (``name(other, self)`` when ``swap``).
    The op table is complete when this module runs, so the packet is looked up once, here."""
    packet = _p(name)
    if packet is None:
        raise RuntimeError(f"operator table has no aten::{name}")
    # (overload, defaults) that two plain tensors bind to: the packet's own fast path, taken
    # here without packing its *args (x + y is the commonest eager call); None: no such overload
    fast = None if swap else packet.tensor_overload(2)
    if fast is not None and (fast[1] is None or fast[0].return_type is not None):
        fast = None  # (list defaults or named-tuple results: the packet's path handles them)
    # add, sub, mul, div take a Python number as a wrapped-number tensor: binding ``x * 1.5``
    # tries that same first overload and converts the number with scalar_to_tensor
    numbers = fast is not None and fast[0].numbers_as_tensors

    ov, tail = fast or (None, ())
    kernel = ov.kernel if ov is not None else None
    # (a tail of one default spelled out below: kernel(*args) would pack a tuple per call)
    one, short = len(tail) == 1, len(tail) <= 1
    t0 = tail[0] if one else None

    def dunder(self, other):
        try:
            if fast is not None and type(self) is Tensor:
                # what packet(self, other) binds to
                if type(other) is Tensor:
                    if PLAIN[0] and short and not self.requires_grad and not other.requires_grad:
                        # what dispatch does then (see _dispatch.PLAIN), one frame and list fewer
                        return kernel(self, other, t0) if one else kernel(self, other)
                    # dispatched through _registry's name, the one every call goes through
                    return _registry.dispatch(ov, [self, other, *tail])
                if numbers and (type(other) is float or type(other) is int):
                    if PLAIN[0] and short and not self.requires_grad:
                        other = scalar_to_tensor(other)
                        return kernel(self, other, t0) if one else kernel(self, other)
                    return _registry.dispatch(ov, [self, scalar_to_tensor(other), *tail])
            return packet(other, self) if swap else packet(self, other)
        except TypeError:
            return NotImplemented
    dunder.__name__ = name
    return dunder


def _python_level_binary(name, swap=False):
    """As _binary, for an operator torch implements in torch/_tensor.py (a distinct code object,
    marked as a caller frame for the tracer's naming)."""
    @python_level
    def dunder(self, other):
        try:
            return _p(name)(other, self) if swap else _p(name)(self, other)
        except TypeError:
            return NotImplemented
    dunder.__name__ = name
    return dunder


def _wrapped_c_method(name):
    """An operator torch/_tensor.py makes by wrapping the C method ``Tensor.<name>`` in
    ``_handle_torch_function_and_wrap_type_error_to_not_implemented`` (``__pow__``,
    ``__ipow__``): the innermost Python frame is that wrapper, ``wrapped(self, *args,
    **kwargs)``, whose only tensor local is ``self``, so the tracer names no operand here."""
    packet = _p(name)

    @python_level
    def wrapped(self, *args):
        try:
            return packet(self, *args)
        except TypeError:
            return NotImplemented
    wrapped.__name__ = name
    return wrapped


def _unary(name):
    def dunder(self):
        return _p(name)(self)
    dunder.__name__ = name
    return dunder


@python_level
def _rtruediv(self, other):
    # torch/_tensor.py: __rdiv__ is self.reciprocal() * other
    try:
        return _p("reciprocal")(self) * other
    except TypeError:
        return NotImplemented


def _invert(self):
    # python_variable_methods.cpp checks the dtype before calling bitwise_not
    if self.dtype.category > 1:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return _p("bitwise_not")(self)


OPERATORS = {
    "__add__": _binary("add"), "__radd__": _binary("add"), "__iadd__": _binary("add_"),
    "__sub__": _binary("sub"), "__rsub__": _python_level_binary("rsub"), "__isub__": _binary("sub_"),
    "__mul__": _binary("mul"), "__rmul__": _binary("mul"), "__imul__": _binary("mul_"),
    "__truediv__": _binary("div"), "__rtruediv__": _rtruediv, "__rdiv__": _rtruediv, "__itruediv__": _binary("div_"),
    "__floordiv__": _python_level_binary("floor_divide"),
    "__rfloordiv__": _python_level_binary("floor_divide", swap=True),
    "__ifloordiv__": _binary("floor_divide_"),
    "__mod__": _binary("remainder"), "__rmod__": _python_level_binary("remainder", swap=True),
    "__imod__": _binary("remainder_"),
    "__pow__": _wrapped_c_method("pow"), "__rpow__": _python_level_binary("pow", swap=True),
    "__ipow__": _wrapped_c_method("pow_"),
    "__matmul__": _binary("matmul"), "__rmatmul__": _python_level_binary("matmul", swap=True),
    "__and__": _binary("__and__"), "__rand__": _binary("bitwise_and"), "__iand__": _binary("__iand__"),
    "__or__": _binary("__or__"), "__ror__": _binary("bitwise_or"), "__ior__": _binary("__ior__"),
    "__xor__": _binary("__xor__"), "__rxor__": _binary("bitwise_xor"), "__ixor__": _binary("__ixor__"),
    "__lshift__": _binary("__lshift__"),
    "__rlshift__": _python_level_binary("bitwise_left_shift", swap=True),
    "__ilshift__": _binary("__ilshift__"),
    "__rshift__": _binary("__rshift__"),
    "__rrshift__": _python_level_binary("bitwise_right_shift", swap=True),
    "__irshift__": _binary("__irshift__"),
    "__eq__": _binary("eq"), "__ne__": _binary("ne"), "__lt__": _binary("lt"),
    "__le__": _binary("le"), "__gt__": _binary("gt"), "__ge__": _binary("ge"),
    "__neg__": _unary("neg"), "__abs__": _unary("abs"), "__invert__": _invert,
    "__pos__": _unary("positive"),
}


def install():
    for name, fn in OPERATORS.items():
        setattr(Tensor, name, fn)
    Tensor.__div__ = Tensor.__truediv__
    Tensor.__hash__ = lambda self: id(self)  # __eq__ is elementwise, so restore identity hashing
