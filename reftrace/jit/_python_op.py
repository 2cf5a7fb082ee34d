"""prim::PythonOp: an autograd.Function call in a trace (python_function.cpp's
_trace_pre_record / _trace_post_record / _append_subgraph, python_ir.cpp's ConcretePythonOp,
python_interpreter.cpp's createPythonOperation).

torch records a Function call in three steps, and reftrace follows them:

1. before ``forward`` runs, a ``prim::PythonOp`` node is appended with the tensor arguments as
   inputs; the other arguments are kept on the node as Python objects (``scalar_args``) and the
   calling convention ``cconv`` says where each goes ('d': the next tensor, 'c': the next scalar);
2. ``forward`` runs with the tracer still on, so its ops are recorded after the node, in the main
   graph (dead ones are removed by the end-of-trace DCE; an in-place op on an input stays);
3. afterwards the node gets its attributes (``inplace``: whether ``ctx.mark_dirty`` was used;
   ``module``: the class's ``__module__``), its outputs (one Tensor, or one Tuple plus a
   ``prim::TupleUnpack`` when forward returned a tuple), and a ``Subgraph``: a copy of the nodes
   forward recorded, whose outputs are the values forward returned.

The node prints as ``%y : Float(...) = ^MyFn[inplace=0, module="__main__",
Subgraph=<Graph>](3.5, None)(%x)``: the class name, the attributes, the scalars, the inputs.
Running it (interpreter, generated code) calls ``MyFn.apply`` again with the same scalars; a
node recorded with ``inplace=1`` refuses to run ("inplace MyFn not supported in the JIT").
"""
from .._tensor import Tensor
from . import _types as T
from ._graph_copy import copy_metadata, create_clone
from .ir import Graph, Node


class PythonOp(Node):
    """ConcretePythonOp: a Node that also holds the callable (the Function's ``apply``), the
    calling convention and the non-tensor arguments."""
    __slots__ = ("pyobj_", "cconv_", "scalar_args_")

    def __init__(self, graph, pyobj=None, cconv="", scalar_args=()):
        super().__init__(graph, "prim::PythonOp")
        self.pyobj_ = pyobj
        self.cconv_ = cconv
        self.scalar_args_ = tuple(scalar_args)

    def empty_clone(self, graph):
        return PythonOp(graph, self.pyobj_, self.cconv_, self.scalar_args_)

    # -- torch's PythonOp API (python_ir.cpp) ---------------------------------------------------
    def name(self):
        """The Function class's name (ConcretePythonOp::name)."""
        fn = autograd_function(self.pyobj_)
        return getattr(fn if fn is not None else self.pyobj_, "__name__", "<python_value>")

    pyname = name

    def cconv(self):
        return self.cconv_

    def scalar_args(self):
        return list(self.scalar_args_)

    def pyobj(self):
        return self.pyobj_

    def scalars_text(self):
        """PythonOp::writeScalars: ``(3.5, None)``; each scalar as str(), tuples element-wise."""
        return "(" + ", ".join(_py_str(s) for s in self.scalar_args_) + ")"


def autograd_function(pyobj):
    """The Function class whose bound ``apply`` this is (ConcretePythonOp::autogradFunction)."""
    owner = getattr(pyobj, "__self__", None)
    return owner if isinstance(owner, type) and getattr(pyobj, "__name__", "") == "apply" else None


def _py_str(obj):
    # printPyObject: str() of the object; a tuple is printed element by element with str(), so
    # that its elements print as str() does (not repr()), a 1-tuple with its trailing comma
    if isinstance(obj, tuple):
        inner = ", ".join(str(o) for o in obj)
        return "(" + inner + ("," if len(obj) == 1 else "") + ")"
    return str(obj)


# -- recording ---------------------------------------------------------------------------------

def pre_record(state, fn_cls, args):
    """_trace_pre_record + preRecordPythonTrace: the node, its tensor inputs, before forward.
    The innermost Python frame is ``Function.apply``'s (marked @python_level), as in torch:
    the node's source location, and where argument names are looked up (none are found)."""
    from .._frames import user_frame
    cconv, scalars, tensors = [], [], []
    for a in args:
        if isinstance(a, Tensor):
            cconv.append("d")
            tensors.append(a)
        else:
            cconv.append("c")
            scalars.append(a)
    g = state.graph
    node = PythonOp(g, fn_cls.apply, "".join(cconv), scalars)
    node.scope = g.current_scope
    caller = user_frame()
    node.source = None if caller is None else (caller.f_code.co_filename, caller.f_lineno)
    for t in tensors:
        node.inputs_.append(state.value_of(t))
    g.append(node)
    return node


def post_record(state, node, fn_cls, outputs, is_inplace, unpack_output):
    """_trace_post_record: attributes, outputs typed from the result tensors (which are now
    mapped to them), and the Subgraph of what forward recorded."""
    node.set_attr("inplace", "i", int(bool(is_inplace)))
    module = fn_cls.__dict__.get("__module__")
    if isinstance(module, str):
        node.set_attr("module", "s", module)
    g = state.graph
    first = node
    if unpack_output:
        outs = [node.add_output(T.TENSOR) for _ in outputs]
    else:
        # forward returned a tuple: one Tuple output, unpacked right after the node
        tuple_value = node.add_output(T.TupleType([T.TENSOR] * len(outputs)))
        unpack = g.insert_after(g.create("prim::TupleUnpack", [tuple_value]), node)
        outs = [unpack.add_output(T.TENSOR) for _ in outputs]
        first = unpack
    trace_outputs = []
    for value, out in zip(outs, outputs):
        if isinstance(out, Tensor):
            trace_outputs.append(state.value_of(out))  # what forward's ops made it (before remap)
            value.setType(T.TensorType.of(out))
            state.set_value(out, value)
    if not unpack_output:
        tuple_value.setType(T.TupleType([v.type_ for v in outs]))
    node.set_attr("Subgraph", "g", _subgraph(node, first, trace_outputs))


def _subgraph(node, last_recorded, trace_outputs):
    """_append_subgraph: the node's inputs become the subgraph's inputs; every node forward
    recorded after ``last_recorded`` is cloned in, and its outputs that forward returned
    become the subgraph's outputs (in the order the nodes come)."""
    sub = Graph()
    value_map = {}
    for v in node.inputs_:
        value_map[v] = copy_metadata(sub.add_input(v.type_), v)

    def mapped(v):
        if v not in value_map:
            raise RuntimeError(
                f"autograd.Function {node.name()}: its forward used the traced value "
                f"%{v.debugName()}, which is not one of its inputs; pass every tensor forward "
                "computes with as an argument of apply")
        return value_map[v]

    wanted = set(trace_outputs)
    n = last_recorded.next
    end = last_recorded.block.ret
    while n is not end:
        clone = sub.block.append(create_clone(sub, n, mapped))
        for o, c in zip(n.outputs_, clone.outputs_):
            value_map[o] = c
            if o in wanted:
                sub.register_output(c)
        n = n.next
    return sub


# -- running (createPythonOperation) -------------------------------------------------------------

class JitRefusal(RuntimeError):
    """torch refuses the node when it builds the operation (createPythonOperation's TORCH_CHECK),
    before anything runs: the error reaches the caller as it is, not as an op failure."""


def run_python_op(node, tensors):
    """Call the Function again: scalars from the node, tensors from the graph, in cconv order."""
    if node.hasAttribute("inplace") and node.i("inplace"):
        raise JitRefusal(f"inplace {node.name()} not supported in the JIT")
    tensors = iter(tensors)
    scalars = iter(node.scalar_args_)
    args = [next(tensors) if c == "d" else next(scalars) for c in node.cconv_]
    return _checked_return(node, node.pyobj_(*args))


def _checked_return(node, value):
    """returnToIValue: the result must fit the node's output type (a Tensor, or a tuple of them;
    None passes as an undefined tensor), as torch's interpreter checks it."""
    typ = node.outputs_[0].type_
    if isinstance(typ, T.TupleType):
        ok = isinstance(value, tuple) and len(value) == len(typ.elems)
        bad = None if not ok else next((v for v in value if not _tensor_or_none(v)), None)
    else:
        ok, bad = True, None if _tensor_or_none(value) else value
    if not ok or bad is not None:
        detail = f"\nCast error details: Unable to cast {bad!r} to Tensor" if ok else ""
        raise RuntimeError(
            f" expected value of type {T.erase_shape(typ)} for return value but instead got value "
            f"of type {type(value).__name__}.\nValue: {value!r}{detail}")
    return value


def _tensor_or_none(v):
    return v is None or isinstance(v, Tensor)
