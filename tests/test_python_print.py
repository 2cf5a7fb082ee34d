"""``.code`` of traced functions and modules equals torch 2.13's (python_print.cpp), for every
program in tracer_cases.py, module_cases.py and code_cases.py: against the checked-in golden file
(tests/gen_code_golden.py, torch-free) and against live torch when it is installed."""
import json
import os
import sys
import warnings

import pytest

import reftrace
from code_cases import all_function_cases, all_module_cases, function_code, module_codes
from reftrace.jit import _python_print as pp
from reftrace.jit import _types as T
from reftrace.jit.ir import Graph

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

requires_torch = pytest.mark.skipif(torch is None, reason="torch 2.13 (the oracle) is not installed")

with open(os.path.join(os.path.dirname(__file__), "data", "code_golden.json")) as f:
    GOLDEN = json.load(f)

FUNCTIONS = all_function_cases()
MODULES = all_module_cases()

# Programs reftrace cannot trace yet, so their code cannot be compared (the printer's side of
# each is covered by a unit test below).
UNTRACEABLE = {}


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _skip_untraceable(name):
    if name in UNTRACEABLE:
        pytest.skip(UNTRACEABLE[name])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_function_code_matches_golden(name):
    _skip_untraceable(name)
    assert _quiet(function_code, reftrace, FUNCTIONS[name]) == GOLDEN["functions"][name]


@requires_torch
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_function_code_matches_live_torch(name):
    _skip_untraceable(name)
    expected = _quiet(function_code, torch, FUNCTIONS[name])
    assert _quiet(function_code, reftrace, FUNCTIONS[name]) == expected


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_code_matches_golden(name):
    assert _quiet(module_codes, reftrace, MODULES[name]) == GOLDEN["modules"][name]


@requires_torch
@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_code_matches_live_torch(name):
    assert _quiet(module_codes, reftrace, MODULES[name]) == _quiet(module_codes, torch, MODULES[name])


# -- the printer's rules one at a time ----------------------------------------------------------

def test_golden_covers_enough_programs():
    assert len(FUNCTIONS) + len(MODULES) >= 30


def test_repeated_method_code_and_constants():
    """A second call of a submodule is its method forward1, reachable as an attribute."""
    import module_cases
    module, inputs = module_cases.load_module(reftrace, "nested_linear_twice")
    traced = _quiet(reftrace.jit.trace, module, inputs)
    assert traced.a.forward1.code == ("def forward1(self,\n    input: Tensor) -> Tensor:\n"
                                      "  lin = self.lin\n  return torch.relu((lin).forward1(input, ))\n")
    assert traced.a.forward1.code_with_constants[1] == {}


def test_code_with_constants_maps_names_to_tensors():
    src, spec, kw = MODULES["buffer_and_constant"]
    namespace = {"torch": reftrace}
    exec(src, namespace)
    from tracer_cases import make_inputs
    traced = _quiet(reftrace.jit.trace, namespace["make"](), make_inputs(reftrace, spec))
    code, constants = traced.code_with_constants
    assert "CONSTANTS.c0" in code and code == traced.code
    assert constants.c0.item() == 2 and constants.c0.dtype == reftrace.int64


def _graph_with_input():
    """A hand-built graph with one Tensor input ``x``."""
    g = Graph()
    return g, g.add_input(T.TensorType(), "x")


def test_long_constant_gets_its_own_line():
    """Constants are inlined unless their text alone is a long line."""
    g, x = _graph_with_input()
    c = g.append(g.create("prim::Constant"))
    c.set_attr("value", "s", "a string constant that is quite long indeed")
    s = c.add_output(T.StringType)
    n = g.append(g.create("aten::foo", [x, s]))
    g.register_output(n.add_output(T.TensorType()))
    code, _ = pp.graph_code(g, "f")
    assert code == ('def f(x: Tensor) -> Tensor:\n'
                    '  _0 = "a string constant that is quite long indeed"\n'
                    '  return torch.foo(x, _0)\n')


def test_out_arguments_by_name():
    """Out arguments are skipped when counting necessary arguments, then printed by name."""
    from reftrace._schema import parse_schema
    schema = parse_schema("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")

    class Op:  # the part of an OpOverload the printer reads
        pass
    op = Op()
    op.schema = schema
    g, x = _graph_with_input()
    y = g.add_input(T.TensorType(), "y")
    z = g.add_input(T.TensorType(), "z")
    c = g.append(g.create("prim::Constant"))
    c.set_attr("value", "i", 1)
    one = c.add_output(T.IntType)
    n = g.append(g.create("aten::add", [x, y, one, z], op))
    g.register_output(n.add_output(T.TensorType()))
    code, _ = pp.graph_code(g, "g1")
    assert code.endswith("  return torch.add(x, y, out=z)\n")


def test_names_are_legal_unique_and_not_reserved():
    printer = pp.PythonPrinter()
    printer._begin(Graph())
    assert [printer._gen_name(n) for n in ("x", "x", "x", "ops", "_", "_", "input")] == \
        ["x", "x0", "x1", "ops0", "_0", "_1", "input"]
    assert pp.make_valid_identifier("1a.b") == "_1a_b"
    assert pp.make_valid_identifier("é") == "__"  # one '_' per UTF-8 byte, as torch
    assert not pp.is_valid_identifier("0") and pp.is_valid_identifier("lin_1")


def test_annotations():
    assert pp.annotation_str(T.TupleType([T.TENSOR, T.ListType(T.OptionalType(T.TENSOR))])) == \
        "Tuple[Tensor, List[Optional[Tensor]]]"
    assert pp.annotation_str(T.DictType(T.StringType, T.TENSOR)) == "Dict[str, Tensor]"
    assert pp.annotation_str(T.NumberType) == "number"
    assert pp.annotation_str(T.TupleType([])) == "Tuple[()]"


def test_long_chains_print_without_recursion():
    """Thousands of nested inline calls: the scan and the printer iterate."""
    def chain(x):
        xs = [x]
        for _ in range(3 * sys.getrecursionlimit()):
            xs.append(xs[-1].neg())
        return xs[-1]
    traced = reftrace.jit.trace(chain, (reftrace.ones(2),), check_trace=False)
    lines = traced.code.splitlines()
    assert lines[1] == "  _0 = torch.neg(torch.neg(torch.neg(torch.neg(x))))"
    assert lines[-1].startswith("  return _")


CALL_SOURCE = """
def inner(x, y):
    return x * y + 1
traced_inner = torch.jit.trace(inner, (torch.ones(2), torch.ones(2)), check_trace=False)
def outer(x):
    return traced_inner(x, x).neg(), traced_inner(x + 1, x)
"""
CALL_CODE = ("def outer(x: Tensor) -> Tuple[Tensor, Tensor]:\n"
             "  _0 = torch.neg(__torch__.inner(x, x, ))\n"
             "  _1 = __torch__.inner(torch.add(x, CONSTANTS.c0), x, )\n"
             "  return (_0, _1)\n")


def _outer_code(lib):
    # defined in __main__, the one module whose functions torch qualifies as plain __torch__.<name>
    namespace = {"torch": lib, "__name__": "__main__"}
    exec(CALL_SOURCE, namespace)
    return _quiet(lib.jit.trace, namespace["outer"], (lib.ones(2),), None, False).code


def test_called_traced_function_prints_its_qualified_name():
    """prim::CallFunction: `__torch__.inner(x, x, )`, every argument followed by ', '."""
    assert _outer_code(reftrace) == CALL_CODE


@requires_torch
def test_called_traced_function_matches_live_torch():
    assert _outer_code(torch) == CALL_CODE
