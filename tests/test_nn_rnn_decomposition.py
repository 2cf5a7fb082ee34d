"""aten::lstm/gru/rnn_* are CompositeImplicitAutograd on CPU: autograd differentiates their
decomposition (each overload's ``composite``: reftrace.ops.nn_rnn.rnn_decomposition, written with
recorded ops). It must give the fast kernel's results to the bit (a value does not depend on
whether a gradient was recorded, as in torch); torch-free."""
import numpy as np
import pytest

import reftrace
from reftrace.ops import get_packet

CASES = [
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"proj_size": 2, "bias": False}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("RNN", {"nonlinearity": "relu"}),
    ("RNN", {"num_layers": 3}),
]


def _setup(module, kwargs, dtype):
    reftrace.manual_seed(0)
    m = getattr(reftrace.nn, module)(3, 4, **kwargs).to(dtype)
    directions = 2 if m.bidirectional else 1
    h_size = m.proj_size or m.hidden_size
    h0 = reftrace.randn(m.num_layers * directions, 3, h_size, dtype=dtype)
    hx = [h0, reftrace.randn(m.num_layers * directions, 3, 4, dtype=dtype)] if module == "LSTM" else h0
    name = {"LSTM": "lstm", "GRU": "gru"}.get(module, m.mode.lower())
    return m, hx, name


def _same_bits(fast, slow):
    for a, b in zip(fast, slow):
        assert a.shape == b.shape and a.stride() == b.stride()
        np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize("dtype", [reftrace.float32, reftrace.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("module, kwargs", CASES)
def test_decomposition_gives_the_kernel_bits(module, kwargs, dtype):
    m, hx, name = _setup(module, kwargs, dtype)
    x = reftrace.randn(3, 5, 3, dtype=dtype) if m.batch_first else reftrace.randn(5, 3, 3, dtype=dtype)
    args = (x, hx, m._flat_weights, m.bias, m.num_layers, 0.0, False, m.bidirectional, m.batch_first)
    with reftrace.no_grad():
        _same_bits(get_packet(name).input(*args), get_packet(name).input.composite(*args))


@pytest.mark.parametrize("module, kwargs", CASES)
def test_packed_decomposition_gives_the_kernel_bits(module, kwargs):
    m, hx, name = _setup(module, kwargs, reftrace.float32)
    data, batch_sizes = reftrace.randn(9, 3), reftrace.tensor([3, 3, 2, 1])  # lengths 4, 3, 2
    args = (data, batch_sizes, hx, m._flat_weights, m.bias, m.num_layers, 0.0, False,
            m.bidirectional)
    with reftrace.no_grad():
        _same_bits(get_packet(name).data(*args), get_packet(name).data.composite(*args))
