"""Calling a trace: Python arguments -> the graph's inputs (pybind_utils.h createStackForSchema).

torch checks a call of a traced function or method against the schema it made from the graph
(``_lambda(Tensor x, (Tensor, Tensor) t) -> Tensor``): positional then keyword arguments, each
converted to its input's type (toIValue). The messages here are torch 2.13's:

    f() expected at most 1 argument(s) but received 2 argument(s). Declaration: f(Tensor x) -> Tensor
    f() is missing value for argument 'x'. Declaration: ...
    f() Expected a value of type 'Tuple[Tensor, Tensor]' for argument 't' but instead found type
    'list'.\nPosition: 0\nValue: ...\nDeclaration: ...\nCast error details: ...

Conversion is toIValue's: a list or tuple of the right length is a tuple input, any sequence of
tensors a list input; dict keys and values are checked against the traced dict's types.
"""
from .._tensor import Tensor
from . import _types as T
from ._io_types import _annotation
from .interpreter import InterpreterError

_PYBIND_CAST = ("Unable to cast Python instance of type {} to C++ type '?' (#define "
                "PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)")


class _CastError(Exception):
    """toIValue could not convert a value; the text is torch's 'Cast error details'."""


def argument_names(graph, skip=0):
    """The schema's argument names: each input's debug name without its '.1' suffix, or
    'argument_<i>' for an unnamed input (a *args parameter)."""
    loaded = graph.__dict__.get("argument_names")  # a loaded method's `def` names them
    if loaded is not None:
        return list(loaded[skip:])
    names = []
    for i, v in enumerate(graph.param.outputs_[skip:], skip):
        name = v.name
        if name and name.rsplit(".", 1)[-1].isdigit() and "." in name:
            name = name.rsplit(".", 1)[0]
        names.append(name or f"argument_{i}")
    return names


def _schema_type(t):
    """A type as FunctionSchema prints it: Tensor, Tensor[], (Tensor, Tensor), Dict(str, Tensor)."""
    if isinstance(t, T.TensorType):
        return "Tensor"
    if isinstance(t, T.ListType):
        return _schema_type(t.elem) + "[]"
    if isinstance(t, T.TupleType):
        return "(" + ", ".join(_schema_type(e) for e in t.elems) + ")"
    if isinstance(t, T.DictType):
        return f"Dict({_schema_type(t.key)}, {_schema_type(t.value)})"
    return str(t)


def declaration(graph, name):
    """The schema text torch appends to its call errors."""
    ins = graph.param.outputs_
    names = argument_names(graph)
    args = ", ".join(f"{_schema_type(v.type_)} {n}" for v, n in zip(ins, names))
    rets = [_schema_type(v.type_) for v in graph.ret.inputs_]
    ret = rets[0] if len(rets) == 1 else "(" + ", ".join(rets) + ")"
    if len(rets) == 1 and isinstance(graph.ret.inputs_[0].type_, T.TupleType):
        ret = "(" + ret + ")"
    return f"{name}({args}) -> {ret}"


def bind(graph, name, args, kwargs, skip=0):
    """The graph's input values for a call ``name(*args, **kwargs)``: ``skip`` leading inputs
    (a method's self) are already in ``args``. Raises torch's errors for a wrong call."""
    ins = graph.param.outputs_
    if len(args) + len(kwargs) > len(ins):
        raise RuntimeError(
            f"{name}() expected at most {len(ins)} argument(s) but received "
            f"{len(args) + len(kwargs)} argument(s). Declaration: {declaration(graph, name)}")
    names = argument_names(graph)
    values = list(args)
    # positional arguments are converted first, then the rest looked up by keyword
    _convert_all(graph, name, names, values, skip, len(values))
    for n in names[len(args):]:
        if n not in kwargs:
            raise RuntimeError(f"{name}() is missing value for argument '{n}'. "
                                   f"Declaration: {declaration(graph, name)}")
        values.append(kwargs[n])
    _convert_all(graph, name, names, values, len(args), len(values))
    return values


def _convert_all(graph, name, names, values, start, stop):
    ins = graph.param.outputs_
    for i in range(max(start, 0), stop):
        typ, v = ins[i].type_, values[i]
        if isinstance(typ, T.TensorType) and isinstance(v, Tensor):
            continue  # the common case, kept cheap
        try:
            values[i] = _convert(typ, v)
        except _CastError as e:
            raise RuntimeError(
                f"{name}() Expected a value of type '{_annotation(typ)}' for argument '{names[i]}' "
                f"but instead found type '{type(v).__name__}'.\nPosition: {i}\nValue: {v!r}\n"
                f"Declaration: {declaration(graph, name)}\nCast error details: {e}") from None


def _convert(typ, v):
    """toIValue: ``v`` as a value of ``typ``, or _CastError with torch's details."""
    if isinstance(typ, T.TensorType):
        if not isinstance(v, Tensor):
            raise _CastError(f"Unable to cast {v!r} to Tensor")
        return v
    if isinstance(typ, T.TupleType):
        if isinstance(v, Tensor) and v.dim() > 0:  # a sequence too: its rows
            v = [v[i] for i in range(v.shape_tuple[0])]
        if not isinstance(v, (tuple, list)):
            raise _CastError(_PYBIND_CAST.format(type(v)))
        if len(v) != len(typ.elems):
            raise _CastError(f"Object {v!r} had a different number of elements than type "
                             f"{_annotation(typ)}")
        return tuple(_convert(e, x) for e, x in zip(typ.elems, v))
    if isinstance(typ, T.ListType):
        if not isinstance(v, (tuple, list)):
            raise _CastError(_PYBIND_CAST.format(type(v)))
        try:
            return [_convert(typ.elem, x) for x in v]
        except _CastError:
            raise _CastError(_PYBIND_CAST.format(type(v))) from None
    if isinstance(typ, T.DictType):
        if not isinstance(v, dict):
            raise _CastError(_PYBIND_CAST.format(type(v)))
        for k, x in v.items():
            if not _key_fits(typ.key, k):
                raise _CastError(_PYBIND_CAST.format(type(k)))
            _convert(typ.value, x)
        return v
    if isinstance(typ, T.ClassType):
        if getattr(v, "_type", None) is not typ:
            raise _CastError(f"Unable to cast {v!r} to {typ}")
        return v
    return v


def _key_fits(typ, k):
    if isinstance(typ, T.TensorType):
        return isinstance(k, Tensor)
    if typ is T.StringType:
        return isinstance(k, str)
    if typ is T.BoolType:
        return isinstance(k, bool)
    if typ is T.IntType:
        return isinstance(k, int) and not isinstance(k, bool)
    if typ is T.FloatType:
        return isinstance(k, float)
    return True


def interpreter_failure(e):
    """What torch raises when an op fails while a trace runs: a RuntimeError saying so, with
    the op's own error as its last line (and as the cause, for Python readers)."""
    from ._python_op import JitRefusal
    if isinstance(e, JitRefusal):
        return RuntimeError(str(e))
    kind = "RuntimeError" if isinstance(e, InterpreterError) else type(e).__name__
    return RuntimeError("The following operation failed in the TorchScript interpreter.\n"
                        "Traceback of TorchScript (most recent call last):\n"
                        f"{kind}: {e}\n")
