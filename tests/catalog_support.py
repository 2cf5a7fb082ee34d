"""What the two ports of PyTorch's test/jit/test_tracer.py share (test_tracer_catalog.py: the
function tests; test_module_catalog.py: the module tests).

JitTestCase helpers are replaced by small ones with the same meaning: ``check_trace_``
(checkTrace: outputs, first- and second-order input gradients of the trace vs the function,
on its save/load copy unless ``export_import=False``), ``get_export_import_copy`` /
``assert_export_import`` (save/load round trips), ``FileCheck`` (ordered substring checks on
str(graph)), ``get_trace_graph`` (torch.jit._get_trace_graph), ``function_from_graph``
(createFunctionFromGraph), ``run_dce`` (run_pass("dce")) and ``trace_deco`` (the ``_trace``
decorator). ``Catalog`` holds one port file's markers (``lacks`` / ``xfail`` / ``parity_bug``)
and runs its ``test_matches_torch``: each ported body under real torch 2.13 first (so every
assertion holds on live torch), then under reftrace, comparing what each run ``keep()``s.
"""
import io
import os
import re
import tempfile
import warnings

import numpy as np
import pytest

import reftrace

try:  # torch is only the oracle; reftrace never imports it
    import torch as _torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    _torch = None

requires_torch = pytest.mark.skipif(_torch is None, reason="torch 2.13 (the oracle) is not installed")


def is_torch(lib):
    return _torch is not None and lib is _torch


# -- JitTestCase / torch.testing stand-ins ------------------------------------------------------

def _is_tensor(v):
    return isinstance(v, reftrace.Tensor) or (_torch is not None and isinstance(v, _torch.Tensor))


def _host(t):
    return np.asarray(t.detach().numpy())


def _equal(a, b, atol=1e-5, rtol=1.3e-6):
    """assertEqual's comparison: tensors (dtype-exact, values with tolerance), numbers vs 0-dim
    tensors, and containers recursively."""
    if _is_tensor(a) and _is_tensor(b):
        if str(a.dtype) != str(b.dtype) or tuple(a.shape) != tuple(b.shape):
            return False
        x, y = _host(a), _host(b)
        if x.dtype.kind in "fc":
            return bool(np.allclose(x, y, atol=atol, rtol=rtol, equal_nan=True))
        return bool((x == y).all())
    if _is_tensor(a) or _is_tensor(b):  # a number vs a 0-dim tensor (assertEqual allows it)
        t, n = (a, b) if _is_tensor(a) else (b, a)
        return isinstance(n, (int, float, bool)) and t.dim() == 0 and _host(t).item() == n
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y, atol, rtol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k], atol, rtol) for k in a)
    return a == b


def assert_equal(a, b, atol=None, rtol=None):
    kw = {k: v for k, v in (("atol", atol), ("rtol", rtol)) if v is not None}
    assert _equal(a, b, **kw), f"not equal:\n{a!r}\n{b!r}"


def assert_not_equal(a, b):
    assert not _equal(a, b), f"unexpectedly equal:\n{a!r}\n{b!r}"


class FileCheck:
    """torch.testing.FileCheck's check / check_next / check_not / check_count / check_same, run on
    a string (str(graph))."""

    def __init__(self):
        self.checks = []

    def check(self, s):
        self.checks.append(("check", s, None))
        return self

    def check_next(self, s):
        self.checks.append(("next", s, None))
        return self

    def check_same(self, s):
        self.checks.append(("same", s, None))
        return self

    def check_not(self, s):
        self.checks.append(("not", s, None))
        return self

    def check_count(self, s, count, exactly=False):
        self.checks.append(("count", s, (count, exactly)))
        return self

    def run(self, text):
        text = str(text)
        pos = 0
        pending_not = []  # check_not strings, checked up to the next positive match

        def settle(end):
            for s, start in pending_not:
                assert s not in text[start:end], f"FileCheck: found {s!r} where it must not be"
            pending_not.clear()

        for kind, s, extra in self.checks:
            if kind == "not":
                pending_not.append((s, pos))
                continue
            if kind == "count":
                count, exactly = extra
                for _ in range(count):
                    i = text.find(s, pos)
                    assert i >= 0, f"FileCheck: expected {count} occurrences of {s!r}"
                    settle(i)
                    pos = i + len(s)
                if exactly:
                    pending_not.append((s, pos))
                continue
            i = text.find(s, pos)
            assert i >= 0, f"FileCheck: {s!r} not found after position {pos}"
            between = text[pos:i]
            if kind == "next":
                assert between.count("\n") == 1, f"FileCheck: {s!r} is not on the next line"
            elif kind == "same":
                assert "\n" not in between, f"FileCheck: {s!r} is not on the same line"
            settle(i)
            pos = i + len(s)
        settle(len(text))

MANGLE = re.compile(r"___torch_mangle_\d+\.")


def gtext(g):
    """A graph (or anything with .graph) as text: source locations dropped, class-type mangles
    (process history, not trace content) stripped; a loaded module's unnamed values renumbered
    (torch numbers them by its compiler's history: spec LOAD-3)."""
    loaded = type(g).__name__ == "RecursiveScriptModule"
    g = getattr(g, "graph", g)
    text = MANGLE.sub("", g.str(False))
    if loaded:
        numbers = {}
        text = re.sub(r"%(\d+)(?![\w.])", lambda m: "%" + numbers.setdefault(m.group(1), str(len(numbers))), text)
    return text


def anon(g):
    """Graph text with every value renumbered in order of appearance (for _get_trace_graph
    graphs: torch's ONNXTracedModule frames record no names)."""
    names = {}
    return re.sub(r"%[\w.]+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), gtext(g))


# set while a port's save/load half runs (Catalog.save_load_half): check_trace_ then checks the
# saved-and-loaded copy of the trace, as checkTrace(export_import=True) does
_EXPORT_IMPORT = [False]


def export_import_active():
    """Whether a port's save/load half is running (checkTrace's export_import)."""
    return _EXPORT_IMPORT[0]


def do_input_map(torch, fn, value):
    """jit_utils.do_input_map: ``fn`` applied to every tensor of a nested input."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        mapped = (do_input_map(torch, fn, v) for v in value)
        return type(value)(*mapped) if hasattr(value, "_fields") else type(value)(mapped)
    if isinstance(value, dict):
        return {k: do_input_map(torch, fn, value[k]) for k in value}
    raise ValueError(f"Auto nesting doesn't know how to process an input object of type {type(value)}")


def _flatten_inputs(torch, value, acc):
    if isinstance(value, torch.Tensor):
        acc.append(value)
    elif isinstance(value, dict):
        for k in value:
            _flatten_inputs(torch, value[k], acc)
    else:
        for v in value:
            _flatten_inputs(torch, v, acc)
    return acc


def check_trace_(torch, func, reference_tensors, input_tensors=None, drop=None,
                 allow_unused=False, inputs_require_grads=True, check_tolerance=1e-5,
                 _force_outplace=False, grad_atol=None, grad_rtol=None, export_import=None):
    """JitTestCase.checkTrace: trace (check_trace=False), then the traced function equals the
    Python function on the reference inputs without gradients, and, with inputs that require
    grad, in outputs, first-order input gradients and second-order ones (of
    ``allSum(grads) * allSum(outputs)``), all on the trace's save/load copy when
    ``export_import`` (by default: in a port's save/load half, Catalog.save_load_half)."""
    import math

    def all_sum(vs):
        if drop is not None:
            vs = vs[:-drop]
        # each output weighted differently, so that their gradients differ
        return sum(math.log(i + 2) * v.sum() for i, v in enumerate(vs) if v is not None)

    def grad(outputs, inputs, **kwargs):
        return torch.autograd.grad(outputs, inputs, allow_unused=allow_unused, **kwargs)

    if input_tensors is None:
        input_tensors = reference_tensors
    nograd_inputs = reference_tensors
    if inputs_require_grads:
        recording_inputs = do_input_map(torch, lambda t: t.clone().requires_grad_(), reference_tensors)
        flat = tuple(_flatten_inputs(torch, recording_inputs, []))
    else:
        recording_inputs = reference_tensors

    ge = torch.jit.trace(func, input_tensors, check_tolerance=check_tolerance,
                         _force_outplace=_force_outplace, check_trace=False)
    if export_import is None:
        export_import = _EXPORT_IMPORT[0]
    if export_import:
        ge = get_export_import_copy(torch, ge)

    # no gradients
    assert_equal(func(*nograd_inputs), ge(*nograd_inputs))

    # gradients
    outputs = func(*recording_inputs)
    if inputs_require_grads:
        grads = grad(all_sum(outputs), flat)
    outputs_ge = ge(*recording_inputs)
    if inputs_require_grads:
        grads_ge = grad(all_sum(outputs_ge), flat)
    assert_equal(outputs, outputs_ge)
    if inputs_require_grads:
        assert_equal(grads, grads_ge, atol=grad_atol, rtol=grad_rtol)

    # second order
    outputs = func(*recording_inputs)
    l1 = all_sum(outputs)
    if inputs_require_grads:
        grads = grad(l1, flat, create_graph=True)
        grads2 = grad(all_sum(grads) * l1, flat)
        recording_inputs = do_input_map(
            torch, lambda t: torch.autograd.Variable(t, requires_grad=True), reference_tensors)
        flat = tuple(_flatten_inputs(torch, recording_inputs, []))
    outputs_ge = ge(*recording_inputs)
    l1_ge = all_sum(outputs_ge)
    if inputs_require_grads:
        grads_ge = grad(l1_ge, flat, create_graph=True)
        grads2_ge = grad(all_sum(grads_ge) * l1_ge, flat)
    assert_equal(outputs, outputs_ge)
    if inputs_require_grads:
        assert_equal(grads, grads_ge, atol=grad_atol, rtol=grad_rtol)
        assert len(grads2) == len(grads2_ge)
        for g2, g2_ge in zip(grads2, grads2_ge):
            if g2 is None and g2_ge is None:
                continue
            assert_equal(g2, g2_ge, atol=8e-4, rtol=8e-4)
    return ge


def get_export_import_copy(torch, m, also_test_file=True, map_location=None):
    """JitTestCase.getExportImportCopy: save to a buffer and load; then save the loaded module to
    a file and load that."""
    buffer = io.BytesIO()
    torch.jit.save(m, buffer)
    buffer.seek(0)
    imported = torch.jit.load(buffer, map_location=map_location)
    if not also_test_file:
        return imported
    with tempfile.TemporaryDirectory() as d:
        fname = os.path.join(d, "m.pt")
        torch.jit.save(imported, fname)
        return torch.jit.load(fname, map_location=map_location)


def assert_export_import(torch, trace, inputs):
    """JitTestCase.assertExportImport: a function made from the graph and its export/import copy
    compute the same results."""
    m = function_from_graph(torch, trace)
    m_import = get_export_import_copy(torch, m)
    assert_equal(m(*inputs), m_import(*inputs))


def trace_deco(torch, *args, **kwargs):
    """jit_utils._trace: ``@_trace(*example_inputs, **trace_kwargs)``."""
    def wrapper(func):
        return torch.jit.trace(func, args, **kwargs)
    return wrapper


def get_trace_graph(torch, f, args, return_inputs=False, _force_outplace=False):
    """torch.jit._get_trace_graph: (graph, outputs[, inputs]); modules go through
    ONNXTracedModule, which lifts the module's unique parameters and buffers into graph inputs."""
    return torch.jit._get_trace_graph(f, args, return_inputs=return_inputs,
                                      _force_outplace=_force_outplace)


def run_dce(torch, g):
    """self.run_pass("dce", g)."""
    if is_torch(torch):
        torch._C._jit_pass_dce(g)
    else:
        from reftrace.jit.passes import dead_code_elimination
        dead_code_elimination(g)


def function_from_graph(torch, g):
    """self.createFunctionFromGraph(g): a callable running the graph."""
    if is_torch(torch):
        return torch._C._create_function_from_graph("forward", g)
    from reftrace.jit.traced import TracedFunction
    return TracedFunction(g, "forward", None)  # runs the graph; torch.jit.save takes it


def tracer_warnings(recorded):
    """Recorded warnings less torch 2.13's DeprecationWarning for torch.jit.trace."""
    return [w for w in recorded if not issubclass(w.category, DeprecationWarning)]


def assert_warns_regex(torch, regex, fn):
    """assertWarnsRegex(torch.jit.TracerWarning, regex): some TracerWarning matches."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    msgs = [str(x.message) for x in w if issubclass(x.category, torch.jit.TracerWarning)]
    assert any(re.search(regex, m) for m in msgs), f"no TracerWarning matching {regex!r}: {msgs}"
    return msgs


def quiet():
    """A warnings context (with ``simplefilter("ignore")`` inside: @suppress_warnings)."""
    return warnings.catch_warnings()


@pytest.fixture
def torch():
    """The library the ported bodies run against: reftrace (test_matches_torch also passes real
    torch)."""
    return reftrace


class Catalog:
    """One port file's markers and its parity test with torch."""

    def __init__(self):
        self.skips = {}    # {name: what reftrace lacks}
        self.xfails = {}   # {name: reftrace bug} (strict xfails)
        self.parity = {}   # {name: why reftrace's graph/messages differ from torch's}
        self.kept = None   # what keep() records, while test_matches_torch runs
        self.ports = {}

    def keep(self, *artifacts):
        """Record what test_matches_torch compares (graph texts, messages); a no-op outside it."""
        if self.kept is not None:
            self.kept.extend(artifacts)

    def lacks(self, reason):
        """Skip a port because reftrace lacks a feature the original needs."""
        def deco(fn):
            self.skips[fn.__name__[len("test_"):]] = reason
            return pytest.mark.skip(reason=reason)(fn)
        return deco

    def save_load_half(self, fn):
        """The port's save/load half: ``test_<name>_export_import`` runs the same body with
        check_trace_ checking the saved-and-loaded trace (checkTrace's export_import). Use as a
        decorator on the port."""
        import sys

        def half(torch):
            _EXPORT_IMPORT[0] = True
            try:
                fn(torch)
            finally:
                _EXPORT_IMPORT[0] = False

        half.__name__ = fn.__name__ + "_export_import"
        half.__doc__ = f"{fn.__name__}, with checkTrace's save/load round trip."
        sys._getframe(1).f_globals[half.__name__] = half
        return fn

    def xfail(self, reason):
        """A port that fails because of a reftrace bug (strict xfail, with its diagnosis)."""
        def deco(fn):
            self.xfails[fn.__name__[len("test_"):]] = reason
            return pytest.mark.xfail(reason=reason, strict=True)(fn)
        return deco

    def parity_bug(self, reason):
        """reftrace passes the original assertions but records something torch does not."""
        def deco(fn):
            self.parity[fn.__name__[len("test_"):]] = reason
            return fn
        return deco

    def collect(self, namespace):
        """The ported tests of a module namespace, for test_matches_torch."""
        self.ports = {n[len("test_"):]: f for n, f in namespace.items()
                      if n.startswith("test_") and callable(f) and n != "test_matches_torch"}

    def parity_params(self):
        for name in sorted(self.ports):
            marks = []
            if name in self.skips:
                marks.append(pytest.mark.skip(reason=self.skips[name]))
            elif name in self.xfails or name in self.parity:
                marks.append(pytest.mark.xfail(reason=self.xfails.get(name) or self.parity[name],
                                               strict=True))
            yield pytest.param(name, marks=marks, id=name)

    def matches_torch(self, name):
        """The original assertions hold under torch 2.13, and reftrace records what torch does."""
        expected, got = [], []
        try:
            self.kept = expected
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                self.ports[name](_torch)
            self.kept = got
            self.ports[name](reftrace)
        finally:
            self.kept = None
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g == e
