"""Module traces equal torch 2.13's: top graph, inlined_graph, each submodule's graph and the
traced module's repr (golden file, and live torch when installed); outputs match eager."""
import json
import os
import warnings

import numpy as np
import pytest

import reftrace
from module_cases import CASES, load_module, trace_texts

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

with open(os.path.join(os.path.dirname(__file__), "data", "module_golden.json")) as f:
    GOLDEN = json.load(f)


def _reftrace_texts(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return trace_texts(reftrace, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_graphs_match_golden(name):
    got, expected = _reftrace_texts(name), GOLDEN[name]
    assert sorted(got) == sorted(expected)
    for key in expected:
        assert got[key] == expected[key], key


@pytest.mark.skipif(torch is None, reason="torch 2.13 (the oracle) is not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_module_graphs_match_live_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = trace_texts(torch, name)
    assert _reftrace_texts(name) == expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_traced_module_runs_like_eager(name):
    module, inputs = load_module(reftrace, name)
    traced = reftrace.jit.trace(module, inputs, check_trace=False)
    expected, got = module(*inputs), traced(*inputs)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
