"""traced.specializations() (spec/specializations.md): programs whose baked values are known.

Each program is compiled from a string with a file name, so records and warnings carry known
lines. Where torch warns, the report's warning sites must be torch's TracerWarnings, line for
line and message for message (live torch, when installed); the silent bakes (a size taken by
__index__, a size read as an int by a C++ conv) are checked to be silent in torch too."""
import textwrap
import warnings

import pytest

import reftrace
from reftrace.jit._specializations import FIXES, Specialization, SpecializationReport
from tests.oracle import requires_torch, torch

FILE = "<spz-program>"

FUNCTION = textwrap.dedent('''\
    def f(x):
        n = len(x)
        a = x.sum().item()
        b = float(x[0, 0, 1])
        m = int(x.shape[0])
        for i in range(x.size(1)):
            x = x + i
        if x.max() > 0:
            x = x * 2
        c = torch.tensor([1.0, 2.0])
        y = torch.nn.functional.conv1d(x, torch.ones(1, 1, 2), stride=[x.size(2) - 3])
        r = x[0, 0].tolist()
        return x * n + a + b + m + r[0], c + 1, y
    ''')
# (kind, line, value) known by reading the program, for x = arange(6).view(1, 1, 6)
FUNCTION_BAKES = [("len", 2, 1), ("number", 3, 15.0), ("float", 4, 1.0), ("size", 5, 1),
                  ("index", 6, 1), ("bool", 8, True), ("constant", 10, (2,)),
                  ("int argument", 11, 3), ("list", 12, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0])]

MODULE = textwrap.dedent('''\
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            rows = [self.lin(row) for row in x]
            scale = x.size(0) * 2
            return [r * scale for r in rows] + [torch.ones(int(scale))]
    ''')
MODULE_BAKES = [("iterate", 7, 2), ("size", 9, 4), ("output list", 0, None)]


def _load(lib, source):
    namespace = {"torch": lib, "__name__": "spz_program"}
    exec(compile(source, FILE, "exec"), namespace)
    return namespace


def _trace(lib, source, name, inputs, **kw):
    ns = _load(lib, source)
    target = ns[name]() if name == "Net" else ns[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = lib.jit.trace(target, inputs, check_trace=False, **kw)
    sites = [(w.lineno, str(w.message)) for w in caught
             if w.category.__name__ == "TracerWarning" and w.filename == FILE]
    return traced, sites


def _x(lib):
    return lib.arange(6.0).view(1, 1, 6)


def test_function_bakes_are_reported_with_their_values_and_lines():
    traced, _ = _trace(reftrace, FUNCTION, "f", _x(reftrace))
    report = traced.specializations()
    assert [(r.kind, r.line, r.value) for r in report] == FUNCTION_BAKES
    assert all(r.file == FILE and r.fix == FIXES[r.kind] for r in report)
    assert [r.origin for r in report] == ["x.size(0)", None, None, "x.size(0)", "x.size(1)", None,
                                          None, "arithmetic on x.size(2)", None]
    assert report[3].message.startswith("Converting a tensor to a Python integer")
    assert report[4].message.startswith("x.size(1) used as a Python int (__index__)")


def test_module_bakes_are_reported_per_method():
    traced, _ = _trace(reftrace, MODULE, "Net", reftrace.ones(2, 3), strict=False)
    assert [(r.kind, r.line, r.value) for r in traced.specializations()] == MODULE_BAKES[:2]
    traced, _ = _trace(reftrace, MODULE, "Net", reftrace.ones(2, 3))
    report = traced.specializations()
    assert [(r.kind, r.line if r.kind != "output list" else 0, r.value) for r in report] == MODULE_BAKES
    assert traced.forward.specializations() == report


@requires_torch
@pytest.mark.parametrize("source,name,make,kw", [
    (FUNCTION, "f", _x, {}),
    (MODULE, "Net", lambda lib: lib.ones(2, 3), {}),
])
def test_warning_sites_are_torchs_tracer_warnings(source, name, make, kw):
    torch.manual_seed(0)
    _, theirs = _trace(torch, source, name, make(torch), **kw)
    traced, ours = _trace(reftrace, source, name, make(reftrace), **kw)
    assert ours == theirs
    report = traced.specializations()
    # the report's warning sites (the output-list warning is the trace's as a whole: its line is
    # the caller of trace(), in torch and here, outside the program)
    warned = [(r.line, r.message) for r in report
              if r.kind not in ("index", "int argument", "output list")]
    assert warned == theirs
    # the silent bakes are silent in torch too: no warning at their lines but the conversion's own
    silent = {r.line for r in report if r.kind in ("index", "int argument")}
    assert not silent & {line for line, _ in theirs}


@requires_torch
def test_baked_values_are_what_torchs_graph_holds():
    """The int argument the conv bakes is the constant torch's graph holds (stride 3)."""
    t, _ = _trace(torch, FUNCTION, "f", _x(torch))
    conv = [n for n in t.graph.nodes() if n.kind() == "aten::_convolution"][0]
    stride = list(conv.inputsAt(3).node().inputs())[0].node().i("value")
    traced, _ = _trace(reftrace, FUNCTION, "f", _x(reftrace))
    assert [r.value for r in traced.specializations() if r.kind == "int argument"] == [stride]


def test_clean_trace_has_an_empty_report():
    traced = reftrace.jit.trace(lambda x: x.view(x.size(0), -1).relu(), reftrace.ones(2, 3, 4))
    report = traced.specializations()
    assert report == [] and isinstance(report, SpecializationReport)
    assert str(report).startswith("No values baked in")


def test_report_prints_location_kind_value_message_and_fix():
    traced, _ = _trace(reftrace, FUNCTION, "f", _x(reftrace))
    text = str(traced.specializations())
    lines = text.splitlines()
    assert lines[0] == "9 values baked into the trace:"
    assert lines[1:4] == [f"{FILE}:2: len = 1 (from x.size(0))",
                          "    Using len to get tensor shape might cause the trace to be incorrect. "
                          "Recommended usage would be tensor.shape[0]. Passing a tensor of different "
                          "shape might lead to errors or silently give incorrect results.",
                          "    fix: " + FIXES["len"]]
    assert traced.specializations().format() == text


def test_kernel_size_is_reported_exactly_when_the_trace_bakes_it():
    """D23: torch bakes F.max_pool1d(x, x.size(2))'s kernel size (no aten::size in its graph).
    Whichever way reftrace traces it, the report and the graph agree: a 'kernel size' record
    when the graph holds the size as a constant, none when it follows the input."""
    traced = reftrace.jit.trace(lambda x: reftrace.nn.functional.max_pool1d(x, x.size(2)),
                                reftrace.ones(1, 2, 6), check_trace=False)
    baked = "aten::size" not in str(traced.graph)
    kinds = traced.specializations().kinds()
    assert ("kernel size" in kinds) == baked, (kinds, str(traced.graph))


def test_checker_reports_the_branch_on_its_error():
    src = textwrap.dedent('''\
        def g(x):
            if x.sum() > 0:
                return x * 2
            return x - 100
        ''')
    g = _load(reftrace, src)["g"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(reftrace.jit.TracingCheckError) as info:
            reftrace.jit.trace(g, reftrace.ones(3), check_inputs=[-reftrace.ones(3)])
    report = info.value.specializations
    assert [(r.kind, r.line) for r in report] == [("bool", 2), ("output mismatch", 0), ("branch", 3)]
    # the first op that differs (each path's constants are its operands)
    assert report[-1].message.startswith("the trace recorded `%2 : Tensor = aten::mul(%x, %1)` where "
                                         "the check input's trace recorded `%3 : Tensor = aten::sub(%x, %1, %2)`")
    assert report[-1].message.endswith(f"(at {FILE}:4:0)")


def test_checker_reports_a_baked_number_as_a_constant_value():
    src = "def h(x):\n    return x + x.sum().item()\n"
    h = _load(reftrace, src)["h"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(reftrace.jit.TracingCheckError) as info:
            reftrace.jit.trace(h, reftrace.ones(3), check_inputs=[2 * reftrace.ones(3)])
    assert [(r.kind, r.line, r.value) for r in info.value.specializations] == \
        [("number", 2, 3.0), ("output mismatch", 0, None), ("constant value", 2, None)]


def test_records_are_plain_data():
    r = Specialization("len", "a.py", 3, 2, "msg", "fix")
    assert r.location == "a.py:3" and r.format() == "a.py:3: len = 2\n    msg\n    fix: fix"
    r = Specialization("index", "a.py", 3, 2, "msg", "fix", "x.size(1)")
    assert r.format().splitlines()[0] == "a.py:3: index = 2 (from x.size(1))"


SHAPE_CONDITION = textwrap.dedent('''\
    import math
    def f(x):
        if x.size(0) > 1:
            x = x * math.sqrt(x.size(-1))
        return x
    ''')


def test_a_condition_and_a_float_on_shapes():
    traced, ours = _trace(reftrace, SHAPE_CONDITION, "f", reftrace.ones(2, 4))
    assert [(r.kind, r.line, r.value, r.origin) for r in traced.specializations()] == \
        [("bool", 3, True, "arithmetic on x.size(0)"), ("size", 4, 4.0, "x.size(-1)")]
    if torch is not None:
        assert _trace(torch, SHAPE_CONDITION, "f", torch.ones(2, 4))[1] == ours


OUTPLACE = textwrap.dedent('''\
    def f(x):
        x = x * 1
        row = x[0]
        x.add_(1)
        a = x.numpy()
        return x + row + float(a.sum())
    ''')


def test_in_place_with_live_views_and_numpy():
    traced, ours = _trace(reftrace, OUTPLACE, "f", reftrace.ones(2, 3), _force_outplace=True)
    assert [(r.kind, r.line, r.value) for r in traced.specializations()] == \
        [("in-place", 4, 2), ("numpy", 5, (2, 3))]
    if torch is not None:
        assert _trace(torch, OUTPLACE, "f", torch.ones(2, 3), _force_outplace=True)[1] == ours


def test_checker_detection_on_a_module_trace():
    src = textwrap.dedent('''\
        class Net(torch.nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x.relu()
                return x.tanh()
        ''')
    net = _load(reftrace, src)["Net"]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(reftrace.jit.TracingCheckError) as info:
            reftrace.jit.trace(net, reftrace.ones(3), check_inputs=[(-reftrace.ones(3),)])
    report = info.value.specializations
    assert [(r.kind, r.line) for r in report] == [("bool", 3), ("output mismatch", 0), ("branch", 4)]
    assert "aten::relu" in report[-1].message and "aten::tanh" in report[-1].message
