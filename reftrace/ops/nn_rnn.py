"""Recurrent layers: aten::lstm / gru / rnn_tanh / rnn_relu and the four cells (ATen's RNN.cpp).

What a trace records (torch 2.13, probed):
- ``nn.LSTM/GRU/RNN`` record ONE node, ``aten::lstm`` (or gru, rnn_tanh, rnn_relu), overload
  ``.input`` ``(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
  batch_first)`` for a dense input, ``.data`` ``(data, batch_sizes, hx, params, ...)`` (no
  batch_first) for a PackedSequence. ``params`` is the module's ``_flat_weights`` list, per layer
  and direction ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``; for LSTM ``hx`` is the list ``[h0, c0]``.
- The cells are NOT recorded as ``aten::lstm_cell`` ...: torch's tracer lists them in
  DONT_RECORD_TRACE, so a trace holds their decomposition (linear, add_, unsafe_chunk, sigmoid_,
  tanh_, mul, ...). The functions ``lstm_cell`` ... below are that decomposition, written with the
  public ops, so they record exactly those nodes.

The kernels follow RNN.cpp's CPU path: the input projection of a whole layer is computed once
(``linear_ih(inputs)``, pre_compute_input), then per time step ``linear_hh(h).add_(gates)`` and
the cell's gate arithmetic in torch's order (LSTM gates i, f, g, o; GRU gates r, z, n).
A packed input is the same loop with a batch size per step (PackedLayer): finished sequences
leave the hidden state as the batch shrinks, and the reverse direction starts from the shortest.

Derivatives: aten::lstm/gru/rnn_* and the cells have no derivatives.yaml entry: on CPU they are
CompositeImplicitAutograd, so autograd differentiates through the decomposition: each
``.input``/``.data`` overload has ``rnn_decomposition`` (written with public, recorded ops) as its
``composite``, which autograd runs instead of the fast kernel when a gradient is needed. A dense
float32 LSTM without projections goes to oneDNN's layer op instead, as in torch
(nn_rnn_onednn.py: one MkldnnRnnLayerBackward0 per layer and direction). Inside jit.trace a
dense call runs the fast kernel and records that graph only when something reads it
(autograd/_deferred.py): a trace's own outputs are dropped unread.
"""
import numpy as np

from .. import _dtype as D
from ..autograd import _deferred
from .._tensor import _fresh, _view_of
from ._registry import composite, derivatives, get_packet, op
from .arithmetic import run_quiet
from .nn_misc import _dropout
from .nn_rnn_onednn import mkldnn_lstm, uses_onednn

_MODES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


# -- the numerical kernel: one loop for every mode, dense or packed ------------------------------

# The transcendental functions as reftrace's sigmoid/tanh ops compute them (pointwise_math: in
# float64 for a float32 input, then rounded), so the kernel gives the decomposition's bits: a
# result does not depend on whether a gradient was recorded (as in torch).
_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float32}


def _sigmoid_into(w, out, wide, one):
    """1 / (1 + exp(-w)) of the wide array w (overwritten), rounded into out; ``one`` is 1 as a
    scalar of the wide type (the loop the int 1 picks, without converting it on every call)."""
    np.negative(w, out=w)
    np.exp(w, out=w)
    np.add(w, one, out=w)
    np.divide(one, w, out=out, dtype=wide)


def _gate_major(lead, k, n, dt):
    """(gates, as_out): k gates of n lanes stored gate-major, ``gates[j]`` one contiguous
    (*lead, n) array, and the view of the same memory shaped (*lead, k, n) as the gate columns of
    a (*lead, k * n) result fall: a ufunc writing it spreads the columns into the gates."""
    gates = np.empty((k,) + lead + (n,), dt)
    return gates, gates.transpose(tuple(range(1, len(lead) + 1)) + (0, len(lead) + 1))


def _step_kernel(mode, lead, n, dt, w_hh_t, b_hh, w_hr_t):
    """One time step of ``mode`` over a batch of shape ``lead`` ((B,), or (2, B): both directions
    of a layer at once, with stacked weights), its work arrays allocated once. Returns ``(step,
    state)``: ``step(h, c, gx, h_out)`` writes the next hidden state into h_out; gx is the step's
    precomputed input projection (with b_ih). An LSTM's cell state lives in ``state`` (the
    kernel's own array: c is copied in unless it is ``state``), else state is None.

    The arithmetic is RNN.cpp's cells in torch's order (LSTM gates i, f, g, o; GRU gates r, z, n),
    each product and sum rounded in the tensor's type dt; sigmoid and tanh run in the wide type
    (_WIDER), rounded to dt by the ufunc's output cast (``dtype=`` picks the loop, ``out=`` the
    rounding). The gates' sigmoids are written gate-major (_gate_major), so the products that
    follow run on contiguous arrays. The step is few NumPy calls: this loop is the op's cost."""
    wide = np.dtype(_WIDER.get(dt, dt))
    one = wide.type(1)

    def buf(k, t=dt):
        return np.empty(lead + (k,), t)
    g = buf(_MODES[mode] * n)
    b = None
    if b_hh is not None:  # b_hh for every row: the step's add runs on contiguous arrays
        b = np.empty_like(g)
        b[...] = b_hh
    if mode == "lstm":
        w = buf(4 * n, wide)
        w_g, w_gates = w[..., 2 * n:3 * n], w.reshape(lead + (4, n))
        sig, sig_out = _gate_major(lead, 4, n, dt)  # i, f, g (unused), o
        pair = np.empty((2,) + lead + (n,), dt)  # tanh(g) and c: times i and f in one call
        tanh_g, state = pair[0], pair[1]
        prod, tanh_c = np.empty_like(pair), buf(n)
        h_pre = buf(n) if w_hr_t is not None else None

        def step(h, c, gx, h_out):
            np.matmul(h, w_hh_t, out=g)
            if b is not None:
                np.add(g, b, out=g)
            np.add(g, gx, out=w, dtype=dt)  # the gates, rounded in dt, then widened
            np.tanh(w_g, out=tanh_g, dtype=wide)
            _sigmoid_into(w_gates, sig_out, wide, one)
            if c is not state:
                np.copyto(state, c)
            np.multiply(sig[:2], pair, out=prod)  # i * tanh(g), f * c
            np.add(prod[1], prod[0], out=state)  # c' = f * c + i * tanh(g)
            np.tanh(state, out=tanh_c, dtype=wide)
            if h_pre is None:
                np.multiply(sig[3], tanh_c, out=h_out)
            else:
                np.multiply(sig[3], tanh_c, out=h_pre)
                np.matmul(h_pre, w_hr_t, out=h_out)
        return step, state
    if mode == "gru":
        w = buf(2 * n, wide)
        w_gates, g_rz, g_n = w.reshape(lead + (2, n)), g[..., :2 * n], g[..., 2 * n:]
        (r, z), rz_out = _gate_major(lead, 2, n, dt)
        pre, new = buf(n), buf(n)

        def step(h, c, gx, h_out):
            np.matmul(h, w_hh_t, out=g)
            if b is not None:
                np.add(g, b, out=g)
            np.add(g_rz, gx[..., :2 * n], out=w, dtype=dt)
            _sigmoid_into(w_gates, rz_out, wide, one)
            np.multiply(g_n, r, out=pre)
            np.add(pre, gx[..., 2 * n:], out=pre)
            np.tanh(pre, out=new, dtype=wide)
            np.subtract(h, new, out=h_out)  # h' = (h - n) * z + n
            np.multiply(h_out, z, out=h_out)
            np.add(h_out, new, out=h_out)
        return step, None
    tanh = mode == "rnn_tanh"

    def step(h, c, gx, h_out):
        np.matmul(h, w_hh_t, out=g)
        if b is not None:
            np.add(g, b, out=g)
        np.add(g, gx, out=g)
        if tanh:
            np.tanh(g, out=h_out, dtype=wide)
        else:
            np.maximum(g, 0, out=h_out)
    return step, None


def _projection(x, w_ih, b_ih):
    """pre_compute_input: the input projection of every step at once (one GEMM), with b_ih."""
    gx = x @ w_ih.T
    if b_ih is not None:
        gx += b_ih
    return gx


def _sizes_of(mode, params):
    """(hidden size, output size) of one layer and direction: w_hh is (gates * H, P)."""
    w_hh, w_hr = params[1], params[4]
    n = w_hh.shape[0] // _MODES[mode]
    return n, (w_hr.shape[0] if w_hr is not None else n)


def _layer(mode, x, sizes, h0, c0, params, reverse):
    """One direction of one layer over a packed sequence: x is (sum(sizes), in), sizes the batch
    size of each step (all equal for a dense input). Returns (output rows, h_n, c_n). Each step
    writes its hidden state straight into its output rows (the next step's h)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = params
    gx = _projection(x, w_ih, b_ih)
    dt = h0.dtype
    n, p = _sizes_of(mode, params)
    w_hh_t, w_hr_t = w_hh.T, (w_hr.T if w_hr is not None else None)
    out = np.empty((gx.shape[0], p), dt)
    kernels = {}  # batch size -> (step, state) (a packed input's batch narrows)
    starts = [0] * len(sizes)
    for t in range(1, len(sizes)):
        starts[t] = starts[t - 1] + sizes[t - 1]

    def run(t, h, c):
        bs, at = sizes[t], starts[t]
        kernel = kernels.get(bs)
        if kernel is None:
            kernel = kernels[bs] = _step_kernel(mode, (bs,), n, dt, w_hh_t, b_hh, w_hr_t)
        h_out = out[at:at + bs]
        kernel[0](h, c, gx[at:at + bs], h_out)
        return h_out, kernel[1]

    if not reverse:
        h, c = h0, c0
        done_h, done_c = [], []
        last = sizes[0] if len(sizes) else 0
        for t, bs in enumerate(sizes):
            if bs < last:  # sequences that ended: their final state is kept aside
                done_h.append(h[bs:last])
                h = h[:bs]
                if c is not None:
                    done_c.append(c[bs:last].copy())
                    c = c[:bs]
            last = bs
            h, c = run(t, h, c)
        h_n = np.concatenate([h] + done_h[::-1], 0) if done_h else h
        c_n = (np.concatenate([c] + done_c[::-1], 0) if done_c else c) if c is not None else None
    else:
        last = sizes[-1]
        h = h0[:last]
        c = c0[:last] if c0 is not None else None
        for t in range(len(sizes) - 1, -1, -1):
            bs = sizes[t]
            if bs > last:  # longer sequences join, from their initial state
                h = np.concatenate([h, h0[last:bs]], 0)
                if c is not None:
                    c = np.concatenate([c, c0[last:bs]], 0)
            last = bs
            h, c = run(t, h, c)
        h_n, c_n = h, c
    return out, h_n, c_n


def _stackable(pair):
    """Both directions' recurrent weights C-contiguous: stacked, each keeps its memory layout, so
    the batched GEMM runs the same BLAS call per direction as two separate ones."""
    return all(w is None or w.flags.c_contiguous for p in pair for w in (p[1], p[4]))


def _both_directions(mode, x, steps, batch, h0, c0, pair):
    """Both directions of one layer over a dense input, run together: step s is the forward
    direction's time s and the reverse direction's time steps - 1 - s, on (2, B, ...) arrays
    (half the NumPy calls of two single-direction loops, the same arithmetic per direction).
    h0, c0: the layer's (2, B, ...) initial states. Returns (output rows, h_n, c_n), each
    direction's output in its half of the features, as _layer's two outputs concatenated."""
    (fwd, rev), dt = pair, h0.dtype
    n, p = _sizes_of(mode, fwd)
    gx_f = _projection(x, fwd[0], fwd[2]).reshape(steps, batch, -1)
    gx_r = _projection(x, rev[0], rev[2]).reshape(steps, batch, -1)
    gx = np.empty((steps, 2, batch, gx_f.shape[-1]), dt)
    gx[:, 0] = gx_f
    gx[:, 1] = gx_r[::-1]
    w_hh_t = np.array((fwd[1], rev[1])).transpose(0, 2, 1)
    b_hh = np.array((fwd[3], rev[3]))[:, None] if fwd[3] is not None else None
    w_hr_t = np.array((fwd[4], rev[4])).transpose(0, 2, 1) if fwd[4] is not None else None
    step, state = _step_kernel(mode, (2, batch), n, dt, w_hh_t, b_hh, w_hr_t)
    hs = np.empty((steps, 2, batch, p), dt)
    h = h0
    for s in range(steps):
        step(h, c0 if s == 0 else state, gx[s], hs[s])
        h = hs[s]
    out = np.empty((steps, batch, 2 * p), dt)
    out[..., :p] = hs[:, 0]
    out[..., p:] = hs[::-1, 1]
    return out.reshape(steps * batch, 2 * p), h, state


def _group_params(params, has_biases, groups):
    """The flat weight list -> per (layer, direction) (w_ih, w_hh, b_ih, b_hh, w_hr): each group is
    ``w_ih, w_hh[, b_ih, b_hh][, w_hr]`` (3 or 5 entries: with an LSTM projection)."""
    n = len(params) // groups
    out = []
    for k in range(groups):
        p = [t._array for t in params[k * n:(k + 1) * n]]
        b_ih, b_hh = (p[2], p[3]) if has_biases else (None, None)
        out.append((p[0], p[1], b_ih, b_hh, p[-1] if n in (3, 5) else None))
    return out


def _check_params(name, params, has_biases, num_layers, num_directions):
    n = len(params)
    per = n // (num_layers * num_directions) if num_layers * num_directions else 0
    valid = {4 if has_biases else 2, 5 if has_biases else 3} if name == "lstm" else {4 if has_biases else 2}
    if per * num_layers * num_directions != n or per not in valid:
        raise RuntimeError(f"{name}: got an incorrect number of RNN parameters")


def _dropout_between(layer_out, like, layer, num_layers, dropout, train):
    if dropout != 0 and train and layer < num_layers - 1:
        # at::dropout(layer_output, p, /*train=*/true), drawn from the global generator
        return _dropout(_fresh(layer_out, like.dtype, like.device), dropout, True, False,
                        False)._array
    return layer_out


def _run(name, like, x, sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
    """The layer stack over packed rows x (sum(sizes), input_size); hx: (L*D, B, H) arrays; like:
    the input tensor (dtype and device of the dropout between layers)."""
    directions = 2 if bidirectional else 1
    _check_params(name, params, has_biases, num_layers, directions)
    groups = _group_params(params, has_biases, num_layers * directions)
    h0, c0 = hx
    hs, cs = [], []
    layer_in = x
    together = directions == 2 and sizes.count(sizes[0]) == len(sizes)  # dense (or unpadded)
    for layer in range(num_layers):
        k = layer * directions
        if together and _stackable(groups[k:k + 2]):
            layer_in, h_n, c_n = _both_directions(name, layer_in, len(sizes), sizes[0],
                                                  h0[k:k + 2], None if c0 is None else c0[k:k + 2],
                                                  groups[k:k + 2])
            hs += [h_n[0], h_n[1]]
            cs += [None, None] if c_n is None else [c_n[0], c_n[1]]
            layer_in = _dropout_between(layer_in, like, layer, num_layers, dropout, train)
            continue
        outs = []
        for d in range(directions):
            k = layer * directions + d
            out, h_n, c_n = _layer(name, layer_in, sizes, h0[k], None if c0 is None else c0[k],
                                   groups[k], d == 1)
            outs.append(out)
            hs.append(h_n)
            cs.append(c_n)
        layer_in = outs[0] if directions == 1 else np.concatenate(outs, -1)
        layer_in = _dropout_between(layer_in, like, layer, num_layers, dropout, train)
    return layer_in, np.stack(hs, 0), (np.stack(cs, 0) if c0 is not None else None)


def _check_input(name, input, hx_list, params):
    if input.dtype.category != 2 or input.dtype.is_complex:
        raise RuntimeError(f"{name}: expected a floating point input, got {input.dtype}")
    for t in list(hx_list) + list(params):
        if t.dtype != input.dtype:
            raise RuntimeError(f"Expected all tensors to have the same dtype, but found "
                               f"{t.dtype} and {input.dtype}")


def _dense(name, input, hx_list, params, has_biases, num_layers, dropout, train, bidirectional,
           batch_first):
    _check_input(name, input, hx_list, params)
    if input._array.ndim != 3:
        raise RuntimeError(f"input must have 3 dimensions, got {input._array.ndim}")
    a = input._array
    if batch_first:
        a = a.transpose(1, 0, 2)
    steps, batch = a.shape[0], a.shape[1]
    if steps == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    x = np.ascontiguousarray(a).reshape(steps * batch, a.shape[2])
    h0 = hx_list[0]._array
    c0 = hx_list[1]._array if len(hx_list) > 1 else None
    out, h_n, c_n = run_quiet(_run, name, input, x, [batch] * steps, (h0, c0), params, has_biases,
                              num_layers, dropout, train, bidirectional)
    out = out.reshape(steps, batch, out.shape[-1]).astype(input.dtype.np, copy=False)
    output = _fresh(out, input.dtype, input.device)
    if batch_first:  # torch returns output.transpose(0, 1): a view, strides (H, B*H, 1)
        output = _transposed01(output)
    results = [output, _fresh(h_n.astype(input.dtype.np, copy=False), input.dtype, input.device)]
    if c_n is not None:
        results.append(_fresh(c_n.astype(input.dtype.np, copy=False), input.dtype, input.device))
    return tuple(results)


def _packed_sizes(batch_sizes):
    """The packed input's batch size per time step, checked as RNN.cpp does."""
    if batch_sizes.dtype != D.int64 or batch_sizes._array.ndim != 1:
        raise RuntimeError("batch_sizes must be a 1D CPU int64 tensor")
    sizes = [int(s) for s in batch_sizes._array]
    if not sizes:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    return sizes


def _packed(name, data, batch_sizes, hx_list, params, has_biases, num_layers, dropout, train,
            bidirectional):
    _check_input(name, data, hx_list, params)
    sizes = _packed_sizes(batch_sizes)
    h0 = hx_list[0]._array
    c0 = hx_list[1]._array if len(hx_list) > 1 else None
    out, h_n, c_n = run_quiet(_run, name, data, data._array, sizes, (h0, c0), params, has_biases,
                              num_layers, dropout, train, bidirectional)
    results = [_fresh(out.astype(data.dtype.np, copy=False), data.dtype, data.device),
               _fresh(h_n.astype(data.dtype.np, copy=False), data.dtype, data.device)]
    if c_n is not None:
        results.append(_fresh(c_n.astype(data.dtype.np, copy=False), data.dtype, data.device))
    return tuple(results)


def _transposed01(t):
    """t.transpose(0, 1) as a view (torch's batch_first results)."""
    st = t.stride()
    return _view_of(t, t._array.swapaxes(0, 1), (st[1], st[0]) + tuple(st[2:]))


def _hx_pair(hx):
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return hx


@op("lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, "
    "float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)")
def lstm_input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
               batch_first):
    return _dense("lstm", input, _hx_pair(hx), params, has_biases, num_layers, dropout, train,
                  bidirectional, batch_first)


@op("lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, "
    "int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)")
def lstm_data(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
              bidirectional):
    return _packed("lstm", data, batch_sizes, _hx_pair(hx), params, has_biases, num_layers,
                   dropout, train, bidirectional)


def _register_single_state(name):
    @op(f"{name}.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, "
        "float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)")
    def dense(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
              batch_first):
        return _dense(name, input, [hx], params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first)

    @op(f"{name}.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, "
        "int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)")
    def packed(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
               bidirectional):
        return _packed(name, data, batch_sizes, [hx], params, has_biases, num_layers, dropout,
                       train, bidirectional)
    return dense, packed


gru_input, gru_data = _register_single_state("gru")
rnn_tanh_input, rnn_tanh_data = _register_single_state("rnn_tanh")
rnn_relu_input, rnn_relu_data = _register_single_state("rnn_relu")


# -- unsafe_chunk: the cells' gate split -----------------------------------------------------------

@op("unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", variants=("function", "method"))
def unsafe_chunk(self, chunks, dim):
    # chunk's views, which autograd does not treat as views ("unsafe"): in-place ops on them
    # (the cells' sigmoid_) are allowed without view bookkeeping; they share self's storage and
    # each has a version counter of its own (TensorShape.cpp unsafe_split)
    parts = get_packet("chunk").overloads[0].kernel(self, chunks, dim)
    for p in parts:
        p._view_meta = False
        p._vc = [0]
    return parts


# unsafe_chunk is CompositeImplicitAutograd: it is unsafe_split(self, ceil(size / chunks), dim),
# whose entry is this (derivatives.yaml: unsafe_split.Tensor)
derivatives(unsafe_chunk, {
    "self": "split_backward(grads, (self.shape[dim] + chunks - 1) // chunks, dim, self.shape, "
            "self)"})


# -- the cells: recorded as their decomposition (RNN.cpp's CellParams / LSTMCell / GRUCell) --------

def _ops():
    return {n: get_packet(n) for n in ("linear", "unsafe_chunk", "sigmoid_", "tanh_", "tanh",
                                       "relu", "mul", "add", "add_", "sub", "mul_", "matmul",
                                       "stack", "cat", "dropout")}


def _check_cell_input(input, w_ih):
    if input._array.shape[1] != w_ih._array.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input._array.shape[1]} "
                           f"expected {w_ih._array.shape[1]}")


def _check_cell_hidden(input, hx, hidden_size, k):
    if input._array.shape[0] != hx._array.shape[0]:
        raise RuntimeError(f"Input batch size {input._array.shape[0]} doesn't match hidden{k} "
                           f"batch size {hx._array.shape[0]}")
    if hx._array.shape[1] != hidden_size:
        raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {hx._array.shape[1]}, "
                           f"expected {hidden_size}")


# One step of each cell (RNN.cpp's LSTMCell / GRUCell / SimpleCell). ``x_gates`` gives the input
# projection: linear_ih(input) for the cells, a precomputed row for the whole-sequence ops. It is
# a function because C++ evaluates linear_hh(hx) first, then the argument of its add_.

def _lstm_step(F, x_gates, hx, cx, w_hh, b_hh, w_hr=None):
    gates = F["add_"](F["linear"](hx, w_hh, b_hh), x_gates())
    i, f, g, o = F["unsafe_chunk"](gates, 4, 1)
    i, f, g, o = F["sigmoid_"](i), F["sigmoid_"](f), F["tanh_"](g), F["sigmoid_"](o)
    cy = F["add_"](F["mul"](f, cx), F["mul"](i, g))
    hy = F["mul"](o, F["tanh"](cy))
    if w_hr is not None:  # params.matmul_hr
        hy = F["matmul"](hy, w_hr.t())
    return hy, cy


def _gru_step(F, x_gates, hx, w_hh, b_hh):
    ig = F["unsafe_chunk"](x_gates(), 3, 1)
    hg = F["unsafe_chunk"](F["linear"](hx, w_hh, b_hh), 3, 1)
    reset = F["sigmoid_"](F["add_"](hg[0], ig[0]))
    update = F["sigmoid_"](F["add_"](hg[1], ig[1]))
    new = F["tanh_"](F["add"](ig[2], F["mul_"](hg[2], reset)))
    return F["add_"](F["mul_"](F["sub"](hx, new), update), new)


def _simple_step(F, x_gates, hx, w_hh, b_hh, nonlinearity):
    return F[nonlinearity](F["add_"](F["linear"](hx, w_hh, b_hh), x_gates()))


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.lstm_cell: linear_hh(hx).add_(linear_ih(input)), chunked into gates i, f, g, o."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _check_cell_input(input, w_ih)
    _check_cell_hidden(input, hx[0], w_hh._array.shape[1], 0)
    _check_cell_hidden(input, hx[1], w_hh._array.shape[1], 1)
    F = _ops()
    return _lstm_step(F, lambda: F["linear"](input, w_ih, b_ih), hx[0], hx[1], w_hh, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """torch.gru_cell (CPU path): reset and update gates, then the new gate scaled by reset."""
    _check_cell_input(input, w_ih)
    _check_cell_hidden(input, hx, w_hh._array.shape[1], 0)
    F = _ops()
    return _gru_step(F, lambda: F["linear"](input, w_ih, b_ih), hx, w_hh, b_hh)


def _simple_cell(nonlinearity):
    def cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        _check_cell_input(input, w_ih)
        _check_cell_hidden(input, hx, w_hh._array.shape[1], 0)
        F = _ops()
        return _simple_step(F, lambda: F["linear"](input, w_ih, b_ih), hx, w_hh, b_hh, nonlinearity)
    cell.__name__ = f"rnn_{nonlinearity}_cell"
    cell.__doc__ = f"torch.rnn_{nonlinearity}_cell: {nonlinearity}(linear_hh(hx).add_(linear_ih(input)))"
    return cell


rnn_tanh_cell = _simple_cell("tanh")
rnn_relu_cell = _simple_cell("relu")


def _cell(F, name, p, per, has_biases):
    """RNN.cpp's cell_ for one (layer, direction): hidden -> next hidden, given a precomputed input
    projection row (pre_compute_input). LSTM hiddens are (h, c) pairs."""
    w_hh = p[1]
    b_hh = p[3] if has_biases else None
    if name == "lstm":
        w_hr = p[-1] if per in (3, 5) else None
        return lambda x, hid: _lstm_step(F, lambda: x, hid[0], hid[1], w_hh, b_hh, w_hr)
    if name == "gru":
        return lambda x, h: _gru_step(F, lambda: x, h, w_hh, b_hh)
    return lambda x, h: _simple_step(F, lambda: x, h, w_hh, b_hh, name[4:])


def _as_output(hidden):
    return hidden[0] if isinstance(hidden, tuple) else hidden  # hidden_as_output


def _slice(hidden, start, end):  # hidden_slice: narrow(0, start, end - start) of each state
    if isinstance(hidden, tuple):
        return tuple(_slice(h, start, end) for h in hidden)
    return hidden.narrow(0, start, end - start)


def _concat(F, hiddens):  # hidden_concat: at::cat of each state
    if isinstance(hiddens[0], tuple):
        return tuple(F["cat"](list(parts), 0) for parts in zip(*hiddens))
    return F["cat"](hiddens, 0)


def _full_layer(F, cell, inputs_w, hidden, reverse):
    """FullLayer / ReversedFullLayer (CPU): one cell step per row of the unbound projection, the
    outputs stacked in time order."""
    rows = inputs_w.unbind(0)
    outs = []
    for x in (reversed(rows) if reverse else rows):
        hidden = cell(x, hidden)
        outs.append(_as_output(hidden))
    if reverse:
        outs.reverse()
    return F["stack"](outs, 0), hidden


def _packed_layer(F, cell, inputs_w, sizes, hidden, reverse):
    """PackedLayer / ReversedPackedLayer: the batch narrows per step; finished sequences' states
    are sliced off (forward) or joined from the initial state (reverse)."""
    outs = []
    if not reverse:
        offset, last, done = 0, sizes[0], []
        for bs in sizes:
            step = inputs_w.narrow(0, offset, bs)
            offset += bs
            if last - bs > 0:
                done.append(_slice(hidden, bs, last))
                hidden = _slice(hidden, 0, bs)
            last = bs
            hidden = cell(step, hidden)
            outs.append(_as_output(hidden))
        done.append(hidden)
        done.reverse()
        return F["cat"](outs, 0), _concat(F, done)
    offset, last = inputs_w.shape[0], sizes[-1]
    initial, hidden = hidden, _slice(hidden, 0, sizes[-1])
    for bs in reversed(sizes):
        if bs - last > 0:
            hidden = _concat(F, [hidden, _slice(initial, last, bs)])
        step = inputs_w.narrow(0, offset - bs, bs)
        offset -= bs
        last = bs
        hidden = cell(step, hidden)
        outs.append(_as_output(hidden))
    outs.reverse()
    return F["cat"](outs, 0), hidden


def rnn_decomposition(name, input, sizes, hx, params, has_biases, num_layers, dropout, train,
                      bidirectional):
    """aten::lstm/gru/rnn_tanh/rnn_relu written with public (recorded, differentiable) ops, as
    RNN.cpp's CPU path (_rnn_impl / apply_layer_stack) runs it: the initial states unbound per
    layer and direction; per layer and direction the input projection of the whole sequence
    (pre_compute_input), one cell step per time step; the two directions concatenated, dropout
    between layers when training; the final states stacked. ``input`` is time-major; ``sizes``
    is None for a dense input, else the packed batch sizes (then ``input`` is the packed rows)."""
    F = _ops()
    directions = 2 if bidirectional else 1
    per = len(params) // (num_layers * directions)
    if name == "lstm":
        hiddens = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
    else:
        hiddens = list(hx.unbind(0))
    layer_input, finals = input, []
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            k = layer * directions + d
            p = params[k * per:(k + 1) * per]
            cell = _cell(F, name, p, per, has_biases)
            inputs_w = F["linear"](layer_input, p[0], p[2] if has_biases else None)
            if sizes is None:
                out, final = _full_layer(F, cell, inputs_w, hiddens[k], d == 1)
            else:
                out, final = _packed_layer(F, cell, inputs_w, sizes, hiddens[k], d == 1)
            outs.append(out)
            finals.append(final)
        layer_input = outs[0] if directions == 1 else F["cat"](outs, outs[0].dim() - 1)
        if dropout != 0 and train and layer < num_layers - 1:
            layer_input = F["dropout"](layer_input, dropout, True)
    if name == "lstm":
        return (layer_input, F["stack"]([h for h, _ in finals], 0),
                F["stack"]([c for _, c in finals], 0))
    return layer_input, F["stack"](finals, 0)


def _register_composites(name, dense, packed):
    """aten::<name>.input/.data are CompositeImplicitAutograd on CPU (no derivatives.yaml entry):
    autograd records rnn_decomposition's ops. The argument checks are the kernel's."""
    @composite(dense)
    def _(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        hx_list = _hx_pair(hx) if name == "lstm" else [hx]
        _check_params(name, params, has_biases, num_layers, 2 if bidirectional else 1)
        _check_input(name, input, hx_list, params)
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if input.shape[1 if batch_first else 0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        args = (input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first)
        if _deferred.allowed() and not (dropout != 0 and train):
            # in a trace, the graph is recorded when read (autograd/_deferred.py)
            result = _deferred.defer(fused_time_major, lambda: time_major(*args), args,
                                     [input] + list(hx_list) + list(params))
        else:
            result = time_major(*args)
        if batch_first:  # _lstm_impl transposes a copy; gru_input / rnn_*_input transpose_ in place
            out = result[0].transpose(0, 1) if name == "lstm" else result[0].transpose_(0, 1)
            return (out,) + tuple(result[1:])
        return result

    def time_major(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                   batch_first):
        """The decomposition, its output time-major (before batch_first's transpose)."""
        x = input.transpose(0, 1) if batch_first else input
        per = len(params) // (num_layers * (2 if bidirectional else 1))
        if name == "lstm" and uses_onednn(input, params, per):
            return mkldnn_lstm(x, hx, params, has_biases, num_layers, dropout, train,
                               bidirectional, batch_first)
        return rnn_decomposition(name, x, None, hx, params, has_biases, num_layers, dropout,
                                 train, bidirectional)

    def fused_time_major(*args):
        """The kernel's results, its output time-major (a batch_first output is its view)."""
        result = dense.kernel(*args)
        return (result[0]._base,) + result[1:] if args[-1] else result

    @composite(packed)
    def _(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional):
        hx_list = _hx_pair(hx) if name == "lstm" else [hx]
        _check_params(name, params, has_biases, num_layers, 2 if bidirectional else 1)
        _check_input(name, data, hx_list, params)
        return rnn_decomposition(name, data, _packed_sizes(batch_sizes), hx, params, has_biases, num_layers, dropout,
                                 train, bidirectional)


_register_composites("lstm", lstm_input, lstm_data)
_register_composites("gru", gru_input, gru_data)
_register_composites("rnn_tanh", rnn_tanh_input, rnn_tanh_data)
_register_composites("rnn_relu", rnn_relu_input, rnn_relu_data)


# -- packed sequences (PackedSequence.cpp) ---------------------------------------------------------

@op("_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)")
def _pack_padded_sequence(input, lengths, batch_first):
    """(T, B, *) padded -> the rows of each time step's running sequences, and those counts."""
    a = input._array.swapaxes(0, 1) if batch_first else input._array
    lens = [int(v) for v in lengths._array.reshape(-1)]
    if lengths._array.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths._array.ndim}D {lengths.device} {lengths.dtype.ir_name} tensor")
    if not lens or lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if any(lens[i] < lens[i + 1] for i in range(len(lens) - 1)):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this requirement "
                           "if you do not need ONNX exportability.")
    if lens[0] > a.shape[0]:
        raise RuntimeError(f"Expected sequence length to be at most {a.shape[0]}, but got {lens[0]}")
    sizes = [sum(1 for n in lens if n > t) for t in range(lens[0])]
    data = np.concatenate([a[t, :bs] for t, bs in enumerate(sizes)], 0)
    return (_fresh(data, input.dtype, input.device),
            _fresh(np.asarray(sizes, dtype=np.int64), D.int64, lengths.device))


derivatives(_pack_padded_sequence, {
    "input": "_pack_padded_sequence_backward(grad, input.shape, result1, batch_first)"})


@op("_pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first, Scalar padding_value, "
    "int total_length) -> (Tensor, Tensor)")
def _pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length):
    sizes = [int(v) for v in batch_sizes._array]
    batch = sizes[0]
    steps = max(total_length, len(sizes))
    if total_length < len(sizes):
        raise RuntimeError(f"Expected total_length to be at least {len(sizes)}, but got "
                           f"{total_length}")
    a = data._array
    out = np.full((steps, batch) + a.shape[1:], padding_value, dtype=a.dtype)
    offset = 0
    for t, bs in enumerate(sizes):
        out[t, :bs] = a[offset:offset + bs]
        offset += bs
    lengths = np.asarray([sum(1 for bs in sizes if bs > b) for b in range(batch)], dtype=np.int64)
    padded = _fresh(out, data.dtype, data.device)
    if batch_first:  # torch returns output.transpose(0, 1): a view
        padded = _transposed01(padded)
    return padded, _fresh(lengths, D.int64, batch_sizes.device)


@composite(_pad_packed_sequence)
def _(data, batch_sizes, batch_first, padding_value, total_length):
    """PackedSequence.cpp's _pad_packed_sequence (CompositeImplicitAutograd, no yaml entry): a
    full() output, each run of equal batch sizes copied in as one view (CopySlices nodes)."""
    if batch_sizes.dtype != D.int64 or batch_sizes._array.ndim != 1:
        raise RuntimeError("batch_sizes must be a 1D CPU int64 tensor")
    sizes = [int(v) for v in batch_sizes._array]
    steps = len(sizes)
    if total_length > 0 and total_length < steps:
        raise RuntimeError(f"Expected total_length to be at least {steps}, but got {total_length}")
    output = get_packet("full")([max(total_length, steps), sizes[0]] + list(data.shape[1:]),
                                padding_value, dtype=data.dtype, device=data.device)
    offset, prev_bs, prev_i = 0, sizes[0], 0
    for i in range(steps + 1):
        bs = sizes[i] if i != steps else 0
        if bs != prev_bs:
            n = prev_bs * (i - prev_i)
            tmp = data[offset:offset + n].view([i - prev_i, prev_bs] + list(data.shape[1:]))
            output[prev_i:i, :prev_bs].copy_(tmp)
            offset += n
            prev_i = i
        prev_bs = bs
    lengths = _pad_packed_sequence.kernel(data.detach(), batch_sizes, False, padding_value,
                                          total_length)[1]
    return (output.transpose(0, 1) if batch_first else output), lengths


@op("pad_sequence(Tensor[] sequences, bool batch_first=False, float padding_value=0., "
    "str padding_side=\"right\") -> Tensor")
def pad_sequence(sequences, batch_first, padding_value, padding_side):
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    longest = max(s._array.shape[0] for s in sequences)
    trailing = first._array.shape[1:]
    out = np.full((len(sequences), longest) + trailing, padding_value, dtype=first.dtype.np)
    for i, s in enumerate(sequences):
        n = s._array.shape[0]
        if padding_side == "right":
            out[i, :n] = s._array
        else:
            out[i, longest - n:] = s._array
    if not batch_first:
        out = np.ascontiguousarray(out.swapaxes(0, 1))
    return _fresh(out, first.dtype, first.device)


@composite(pad_sequence)
def _(sequences, batch_first, padding_value, padding_side):
    """PackedSequence.cpp's pad_sequence (CompositeImplicitAutograd, no yaml entry): a full()
    output, each sequence copied into its slot (CopySlices nodes)."""
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    longest = max(s.shape[0] for s in sequences)
    dims = [len(sequences), longest] if batch_first else [longest, len(sequences)]
    out = get_packet("full")(dims + list(first.shape[1:]), padding_value, dtype=first.dtype,
                             device=first.device)
    for i, seq in enumerate(sequences):
        n = seq.shape[0]
        start = longest - n if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, n).copy_(seq)
        else:
            out.narrow(0, start, n).select(1, i).copy_(seq)
    return out
