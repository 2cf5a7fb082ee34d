"""reftrace.nn.functional against torch.nn.functional: eager results (oracle), the ATen ops a
trace records, and whole forward passes (LeNet, a ResNet basic block, self-attention)."""
import math
import warnings

import numpy as np
import pytest

import reftrace
import reftrace.nn.functional as RF
from oracle import check, requires_torch, sample, torch
from reftrace.ops import PACKETS


# F.mse_loss broadcasts with torch.broadcast_tensors, an op of the shape family (another issue)
needs_broadcast_tensors = pytest.mark.skipif("aten::broadcast_tensors" not in PACKETS,
                                             reason="aten::broadcast_tensors is not registered yet")


def F(m):
    return RF if m is reftrace else torch.nn.functional


x4 = sample((2, 3, 9, 8))
x3 = sample((3, 9, 8), seed=1)
x1d = sample((2, 3, 9), seed=2)
w3 = sample((4, 3, 3, 3), seed=3)
b4 = sample((4,), seed=4)
w1d = sample((4, 3, 3), seed=5)
logits = sample((6, 5), seed=6)
labels = np.array([1, 0, 4, 2, 2, 3], dtype="int64")

ACTIVATIONS = [
    lambda m, x: F(m).relu(x), lambda m, x: F(m).relu6(x), lambda m, x: F(m).gelu(x),
    lambda m, x: F(m).gelu(x, approximate="tanh"), lambda m, x: F(m).silu(x),
    lambda m, x: F(m).elu(x), lambda m, x: F(m).elu(x, 0.5), lambda m, x: F(m).leaky_relu(x),
    lambda m, x: F(m).leaky_relu(x, 0.2), lambda m, x: F(m).softplus(x),
    lambda m, x: F(m).softplus(x, 2, 1), lambda m, x: F(m).hardtanh(x),
    lambda m, x: F(m).hardtanh(x, -0.5, 2.0), lambda m, x: F(m).hardtanh(x, 2.0, -0.5),
    lambda m, x: F(m).sigmoid(x), lambda m, x: F(m).tanh(x),
    lambda m, x: F(m).softmax(x, 1), lambda m, x: F(m).softmax(x, -1, dtype=m.float64),
    lambda m, x: F(m).log_softmax(x, 2), lambda m, x: F(m).log_softmax(x, 0),
    lambda m, x: F(m).relu(x, inplace=True), lambda m, x: F(m).elu(x, inplace=True),
    lambda m, x: F(m).leaky_relu(x, 0.1, True), lambda m, x: F(m).silu(x, True),
    lambda m, x: F(m).hardtanh(x, inplace=True), lambda m, x: F(m).relu6(x, True),
]


@pytest.mark.parametrize("fn", ACTIVATIONS)
def test_activations(fn):
    check(fn, x4)


def test_softmax_without_dim_warns_and_picks_torchs_dim():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, x: F(m).softmax(x), x3)
        check(lambda m, x: F(m).log_softmax(x), x4)


@pytest.mark.parametrize("fn,args", [
    (lambda m, x, w, b: F(m).conv2d(x, w), (x4, w3, b4)),
    (lambda m, x, w, b: F(m).conv2d(x, w, b, stride=2, padding=1), (x4, w3, b4)),
    (lambda m, x, w, b: F(m).conv2d(x, w, b, (2, 1), (0, 2), (1, 2)), (x4, w3, b4)),
    (lambda m, x, w, b: F(m).conv2d(x, w, b, padding="same", dilation=2), (x4, w3, b4)),
    (lambda m, x, w, b: F(m).conv2d(x, w, padding="valid"), (x4, w3, b4)),
    (lambda m, x, w, b: F(m).conv2d(x, w, b, padding=1), (x3, w3, b4)),
    (lambda m, x, w, b: F(m).conv2d(x, w, padding="same"), (x3, w3, b4)),
    (lambda m, x, w, b: F(m).conv2d(x, w[:, :1], groups=3), (x4, sample((6, 1, 2, 2)), b4)),
    (lambda m, x, w, b: F(m).conv2d(x[0, 0], w), (x4, w3, b4)),
    (lambda m, x, w, b: F(m).conv2d(x, w, b[:3]), (x4, w3, b4)),
    (lambda m, x, w, b: F(m).conv1d(x, w, b), (x1d, w1d, b4)),
    (lambda m, x, w, b: F(m).conv1d(x, w, b, 2, 1, 2), (x1d, w1d, b4)),
    (lambda m, x, w, b: F(m).conv1d(x[0], w, padding="same"), (x1d, w1d, b4)),
    (lambda m, x, w, b: F(m).conv1d(x, w, b), (x4, w1d, b4)),
    (lambda m, x, w, b: F(m).linear(x, w[:, 0, 0]), (x4, sample((5, 8, 1, 1)), b4)),
    (lambda m, x, w, b: F(m).linear(x, w[:, :, 0, 0], b), (x1d, sample((4, 9, 1, 1)), b4)),
])
def test_linear_and_convolution(fn, args):
    check(fn, *args)


@pytest.mark.parametrize("fn", [
    lambda m, x: F(m).max_pool2d(x, 2),
    lambda m, x: F(m).max_pool2d(x, 3, 2, 1, ceil_mode=True),
    lambda m, x: F(m).max_pool2d(x, (2, 3), return_indices=True),
    lambda m, x: F(m).max_pool2d(x, 3, stride=1, padding=1, dilation=2, return_indices=True),
    lambda m, x: F(m).max_pool1d(x[0], 2),
    lambda m, x: F(m).max_pool1d(x[0], 3, 2, 1, return_indices=True),
    lambda m, x: F(m).avg_pool2d(x, 2),
    lambda m, x: F(m).avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda m, x: F(m).avg_pool2d(x, 2, divisor_override=3),
    lambda m, x: F(m).adaptive_avg_pool2d(x, 1),
    lambda m, x: F(m).adaptive_avg_pool2d(x, (4, 3)),
    lambda m, x: F(m).adaptive_avg_pool2d(x, (None, 3)),
    lambda m, x: F(m).adaptive_avg_pool2d(x[0, 0], (None, 3)),
])
def test_pooling(fn):
    check(fn, x4)


@pytest.mark.parametrize("fn", [
    lambda m, x, rm, rv, w, b: F(m).batch_norm(x, rm, rv),
    lambda m, x, rm, rv, w, b: F(m).batch_norm(x, rm, rv, w, b, eps=1e-3),
    lambda m, x, rm, rv, w, b: F(m).batch_norm(x, rm, rv, w, b, training=True, momentum=0.2),
    lambda m, x, rm, rv, w, b: F(m).batch_norm(x, None, None, training=True),
    lambda m, x, rm, rv, w, b: F(m).batch_norm(x[:1, :, :1, :1], rm, rv, training=True),
    lambda m, x, rm, rv, w, b: F(m).batch_norm(x, rm, rv, training=True, eps=0.0),
    lambda m, x, rm, rv, w, b: F(m).batch_norm(x, rm, rv, eps=-1.0),
    lambda m, x, rm, rv, w, b: F(m).layer_norm(x, (8,)),
    lambda m, x, rm, rv, w, b: F(m).layer_norm(x, 8),
    lambda m, x, rm, rv, w, b: F(m).layer_norm(x, [9, 8], x[0, 0], x[1, 0]),
    lambda m, x, rm, rv, w, b: F(m).group_norm(x, 3, w, b),
    lambda m, x, rm, rv, w, b: F(m).group_norm(x, 1),
    lambda m, x, rm, rv, w, b: F(m).group_norm(x[:1, :1, :1, :1], 1),
    lambda m, x, rm, rv, w, b: F(m).group_norm(x[0, 0, 0], 1),
])
def test_normalisation(fn):
    check(fn, x4, sample((3,), seed=7), sample((3,), low=0.5, high=2, seed=8), sample((3,), seed=9),
          sample((3,), seed=10))


@pytest.mark.parametrize("fn", [
    lambda m, x: F(m).dropout(x, 0.3, training=False),
    lambda m, x: F(m).dropout(x, 0.0),
    lambda m, x: F(m).dropout(x, 1.0),
    lambda m, x: F(m).dropout(x, 1.5),
    lambda m, x: F(m).dropout2d(x, 0.5, training=False),
    lambda m, x: F(m).dropout2d(x, -0.1),
])
def test_dropout(fn):
    check(fn, x4)


@pytest.mark.parametrize("fn,args", [
    (lambda m, i, w: F(m).embedding(i, w), (np.array([[1, 2], [4, 0]]), sample((5, 3)))),
    (lambda m, i, w: F(m).embedding(i, w, padding_idx=-2), (np.array([1, 3]), sample((5, 3)))),
    (lambda m, i, w: F(m).embedding(i, w, padding_idx=5), (np.array([1, 3]), sample((5, 3)))),
    (lambda m, i, w: F(m).embedding(i, w, padding_idx=-6), (np.array([1, 3]), sample((5, 3)))),
    (lambda m, i, w: F(m).embedding(i, w * 3, max_norm=1.5), (np.array([[1, 2], [4, 1]]), sample((5, 3)))),
    (lambda m, i, w: F(m).embedding(i, w, max_norm=2.0, norm_type=1.0), (np.array([1, 3]), sample((5, 3)))),
    (lambda m, i, w: F(m).one_hot(i), (np.array([[1, 2], [4, 0]]), None)),
    (lambda m, i, w: F(m).one_hot(i, 6), (np.array([[1, 2], [4, 0]]), None)),
])
def test_embedding_and_one_hot(fn, args):
    check(fn, *args)


@pytest.mark.parametrize("fn", [
    lambda m, x: F(m).pad(x, (1, 2)),
    lambda m, x: F(m).pad(x, (1, 2, 0, 1), value=3.0),
    lambda m, x: F(m).pad(x, [2, 1, 1, 2], mode="reflect"),
    lambda m, x: F(m).pad(x, (2, 1, 1, 2), mode="replicate"),
    lambda m, x: F(m).pad(x, (2, 1, 1, 2), mode="circular"),
    lambda m, x: F(m).pad(x, (1,)),
    lambda m, x: F(m).interpolate(x, scale_factor=2),
    lambda m, x: F(m).interpolate(x, size=(5, 11)),
    lambda m, x: F(m).interpolate(x, size=4),
    lambda m, x: F(m).interpolate(x, scale_factor=(1.5, 0.5), mode="nearest"),
    lambda m, x: F(m).interpolate(x, scale_factor=3, mode="bilinear"),
    lambda m, x: F(m).interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=True),
    lambda m, x: F(m).interpolate(x, size=(4, 13), mode="bilinear", align_corners=False),
    lambda m, x: F(m).interpolate(x, scale_factor=0.5, mode="bilinear", recompute_scale_factor=True),
    lambda m, x: F(m).interpolate(x, size=(3, 2), mode="area"),
    lambda m, x: F(m).interpolate(x[0], scale_factor=2.5),
    lambda m, x: F(m).interpolate(x, size=(3, 2), scale_factor=2),
    lambda m, x: F(m).interpolate(x),
    lambda m, x: F(m).interpolate(x, size=(3, 2, 1)),
    lambda m, x: F(m).interpolate(x, scale_factor=2, align_corners=True),
    lambda m, x: F(m).interpolate(x[0], scale_factor=2, mode="bilinear"),
    lambda m, x: F(m).normalize(x),
    lambda m, x: F(m).normalize(x, p=1.0, dim=-1),
    lambda m, x: F(m).normalize(x * 0, dim=2),
])
def test_pad_interpolate_normalize(fn):
    check(fn, x4)


probs = np.abs(sample((6, 5), seed=11))
probs /= probs.sum(1, keepdims=True)


@pytest.mark.parametrize("fn,args", [
    (lambda m, x, t: F(m).cross_entropy(x, t), (logits, labels)),
    (lambda m, x, t: F(m).cross_entropy(x, t, reduction="sum", label_smoothing=0.1), (logits, labels)),
    (lambda m, x, t: F(m).cross_entropy(x, t, weight=x[0].abs(), ignore_index=2), (logits, labels)),
    (lambda m, x, t: F(m).cross_entropy(x, t, reduction="none"), (logits, probs)),
    (lambda m, x, t: F(m).cross_entropy(x, t, reduction="avg"), (logits, labels)),
    (lambda m, x, t: F(m).nll_loss(x, t), (logits, labels)),
    (lambda m, x, t: F(m).nll_loss(x, t, reduction="none"), (logits, labels)),
    pytest.param(lambda m, x, t: F(m).mse_loss(x, t), (logits, probs),
                 marks=needs_broadcast_tensors),
    pytest.param(lambda m, x, t: F(m).mse_loss(x, t, reduction="sum"), (logits, probs),
                 marks=needs_broadcast_tensors),
    pytest.param(lambda m, x, t: F(m).mse_loss(x, t, reduction="none"), (logits, probs),
                 marks=needs_broadcast_tensors),
    pytest.param(lambda m, x, t: F(m).mse_loss(x, t, weight=t, reduction="mean"), (logits, probs),
                 marks=needs_broadcast_tensors),
])
def test_losses(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(fn, *args)


def test_legacy_reduction_flags_warn_and_map():
    with pytest.warns(UserWarning, match="reduction='sum'"):
        check(lambda m, x, t: F(m).nll_loss(x, t, size_average=False), logits, labels)


# -- what a trace records --------------------------------------------------------------------------

def _recorded(m, fn, *arrays):
    """The graph text (without source locations) of tracing ``fn`` under torch or reftrace."""
    inputs = tuple((reftrace if m is reftrace else torch).from_numpy(a.copy()) for a in arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return m.jit.trace(lambda *xs: fn(m, *xs), inputs, check_trace=False).graph.str(False)


@requires_torch
@pytest.mark.parametrize("fn,args", [
    (lambda m, x, w: F(m).conv2d(x, w), (x4, w3)),
    (lambda m, x, w: F(m).conv2d(x, w, padding="same"), (x4, w3)),
    (lambda m, x, w: F(m).conv2d(x, w, stride=2), (x3, w3)),
    (lambda m, x, w: F(m).conv1d(x, w), (x1d, w1d)),
    (lambda m, x: F(m).max_pool2d(x, 2), (x4,)),
    (lambda m, x: F(m).max_pool2d(x, 2, return_indices=True), (x4,)),
    (lambda m, x: F(m).avg_pool2d(x, 2), (x4,)),
    (lambda m, x: F(m).adaptive_avg_pool2d(x, (None, 2)), (x4,)),
    (lambda m, x: F(m).batch_norm(x, None, None, training=True), (x4,)),
    (lambda m, x: F(m).layer_norm(x, (8,)), (x4,)),
    (lambda m, x: F(m).group_norm(x, 3), (x4,)),
    (lambda m, x: F(m).dropout(x, 0.5, training=False), (x4,)),
    (lambda m, x: F(m).dropout2d(x, 0.5, training=False), (x4,)),
    (lambda m, x: F(m).interpolate(x, scale_factor=3, mode="bilinear"), (x4,)),
    (lambda m, x: F(m).interpolate(x, size=(5, 5)), (x4,)),
    (lambda m, x: F(m).pad(x, (1, 2, 1, 1), mode="reflect"), (x4,)),
    (lambda m, x: F(m).normalize(x), (x4,)),
    (lambda m, x, t: F(m).cross_entropy(x, t), (logits, labels)),
    (lambda m, x, t: F(m).nll_loss(x, t), (logits, labels)),
    pytest.param(lambda m, x, t: F(m).mse_loss(x, t), (logits, probs),
                 marks=needs_broadcast_tensors),
    (lambda m, t: F(m).one_hot(t, 5), (labels,)),
    (lambda m, i, w: F(m).embedding(i, w), (labels, sample((5, 3)))),
    (lambda m, i, w: F(m).embedding(i, w, max_norm=1.0), (labels, sample((5, 3)))),
])
def test_recorded_ops_match_torch(fn, args):
    assert _recorded(reftrace, fn, *args) == _recorded(torch, fn, *args)


# -- whole forward passes --------------------------------------------------------------------------

def _params(shapes, seed):
    rng = np.random.default_rng(seed)
    return {k: (rng.standard_normal(s) / math.sqrt(max(np.prod(s[1:]), 1))).astype("float32")
            for k, s in shapes.items()}


def lenet(m, x, p):
    f = F(m)
    x = f.max_pool2d(f.relu(f.conv2d(x, p["c1"], p["c1b"], padding=2)), 2)
    x = f.max_pool2d(f.relu(f.conv2d(x, p["c2"], p["c2b"])), 2)
    x = x.reshape(x.shape[0], -1)
    x = f.relu(f.linear(x, p["f1"], p["f1b"]))
    x = f.relu(f.linear(x, p["f2"], p["f2b"]))
    return f.log_softmax(f.linear(x, p["f3"], p["f3b"]), dim=1)


LENET = {"c1": (6, 1, 5, 5), "c1b": (6,), "c2": (16, 6, 5, 5), "c2b": (16,), "f1": (120, 400),
         "f1b": (120,), "f2": (84, 120), "f2b": (84,), "f3": (10, 84), "f3b": (10,)}


def basic_block(m, x, p, training):
    """torchvision's BasicBlock with a strided 1x1 downsample, then a pooled linear head."""
    f = F(m)

    def bn(y, k):
        return f.batch_norm(y, p[k + "m"], p[k + "v"], p[k + "w"], p[k + "b"], training=training)
    out = f.relu(bn(f.conv2d(x, p["conv1"], stride=2, padding=1), "bn1"))
    out = bn(f.conv2d(out, p["conv2"], padding=1), "bn2")
    identity = bn(f.conv2d(x, p["down"], stride=2), "bnd")
    out = f.relu(out + identity)
    logits = f.linear(f.adaptive_avg_pool2d(out, 1).flatten(1), p["fc"], p["fcb"])
    return logits, [p[k] for k in sorted(p) if k[-1] in "mv" and k.startswith("bn")]


BLOCK = {"conv1": (8, 4, 3, 3), "conv2": (8, 8, 3, 3), "down": (8, 4, 1, 1), "fc": (5, 8), "fcb": (5,)}
for _k in ("bn1", "bn2", "bnd"):
    BLOCK.update({_k + "w": (8,), _k + "b": (8,), _k + "m": (8,), _k + "v": (8,)})


def attention(m, tokens, p, heads=2):
    """Embedding -> pre-norm multi-head self-attention -> GELU MLP -> logits and loss."""
    f = F(m)
    x = f.embedding(tokens, p["emb"])
    b, t, d = x.shape
    h = f.layer_norm(x, (d,), p["ln1w"], p["ln1b"])
    q, k, v = (f.linear(h, p[n]).view(b, t, heads, d // heads).transpose(1, 2) for n in "qkv")
    scores = f.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // heads), dim=-1)
    scores = f.dropout(scores, 0.1, training=False)
    x = x + f.linear((scores @ v).transpose(1, 2).reshape(b, t, d), p["o"], p["ob"])
    x = x + f.linear(f.gelu(f.linear(f.layer_norm(x, (d,)), p["up"])), p["down"])
    out = f.linear(x, p["head"])
    loss = f.cross_entropy(out.reshape(b * t, -1), tokens.reshape(-1))
    return out, loss


ATTN = {"emb": (11, 8), "ln1w": (8,), "ln1b": (8,), "q": (8, 8), "k": (8, 8), "v": (8, 8),
        "o": (8, 8), "ob": (8,), "up": (16, 8), "down": (8, 16), "head": (11, 8)}


def test_lenet_forward():
    p = _params(LENET, 30)
    check(lambda m, x, **p: lenet(m, x, p), sample((4, 1, 28, 28), seed=31), **p)


@pytest.mark.parametrize("training", [False, True])
def test_resnet_basic_block_forward(training):
    p = _params(BLOCK, 32)
    for k in ("bn1", "bn2", "bnd"):
        p[k + "v"] = np.abs(p[k + "v"]) + 0.5
    # the block also returns its running stats: in training mode batch_norm updated them in place
    check(lambda m, x, **p: basic_block(m, x, p, training), sample((2, 4, 12, 12), seed=33), **p)


def test_attention_forward():
    p = _params(ATTN, 34)
    tokens = np.random.default_rng(35).integers(0, 11, size=(3, 6))
    check(lambda m, t, **p: attention(m, t, p), tokens, **p)


def _model_graph(m, fn, arrays, params):
    """Trace ``fn(m, *arrays, params)`` with the parameters as graph inputs too."""
    lib = reftrace if m is reftrace else torch
    names = sorted(params)
    inputs = tuple(lib.from_numpy(a.copy()) for a in list(arrays) + [params[k] for k in names])

    def traced(*xs):
        return fn(m, *xs[:len(arrays)], dict(zip(names, xs[len(arrays):])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return m.jit.trace(traced, inputs, check_trace=False).graph.str(False)


@requires_torch
@pytest.mark.parametrize("model", ["lenet", "block_eval", "block_train", "attention"])
def test_model_traces_match_torch(model):
    fn, arrays, params = {
        "lenet": (lenet, [sample((4, 1, 28, 28), seed=31)], _params(LENET, 30)),
        "block_eval": (lambda m, x, p: basic_block(m, x, p, False), [sample((2, 4, 12, 12))],
                       _params(BLOCK, 32)),
        "block_train": (lambda m, x, p: basic_block(m, x, p, True), [sample((2, 4, 12, 12))],
                        _params(BLOCK, 32)),
        "attention": (attention, [np.random.default_rng(35).integers(0, 11, size=(3, 6))],
                      _params(ATTN, 34)),
    }[model]
    assert _model_graph(reftrace, fn, arrays, params) == _model_graph(torch, fn, arrays, params)
