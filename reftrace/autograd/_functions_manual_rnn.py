"""FunctionsManual's mkldnn_rnn_layer_differentiable_backward (torch 2.13): the backward of one
oneDNN LSTM layer and direction written with ordinary ops, which torch's derivatives.yaml uses
for aten::mkldnn_rnn_layer when grad mode is on (create_graph=True), so that the gradients are
themselves differentiable. (With grad mode off the fused mkldnn_rnn_layer_backward runs.)

The forward gates are recomputed step by step (linear, sigmoid/tanh of the chunks i, f, g, o),
then the steps are walked back: the gate gradients of a step are concatenated, they give the
input's gradient of that step (one per step, concatenated at the end: the result's grad_fn is
CatBackward0), and accumulate the weights' and bias's gradients.
"""
import reftrace as _rt


def mkldnn_rnn_layer_differentiable_backward(input, weight0, weight1, weight2, weight3, hx_,
                                             cx_tmp, output, hy_, cy_, grad_output_r, grad_hy_r,
                                             grad_cy_r, reverse, mode, hidden_size, num_layers,
                                             has_biases, train, bidirectional, batch_sizes,
                                             batch_first, workspace):
    if grad_output_r is None and grad_hy_r is None and grad_cy_r is None:
        return (None,) * 7
    grad_output = (grad_output_r.contiguous() if grad_output_r is not None
                   else _rt.zeros_like(output))
    grad_hy = grad_hy_r.contiguous() if grad_hy_r is not None else _rt.zeros_like(hx_)
    grad_cy = grad_cy_r.contiguous() if grad_cy_r is not None else _rt.zeros_like(cx_tmp)
    seq_length = input.size(0)

    # the forward again, keeping each step's gates and states (index: position in the input)
    steps = [seq_length - 1 - s for s in range(seq_length)] if reverse else range(seq_length)
    layer_gates, layer_cx, layer_hx = [None] * seq_length, [None] * seq_length, [None] * seq_length
    hx_prev, cx_prev = hx_, cx_tmp
    for t in steps:
        gates = _rt.nn.functional.linear(input[t], weight0, weight2) + \
            _rt.nn.functional.linear(hx_prev, weight1, weight3)
        i, f, g, o = gates.unsafe_chunk(4, 1)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        layer_gates[t], layer_cx[t], layer_hx[t] = (i, f, g, o), cx_prev, hx_prev
        cx_prev = f * cx_prev + i * g
        hx_prev = o * cx_prev.tanh()
    cys = {}  # the cell state each step produced
    for k, t in enumerate(steps):
        nxt = steps[k + 1] if k + 1 < seq_length else None
        cys[t] = layer_cx[nxt] if nxt is not None else cx_prev

    dWx = dWh = db = dprev_h = dprev_c = None
    layer_dx = [None] * seq_length
    for t in reversed(list(steps)):
        i, f, g, o = layer_gates[t]
        cy, c_prev, h_prev = cys[t], layer_cx[t], layer_hx[t]
        tanh_cy = cy.tanh()
        new_grad_hy = grad_output[t] + grad_hy
        d1 = grad_cy + new_grad_hy * o * (1 - tanh_cy * tanh_cy)
        di = d1 * g * i * (1 - i)
        df = d1 * c_prev * f * (1 - f)
        dg = d1 * i * (1 - g * g)
        do = new_grad_hy * tanh_cy * o * (1 - o)
        da = _rt.cat([di, df, dg, do], 1)
        layer_dx[t] = _rt.matmul(da, weight0).unsqueeze(0)
        dprev_h = _rt.matmul(da, weight1)
        dprev_c = d1 * f
        dWx_ = _rt.matmul(da.t(), input[t])
        dWh_ = _rt.matmul(da.t(), h_prev)
        db_ = da.sum(0)
        if dWx is None:
            dWx, dWh, db = dWx_, dWh_, db_
        else:
            dWx, dWh, db = dWx + dWx_, dWh + dWh_, db + db_
        grad_hy, grad_cy = dprev_h, dprev_c
    return _rt.cat(layer_dx, 0), dWx, dWh, db, db, dprev_h, dprev_c
