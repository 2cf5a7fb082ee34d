"""The TypeError torch's Python argument parser raises when a call matches no overload.

Mirrors torch/csrc/utils/python_arg_parser.cpp (``PythonArgParser::print_error``,
``FunctionSignature::parse`` with ``raise_exception``, ``toString``, ``type_name``) and
torch/csrc/utils/invalid_arguments.cpp (``format_invalid_args``). Only the error path imports
this: binding (ops/_registry.py) raises a bare NoMatch and nothing here runs on success.

The Python signatures are rebuilt from the ATen schemas as torchgen writes them: ``self`` is
``input`` (absent from a method's), an ``.out`` overload is its functional twin's kwarg-only
``out=``, and torch's type names (``Number``, ``tuple of ints``, ``torch.dtype``).
"""
from .._tensor import Tensor
from ._registry import NoMatch, _bool, _tensor, _tensor_list

# out= variants native_functions.yaml derives with ``autogen:``: no ``func:`` entry of their own,
# so torch's parser has no ``out=`` for their functional (torch.sum(x, out=y) is its TypeError;
# reftrace still binds it). Known ones; the full list would come from native_functions.yaml.
AUTOGEN_OUT = frozenset({"aten::sum.out", "aten::prod.out"})

_TENSOR_OPTIONS = frozenset({"dtype", "layout", "device", "pin_memory"})

_TYPE_NAMES = {
    "Tensor": "Tensor", "Scalar": "Number", "int": "int", "SymInt": "int", "float": "float",
    "bool": "bool", "str": "str", "ScalarType": "torch.dtype", "Layout": "torch.layout",
    "Device": "torch.device", "MemoryFormat": "torch.memory_format",
    "Generator": "torch.Generator", "complex": "complex"}
_LIST_NAMES = {"Tensor": "tuple of Tensors", "int": "tuple of ints", "SymInt": "tuple of ints",
               "float": "tuple of floats", "Scalar": "tuple of Scalars", "bool": "tuple of bools"}


def _default_text(arg):
    """torchgen's python default (gen_python_functions / api/python.py default_expr)."""
    v = arg.default
    if v is None or (arg.type.is_list and v == []):
        return "None"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, list):
        return "(" + ", ".join(str(e) for e in v) + ")" if len(set(v)) > 1 else str(v[0])
    if arg.type.base == "ScalarType" and type(v) is int:
        return "None"
    if arg.type.base == "MemoryFormat":
        return "torch." + str(v)
    if arg.type.base == "Layout":
        return "torch." + str(v)
    if arg.type.base == "int" and isinstance(v, str):  # int reduction=Mean: an enum of C++
        return f"at::Reduction::{v}"
    if isinstance(v, str) and arg.type.base == "str":
        return f'"{v}"'
    return str(v)


class _Param:
    def __init__(self, name, type_name, kwarg_only, default, check):
        self.name, self.type_name, self.kwarg_only = name, type_name, kwarg_only
        self.optional = default is not None
        self.default = default
        self.allow_none = default == "None"
        self.check = check
        self.allow_numbers = False


class Signature:
    """One Python signature of an op, as the parser holds it."""

    def __init__(self, name, params):
        self.name = name
        self.params = params
        self.max_args = len(params)
        self.min_args = sum(1 for p in params if not p.optional)
        self.max_pos_args = sum(1 for p in params if not p.kwarg_only)

    def __str__(self):  # FunctionSignature::toString
        parts, kw = [], False
        for p in self.params:
            if p.kwarg_only and not kw:
                parts.append("*")
                kw = True
            parts.append(f"{p.type_name} {p.name}" + (f" = {p.default}" if p.optional else ""))
        return "(" + ", ".join(parts) + ")"

    def raise_parse_error(self, args, kwargs):
        """FunctionSignature::parse(raise_exception=true): the first problem it meets. The
        parser takes any list for a tensor list and fails when it unpacks an element: that
        message is returned (None when the call parses)."""
        unpack_error = None
        nargs = len(args)
        varargs = self.max_pos_args == 1 and self.params[0].type_name == "tuple of ints"
        if nargs > self.max_pos_args and not (varargs and _py_typename(args[0]) == "int"):
            _extra_args(self, nargs)  # (x.view(2, 3) are varargs sizes; x.view(x, x) is not)
        arg_pos, remaining = 0, len(kwargs)
        for i, p in enumerate(self.params):
            is_kwd = False
            if arg_pos < nargs:
                if p.kwarg_only:
                    _extra_args(self, nargs)
                obj, given = args[arg_pos], True
            else:
                given, is_kwd = p.name in kwargs, True
                obj = kwargs.get(p.name)
            if (not given and p.optional) or (given and obj is None and p.allow_none):
                pass
            elif not given:
                missing = [f'"{q.name}"' for q in self.params[i:] if not q.optional]
                raise TypeError(f"{self.name}() missing {len(missing)} required positional "
                                f"argument{'s' if len(missing) == 1 else ''}: {', '.join(missing)}")
            elif p.type_name == "tuple of Tensors" and type(obj) in (list, tuple):
                bad = [j for j, e in enumerate(obj) if not isinstance(e, Tensor)]
                if bad and unpack_error is None:  # PythonArgs::tensorlist
                    unpack_error = (f"expected Tensor as element {bad[0]} in argument {i}, "
                                    f"but got {_py_typename(obj[bad[0]])}")
            elif _fits(p, obj):
                pass
            elif varargs and arg_pos == 0 and not is_kwd and _py_typename(args[0]) == "int":
                bad = [j for j, e in enumerate(args) if _py_typename(e) != "int"]
                if bad and unpack_error is None:  # the parser checks the first element only
                    unpack_error = (f"{self.name}(): argument '{p.name}' failed to unpack the "
                                    f"object at pos {bad[0] + 1} with error \"type must be tuple "
                                    f"of ints,but got {_py_typename(args[bad[0]])}\"")
                arg_pos = nargs  # (permute(1, 2, 3) is permute((1, 2, 3)))
                continue
            elif is_kwd:
                raise TypeError(f"{self.name}(): argument '{p.name}' must be {p.type_name}, "
                                f"not {_py_typename(obj)}")
            else:
                raise TypeError(f"{self.name}(): argument '{p.name}' (position {arg_pos + 1}) "
                                f"must be {p.type_name}, not {_py_typename(obj)}")
            if not is_kwd:
                arg_pos += 1
            elif given:
                remaining -= 1
        if remaining > 0:
            names = [p.name for p in self.params]
            for k in kwargs:
                if k not in names:
                    raise TypeError(f"{self.name}() got an unexpected keyword argument '{k}'")
                if names.index(k) < nargs:
                    raise TypeError(f"{self.name}() got multiple values for argument '{k}'")
        return unpack_error


def _fits(p, obj):
    try:
        p.check(obj, p.type_name == "Tensor" and p.allow_numbers)
        return True
    except (NoMatch, TypeError, ValueError, RuntimeError):
        return False


def _extra_args(sig, nargs):
    if sig.min_args != sig.max_pos_args:
        raise TypeError(f"{sig.name}() takes from {sig.min_args} to {sig.max_pos_args} "
                        f"positional arguments but {nargs} were given")
    raise TypeError(f"{sig.name}() takes {sig.max_pos_args} positional argument"
                    f"{'' if sig.max_pos_args == 1 else 's'} but {nargs} "
                    f"{'was' if nargs == 1 else 'were'} given")


_CPP_TYPES = {"int": "int64_t", "float": "double", "str": "c10::string_view"}
_CPP_LISTS = {"int": "IntArrayRef", "SymInt": "SymIntArrayRef", "Tensor": "TensorList",
              "Scalar": "ScalarList", "Dimname": "DimnameList"}


def _type_str(t):
    """torchgen api/python.py argument_type_str: the key torchgen sorts signatures by."""
    if t.is_list:
        if t.elem_optional:
            s = "const c10::List<::std::optional<at::Tensor>> &"
        elif t.base in _CPP_LISTS:
            s = _CPP_LISTS[t.base] + (f"[{t.list_size}]" if t.list_size else "")
        else:
            s = f"ArrayRef<{_CPP_TYPES.get(t.base, t.base)}>"
    else:
        s = _CPP_TYPES.get(t.base, t.base)
    return s + "?" if t.optional else s


def _is_arg_smaller(t1, t2):
    """gen_python_functions.py sort_overloads' is_arg_smaller (schema type strings)."""
    t1, t2 = str(t1), str(t2)
    return (t1 == "Scalar" and t2 == "Tensor" or t1 == "Scalar?" and t2 == "Tensor?"
            or "Dimname" in t1 and "Dimname" not in t2
            or t1 == "int[]" and t2 in ("int", "int?")
            or t1 == "Tensor[]" and "[]" in t2
            or t1 == "SymInt[]" and t2 == "int[]"
            or t1 in ("SymInt", "int") and t2 == "Tensor")


def _is_smaller(a1, a2):
    if len(a1) != len(a2):
        return False
    equal = all(x.type == y.type for x, y in zip(a1, a2))
    return not equal and all(str(x.type) == str(y.type) or _is_arg_smaller(x.type, y.type)
                             for x, y in zip(a1, a2))


def _sort_overloads(overloads, method):
    """gen_python_functions.py sort_overloads: by signature text, then a topological sort so
    that Tensor overloads come before their Scalar twins (the parser's order)."""
    def text(ov):
        formals, star = [], False
        for a in ov.schema.arguments:
            if a.is_write and a.kwarg_only:
                continue
            if a.kwarg_only and not star:
                formals.append("*")
                star = True
            t = _type_str(a.type)
            name = "input" if a.name == "self" and t == "Tensor" and not method else a.name
            formals.append(f"{t} {name}" + (f"={a.default}" if a.has_default else ""))
        return f"({', '.join(formals)})"

    def inputs(ov):
        return [a for a in ov.schema.arguments if not (a.is_write and a.kwarg_only)]

    ovs = sorted(overloads, key=text)
    larger = {i: {j for j, o2 in enumerate(ovs) if _is_smaller(inputs(o1), inputs(o2))}
              for i, o1 in enumerate(ovs)}
    larger = {i: js for i, js in larger.items() if js}
    order = [i for i in range(len(ovs)) if i not in larger]
    for idx in range(len(ovs)):
        i = order[idx]
        for j in sorted(larger):
            larger[j].discard(i)
            if not larger[j]:
                del larger[j]
                order.append(j)
    return [ovs[i] for i in order]


def signatures(packet_name, overloads, method=False):
    """The parser's visible signatures of these overloads, in its order."""
    short = packet_name.split("::")[1]
    outs = [ov for ov in overloads if ov.schema.is_out and not ov.python_hidden
            and ov.qualified not in AUTOGEN_OUT]
    sigs = []
    shown = [ov for ov in overloads if not (ov.python_hidden or ov.schema.is_out) and (
        "method" in ov.variants if method else "function" in ov.variants or not ov.variants)]
    # (no variants: an op of torch._C._nn, upsample_nearest1d; its parser is a function's)
    for ov in _sort_overloads(shown, method):
        sig = [(a.name, str(a.type)) for a in ov.schema.arguments]
        names = {a.name for a in ov.schema.arguments}
        factory = _TENSOR_OPTIONS <= names  # torchgen's TensorOptions: after out=, then requires_grad
        params, options = [], []
        for a, conv in zip(ov.schema.arguments, ov._convs):
            if a.name == "self" and method:
                continue
            t = a.type
            tn = _LIST_NAMES.get(t.base, t.base) if t.is_list else _TYPE_NAMES.get(t.base, t.base)
            default = _default_text(a) if a.has_default else None
            if factory and a.name == "pin_memory":
                default = "False"
            p = _Param("input" if a.name == "self" and tn == "Tensor" else a.name, tn, a.kwarg_only,
                       default, conv)
            p.allow_numbers = ov.numbers_as_tensors
            p.allow_none = p.allow_none or t.optional  # FunctionParameter: a `?` type takes None
            (options if factory and a.name in _TENSOR_OPTIONS else params).append(p)
        if factory:  # zeros.out(size, *, out): the functional's twin has no TensorOptions
            sig = [e for e in sig if e[0] not in _TENSOR_OPTIONS]
        twin = next((o for o in outs if [(a.name, str(a.type)) for a in o.schema.arguments
                                         if a.name not in o.out_names] == sig), None)
        if twin is not None and not method:
            tn = "Tensor" if len(twin.out_names) == 1 else "tuple of Tensors"
            params.append(_Param("out", tn, True, "None", _tensor if tn == "Tensor" else _tensor_list))
        params += options
        if factory:
            params.append(_Param("requires_grad", "bool", True, "False", _bool))
        sigs.append(Signature(short, params))
    return sigs


def _py_typename(v):
    """Py_TYPE(v)->tp_name: a C type's name carries its module (``torch.dtype``)."""
    from .. import _dtype
    from .._device import MEMORY_FORMATS, _Enum, device
    from ..random import Generator
    if isinstance(v, _dtype.dtype):
        return "torch.dtype"
    if isinstance(v, device):
        return "torch.device"
    if isinstance(v, _Enum):
        return "torch.memory_format" if v.name in MEMORY_FORMATS else "torch.layout"
    if isinstance(v, Generator):
        return "torch._C.Generator"
    return type(v).__name__


def _simple_match(type_name, obj):
    """invalid_arguments.cpp's _buildType(...).is_matching: compares Python type names."""
    got = _py_typename(obj)
    if type_name == "float":
        return got in ("float", "int", "long")
    if type_name == "int":
        return got in ("int", "long")
    return got == type_name


def _parse_option(option_str):
    """invalid_arguments.cpp's _parseOption: (argument (type, name) list, is_variadic)."""
    if option_str == "no arguments":
        return [], False
    arguments = []
    for arg in option_str[1:-1].split(", "):
        nullable = arg.startswith("[")
        start = 1 if nullable else 0
        if nullable:
            arg = arg[:-len(" or None]")]
        end = arg.rfind(" ")
        name = arg[end + 1:]
        if "..." in arg:
            end -= 4
        type_name = arg[start:end] if end >= 0 else arg[start:-1]
        arguments.append((type_name, name, nullable))
    return arguments, "..." in option_str


def _argcount_match(arguments, variadic, args, kwargs):
    got = len(args) + len(kwargs)
    return got == len(arguments) or (variadic and got > len(arguments))


def _seq_desc(v):
    inner = ", ".join(_py_typename(e) for e in v)
    if isinstance(v, tuple):
        return f"tuple of ({inner}{',' if len(v) == 1 else ''})"
    return f"list of [{inner}]"


def _desc(v):
    return _seq_desc(v) if type(v) in (tuple, list) else _py_typename(v)


def _formatted_arg_desc(arguments, variadic, args, kwargs):
    """_formattedArgDesc without a terminal: mismatching arguments between ``!`` marks."""
    out = []
    values = list(args)
    for i in range(len(args) + len(kwargs)):
        is_kwarg = i >= len(args)
        arg = kwargs.get(arguments[i][1]) if is_kwarg else values[i]
        if i < len(arguments):
            t, _, nullable = arguments[i]
        elif variadic:
            t, _, nullable = arguments[-1]
        else:
            t = None
        ok = t is not None and ((nullable and arg is None) or _simple_match(t, arg))
        s = (arguments[i][1] + "=" if is_kwarg else "") + _desc(arg)
        out.append((s if ok else f"!{s}!") + ", ")
    return _close(out, args)


def _close(parts, args):
    """invalid_arguments.cpp drops the last ", " only when there are positional arguments."""
    text = "".join(parts)
    return "(" + (text[:-2] if args else text) + ")"


def _arg_desc(args, kwargs):
    return _close([_py_typename(a) + ", " for a in args]  # (no list elements here)
                  + [f"{k}={_py_typename(v)}, " for k, v in kwargs.items()], args)


def _unmatched_kwargs(arguments, kwargs):
    start = max(len(arguments) - len(kwargs), 0)
    names = [a[1] for a in arguments[start:]]
    return [k for k in kwargs if k not in names]


def format_invalid_args(name, options, args, kwargs):
    """invalid_arguments.cpp's format_invalid_args."""
    msg = f"{name}() received an invalid combination of arguments - "
    if len(options) == 1:
        arguments, variadic = _parse_option(options[0])
        unmatched = _unmatched_kwargs(arguments, kwargs) if kwargs else []
        if unmatched:
            return msg + "got unrecognized keyword arguments: " + ", ".join(unmatched)
        got = _formatted_arg_desc(arguments, variadic, args, kwargs) \
            if _argcount_match(arguments, variadic, args, kwargs) else _arg_desc(args, kwargs)
        return msg + f"got {got}, but expected {options[0]}"
    msg += f"got {_arg_desc(args, kwargs)}, but expected one of:\n"
    for option in options:
        arguments, variadic = _parse_option(option)
        msg += f" * {option}\n"
        if _argcount_match(arguments, variadic, args, kwargs):
            unmatched = _unmatched_kwargs(arguments, kwargs) if kwargs else []
            if unmatched:
                msg += "      didn't match because some of the keywords were incorrect: " \
                       + ", ".join(unmatched) + "\n"
            else:
                msg += "      didn't match because some of the arguments have invalid types: " \
                       + _formatted_arg_desc(arguments, variadic, args, kwargs) + "\n"
    return msg


def invalid_arguments(packet_name, overloads, args, kwargs, method=False, hidden=False):
    """PythonArgParser::print_error: the message of the TypeError for a call that bound to none
    of ``overloads``. With ``method`` the tensor ``args[0]`` is the method's ``self``;
    ``hidden``: the parser also holds hidden (deprecated) signatures."""
    if method:
        args = args[1:]
    sigs = signatures(packet_name, overloads, method)
    if method and len(sigs) == 1 and not sigs[0].params and not hidden:
        # a method without arguments is METH_NOARGS: CPython's own message
        name = packet_name.split("::")[1]
        return (f"TensorBase.{name}() takes no keyword arguments" if kwargs else
                f"TensorBase.{name}() takes no arguments ({len(args)} given)")
    if not sigs:
        return f"{packet_name.split('::')[1]}() received an invalid combination of arguments"
    n = len(args) + len(kwargs)
    plausible = [s for s in sigs if s.min_args <= n <= s.max_args]
    for s in sigs:  # raw_parse: a signature that parses, then fails to unpack a tensor list
        try:
            error = s.raise_parse_error(args, kwargs)
        except TypeError:
            continue
        if error:
            return error
    try:
        if len(sigs) == 1 and not hidden:  # raw_parse: a lone signature raises itself
            sigs[0].raise_parse_error(args, kwargs)
        elif len(plausible) == 1:
            plausible[0].raise_parse_error(args, kwargs)
    except TypeError as e:
        return str(e)
    return format_invalid_args(sigs[0].name, [str(s) for s in sigs], args, kwargs)
