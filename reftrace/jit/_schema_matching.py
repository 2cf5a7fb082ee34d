"""Which schema a call or a node matches, by TorchScript's types (torch/csrc/jit/frontend/
schema_matching.cpp and Type::isSubtypeOf, for the types traced programs have).

Schema types map onto TorchScript types as the JIT sees them: ``ScalarType``, ``Layout`` and
``MemoryFormat`` are ints, ``Scalar`` is ``number`` (int, float, complex), ``T?`` accepts None,
lists and dicts are invariant (``List[Tensor]`` is not a ``List[Optional[Tensor]]``).
"""
from . import _types as T

# schema base type -> the TorchScript type a value must have (ScalarType/Layout/MemoryFormat are ints)
_SCHEMA_BASE = {"Tensor": T.TENSOR, "int": T.IntType, "SymInt": T.IntType, "ScalarType": T.IntType,
                "Layout": T.IntType, "MemoryFormat": T.IntType, "float": T.FloatType,
                "bool": T.BoolType, "str": T.StringType, "Scalar": T.NumberType,
                "Device": T.DeviceType, "Generator": T.GeneratorType}

def is_subtype(a, b):
    """Type::isSubtypeOf for the types traced code has (lists and dicts are invariant)."""
    if a is b:
        return True
    if isinstance(b, T.TensorType):
        return isinstance(a, T.TensorType)
    if isinstance(b, T.OptionalType):
        return a is T.NoneType or is_subtype(a, b.elem) or (
            isinstance(a, T.OptionalType) and is_subtype(a.elem, b.elem))
    if b is T.NumberType:
        return a in (T.IntType, T.FloatType, T.ComplexType, T.NumberType)
    if isinstance(b, T.ListType):
        return isinstance(a, T.ListType) and same_type(a.elem, b.elem)
    if isinstance(b, T.TupleType):
        return isinstance(a, T.TupleType) and len(a.elems) == len(b.elems) and all(
            is_subtype(x, y) for x, y in zip(a.elems, b.elems))
    if isinstance(b, T.DictType):
        return isinstance(a, T.DictType) and same_type(a.key, b.key) and same_type(a.value, b.value)
    return same_type(a, b)


def same_type(a, b):
    if isinstance(a, T.TensorType) and isinstance(b, T.TensorType):
        return True
    return a == b


def schema_type(st):
    """A schema argument's type (``int[2]``, ``Tensor?[]``, ``ScalarType?``) as a TorchScript type."""
    base = _SCHEMA_BASE.get(st.base)
    if base is None:
        raise RuntimeError(f"schema type {st} is not supported by reftrace's loader")
    if st.is_list:
        base = T.ListType(T.OptionalType(base) if st.elem_optional else base)
    return T.OptionalType(base) if st.optional else base


def return_type(ret):
    return schema_type(ret.type)



def matching_overload(packet, input_types):
    """The overload of ``packet`` whose every argument the input types fit, in order: how a parsed
    node with all its inputs written out finds its operator (Node::maybeOperator)."""
    for ov in packet.overloads:
        args = ov.schema.arguments
        if len(args) != len(input_types):
            continue
        try:
            wanted = [schema_type(a.type) for a in args]
        except RuntimeError:
            continue
        if all(is_subtype(t, w) for t, w in zip(input_types, wanted)):
            return ov
    return None
