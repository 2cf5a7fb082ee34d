"""TracingState: records every op call into a Graph (torch/csrc/jit/frontend/tracer.cpp).

The dispatch funnel hands each op call to ``TracingState.record`` while a trace is active:

1. numbers given as 0-dim tensors (traced sizes) get ``aten::Int`` / ``aten::ScalarImplicit``
   nodes right after their producer (torch's ArgumentStash);
2. every schema argument becomes an input Value (tracer.cpp's addInputs overloads): tensors
   by identity, unknown tensors baked as constants, numbers as constants, int lists as
   ``prim::ListConstruct``, None as ``prim::Constant()``;
3. the kernel runs with tracing suspended (nested op calls are not recorded, as in torch);
4. outputs get types read off the real result tensors and are mapped back to those tensors.
   An in-place op maps ``self`` to its new output, so later uses see the new Value.

Tensors are mapped to Values through the tensor's ``_tv`` slot (a (state, Value) pair), so the
trace never keeps a tensor alive.
"""
import warnings
import weakref

from .. import _dtype as D
from .._device import _Enum
from .._dispatch import STATE, pause_tracer, run_kernel
from .._frames import _is_internal, user_frame, warn_at_caller, warning_frame
from .._tensor import Tensor, Size, _wrap_dim, scalar_to_tensor
from . import _types as T
from ._specializations import FIXES, Specialization, size_origin
from .ir import Graph

INT64_MAX = 9223372036854775807


class TracerWarning(Warning):
    """torch.jit.TracerWarning: the trace may not generalise to other inputs."""

    @staticmethod
    def ignore_lib_warnings():
        # torch hides TracerWarnings raised from its own library code (module="torch.(?!jit)");
        # reftrace does the same for its own modules.
        warnings.filterwarnings("ignore", category=TracerWarning, module="reftrace.(?!jit)")


TracerWarning.ignore_lib_warnings()

WARN_PYTHON_DATAFLOW = (
    " might cause the trace to be incorrect. We can't record the data flow of Python values, so "
    "this value will be treated as a constant in the future. This means that the trace might not "
    "generalize to other inputs!")
WARN_CONSTRUCTOR = (
    " results are registered as constants in the trace. You can safely ignore this warning if "
    "you use this function to create tensors out of constant variables that would be the same "
    "every time you call this function. In any other case, this might cause the trace to be "
    "incorrect.")
_CONVERSION_TEXT = {"number": "a Python number", "int": "a Python integer",
                    "float": "a Python float", "bool": "a Python boolean", "list": "a Python list",
                    "numpy": "a NumPy array", "index": "a Python index"}

_NUMBER_NODE = {"int": "aten::Int", "SymInt": "aten::Int", "float": "aten::Float",
                "Scalar": "aten::ScalarImplicit"}
_NUMBER_TYPE = {"aten::Int": T.IntType, "aten::Float": T.FloatType, "aten::ScalarImplicit": T.NumberType}


class TracingState:
    def __init__(self, force_outplace=False, strict=True, frames_up=0):
        self.graph = Graph()
        self.force_outplace = force_outplace
        self.strict = strict
        self.warn = True
        self.module_values = {}  # id(traced module) -> its graph value (self, TracedAttr)
        # _create_interpreter_name_lookup_fn(frames_up): names come from the frame calling the
        # op (0, trace()) or from frames further out (1, _get_trace_graph)
        self.frames_up = frames_up
        self._bound = []  # weak references to every tensor given a Value (unbound by finish)
        self.specializations = []  # values baked in from data or shape (_specializations.py)
        self._len_result = None    # len(x)'s size tensor: its __index__ is part of the len() bake
        self.alias_error = None    # a node no operator matches (torch fails in alias analysis)

    # -- tensors <-> values ----------------------------------------------------------------
    def has_value(self, t):
        tv = t._tv
        return tv is not None and tv[0] is self

    def set_value(self, t, value):
        t._tv = (self, value)
        self._bound.append(weakref.ref(t))

    def finish(self):
        """The trace is over: drop every tensor's link to this state, so that the inputs and
        parameters that outlive the trace do not keep its graph (and, through the graph, the
        generated code and the tensor constants) alive (defect D20)."""
        for ref in self._bound:
            t = ref()
            if t is not None and t._tv is not None and t._tv[0] is self:
                t._tv = None
        self._bound = []

    def value_of(self, t, frame=None, loc=None):
        """getValueTrace: the Value of a tensor; names it lazily; bakes unknown tensors."""
        tv = t._tv
        if tv is not None and tv[0] is self:
            value = tv[1]
            if value.name is None:
                name = self._lookup_name(t, frame)
                if name:
                    self.graph.set_debug_name(value, name)
            return value
        if t.requires_grad:
            raise RuntimeError(
                "Cannot insert a Tensor that requires grad as a constant. Consider making it a "
                f"parameter or input, or detaching the gradient\nTensor:\n{_cpp_tensor_text(t)}")
        node = self.graph.append(self.graph.create("prim::Constant"))
        node.attrs = {"value": ("t", t)}  # (set_attr, inlined: a constant per number operand)
        node.source = loc if loc is not None else self._location()
        value = node.add_output(T.TensorType.of(t))
        self.set_value(t, value)
        return value

    def _lookup_name(self, t, frame):
        f = frame or user_frame()
        for _ in range(self.frames_up):
            f = f.f_back if f is not None else None
        if f is None:
            return ""
        for k, v in f.f_locals.items():
            if v is t:
                return k if k != "self" else ""
        return ""

    def _location(self):
        f = user_frame()
        return None if f is None else (f.f_code.co_filename, f.f_lineno)

    # -- constants -------------------------------------------------------------------------
    def constant(self, value, type_, loc, kind):
        node = self.graph.append(self.graph.create("prim::Constant"))
        if kind is not None:
            node.set_attr("value", kind, value)
        node.source = loc
        return node.add_output(type_)

    def none(self):
        return self.constant(None, T.NoneType, None, None)

    def int_constant(self, v, loc):
        return self.constant(int(v), T.IntType, loc, "i")

    def scalar_constant(self, v, loc):
        if isinstance(v, bool):
            return self.constant(bool(v), T.BoolType, loc, "i")
        if isinstance(v, int):
            return self.constant(v, T.IntType, loc, "i")
        if isinstance(v, float):
            return self.constant(v, T.FloatType, loc, "f")
        if isinstance(v, complex):
            return self.constant(v, T.ComplexType, loc, "c")
        return self.int_constant(int(v), loc)

    # -- recording ---------------------------------------------------------------------------
    def record(self, op, args):
        frame = user_frame()
        loc = None if frame is None else (frame.f_code.co_filename, frame.f_lineno)
        schema_args = op.schema.arguments
        # 1. ArgumentStash: numbers that arrived as tensors
        stash = None
        # torch's generated bindings build these while evaluating the C++ call's arguments,
        # which GCC does right to left: separate arguments are stashed last-first (elements
        # of one int list stay in order)
        plan = _PLANS.get(op)
        if plan is None:
            if len(_PLANS) > 4096:
                _PLANS.clear()
            plan = _PLANS[op] = _plan(schema_args)
        slots, arg_plan = plan
        for i in slots:
            if i >= len(args):
                continue
            a = args[i]
            if type(a) is list and a and schema_args[i].type.is_int_list:
                if any(isinstance(e, Tensor) for e in a):
                    stash = stash or {}
                    stash[i] = [self._stash_number(e, "int") if isinstance(e, Tensor) else None for e in a]
            elif isinstance(a, Tensor) and schema_args[i].type.base in _NUMBER_NODE \
                    and not schema_args[i].type.is_list:
                stash = stash or {}
                stash[i] = self._stash_number(a, schema_args[i].type.base)
        if stash:
            args = _unboxed(args, stash)

        name, node_op = op.name, op
        outplace = self.force_outplace and op.schema.is_inplace
        if outplace:
            special = _FORCE_OUTPLACE.get(op.qualified)
            if special is not None:
                return special(self, op, args, frame, loc)
            # aten::add_ -> aten::add: the node is the out-of-place op (replay must not mutate);
            # tracing still runs the in-place kernel, as the program asked
            name = name[:-1]
            node_op = _outplace_overload(op)
        if op.qualified in _SPECIAL:
            return _SPECIAL[op.qualified](self, op, args, frame, loc)

        # 2. inputs (constants are inserted before the node, as addInputs does)
        materialize = self._materialize
        if stash:
            inputs = [materialize(a, sa.type, frame, loc, stash.get(i))
                      for i, (a, sa) in enumerate(zip(args, schema_args))]
        else:  # (a Tensor argument goes straight to value_of, as _materialize would send it)
            value_of = self.value_of
            inputs = [value_of(a, frame, loc) if tensor and a is not None else
                      materialize(a, typ, frame, loc, None)
                      for a, (typ, tensor) in zip(args, arg_plan)]
        g = self.graph
        node = g.create(name, inputs, node_op)
        node.source = loc
        g.append(node)
        if outplace:
            self._warn_live_references(op.name.split("::")[1], args[0])
        # 3. run the kernel untraced (run_untraced, inlined: once per op)
        pause_tracer(None)
        try:
            result = run_kernel(op, args)
        finally:
            pause_tracer(self)
        # 4. outputs
        returns = op.schema.returns
        if type(result) is Tensor and len(returns) == 1:  # (_add_output's first case, inlined)
            self.set_value(result, node.add_output(T.TensorType.of(result)))
        else:
            self._add_outputs(node, returns, result)
        return result

    def run_untraced(self, op, args):
        pause_tracer(None)
        try:
            return run_kernel(op, args)
        finally:
            pause_tracer(self)

    def _stash_number(self, t, base):
        """aten::Int / aten::ScalarImplicit right after the node producing ``t``."""
        value = self.value_of(t)
        kind = _NUMBER_NODE[base]
        node = self.graph.create(kind, [value])
        # WithInsertPoint(producer->next()): right after the producer (first, for an input)
        self.graph.insert_after(node, value.node_)
        return node.add_output(_NUMBER_TYPE[kind])

    def _materialize(self, a, typ, frame, loc, stashed):
        if stashed is not None and not isinstance(stashed, list):
            return stashed
        if a is None:
            return self.none()
        base = typ.base
        if typ.is_list:
            g = self.graph
            if base in ("int", "SymInt"):
                elems = [s if s is not None else self.int_constant(e, loc)
                         for e, s in zip(a, stashed or [None] * len(a))]
                lt = T.INT_LIST
            elif base == "float":
                elems = [self.constant(float(e), T.FloatType, loc, "f") for e in a]
                lt = T.FLOAT_LIST
            elif base == "bool":
                elems = [self.constant(bool(e), T.BoolType, loc, "i") for e in a]
                lt = T.BOOL_LIST
            elif base == "Tensor":
                elems = [self.none() if e is None else self.value_of(e, frame, loc) for e in a]
                lt = T.OPTIONAL_TENSOR_LIST if typ.elem_optional else T.TENSOR_LIST
            elif base == "Scalar":  # (tracer.cpp's addInputs has no Scalar[] case)
                raise RuntimeError("Tracing a list of arbitrary type is currently not supported!")
            else:
                raise NotImplementedError(f"tracing a {typ} argument")
            node = g.append(g.create("prim::ListConstruct", elems))
            return node.add_output(lt)
        if base == "Tensor":
            return self.value_of(a, frame, loc)
        if base == "ScalarType":
            return self.int_constant(a.scalar_type, loc)
        if isinstance(a, _Enum):
            return self.int_constant(a.value, loc)
        if base == "Device":
            return self.constant(str(a), T.DeviceType, loc, "s")
        if base == "str":
            return self.constant(a, T.StringType, loc, "s")
        if base in ("int", "SymInt"):
            return self.int_constant(a, loc)
        if base == "bool":
            return self.constant(bool(a), T.BoolType, loc, "i")
        if base == "float":
            return self.constant(float(a), T.FloatType, loc, "f")
        if base == "Scalar":
            return self.scalar_constant(a, loc)
        if base == "Generator":
            raise RuntimeError("reftrace cannot trace an explicit Generator argument")
        raise NotImplementedError(f"tracing a {typ} argument")

    def _add_outputs(self, node, returns, result):
        if len(returns) == 1:
            self._add_output(node, returns[0].type, result)
        else:
            for r, value in zip(returns, result):
                self._add_output(node, r.type, value)

    def _add_output(self, node, typ, result):
        if isinstance(result, Tensor):
            self.set_value(result, node.add_output(T.TensorType.of(result)))
        elif typ.is_list and typ.base == "Tensor":
            lst = node.add_output(T.TENSOR_LIST)
            unpack = self.graph.append(self.graph.create("prim::ListUnpack", [lst]))
            for t in result:
                self.set_value(t, unpack.add_output(T.TensorType.of(t)))
        elif result is None and typ.base == "Tensor":  # an undefined tensor (None in Python):
            node.add_output(T.TENSOR)                   # torch's unrefined `Tensor` output
        elif isinstance(result, bool):
            node.add_output(T.BoolType)
        elif isinstance(result, int):
            node.add_output(T.IntType)
        elif isinstance(result, float):
            node.add_output(T.FloatType)
        else:
            raise NotImplementedError(f"tracing an op that returns {type(result).__name__}")

    # -- traced sizes (python_variable_methods.cpp + tracer.cpp getSizeOf/getNumelOf) ----------
    def traced_size(self, t, dim):
        # getSizeOf records the dim as the program wrote it (-1 stays -1, so the trace
        # generalises to other ranks); it is only checked here
        return self._size_node(t, dim, _wrap_dim(dim, t.dim()))

    def _size_node(self, t, dim, wrapped=None):
        return self._traced_count("aten::size", t, t.shape_tuple[dim if wrapped is None else wrapped], dim)

    def traced_sizes(self, t):
        return Size(self._size_node(t, d) for d in range(t.dim()))

    def traced_numel(self, t):
        return self._traced_count("aten::numel", t, int(t._array.size))

    def _traced_count(self, kind, t, count, dim=None):
        """aten::size(t, dim) / aten::numel(t) then prim::NumToTensor: a plain 0-dim Long tensor
        standing for ``count`` in the graph (tracer.cpp getSizeOf / getNumelOf)."""
        frame = user_frame()
        loc = None if frame is None else (frame.f_code.co_filename, frame.f_lineno)
        result = _long_scalar(count)
        inputs = [self.value_of(t, frame, loc)]
        if dim is not None:
            inputs.append(self.int_constant(dim, loc))
        node = self.graph.append(self.graph.create(kind, inputs))
        node.source = loc
        ntt = self.graph.append(self.graph.create("prim::NumToTensor", [node.add_output(T.IntType)]))
        self.set_value(result, ntt.add_output(T.TensorType(D.int64, (), None, None, t.device)))
        return result

    # -- calls of traced functions and methods (script_init.cpp runAndInsertCall) -----------------
    def call_traced(self, callee, args, name, module=None, qualified_name=None):
        """A traced function (or a traced module's method) called inside a trace is one
        prim::CallFunction (prim::CallMethod) node; the callee runs with tracing paused."""
        from .interpreter import run_graph
        g = self.graph
        frame = user_frame()
        inputs = [self._call_input(a, frame) for a in args]
        if module is not None:
            node = g.create("prim::CallMethod", [self.module_values[id(module)]] + inputs)
            node.set_attr("name", "s", name)
        else:
            fn = g.append(g.create("prim::Constant"))
            fn.set_attr("name", "s", name)
            node = g.create("prim::CallFunction",
                            [fn.add_output(T.FunctionType(callee, qualified_name))] + inputs)
        g.append(node)
        out = node.add_output(T.erase_shape(callee.ret.inputs_[0].type_))
        STATE.tracer = None
        try:
            result = run_graph(callee, ([module] if module is not None else []) + list(args))
        finally:
            STATE.tracer = self
        self._bind_call_result(result, out)
        return result

    def _call_input(self, a, frame):
        if isinstance(a, Tensor):
            return self.value_of(a, frame)
        if isinstance(a, (tuple, list)):
            values = [self._call_input(e, frame) for e in a]
            kind, typ = ("prim::TupleConstruct", T.TupleType(v.type_ for v in values)) \
                if isinstance(a, tuple) else ("prim::ListConstruct", T.TENSOR_LIST)
            return self.graph.append(self.graph.create(kind, values)).add_output(typ)
        return self.scalar_constant(a, None)

    def _bind_call_result(self, result, value):
        """TracingState::setValue for a call's result: tensors complete their type; tuples are
        unpacked."""
        if isinstance(result, Tensor):
            if not isinstance(value.type_, T.TensorType) or value.type_.scalar_type is None:
                value.setType(T.TensorType.of(result))
            self.set_value(result, value)
        elif isinstance(result, tuple):
            unpack = self.graph.append(self.graph.create("prim::TupleUnpack", [value]))
            for r in result:
                self._bind_call_result(r, unpack.add_output(T.TENSOR))

    # -- module scopes (python_tracer.cpp push_scope / pop_scope, called by Module._slow_forward) --
    def push_scope(self, name):
        self.graph.push_scope(name)

    def pop_scope(self):
        self.graph.pop_scope()

    # -- warnings and the specialisation report ----------------------------------------------
    def _warn(self, message, kind=None, value=None, origin=None, stacklevel=1):
        """A TracerWarning (torch's words), noted in the report under ``kind``."""
        if kind is not None:  # noted where the warning points (the caller of a @python_level method)
            self.note(kind, value, message, frame=warning_frame(stacklevel), origin=origin)
        if self.warn:
            warn_at_caller(message, TracerWarning, stacklevel)  # torch warns from the Python caller

    def note(self, kind, value, message, fix=None, frame=None, origin=None):
        """Record a value baked into the trace (traced.specializations(), _specializations.py),
        at the user's line."""
        f = frame or user_frame()
        file, line = (f.f_code.co_filename, f.f_lineno) if f is not None else ("", 0)
        self.specializations.append(Specialization(kind, file, line, value, message,
                                                   fix or FIXES[kind], origin))

    def warn_python_dataflow(self, t, kind):
        message = "Converting a tensor to " + _CONVERSION_TEXT[kind] + WARN_PYTHON_DATAFLOW
        value, origin = _baked_value(t, kind), self._size_origin(t)
        # a shape read as a number (int(x.size(0)), float(x.numel())) is a 'size' bake; a
        # condition on a shape (if x.size(0) > 2) stays a 'bool', with the size as its origin
        size = origin is not None and kind in ("number", "int", "float")
        self._warn(message, "size" if size else kind, value, origin)

    def _size_origin(self, t):
        tv = t._tv
        return size_origin(tv[1]) if tv is not None and tv[0] is self else None

    def warn_len(self, t=None, size=None):
        self._len_result = size
        self._warn("Using len to get tensor shape might cause the trace to be incorrect. "
                   "Recommended usage would be tensor.shape[0]. Passing a tensor of different "
                   "shape might lead to errors or silently give incorrect results.", "len",
                   None if t is None else t.shape_tuple[0],
                   None if size is None else self._size_origin(size), stacklevel=2)

    def note_index(self, t, frame):
        """A tensor taken as a Python index by the user's code (range(n), lst[n]): torch takes
        its value silently, so a traced size becomes a constant with no warning."""
        if t is self._len_result:  # the end of len(x): already noted as 'len'
            self._len_result = None
            return
        if _is_internal(frame.f_code.co_filename):
            return  # reftrace reading an index it keeps traced (slicing, an int argument)
        origin = self._size_origin(t)
        self.note("index", int(t._to_number()), f"{origin or 'a tensor'} used as a Python int "
                  "(__index__) with no TracerWarning: the value is baked into the trace",
                  frame=frame, origin=origin)

    def note_baked_int(self, t, kind="int argument", what="an int argument"):
        """A traced size that torch's C++ binding reads as a plain int, silently (a conv
        stride, a pooling kernel size): noted, and returned as the int it becomes."""
        n = int(t._to_number())
        origin = self._size_origin(t)
        self.note(kind, n, f"{origin or 'a tensor'} given as {what} is read as the int {n} with "
                  "no TracerWarning: the value is baked into the trace", origin=origin)
        return n

    def warn_iterate(self, t=None):
        self._warn("Iterating over a tensor might cause the trace to be incorrect. Passing a tensor "
                   "of different shape won't change the number of iterations executed (and might "
                   "lead to errors or silently give incorrect results).", "iterate",
                   None if t is None else t.shape_tuple[0], stacklevel=2)

    def constructor_result(self, t, constructor="torch.tensor"):
        """A tensor made from Python/NumPy data inside a trace: torch bakes it as a constant and
        records the conversion it makes (internal_new_from_data): ``torch.tensor`` ->
        ``aten::to`` + ``aten::detach``, ``torch.as_tensor`` -> ``aten::to``,
        ``torch.from_numpy`` -> ``aten::lift_fresh``; each warns that the result is a constant."""
        from ..ops import get_packet
        self._warn(constructor + WARN_CONSTRUCTOR, "constant", tuple(t.shape_tuple))
        if constructor == "torch.from_numpy":
            return get_packet("lift_fresh")(t)
        out = get_packet("to")(t, t.device, t.dtype, False, False)
        if constructor == "torch.tensor":
            out = out.detach_()
        return out

    def _warn_live_references(self, name, t):
        aliases = _live_references(t)
        if aliases > 1:
            self._warn(
                f"There are {aliases} live references to the data region being modified when "
                f"tracing in-place operator {name}. This might cause the trace to be incorrect, "
                "because all other views that also reference this data will not reflect this "
                "change in the trace! On the other hand, if all other views use the same memory "
                "chunk, but are disjoint (e.g. are outputs of torch.split), this might still be safe.",
                "in-place", aliases)


def _baked_value(t, kind):
    """The Python value a conversion produces (for the report): the number, the list, or the
    shape of what .numpy() hands out."""
    try:
        if kind == "numpy":
            return tuple(t.shape_tuple)
        if kind == "list":
            return get_backend_host(t).tolist()
        v = t._to_number()
        return {"bool": bool, "int": int, "float": float}.get(kind, lambda x: x)(v)
    except (RuntimeError, TypeError, ValueError):
        return None  # the conversion itself fails next, with its own error


def get_backend_host(t):
    from reftrace_backends import get_backend
    return get_backend(t.device.type).to_host(t._array)


_PLANS = {}  # op overload -> _plan(its schema arguments)


def _plan(schema_args):
    """What record reads off an op's schema on every call, computed once per overload: the
    argument positions ArgumentStash may apply to (int lists, single numbers), last first;
    and each argument's (type, whether it is a single Tensor)."""
    slots = tuple(i for i in range(len(schema_args) - 1, -1, -1)
                  if schema_args[i].type.is_int_list or
                  (schema_args[i].type.base in _NUMBER_NODE and not schema_args[i].type.is_list))
    return slots, tuple((sa.type, sa.type.base == "Tensor" and not sa.type.is_list)
                        for sa in schema_args)


def _outplace_overload(op):
    """aten::add_.Tensor -> aten::add.Tensor (the same overload of the out-of-place op)."""
    from ..ops import OVERLOADS
    name = op.name[:-1] + ("." + op.overload if op.overload else "")
    return OVERLOADS.get(name, op)


def _unboxed(args, stash):
    """The kernel's arguments: stashed number tensors replaced by their Python values."""
    args = list(args)
    for i in stash:
        a = args[i]
        args[i] = [e._to_number() if isinstance(e, Tensor) else e for e in a] if type(a) is list \
            else a._to_number()
    return args


def _long_scalar(n):
    t = scalar_to_tensor(int(n))
    t._wrapped = False  # torch's size tensors are plain 0-dim Long tensors
    return t


def _live_references(t):
    """storage().use_count(): live tensors sharing t's data (the root and its views)."""
    import gc
    root = t._base if t._base is not None else t
    count = 1
    for r in gc.get_referrers(root):
        if isinstance(r, Tensor) and r is not root and r._base is root:
            count += 1
    return count


def _cpp_tensor_text(t):
    from ._constants import cpp_tensor_print
    import numpy as np
    from reftrace_backends import get_backend
    host = np.asarray(get_backend(t.device.type).to_host(t._array))
    return cpp_tensor_print(host, t.dtype.ir_name, t.device.type, legacy_type_name=True)


# -- ops torch's tracer records by hand (TraceTypeManual.cpp, gen_trace_type.py) ---------------

def _record_copy_(state, op, args, frame, loc):
    """copy_: graph->insert(aten::copy_, {self, src}); under _force_outplace, expand_as when
    nothing else views self's data."""
    self_t, src, non_blocking = args
    g = state.graph
    if state.force_outplace and _live_references(self_t) <= 1:
        node = g.create("aten::expand_as", [state.value_of(src, frame, loc), state.value_of(self_t, frame, loc)])
        from ..ops import OVERLOADS
        node.op = OVERLOADS.get("aten::expand_as")
    else:
        ins = [state.value_of(self_t, frame, loc), state.value_of(src, frame, loc)]
        ins.append(state.constant(bool(non_blocking), T.BoolType, None, "i"))
        node = g.create("aten::copy_", ins, op)
    node.source = loc
    g.append(node)
    if state.force_outplace:
        state._warn_live_references("copy_ (possibly due to an assignment)", self_t)
    result = state.run_untraced(op, args)
    state.set_value(result, node.add_output(T.TensorType.of(result)))
    return result


def _record_detach_(state, op, args, frame, loc):
    """detach_ is always recorded as aten::detach (TraceTypeManual.cpp)."""
    from ..ops import OVERLOADS
    g = state.graph
    node = g.create("aten::detach", [state.value_of(args[0], frame, loc)], OVERLOADS.get("aten::detach"))
    node.source = loc
    g.append(node)
    result = state.run_untraced(op, args)
    state.set_value(result, node.add_output(T.TensorType.of(result)))
    return result


def _record_as_like(kind):
    """fill_ -> full_like / zero_ -> zeros_like under _force_outplace, with the extra options
    torch's RENAME_TRACE_ADD_ARGS adds (dtype None, layout, device, pin_memory, preserve)."""
    def record(state, op, args, frame, loc):
        from ..ops import OVERLOADS
        g = state.graph
        self_t = args[0]
        ins = [state.value_of(self_t, frame, loc)]
        if kind == "aten::full_like":
            value = args[1]
            ins.append(state.value_of(value, frame, loc) if isinstance(value, Tensor)
                       else state.scalar_constant(value, loc))
        ins += [state.none(), state.int_constant(0, loc), state.constant(str(self_t.device), T.DeviceType, loc, "s"),
                state.constant(False, T.BoolType, loc, "i"), state.int_constant(1, loc)]
        node = g.create(kind, ins, OVERLOADS.get(kind + ".default") or OVERLOADS.get(kind))
        node.source = loc
        g.append(node)
        state._warn_live_references(op.name.split("::")[1], self_t)
        result = state.run_untraced(op, args)
        state.set_value(result, node.add_output(T.TensorType.of(result)))
        return result
    return record


WARN_RESIZE = (" can't be represented in the JIT at the moment, so we won't connect any uses of this "
               "value with its current trace. If you happen to use it again, it will show up as a "
               "constant in the graph. Consider using `view` or `reshape` to make it traceable.")


def _record_resize(state, op, args, frame, loc):
    """resize_ / resize_as_ (TraceTypeManual.cpp): nothing recorded; a warning, and the tensor
    loses its Value, so a later use bakes it in as a constant."""
    name = op.name.split("::")[1]
    state._warn(name + WARN_RESIZE, "resize", name)
    args[0]._tv = None  # delValueTrace
    return state.run_untraced(op, args)


_FULL_LIKE_CANDIDATES = (
    "aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor\n\t"
    "aten::full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None, "
    "Tensor(a!) out) -> Tensor(a!)")


def _record_fill(state, op, args, frame, loc):
    """The functional fill: torch's tracer renames it aten::full_like (RENAME_TRACE) without the
    options full_like's schema needs, so no operator matches the node and the trace ends in
    alias analysis's INTERNAL ASSERT (raised by trace_graph once the function has returned)."""
    self_t, value = args
    g = state.graph
    ins = [state.value_of(self_t, frame, loc),
           state.value_of(value, frame, loc) if isinstance(value, Tensor) else state.scalar_constant(value, loc)]
    node = g.create("aten::full_like", ins)
    node.source = loc
    g.append(node)
    result = state.run_untraced(op, args)
    state.set_value(result, node.add_output(T.TensorType.of(result)))
    kind = "Tensor" if isinstance(value, Tensor) else type(value).__name__
    state.alias_error = state.alias_error or (
        "0 INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/torch/csrc/jit/ir/alias_analysis.cpp\":623, "
        "please report a bug to PyTorch. We don't have an op for aten::full_like but it isn't a special "
        f"case.  Argument types: Tensor, {kind}, \n\nCandidates:\n\t{_FULL_LIKE_CANDIDATES}")
    return result


_SPECIAL = {"aten::copy_": _record_copy_, "aten::detach_": _record_detach_,
            "aten::resize_": _record_resize, "aten::resize_as_": _record_resize,
            "aten::fill.Scalar": _record_fill, "aten::fill.Tensor": _record_fill}
_FORCE_OUTPLACE = {"aten::copy_": _record_copy_, "aten::detach_": _record_detach_,
                   "aten::fill_.Scalar": _record_as_like("aten::full_like"),
                   "aten::fill_.Tensor": _record_as_like("aten::full_like"),
                   "aten::zero_": _record_as_like("aten::zeros_like")}
