"""TorchScript types, printed as torch 2.13's type.cpp prints them.

A TensorType may know any subset of (scalar type, sizes, strides, requires_grad, device); what
is unknown is left out of the printed form: ``Float(2, 3, strides=[3, 1], requires_grad=0,
device=cpu)`` for a traced value, ``Long(device=cpu)`` for prim::NumToTensor, ``Tensor`` when
nothing is known (and after shape erasure, which the checker uses).
"""


class Type:
    __slots__ = ()

    def __eq__(self, other):
        return type(self) is type(other) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


class _Simple(Type):
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    __repr__ = __str__


IntType = _Simple("int")
FloatType = _Simple("float")
BoolType = _Simple("bool")
StringType = _Simple("str")
NoneType = _Simple("NoneType")
DeviceType = _Simple("Device")
NumberType = _Simple("Scalar")   # torch prints a Scalar value's type as 'Scalar'
GeneratorType = _Simple("Generator")
ComplexType = _Simple("complex")


_OF = {}  # TensorType.of's shared types, by (dtype, sizes, strides, requires_grad, device)


class TensorType(Type):
    __slots__ = ("scalar_type", "sizes", "strides", "requires_grad", "device")

    def __init__(self, scalar_type=None, sizes=None, strides=None, requires_grad=None, device=None):
        self.scalar_type = scalar_type   # a reftrace dtype or None
        self.sizes = sizes               # tuple or None (unknown rank)
        self.strides = strides
        self.requires_grad = requires_grad
        self.device = device             # a reftrace device or None

    @classmethod
    def of(cls, tensor):
        """The complete type of a real tensor: what the tracer writes for each traced value. A
        nested tensor has no sizes or strides: its type has a dtype but no rank
        (``FloatTensor(requires_grad=0, device=cpu)``)."""
        if tensor.is_nested:
            return cls(tensor.dtype, None, None, bool(tensor.requires_grad), tensor.device)
        # one TensorType per distinct type, shared by every value that has it (types are never
        # changed in place: setType replaces them): a trace makes one per traced value, each a
        # long-lived object the garbage collector walks on every full pass
        # (the key reads the slots: _stride is None for contiguous strides, which the type
        # then computes; the shape is the array's, shape_tuple without the property call)
        device, strides = tensor.device, tensor._stride
        if strides is not None and type(strides) is not tuple:
            strides = tuple(strides)
        key = (tensor.dtype, tensor._array.shape, strides, tensor.requires_grad,
               device.type, device.index)
        typ = _OF.get(key)
        if typ is None or cls is not TensorType:
            typ = cls(key[0], tuple(tensor.shape_tuple), tuple(tensor.stride()),
                      bool(tensor.requires_grad), device)
            if cls is TensorType:
                if len(_OF) > 4096:
                    _OF.clear()
                _OF[key] = typ
        return typ

    def __str__(self):
        out = "Tensor" if self.scalar_type is None else \
            self.scalar_type.ir_name + ("Tensor" if self.sizes is None else "")  # (rank unknown)
        extras = []
        if self.sizes:  # known rank > 0
            dims = ", ".join(str(s) for s in self.sizes)
            if self.strides is not None and len(self.strides) == len(self.sizes):
                dims += ", strides=[" + ", ".join(str(s) for s in self.strides) + "]"
            extras.append(dims)
        if self.requires_grad is not None:
            extras.append(f"requires_grad={int(self.requires_grad)}")
        if self.device is not None:
            extras.append(f"device={self.device}")
        return out + ("(" + ", ".join(extras) + ")" if extras else "")

    __repr__ = __str__

    def erased(self):
        return TensorType()


TENSOR = TensorType()


class ListType(Type):
    __slots__ = ("elem",)

    def __init__(self, elem):
        self.elem = elem

    def __str__(self):
        return f"{self.elem}[]"

    __repr__ = __str__


class OptionalType(Type):
    __slots__ = ("elem",)

    def __init__(self, elem):
        self.elem = elem

    def __str__(self):
        return f"{self.elem}?"

    __repr__ = __str__


class TupleType(Type):
    __slots__ = ("elems",)

    def __init__(self, elems):
        self.elems = tuple(elems)

    def __str__(self):
        return "(" + ", ".join(str(e) for e in self.elems) + ")"

    __repr__ = __str__


class DictType(Type):
    __slots__ = ("key", "value")

    def __init__(self, key, value):
        self.key, self.value = key, value

    def __str__(self):
        return f"Dict({self.key}, {self.value})"

    __repr__ = __str__


class ClassType(Type):
    """A traced module's class: ``__torch__.Net``, with its attributes' types and its methods
    (one Graph each: ``forward``, ``forward1`` ... for repeated submodule calls)."""
    __slots__ = ("qualified_name", "attributes", "methods")

    def __init__(self, qualified_name):
        self.qualified_name = qualified_name
        self.attributes = {}   # name -> Type, in torch's order (params, buffers, training, ..., modules)
        self.methods = {}      # name -> Graph

    def __str__(self):
        return self.qualified_name

    __repr__ = __str__

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)

    def attribute_type(self, name):
        return self.attributes[name]

    def add_method(self, base, graph):
        """mangleMethodName: forward, forward1, forward2 ..."""
        i = 0
        while True:
            name = base if i == 0 else f"{base}{i}"
            if name not in self.methods:
                self.methods[name] = graph
                return name
            i += 1


class FunctionType(Type):
    """The type of a traced function used as a value (prim::CallFunction's callee); prints as
    ``Function`` and, like torch's FunctionType, carries the callee."""
    __slots__ = ("callee", "qualified_name")

    def __init__(self, callee, qualified_name=None):
        self.callee = callee  # the callee's Graph
        self.qualified_name = qualified_name  # '__torch__.module.fn' (what .code prints)

    def __str__(self):
        return "Function"

    __repr__ = __str__


TENSOR_LIST = ListType(TENSOR)
OPTIONAL_TENSOR_LIST = ListType(OptionalType(TENSOR))
INT_LIST = ListType(IntType)
FLOAT_LIST = ListType(FloatType)
BOOL_LIST = ListType(BoolType)


def erase_shape(t):
    """_jit_pass_erase_shape_information: every tensor type (also inside containers) -> Tensor."""
    if isinstance(t, TensorType):
        return TENSOR
    if isinstance(t, ListType):
        return ListType(erase_shape(t.elem))
    if isinstance(t, OptionalType):
        return OptionalType(erase_shape(t.elem))
    if isinstance(t, TupleType):
        return TupleType(erase_shape(e) for e in t.elems)
    if isinstance(t, DictType):
        return DictType(erase_shape(t.key), erase_shape(t.value))
    return t
