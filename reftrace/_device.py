"""torch.device, and the few enums the schemas name (Layout, MemoryFormat)."""


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            type, index = "cuda", type
        if ":" in type:
            type, _, idx = type.partition(":")
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, meta device type at start of device string: {type}")
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")


def as_device(d):
    """A device from what torch accepts for ``device=``: str, int (a cuda index) or device."""
    if d is None or isinstance(d, device):
        return d
    return device(d)


class _Enum:
    """A named constant that the tracer records as an int (torch records enums as ints)."""
    __slots__ = ("name", "value")

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __repr__(self):
        return "torch." + self.name

    def __index__(self):
        return self.value


strided = _Enum("strided", 0)
contiguous_format = _Enum("contiguous_format", 0)
preserve_format = _Enum("preserve_format", 1)
channels_last = _Enum("channels_last", 2)
channels_last_3d = _Enum("channels_last_3d", 3)
MEMORY_FORMATS = {"contiguous_format": contiguous_format, "preserve_format": preserve_format,
                  "channels_last": channels_last, "channels_last_3d": channels_last_3d}
LAYOUTS = {"strided": strided}
