"""A small pickle writer for torch's formats (torch/csrc/jit/serialization/pickler.cpp).

It writes protocol 2, the opcodes torch's own picklers use, for exactly the values torch's
formats hold: None, bools, ints, floats, complex, strings, bytes, tuples, lists, dicts,
OrderedDicts, torch.Size, dtypes, devices, tensors and parameters (through ``_rebuild_tensor_v2``
with a persistent id naming their storage), and TorchScript objects (``ArchivedObject``: GLOBAL
``__torch__.X``, NEWOBJ, BUILD with the attribute dict). Anything else is a TypeError naming it:
reftrace never falls back to Python's pickle, whose output only Python can read.
"""
import struct
from collections import OrderedDict

from . import _dtype as D
from ._weights_only_unpickler import ArchivedObject


class Pickler:
    """``Pickler(tensor_pid).dump(obj) -> bytes``. ``tensor_pid(tensor)`` returns the tensor's
    persistent id tuple ``('storage', storage_name, key, location, numel)`` (storage_name such as
    ``'FloatStorage'``) and its storage offset in elements."""

    def __init__(self, tensor_pid, parameters_as_tensors=False):
        self.tensor_pid = tensor_pid
        # TorchScript archives hold parameters as tensors that require grad
        self.parameters_as_tensors = parameters_as_tensors
        self.out = bytearray()
        self.memo = {}       # id(obj) -> memo index (objects are kept alive by `kept`)
        self.kept = []
        self.globals = {}    # "module name" -> memo index
        self.open_tuples = set()  # tuples being written (memoized only once complete)

    def dump(self, obj):
        self.out += b"\x80\x02"
        stack = [("obj", obj)]
        # an explicit work stack: deeply nested containers never hit the recursion limit
        while stack:
            kind, x = stack.pop()
            if kind == "raw":
                self.out += x
            elif kind == "memo":
                self.open_tuples.discard(id(x))
                self._put(x)
            else:
                self._save(x, stack)
        self.out += b"."
        return bytes(self.out)

    # -- primitives -----------------------------------------------------------------------------
    def _put(self, obj):
        idx = len(self.memo)
        self.memo[id(obj)] = idx
        self.kept.append(obj)
        self.out += b"q" + bytes([idx]) if idx < 256 else b"r" + struct.pack("<I", idx)

    def _get(self, idx):
        self.out += b"h" + bytes([idx]) if idx < 256 else b"j" + struct.pack("<I", idx)

    def _global(self, module, name):
        key = f"{module} {name}"
        idx = self.globals.get(key)
        if idx is not None:
            self._get(idx)
            return
        self.out += b"c" + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n"
        idx = len(self.memo)
        self.globals[key] = idx
        self.memo[("global", key)] = idx
        self.out += b"q" + bytes([idx]) if idx < 256 else b"r" + struct.pack("<I", idx)

    def _int(self, v):
        if 0 <= v < 256:
            self.out += b"K" + bytes([v])
        elif 0 <= v < 65536:
            self.out += b"M" + struct.pack("<H", v)
        elif -(1 << 31) <= v < (1 << 31):
            self.out += b"J" + struct.pack("<i", v)
        else:
            n = (v.bit_length() + 8) // 8
            self.out += b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True)

    def _str(self, s):
        b = s.encode("utf-8", "surrogatepass")
        self.out += b"X" + struct.pack("<I", len(b)) + b

    # -- values ---------------------------------------------------------------------------------
    def _save(self, obj, stack):
        from ._tensor import Tensor, Size
        from ._device import device
        if obj is None:
            self.out += b"N"
        elif obj is True:
            self.out += b"\x88"
        elif obj is False:
            self.out += b"\x89"
        elif type(obj) is int:
            self._int(obj)
        elif type(obj) is float:
            self.out += b"G" + struct.pack(">d", obj)
        elif type(obj) is str:
            self._str(obj)
        elif id(obj) in self.memo:
            self._get(self.memo[id(obj)])
        elif isinstance(obj, Tensor):
            self._tensor(obj, stack)
        elif isinstance(obj, D.dtype):
            self._global("torch", obj.name)
        elif isinstance(obj, device):
            self._global("torch", "device")
            self._str(str(obj))
            self.out += b"\x85R"
        elif type(obj) is complex:
            self._global("builtins", "complex")
            self.out += b"G" + struct.pack(">d", obj.real) + b"G" + struct.pack(">d", obj.imag)
            self.out += b"\x86R"
        elif type(obj) is bytes:
            self._global("_codecs", "encode")
            self._str(obj.decode("latin1"))
            self._str("latin1")
            self.out += b"\x86R"
        elif isinstance(obj, Size):
            self._global("torch", "Size")
            stack += [("raw", b"\x85R"), ("obj", tuple(obj))]
        elif type(obj) is tuple:
            self._tuple(obj, stack)
        elif type(obj) is list:
            self.out += b"]"
            self._put(obj)
            self._items(obj, b"e", stack)
        elif type(obj) is OrderedDict:
            # as Python's pickler: the items, then the instance attributes (a state dict's
            # `_metadata`) with BUILD
            self._global("collections", "OrderedDict")
            self.out += b")R"
            self._put(obj)
            if vars(obj):
                stack += [("raw", b"b"), ("obj", dict(vars(obj)))]
            self._items([x for kv in obj.items() for x in kv], b"u", stack)
        elif type(obj) is dict:
            self.out += b"}"
            self._put(obj)
            self._items([x for kv in obj.items() for x in kv], b"u", stack)
        elif isinstance(obj, ArchivedObject):
            module, _, name = obj.qualified_name.rpartition(".")
            self._global(module, name)
            self.out += b")\x81"
            self._put(obj)
            stack += [("raw", b"b"), ("obj", dict(obj.state))]
        else:
            raise TypeError(f"cannot save an object of type {type(obj).__module__}."
                            f"{type(obj).__qualname__}: reftrace saves tensors, numbers, strings, "
                            "and tuples/lists/dicts of them (torch's weights_only format)")

    def _tuple(self, obj, stack):
        if not obj:
            self.out += b")"
            return
        if id(obj) in self.open_tuples:
            raise ValueError("cannot save a tuple that contains itself (through a list or dict)")
        self.open_tuples.add(id(obj))
        # elements first, then TUPLE1/2/3 or MARK ... TUPLE; memoized after (tuples are immutable)
        if len(obj) <= 3:
            stack += [("memo", obj), ("raw", b"\x85\x86\x87"[len(obj) - 1:len(obj)])]
        else:
            stack += [("memo", obj), ("raw", b"t")]
        stack += [("obj", x) for x in reversed(obj)]
        if len(obj) > 3:
            stack.append(("raw", b"("))

    def _items(self, items, op, stack):
        # batches of 1000, as Python's pickler writes them
        chunks = [items[i:i + 1000] for i in range(0, len(items), 1000)]
        for chunk in reversed(chunks):
            stack += [("raw", op)] + [("obj", x) for x in reversed(chunk)] + [("raw", b"(")]

    def _tensor(self, t, stack):
        from .nn.parameter import Parameter
        pid, offset = self.tensor_pid(t)
        is_param = isinstance(t, Parameter) and not self.parameters_as_tensors
        if is_param:
            self._global("torch._utils", "_rebuild_parameter")
            self.out += b"("
        self._global("torch._utils", "_rebuild_tensor_v2")
        self.out += b"(("
        self._str(pid[0])
        self._global("torch", pid[1])
        for x in pid[2:4]:
            self._str(x)
        self._int(pid[4])
        self.out += b"tQ"
        self._int(offset)
        self._small_int_tuple(t.shape_tuple)
        self._small_int_tuple(t.stride())
        self.out += b"\x88" if (t.requires_grad and not is_param) else b"\x89"
        self._global("collections", "OrderedDict")
        self.out += b")RtR"
        if is_param:
            self.out += b"\x88" if t.requires_grad else b"\x89"
            self._global("collections", "OrderedDict")
            self.out += b")RtR"
        self._put(t)

    def _small_int_tuple(self, values):
        self.out += b"("
        for v in values:
            self._int(int(v))
        self.out += b"t"
