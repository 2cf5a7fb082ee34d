"""reftrace.jit.parse_ir (torch._C.parse_ir): graph text back into a Graph.

Every golden graph torch printed (tests/data/tracer_golden.json, module_golden.json) parses and
prints back to the same text (value numbers aside); graphs reftrace prints round-trip with their
source locations; torch-printed graphs of traced functions run through the interpreter and the
generated code, without torch, and compute what the program computes.
"""
import json
import os

import numpy as np
import pytest

import reftrace
import load_programs as LP
import module_cases as MC
import tracer_cases as TC
from reftrace.jit.interpreter import Interpreter
from reftrace.jit.codegen import compiled
from oracle import requires_torch

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
canonical = LP.canonical

def _golden_graphs():
    with open(os.path.join(DATA, "tracer_golden.json"), encoding="utf-8") as f:
        out = {"tracer " + k: v["graph"] for k, v in json.load(f)["graphs"].items()}
    with open(os.path.join(DATA, "module_golden.json"), encoding="utf-8") as f:
        for case, texts in json.load(f).items():
            for what, text in texts.items():
                if isinstance(text, str) and text.startswith("graph("):
                    out[f"module {case} {what}"] = text
    return out


GOLDEN = _golden_graphs()


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_graph_round_trips(name):
    text = GOLDEN[name]
    assert canonical(str(reftrace.jit.parse_ir(text, parse_tensor_constants=True))) == canonical(text)


@pytest.mark.parametrize("name", sorted(TC.CASES))
def test_printed_graph_round_trips_with_source_locations(name):
    src, spec, kw = TC.CASES[name]
    g = TC.trace_case(reftrace, name, src, spec, kw).graph
    assert canonical(str(reftrace.jit.parse_ir(str(g), parse_tensor_constants=True))) == canonical(str(g))


@pytest.mark.parametrize("name", sorted(MC.CASES))
def test_module_graphs_round_trip_with_source_locations(name):
    module, inputs = MC.load_module(reftrace, name)
    traced = reftrace.jit.trace(module, inputs, check_trace=False, **MC.CASES[name][2])
    for g in [traced.graph, traced.inlined_graph] + [m.graph for _, m in traced.named_children()
                                                     if m._c._has_method("forward")]:
        assert canonical(str(reftrace.jit.parse_ir(str(g), parse_tensor_constants=True))) == canonical(str(g))


def _run_cases():
    return sorted(n for n in TC.CASES if "tracer " + n in GOLDEN)


_same = LP.assert_same_outputs


@pytest.mark.parametrize("name", _run_cases())
def test_torch_printed_graph_runs_without_torch(name):
    """The graph torch printed for the program, parsed and run by the interpreter and by the
    generated code, computes what the program computes (reftrace eager; torch eager live)."""
    src, spec, kw = TC.CASES[name]
    graph = reftrace.jit.parse_ir(GOLDEN["tracer " + name], parse_tensor_constants=True)
    fn = TC.load_fn(reftrace, src, name)
    expected = fn(*TC.make_inputs(reftrace, spec))
    _same(expected, Interpreter(graph).run(*TC.make_inputs(reftrace, spec)))
    _same(expected, compiled(graph, "fn")(*TC.make_inputs(reftrace, spec)))
    if torch is not None:
        theirs = TC.load_fn(torch, src, name)(*TC.make_inputs(torch, spec))
        _same(theirs, Interpreter(graph).run(*TC.make_inputs(reftrace, spec)))


def test_aten_nodes_find_their_overload():
    g = reftrace.jit.parse_ir("""graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):
  %1 : float = prim::Constant[value=2.5]()
  %2 : str = prim::Constant[value="floor"]()
  %3 : Tensor = aten::div(%x, %x)
  %4 : Tensor = aten::div(%x, %1)
  %5 : Tensor = aten::div(%x, %1, %2)
  %6 : Tensor = aten::pow(%1, %x)
  %7 : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%3, %4, %5, %6)
  return (%7)
""")
    kinds = [n.op.qualified for n in g.nodes() if n.kind().startswith("aten::")]
    assert kinds == ["aten::div.Tensor", "aten::div.Scalar", "aten::div.Scalar_mode", "aten::pow.Scalar"]
    x = reftrace.tensor([1.0, 2.0])
    _same((x / x, x / 2.5, reftrace.div(x, 2.5, rounding_mode="floor"), reftrace.pow(2.5, x)),
          Interpreter(g).run(x))


def test_printed_tensor_constants_read_back():
    g = reftrace.jit.parse_ir("""graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu)):
  %1 : Float(3, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1.5000  2.0000 -3.0000 [ CPUFloatType{3} ]]()
  %2 : Long(2, 2, strides=[2, 1], requires_grad=0, device=cpu) = prim::Constant[value= 1  2  3  4 [ CPULongType{2,2} ]]()
  %3 : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=1e-08 *  3.0000  1.0000 [ CPUFloatType{2} ]]()
  %4 : Double(requires_grad=0, device=cpu) = prim::Constant[value={0.5}]()
  return (%1, %2, %3, %4)
""", parse_tensor_constants=True)
    a, b, c, d = Interpreter(g).run(reftrace.zeros(3))
    assert a.tolist() == [1.5, 2.0, -3.0] and a.dtype == reftrace.float32
    assert b.tolist() == [[1, 2], [3, 4]] and b.dtype == reftrace.int64
    np.testing.assert_allclose(c.numpy(), [3e-8, 1e-8], rtol=1e-6)
    assert d.item() == 0.5 and d.dtype == reftrace.float64 and d.dim() == 0


@pytest.mark.parametrize("text, message", [
    ("graph(%x : Tensor):\n  %1 : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()\n  return (%1)\n",
     "Single-element tensor constant encountered but `parse_tensor_constants` is set to false"),
    ("graph(%x : Tensor):\n  %1 : Tensor = aten::relu(%y)\n  return (%1)\n", "value %y is used before it is defined"),
    ("graph(%x : Tensor):\n  %1 : Tensor = aten::relu(%x)\n", "expected 'return'"),
    ("graph(%x : Blob):\n  return (%x)\n", "unknown type 'Blob'"),
    ("graph(%x : Tensor):\n  %x : Tensor = aten::relu(%x)\n  return (%x)\n", "value %x is defined twice"),
    ("graph(%x : Tensor):\n  %1 : Tensor = relu(%x)\n  return (%1)\n", "expected a node kind such as aten::add"),
    ("graph(%x : Tensor):\n  return (%x)\nextra\n", "unexpected text after the return statement"),
])
def test_bad_ir_is_a_clear_error(text, message):
    with pytest.raises(RuntimeError) as e:
        reftrace.jit.parse_ir(text)
    assert message in str(e.value)
    assert "line " in str(e.value) and "<--- HERE" in str(e.value)


@requires_torch
def test_tensor_constants_refused_as_torch_refuses_them():
    text = GOLDEN["tracer wrapped_numbers"]
    with pytest.raises(RuntimeError, match="Single-element tensor constant encountered but "
                                           "`parse_tensor_constants` is set to false"):
        torch._C.parse_ir(text)
    with pytest.raises(RuntimeError, match="Single-element tensor constant encountered but "
                                           "`parse_tensor_constants` is set to false"):
        reftrace.jit.parse_ir(text)
