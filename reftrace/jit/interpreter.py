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

    def _last_uses(self):
        """For each node, the values whose last use it is (freed right after it runs)."""
        last = {}
        for n in self.graph:
            for v in n.inputs_:
                last[v] = n
        outputs = set(self.graph.ret.inputs_)
        frees = {}
        for v, n in last.items():
            if v not in outputs:
                frees.setdefault(n, []).append(v)
        return frees

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
            self._plan = self._last_uses()
        frees = self._plan
        for node in graph:
            self.run_node(node, env)
            dead = frees.get(node)
            if dead:
                for v in dead:
                    env.pop(v, None)
        outs = [env[v] for v in graph.ret.inputs_]
        return outs[0] if len(outs) == 1 else tuple(outs)

    # -- hooks -----------------------------------------------------------------------------
    def run_node(self, node, env):
        hook = getattr(self, node.kind_.replace("::", "_"), None)
        args = [env[v] for v in node.inputs_]
        if hook is not None:
            result = hook(node, args)
        else:
            result = self.call_op(node, args)
        outs = node.outputs_
        if len(outs) == 1:
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
        result = run_kernel(op, args)
        if type(result) is list and len(node.outputs_) == 1:
            return result
        return result

    def prim_Constant(self, node, args):
        if not node.attrs:
            return None
        kind, value = node.attrs["value"]
        return value

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
        t, dim = args
        return t.shape_tuple[dim]

    def aten_numel(self, node, args):
        return int(args[0]._array.size)

    def aten_Int(self, node, args):
        return int(args[0]._to_number())

    def aten_Float(self, node, args):
        return float(args[0]._to_number())

    def aten_ScalarImplicit(self, node, args):
        return args[0]._to_number()


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
    elif isinstance(typ, T.DictType):
        if not isinstance(value, dict):
            raise InterpreterError(f"Expected a value of type '{_annotation(typ)}' for argument "
                                   f"'{name}' but instead found type '{type(value).__name__}'.")


def _annotation(t):
    from ._io_types import _annotation as a
    return a(t)
