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


# The fused kernel's paths (reftrace/ops/nn_rnn.py): both directions of a dense layer stacked into
# one batched step (weights C-contiguous), or one direction at a time (a transposed weight, a
# packed input whose batch narrows); a strided initial state; batch and hidden size 1.
SWEEP = [(module, kwargs, batch, layout)
         for module, kwargs in [("LSTM", {"bidirectional": True, "num_layers": 2}),
                                ("LSTM", {"bidirectional": True, "proj_size": 2}),
                                ("GRU", {"bidirectional": True, "num_layers": 2}),
                                ("RNN", {"bidirectional": True, "bias": False})]
         for batch, layout in [(1, "plain"), (3, "transposed_weight"), (3, "strided_h0"),
                               (3, "packed_full"), (3, "packed_narrowing")]]


@pytest.mark.parametrize("dtype", [reftrace.float32, reftrace.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("module, kwargs, batch, layout", SWEEP)
def test_kernel_paths_give_the_decomposition_bits(module, kwargs, batch, layout, dtype):
    m, _, name = _setup(module, kwargs, dtype)
    directions, h_size = 2 if m.bidirectional else 1, m.proj_size or m.hidden_size
    h0 = reftrace.randn(batch, m.num_layers * directions, h_size, dtype=dtype)
    h0 = h0.transpose(0, 1) if layout == "strided_h0" else h0.transpose(0, 1).contiguous()
    c0 = reftrace.randn(m.num_layers * directions, batch, 4, dtype=dtype)
    hx = [h0, c0] if module == "LSTM" else h0
    params = list(m._flat_weights)
    if layout == "transposed_weight":  # weight_hh_l0: the same values, column-major storage
        params[1] = params[1].detach().t().contiguous().t()
    with reftrace.no_grad():
        if layout.startswith("packed"):
            lengths = [4] * batch if layout == "packed_full" else [4, 3, 1][:batch]
            sizes = [sum(1 for n in lengths if n > t) for t in range(4)]
            args = (reftrace.randn(sum(sizes), 3, dtype=dtype), reftrace.tensor(sizes), hx, params,
                    m.bias, m.num_layers, 0.0, False, m.bidirectional)
            _same_bits(get_packet(name).data(*args), get_packet(name).data.composite(*args))
        else:
            args = (reftrace.randn(5, batch, 3, dtype=dtype), hx, params, m.bias, m.num_layers, 0.0,
                    False, m.bidirectional, False)
            _same_bits(get_packet(name).input(*args), get_packet(name).input.composite(*args))
