"""Input and output typing for traces (python_arg_flatten / toTraceableStack / getOutput).

What may go in and come out of a traced function, with torch 2.13's messages:
inputs are tensors and (possibly nested) tuples, non-empty lists and non-empty dicts of them;
outputs are tensors, tuples of outputs, tensor lists (a TracerWarning in strict mode) and, in
non-strict mode, dicts with str/Tensor keys and Tensor (or tuple-of-Tensor) values.
"""
from .._tensor import Tensor
from . import _types as T

STRICT_TRACER_MSG = (
    " might cause the trace to be incorrect, this is only valid if the container structure does "
    "not change based on the module's inputs. Consider using a constant container instead (e.g. "
    "for `list`, use a `tuple` instead. for `dict`, use a `NamedTuple` instead). If you "
    "absolutely need this and know the side effects, pass strict=False to trace() to allow this "
    "behavior.")


class _InferError(Exception):
    pass


def _annotation(t):
    """Type::annotation_str, used in torch's messages: Tuple[Tensor, int], List[Tensor]."""
    if isinstance(t, T.TensorType):
        return "Tensor"
    if isinstance(t, T.TupleType):
        return "Tuple[" + ", ".join(_annotation(e) for e in t.elems) + "]"
    if isinstance(t, T.ListType):
        return "List[" + _annotation(t.elem) + "]"
    if isinstance(t, T.DictType):
        return "Dict[" + _annotation(t.key) + ", " + _annotation(t.value) + "]"
    if isinstance(t, T.OptionalType):
        return "Optional[" + _annotation(t.elem) + "]"
    return str(t)


def infer_type(value):
    """tryToInferType for an example input: tensors are plain Tensor inside lists and dicts."""
    if isinstance(value, Tensor):
        return T.TensorType.of(value)
    if isinstance(value, bool):
        return T.BoolType
    if isinstance(value, int):
        return T.IntType
    if isinstance(value, float):
        return T.FloatType
    if isinstance(value, str):
        return T.StringType
    if value is None:
        return T.NoneType
    from .._dtype import dtype as _dtype_class
    from .._device import device as _device_class
    if isinstance(value, _dtype_class):  # a ScalarType is an int in TorchScript
        return T.IntType
    if isinstance(value, _device_class):
        return T.DeviceType
    if isinstance(value, tuple):
        return T.TupleType(infer_type(v) for v in value)
    if isinstance(value, list):
        if not value:
            raise _InferError("List trace inputs must have elements")
        elem = _generic(infer_type(value[0]))
        for v in value[1:]:
            other = _generic(infer_type(v))
            if other != elem:
                raise _InferError("List inputs to traced functions must have consistent element "
                                  f"type. Found {_annotation(elem)} and {_annotation(other)}")
        return T.ListType(elem)
    if isinstance(value, dict):
        if not value:
            raise _InferError("Dictionary inputs must have entries")
        keys = list(value)
        key_t = _generic(infer_type(keys[0]))
        val_t = _generic(infer_type(value[keys[0]]))
        for k in keys[1:]:
            for first, other in ((key_t, _generic(infer_type(k))), (val_t, _generic(infer_type(value[k])))):
                if other != first:
                    raise _InferError("Dictionary inputs to traced functions must have consistent "
                                      f"type. Found {_annotation(first)} and {_annotation(other)}")
        if isinstance(key_t, T.TupleType) or key_t is T.NoneType:
            # DictType::create's check, raised as it is (not as a "cannot infer type" error)
            raise RuntimeError(f"Cannot create dict for key type '{_cpp_str(key_t)}', only int, float, "
                               "complex, Tensor, device and string keys are supported")
        return T.DictType(key_t, val_t)
    raise _InferError(f"Only tensors and (possibly nested) tuples of tensors, lists, or dicts are "
                      f"supported as inputs or outputs of traced functions, but instead got value "
                      f"of type {type(value).__name__}.")


def _cpp_str(t):
    """Type::str() as C++ prints it in DictType's message: a tuple is '(int, int)'."""
    if isinstance(t, T.TupleType):
        return "(" + ", ".join(_cpp_str(e) for e in t.elems) + ")"
    return _annotation(t)


def _generic(t):
    """Tensor element types inside containers are unified to plain Tensor."""
    return T.erase_shape(t)


def _traceable(t):
    if isinstance(t, T.TensorType):
        return True
    if isinstance(t, T.ListType):
        return _traceable(t.elem)
    if isinstance(t, T.TupleType):
        return all(_traceable(e) for e in t.elems)
    if isinstance(t, T.DictType):
        return _traceable(t.value)
    return False


def input_types(inputs):
    """The graph input types of an example-input tuple, or torch's RuntimeError."""
    try:
        t = infer_type(tuple(inputs))
    except _InferError as e:
        raise RuntimeError(f"Tracer cannot infer type of {tuple(inputs)!r}\n:{e}") from None
    if not _traceable(t):
        raise RuntimeError(f"Type '{_annotation(t)}' cannot be traced. Only Tensors and (possibly "
                           "nested) Lists, Dicts, and Tuples of Tensors can be traced")
    return t.elems

