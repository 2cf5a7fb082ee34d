"""reftrace.jit.Interpreter, subclassed as users subclass torch.fx.Interpreter (spec/interpreter.md
INT-9): hooks see a module's graph node by node, submodule calls included. The FLOP count is
checked against torch's own counter (torch.utils.flop_counter) on the same model; the recorded
activations against torch's forward hooks on the same weights."""
import numpy as np
import pytest

import reftrace
from reftrace.jit import Interpreter
from tests.oracle import requires_torch, torch

nn = reftrace.nn


def _net():
    reftrace.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 2), nn.Tanh()))


class FlopCounter(Interpreter):
    """2 * M * N * K per matrix product, as torch.utils.flop_counter counts aten::addmm."""
    def __init__(self, graph):
        super().__init__(graph)
        self.flops, self.ops = 0, []

    def call_function(self, node, args):
        out = super().call_function(node, args)
        self.ops.append(node.kind())
        if node.kind() == "aten::linear":
            x, w = args[0], args[1]
            self.flops += 2 * x.numel() // x.shape[-1] * w.shape[0] * w.shape[1]
        return out


class Activations(Interpreter):
    """Every submodule call's result, by the submodule's qualified name."""
    def __init__(self, module):
        super().__init__(module.graph)
        self.names = {id(m): name for name, m in module.named_modules()}
        self.seen = {}

    def call_module(self, node, module, method, args):
        out = super().call_module(node, module, method, args)
        self.seen[self.names[id(module)]] = out
        return out


class NodeLog(Interpreter):
    def __init__(self, graph):
        super().__init__(graph)
        self.kinds = []

    def run_node(self, node, args):
        self.kinds.append(node.kind())
        return super().run_node(node, args)


def test_flop_counter_runs_module_graph_with_call_methods():
    net = _net()
    traced = reftrace.jit.trace(net, reftrace.ones(5, 3))
    assert "prim::CallMethod" in str(traced.graph)  # the module graph, not the inlined one
    x = reftrace.randn(5, 3)
    counter = FlopCounter(traced.graph)
    out = counter.run(traced, x)
    assert counter.flops == 2 * 5 * 3 * 4 + 2 * 5 * 4 * 2
    assert counter.ops == ["aten::linear", "aten::relu", "aten::linear", "aten::tanh"]
    assert np.array_equal(out.detach().numpy(), traced(x).detach().numpy())


@requires_torch
def test_flop_count_matches_torch_flop_counter():
    from torch.utils.flop_counter import FlopCounterMode
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                               torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Tanh()))
    with FlopCounterMode(display=False) as mode:
        tnet(torch.ones(5, 3))
    traced = reftrace.jit.trace(_net(), reftrace.ones(5, 3))
    counter = FlopCounter(traced)  # a traced module: run() passes it as `self`
    counter.run(reftrace.ones(5, 3))
    assert counter.flops == mode.get_total_flops()


def test_run_node_sees_every_node_of_every_graph():
    traced = reftrace.jit.trace(_net(), reftrace.ones(2, 3))
    log = NodeLog(traced.graph)
    log.run(traced, reftrace.ones(2, 3))
    # the top graph's GetAttrs and CallMethods, and the nodes of each submodule's forward
    assert log.kinds.count("prim::CallMethod") == 5  # 0, 1, 2 at the top; 2.0, 2.1 inside 2
    assert log.kinds.count("aten::linear") == 2 and log.kinds.count("prim::GetAttr") > 5


def _hooked_outputs(net, x):
    """Each submodule's output in an eager call, through forward hooks (reftrace's or torch's)."""
    seen = {}
    for name, m in net.named_modules():
        if name:
            m.register_forward_hook(lambda mod, i, o, name=name: seen.__setitem__(name, o.detach().numpy()))
    net(x)
    return seen


def test_activations_match_torch_forward_hooks():
    net = _net()
    traced = reftrace.jit.trace(net, reftrace.ones(2, 3))
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    rec = Activations(traced)
    rec.run(traced, reftrace.from_numpy(x))
    assert sorted(rec.seen) == ["0", "1", "2", "2.0", "2.1"]
    ours = {name: t.detach().numpy() for name, t in rec.seen.items()}
    eager = _hooked_outputs(net, reftrace.from_numpy(x))
    assert sorted(eager) == sorted(ours)
    for name in eager:
        assert np.array_equal(ours[name], eager[name]), name
    if torch is None:
        return
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                               torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Tanh()))
    tnet.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy()) for k, v in net.state_dict().items()})
    theirs = _hooked_outputs(tnet, torch.from_numpy(x))
    assert sorted(theirs) == sorted(ours)
    for name in theirs:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-6, atol=1e-7)


def test_placeholder_and_output_hooks():
    class Doubling(Interpreter):
        def placeholder(self, value, arg):
            return super().placeholder(value, arg) * 2

        def output(self, graph, values):
            return ("out", super().output(graph, values))
    traced = reftrace.jit.trace(lambda x, y: x + y, (reftrace.ones(2), reftrace.ones(2)), check_trace=False)
    assert Doubling(traced.graph).run(reftrace.ones(2), reftrace.ones(2))[1].tolist() == [4.0, 4.0]
    assert Doubling(traced).run(reftrace.ones(2), reftrace.ones(2))[1].tolist() == [4.0, 4.0]


def test_wrong_structure_is_refused_by_placeholder():
    traced = reftrace.jit.trace(lambda x: x * 2, reftrace.ones(2), check_trace=False)
    with pytest.raises(RuntimeError, match="Expected a value of type 'Tensor' for argument 'x'"):
        Interpreter(traced.graph).run(3)


def test_interpreter_takes_a_trace_a_method_or_a_graph():
    net = _net()
    traced = reftrace.jit.trace(net, reftrace.ones(2, 3))
    x = reftrace.randn(2, 3)
    expected = traced(x).detach().numpy()
    for runner in (Interpreter(traced), Interpreter(traced.forward)):
        assert np.array_equal(runner.run(x).detach().numpy(), expected)
    assert np.array_equal(Interpreter(traced.graph).run(traced, x).detach().numpy(), expected)
