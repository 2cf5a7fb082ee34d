"""Gradients of the recurrent layers, their cells and the packed-sequence utilities against live
torch 2.13: the input's, the initial states' and every parameter's gradient to 1e-5, and the
autograd graph (node names and edges) recorded by the CompositeImplicitAutograd decompositions
of aten::lstm/gru/rnn_* (.input and .data), the cells, pad_sequence and _pad_packed_sequence.
Skipped without torch."""
import warnings

import numpy as np
import pytest

import reftrace

try:
    import torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)


def graph_signature(tensors):
    """The autograd graph under ``tensors`` as a list of (node name, [(child id, output_nr)]),
    nodes numbered in depth-first order of first visit: equal lists mean equal graphs."""
    ids, rows = {}, []

    def visit(fn):
        if fn is None:
            return None
        if id(fn) in ids:
            return ids[id(fn)]
        ids[id(fn)] = len(rows)
        row = [type(fn).__name__ if type(fn).__module__ != "reftrace.autograd.graph" else fn.name(), None]
        rows.append(row)
        row[1] = [(visit(child), nr) for child, nr in fn.next_functions]
        return ids[id(fn)]
    for t in tensors:
        visit(t.grad_fn)
    return [(name, edges) for name, edges in rows]


def _arrays(seed, *shapes, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _run_both(make, arrays, forward, dtype=np.float32):
    """Build the module under both libraries with torch's weights, run ``forward(lib, module,
    *inputs)`` on inputs requiring grad, back-propagate the same weighted sum of the outputs."""
    torch.manual_seed(0)
    results = []
    t_module = make(torch).to(getattr(torch, np.dtype(dtype).name))
    r_module = make(reftrace).to(getattr(reftrace, np.dtype(dtype).name))
    r_module.load_state_dict({k: reftrace.from_numpy(v.detach().numpy().copy())
                              for k, v in t_module.state_dict().items()})
    for lib, module in ((torch, t_module), (reftrace, r_module)):
        inputs = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LSTM with projections: oneDNN's fallback warning
            outs = forward(lib, module, *inputs)
        loss = 0
        for k, o in enumerate(outs):
            w = np.random.default_rng(10 + k).standard_normal(tuple(o.shape)).astype(dtype)
            loss = loss + (o * lib.from_numpy(w)).sum()
        loss.backward()
        results.append((outs, inputs, dict(module.named_parameters()), graph_signature(outs)))
    return results


def _check_gradients(results):
    (t_outs, t_in, t_params, _), (r_outs, r_in, r_params, _) = results
    for t, r in zip(t_outs, r_outs):
        np.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)
    for k, (t, r) in enumerate(zip(t_in, r_in)):
        np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=f"input {k}")
    assert sorted(r_params) == sorted(t_params)
    for name, p in r_params.items():
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), rtol=1e-5,
                                   atol=1e-5, err_msg=name)


def _lstm_states(lib, module, x, h0, c0):
    out, (h, c) = module(x, (h0, c0))
    return out, h, c


def _states(lib, module, x, h0):
    return module(x, h0)


LAYERS = {  # name: (module, input shape, state shapes, forward)
    "lstm_2layer_bidirectional_batch_first": (
        lambda lib: lib.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True),
        [(2, 5, 3), (4, 2, 4), (4, 2, 4)], _lstm_states),
    "lstm_proj_bidirectional": (lambda lib: lib.nn.LSTM(3, 5, proj_size=2, bidirectional=True),
                                [(4, 2, 3), (2, 2, 2), (2, 2, 5)], _lstm_states),
    "lstm_no_bias": (lambda lib: lib.nn.LSTM(3, 4, bias=False), [(5, 2, 3), (1, 2, 4), (1, 2, 4)],
                     _lstm_states),
    "gru_2layer_bidirectional_batch_first": (
        lambda lib: lib.nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True),
        [(2, 5, 3), (4, 2, 4)], _states),
    "gru_no_bias": (lambda lib: lib.nn.GRU(3, 4, bias=False), [(5, 2, 3), (1, 2, 4)], _states),
    "rnn_tanh_2layer": (lambda lib: lib.nn.RNN(3, 4, num_layers=2), [(5, 2, 3), (2, 2, 4)],
                        _states),
    "rnn_relu_bidirectional_batch_first": (
        lambda lib: lib.nn.RNN(3, 4, nonlinearity="relu", bidirectional=True, batch_first=True),
        [(2, 5, 3), (2, 2, 4)], _states),
    "lstm_cell": (lambda lib: lib.nn.LSTMCell(3, 4), [(5, 3), (5, 4), (5, 4)],
                  lambda lib, m, x, h, c: m(x, (h, c))),
    "gru_cell": (lambda lib: lib.nn.GRUCell(3, 4), [(5, 3), (5, 4)], lambda lib, m, x, h: (m(x, h),)),
    "rnn_tanh_cell": (lambda lib: lib.nn.RNNCell(3, 4), [(5, 3), (5, 4)],
                      lambda lib, m, x, h: (m(x, h),)),
    "rnn_relu_cell": (lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="relu"), [(5, 3), (5, 4)],
                      lambda lib, m, x, h: (m(x, h),)),
}

@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_recurrent_gradients_and_graph_match_torch(name, dtype):
    make, shapes, forward = LAYERS[name]
    results = _run_both(make, _arrays(0, *shapes, dtype=dtype), forward, dtype)
    _check_gradients(results)
    # (a dense float32 LSTM without projections: oneDNN's MkldnnRnnLayerBackward0 per layer)
    assert results[1][3] == results[0][3]


@pytest.mark.parametrize("cell, bidirectional, batch_first", [
    ("LSTM", False, False), ("LSTM", True, True), ("GRU", True, False), ("RNN", False, True)])
def test_packed_sequence_gradients_and_graph_match_torch(cell, bidirectional, batch_first):
    def make(lib):
        return getattr(lib.nn, cell)(3, 4, num_layers=2, bidirectional=bidirectional,
                                     batch_first=batch_first)

    def forward(lib, module, x):
        rnn_utils = lib.nn.utils.rnn
        lengths = lib.tensor([2, 5, 3])
        packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                                enforce_sorted=False)
        out, hidden = module(packed)
        padded, _ = rnn_utils.pad_packed_sequence(out, batch_first=batch_first, total_length=6)
        return (padded,) + (tuple(hidden) if cell == "LSTM" else (hidden,))
    shape = (3, 5, 3) if batch_first else (5, 3, 3)
    results = _run_both(make, _arrays(0, shape), forward)
    _check_gradients(results)
    assert results[1][3] == results[0][3]  # (torch's oneDNN path takes no packed input)


@pytest.mark.parametrize("batch_first, padding_side", [(False, "right"), (True, "left")])
def test_pad_sequence_gradients_and_graph_match_torch(batch_first, padding_side):
    arrays = _arrays(0, (4, 2), (2, 2), (3, 2))
    outs = []
    for lib in (torch, reftrace):
        seqs = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
        out = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-1.0,
                                            padding_side=padding_side)
        w = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
        (out * lib.from_numpy(w)).sum().backward()
        outs.append((out, [s.grad.numpy() for s in seqs], graph_signature([out])))
    (t_out, t_grads, t_sig), (r_out, r_grads, r_sig) = outs
    np.testing.assert_array_equal(r_out.detach().numpy(), t_out.detach().numpy())
    assert r_out.stride() == t_out.stride()
    for t, r in zip(t_grads, r_grads):
        np.testing.assert_array_equal(r, t)
    assert r_sig == t_sig


@pytest.mark.parametrize("config", [
    {}, {"batch_first": True}, {"num_layers": 2}, {"bidirectional": True}, {"bias": False},
    {"hx": True}, {"num_layers": 2, "bidirectional": True, "batch_first": True, "hx": True},
    {"num_layers": 2, "states_loss": True}],
    ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_lstm_double_backward_matches_torch(config):
    """A float32 LSTM records MkldnnRnnLayerBackward0; with create_graph=True torch runs
    mkldnn_rnn_layer_differentiable_backward (ordinary ops), so the input's gradient can be
    differentiated again: its grad_fn and graph, its values, the gradients of the double
    backward."""
    config = dict(config)
    with_states = config.pop("hx", False)
    states_loss = config.pop("states_loss", False)  # no output gradient: grad_output undefined
    layers, directions = config.get("num_layers", 1), 1 + config.get("bidirectional", False)
    x_shape = (2, 5, 3) if config.get("batch_first") else (5, 2, 3)
    arrays = _arrays(3, x_shape, (layers * directions, 2, 4), (layers * directions, 2, 4))
    torch.manual_seed(0)
    t_module = torch.nn.LSTM(3, 4, **config)
    r_module = reftrace.nn.LSTM(3, 4, **config)
    r_module.load_state_dict({k: reftrace.from_numpy(v.detach().numpy().copy())
                              for k, v in t_module.state_dict().items()})
    results = []
    for lib, module in ((torch, t_module), (reftrace, r_module)):
        inputs = [lib.from_numpy(a.copy()).requires_grad_()
                  for a in (arrays if with_states else arrays[:1])]
        out, (h, c) = module(inputs[0], tuple(inputs[1:]) or None)
        loss = h.sum() + c[-1].sum() if states_loss else out.sum()
        g, = lib.autograd.grad(loss, inputs[0], create_graph=True)
        (g * g).sum().backward()
        results.append((g, inputs, dict(module.named_parameters())))
    (t_g, t_in, t_params), (r_g, r_in, r_params) = results
    assert r_g.grad_fn.name() == type(t_g.grad_fn).__name__  # CatBackward0 (or a transpose's)
    assert graph_signature([r_g]) == graph_signature([t_g])
    np.testing.assert_allclose(r_g.detach().numpy(), t_g.detach().numpy(), rtol=1e-5, atol=1e-5)
    for k, (t, r) in enumerate(zip(t_in, r_in)):
        np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=f"input {k}")
    for name, p in r_params.items():
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), rtol=1e-5,
                                   atol=1e-5, err_msg=name)
