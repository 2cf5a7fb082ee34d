"""The sequence and attention example programs (examples/lstm_tagger.py, gru_lm.py,
transformer_encoder.py, gpt2_block.py, bert_tiny.py) trace to torch 2.13's exact graph, inlined
graph and code, pass the checker on other batch sizes and sequence lengths, and give torch's
outputs on all of them (golden file from torch, and live torch when installed)."""
import json
import os

import numpy as np
import pytest

import reftrace
from seq_models import EXAMPLES, trace_and_run

with open(os.path.join(os.path.dirname(__file__), "data", "seq_golden.json")) as f:
    GOLDEN = json.load(f)


def _assert_outputs(got, expected):
    assert len(got) == len(expected)
    for outs, exp in zip(got, expected):
        assert len(outs) == len(exp)
        for (dt, shape, stride, values), (edt, eshape, estride, evalues) in zip(outs, exp):
            assert (dt, shape, stride) == (edt, eshape, estride)
            np.testing.assert_allclose(np.array(values, dtype=float), np.array(evalues, dtype=float),
                                       rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_golden(name):
    texts, outputs = trace_and_run(reftrace, name)
    for key in ("graph", "inlined_graph", "code"):
        assert texts[key] == GOLDEN[name]["texts"][key], key
    _assert_outputs(outputs, GOLDEN[name]["outputs"])


try:
    import torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    torch = None


@pytest.mark.skipif(torch is None, reason="torch 2.13 (the oracle) is not installed")
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_matches_live_torch(name):
    texts, outputs = trace_and_run(reftrace, name)
    expected_texts, expected_outputs = trace_and_run(torch, name)
    assert texts == expected_texts
    _assert_outputs(outputs, expected_outputs)
