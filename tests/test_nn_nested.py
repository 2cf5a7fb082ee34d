"""TransformerEncoder's nested-tensor fast path (spec SEQ-8) against live torch 2.13: in eval mode
without grad, given a left-aligned src_key_padding_mask, both convert the batch with
_nested_tensor_from_mask, run every layer's _transformer_encoder_layer_fwd on the nested tensor
and pad the result back with to_padded_tensor. Compared: the traced graph, inlined graph and code,
the outputs' dtype, shape, strides and padding (exactly) and values (to float tolerance: the
matrix products, layer norms, softmax and gelu are reftrace's, NUM-2); the two conversions
(copies) bit for bit; the errors; what a nested tensor says of itself. Skipped without torch."""
import re
import warnings

import numpy as np
import pytest

import reftrace
from reftrace import _nested_tensor

try:
    import torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)
from nn_seq_support import assert_same_outputs, compare, pair, to_reftrace  # noqa: E402


def _encoder(lib, d_model=8, nhead=2, ff=16, layers=2, activation="relu", final_norm=False,
             dtype=None, mask_check=True):
    dtype = None if dtype is None else getattr(lib, dtype)
    layer = lib.nn.TransformerEncoderLayer(d_model, nhead, ff, dropout=0.0, activation=activation,
                                           batch_first=True, dtype=dtype)
    norm = lib.nn.LayerNorm(d_model, dtype=dtype) if final_norm else None
    return lib.nn.TransformerEncoder(layer, layers, norm=norm, mask_check=mask_check)


def _wrapped(lib, **kw):
    enc = _encoder(lib, **kw)

    class Encode(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = enc

        def forward(self, x, padding):
            return self.enc(x, src_key_padding_mask=padding)
    return Encode().eval()


def _batch(lengths, seq_len, d_model, dtype=torch.float32, seed=0):
    x = torch.tensor(np.random.default_rng(seed).standard_normal((len(lengths), seq_len, d_model)),
                     dtype=dtype)
    padding = torch.tensor([[j >= n for j in range(seq_len)] for n in lengths])
    return x, padding


# (encoder options, lengths of the sequences, padded length)
CONFIGS = {
    "relu_2_layers": ({}, [2, 4, 1], 4),
    "gelu_final_norm": ({"activation": "gelu", "final_norm": True, "layers": 3}, [3, 5, 5, 1], 6),
    "one_layer_4_heads": ({"d_model": 16, "nhead": 4, "ff": 32, "layers": 1}, [7, 2], 7),
    "float64": ({"dtype": "float64", "activation": "gelu"}, [1, 3, 2], 5),
    "empty_sequence": ({"final_norm": True}, [3, 0, 2], 4),
    "all_shorter_than_padded": ({"d_model": 32, "nhead": 2, "ff": 8}, [2, 3], 6),
    "single_token": ({}, [1], 1),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_encoder_nested_path_matches_torch(name):
    """Eager outputs on two batches, then the trace of the first (graph, inlined graph, code),
    checked and re-run on both."""
    kw, lengths, seq_len = CONFIGS[name]
    d, dtype = kw.get("d_model", 8), getattr(torch, kw.get("dtype", "float32"))
    inputs = [_batch(lengths, seq_len, d, dtype), _batch(lengths[::-1], seq_len, d, dtype, seed=1)]
    compare(lambda lib: _wrapped(lib, **kw), inputs, no_grad=True, check_trace=True)


def test_trace_records_the_nested_ops_with_torchs_types():
    x, padding = _batch([2, 4, 1], 4, 8)
    _, rm = pair(lambda lib: _wrapped(lib))
    with reftrace.no_grad():
        graph = reftrace.jit.trace(rm, to_reftrace((x, padding))).inlined_graph.str(False)
    kinds = [k for k in re.findall(r"= (aten::\w+)", graph) if k != "aten::size"]
    assert kinds[-4:] == ["aten::_nested_tensor_from_mask", "aten::_transformer_encoder_layer_fwd",
                          "aten::_transformer_encoder_layer_fwd", "aten::to_padded_tensor"]
    assert "FloatTensor(requires_grad=0, device=cpu) = aten::_nested_tensor_from_mask" in graph


def test_padded_positions_are_exact_zeros_and_values_close():
    """Many random configurations (lengths, sizes, activations, dtypes, depth): dtype, shape,
    strides and the zero padding exact, the rows to float tolerance."""
    rng = np.random.default_rng(0)
    for trial in range(12):
        d = int(rng.choice([4, 8, 16, 32]))
        kw = {"d_model": d, "nhead": int(rng.choice([2, 4])) if d >= 8 else 2,
              "ff": int(rng.choice([8, 64])), "activation": str(rng.choice(["relu", "gelu"])),
              "layers": int(rng.integers(1, 4)), "dtype": str(rng.choice(["float32", "float64"]))}
        seq_len = int(rng.integers(1, 8))
        lengths = [int(rng.integers(0, seq_len + 1)) for _ in range(int(rng.integers(1, 5)))]
        lengths[0] = max(lengths[0], 1)
        x, padding = _batch(lengths, seq_len, d, getattr(torch, kw["dtype"]), seed=trial)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tm, rm = pair(lambda lib: _encoder(lib, **kw).eval())
            with torch.no_grad():
                expected = tm(x, src_key_padding_mask=padding)
            with reftrace.no_grad():
                got = rm(*to_reftrace((x,)), src_key_padding_mask=to_reftrace(padding))
        assert_same_outputs(expected, got)
        pad = padding.numpy()
        assert (got.numpy()[pad] == 0).all() and (expected.numpy()[pad] == 0).all()


def test_nested_path_is_taken_where_torch_takes_it():
    """Not in training mode, not with grad needed, not with a padding mask that is not
    left-aligned: there both run the dense layers, so no nested op is traced."""
    x, padding = _batch([2, 4, 1], 4, 8)
    right_aligned = padding.flip(1)
    for inputs, no_grad, train in (((x, padding), False, False), ((x, right_aligned), True, False),
                                   ((x, padding), True, True)):
        def build(lib):
            return _wrapped(lib).train(train)
        if train:
            compare(build, [inputs], no_grad=no_grad, trace=False)
        else:
            compare(build, [inputs], no_grad=no_grad)


def test_mask_check_off_converts_any_mask_as_torch():
    """Without the encoder's mask check a right-aligned mask is converted too: each sequence is
    then its first len_i rows, in torch as in reftrace."""
    x, padding = _batch([2, 3, 1], 4, 8)
    compare(lambda lib: _wrapped(lib, mask_check=False), [(x, padding.flip(1))], no_grad=True,
            check_trace=True)


# -- the layer's arithmetic is torch's ------------------------------------------------------------

def _layer_by_hand(lib, layer, x, lengths, norm_first, gelu):
    """torch's nested encoder layer (transformer.cpp, attention.cpp, NestedTensor*.cpp) written
    with ``lib``'s public ops: GEMMs over the packed rows, attention on the batch padded to the
    longest sequence with a softmax per sequence. The packed (rows, d) result."""
    sa, F = layer.self_attn, lib.nn.functional
    d, heads = sa.embed_dim, sa.num_heads
    dh, batch, longest = d // heads, len(lengths), max(lengths)
    rows = lib.cat([x[i, :n] for i, n in enumerate(lengths)])

    def norm(t, m):
        return F.layer_norm(t, (d,), m.weight, m.bias, m.eps)

    h = norm(rows, layer.norm1) if norm_first else rows
    qkv = lib.mm(h, sa.in_proj_weight.t())
    padded = lib.zeros(batch, longest, 3 * d, dtype=x.dtype)
    start = 0
    for i, n in enumerate(lengths):
        padded[i, :n] = qkv[start:start + n]
        start += n
    padded += sa.in_proj_bias
    padded[..., :d] *= 1.0 / float(lib.tensor(float(dh), dtype=x.dtype).sqrt())  # (scalar_t math)
    q, k, v = padded.view(batch, longest, 3, heads, dh).permute(2, 0, 3, 1, 4).reshape(
        3, batch * heads, longest, dh).contiguous().unbind(0)
    scores = lib.bmm(q, k.transpose(2, 1)).view(batch, heads, longest, longest)
    weights = lib.zeros_like(scores)
    for i, n in enumerate(lengths):
        if n:
            weights[i, :, :n, :n] = lib.softmax(scores[i, :, :n, :n], -1)
    ctx = lib.bmm(weights.view(batch * heads, longest, longest), v)
    merged = ctx.view(batch, heads, longest, dh).permute(0, 2, 1, 3).reshape(batch, longest, d)
    attended = lib.cat([merged[i, :n] for i, n in enumerate(lengths)])
    y = lib.addmm(sa.out_proj.bias, attended, sa.out_proj.weight.t()) + rows
    y = y if norm_first else norm(y, layer.norm1)
    h = norm(y, layer.norm2) if norm_first else y
    h = lib.addmm(layer.linear1.bias, h, layer.linear1.weight.t())
    h = F.gelu(h) if gelu else lib.relu(h)
    out = lib.addmm(layer.linear2.bias, h, layer.linear2.weight.t()) + y
    return out if norm_first else norm(out, layer.norm2)


def _nested_layer(lib, layer, x, lengths, norm_first, gelu):
    sa = layer.self_attn
    mask = lib.tensor([[j < n for j in range(x.shape[1])] for n in lengths])
    out = lib._transformer_encoder_layer_fwd(
        lib._nested_tensor_from_mask(x, mask), sa.embed_dim, sa.num_heads, sa.in_proj_weight, sa.in_proj_bias,
        sa.out_proj.weight, sa.out_proj.bias, gelu, norm_first, layer.norm1.eps, layer.norm1.weight,
        layer.norm1.bias, layer.norm2.weight, layer.norm2.bias, layer.linear1.weight,
        layer.linear1.bias, layer.linear2.weight, layer.linear2.bias, None, None)
    if lib is torch:
        return torch.cat([t.reshape(-1, sa.embed_dim) for t in out.unbind()]).numpy()
    return out._buffer.reshape(-1, sa.embed_dim)


def test_nested_layer_is_torchs_arithmetic():
    """torch's nested _transformer_encoder_layer_fwd equals _layer_by_hand run with torch's ops,
    bit for bit; reftrace's equals _layer_by_hand run with reftrace's ops, bit for bit. So the
    two differ only where reftrace's mm, bmm, addmm, layer_norm, softmax, gelu differ from
    torch's (spec SEQ-9)."""
    rng = np.random.default_rng(0)
    for trial in range(10):
        d = int(rng.choice([4, 8, 16, 32]))
        heads = int(rng.choice([2, 4])) if d >= 8 else 2
        ff, gelu, norm_first = int(rng.choice([8, 64])), bool(trial % 2), bool(trial % 3 == 0)
        seq_len = int(rng.integers(1, 8))
        lengths = [int(rng.integers(0, seq_len + 1)) for _ in range(int(rng.integers(1, 5)))]
        lengths[0] = max(lengths[0], 1)
        dtype = "float64" if trial % 4 == 1 else "float32"
        x, _ = _batch(lengths, seq_len, d, getattr(torch, dtype), seed=trial)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tl, rl = pair(lambda lib: lib.nn.TransformerEncoderLayer(
                d, heads, ff, dropout=0.0, activation="gelu" if gelu else "relu", batch_first=True,
                norm_first=norm_first, dtype=getattr(lib, dtype)).eval())
            rx = to_reftrace(x)
            with torch.no_grad():
                np.testing.assert_array_equal(_nested_layer(torch, tl, x, lengths, norm_first, gelu),
                                              _layer_by_hand(torch, tl, x, lengths, norm_first, gelu))
            with reftrace.no_grad():
                np.testing.assert_array_equal(
                    _nested_layer(reftrace, rl, rx, lengths, norm_first, gelu),
                    _layer_by_hand(reftrace, rl, rx, lengths, norm_first, gelu).numpy())


# -- the conversions, bit for bit ---------------------------------------------------------------

def _conversions(lib, x, mask, padding, size, mask_check=True):
    nt = lib._nested_tensor_from_mask(x, mask, mask_check=mask_check)
    return nt.to_padded_tensor(padding, size)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64])
def test_from_mask_and_to_padded_tensor_are_exact(dtype):
    x = (torch.arange(2 * 4 * 3) - 7).reshape(2, 4, 3).to(dtype) / (3 if dtype.is_floating_point else 1)
    mask = torch.tensor([[True, True, True, False], [True, False, False, False]])
    not_left_aligned = torch.tensor([[True, False, True, False], [False, False, False, True]])
    cases = [(mask, 0.0, None, True), (mask, 2.5, [3, 5, 4], True), (mask, -1.0, [2, 4, 3], True),
             (not_left_aligned, 0.0, None, False)]
    for m, padding, size, check in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = _conversions(torch, x, m, padding, size, check)
            got = _conversions(reftrace, to_reftrace(x), to_reftrace(m), padding, size, check)
        assert str(got.dtype) == str(expected.dtype) and got.stride() == expected.stride()
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the comparison is of whatever is raised
            return type(e).__name__, str(e).split("\n")[0]
    return None


def test_conversion_errors_as_torch():
    x = torch.ones(2, 3, 4)
    mask = torch.tensor([[True, True, False], [True, False, False]])
    cases = [
        (x, mask.float(), True), (x, mask[0], True), (x[0], mask, True), (x, mask[:, :2], True),
        (x, torch.tensor([[True, False, True], [True, False, False]]), True),
        (torch.ones(0, 3, 4), torch.zeros(0, 3, dtype=torch.bool), True)]
    for t, m, check in cases:
        expected = _error(lambda: torch._nested_tensor_from_mask(t, m, mask_check=check))
        got = _error(lambda: reftrace._nested_tensor_from_mask(to_reftrace(t), to_reftrace(m),
                                                              mask_check=check))
        assert got == expected
    for size in ([2, 3], [2, 1, 4], [2, 2, 4, 1]):
        expected = _error(lambda: torch._nested_tensor_from_mask(x, mask).to_padded_tensor(0.0, size))
        got = _error(lambda: reftrace._nested_tensor_from_mask(
            to_reftrace(x), to_reftrace(mask)).to_padded_tensor(0.0, size))
        assert got == expected


def test_all_padding_batch_errors_as_torch():
    """Every sequence empty: the layers return their (empty) input and to_padded_tensor refuses."""
    x, padding = _batch([0, 0], 3, 8)
    errors = []
    for lib, args in ((torch, (x, padding)), (reftrace, to_reftrace((x, padding)))):
        module = _wrapped(lib)
        with lib.no_grad():
            errors.append(_error(lambda: module(*args)))
    assert errors[0] is not None and errors[1] == errors[0]


# -- what a nested tensor says of itself, and refuses ----------------------------------------------

def _pair_of_nested():
    x = torch.tensor(np.random.default_rng(0).standard_normal((3, 4, 2)), dtype=torch.float32)
    mask = torch.tensor([[True, True, False, False], [False] * 4, [True, False, False, False]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (torch._nested_tensor_from_mask(x, mask),
                reftrace._nested_tensor_from_mask(to_reftrace(x), to_reftrace(mask)))


def test_nested_tensor_metadata_and_repr_as_torch():
    tn, rn = _pair_of_nested()
    assert rn.is_nested and tn.is_nested and not reftrace.ones(1).is_nested
    assert (rn.dim(), rn.size(0), rn.size(2), rn.size(-1), rn.numel()) == \
        (tn.dim(), tn.size(0), tn.size(2), tn.size(-1), tn.numel())
    assert (str(rn.dtype), str(rn.device), rn.requires_grad, rn.is_contiguous()) == \
        (str(tn.dtype), str(tn.device), tn.requires_grad, tn.is_contiguous())
    assert repr(rn) == repr(tn)
    for call in (lambda t: t.size(1), lambda t: t.size(), lambda t: t.shape, lambda t: t.stride()):
        assert _error(lambda: call(rn)) == _error(lambda: call(tn))


def test_other_uses_of_a_nested_tensor_are_a_clear_error():
    """torch implements more ops on nested tensors; reftrace refuses all but the encoder's."""
    _, rn = _pair_of_nested()
    for use in (lambda t: t + 1, lambda t: t.sum(), lambda t: t.numpy(), lambda t: t[0],
                lambda t: reftrace.relu(t), lambda t: t.view(-1), lambda t: float(t)):
        with pytest.raises(NotImplementedError, match="nested tensors support only"):
            use(rn)


def test_a_layer_off_its_fast_path_refuses_the_nested_tensor():
    """torch would run that layer's slow path on the nested tensor (its MHA refuses in training
    mode; with a hook, torch's nested ops run it): reftrace says it has no such path."""
    x, padding = _batch([2, 4, 1], 4, 8)
    enc = _encoder(reftrace).eval()
    enc.layers[1].register_forward_hook(lambda *args: None)
    with reftrace.no_grad(), pytest.raises(NotImplementedError, match="forward pre-/hooks"):
        enc(*to_reftrace((x,)), src_key_padding_mask=to_reftrace(padding))


def test_prototype_warning_once_with_torchs_words():
    x, padding = _batch([2, 1], 3, 8)
    torch.set_warn_always(True)  # (torch's TORCH_WARN_ONCE, shown every time)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            torch._nested_tensor_from_mask(x, padding.logical_not())
    finally:
        torch.set_warn_always(False)
    expected = [str(w.message).split(" (Triggered internally")[0] for w in seen]
    _nested_tensor._WARNED.clear()
    got = []
    for _ in range(2):  # once per process
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            reftrace._nested_tensor_from_mask(*to_reftrace((x, padding.logical_not())))
        got.append([str(w.message) for w in seen])
    assert got == [expected, []]
