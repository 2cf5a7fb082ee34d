"""FunctionsManual's mkldnn_rnn_layer_differentiable_backward (torch 2.13): the backward of one
oneDNN LSTM layer and direction written with ordinary ops. torch's derivatives.yaml uses it for
aten::mkldnn_rnn_layer when grad mode is on (create_graph=True), so that the gradients are
themselves differentiable; with grad mode off the fused mkldnn_rnn_layer_backward runs.

The forward gates are recomputed step by step, then the steps are walked back: a step's gate
gradients are concatenated, give that step's input gradient (the steps' gradients concatenated at
the end: the result's grad_fn is CatBackward0) and accumulate, in place, the weights' and the
bias's gradients. The ops (in-place ones included) are torch's, so the recorded graph is too.
"""
import reftrace as _rt


def _one_minus(t):
    """C++'s ``1 - t`` (ATen's operator-(Scalar, Tensor)): ``empty_like(t).fill_(1).sub_(t)``,
    recorded as SubBackward0 (not Python's RsubBackward1)."""
    return _rt.empty_like(t).fill_(1).sub_(t)


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
    if has_biases:
        bias_ih, bias_hh = weight2, weight3
    else:
        bias_ih = _rt.zeros([4 * hidden_size], dtype=weight0.dtype)  # 4 gates of the LSTM
        bias_hh = _rt.zeros([4 * hidden_size], dtype=weight0.dtype)

    # re-calculate the gates and states of the layer, in the order the forward ran
    seq_length = input.size(0)
    layer_gates = [None] * seq_length  # by input position
    layer_states = [(hx_, cx_tmp)] + [None] * seq_length  # by run step
    hx_prev, cx_prev = hx_, cx_tmp
    for seq in range(1, seq_length + 1):
        x_index = seq_length - seq if reverse else seq - 1
        gate = _rt.nn.functional.linear(input[x_index], weight0, bias_ih).add_(
            _rt.nn.functional.linear(hx_prev, weight1, bias_hh))
        i, f, g, o = gate.unsafe_chunk(4, 1)
        i, f, g, o = i.sigmoid_(), f.sigmoid_(), g.tanh_(), o.sigmoid_()
        layer_gates[x_index] = (i, f, g, o)
        cy = (f * cx_prev).add(i * g)
        hy = o * cy.tanh()
        layer_states[seq] = (hy, cy)
        hx_prev, cx_prev = hy, cy

    layer_dx = [None] * seq_length
    for seq in range(seq_length - 1, -1, -1):
        x_index = seq_length - seq - 1 if reverse else seq
        i, f, g, o = layer_gates[x_index]
        cy = layer_states[seq + 1][1]
        hx, cx = layer_states[seq]
        new_grad_hy = grad_output[x_index].add(grad_hy)
        d1 = grad_cy.add(new_grad_hy * o * _one_minus(cy.tanh() * cy.tanh()))
        dgp, dip, dprev_c, dfp = d1 * i, d1 * g, d1 * f, d1 * cx
        dop = new_grad_hy * cy.tanh()
        do_ = dop * o * _one_minus(o)
        dg = dgp * _one_minus(g * g)
        df = dfp * f * _one_minus(f)
        di = dip * i * _one_minus(i)
        da = _rt.cat([di, df, dg, do_], 1)
        db_ = _rt.sum(da, 0)
        dx = _rt.matmul(da, weight0).unsqueeze(0)
        dprev_h = _rt.matmul(da, weight1)
        dWx_ = _rt.matmul(da.transpose(0, 1), input[x_index])
        dWh_ = _rt.matmul(da.transpose(0, 1), hx)
        if seq == seq_length - 1:
            db, dWx, dWh = db_, dWx_, dWh_
        else:  # (in place, as torch's +=)
            db += db_
            dWx += dWx_
            dWh += dWh_
        layer_dx[x_index] = dx
        grad_hy, grad_cy = dprev_h, dprev_c
    return _rt.cat(layer_dx, 0), dWx, dWh, db, db, dprev_h, dprev_c
