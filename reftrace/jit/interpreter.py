"""The interpreter: runs a traced Graph on new inputs through the same op table.

A small visitor in the style of torch.fx's Interpreter (exported as reftrace.jit.Interpreter,
spec/interpreter.md INT-9): ``run`` binds the graph inputs (``placeholder``), then calls one hook
per node (``run_node``: ``get_attr``, ``call_module``, ``call_function``, or the node kind's own
``prim_<Name>`` / ``aten_<name>``), and frees each value after its last use so large
intermediates die early.
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
    """Runs a graph (a function's, or a module method's with its prim::GetAttr and
    prim::CallMethod nodes) on new inputs; subclass it and override hooks, as torch.fx's:

    - ``Interpreter(graph)``, or ``Interpreter(traced)`` for a traced function or module (whose
      ``run`` then passes the module as the graph's ``self``);
    - ``run(*args)``: the whole graph; ``run_graph(graph, args)`` runs any graph (a submodule's
      method, a called function) with the same instance, so a subclass's hooks and state see
      every node of a module, submodules included;
    - ``placeholder(value, arg)``: binds one graph input (checks it has the traced structure);
    - ``run_node(node, args)``: every node, its input values already computed; returns its
      result (a tuple for several outputs). By default it calls the node's hook:
    - ``get_attr(node, obj, name)`` for prim::GetAttr, ``call_module(node, module, method, args)``
      for prim::CallMethod, ``call_function(node, args)`` for an op (aten::linear, ...), and
      ``prim_<Name>`` / ``aten_<name>`` for the nodes whose kind has its own hook here
      (prim::Constant, prim::ListConstruct, aten::size, aten::Int ...);
    - ``output(graph, values)``: what the graph returns.

    Overriding ``run_node`` wraps every node (recording activations); overriding
    ``call_function`` sees every op (counting FLOPs). The plan of a graph (which hook each node
    runs, which values die after it) is made once per graph and instance.
    """

    def __init__(self, graph):
        # a Graph; or, as torch.fx.Interpreter takes a GraphModule, a trace: a traced module or
        # one of its methods (run then passes the module as the graph's `self`), a traced function
        from .ir import Graph
        self.module = None
        if not isinstance(graph, Graph):
            self.module = graph if hasattr(graph, "_type") else getattr(graph, "module", None)
            graph = graph.graph
        self.graph = graph
        self._plans = {}
        self._kind_hooks = {}

    def run(self, *args):
        return self.run_graph(self.graph, args if self.module is None else (self.module,) + args)

    def run_graph(self, graph, args):
        params = graph.param.outputs_
        if len(args) != len(params):
            raise InterpreterError(
                f"expected {len(params)} argument(s) but received {len(args)} argument(s)")
        env = {v: self.placeholder(v, a) for v, a in zip(params, args)}
        plan = self._plans.get(graph)
        if plan is None:
            plan = self._plans[graph] = self._compile(graph)
        for hook, node, ins, outs, single, dead in plan:
            result = hook(node, [env[v] for v in ins])
            if single:
                env[outs[0]] = result
            elif outs:
                for o, r in zip(outs, result):
                    env[o] = r
            for v in dead:
                del env[v]
        return self.output(graph, [env[v] for v in graph.ret.inputs_])

    def _compile(self, graph):
        """One step per node: (hook, node, input values, output values, values to free).
        Hooks are looked up once here, so a subclass's overrides are honoured and the run loop
        does no string work; a subclass that overrides run_node gets every node through it."""
        last = {}
        for n in graph:
            for v in n.inputs_:
                last[v] = n
        outputs = set(graph.ret.inputs_)
        frees = {}
        for v, n in last.items():
            if v not in outputs:
                frees.setdefault(n, []).append(v)
        wraps = type(self).run_node is not Interpreter.run_node
        plan = []
        for n in graph:
            hook = self.run_node if wraps else self._hook(n.kind_)
            # an unpack node's result is a sequence even when it has one output
            single = len(n.outputs_) == 1 and n.kind_ not in _UNPACKS
            plan.append((hook, n, n.inputs_, n.outputs_, single, frees.get(n, ())))
        return plan

    def _hook(self, kind):
        hook = self._kind_hooks.get(kind)
        if hook is None:
            hook = self._kind_hooks[kind] = getattr(self, kind.replace("::", "_"), None) or self.call_function
        return hook

    # -- the hooks -------------------------------------------------------------------------------
    def placeholder(self, value, arg):
        """A graph input: reject an argument whose structure differs from the traced one."""
        check_input(value.type_, arg, value.debugName())
        return arg

    def run_node(self, node, args):
        """One node, given its input values: the hook of its kind."""
        return self._hook(node.kind_)(node, args)

    def output(self, graph, values):
        return values[0] if len(values) == 1 else tuple(values)

    def get_attr(self, node, obj, name):
        return getattr(obj, name)

    def call_module(self, node, module, method, args):
        """A submodule's method: its own graph, run by this interpreter."""
        return self.run_graph(module._type.methods[method], [module] + list(args))

    def call_function(self, node, args):
        """An op node (aten::linear ...): its kernel, through the op table."""
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
        return self.run_graph(args[0], args[1:])

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
        return self.get_attr(node, args[0], node.s("name"))

    def prim_CallMethod(self, node, args):
        return self.call_module(node, args[0], node.s("name"), args[1:])

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
    return interp.run_graph(graph, args)


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
