"""MultiheadAttention, scaled_dot_product_attention, the Transformer family and EmbeddingBag
against live torch 2.13: construction, forward values/dtype/strides, traced graphs (slow path,
and torch's fast paths under no_grad, recorded as aten::_native_multi_head_attention /
aten::_transformer_encoder_layer_fwd), and what the checker makes of them. Skipped without
torch; tests/test_nn_seq_models.py runs the attention examples against golden data torch-free."""
import numpy as np
import pytest

import reftrace

try:
    import torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)
from nn_seq_support import assert_same_outputs, compare, to_reftrace  # noqa: E402


def _t(*shape, seed=0):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=torch.float32)


def _wrap(lib, module, call):
    class W(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = module

        def forward(self, *args):
            return call(self.m, *args)
    return W()


X = _t(3, 2, 8)
XB = _t(2, 3, 8, seed=1)
MASK = torch.rand(3, 3, generator=torch.Generator().manual_seed(0)) > 0.7
KPM = torch.tensor([[False, False, True], [False, False, False]])

MHA = {
    "self": (lambda nn: nn.MultiheadAttention(8, 2), lambda m, x: m(x, x, x), [(X,), (_t(5, 3, 8),)]),
    "per_head_weights": (lambda nn: nn.MultiheadAttention(8, 2),
                         lambda m, x: m(x, x, x, average_attn_weights=False), [(X,)]),
    "no_weights_sdpa": (lambda nn: nn.MultiheadAttention(8, 2),
                        lambda m, x: m(x, x, x, need_weights=False)[0], [(X,)]),
    "kdim_vdim": (lambda nn: nn.MultiheadAttention(8, 4, kdim=5, vdim=6, batch_first=True),
                  lambda m, q, k, v: m(q, k, v), [(XB, _t(2, 4, 5), _t(2, 4, 6))]),
    "key_is_value": (lambda nn: nn.MultiheadAttention(8, 4), lambda m, q, kv: m(q, kv, kv),
                     [(X, _t(4, 2, 8, seed=2))]),
    "bool_mask": (lambda nn: nn.MultiheadAttention(8, 2), lambda m, x, a: m(x, x, x, attn_mask=a),
                  [(X, MASK)]),
    "float_mask_no_weights": (lambda nn: nn.MultiheadAttention(8, 2),
                              lambda m, x, a: m(x, x, x, attn_mask=a, need_weights=False)[0],
                              [(X, _t(3, 3, seed=3))]),
    "key_padding_batch_first": (lambda nn: nn.MultiheadAttention(8, 2, batch_first=True),
                                lambda m, x, k: m(x, x, x, key_padding_mask=k), [(XB, KPM)]),
    "bias_kv_zero_attn": (lambda nn: nn.MultiheadAttention(8, 2, add_bias_kv=True, add_zero_attn=True),
                          lambda m, x: m(x, x, x), [(X,)]),
    "unbatched": (lambda nn: nn.MultiheadAttention(8, 2), lambda m, x: m(x, x, x), [(_t(3, 8),)]),
    "no_bias": (lambda nn: nn.MultiheadAttention(8, 2, bias=False), lambda m, x: m(x, x, x), [(X,)]),
}


@pytest.mark.parametrize("name", sorted(MHA))
def test_multihead_attention_matches_torch(name):
    make, call, inputs = MHA[name]
    compare(lambda lib: _wrap(lib, make(lib.nn), call), inputs)


FAST = {"self": [(XB,), (_t(4, 5, 8, seed=3),)], "key_padding_batch_first": [(XB, KPM)],
        "bool_mask": [(XB, MASK)]}


@pytest.mark.parametrize("name", sorted(FAST))
def test_fast_path_under_no_grad_matches_torch(name):
    make, call, _ = MHA[name]
    inputs = FAST[name]
    def build(lib):
        m = make(lib.nn)
        m.batch_first = True
        return _wrap(lib, m, call).eval()
    compare(build, inputs, no_grad=True)
    with reftrace.no_grad():
        args = to_reftrace(inputs[0])
        graph = reftrace.jit.trace(build(reftrace), args).inlined_graph.str(False)
    assert "aten::_native_multi_head_attention" in graph


def test_checker_sees_the_fast_path_as_torch_does():
    """Traced with grad on (slow path), the checker re-traces under no_grad (fast path): the graphs
    differ and torch raises TracingCheckError; so does reftrace."""
    x = XB
    for lib, arg in ((torch, x), (reftrace, to_reftrace(x))):
        m = _wrap(lib, lib.nn.MultiheadAttention(8, 2, batch_first=True), lambda m, x: m(x, x, x)).eval()
        with pytest.raises(lib.jit.TracingCheckError, match="Graphs differed across invocations"):
            lib.jit.trace(m, (arg,))


SDPA = {
    "plain": ({}, (_t(2, 3, 5, 4), _t(2, 3, 6, 4, seed=1), _t(2, 3, 6, 7, seed=2))),
    "bool_mask": ({"attn_mask": torch.rand(5, 6, generator=torch.Generator().manual_seed(1)) > 0.5},
                  (_t(2, 3, 5, 4), _t(2, 3, 6, 4, seed=1), _t(2, 3, 6, 4, seed=2))),
    "float_mask": ({"attn_mask": _t(5, 6, seed=4)}, (_t(2, 3, 5, 4), _t(2, 3, 6, 4, seed=1), _t(2, 3, 6, 4, seed=2))),
    "causal_scale": ({"is_causal": True, "scale": 0.3}, (_t(2, 3, 5, 4), _t(2, 3, 5, 4, seed=1), _t(2, 3, 5, 4, seed=2))),
    "gqa": ({"enable_gqa": True}, (_t(2, 6, 5, 4), _t(2, 3, 6, 4, seed=1), _t(2, 3, 6, 4, seed=2))),
    "three_dim": ({}, (_t(3, 5, 4), _t(3, 6, 4, seed=1), _t(3, 6, 4, seed=2))),
    "query_layout": ({}, (_t(2, 5, 3, 4).transpose(1, 2), _t(2, 3, 6, 4, seed=1), _t(2, 3, 6, 4, seed=2))),
}


@pytest.mark.parametrize("name", sorted(SDPA))
def test_scaled_dot_product_attention_matches_torch(name):
    kwargs, args = SDPA[name]
    expected = torch.nn.functional.scaled_dot_product_attention(*args, **kwargs)
    rkw = {k: to_reftrace(v) for k, v in kwargs.items()}
    rargs = [reftrace.as_strided(to_reftrace(a.contiguous()), tuple(a.shape), a.stride())
             if not a.is_contiguous() else to_reftrace(a) for a in args] \
        if hasattr(reftrace, "as_strided") else to_reftrace(args)
    if not args[0].is_contiguous():
        rargs[0] = to_reftrace(args[0].transpose(1, 2).contiguous()).transpose(1, 2)
    got = reftrace.nn.functional.scaled_dot_product_attention(*rargs, **rkw)
    assert_same_outputs(expected, got)
    f = lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)  # noqa: E731
    g = lambda q, k, v: reftrace.nn.functional.scaled_dot_product_attention(q, k, v, **rkw)  # noqa: E731
    tg = torch.jit.trace(f, tuple(args)).graph.str(False)
    rg = reftrace.jit.trace(g, tuple(rargs)).graph.str(False)
    assert rg == tg


def test_sdpa_errors_as_torch():
    q, v = _t(1, 1, 2, 4), _t(1, 1, 2, 3)  # head dims differ: torch's math kernel, which refuses
    for lib, a, b in ((torch, q, v), (reftrace, to_reftrace(q), to_reftrace(v))):
        with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
            lib.nn.functional.scaled_dot_product_attention(a, a, b, attn_mask=lib.ones(2, 2, dtype=lib.bool),
                                                           is_causal=True)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_sdpa_backend_choice_errors_as_torch(requires_grad):
    """Inputs torch's flash kernel does not take go to the math path, which refuses them: GQA
    heads that do not divide, a causal flag with a 3-D mask (the flash kernel takes 2-D / 4-D)."""
    cases = [((_t(4, 3, 8), _t(3, 6, 8, seed=1), _t(3, 6, 8, seed=2)), {"enable_gqa": True}),
             ((_t(1, 2, 3, 4), _t(1, 2, 3, 4, seed=1), _t(1, 2, 3, 4, seed=2)),
              {"attn_mask": _t(1, 3, 3, seed=3).detach(), "is_causal": True})]
    for args, kwargs in cases:
        args = [a.detach().requires_grad_(requires_grad) for a in args]
        with pytest.raises(RuntimeError) as want:
            torch.nn.functional.scaled_dot_product_attention(*args, **kwargs)
        with pytest.raises(RuntimeError) as got:
            reftrace.nn.functional.scaled_dot_product_attention(
                *to_reftrace(args), **{k: to_reftrace(v) for k, v in kwargs.items()})
        assert str(got.value) == str(want.value)


def test_sdpa_flash_layout_applies_mask_and_causal_as_torch():
    q, k, v = _t(1, 2, 4, 4), _t(1, 2, 4, 4, seed=1), _t(1, 2, 4, 4, seed=2)
    mask = _t(4, 4, seed=3)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
    got = reftrace.nn.functional.scaled_dot_product_attention(*to_reftrace((q, k, v)),
                                                              attn_mask=to_reftrace(mask), is_causal=True)
    assert_same_outputs(expected, got)



def test_sdpa_kernel_on_projection_views_matches_torch():
    """The no-grad kernel's planned path (nn_attention.py): q, k, v as head views of one
    projection (gpt2_block's split/view/transpose: the flash layout, result in the query's
    strides), with a causal flag, a bool mask, a key-padding float mask with -inf (bert_tiny's
    (B, H, 1, S)), a scale; float32 and float64; each call twice (the second reuses the plan)."""
    base = _t(2, 8, 96, seed=5)
    pad = torch.zeros(2, 4, 1, 8)
    pad[1, :, :, 6:] = float("-inf")
    masks = [{"is_causal": True}, {"attn_mask": MASK.new_ones(8, 8).tril()},
             {"attn_mask": pad}, {"attn_mask": _t(8, 8, seed=6), "scale": 0.5}]
    for dtype in (torch.float32, torch.float64):
        x, rx = base.to(dtype), to_reftrace(base.to(dtype))
        heads = [[y.view(2, 8, 4, 8).transpose(1, 2) for y in t.split(32, dim=2)] for t in (x, rx)]
        for kwargs in masks:
            kwargs = {k: v.to(dtype) if k == "attn_mask" and v.is_floating_point() else v
                      for k, v in kwargs.items()}
            expected = torch.nn.functional.scaled_dot_product_attention(*heads[0], **kwargs)
            rkw = {k: to_reftrace(v) for k, v in kwargs.items()}
            for _ in range(2):
                with reftrace.no_grad():
                    got = reftrace.nn.functional.scaled_dot_product_attention(*heads[1], **rkw)
                assert_same_outputs(expected, got)


CAUSAL = torch.nn.Transformer.generate_square_subsequent_mask(5)
TRANSFORMERS = {
    "encoder_layer": (lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), lambda m, x: m(x),
                      [(_t(5, 2, 8),), (_t(7, 3, 8, seed=1),)]),
    "encoder_layer_gelu_norm_first": (
        lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", norm_first=True),
        lambda m, x: m(x), [(_t(5, 2, 8),)]),
    "encoder_layer_callable_activation": (
        lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation=nn.functional.silu,
                                              batch_first=True), lambda m, x: m(x), [(XB,)]),
    "encoder_causal_detected": (
        lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                         enable_nested_tensor=False),
        lambda m, x, c: m(x, mask=c), [(_t(5, 2, 8), CAUSAL)]),
    "encoder_is_causal": (
        lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                         norm=nn.LayerNorm(8), enable_nested_tensor=False),
        lambda m, x, c: m(x, mask=c, is_causal=True), [(_t(5, 2, 8), CAUSAL)]),
    "decoder_layer": (lambda nn: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
                      lambda m, t, mem: m(t, mem), [(_t(3, 2, 8), _t(5, 2, 8, seed=1))]),
    "transformer": (lambda nn: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0),
                    lambda m, s, t, c: m(s, t, tgt_mask=c),
                    [(_t(5, 2, 8), _t(3, 2, 8, seed=1), CAUSAL[:3, :3].contiguous())]),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMERS))
def test_transformer_family_matches_torch(name):
    make, call, inputs = TRANSFORMERS[name]
    compare(lambda lib: _wrap(lib, make(lib.nn), call), inputs)


def test_encoder_layer_fast_path_under_no_grad_matches_torch():
    def build(lib):
        return _wrap(lib, lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), lambda m, x: m(x)).eval()
    compare(build, [(XB,), (_t(3, 4, 8, seed=2),)], no_grad=True)
    with reftrace.no_grad():
        graph = reftrace.jit.trace(build(reftrace), (to_reftrace(XB),)).inlined_graph.str(False)
    assert "aten::_transformer_encoder_layer_fwd" in graph


def test_encoder_nested_tensor_check_recorded_as_torch():
    """In eval mode with a padding mask, the encoder checks the mask for nested-tensor conversion:
    torch records (then removes) the ops of that check, which shifts value numbers."""
    def build(lib):
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        return _wrap(lib, lib.nn.TransformerEncoder(layer, 1), lambda m, x, k: m(x, src_key_padding_mask=k)).eval()
    compare(build, [(XB, KPM)])


def test_encoder_warns_as_torch_when_nested_tensor_cannot_be_used():
    for lib in (torch, reftrace):
        with pytest.warns(UserWarning, match="encoder_layer.norm_first was True"):
            lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(8, 2, norm_first=True), 1)


INP = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
BAGS = {
    "max": (lambda nn: nn.EmbeddingBag(10, 3, mode="max"), lambda m, i, o: m(i, o), [(INP, torch.tensor([0, 4]))]),
    "mean": (lambda nn: nn.EmbeddingBag(10, 3), lambda m, i, o: m(i, o), [(INP, torch.tensor([0, 4]))]),
    "sum_2d_padding": (lambda nn: nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2), lambda m, i: m(i),
                       [(INP.view(2, 4),), (INP.view(4, 2),)]),
    "mean_include_last_offset": (
        lambda nn: nn.EmbeddingBag(10, 3, include_last_offset=True, padding_idx=-8),
        lambda m, i, o: m(i, o), [(INP, torch.tensor([0, 4, 4, 8]))]),
    "per_sample_weights": (lambda nn: nn.EmbeddingBag(10, 3, mode="sum"),
                           lambda m, i, o, w: m(i, o, per_sample_weights=w),
                           [(INP, torch.tensor([0, 4, 4]), _t(8, seed=5))]),
    "max_empty_bag": (lambda nn: nn.EmbeddingBag(10, 3, mode="max"), lambda m, i, o: m(i, o),
                      [(INP, torch.tensor([0, 0, 5]))]),
}


@pytest.mark.parametrize("name", sorted(BAGS))
def test_embedding_bag_matches_torch(name):
    make, call, inputs = BAGS[name]
    compare(lambda lib: _wrap(lib, make(lib.nn), call), inputs)


def test_embedding_bag_errors_as_torch():
    for lib in (torch, reftrace):
        bag = lib.nn.EmbeddingBag(10, 3)
        with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
            bag(lib.tensor([1, 2]))
        with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
            bag(lib.tensor([1, 2]), lib.tensor([0]), per_sample_weights=lib.ones(2))
        with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
            lib.nn.EmbeddingBag(10, 3, mode="median")(lib.tensor([1, 2]), lib.tensor([0]))
