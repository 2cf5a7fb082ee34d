"""The interpreter: runs a traced Graph on new inputs through the same op table.

A small visitor in the style of torch.fx's Interpreter: ``run`` binds the graph inputs, then
calls one hook per node (``run_node`` picks ``prim_<Name>`` / ``aten_<name>`` overrides, else
``call_op``), and frees each value after its last use so large intermediates die early.
aten nodes call ``run_kernel`` with the node's OpOverload, so eager and interpreted results
agree bit for bit, views included: an in-place op on a view writes into the caller's tensor,
as torch's executor does.
"""
from .. import _dtype as D
from .._device import LAYOUTS, MEMORY_FORMATS, device as Device
from .._dispatch import run_kernel
from .._tensor import Tensor, scalar_to_tensor
from . import _types as T
from ._python_op import run_python_op


_UNPACKS = ("prim::ListUnpack", "prim::TupleUnpack")


class InterpreterError(RuntimeError):
    """A traced graph was called with inputs of the wrong structure."""


_MEMORY_FORMATS_BY_VALUE = {v.value: v for v in MEMORY_FORMATS.values()}


def _argument_converter(arg):
    """How a graph value becomes the kernel's argument for this schema parameter."""
    base = arg.type.base
    if base == "ScalarType":
        return lambda v: None if v is None else D.BY_SCALAR_TYPE[v]
    if base == "MemoryFormat":
        return lambda v: None if v is None else _MEMORY_FORMATS_BY_VALUE[v]
    if base == "Layout":
        return lambda v: None if v is None else LAYOUTS["strided"]
    if base == "Device":
        return lambda v: None if v is None else Device(v)
    return None


def _converters(op):
    conv = getattr(op, "_interp_converters", None)
    if conv is None:
        conv = [(i, c) for i, c in enumerate(_argument_converter(a) for a in op.schema.arguments)
                if c is not None]
        op._interp_converters = conv
    return conv


class Interpreter:
    def __init__(self, graph):
        self.graph = graph
        self._plan = None

    def _compile(self):
        """One step per node: (hook, node, input values, output values, values to free).
        Hooks are looked up once here, so a subclass's overrides are honoured and the run loop
        does no string work."""
        graph = self.graph
        last = {}
        for n in graph:
            for v in n.inputs_:
                last[v] = n
        outputs = set(graph.ret.inputs_)
        frees = {}
        for v, n in last.items():
            if v not in outputs:
                frees.setdefault(n, []).append(v)
        plan = []
        for n in graph:
            hook = getattr(self, n.kind_.replace("::", "_"), None) or self.call_op
            # an unpack node's result is a sequence even when it has one output
            single = len(n.outputs_) == 1 and n.kind_ not in _UNPACKS
            plan.append((hook, n, n.inputs_, n.outputs_, single, frees.get(n, ())))
        return plan

    def run(self, *args):
        graph = self.graph
        if len(args) != len(graph.param.outputs_):
            raise InterpreterError(
                f"expected {len(graph.param.outputs_)} argument(s) but received {len(args)} argument(s)")
        env = {}
        for v, a in zip(graph.param.outputs_, args):
            check_input(v.type_, a, v.debugName())
            env[v] = a
        if self._plan is None:
            self._plan = self._compile()
        for hook, node, ins, outs, single, dead in self._plan:
            result = hook(node, [env[v] for v in ins])
            if single:
                env[outs[0]] = result
            elif outs:
                for o, r in zip(outs, result):
                    env[o] = r
            for v in dead:
                del env[v]
        outs = [env[v] for v in graph.ret.inputs_]
        return outs[0] if len(outs) == 1 else tuple(outs)

    # -- hooks: one per node kind (prim_Constant, aten_size ...); call_op for every other op ----
    def run_node(self, node, env):
        """Run one node against an environment (for callers stepping through a graph)."""
        hook = getattr(self, node.kind_.replace("::", "_"), None) or self.call_op
        result = hook(node, [env[v] for v in node.inputs_])
        outs = node.outputs_
        if len(outs) == 1 and node.kind_ not in _UNPACKS:
            env[outs[0]] = result
        elif outs:
            for o, r in zip(outs, result):
                env[o] = r

    def call_op(self, node, args):
        op = node.op
        if op is None:
            raise RuntimeError(f"reftrace's interpreter cannot run {node.kind_}")
        for i, conv in _converters(op):
            args[i] = conv(args[i])
        return run_kernel(op, args)

    def prim_Constant(self, node, args):
        if not node.attrs:
            return None
        if "value" not in node.attrs:  # a function used as a value: its type carries the callee
            return node.outputs_[0].type_.callee
        kind, value = node.attrs["value"]
        return value

    def prim_CallFunction(self, node, args):
        return run_graph(args[0], args[1:])

    def prim_PythonOp(self, node, args):
        return run_python_op(node, args)

    def prim_ListConstruct(self, node, args):
        return args

    def prim_ListUnpack(self, node, args):
        lst = args[0]
        if len(lst) != len(node.outputs_):
            raise InterpreterError(f"Expected {len(node.outputs_)} elements in a list but found {len(lst)}")
        return list(lst)

    def prim_TupleConstruct(self, node, args):
        return tuple(args)

    def prim_TupleUnpack(self, node, args):
        return tuple(args[0])

    def prim_DictConstruct(self, node, args):
        return {args[i]: args[i + 1] for i in range(0, len(args), 2)}

    def prim_GetAttr(self, node, args):
        return getattr(args[0], node.s("name"))

    def prim_CallMethod(self, node, args):
        module = args[0]
        return run_graph(module._type.methods[node.s("name")], args)

    def aten___getitem__(self, node, args):
        container, key = args
        if isinstance(container, dict):
            if key not in container:
                raise InterpreterError(f"KeyError: {key}")
            return container[key]
        return container[key]

    def prim_NumToTensor(self, node, args):
        t = scalar_to_tensor(args[0])
        t._wrapped = False
        return t

    def aten_size(self, node, args):
        return size_of(*args)

    def aten_numel(self, node, args):
        return int(args[0]._array.size)

    def aten_Int(self, node, args):
        return int(args[0]._to_number())

    def aten_Float(self, node, args):
        return float(args[0]._to_number())

    def aten_ScalarImplicit(self, node, args):
        return args[0]._to_number()


def size_of(t, dim):
    """aten::size(t, dim) with torch's dimension check (a graph traced on a 3-d input and called
    with a 1-d one reads a dimension that is not there), raised as the TorchScript interpreter
    raises its errors: a RuntimeError."""
    shape = t.shape_tuple
    if not shape:
        raise RuntimeError("Dimension specified as 0 but tensor has no dimensions")
    if not -len(shape) <= dim < len(shape):
        raise RuntimeError(f"Dimension out of range (expected to be in range of [{-len(shape)}, "
                           f"{len(shape) - 1}], but got {dim})")
    return shape[dim]


def run_graph(graph, args):
    """Run a graph with a cached Interpreter (submodule methods are called again and again)."""
    interp = graph.__dict__.get("_interpreter")
    if interp is None:
        interp = graph.__dict__["_interpreter"] = Interpreter(graph)
    return interp.run(*args)


def check_input(typ, value, name):
    """Reject inputs whose structure differs from the traced example's."""
    if isinstance(typ, T.TensorType):
        if not isinstance(value, Tensor):
            raise InterpreterError(f"Expected a value of type 'Tensor' for argument '{name}' but "
                                   f"instead found type '{type(value).__name__}'.")
    elif isinstance(typ, T.TupleType):
        if not isinstance(value, tuple) or len(value) != len(typ.elems):
            raise InterpreterError(
                f"Expected a value of type '{_annotation(typ)}' for argument '{name}' but instead "
                f"found type '{type(value).__name__}'.")
        for e, v in zip(typ.elems, value):
            check_input(e, v, name)
    elif isinstance(typ, T.ListType):
        if not isinstance(value, (list, tuple)):
            raise InterpreterError(f"Expected a value of type '{_annotation(typ)}' for argument "
                                   f"'{name}' but instead found type '{type(value).__name__}'.")
    elif isinstance(typ, T.ClassType):
        if getattr(value, "_type", None) is not typ:
            raise InterpreterError(f"Expected a value of type '{typ}' for argument '{name}'")
    elif isinstance(typ, T.DictType):
        if not isinstance(value, dict):
            raise InterpreterError(f"Expected a value of type '{_annotation(typ)}' for argument "
                                   f"'{name}' but instead found type '{type(value).__name__}'.")


def _annotation(t):
    from ._io_types import _annotation as a
    return a(t)
