"""reftrace.jit.check and trace(..., _deep_check=True) (spec/specializations.md SPZ-6..8):
programs whose first diverging node is known. Where torch's own checker is involved, it is run
live to show what it does (and does not) see."""
import textwrap
import warnings

import pytest

import reftrace
from tests.oracle import requires_torch, torch

FILE = "<deep-program>"


def _load(lib, source, name):
    ns = {"torch": lib, "__name__": "deep_program"}
    exec(compile(textwrap.dedent(source), FILE, "exec"), ns)
    return ns[name]


def _trace(fn, inputs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return reftrace.jit.trace(fn, inputs, **kw)


BRANCH = '''\
def g(x):
    y = x.relu()
    if x.sum() > 0:
        return y * 2
    return y - 100
'''

NUMBER = '''\
def h(x):
    y = x * 3
    return y + x.sum().item()
'''

NESTED = '''\
def n(x):
    return x + 1, (x * 2, torch.rand(3))
'''

LEN = '''\
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        y = self.lin(x)
        return y.view(len(x), 3) * 2
'''


def test_branch_on_data_diverges_at_the_other_op():
    g = _load(reftrace, BRANCH, "g")
    traced = _trace(g, reftrace.ones(3))
    report = reftrace.jit.check(traced, -reftrace.ones(3))
    assert not report.ok and [p for p, _ in report.mismatches] == ["out"]
    d = report.divergence
    assert (d.traced_node.kind(), d.eager_node.kind()) == ("aten::mul", "aten::sub")
    assert d.source == f"{FILE}:4" and d.eager_node.source == (FILE, 5)
    assert d.reason.startswith("eager ran aten::sub where the trace runs aten::mul")
    assert report.specializations.kinds() == ["bool"]
    assert reftrace.jit.check(traced, 2 * reftrace.ones(3)).ok  # same branch: agrees


def test_python_number_bake_diverges_at_its_constant():
    h = _load(reftrace, NUMBER, "h")
    traced = _trace(h, reftrace.ones(3))
    report = reftrace.jit.check(traced, 2 * reftrace.ones(3))
    d = report.divergence
    assert d.traced_node.kind() == "prim::Constant" and d.source == f"{FILE}:3"
    assert d.traced_node.t("value").item() == 3.0 and d.eager_node.t("value").item() == 6.0
    assert "(a value baked in when tracing)" in d.reason
    text = str(report)
    assert text.splitlines()[0] == "Deep check failed: the trace's outputs differ from the Python function's."
    assert f"First diverging node (node 2 of the replay), at {FILE}:3:" in text  # after x * 3


def test_nested_leaf_is_compared_and_its_node_found():
    nested = _load(reftrace, NESTED, "n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = reftrace.jit.trace(nested, reftrace.ones(3))  # the default checker: silent
    assert [w for w in caught if w.category is reftrace.jit.TracerWarning] == []
    report = reftrace.jit.check(traced, reftrace.ones(3))
    assert [p for p, _ in report.mismatches] == ["out[1][1]"]
    assert report.divergence.traced_node.kind() == "aten::rand"
    assert report.divergence.source == f"{FILE}:2"


@requires_torch
def test_torchs_checker_does_not_see_the_nested_leaf():
    """What the deep check adds: torch compares top-level tensors only (the nested rand is
    never compared), so its checker is silent on this program, as reftrace's default one is."""
    nested = _load(torch, NESTED, "n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.jit.trace(nested, torch.ones(3))
    assert [w for w in caught if w.category is torch.jit.TracerWarning] == []


def test_len_bake_in_a_module_diverges_at_the_constant_inside_forward():
    M = _load(reftrace, LEN, "M")
    traced = _trace(M(), reftrace.ones(2, 3))
    report = reftrace.jit.check(traced, reftrace.ones(4, 3))
    assert report.mismatches[0][1].startswith("the trace raised RuntimeError")
    d = report.divergence
    assert d.traced_node.kind() == "prim::Constant" and d.source == f"{FILE}:8"
    assert (d.traced_node.i("value"), d.eager_node.i("value")) == (2, 4)
    assert report.specializations.kinds() == ["len"]


def test_structure_and_dtype_of_leaves():
    from reftrace.jit._deep_check import compare_outputs
    a, b = reftrace.ones(2), reftrace.ones(2, dtype=reftrace.float64)
    assert compare_outputs((a, [a]), (a, [a])) == []
    assert compare_outputs((a, [a]), (a, [a, a])) == [("out[1]", "1 elements in the trace, 2 in Python")]
    assert compare_outputs({"k": a}, {"k": b})[0][1].startswith("The values for attribute 'dtype' do not match")
    assert compare_outputs({"k": a}, {"j": a})[0] == ("out", "keys 'k' in the trace, keys 'j' in Python")


def test_trace_with_deep_check_raises_with_the_divergence():
    g = _load(reftrace, BRANCH, "g")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(reftrace.jit.TracingCheckError) as info:
            reftrace.jit.trace(g, reftrace.ones(3), check_inputs=[-reftrace.ones(3)], _deep_check=True)
    text = str(info.value)
    assert text.startswith("Tracing failed sanity checks!\nDeep check failed")
    assert f"at {FILE}:4:" in text and info.value.report.divergence.traced_node.kind() == "aten::mul"
    # the module path, with check inputs as trace_module takes them
    M = _load(reftrace, LEN, "M")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(reftrace.jit.TracingCheckError) as info:
            reftrace.jit.trace(M(), reftrace.ones(2, 3), check_inputs=[reftrace.ones(4, 3)], _deep_check=True)
    assert info.value.report.divergence.source == f"{FILE}:8"
    # nothing to find: the trace is returned
    assert _trace(g, reftrace.ones(3), check_inputs=[2 * reftrace.ones(3)], _deep_check=True)(reftrace.ones(3)).tolist() == [2.0] * 3


def test_check_refuses_what_it_cannot_compare():
    with pytest.raises(TypeError, match="needs a trace made by reftrace.jit.trace"):
        reftrace.jit.check(object(), reftrace.ones(2))
