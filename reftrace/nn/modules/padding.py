"""torch/nn/modules/padding.py: constant, zero, reflection, replication and circular padding in
1d/2d/3d, each one F.pad call (recorded as aten::pad). Paddings are normalised to tuples of
2/4/6 ints (last dim first, as F.pad takes them), which is what the repr prints."""
from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair

_quadruple = _ntuple(4, "_quadruple")
_sextuple = _ntuple(6, "_sextuple")


class _PadNd(Module):
    __constants__ = ["padding"]
    mode = None

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def _check_input_dim(self, input):
        n = len(self.padding) // 2
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")


def _padding_class(name, base, ntuple, mode=None):
    def __init__(self, padding):
        base.__init__(self)
        self.padding = ntuple(padding)
    attrs = {"__init__": __init__, "__module__": __name__}
    if mode is not None:
        attrs["mode"] = mode
    return type(name, (base,), attrs)


CircularPad1d = _padding_class("CircularPad1d", _CircularPadNd, _pair)
CircularPad2d = _padding_class("CircularPad2d", _CircularPadNd, _quadruple)
CircularPad3d = _padding_class("CircularPad3d", _CircularPadNd, _sextuple)
ReflectionPad1d = _padding_class("ReflectionPad1d", _PadNd, _pair, "reflect")
ReflectionPad2d = _padding_class("ReflectionPad2d", _PadNd, _quadruple, "reflect")
ReflectionPad3d = _padding_class("ReflectionPad3d", _PadNd, _sextuple, "reflect")
ReplicationPad1d = _padding_class("ReplicationPad1d", _PadNd, _pair, "replicate")
ReplicationPad2d = _padding_class("ReplicationPad2d", _PadNd, _quadruple, "replicate")
ReplicationPad3d = _padding_class("ReplicationPad3d", _PadNd, _sextuple, "replicate")


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _constant_class(name, ntuple):
    def __init__(self, padding, value):
        _ConstantPadNd.__init__(self, value)
        self.padding = ntuple(padding)
    return type(name, (_ConstantPadNd,), {"__init__": __init__, "__module__": __name__})


ConstantPad1d = _constant_class("ConstantPad1d", _pair)
ConstantPad2d = _constant_class("ConstantPad2d", _quadruple)
ConstantPad3d = _constant_class("ConstantPad3d", _sextuple)


def _zero_class(name, base):
    def __init__(self, padding):
        base.__init__(self, padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
    return type(name, (base,), {"__init__": __init__, "extra_repr": extra_repr,
                                "__module__": __name__})


ZeroPad1d = _zero_class("ZeroPad1d", ConstantPad1d)
ZeroPad2d = _zero_class("ZeroPad2d", ConstantPad2d)
ZeroPad3d = _zero_class("ZeroPad3d", ConstantPad3d)
