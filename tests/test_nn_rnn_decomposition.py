"""aten::lstm/gru/rnn_* are CompositeImplicitAutograd on CPU: autograd differentiates their
decomposition (reftrace.ops.nn_rnn.rnn_decomposition, written with recorded ops). It must give
the fast kernel's results; torch-free."""
import numpy as np
import pytest

import reftrace
from reftrace.ops import get_packet


@pytest.mark.parametrize("module, kwargs", [
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"proj_size": 2, "bias": False}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("RNN", {"nonlinearity": "relu"}),
    ("RNN", {"num_layers": 3}),
])
def test_decomposition_gives_the_kernel_results(module, kwargs):
    reftrace.manual_seed(0)
    m = getattr(reftrace.nn, module)(3, 4, **kwargs)
    directions = 2 if m.bidirectional else 1
    x = reftrace.randn(2, 5, 3) if m.batch_first else reftrace.randn(5, 2, 3)
    h_size = m.proj_size or m.hidden_size
    h0 = reftrace.randn(m.num_layers * directions, 2, h_size)
    hx = [h0, reftrace.randn(m.num_layers * directions, 2, 4)] if module == "LSTM" else h0
    name = {"LSTM": "lstm", "GRU": "gru"}.get(module, m.mode.lower())
    args = (x, hx, m._flat_weights, m.bias, m.num_layers, 0.0, False, m.bidirectional, m.batch_first)
    with reftrace.no_grad():
        fast = get_packet(name)(*args)
        slow = get_packet(name).input.composite(*args)
    for a, b in zip(fast, slow):
        assert a.shape == b.shape and a.stride() == b.stride()
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
