"""The oneDNN LSTM layer (ATen's mkldnn/RNN.cpp): aten::mkldnn_rnn_layer and its backward.

torch 2.13 on CPU sends a float32 LSTM without projections (dense input) to oneDNN: under autograd
aten::lstm records mkldnn_rnn's ops, one ``mkldnn_rnn_layer`` per layer and direction (grad_fn
MkldnnRnnLayerBackward0, edges to the layer input, w_ih, w_hh, b_ih, b_hh, hx[k], cx[k]), the
directions concatenated, the final states stacked. The forward values here are reftrace's LSTM
kernel (nn_rnn._layer), so recording a gradient does not change them; the backward is the LSTM's
backpropagation through time, in float64 and rounded (oneDNN's own blocking is not reproduced:
gradients agree to float32 rounding, not to the bit). The workspace output (oneDNN's saved
activations, uint8) is empty here: only the backward reads it, and this backward recomputes.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh
from ._registry import derivatives, op
from .arithmetic import run_quiet

_LSTM_MODE = 2  # ideep::rnn_kind::LSTM


@op("mkldnn_rnn_layer(Tensor input, Tensor weight0, Tensor weight1, Tensor weight2, "
    "Tensor weight3, Tensor hx_, Tensor cx_, bool reverse, int[] batch_sizes, int mode, "
    "int hidden_size, int num_layers, bool has_biases, bool bidirectional, bool batch_first, "
    "bool train) -> (Tensor, Tensor, Tensor, Tensor)")
def mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes,
                     mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train):
    from .nn_rnn import _layer
    if mode != _LSTM_MODE:
        raise RuntimeError("mkldnn_rnn_layer: only the LSTM mode is implemented in reftrace")
    a = input._array
    steps, batch = a.shape[0], a.shape[1]
    params = (weight0._array, weight1._array, weight2._array, weight3._array, None)
    out, h_n, c_n = run_quiet(_layer, "lstm",
                              np.ascontiguousarray(a).reshape(steps * batch, a.shape[2]),
                              [batch] * steps, hx_._array, cx_._array, params, reverse)
    dt, dev = input.dtype, input.device
    return (_fresh(out.reshape(steps, batch, -1).astype(dt.np, copy=False), dt, dev),
            _fresh(h_n.astype(dt.np, copy=False), dt, dev),
            _fresh(c_n.astype(dt.np, copy=False), dt, dev),
            _fresh(np.zeros(0, np.uint8), D.uint8, dev))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


@op("mkldnn_rnn_layer_backward(Tensor input, Tensor weight1, Tensor weight2, Tensor weight3, "
    "Tensor weight4, Tensor hx_, Tensor cx_tmp, Tensor output, Tensor hy_, Tensor cy_, "
    "Tensor? grad_output, Tensor? grad_hy, Tensor? grad_cy, bool reverse, int mode, "
    "int hidden_size, int num_layers, bool has_biases, bool train, bool bidirectional, "
    "int[] batch_sizes, bool batch_first, Tensor workspace) "
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)")
def mkldnn_rnn_layer_backward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output, hy_,
                              cy_, grad_output, grad_hy, grad_cy, reverse, mode, hidden_size,
                              num_layers, has_biases, train, bidirectional, batch_sizes,
                              batch_first, workspace):
    """Backpropagation through time of one LSTM layer and direction: the gates are recomputed
    in float64, then the steps are walked back (gates i, f, g, o as RNN.cpp orders them)."""
    f64 = np.float64
    x = input._array.astype(f64)
    w_ih, w_hh = weight1._array.astype(f64), weight2._array.astype(f64)
    bias = weight3._array.astype(f64) + weight4._array.astype(f64)
    steps, n = x.shape[0], hidden_size
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    h, c = hx_._array.astype(f64), cx_tmp._array.astype(f64)
    saved = []  # per step in run order: (t, h_prev, c_prev, i, f, g, o, tanh(c))
    for t in order:
        gates = x[t] @ w_ih.T + h @ w_hh.T + bias
        i, f, o = _sigmoid(gates[:, :n]), _sigmoid(gates[:, n:2 * n]), _sigmoid(gates[:, 3 * n:])
        g = np.tanh(gates[:, 2 * n:3 * n])
        c_new = f * c + i * g
        tc = np.tanh(c_new)
        saved.append((t, h, c, i, f, g, o, tc))
        h, c = o * tc, c_new

    def grad_or_zeros(g, shape):
        return np.zeros(shape, f64) if g is None else g._array.astype(f64)
    d_out = grad_or_zeros(grad_output, output._array.shape)
    dh = grad_or_zeros(grad_hy, hy_._array.shape)
    dc = grad_or_zeros(grad_cy, cy_._array.shape)
    dx, dw_ih, dw_hh = np.zeros_like(x), np.zeros_like(w_ih), np.zeros_like(w_hh)
    db = np.zeros_like(bias)
    for t, h_prev, c_prev, i, f, g, o, tc in reversed(saved):
        dh = dh + d_out[t]
        dc = dc + dh * o * (1 - tc * tc)
        d_gates = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                                  dc * i * (1 - g * g), dh * tc * o * (1 - o)], 1)
        dx[t] = d_gates @ w_ih
        dw_ih += d_gates.T @ x[t]
        dw_hh += d_gates.T @ h_prev
        db += d_gates.sum(0)
        dh, dc = d_gates @ w_hh, dc * f
    dt, dev = input.dtype, input.device
    return tuple(_fresh(a.astype(dt.np), dt, dev) for a in (dx, dw_ih, dw_hh, db, db, dh, dc))


derivatives(mkldnn_rnn_layer, {
    # with grad mode on (create_graph=True) torch runs the backward written with ordinary ops
    # (reftrace/autograd/_functions_manual_rnn.py), so that it can be differentiated again
    "input, weight0, weight1, weight2, weight3, hx_, cx_":
        "(mkldnn_rnn_layer_differentiable_backward if is_grad_enabled() else "
        "mkldnn_rnn_layer_backward)(input, weight0, weight1, weight2, weight3, hx_, cx_, result0, "
        "result1, result2, grads[0], grads[1], grads[2], reverse, mode, hidden_size, num_layers, "
        "has_biases, train, bidirectional, batch_sizes, batch_first, result3)"},
    output_differentiability=(True, True, True, False))


def mkldnn_lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first):
    """mkldnn/RNN.cpp's mkldnn_rnn for an LSTM, written with recorded ops: per layer and
    direction one mkldnn_rnn_layer (zero biases made when the module has none), dropout between
    layers when training, the final states stacked. ``input`` is time-major (batch_first's
    transposes are the caller's)."""
    from ._registry import get_packet
    cat, stack, zeros, dropout_op = (get_packet(n) for n in ("cat", "stack", "zeros", "dropout"))
    layer_input, (h0, c0) = input.contiguous(), hx
    directions = 2 if bidirectional else 1
    per = len(params) // (num_layers * directions)
    hys, cys = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            w = params[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (
                zeros([w[0].shape[0]], dtype=w[0].dtype), zeros([w[1].shape[0]], dtype=w[1].dtype))
            out, hy, cy, _ = mkldnn_rnn_layer(layer_input, w[0], w[1], b_ih, b_hh, h0[k], c0[k],
                                              d == 1, [], _LSTM_MODE, h0.shape[2], num_layers,
                                              has_biases, bidirectional, batch_first, train)
            outs.append(out)
            hys.append(hy)
            cys.append(cy)
        layer_input = outs[0] if directions == 1 else cat(outs, -1)
        if dropout != 0 and train and layer < num_layers - 1:
            layer_input = dropout_op(layer_input, dropout, True)
    return layer_input, stack(hys, 0), stack(cys, 0)


def uses_onednn(input, params, per):
    """RNN.cpp's use_mkldnn for aten::lstm.input: a non-empty float32 input, no projections."""
    return input.dtype is D.float32 and input.numel() != 0 and per in (2, 4)
