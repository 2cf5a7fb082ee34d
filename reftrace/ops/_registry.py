"""The op table: every op is one registration carrying its verbatim ATen schema.

    @op("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        variants=("function", "method"))
    def add(self, other, alpha): ...

The kernel receives every schema argument, positionally, defaults filled in, in schema order.
``OpOverload`` binds a Python call to its schema; ``OpPacket`` groups the overloads of one name
(``aten::add``) and picks one the way torch's Python argument parser does: overloads are tried in
registration order, and a Python number matches a ``Tensor`` parameter only for the ops torch
lists in ``should_allow_numbers_as_tensors`` (there it becomes a 0-dim wrapped-number tensor).
"""
from .. import return_types

from .. import _dtype as D
from .._device import LAYOUTS, MEMORY_FORMATS, _Enum, device, as_device
from .._dispatch import STATE, dispatch
from .._schema import parse_schema

OVERLOADS = {}  # 'aten::add.Tensor' -> OpOverload
PACKETS = {}    # 'aten::add' -> OpPacket

# torch/csrc/utils/python_arg_parser.cpp: should_allow_numbers_as_tensors
NUMBERS_AS_TENSORS = frozenset({
    "add", "add_", "div", "div_", "divide", "divide_", "mul", "mul_", "multiply", "multiply_",
    "sub", "sub_", "subtract", "subtract_", "true_divide", "true_divide_", "to", "_to_copy",
    "copy_", "copy", "floor_divide", "floor_divide_", "_conj"})


_UNKNOWN = object()


class NoMatch(Exception):
    """A call does not fit an overload's schema (cheap: no message formatting on the hot path)."""


def _is_number(v):
    return type(v) in (int, float, bool, complex) or isinstance(v, (int, float, complex))


# -- converters: Python value -> what the kernel receives (raise NoMatch when it does not fit) ---

def _boxed(t):
    """A 0-dim tensor given for a number parameter: the kernel gets its value; while tracing the
    tensor itself is kept, so the tracer can record the conversion (and unbox it afterwards)."""
    return t if STATE.tracer is not None else t._to_number()


def _is_index(v):
    """An int, or a 0-dim integer tensor (a traced size): either stands for a one-element
    int list (x.view(n), torch.ones(n))."""
    return type(v) is int or (isinstance(v, Tensor) and v._array.ndim == 0 and v.dtype.category == 1)


def _tensor(v, numbers_ok):
    if type(v) is Tensor or isinstance(v, Tensor):
        return v
    if numbers_ok and _is_number(v):
        return scalar_to_tensor(v)
    raise NoMatch


def _scalar(v, numbers_ok):
    if _is_number(v):
        return v
    if isinstance(v, Tensor) and v._array.ndim == 0:
        return _boxed(v)  # while tracing the tracer records aten::ScalarImplicit
    raise NoMatch


def _int(v, numbers_ok):
    if type(v) is int:
        return v
    if isinstance(v, Tensor):
        if v._array.ndim == 0 and v.dtype.category <= 1:
            return _boxed(v)  # traced sizes: while tracing the tracer records aten::Int
        raise NoMatch
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise NoMatch
    return v.__index__()


def _float(v, numbers_ok):
    if type(v) in (float, int) or (isinstance(v, (int, float)) and not isinstance(v, bool)):
        return float(v) if not isinstance(v, bool) else v
    if isinstance(v, Tensor) and v._array.ndim == 0:
        return _boxed(v)
    raise NoMatch


def _bool(v, numbers_ok):
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return bool(v)
    raise NoMatch


def _str(v, numbers_ok):
    if isinstance(v, str):
        return v
    raise NoMatch


_PY_TYPE_DTYPES = {float: D.float64, int: D.int64, bool: D.bool, complex: D.complex128}


def _scalar_type(v, numbers_ok):
    if isinstance(v, D.dtype):
        return v
    if isinstance(v, type) and v in _PY_TYPE_DTYPES:  # lists are unhashable: no match
        return _PY_TYPE_DTYPES[v]
    raise NoMatch


def _device(v, numbers_ok):
    if isinstance(v, (device, str)) or type(v) is int:
        try:
            return as_device(v)
        except RuntimeError:
            raise
    raise NoMatch


def _enum(table):
    def conv(v, numbers_ok):
        if isinstance(v, _Enum):
            return v
        raise NoMatch
    return conv


def _int_list_element(e):
    """An int list element; while tracing torch also takes a 0-dim FLOAT tensor there (what
    F.interpolate's recompute_scale_factor passes: floor(size * scale)), recorded as aten::Int."""
    if STATE.tracer is not None and isinstance(e, Tensor) and e._array.ndim == 0 \
            and e.dtype.is_floating_point:
        return e
    return _int(e, False)


def _int_list(size, name=None):
    def conv(v, numbers_ok):
        if isinstance(v, (list, tuple)):
            for e in v:
                if type(e) is not int:
                    return [_int_list_element(e) for e in v]
            return list(v)  # plain ints (the usual case): what _int_list_element gives for each
        if size is not None and (type(v) is int or (isinstance(v, Tensor) and v._array.ndim == 0)):
            # int[N] takes one int for all N (torch's arg parser, python_arg_parser.cpp): it
            # expands that int without stashing it, so a traced size given alone is baked as a
            # constant, silently (`F.max_pool1d(x, x.size(2))`); inside a list it is traced
            n = _int(v, False)
            if isinstance(n, Tensor):
                tracer = STATE.tracer  # noted for traced.specializations() (spec SPZ)
                n = n._to_number() if tracer is None else tracer.note_baked_int(
                    n, "kernel size" if name == "kernel_size" else "int argument",
                    f"the {name} argument (int[{size}])")
            return [n] * size
        raise NoMatch
    return conv


def _float_list(v, numbers_ok):
    if isinstance(v, (list, tuple)):
        return [_float(e, False) for e in v]
    raise NoMatch


def _tensor_list(v, numbers_ok):
    if isinstance(v, (list, tuple)) and all(isinstance(e, Tensor) for e in v):
        return list(v)
    raise NoMatch


def _optional_tensor_list(v, numbers_ok):
    if isinstance(v, (list, tuple)) and all(e is None or isinstance(e, Tensor) for e in v):
        return list(v)
    raise NoMatch


def _scalar_list(v, numbers_ok):
    if isinstance(v, (list, tuple)):
        return [_scalar(e, False) for e in v]
    raise NoMatch


def _bool_list(v, numbers_ok):
    if isinstance(v, (list, tuple)):
        return [_bool(e, False) for e in v]
    raise NoMatch


def _any(v, numbers_ok):
    return v


_CONVERTERS = {
    "Tensor": _tensor, "Scalar": _scalar, "int": _int, "SymInt": _int, "float": _float,
    "bool": _bool, "str": _str, "ScalarType": _scalar_type, "Device": _device,
    "Layout": _enum(LAYOUTS), "MemoryFormat": _enum(MEMORY_FORMATS), "Generator": _any,
}


# converters that reject any int (a NoMatch from bind): what _int_varargs may skip
_TAKE_NO_INT = frozenset({_scalar_type, _bool, _str})


def _converter(t, name=None):
    if t.is_list:
        if t.base in ("int", "SymInt"):
            return _int_list(t.list_size, name)
        if t.base == "float":
            return _float_list
        if t.base == "bool":
            return _bool_list
        if t.base == "Scalar":
            return _scalar_list
        if t.base == "Tensor":
            return _optional_tensor_list if t.elem_optional else _tensor_list
        raise NotImplementedError(f"schema list type {t}")
    return _CONVERTERS[t.base]


def _default_value(arg):
    v = arg.default
    if isinstance(v, str) and arg.type.base == "MemoryFormat":
        return MEMORY_FORMATS[v]
    if isinstance(v, str) and arg.type.base == "Layout":
        return LAYOUTS[v]
    if arg.type.base == "ScalarType" and isinstance(v, str):
        return D.BY_NAME[v]
    if arg.type.base == "ScalarType" and type(v) is int:  # randint's dtype=4: the code of int64
        return D.BY_SCALAR_TYPE[v]
    if isinstance(v, list):
        return list(v)
    return v


# torchgen's SKIP_PYTHON_BINDINGS_SIGNATURES (gen_python_functions.py): Scalar overloads that
# duplicate a Tensor one. A Python number reaches the .Tensor overload as a wrapped 0-dim tensor;
# only C++ composites (``t * 0.5``) call these. Their .Scalar_out twins have no Python binding
# either (torchgen binds an out= overload only beside its functional one).
SKIP_PYTHON_BINDINGS = frozenset(
    f"aten::{n}.{o}" for n in ("add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_")
    for o in ("Scalar", "Scalar_out"))


class OpOverload:
    """One schema (``aten::add.Tensor``) with its kernel and precomputed binder."""

    def __init__(self, schema, kernel, nondeterministic, variants, differentiable=True):
        self.schema = schema
        self.name = schema.name                       # 'aten::add' (what graphs print)
        self.overload = schema.overload
        self.qualified = schema.name + ("." + schema.overload if schema.overload else "")
        self.kernel = kernel
        self.nondeterministic = nondeterministic
        self.variants = variants
        self.differentiable = differentiable
        # Python's argument parser never binds it (C++ and TorchScript still reach it)
        self.python_hidden = self.qualified in SKIP_PYTHON_BINDINGS
        # torch 2.13's derivatives.yaml entry for this schema (see ``derivatives`` below); None
        # until one is declared: the autograd engine reads it, nothing else does
        self.derivatives = None
        self.output_differentiability = None
        self.composite = None  # the decomposition autograd records instead (see ``composite``)
        self.is_inplace = schema.is_inplace or schema.is_out
        self.is_view = schema.is_view
        # torch's math-bit fallback (reftrace/_math_bits.py): views and metadata ops see a
        # conjugate view as it is, other kernels read it resolved; written arguments by position
        self.bits_aware = "view" if schema.is_view else False  # ("own": handles the bits itself)
        self.writes = [a.is_write for a in schema.arguments]
        base = schema.name.split("::")[1]
        self.numbers_as_tensors = base in NUMBERS_AS_TENSORS
        args = schema.arguments
        self.params = [(a.name, _converter(a.type, a.name), a.type.optional, a.has_default,
                        _default_value(a) if a.has_default else None) for a in args]
        self.names = {a.name: i for i, a in enumerate(args)}
        if args and args[0].name == "self":
            self.names["input"] = 0  # torch's Python functions call `self` `input`
        self.n_positional = sum(1 for a in args if not a.kwarg_only)
        # the one int-list parameter that may be given as varargs: x.view(2, 3), torch.zeros(2, 3)
        positional = [i for i, a in enumerate(args) if not a.kwarg_only and a.name != "self"]
        # (not for a fixed-size list: adaptive_avg_pool2d(x, 2) broadcasts 2 to [2, 2], as torch)
        self.varargs_index = positional[0] if len(positional) == 1 and args[positional[0]].type.is_int_list \
            and args[positional[0]].type.list_size is None else None
        # the parameters that hold tensors (Tensor, Tensor?, Tensor[]): the requires_grad rule
        self.tensor_slots = tuple(i for i, a in enumerate(args) if a.type.base == "Tensor")
        # the same when none is a list (Tensor[]), else None: the funnel's rule then reads each
        # slot's tensor without asking whether it is a list (most ops: one or two tensors)
        self.single_tensor_slots = None if any(args[i].type.is_list for i in self.tensor_slots) \
            else self.tensor_slots
        # flat per-parameter tables for bind's hot path
        self._n_params = len(args)
        self._convs = [p[1] for p in self.params]
        self._is_tensor = [a.type.is_tensor for a in args]
        self._optional = [a.type.optional for a in args]
        self._defaults = [p[4] for p in self.params]
        self._list_defaults = [i for i, p in enumerate(self.params) if type(p[4]) is list]
        required = [i for i, a in enumerate(args) if not a.has_default]
        self._n_required = required[-1] + 1 if required else 0
        # an .out overload's kwarg-only written tensors: Python passes them as out= (one tensor,
        # or a tuple when there are several: cummax(x, 1, out=(values, indices)))
        self.out_names = tuple(a.name for a in args if a.is_write and a.kwarg_only)
        named = [r.name for r in schema.returns]
        self.return_type = (return_types.make(base, named) if len(named) > 1 and all(named) else None)

    def __repr__(self):
        return f"<OpOverload {self.qualified}>"

    def bind(self, args, kwargs):
        """Python args -> list of every schema argument in order, converted. Raises NoMatch.

        The hot path (positional arguments only, tensors where tensors go) touches each argument
        once; keyword arguments, defaults and conversions take the general path."""
        n = len(args)
        vi = self.varargs_index
        if vi is not None and (n > vi + 1 or (n == vi + 1 and _is_index(args[vi]))):
            for a in args[vi:]:  # (a loop: cheaper than all() over a generator)
                if not (type(a) is int or isinstance(a, Tensor)):
                    break
            else:
                args = (*args[:vi], list(args[vi:]))
                n = len(args)
        if n > self.n_positional:
            raise NoMatch
        numbers_ok = self.numbers_as_tensors
        out = list(args)
        convs, is_tensor, optional = self._convs, self._is_tensor, self._optional
        for i in range(n):
            v = out[i]
            if v is None:
                if not optional[i]:
                    raise NoMatch
            elif not (is_tensor[i] and type(v) is Tensor):
                out[i] = convs[i](v, numbers_ok)
        if n == self._n_params:
            if kwargs:
                raise NoMatch
            return out
        if not kwargs:
            if n < self._n_required:
                raise NoMatch  # required, even when its type is optional (`int[1]? dim`)
            out.extend(self._defaults[n:])
            if self._list_defaults:
                for i in self._list_defaults:
                    if i >= n:
                        out[i] = list(out[i])
            return out
        return self._bind_rest(out, n, kwargs, numbers_ok)

    def _bind_rest(self, out, n, kwargs, numbers_ok):
        """Parameters after the positional ones: keyword arguments, else defaults."""
        names = self.names
        if self.out_names and "out" in kwargs and self.out_names != ("out",):
            kwargs = self._split_out(kwargs)
        for k in kwargs:
            i = names.get(k)
            if i is None or i < n:
                raise NoMatch
        for i in range(n, self._n_params):
            name, conv, optional, has_default, default = self.params[i]
            if name in kwargs or (i == 0 and "input" in kwargs):
                v = kwargs[name] if name in kwargs else kwargs["input"]
            elif has_default:
                out.append(list(default) if type(default) is list else default)
                continue
            else:
                # required, even when its type is optional (`int[1]? dim` of sum.dim_IntList):
                # torch's parser only lets defaulted parameters be left out
                raise NoMatch
            if v is None:
                if not optional:
                    raise NoMatch
                out.append(None)
                continue
            out.append(conv(v, numbers_ok))
        return out

    def _split_out(self, kwargs):
        """out=(a, b) -> the schema's out parameters (values=a, indices=b), as torch's parser."""
        v = kwargs["out"]
        if not isinstance(v, (tuple, list)) or len(v) != len(self.out_names):
            raise NoMatch
        rest = {k: e for k, e in kwargs.items() if k != "out"}
        rest.update(zip(self.out_names, v))
        return rest

    def __call__(self, *args, **kwargs):
        try:
            bound = self.bind(args, kwargs)
        except NoMatch:
            # reftrace calls one overload where torch calls the packet (torch._C._nn...):
            # torch's parser words it for all the packet's signatures
            packet = PACKETS[self.name]
            raise TypeError(_invalid_arguments(self.name, packet.overloads, args, kwargs,
                                               hidden=bool(packet.deprecated))) from None
        return self.finish(dispatch(self, bound))

    def finish(self, result):
        rt = self.return_type
        return rt(*result) if rt is not None else result


class OpPacket:
    """All overloads of one op name, chosen as torch's Python argument parser chooses."""

    def __init__(self, name):
        self.name = name
        self.overloads = []
        self._fast = {}  # number of tensor arguments -> tensor_overload(n): (overload, defaults) or None
        self._ints = {}  # number of arguments -> _int_varargs(n)
        self.deprecated = None  # deprecated.yaml's signatures of this name (ops/_deprecated.py)

    def _tensor_overload(self, n):
        """The overload ``n`` positional tensors bind to without conversion: the first overload,
        when its first n parameters are plain Tensors and the rest have defaults (then the
        general search would pick it too: it is tried first and accepts them)."""
        if not self.overloads or n == 0:
            return None
        ov = self.overloads[0]
        args = ov.schema.arguments
        if n > ov.n_positional or ov.varargs_index is not None and ov.varargs_index < n:
            return None
        if not all(a.type.is_tensor and not a.type.optional for a in args[:n]):
            return None
        if not all(a.has_default for a in args[n:]):
            return None
        return ov

    def tensor_overload(self, n):
        """(overload, the defaults bind appends) for ``n`` positional plain tensors, see
        _tensor_overload; the defaults are None when some is a list (copied on each call)."""
        ov = self._tensor_overload(n)
        if ov is None:
            return None
        return ov, (None if ov._list_defaults else tuple(ov._defaults[n:]))

    def _int_varargs(self, n):
        """(overload, its defaults) that ``n`` positional arguments, a plain tensor then plain
        ints, bind to when the ints are the varargs of an int[] parameter right after ``self``
        (``x.view(4, -1)`` is ``view(x, [4, -1])``), as the search below would find it: the
        overloads before it are those it skips for their positional count or whose parameter
        after ``self`` takes no int (a ScalarType as view.dtype's, a bool, a str, or a Tensor
        where numbers are not tensors); None when that cannot be told from the types alone
        (then the search runs)."""
        for ov in self.overloads:
            if ov.python_hidden or (n > ov.n_positional and ov.varargs_index is None):
                continue
            if ov.varargs_index == 1 and ov._is_tensor[0] and ov._n_required <= 2:
                return ov, tuple(ov._defaults[2:])
            conv = ov._convs[1] if ov._n_params > 1 else None
            if ov.varargs_index is None and n >= ov._n_required and (
                    conv in _TAKE_NO_INT or (conv is _tensor and not ov.numbers_as_tensors)):
                continue  # (bind converts in order: the first int already fails, nothing raises)
            return None
        return None

    def int_varargs(self, n):
        """_int_varargs(n), remembered."""
        ints = self._ints.get(n, _UNKNOWN)
        if ints is _UNKNOWN:
            ints = self._ints[n] = self._int_varargs(n)
        return ints

    def __repr__(self):
        return f"<OpPacket {self.name}>"

    def __getattr__(self, overload):
        # torch.ops.aten.add.Tensor style access
        for ov in self.__dict__.get("overloads", ()):
            if ov.overload == overload or (overload == "default" and ov.overload == ""):
                return ov
        raise AttributeError(overload)

    def __call__(self, *args, **kwargs):
        if not kwargs:
            # fast path: tensors only, into an overload that the general search below would
            # pick anyway (see _tensor_overload); nothing to convert, defaults appended
            fast = self._fast.get(len(args), _UNKNOWN)
            if fast is _UNKNOWN:
                fast = self._fast[len(args)] = self.tensor_overload(len(args))
            if fast is not None:
                for a in args:  # (_all_tensors inlined: a call costs as much as the loop)
                    if type(a) is not Tensor:
                        break
                else:
                    ov, tail = fast
                    bound = [*args, *tail] if tail is not None else \
                        [list(a) if type(a) is list else a for a in (*args, *ov._defaults[len(args):])]
                    result = dispatch(ov, bound)
                    return result if ov.return_type is None else ov.return_type(*result)
            if len(args) > 1 and type(args[1]) is int and type(args[0]) is Tensor:
                # x.view(4, -1), x.permute(1, 0): sizes given as varargs (see _int_varargs)
                ints = self.int_varargs(len(args))
                if ints is not None:
                    for a in args:
                        if type(a) is not int and a is not args[0]:
                            break
                    else:
                        ov, tail = ints
                        bound = [args[0], list(args[1:]), *[list(d) if type(d) is list else d for d in tail]]
                        result = dispatch(ov, bound)
                        return result if ov.return_type is None else ov.return_type(*result)
        elif "out" in kwargs and kwargs["out"] is None:
            # torch's parser: out=None is the functional call
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        n = len(args)
        for ov in self.overloads:
            if ov.python_hidden:
                continue
            if n > ov.n_positional and ov.varargs_index is None:
                continue  # bind would raise NoMatch (too many positional arguments), slowly
            try:
                bound = ov.bind(args, kwargs)
            except NoMatch:
                continue
            result = dispatch(ov, bound)
            return result if ov.return_type is None else ov.return_type(*result)
        error = TypeError(_invalid_arguments(self.name, self.overloads, args, kwargs,
                                             hidden=bool(self.deprecated)))
        error._bind_failure = (self, args, kwargs)  # a method restates it (method_error)
        if self.deprecated:   # tried last, as torch's parser lists them last
            from ._deprecated import call
            return call(self, args, kwargs, error)
        raise error


def _invalid_arguments(name, overloads, args, kwargs, method=False, hidden=False):
    """torch's parser's TypeError message for a call no overload binds (ops/_arg_errors.py:
    imported here, on the error path only)."""
    from ._arg_errors import invalid_arguments
    return invalid_arguments(name, overloads, args, kwargs, method, hidden)


def method_error(error, packet):
    """``error`` as the method ``x.name(...)`` raises it: when it is ``packet``'s own binding
    failure (not one from deeper inside), torch's message for the method's signatures."""
    failure = getattr(error, "_bind_failure", None)
    return error if failure is None else restate_error(error, packet, *failure[1:], method=True)


def restate_error(error, packet, args, kwargs, method=False):
    """``error`` for a Python wrapper that called ``packet`` with arguments it added: when it
    is the packet's binding failure, the message for the caller's own ``args``/``kwargs``."""
    failure = getattr(error, "_bind_failure", None)
    if failure is None or failure[0] is not packet:
        return error
    return TypeError(_invalid_arguments(packet.name, packet.overloads, args, kwargs, method,
                                        hidden=bool(packet.deprecated)))


# gen_variable_type.py's DONT_REQUIRE_DERIVATIVE: ops whose results never require grad (they
# depend on the input's shape and device only, or are integral/boolean)
DONT_REQUIRE_DERIVATIVE = frozenset({
    "empty_like", "ones_like", "full_like", "zeros_like", "rand_like", "randn_like", "new_empty",
    "new_empty_strided", "new_full", "new_zeros", "new_ones", "__and__", "__iand__",
    "__ilshift__", "__ior__", "__irshift__", "__ixor__", "__lshift__", "__or__", "__rshift__",
    "__xor__", "argmax", "argmin", "argsort", "searchsorted", "bucketize", "isnan", "isposinf",
    "isneginf", "isinf", "signbit", "isin", "allclose", "logical_and", "logical_xor",
    "logical_not", "logical_or"})


def op(schema_text, *, variants=("function",), nondeterministic=False, differentiable=True):
    """Register a kernel under its ATen schema. ``variants`` as in native_functions.yaml;
    ``differentiable=False`` for ops whose results never require grad (detach, argmax ...);
    the ops of DONT_REQUIRE_DERIVATIVE are never differentiable."""
    schema = parse_schema(schema_text)
    if schema.name.split("::")[-1] in DONT_REQUIRE_DERIVATIVE:
        differentiable = False

    def register(kernel):
        ov = OpOverload(schema, kernel, nondeterministic, tuple(variants), differentiable)
        if ov.qualified in OVERLOADS:
            raise RuntimeError(f"op {ov.qualified} registered twice")
        OVERLOADS[ov.qualified] = ov
        PACKETS.setdefault(schema.name, OpPacket(schema.name)).overloads.append(ov)
        return ov
    return register


def derivatives(overload, formulas, output_differentiability=None):
    """Declare ``overload``'s entry of torch 2.13's ``derivatives.yaml`` beside its kernel.

        derivatives(mul, {"self": "mul_tensor_backward(grad, other, self.dtype)",
                          "other": "mul_tensor_backward(grad, self, other.dtype)"})

    ``formulas`` maps the yaml's input keys (an argument name, or several joined by ", " when one
    formula returns a tuple of gradients) to the yaml formula written as a Python expression over
    reftrace ops and the FunctionsManual helpers of ``reftrace/autograd/_functions_manual.py``:
    names are the schema's argument names, ``grad`` / ``grads``, ``grad_input_mask``, ``result``
    (``result0``... or the schema's return names for several outputs). ``"non_differentiable"``
    marks an input as the yaml does. The names a formula reads are the values autograd saves for
    it, as torch's generated code saves them. reftrace/ops/README.md ("Derivatives") is the full
    convention. Keys are checked against the schema here, at import, so a typo fails loudly
    instead of giving a silently missing gradient."""
    names = {a.name for a in overload.schema.arguments}
    for key in formulas:
        for name in key.split(", "):
            if name not in names:
                raise RuntimeError(f"derivatives for {overload.qualified}: {name!r} is not an "
                                   f"argument of its schema {overload.schema.text}")
    if overload.derivatives is not None:  # two entries for one schema: one would silently win
        raise RuntimeError(f"derivatives for {overload.qualified} declared twice")
    overload.derivatives = dict(formulas)
    if output_differentiability is not None:
        overload.output_differentiability = tuple(output_differentiability)
    return overload


def composite(overload):
    """Decorate the decomposition of an op torch implements as CompositeImplicitAutograd (no
    derivatives.yaml entry: its autograd graph is made by the ops it calls).

        @composite(linear)
        def _(input, weight, bias):
            return addmm(bias, input, weight.t()) if input.dim() == 2 and bias is not None ...

    The decomposition receives the kernel's arguments and calls reftrace ops. Autograd runs it
    instead of the kernel when the call records a gradient, so ``grad_fn`` chains are torch's
    (``linear`` -> ``AddmmBackward0``); eager calls without grad and traced graphs are unchanged."""
    def register(fn):
        overload.composite = fn
        return fn
    return register


def get_packet(name):
    return PACKETS["aten::" + name if "::" not in name else name]


# Imported last: the tensor module itself uses the registry.
from .._tensor import Tensor, scalar_to_tensor  # noqa: E402
