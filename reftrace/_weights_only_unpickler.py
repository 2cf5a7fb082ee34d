"""The restricted unpickler for torch's file formats (torch/_weights_only_unpickler.py).

A pickle is a program for a stack machine whose GLOBAL opcode imports any name and whose REDUCE
opcode calls it: loading an untrusted pickle with Python's ``pickle`` runs whatever the file asks
for. This reader is an explicit opcode interpreter instead. GLOBAL pushes a *token* (never an
imported object) for one of the few names torch's formats use, and REDUCE/NEWOBJ/BUILD are
interpreted per token by functions written here. Anything else (another global, another opcode,
a malformed stream) stops the load with a ``RuntimeError`` that names it. Nothing from the file
is ever imported or called.

The names understood (what torch.save and torch.jit.save write):

- ``torch._utils._rebuild_tensor_v2`` / ``_rebuild_parameter``: a tensor over a storage, the
  storage coming from the caller's ``persistent_load`` (``('storage', torch.FloatStorage, key,
  location, numel)``);
- ``torch.<X>Storage`` (as a storage's type), ``torch.<dtype>``, ``torch.device``, ``torch.Size``,
  ``collections.OrderedDict``, ``builtins.complex/set/bytearray``, ``_codecs.encode`` (bytes);
- ``torch.jit._pickle.restore_type_tag`` and ``build_{int,double,bool,tensor}list`` (TorchScript's
  typed containers, which carry no behaviour);
- only when the caller allows it (TorchScript archives): ``__torch__.*`` classes, read as
  ``ArchivedObject(qualified_name, state)``: data, never a class of this process.
"""
import struct
from collections import OrderedDict

from . import _dtype as D

# storage type names (torch.FloatStorage ...) -> dtype; torch writes these in persistent ids
STORAGE_DTYPES = {
    "FloatStorage": D.float32, "DoubleStorage": D.float64, "HalfStorage": D.float16,
    "LongStorage": D.int64, "IntStorage": D.int32, "ShortStorage": D.int16, "CharStorage": D.int8,
    "ByteStorage": D.uint8, "BoolStorage": D.bool, "ComplexFloatStorage": D.complex64,
    "ComplexDoubleStorage": D.complex128,
}
STORAGE_NAMES = {dt: name for name, dt in STORAGE_DTYPES.items()}

# the most a string, bytes object or memo index may claim; the file is in memory, so anything
# longer than what is left of it is a truncated or forged stream (checked before reading)
_MAX_MEMO = 1 << 24
_MAX_DIMS = 32            # NumPy's limit is 64; torch files never come near either
_MAX_EXTENT = 1 << 62     # a size, stride or offset beyond this is no real tensor


class ArchivedObject:
    """A TorchScript class instance read from an archive: its qualified name
    (``__torch__.torch.nn.modules.linear.Linear``) and its attributes (``state``)."""
    __slots__ = ("qualified_name", "state")

    def __init__(self, qualified_name, state=None):
        self.qualified_name = qualified_name
        self.state = {} if state is None else state

    def __repr__(self):
        return f"ArchivedObject({self.qualified_name!r}, {sorted(self.state)!r})"


class StorageType:
    """The token for ``torch.FloatStorage`` & co. inside a persistent id."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype


class _Global:
    """The token GLOBAL pushes for an allowed callable name; REDUCE dispatches on ``name``."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<global {self.name}>"


class _ClassRef:
    """GLOBAL ``__torch__.Foo Bar``: NEWOBJ makes an ArchivedObject of it."""
    __slots__ = ("qualified_name",)

    def __init__(self, qualified_name):
        self.qualified_name = qualified_name


class _StorageRef:
    """What BINPERSID pushes: the caller's storage, usable only as _rebuild_tensor_v2's first
    argument (a bare storage in the result is refused)."""
    __slots__ = ("storage",)

    def __init__(self, storage):
        self.storage = storage


class _Mark:
    __slots__ = ()


_MARK = _Mark()

_CALLABLE_GLOBALS = frozenset("""
    torch._utils._rebuild_tensor_v2 torch._utils._rebuild_parameter
    collections.OrderedDict torch.device torch.Size builtins.complex builtins.set builtins.bytearray
    _codecs.encode torch.jit._pickle.restore_type_tag torch.jit._pickle.build_intlist
    torch.jit._pickle.build_doublelist torch.jit._pickle.build_boollist
    torch.jit._pickle.build_tensorlist
""".split())


def _error(message):
    return RuntimeError(f"Weights only load failed: {message}")


class Unpickler:
    """``Unpickler(data, persistent_load, make_tensor, ...).load()``.

    persistent_load(storage_type, key, location, numel) -> a storage (whatever make_tensor takes);
    make_tensor(storage, storage_offset, size, stride, requires_grad) -> a tensor;
    make_parameter(tensor, requires_grad) -> a parameter; make_device(str) -> a device.
    """

    def __init__(self, data, persistent_load, make_tensor, make_parameter, make_device,
                 allow_torchscript_classes=False, what="data.pkl"):
        self.data = memoryview(bytes(data))
        self.pos = 0
        self.persistent_load = persistent_load
        self.make_tensor = make_tensor
        self.make_parameter = make_parameter
        self.make_device = make_device
        self.allow_classes = allow_torchscript_classes
        self.what = what

    # -- reading the stream -------------------------------------------------------------------
    def _read(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise _error(f"{self.what} is truncated (needed {n} bytes at offset {self.pos})")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(b)

    def _unpack(self, fmt, n):
        return struct.unpack(fmt, self._read(n))[0]

    def _readline(self):
        end = bytes(self.data[self.pos:self.pos + 512]).find(b"\n")
        if end < 0:
            raise _error(f"{self.what}: unterminated GLOBAL name at offset {self.pos}")
        line = self._read(end + 1)[:-1]
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            raise _error(f"{self.what}: GLOBAL name is not UTF-8 at offset {self.pos}") from None

    def _pop(self):
        if not self.stack:
            raise _error(f"{self.what}: stack underflow at offset {self.pos - 1} (corrupted pickle)")
        v = self.stack.pop()
        if v is _MARK:
            raise _error(f"{self.what}: unexpected MARK at offset {self.pos - 1} (corrupted pickle)")
        return v

    def _top(self):
        if not self.stack or self.stack[-1] is _MARK:
            raise _error(f"{self.what}: stack underflow at offset {self.pos - 1} (corrupted pickle)")
        return self.stack[-1]

    def _pop_mark(self):
        items = []
        while True:
            if not self.stack:
                raise _error(f"{self.what}: MARK not found at offset {self.pos - 1} (corrupted pickle)")
            v = self.stack.pop()
            if v is _MARK:
                items.reverse()
                return items
            items.append(v)

    # -- the interpreter ----------------------------------------------------------------------
    def load(self):
        self.stack = []
        self.memo = {}
        while True:
            op = self._read(1)[0]
            handler = _OPCODES.get(op)
            if handler is None:
                raise _error(f"{self.what}: unsupported pickle opcode {bytes([op])!r} at offset "
                             f"{self.pos - 1}")
            if handler is _stop:
                result = self._pop()
                _check_plain(result, self.what)
                return result
            handler(self)

    def _global(self, module, name):
        # protocol 2 names Python 3's builtins by their Python 2 module (_read_global_instruction)
        module = {"__builtin__": "builtins", "copy_reg": "copyreg"}.get(module, module)
        full = f"{module}.{name}"
        if module == "torch" and name in STORAGE_DTYPES:
            return StorageType(name, STORAGE_DTYPES[name])
        if module == "torch" and name in D.BY_NAME and isinstance(D.BY_NAME[name], D.dtype):
            return D.BY_NAME[name]
        if full in _CALLABLE_GLOBALS:
            return _Global(full)
        if self.allow_classes and (module == "__torch__" or module.startswith("__torch__.")):
            return _ClassRef(full)
        if module == "torch" and name.endswith("Storage"):
            raise _error(f"unsupported storage type GLOBAL {full} (reftrace has no such dtype)")
        raise _error(f"Unsupported global: GLOBAL {full} was not an allowed global by default. "
                     "reftrace reads only the names torch's tensor and TorchScript formats use; "
                     "it never imports or calls anything a file names.")

    def _reduce(self, func, args):
        if not isinstance(func, _Global):
            raise _error(f"{self.what}: REDUCE of {_describe(func)} at offset {self.pos - 1}")
        if not isinstance(args, tuple):
            raise _error(f"{self.what}: REDUCE arguments must be a tuple, got {_describe(args)}")
        return _REDUCERS[func.name](self, *_checked_arity(func.name, args))


def _describe(v):
    if isinstance(v, _Global):
        return v.name
    if isinstance(v, _ClassRef):
        return v.qualified_name
    if isinstance(v, StorageType):
        return "torch." + v.name
    if isinstance(v, _StorageRef):
        return "storage"
    return type(v).__name__


_TOKENS = (_Global, _ClassRef, StorageType, _StorageRef, _Mark)


def _check_plain(result, what):
    """The result holds data only: no token of a global, class or storage escapes (a file could
    place one anywhere, e.g. a bare GLOBAL inside a list)."""
    seen, stack = set(), [result]
    while stack:
        v = stack.pop()
        if isinstance(v, _TOKENS):
            raise _error(f"{what}: the pickle's result contains a bare {_describe(v)}")
        if isinstance(v, (list, tuple, set, frozenset, dict, ArchivedObject)) and id(v) not in seen:
            seen.add(id(v))
            if isinstance(v, dict):
                stack.extend(v.keys())
                stack.extend(v.values())
            elif isinstance(v, ArchivedObject):
                stack.extend(v.state.values())
            else:
                stack.extend(v)


# -- REDUCE targets: what each allowed callable means ------------------------------------------

_ARITY = {"torch._utils._rebuild_tensor_v2": (6, 7), "torch._utils._rebuild_parameter": (3, 3),
          "collections.OrderedDict": (0, 1), "torch.device": (1, 2), "torch.Size": (1, 1),
          "builtins.complex": (2, 2), "builtins.set": (1, 1), "builtins.bytearray": (0, 1),
          "_codecs.encode": (2, 2), "torch.jit._pickle.restore_type_tag": (2, 2)}


def _checked_arity(name, args):
    lo, hi = _ARITY.get(name, (1, 1))
    if not lo <= len(args) <= hi:
        raise _error(f"{name} called with {len(args)} arguments")
    return args


def _int_tuple(v, what):
    if not isinstance(v, (tuple, list)) or not all(type(e) is int and e >= 0 for e in v):
        raise _error(f"tensor {what} must be a tuple of non-negative ints, got {v!r}")
    return tuple(v)


def _rebuild_tensor_v2(u, storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    if not isinstance(storage, _StorageRef):
        raise _error(f"_rebuild_tensor_v2's first argument must be a storage, got {_describe(storage)}")
    size, stride = _int_tuple(size, "size"), _int_tuple(stride, "stride")
    if len(size) != len(stride):
        raise _error(f"tensor size {size} and stride {stride} have different lengths")
    if len(size) > _MAX_DIMS or any(x >= _MAX_EXTENT for x in size + stride):
        raise _error(f"tensor size {size} / stride {stride} is out of range")
    if type(storage_offset) is not int or storage_offset < 0:
        raise _error(f"tensor storage offset must be a non-negative int, got {storage_offset!r}")
    if type(requires_grad) is not bool:
        raise _error(f"tensor requires_grad must be a bool, got {requires_grad!r}")
    if backward_hooks:
        raise _error("tensors with backward hooks cannot be loaded (hooks are code)")
    if metadata:
        raise _error("tensors with Python metadata (torch._utils.set_tensor_metadata) are not supported")
    if storage_offset >= _MAX_EXTENT:
        raise _error(f"tensor storage offset {storage_offset} is out of range")
    return u.make_tensor(storage.storage, storage_offset, size, stride, requires_grad)


def _rebuild_parameter(u, data, requires_grad, backward_hooks):
    if backward_hooks:
        raise _error("parameters with backward hooks cannot be loaded (hooks are code)")
    if type(requires_grad) is not bool:
        raise _error(f"parameter requires_grad must be a bool, got {requires_grad!r}")
    return u.make_parameter(data, requires_grad)


def _ordered_dict(u, items=()):
    try:
        return OrderedDict(items)
    except (TypeError, ValueError):
        raise _error("collections.OrderedDict called with something that is not a list of pairs") from None


def _device(u, name, index=None):
    if not isinstance(name, str) or (index is not None and type(index) is not int):
        raise _error(f"torch.device called with {name!r}, {index!r}")
    return u.make_device(name if index is None else f"{name}:{index}")


def _size(u, dims):
    from ._tensor import Size
    return Size(_int_tuple(dims, "torch.Size"))


def _complex(u, real, imag):
    if not all(type(x) in (int, float) for x in (real, imag)):
        raise _error("builtins.complex called with non-numbers")
    return complex(real, imag)


def _set(u, items):
    try:
        return set(items)
    except TypeError:
        raise _error("builtins.set called with unhashable items") from None


def _bytearray(u, data=b""):
    if not isinstance(data, (bytes, bytearray)):
        raise _error("builtins.bytearray called with non-bytes")
    return bytearray(data)


def _encode(u, text, encoding):
    # how protocol-2 pickles write bytes: _codecs.encode('\x00...', 'latin1')
    if not isinstance(text, str) or encoding != "latin1":
        raise _error(f"_codecs.encode is only read as (str, 'latin1'), got encoding {encoding!r}")
    try:
        return text.encode("latin1")
    except UnicodeEncodeError:
        raise _error("_codecs.encode: text is not latin-1") from None


def _restore_type_tag(u, obj, type_str):
    return obj  # a TorchScript static type annotation: nothing to do for plain Python values


def _build_list(u, items):
    if not isinstance(items, list):
        raise _error("torch.jit._pickle.build_*list called with a non-list")
    return list(items)


_REDUCERS = {
    "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
    "torch._utils._rebuild_parameter": _rebuild_parameter,
    "collections.OrderedDict": _ordered_dict,
    "torch.device": _device,
    "torch.Size": _size,
    "builtins.complex": _complex,
    "builtins.set": _set,
    "builtins.bytearray": _bytearray,
    "_codecs.encode": _encode,
    "torch.jit._pickle.restore_type_tag": _restore_type_tag,
    "torch.jit._pickle.build_intlist": _build_list,
    "torch.jit._pickle.build_doublelist": _build_list,
    "torch.jit._pickle.build_boollist": _build_list,
    "torch.jit._pickle.build_tensorlist": _build_list,
}


# -- opcodes (the subset of protocol 2 that torch's picklers write) ------------------------------

def _op(code):
    def register(fn):
        _OPCODES[code[0]] = fn
        return fn
    return register


_OPCODES = {}


@_op(b"\x80")
def _proto(u):
    proto = u._read(1)[0]
    if proto > 5:
        raise _error(f"{u.what}: unsupported pickle protocol {proto}")


@_op(b".")
def _stop(u):
    pass  # handled in load()


@_op(b"c")
def _global_op(u):
    module, name = u._readline(), u._readline()
    u.stack.append(u._global(module, name))


@_op(b"R")
def _reduce_op(u):
    args = u._pop()
    func = u._pop()
    u.stack.append(u._reduce(func, args))


@_op(b"\x81")
def _newobj(u):
    args = u._pop()
    cls = u._pop()
    if not isinstance(cls, _ClassRef):
        raise _error(f"{u.what}: NEWOBJ of {_describe(cls)}: only TorchScript classes (__torch__.*) "
                     "are created this way")
    if args != ():
        raise _error(f"{u.what}: NEWOBJ of {cls.qualified_name} with arguments")
    u.stack.append(ArchivedObject(cls.qualified_name))


@_op(b"b")
def _build(u):
    state = u._pop()
    inst = u._top()
    if isinstance(inst, ArchivedObject):
        if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
            raise _error(f"{u.what}: the state of {inst.qualified_name} must be a dict of attributes")
        inst.state = dict(state)
    elif type(inst) is OrderedDict and isinstance(state, dict):
        # a state dict carries its version metadata as an attribute (Module.state_dict's
        # `_metadata`); only that name is set, so no method of the dict can be shadowed
        unknown = [k for k in state if k != "_metadata"]
        if unknown:
            raise _error(f"{u.what}: BUILD of OrderedDict with attribute {unknown[0]!r}")
        inst.__dict__.update(state)
    else:
        raise _error(f"{u.what}: BUILD of {_describe(inst)} (only TorchScript objects have state)")


@_op(b"Q")
def _binpersid(u):
    pid = u._pop()
    if type(pid) is not tuple or len(pid) != 5 or pid[0] != "storage":
        raise _error(f"{u.what}: only persistent ids of storages are allowed, got {pid!r:.80}")
    _, storage_type, key, location, numel = pid
    if not isinstance(storage_type, StorageType):
        raise _error(f"{u.what}: persistent id has no storage type ({_describe(storage_type)})")
    if not isinstance(key, str) or not isinstance(location, str):
        raise _error(f"{u.what}: persistent id key and location must be strings")
    if type(numel) is not int or numel < 0:
        raise _error(f"{u.what}: storage {key!r} has invalid size {numel!r}")
    u.stack.append(_StorageRef(u.persistent_load(storage_type, key, location, numel)))


def _container_target(u, kinds, opname):
    target = u._top()
    if type(target) not in kinds:
        raise _error(f"{u.what}: {opname} on {_describe(target)}")
    return target


@_op(b"a")
def _append(u):
    item = u._pop()
    _container_target(u, (list,), "APPEND").append(item)


@_op(b"e")
def _appends(u):
    items = u._pop_mark()
    _container_target(u, (list,), "APPENDS").extend(items)


@_op(b"s")
def _setitem(u):
    v = u._pop()
    k = u._pop()
    _setitems_into(u, [k, v], "SETITEM")


@_op(b"u")
def _setitems(u):
    _setitems_into(u, u._pop_mark(), "SETITEMS")


def _setitems_into(u, items, opname):
    d = _container_target(u, (dict, OrderedDict), opname)
    if len(items) % 2:
        raise _error(f"{u.what}: {opname} with an odd number of items")
    try:
        for i in range(0, len(items), 2):
            d[items[i]] = items[i + 1]
    except TypeError:
        raise _error(f"{u.what}: {opname} with an unhashable key") from None


@_op(b"(")
def _mark(u):
    u.stack.append(_MARK)


@_op(b"t")
def _tuple(u):
    u.stack.append(tuple(u._pop_mark()))


@_op(b")")
def _empty_tuple(u):
    u.stack.append(())


@_op(b"\x85")
def _tuple1(u):
    u.stack.append((u._pop(),))


@_op(b"\x86")
def _tuple2(u):
    b, a = u._pop(), u._pop()
    u.stack.append((a, b))


@_op(b"\x87")
def _tuple3(u):
    c, b, a = u._pop(), u._pop(), u._pop()
    u.stack.append((a, b, c))


@_op(b"N")
def _none(u):
    u.stack.append(None)


@_op(b"\x88")
def _true(u):
    u.stack.append(True)


@_op(b"\x89")
def _false(u):
    u.stack.append(False)


@_op(b"]")
def _empty_list(u):
    u.stack.append([])


@_op(b"}")
def _empty_dict(u):
    u.stack.append({})


@_op(b"\x8f")
def _empty_set(u):
    u.stack.append(set())


@_op(b"J")
def _binint(u):
    u.stack.append(u._unpack("<i", 4))


@_op(b"K")
def _binint1(u):
    u.stack.append(u._read(1)[0])


@_op(b"M")
def _binint2(u):
    u.stack.append(u._unpack("<H", 2))


@_op(b"\x8a")
def _long1(u):
    n = u._read(1)[0]
    u.stack.append(int.from_bytes(u._read(n), "little", signed=True))


@_op(b"G")
def _binfloat(u):
    u.stack.append(u._unpack(">d", 8))


def _text(u, n):
    try:
        return str(u._read(n), "utf-8", "surrogatepass")
    except UnicodeDecodeError:
        raise _error(f"{u.what}: string at offset {u.pos - n} is not UTF-8") from None


@_op(b"X")
def _binunicode(u):
    u.stack.append(_text(u, u._unpack("<I", 4)))


@_op(b"\x8c")
def _short_binunicode(u):
    u.stack.append(_text(u, u._read(1)[0]))


@_op(b"U")
def _short_binstring(u):
    raw = u._read(u._read(1)[0])
    try:
        u.stack.append(raw.decode("ascii"))
    except UnicodeDecodeError:
        raise _error(f"{u.what}: SHORT_BINSTRING is not ASCII") from None


@_op(b"C")
def _short_binbytes(u):
    u.stack.append(u._read(u._read(1)[0]))


@_op(b"B")
def _binbytes(u):
    u.stack.append(u._read(u._unpack("<I", 4)))


def _memo_get(u, idx):
    if idx not in u.memo:
        raise _error(f"{u.what}: memo entry {idx} read before it was written (corrupted pickle)")
    u.stack.append(u.memo[idx])


def _memo_put(u, idx):
    if idx >= _MAX_MEMO:
        raise _error(f"{u.what}: memo index {idx} is out of range")
    u.memo[idx] = u._top()


@_op(b"h")
def _binget(u):
    _memo_get(u, u._read(1)[0])


@_op(b"j")
def _long_binget(u):
    _memo_get(u, u._unpack("<I", 4))


@_op(b"q")
def _binput(u):
    _memo_put(u, u._read(1)[0])


@_op(b"r")
def _long_binput(u):
    _memo_put(u, u._unpack("<I", 4))


@_op(b"\x94")
def _memoize(u):
    _memo_put(u, len(u.memo))


@_op(b"\x95")
def _frame(u):
    u._read(8)  # protocol 4 framing: only a length hint
