"""reftrace.nn layers against torch.nn: forward outputs with the same parameters, running-stat
updates, and the default initialisation schemes (distributions and bounds, not torch's draws).

Each layer is built in both libraries from one ``make(nn)``; torch's parameters and buffers are
copied into the reftrace layer with ``load_state_dict`` (through NumPy), then both run the same
inputs, several times where the layer has state (BatchNorm).
"""
import math
import warnings

import numpy as np
import pytest

import reftrace
import reftrace.nn.functional as RF
from oracle import assert_same, requires_torch, sample, torch

rnn = reftrace.nn


def _to(lib, a):
    return lib.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a


def twin(make):
    """(reftrace layer, torch layer), the reftrace one holding torch's parameters and buffers."""
    th = make(torch.nn)
    rt = make(rnn)
    state = {k: reftrace.from_numpy(v.detach().numpy().copy()) for k, v in th.state_dict().items()}
    result = rt.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    return rt, th


def compare(make, *inputs, modes=("train", "eval"), steps=1, atol=1e-5, check_stride=True):
    """Run both layers on the same inputs in each mode (``steps`` calls per mode), comparing
    outputs, and afterwards every parameter and buffer (running statistics included)."""
    rt, th = twin(make)
    for mode in modes:
        rt.train(mode == "train")
        th.train(mode == "train")
        for step in range(steps):
            rt_out = rt(*[_to(reftrace, a) for a in inputs])
            th_out = th(*[_to(torch, a) for a in inputs])
            assert_same(rt_out, th_out, atol=atol, rtol=1e-5, path=f"{mode} step {step}",
                        check_stride=check_stride)
        th_state = th.state_dict()
        for k, v in rt.state_dict().items():
            assert_same(v, th_state[k], atol=atol, rtol=1e-5, path=f"{mode}: {k}")
    return rt, th


x2 = sample((4, 5))
x3 = sample((2, 4, 5), seed=1)
img = sample((2, 3, 9, 8), seed=2)
img1 = sample((3, 9, 8), seed=3)
sig = sample((2, 3, 11), seed=4)
needs_bilinear = pytest.mark.skipif(not hasattr(RF, "bilinear"),
                                    reason="nn.functional.bilinear / aten::bilinear is missing")


# -- linear -------------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("make, inputs", [
    (lambda nn: nn.Linear(5, 3), (x2,)),
    (lambda nn: nn.Linear(5, 3, bias=False), (x3,)),
    (lambda nn: nn.Identity(7, flag=True), (x2,)),
    pytest.param(lambda nn: nn.Bilinear(5, 4, 3), (x2, sample((4, 4), seed=9)),
                 marks=needs_bilinear),
    pytest.param(lambda nn: nn.Bilinear(5, 4, 3, bias=False), (x2, sample((4, 4), seed=9)),
                 marks=needs_bilinear),
], ids=["linear", "linear-nobias-3d", "identity", "bilinear", "bilinear-nobias"])
def test_linear_layers(make, inputs):
    compare(make, *inputs, modes=("train",))


def test_factory_kwargs():
    lin = rnn.Linear(2, 3, dtype=reftrace.float64, device="cpu")
    assert lin.weight.dtype == reftrace.float64 and lin.bias.dtype == reftrace.float64
    bn = rnn.BatchNorm1d(3, dtype=reftrace.float64)
    assert bn.running_var.dtype == reftrace.float64 and bn.num_batches_tracked.dtype == reftrace.int64


# -- convolution --------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("make, inp", [
    (lambda nn: nn.Conv2d(3, 4, 3), img),
    (lambda nn: nn.Conv2d(3, 4, (3, 2), stride=2, padding=(1, 2), dilation=(1, 2), bias=False), img),
    (lambda nn: nn.Conv2d(3, 6, 3, groups=3), img),
    (lambda nn: nn.Conv2d(3, 4, 3, padding="same", dilation=2), img),
    (lambda nn: nn.Conv2d(3, 4, 3, padding="valid"), img),
    (lambda nn: nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"), img),
    (lambda nn: nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode="replicate"), img),
    (lambda nn: nn.Conv2d(3, 4, 3, padding=1, padding_mode="circular"), img),
    (lambda nn: nn.Conv2d(3, 4, 4, padding="same", padding_mode="reflect"), img),
    (lambda nn: nn.Conv2d(3, 4, 3), img1),  # unbatched
    (lambda nn: nn.Conv1d(3, 4, 3), sig),
    (lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=2, dilation=2, bias=False), sig),
    (lambda nn: nn.Conv1d(3, 3, 3, groups=3, padding="same"), sig),
    (lambda nn: nn.Conv1d(3, 4, 3, padding=1, padding_mode="circular"), sig),
    (lambda nn: nn.Conv1d(3, 4, 3, padding=1, padding_mode="reflect"), sig[0]),
], ids=lambda v: None)
def test_conv_layers(make, inp):
    compare(make, inp, modes=("train",), atol=1e-4)


@requires_torch
@pytest.mark.parametrize("make", [
    lambda nn: nn.Conv2d(3, 4, 3, groups=2),
    lambda nn: nn.Conv2d(4, 3, 3, groups=2),
    lambda nn: nn.Conv2d(4, 4, 3, groups=0),
    lambda nn: nn.Conv2d(4, 4, 3, padding="full"),
    lambda nn: nn.Conv2d(4, 4, 3, padding="same", stride=2),
    lambda nn: nn.Conv2d(4, 4, 3, padding_mode="zero"),
], ids=lambda v: None)
def test_conv_argument_errors(make):
    with pytest.raises(ValueError) as th:
        make(torch.nn)
    with pytest.raises(ValueError) as rt:
        make(rnn)
    assert _sets_sorted(str(rt.value)) == _sets_sorted(str(th.value))


def _sets_sorted(message):
    """torch formats a set of padding modes into its message; a set's order depends on the hash
    seed of the process that compiled the module, so it differs between installs: sort it."""
    import re
    return re.sub(r"\{([^{}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}",
                  message)


# -- pooling ------------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("make, inp", [
    (lambda nn: nn.MaxPool2d(2), img),
    (lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), img),
    (lambda nn: nn.MaxPool2d((2, 3), dilation=(1, 2)), img),
    (lambda nn: nn.MaxPool2d(2, return_indices=True), img),
    (lambda nn: nn.MaxPool2d(2), img1),
    (lambda nn: nn.AvgPool2d(2), img),
    (lambda nn: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), img),
    (lambda nn: nn.AvgPool2d((2, 3), divisor_override=2), img),
    (lambda nn: nn.AdaptiveAvgPool2d((2, 3)), img),
    (lambda nn: nn.AdaptiveAvgPool2d(1), img),
    (lambda nn: nn.AdaptiveAvgPool2d((None, 3)), img1),
], ids=lambda v: None)
def test_pooling_layers(make, inp):
    compare(make, inp, modes=("train",))


# -- normalisation ------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("make, inp", [
    (lambda nn: nn.BatchNorm1d(5), x2),
    (lambda nn: nn.BatchNorm1d(4), x3),
    (lambda nn: nn.BatchNorm1d(5, momentum=None), x2),  # cumulative average: factor 1/n
    (lambda nn: nn.BatchNorm1d(5, eps=1e-3, momentum=0.3, affine=False), x2),
    (lambda nn: nn.BatchNorm1d(5, track_running_stats=False), x2),  # batch stats in eval too
    (lambda nn: nn.BatchNorm1d(5, bias=False), x2),
    (lambda nn: nn.BatchNorm2d(3), img),
    (lambda nn: nn.BatchNorm2d(3, momentum=None, affine=False), img),
], ids=lambda v: None)
def test_batchnorm_train_then_eval(make, inp):
    """Three training steps (running stats and num_batches_tracked updated as torch updates them),
    then eval (the running stats used); parameters perturbed so affine terms matter."""
    def make_perturbed(nn):
        m = make(nn)
        if m.affine:
            lib = reftrace if nn is rnn else torch
            with lib.no_grad():
                m.weight.mul_(1.5)
                if m.bias is not None:
                    m.bias.add_(0.25)
        return m
    rt, _ = compare(make_perturbed, inp, steps=3)
    if rt.track_running_stats:
        assert rt.num_batches_tracked.tolist() == 3  # train steps only


@requires_torch
@pytest.mark.parametrize("make, inp", [
    (lambda nn: nn.BatchNorm2d(3), x3),
    (lambda nn: nn.BatchNorm1d(3), img),
    (lambda nn: nn.BatchNorm1d(5), x2[:1]),  # one value per channel in training
], ids=lambda v: None)
def test_batchnorm_input_errors(make, inp):
    with pytest.raises(ValueError) as th:
        make(torch.nn)(torch.from_numpy(inp.copy()))
    with pytest.raises(ValueError) as rt:
        make(rnn)(reftrace.from_numpy(inp.copy()))
    assert str(rt.value) == str(th.value)


@requires_torch
@pytest.mark.parametrize("make, inp", [
    (lambda nn: nn.LayerNorm(5), x3),
    (lambda nn: nn.LayerNorm([4, 5], eps=1e-3), x3),
    (lambda nn: nn.LayerNorm(5, elementwise_affine=False), x2),
    (lambda nn: nn.LayerNorm(5, bias=False), x2),
    (lambda nn: nn.GroupNorm(3, 3), img),
    (lambda nn: nn.GroupNorm(1, 3, affine=False), img),
    (lambda nn: nn.GroupNorm(2, 4), x3.reshape(2, 4, 5)),
], ids=lambda v: None)
def test_norm_layers(make, inp):
    compare(make, inp, modes=("train",))


def test_group_norm_divisibility():
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups \(2\)"):
        rnn.GroupNorm(2, 5)


# -- dropout, embedding, flatten ----------------------------------------------------------------

@requires_torch
def test_dropout_eval_and_p0_are_identity():
    compare(lambda nn: nn.Dropout(0.3), x2, modes=("eval",))
    compare(lambda nn: nn.Dropout(0.0), x2, modes=("train",))


def test_dropout_train_statistics():
    reftrace.manual_seed(0)
    x = reftrace.ones(200, 200)
    y = rnn.Dropout(0.25)(x).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)  # survivors scaled by 1/(1-p)
    assert abs(kept.mean() - 0.75) < 0.01
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        rnn.Dropout(1.5)


idx = np.array([[0, 3, 9], [9, 1, 3]], dtype=np.int64)


@requires_torch
@pytest.mark.parametrize("make", [
    lambda nn: nn.Embedding(10, 4),
    lambda nn: nn.Embedding(10, 4, padding_idx=3),
    lambda nn: nn.Embedding(10, 4, padding_idx=-1, scale_grad_by_freq=True),
    lambda nn: nn.Embedding(10, 4, max_norm=1.0),  # renormalises the looked-up rows in place
    lambda nn: nn.Embedding(10, 4, max_norm=0.5, norm_type=1.0),
], ids=lambda v: None)
def test_embedding(make):
    compare(make, idx, modes=("train",))


def test_embedding_init_and_from_pretrained():
    reftrace.manual_seed(1)
    e = rnn.Embedding(2000, 50, padding_idx=7)
    w = e.weight.detach().numpy()
    assert np.all(w[7] == 0)
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.01  # N(0, 1)
    pre = rnn.Embedding.from_pretrained(reftrace.ones(3, 2))
    assert not pre.weight.requires_grad and pre.num_embeddings == 3
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        rnn.Embedding(3, 2, padding_idx=3)


@requires_torch
@pytest.mark.parametrize("make, inp", [
    (lambda nn: nn.Flatten(), img),
    (lambda nn: nn.Flatten(0, -2), img),
    (lambda nn: nn.Flatten(2), img),
], ids=lambda v: None)
def test_flatten(make, inp):
    compare(make, inp, modes=("train",))


# -- activations --------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("make", [
    lambda nn: nn.ReLU(),
    lambda nn: nn.ReLU(inplace=True),
    lambda nn: nn.GELU(),
    lambda nn: nn.GELU(approximate="tanh"),
    lambda nn: nn.SiLU(),
    lambda nn: nn.SiLU(inplace=True),
    lambda nn: nn.LeakyReLU(),
    lambda nn: nn.LeakyReLU(0.2, inplace=True),
    lambda nn: nn.ELU(),
    lambda nn: nn.ELU(alpha=0.5, inplace=True),
    lambda nn: nn.Sigmoid(),
    lambda nn: nn.Tanh(),
    lambda nn: nn.Softmax(dim=1),
    lambda nn: nn.Softmax(-1),
    lambda nn: nn.LogSoftmax(dim=0),
    lambda nn: nn.LogSoftmax(1),
], ids=lambda v: None)
def test_activations(make):
    compare(make, x3, modes=("train",))


@requires_torch
def test_inplace_activation_writes_its_input():
    x_rt, x_th = reftrace.from_numpy(x2.copy()), torch.from_numpy(x2.copy())
    assert rnn.ReLU(inplace=True)(x_rt) is x_rt
    torch.nn.ReLU(inplace=True)(x_th)
    assert_same(x_rt, x_th)


@requires_torch
def test_softmax_implicit_dim_warns_like_torch():
    for lib, nn in ((reftrace, rnn), (torch, torch.nn)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = nn.Softmax()(_to(lib, x3))
        assert "Implicit dimension choice for softmax has been deprecated" in str(w[0].message)
        # _stacklevel=5 points at Module's call frame (nn/modules/module.py), in both libraries
        assert w[0].filename.endswith("nn/modules/module.py")
        if lib is reftrace:
            rt_out = out
    assert_same(rt_out, out)


# -- a whole model ------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("p, modes", [(0.1, ("eval",)), (0.0, ("train", "eval"))])
def test_small_cnn_end_to_end(p, modes):
    """Dropout draws differ between the libraries, so p > 0 is compared in eval mode only."""
    def make(nn):
        return nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 8, 3, padding=1, groups=2), nn.GroupNorm(2, 8), nn.SiLU(),
            nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten(), nn.Dropout(p), nn.Linear(32, 16),
            nn.LayerNorm(16), nn.GELU(), nn.Linear(16, 4), nn.LogSoftmax(dim=1))
    compare(make, img, modes=modes, steps=2, atol=1e-4)


# -- default initialisation ---------------------------------------------------------------------

def _uniform_ok(t, bound):
    """Inside [-bound, bound], and spread over it like U(-bound, bound) (std = bound / sqrt 3)."""
    a = t.detach().numpy()
    assert np.abs(a).max() <= bound * (1 + 1e-6)
    assert np.abs(a).max() > 0.9 * bound
    assert abs(a.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert abs(a.mean()) < 0.05 * bound


@pytest.mark.parametrize("make, fan_in", [
    (lambda: rnn.Linear(300, 200), 300),
    (lambda: rnn.Conv2d(16, 64, 3), 16 * 9),
    (lambda: rnn.Conv2d(16, 64, (3, 5), groups=4), 4 * 15),
    (lambda: rnn.Conv1d(8, 128, 5), 8 * 5),
])
def test_kaiming_default_init(make, fan_in):
    """kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the bias too."""
    reftrace.manual_seed(2)
    m = make()
    _uniform_ok(m.weight, 1 / math.sqrt(fan_in))
    b = m.bias.detach().numpy()
    assert np.abs(b).max() <= 1 / math.sqrt(fan_in)
    assert m.weight.requires_grad and isinstance(m.weight, rnn.Parameter)


def test_bilinear_init():
    reftrace.manual_seed(3)
    m = rnn.Bilinear(50, 40, 30)
    _uniform_ok(m.weight, 1 / math.sqrt(50))
    assert np.abs(m.bias.detach().numpy()).max() <= 1 / math.sqrt(50)


@pytest.mark.parametrize("make", [
    lambda: rnn.BatchNorm2d(6), lambda: rnn.LayerNorm((2, 3)), lambda: rnn.GroupNorm(3, 6),
])
def test_norm_init(make):
    m = make()
    assert np.all(m.weight.detach().numpy() == 1) and np.all(m.bias.detach().numpy() == 0)
    if isinstance(m, rnn.BatchNorm2d):
        assert m.running_mean.tolist() == [0.0] * 6 and m.running_var.tolist() == [1.0] * 6
        assert m.num_batches_tracked.tolist() == 0 and not m.running_mean.requires_grad


def test_init_functions():
    init = rnn.init
    reftrace.manual_seed(4)
    w = rnn.Parameter(reftrace.empty(400, 300))
    assert init.xavier_uniform_(w, gain=2.0) is w
    _uniform_ok(w, 2.0 * math.sqrt(6 / 700))
    init.kaiming_uniform_(w, nonlinearity="relu", mode="fan_out")
    _uniform_ok(w, math.sqrt(2) * math.sqrt(3 / 400))
    init.kaiming_normal_(w)
    assert abs(w.detach().numpy().std() - math.sqrt(2 / (1 + 0.01 ** 2)) / math.sqrt(300)) < 2e-3
    init.xavier_normal_(w)
    assert abs(w.detach().numpy().std() - math.sqrt(2 / 700)) < 2e-3
    init.normal_(w, 3.0, 0.5)
    assert abs(w.detach().numpy().mean() - 3) < 0.01
    init.constant_(w, 0.3)
    assert np.all(w.detach().numpy() == np.float32(0.3))
    assert w.requires_grad  # initialised under no_grad, still a trainable parameter
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(reftrace.empty(0, 3))
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        init.xavier_uniform_(reftrace.empty(3))
    with pytest.raises(ValueError, match="Mode fan_up not supported"):
        init.kaiming_uniform_(w, mode="fan_up")


@requires_torch
@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3),
                                  ("selu",), ("leaky_relu", True), ("swish",)])
def test_calculate_gain_matches_torch(args):
    try:
        expected = torch.nn.init.calculate_gain(*args)
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e)):
            rnn.init.calculate_gain(*args)
        return
    assert rnn.init.calculate_gain(*args) == expected


@requires_torch
@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (8, 4, 3, 3)])
def test_fans_match_torch(shape):
    assert rnn.init._calculate_fan_in_and_fan_out(reftrace.empty(shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
