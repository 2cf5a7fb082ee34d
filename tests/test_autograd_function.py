"""torch.autograd.Function: its semantics, and its trace (prim::PythonOp), against torch 2.13.

Each ``prog_*(lib)`` is one program written against a library (torch or reftrace, bound to
``lib``); it returns what it observed: graph texts (source locations dropped), ``.code``,
subgraphs, node attributes, tensors (shape, dtype, requires_grad, grad_fn class, values), and
errors (type and message). ``test_matches_torch[prog]`` runs each program under torch 2.13 and
under reftrace and compares everything; ``test_runs_without_torch[prog]`` runs the reftrace side
alone (the suite's torch-free check). Classes are defined inside the programs, so their
``__module__`` (printed in the node) is this file's under both libraries.
"""
import re
import warnings

import pytest

import reftrace
from program_support import Programs, error, seen


# -- what a program observes ----------------------------------------------------------------------

def graph_text(g):
    return re.sub(r" # .*", "", str(getattr(g, "graph", g)))


def python_ops(traced):
    """Each prim::PythonOp of a trace: name, attributes, cconv, scalars, Subgraph text."""
    out = []
    for n in traced.graph.nodes():
        if n.kind() == "prim::PythonOp":
            out.append((n.pyname(), n.attributeNames(), n.i("inplace"), n.s("module"), n.cconv(),
                        [repr(s) for s in n.scalar_args()], graph_text(n.g("Subgraph"))))
    return out


def trace(lib, fn, args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.jit.trace(fn, args, **kwargs)


# -- programs: tracing ----------------------------------------------------------------------------

def prog_scalar_arguments(lib):
    class MyFn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, a, flag, sizes, name, on):
            return x + a

        @staticmethod
        def backward(ctx, g):
            return g, None, None, None, None, None

    def fn(x):
        return MyFn.apply(x + 2, 3.5, None, (1,), "hello", True) + 3

    t = trace(lib, fn, (lib.zeros(2),))
    x = lib.tensor([1.0, 2.0, 3.0])
    return [graph_text(t), t.code, graph_text(t.inlined_graph), python_ops(t), seen(t(x))]


def prog_tuple_scalar_and_ints(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, k, x, shape):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return None, g, None

    def fn(x):
        return Scale.apply(2, x, (2, 3))

    t = trace(lib, fn, (lib.ones(2, 3),))
    return [graph_text(t), t.code, python_ops(t), seen(t(lib.ones(2, 3)))]


def _identity(lib):
    class Id(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    return Id


def prog_returns_its_input(lib):
    Id = _identity(lib)
    def fn(x):
        y = x * 2
        return Id.apply(y)

    t = trace(lib, fn, (lib.zeros(2),))
    x = lib.ones(2)
    out = Id.apply(x)
    return [graph_text(t), t.code, python_ops(t), seen(t(lib.ones(3))), out is x,
            out.data_ptr() == x.data_ptr()]


def prog_multiple_outputs(lib):
    Id = _identity(lib)
    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + 2 * g2, g1

    def f(x, y):
        a = Id.apply(x)
        b, c = Two.apply(a, y)
        return b + c

    out = []
    for rg in (False, True):
        t = trace(lib, f, (lib.zeros(2, requires_grad=rg), lib.ones(2)))
        out += [graph_text(t), t.code, python_ops(t)]
    out.append(seen(t(lib.ones(3), lib.ones(3))))
    return out


def prog_one_tuple_output(lib):
    class One(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return (x.neg(),)

        @staticmethod
        def backward(ctx, g):
            return -g

    def f(x):
        (y,) = One.apply(x)
        return y

    t = trace(lib, f, (lib.ones(2),))
    return [graph_text(t), t.code, python_ops(t), seen(One.apply(lib.ones(2)))]


def prog_outputs_in_node_order(lib):
    class Swap(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            a = x.relu()
            b = y.sigmoid()
            return b, a

        @staticmethod
        def backward(ctx, gb, ga):
            return ga, gb

    t = trace(lib, lambda x, y: Swap.apply(x, y), (lib.ones(2), lib.ones(3)))
    return [graph_text(t), t.code, python_ops(t)]


def _add_one_in_place(lib):
    class AddOne(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.add_(1)

        @staticmethod
        def backward(ctx, g):
            return g * 3

    return AddOne


def prog_mark_dirty(lib):
    Inpl = _add_one_in_place(lib)
    def g(x):
        return Inpl.apply(x * 1)

    t = trace(lib, g, (lib.zeros(2),), check_trace=False)
    graph, _ = lib.jit._get_trace_graph(g, (lib.zeros(2),))
    forced = trace(lib, g, (lib.zeros(2),), check_trace=False, _force_outplace=True)
    checked = error(lambda: trace(lib, g, (lib.zeros(2),)))
    return [graph_text(t), t.code, python_ops(t), graph_text(graph), graph_text(forced),
            error(lambda: t(lib.zeros(2))), error(lambda: forced(lib.zeros(2))),
            checked[1].split("\n")[-1]]


def prog_non_differentiable_output(lib):
    class Split(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            return ga

    x = lib.ones(2, requires_grad=True)
    t = trace(lib, lambda x: Split.apply(x), (x,))
    a, b = Split.apply(x)
    return [graph_text(t), python_ops(t), seen(a), seen(b)]


def prog_in_a_module(lib):
    class Neg(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return lib.neg(x)

        @staticmethod
        def backward(ctx, g):
            return lib.neg(g)

    class Inner(lib.nn.Module):
        def forward(self, x):
            return lib.relu(Neg.apply(x))

    class Outer(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x) * 2

    m = trace(lib, Outer(), (lib.rand(3, 4),))
    return [graph_text(m), graph_text(m.inner), graph_text(m.inlined_graph), m.inner.code,
            python_ops(m.inner)]


def prog_nested_functions(lib):
    class Inner(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Outer(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return Inner.apply(x) + 1

        @staticmethod
        def backward(ctx, g):
            return g * 3

    t = trace(lib, lambda x: Outer.apply(x), (lib.ones(2),))
    return [graph_text(t), t.code, python_ops(t)]


def prog_traced_size_argument(lib):
    class Mul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, None

    def f(x):
        return Mul.apply(x, x.shape[0])

    t = trace(lib, f, (lib.ones(2),))
    return [graph_text(t), t.code, python_ops(t), seen(t(lib.ones(5)))]


def prog_interpreter_and_codegen(lib):
    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x + k, x - k

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 + g2, None

    def f(x):
        a, b = Two.apply(x, 2.5)
        return a * b

    t = trace(lib, f, (lib.ones(2),))
    x = lib.tensor([1.0, 2.0, 3.0])
    out = [seen(t(x))]
    if lib is reftrace:  # the interpreter runs the same graph to the same result
        from reftrace.jit.interpreter import Interpreter
        out.append(seen(Interpreter(t.graph).run(x)))
    else:
        out.append(seen(t(x)))
    return out


def prog_non_tensor_outputs(lib):
    class N(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, None, 3

        @staticmethod
        def backward(ctx, g, a, b):
            return g

    class Maybe(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 3 if x.numel() > 5 else x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    def last_lines(e, n=2):  # torch prefixes its interpreter's traceback
        lines = e[1].rstrip("\n").replace("\t", "").split("\n")
        return e[0], "\n".join(lines[-n:])

    checked = error(lambda: trace(lib, lambda y: N.apply(y)[0], (lib.ones(2),)))
    t = trace(lib, lambda y: N.apply(y)[0], (lib.ones(2),), check_trace=False)
    m = trace(lib, lambda y: Maybe.apply(y), (lib.ones(2),))
    return [last_lines(checked), graph_text(t), t.code, seen(N.apply(lib.ones(2))),
            last_lines(error(lambda: m(lib.ones(7))))]


def prog_checker_compares_scalars(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, None

    def f(x):
        return Scale.apply(x, float(x.sum()))

    err = error(lambda: trace(lib, f, (lib.ones(2),), check_inputs=[(lib.ones(2) * 2,)]))
    # the graph diff, less the source locations (torch prints Python stacks there)
    diff = re.sub(r" # \S+:\d+:0", "", err[1].split("Trace source location:")[0])
    trace(lib, f, (lib.ones(2),), check_inputs=[(lib.ones(2),)])  # same scalars: no error
    return [err[0], diff]


# -- programs: eager semantics --------------------------------------------------------------------

def prog_needs_input_grad(lib):
    seen_flags = []

    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, y):
            seen_flags.append((ctx.needs_input_grad, lib.is_grad_enabled()))
            return x * k + y

        @staticmethod
        def backward(ctx, g):
            return g, None, g

    x, y = lib.ones(2, requires_grad=True), lib.ones(2)
    out = [seen(F.apply(x, 2, y)), seen(F.apply(y, 2, y))]
    with lib.no_grad():
        out.append(seen(F.apply(x, 2, y)))
    return out + [seen_flags]


def prog_setup_context(lib):
    class Mul(lib.autograd.Function):
        @staticmethod
        def forward(x, k=3):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = lib.ones(2, requires_grad=True)
    y = Mul.apply(x)
    t = trace(lib, lambda x: Mul.apply(x), (lib.ones(2),))
    return [seen(y), graph_text(t), python_ops(t)]


def prog_misuse_errors(lib):
    class SaveInt(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    class DirtyNotReturned(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    LeafInplace = _add_one_in_place(lib)
    class NoForward(lib.autograd.Function):
        pass

    x = lib.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        instance = SaveInt()
    return [error(lambda: SaveInt.apply(x)), error(lambda: DirtyNotReturned.apply(x)),
            error(lambda: LeafInplace.apply(x)), error(lambda: NoForward.apply(x)),
            error(lambda: instance(x)), type(SaveInt._backward_cls).__name__,
            SaveInt._backward_cls.__name__]


# -- programs: gradients through Functions ----------------------------------------------------------

def prog_backward_through_function(lib):
    class MulAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_backward(x, y)
            ctx.k = k
            return x * y + k

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x if ctx.needs_input_grad[1] else None, None

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0])
    out = MulAdd.apply(x * 2, y, 5)
    fn = out.grad_fn
    names = [None if n is None else type(n).__name__ for n, _ in fn.next_functions]
    out.sum().backward()
    return [seen(out), names, fn.name(), seen(x.grad), y.grad is None]


def _cube(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

    return Cube


def prog_double_backward_through_function(lib):
    Cube = _cube(lib)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    g, = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    gg, = lib.autograd.grad(g.sum(), x)
    return [seen(g), seen(gg)]


def prog_gradient_checks(lib):
    def fn(backward, n_inputs=1):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, *rest):
                return x * 1

        F.backward = staticmethod(backward)
        return F

    x = lib.ones(2, requires_grad=True)
    out = []
    out.append(error(lambda: fn(lambda ctx, g: g).apply(x, 2).sum().backward()))
    out.append(error(lambda: fn(lambda ctx, g: (g, g)).apply(x, 2).sum().backward()))
    out.append(error(lambda: fn(lambda ctx, g: g[:1]).apply(x).sum().backward()))
    out.append(error(lambda: fn(lambda ctx, g: 3).apply(x).sum().backward()))
    # extra results are fine when they are None
    F = fn(lambda ctx, g: (g * 2, None, None))
    F.apply(x).sum().backward()
    out.append(seen(x.grad))
    # a gradient of another dtype is cast to the input's
    x.grad = None
    fn(lambda ctx, g: g.double()).apply(x).sum().backward()
    out.append(seen(x.grad))
    return out


def prog_saved_tensors_lifetime(lib):
    class Sq(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return 2 * x * g

    x = lib.ones(2, requires_grad=True)
    y = Sq.apply(x)
    y.sum().backward(retain_graph=True)
    twice = y.grad_fn.saved_tensors[0] is not None
    y.sum().backward()
    freed = error(lambda: y.grad_fn.saved_tensors)
    z = Sq.apply(x * 1)
    z.add_(1)
    modified = error(lambda: z.sum().backward())
    return [twice, seen(x.grad), freed, modified]


def prog_materialize_grads(lib):
    got = []

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            got.append((seen(ga), seen(gb)))
            return ga * 2, None

    for materialize in (True, False):
        x = lib.ones(2, requires_grad=True)
        a, b = Two.apply(x, materialize)
        a.sum().backward()
    return got


def prog_once_differentiable(lib):
    class Sq(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = lib.tensor([1.0, 3.0], requires_grad=True)
    v = lib.ones(2, requires_grad=True)
    g, = lib.autograd.grad(Sq.apply(x), x, grad_outputs=v, create_graph=True)
    return [seen(g), error(lambda: g.sum().backward())]


def prog_mark_dirty_history(lib):
    AddOne = _add_one_in_place(lib)
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    z = AddOne.apply(y)
    same = z is y
    name = type(y.grad_fn).__name__
    z.sum().backward()
    return [same, name, seen(z), seen(x.grad)]


def prog_view_outputs_refuse_in_place(lib):
    class View(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 2)

    x = lib.ones(2, 2, requires_grad=True)
    y = _identity(lib).apply(x.sum(0))
    v = View.apply(x)
    out = [error(lambda: y.add_(1)), error(lambda: v.mul_(2)), type(v.grad_fn).__name__]
    with lib.no_grad():
        v.mul_(2)  # without grad mode, nothing is recorded and nothing refused
    return out + [seen(x), x.grad_fn is None]


def prog_hooks_on_function_nodes(lib):
    log = []

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            log.append(("backward", seen(g)))
            return g * 2

    x = lib.ones(2, requires_grad=True)
    y = Double.apply(x)
    y.register_hook(lambda g: log.append(("tensor hook", seen(g))) or g * 10)
    y.grad_fn.register_hook(lambda gi, go: log.append(("node hook", seen(gi), seen(go))))
    y.sum().backward()
    return [log, seen(x.grad)]


def prog_traced_function_differentiates(lib):
    Cube = _cube(lib)
    def f(x, w):
        return Cube.apply(x * w).sum() + (x * w).sin().sum()

    t = trace(lib, f, (lib.ones(3), lib.ones(3)))
    x = lib.tensor([0.5, 1.0, 2.0], requires_grad=True)
    w = lib.tensor([1.0, -1.0, 0.5], requires_grad=True)
    out = t(x, w)
    grads = lib.autograd.grad(out, (x, w))
    eager = lib.autograd.grad(f(x, w), (x, w))
    if lib is reftrace:  # the interpreter's run records the same history as the generated code
        from reftrace.jit.interpreter import Interpreter
        interpreted = lib.autograd.grad(Interpreter(t.graph).run(x, w), (x, w))
    else:
        interpreted = lib.autograd.grad(t(x, w), (x, w))
    return [seen(out), seen(grads), seen(eager), seen(interpreted)]


def prog_traced_module_parameters_accumulate(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 2)

        def forward(self, x):
            return lib.relu(self.lin(x)).sum()

    m = Net()
    with lib.no_grad():
        m.lin.weight.copy_(lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
        m.lin.bias.copy_(lib.tensor([0.1, -0.2]))
    t = trace(lib, m, (lib.ones(1, 3),))
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
    t(x).backward()
    t(x).backward()
    return [seen(m.lin.weight.grad), seen(m.lin.bias.grad), seen(t(x))]


test_matches_torch, test_runs_without_torch = Programs(globals()).tests()


def test_pythonop_node_api():
    """The node's Python API (python_ir.cpp): pyname, cconv, scalar_args, the Subgraph."""
    class Add(reftrace.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x + k

        @staticmethod
        def backward(ctx, g):
            return g, None

    t = trace(reftrace, lambda x: Add.apply(x, 2), (reftrace.ones(2),))
    node = t.graph.findNode("prim::PythonOp")
    assert (node.pyname(), node.cconv(), node.scalar_args()) == ("Add", "dc", [2])
    assert node.pyobj() == Add.apply
    sub = node.g("Subgraph")
    assert [n.kind() for n in sub.nodes()] == ["prim::Constant", "prim::Constant", "aten::add"]
    # the graph copy keeps the node's class and Python data (the checker and inliner copy graphs)
    copied = t.graph.copy().findNode("prim::PythonOp")
    assert (copied.pyname(), copied.cconv(), copied.scalar_args()) == ("Add", "dc", [2])


def test_forward_using_an_untraced_value_is_refused_clearly():
    """A forward computing with a traced tensor that is not one of apply's arguments cannot be
    copied into the Subgraph: torch fails with a bare 'unordered_map::at'; reftrace says what
    was wrong and what to do (spec AG-12)."""
    w = reftrace.ones(2)

    class C(reftrace.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * w

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="its forward used the traced value %w, which is not "
                                           "one of its inputs"):
        trace(reftrace, lambda x, w: C.apply(x), (reftrace.ones(2), w))


