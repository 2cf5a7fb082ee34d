"""RNN, LSTM, GRU, their cells and nn.utils.rnn against live torch 2.13: construction, forward
values/dtype/strides, and traced graphs (aten::lstm with the flat weights; cells recorded as
their decomposition; packed sequences). Skipped without torch; tests/test_nn_seq_models.py runs
the RNN examples against golden data torch-free."""
import warnings

import numpy as np
import pytest

import reftrace

try:
    import torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)
from nn_seq_support import compare, pair, to_reftrace  # noqa: E402


def _t(*shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=torch.float32)


RNNS = {
    "lstm_2layer_batch_first": (lambda nn: nn.LSTM(3, 4, num_layers=2, batch_first=True),
                                [(_t(2, 5, 3),), (_t(3, 2, 3, seed=1),)]),
    "lstm_bidirectional_proj_states": (
        lambda nn: nn.LSTM(3, 5, proj_size=2, bidirectional=True),
        [(_t(4, 2, 3), (_t(2, 2, 2, seed=1), _t(2, 2, 5, seed=2)))]),
    "lstm_no_bias": (lambda nn: nn.LSTM(3, 4, bias=False), [(_t(3, 2, 3),)]),
    "lstm_unbatched": (lambda nn: nn.LSTM(3, 4, num_layers=2), [(_t(5, 3),)]),
    "gru_bidirectional_h0": (lambda nn: nn.GRU(3, 4, bidirectional=True),
                             [(_t(5, 2, 3), _t(2, 2, 4, seed=1))]),
    "gru_3layer_batch_first": (lambda nn: nn.GRU(3, 4, 3, batch_first=True),
                               [(_t(2, 6, 3),), (_t(1, 2, 3, seed=3),)]),
    "rnn_tanh": (lambda nn: nn.RNN(3, 4, 2), [(_t(5, 2, 3),)]),
    "rnn_relu_no_bias": (lambda nn: nn.RNN(3, 4, nonlinearity="relu", bias=False),
                         [(_t(5, 2, 3), _t(1, 2, 4, seed=1))]),
    "lstm_cell": (lambda nn: nn.LSTMCell(3, 4), [(_t(5, 3),), (_t(3),)]),
    "lstm_cell_states": (lambda nn: nn.LSTMCell(3, 4), [(_t(5, 3), (_t(5, 4, seed=1), _t(5, 4, seed=2)))]),
    "gru_cell": (lambda nn: nn.GRUCell(3, 4), [(_t(5, 3), _t(5, 4, seed=1)), (_t(3),)]),
    "rnn_cell_relu": (lambda nn: nn.RNNCell(3, 4, nonlinearity="relu"), [(_t(5, 3),)]),
    "rnn_cell_no_bias": (lambda nn: nn.RNNCell(3, 4, bias=False), [(_t(5, 3), _t(5, 4, seed=1))]),
}


@pytest.mark.parametrize("name", sorted(RNNS))
def test_recurrent_module_matches_torch(name):
    make, inputs = RNNS[name]
    compare(lambda lib: make(lib.nn), inputs)


@pytest.mark.parametrize("name", ["lstm_2layer_batch_first", "gru_3layer_batch_first"])
def test_trace_checks_on_other_batch_sizes_and_lengths(name):
    make, inputs = RNNS[name]
    compare(lambda lib: make(lib.nn), inputs, check_trace=True)


def test_flat_weights_and_init_distribution():
    m = reftrace.nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    assert m._flat_weights_names == [n for n, _ in torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True,
                                                                 proj_size=2).named_parameters()]
    assert [w is getattr(m, n) for w, n in zip(m._flat_weights, m._flat_weights_names)] == [True] * 20
    bound = 1 / np.sqrt(4)
    for p in m.parameters():
        a = p.detach().numpy()
        assert a.min() >= -bound and a.max() <= bound  # init.uniform_(-1/sqrt(hidden), 1/sqrt(hidden))
    m.weight_ih_l0 = reftrace.nn.Parameter(reftrace.zeros(16, 3))  # __setattr__ keeps the list current
    assert m._flat_weights[0] is m.weight_ih_l0


def test_dropout_between_layers_in_training_changes_values():
    m = reftrace.nn.LSTM(3, 8, num_layers=2, dropout=0.5)
    x = reftrace.randn(4, 2, 3)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    assert not np.array_equal(m(x)[0].detach().numpy(), a.detach().numpy())


@pytest.mark.parametrize("kwargs, message", [
    ({"dropout": 1.5}, "dropout should be a number in range [0, 1]"),
    ({"proj_size": 4}, "proj_size has to be smaller than hidden_size"),
    ({"num_layers": 0}, "num_layers must be greater than zero"),
])
def test_constructor_errors_as_torch(kwargs, message):
    for lib in (torch, reftrace):
        with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
            lib.nn.LSTM(3, 4, **kwargs)


def test_forward_errors_as_torch():
    for lib in (torch, reftrace):
        m = lib.nn.GRU(3, 4)
        with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. Expected 3, got 5"):
            m(lib.zeros(2, 1, 5))
        with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 1, 4\), got \[1, 2, 4\]"):
            m(lib.zeros(2, 1, 3), lib.zeros(1, 2, 4))
        with pytest.raises(ValueError, match="GRU: Expected input to be 2D or 3D, got 4D instead"):
            m(lib.zeros(2, 1, 3, 1))


def _packed_model(lib, cell, batch_first, enforce_sorted, bidirectional):
    class Packed(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = (lib.nn.LSTM if cell == "lstm" else lib.nn.GRU)(
                3, 4, num_layers=2, batch_first=batch_first, bidirectional=bidirectional)

        def forward(self, x, lengths):
            rnn_utils = lib.nn.utils.rnn
            packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                                    enforce_sorted=enforce_sorted)
            out, hidden = self.rnn(packed)
            padded, lens = rnn_utils.pad_packed_sequence(out, batch_first=batch_first)
            return padded, lens, hidden
    return Packed()


@pytest.mark.parametrize("cell, batch_first, enforce_sorted, bidirectional", [
    ("lstm", False, True, False), ("gru", True, False, True), ("lstm", False, False, True)])
def test_packed_sequences_match_torch(cell, batch_first, enforce_sorted, bidirectional):
    x = _t(5, 3, 3)
    if batch_first:
        x = x.transpose(0, 1).contiguous()
    lengths = torch.tensor([5, 3, 2] if enforce_sorted else [2, 5, 3])
    compare(lambda lib: _packed_model(lib, cell, batch_first, enforce_sorted, bidirectional),
            [(x, lengths)])


def test_pack_sequence_and_pad_sequence_match_torch():
    seqs = [_t(4, 2), _t(2, 2, seed=1), _t(3, 2, seed=2)]
    for batch_first in (False, True):
        a = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-1.0)
        b = reftrace.nn.utils.rnn.pad_sequence(to_reftrace(seqs), batch_first=batch_first,
                                               padding_value=-1.0)
        np.testing.assert_array_equal(b.numpy(), a.numpy())
        assert b.stride() == a.stride()
    a = torch.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    b = reftrace.nn.utils.rnn.pack_sequence(to_reftrace(seqs), enforce_sorted=False)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(y.numpy(), x.numpy())
    unpacked = reftrace.nn.utils.rnn.unpack_sequence(b)
    for x, y in zip(seqs, unpacked):
        np.testing.assert_array_equal(y.numpy(), x.numpy())


def test_pack_padded_sequence_with_a_list_warns_while_tracing():
    def f(x):
        return reftrace.nn.utils.rnn.pack_padded_sequence(x, [3, 2]).data
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        reftrace.jit.trace(f, (reftrace.randn(3, 2, 2),), check_trace=False)
    assert any("pack_padded_sequence has been called with a Python list" in str(e.message) for e in w)


def test_cells_record_their_decomposition_not_aten_cells():
    graph = reftrace.jit.trace(reftrace.nn.GRUCell(3, 4), (reftrace.randn(2, 3),)).graph.str(False)
    assert "aten::gru_cell" not in graph and "aten::unsafe_chunk" in graph
    _, rm = pair(lambda lib: lib.nn.GRUCell(3, 4))
    assert rm is not None
