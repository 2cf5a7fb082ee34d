"""``reftrace.ops.aten``: the op table by ATen name, as ``torch.ops.aten`` (torch/_ops.py's
``_OpNamespace``): ``ops.aten.add`` is the overload packet (torch's parser picks the overload),
``ops.aten.add.Tensor`` / ``ops.aten.relu.default`` one overload, called with its schema's
arguments. Programs (and torch's own test suite: op_db's ``torch.ops.aten._safe_softmax.default``)
reach ops torch exposes nowhere else this way.

torch's ``OpOverloadPacket.__call__`` / ``OpOverload.__call__`` are Python functions
(``(self, /, *args, **kwargs)``): while tracing they are the frame torch names values from, and
their only tensor locals are inside ``args``, so an op called this way names none of its inputs
(spec/names.md NAM-3). The wrappers here are that frame (``@python_level``)."""
import types

from .._frames import python_level
from ._registry import PACKETS


class OpOverload:
    def __init__(self, overload):
        self._op = overload

    def __repr__(self):
        name, _, overload = self._op.qualified.partition(".")
        return f"<OpOverload(op='{name.replace('::', '.')}', overload='{overload or 'default'}')>"

    @python_level
    def __call__(self, /, *args, **kwargs):
        return self._op(*args, **kwargs)


class OpOverloadPacket:
    def __init__(self, packet):
        self._op = packet

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._op.name.replace('::', '.')}')>"

    def __getattr__(self, overload):
        try:
            return OpOverload(getattr(self._op, overload))
        except AttributeError:  # torch's words
            raise AttributeError(f"The underlying op of '{self._op.name.replace('::', '.')}' has "
                                 f"no overload name '{overload}'") from None

    def overloads(self):
        return [ov.overload or "default" for ov in self._op.overloads]

    @python_level
    def __call__(self, /, *args, **kwargs):
        return self._op(*args, **kwargs)


class _OpNamespace(types.ModuleType):
    def __init__(self, name):
        super().__init__(f"reftrace.ops.{name}")
        self.name = name

    def __getattr__(self, op_name):
        packet = PACKETS.get(f"{self.name}::{op_name}")
        if packet is None:  # torch's words
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        return OpOverloadPacket(packet)


aten = _OpNamespace("aten")
