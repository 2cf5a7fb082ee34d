"""The shortcuts that make tracing cheaper give what the long ways give (bench/bench_jit_trace.py).

- the checker's fast path (_check._certainly_same) says "equal" only where the full comparison
  (canonical inlined copies, their texts and tensor constants) finds nothing;
- lambda lifting's in-place renumbering (_graph_copy.renumbered) gives the text of a copy;
- tracing pauses the garbage collector and leaves it as it found it, on every exit path.
No torch needed: these compare reftrace with itself; the graphs themselves are checked against
torch 2.13 by tests/test_tracer_graphs.py, test_module_catalog.py and test_checker.py.
"""
import gc

import pytest

import reftrace
from reftrace import nn
from reftrace.jit._check import _certainly_same, _comparable
from reftrace.jit import _types as T
from reftrace.jit._graph_copy import copy_graph, renumbered


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return reftrace.relu(self.lin(x)) * 2.0


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = Block(), nn.Sequential(Block(), Block())

    def forward(self, x):
        return self.b(self.a(x)) + x.size(0)


def _full_comparison_agrees(traced_graph, check_graph):
    """What the full comparison finds: equal texts and equal tensor constants."""
    text_a, nodes_a = _comparable(traced_graph)
    text_b, nodes_b = _comparable(check_graph)
    if text_a != text_b:
        return False
    for (na, _), (nb, _) in zip(nodes_a, nodes_b):
        if na.kind_ == "prim::Constant" and na.hasAttribute("value") and na.kindOf("value") == "t":
            if not bool((na.t("value") == nb.t("value")).all()):
                return False
    return True


def _bake(x):
    return x * x.max().item()  # the max is baked in as a tensor constant


@pytest.mark.parametrize("make", [
    lambda: (Net().eval(), reftrace.randn(3, 4), reftrace.randn(3, 4)),
    lambda: (Net().eval(), reftrace.randn(3, 4), reftrace.randn(5, 4)),   # other sizes
    lambda: (_bake, reftrace.ones(3), reftrace.ones(3)),                  # same constant
    lambda: (_bake, reftrace.ones(3), reftrace.ones(3) * 2),              # another constant
    lambda: (lambda x: x[0] if x.sum() > 0 else -x, reftrace.ones(2), -reftrace.ones(2)),
])
def test_fast_path_says_equal_only_where_the_full_comparison_does(make):
    fn, a, b = make()
    first = reftrace.jit.trace(fn, a, check_trace=False)
    second = reftrace.jit.trace(fn, b, check_trace=False)
    same = _certainly_same(first.graph, second.graph)
    assert not same or _full_comparison_agrees(first.graph, second.graph)
    assert _certainly_same(first.graph, first.graph)


def test_renumbering_in_place_gives_the_copys_text():
    traced = reftrace.jit.trace(Net().eval(), reftrace.randn(3, 4), check_trace=False)
    graphs = [traced.graph] + [g for m in (traced.a, traced.b, getattr(traced.b, "0")) for g in m._type.methods.values()]
    for g in graphs:
        # numbers out of creation order, as lambda lifting leaves them: an input added last
        # (a copy numbers inputs first), an unnamed one too
        scrambled = copy_graph(g)
        scrambled.add_input(T.TENSOR, "late")
        scrambled.add_input(T.TENSOR)
        expected = str(copy_graph(scrambled))
        assert str(scrambled) != expected
        assert str(renumbered(scrambled)) == expected


@pytest.mark.parametrize("check", [False, True])
def test_collector_left_as_found(check):
    fn = Net().eval()
    x = reftrace.randn(3, 4)
    assert gc.isenabled()
    reftrace.jit.trace(fn, x, check_trace=check)
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        reftrace.jit.trace(lambda t: None, x, check_trace=check)  # "didn't return any values"
    assert gc.isenabled()
    gc.disable()
    try:
        reftrace.jit.trace(fn, x, check_trace=check)
        assert not gc.isenabled()  # a caller's pause is kept
    finally:
        gc.enable()
