"""reftrace's traced graphs, warnings and errors equal torch 2.13's for every program in
tracer_cases.py: against the checked-in golden file (torch-free) and against live torch."""
import json
import os
import warnings

import pytest

import reftrace
from tracer_cases import CASES, ERROR_CASES, trace_case

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

with open(os.path.join(os.path.dirname(__file__), "data", "tracer_golden.json")) as f:
    GOLDEN = json.load(f)


def _reftrace_graph(name):
    src, spec, kw = CASES[name]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        traced = trace_case(reftrace, name, src, spec, kw)
    return traced, [str(x.message) for x in w if x.category is reftrace.jit.TracerWarning]


@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_matches_golden(name):
    traced, warns = _reftrace_graph(name)
    assert traced.graph.str(False) == GOLDEN["graphs"][name]["graph"]
    assert warns == GOLDEN["graphs"][name]["warnings"]


@pytest.mark.skipif(torch is None, reason="torch 2.13 (the oracle) is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_graph_matches_live_torch(name):
    src, spec, kw = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = trace_case(torch, name, src, spec, kw).graph.str(False)
    assert _reftrace_graph(name)[0].graph.str(False) == expected


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_trace_error_matches_golden(name):
    src, spec, kw = ERROR_CASES[name]
    expected = GOLDEN["errors"][name]
    with pytest.raises(Exception) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace_case(reftrace, name, src, spec, kw)
    assert type(info.value).__name__ == expected["type"]
    # torch appends the tensor's C++ printout after "\nTensor:\n"; the golden keeps the text before
    assert str(info.value).split("\nTensor:\n")[0] == expected["message"]
    assert not reftrace.jit.is_tracing(), "a failed trace must leave no tracing state behind"


@pytest.mark.parametrize("name", ["simple_arith", "tuple_output", "size_arith", "inplace_chain",
                                  "dict_input", "list_input", "nested_input", "wrapped_float_int_tensor",
                                  "layout_kept", "dict_output_nonstrict"])
def test_traced_graph_reruns_like_eager(name):
    """The interpreter reproduces eager results bit for bit on new inputs of the same structure."""
    import numpy as np
    from tracer_cases import load_fn, make_inputs
    src, spec, kw = CASES[name]
    traced = trace_case(reftrace, name, src, spec, kw)
    fn = load_fn(reftrace, src, name)
    new_eager = make_inputs(reftrace, spec, seed=1)
    new_traced = make_inputs(reftrace, spec, seed=1)
    expected, got = fn(*new_eager), traced(*new_traced)

    def flat(v):
        if isinstance(v, reftrace.Tensor):
            return [v]
        if isinstance(v, dict):
            return [x for e in v.values() for x in flat(e)]
        return [x for e in v for x in flat(e)]
    for e, g in zip(flat(expected), flat(got)):
        assert e.dtype is g.dtype and e.shape_tuple == g.shape_tuple and e.stride() == g.stride()
        np.testing.assert_array_equal(e.numpy(), g.numpy())
