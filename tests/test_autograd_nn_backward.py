"""The nn activations' and losses' backward ops (reftrace/ops/backward_nn.py and their
FunctionsManual helpers): first- and second-order input gradients and grad_fn names against live
torch 2.13.

Inputs: torch's OpInfo samples for each ``nn.functional.*`` op (float64, requires_grad as the
samples have it; the first few samples of each), plus hand-picked inputs on the kinks (x = +-3 for
hardswish, |x| = lambd for the shrinks, self == target for the losses), run through
``autograd_oracle.compare_grads``. Second order runs where torch's OpInfo says torch supports it.
"""
import itertools

import numpy as np
import pytest

import reftrace
from autograd_oracle import compare_grads, to_reftrace

try:  # torch is the oracle: without it these tests skip
    import torch
except ImportError:  # pragma: no cover - torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)
pytestmark = pytest.mark.filterwarnings("ignore")

N_SAMPLES = 3
OPS = ["hardswish", "hardsigmoid", "mish", "softshrink", "hardshrink", "glu", "prelu",
       "smooth_l1_loss", "huber_loss", "soft_margin_loss", "binary_cross_entropy",
       "binary_cross_entropy_with_logits", "multi_margin_loss"]
# reftrace's prelu is one op; torch's composite prelu records _prelu_kernel's node
# (PreluKernelBackward0, the name mapping lives in autograd/_derivatives.py's _TORCH_NODES)
NAME_DIFFERS = {"prelu"}


def _infos():
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    except Exception:  # pragma: no cover - torch without its testing package
        return {}
    return {info.name: info for info in op_db if info.name in {f"nn.functional.{n}" for n in OPS}}


INFOS = _infos()


@pytest.mark.parametrize("name", OPS)
def test_op_db_samples_match_torch(name):
    info = INFOS.get(f"nn.functional.{name}")
    if info is None:
        pytest.skip(f"op_db has no nn.functional.{name}")
    fn_rt = getattr(reftrace.nn.functional, name)
    samples = info.sample_inputs("cpu", torch.float64, requires_grad=True)
    for sample in itertools.islice(samples, N_SAMPLES):
        kwargs = sample.kwargs

        def program(m, inp, *args):
            if m is torch:
                return info.op(inp, *args, **kwargs)
            return fn_rt(inp, *args, **to_reftrace(kwargs))
        compare_grads(program, [sample.input, *sample.args], second_order=info.supports_gradgrad,
                      names=name not in NAME_DIFFERS)


def test_prelu_node_name():
    x = reftrace.randn(2, 3, requires_grad=True)
    y = reftrace.nn.functional.prelu(x, reftrace.tensor([0.25, 0.5, 1.0]))
    assert type(y.grad_fn).__name__ == "PreluKernelBackward0"


def _kinks():
    x = np.array([[-3.5, -3.0, -2.0, -0.5, 0.0], [0.5, 2.9, 3.0, 3.5, 1.0]])
    return torch.from_numpy(x).requires_grad_()


def _probs():
    rng = np.random.default_rng(1)
    return torch.from_numpy(rng.uniform(0.05, 0.95, (2, 5))).requires_grad_()


HAND = {
    "hardswish_kinks": (lambda m, x: m.nn.functional.hardswish(x), [_kinks()]),
    "hardsigmoid_kinks": (lambda m, x: m.nn.functional.hardsigmoid(x), [_kinks()]),
    "softshrink_kinks": (lambda m, x: m.nn.functional.softshrink(x, 0.5), [_kinks()]),
    "hardshrink_kinks": (lambda m, x: m.nn.functional.hardshrink(x, 0.5), [_kinks()]),
    "mish_float32": (lambda m, x: m.nn.functional.mish(x.float()), [_kinks()]),
    "glu_dim0": (lambda m, x: m.nn.functional.glu(x, 0), [_kinks()]),
    "prelu_channels": (lambda m, x, w: m.nn.functional.prelu(x.reshape(1, 2, 5), w), [
        _kinks(), torch.tensor([0.25, -0.5], dtype=torch.float64).requires_grad_()]),
    "smooth_l1_equal": (lambda m, x, t: m.nn.functional.smooth_l1_loss(x, t, beta=0.5),
                        [_kinks(), _kinks() * 0.5]),
    "smooth_l1_sum": (lambda m, x, t: m.nn.functional.smooth_l1_loss(x, t, reduction="sum",
                                                                     beta=0.25),
                        [_kinks(), torch.zeros(2, 5, dtype=torch.float64)]),
    "huber_none": (lambda m, x, t: m.nn.functional.huber_loss(x, t, reduction="none", delta=0.5),
                   [_kinks(), _kinks() * 0.5]),
    "soft_margin_sum": (lambda m, x: m.nn.functional.soft_margin_loss(
        x, m.tensor([[1., -1, 1, 1, -1], [-1, 1, 1, -1, 1]], dtype=m.float64), reduction="sum"),
        [_kinks()]),
    "bce_weight_mean": (lambda m, p, t: m.nn.functional.binary_cross_entropy(
        p, t, weight=m.tensor([1., 2, 3, 4, 5], dtype=m.float64)), [_probs(), _probs() * 0.5]),
    "bce_none": (lambda m, p, t: m.nn.functional.binary_cross_entropy(p, t, reduction="none"),
                 [_probs(), _probs() * 0.5]),
    "bce_logits_pos_weight": (lambda m, x, t: m.nn.functional.binary_cross_entropy_with_logits(
        x, t, weight=m.tensor([1., 2, 3, 4, 5], dtype=m.float64),
        pos_weight=m.tensor([.5, 1, 2, 3, 4], dtype=m.float64)), [_kinks(), _probs()]),
    "multi_margin_p2_weight": (lambda m, x: m.nn.functional.multi_margin_loss(
        x, m.tensor([1, 4]), p=2, margin=2.0, weight=m.tensor([1., 2, 3, 4, 5], dtype=m.float64),
        reduction="none"), [_kinks()]),
}
FIRST_ORDER_ONLY = {"multi_margin_p2_weight", "hardsigmoid_kinks",  # torch has no double backward
                    "prelu_channels"}  # see test_prelu_channels_double_backward
# forward graphs that differ from torch's outside the backward ops: torch's prelu records
# PreluKernelBackward0 (beta=0 smooth_l1_loss is l1_loss in both, which has no derivative yet)
OTHER_NODE = {"prelu_channels"}


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_picked_gradients_match_torch(name):
    fn, inputs = HAND[name]
    inputs = [t.detach().clone().requires_grad_(t.requires_grad) for t in inputs]
    compare_grads(fn, inputs, second_order=name not in FIRST_ORDER_ONLY,
                  names=name not in OTHER_NODE)


def test_prelu_channels_double_backward():
    fn, inputs = HAND["prelu_channels"]
    compare_grads(fn, [t.detach().clone().requires_grad_() for t in inputs], names=False)


@pytest.mark.parametrize("name, fn", [
    ("hardswish", lambda m, x: m.nn.functional.hardswish(x)),
    ("glu", lambda m, x: m.nn.functional.glu(x)),
    ("softshrink", lambda m, x: m.nn.functional.softshrink(x)),
    ("smooth_l1_loss", lambda m, x: m.nn.functional.smooth_l1_loss(x, x.detach() * 0.5)),
    ("huber_loss", lambda m, x: m.nn.functional.huber_loss(x, x.detach() * 0.5, reduction="sum")),
    ("binary_cross_entropy", lambda m, x: m.nn.functional.binary_cross_entropy(
        x.sigmoid(), x.detach().sigmoid() * 0.5, reduction="sum")),
])
def test_gradient_is_recorded_with_torchs_node(name, fn):
    """Under create_graph the first-order gradient is the backward op's own node
    (HardswishBackwardBackward0 ...), as torch records it."""
    names = []
    for m in (torch, reftrace):
        x = m.tensor(np.linspace(-4, 4, 8).reshape(2, 4), requires_grad=True)
        (g,) = m.autograd.grad(fn(m, x).sum(), [x], create_graph=True)
        names.append(type(g.grad_fn).__name__)
    assert names[1] == names[0]


def test_hardsigmoid_double_backward_is_torchs_error():
    """torch has no derivative for hardsigmoid_backward: its double backward refuses."""
    x = reftrace.randn(4, requires_grad=True)
    (g,) = reftrace.autograd.grad(reftrace.nn.functional.hardsigmoid(x).sum(), [x],
                                  create_graph=True)
    with pytest.raises((RuntimeError, NotImplementedError)):
        reftrace.autograd.grad(g.sum(), [x])


def _u(*shape, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).uniform(-1, 1, shape)).requires_grad_()


def _aten(m, name):
    """An ATen op by its name: torch.ops.aten.NAME or reftrace's op table."""
    return getattr(torch.ops.aten, name) if m is torch else reftrace.ops.get_packet(name)


# max_pool3d without indices and adaptive_avg_pool3d reach the differentiable ops through
# torch's composites (max_pool3d_with_indices, _adaptive_avg_pool3d), which reftrace's forward
# modules do not route yet: these programs call the differentiable ops themselves.
POOLS = {
    "max_pool3d": (lambda m, x: m.nn.functional.max_pool3d(x, 2, 1, 1, return_indices=True)[0],
                   [_u(1, 2, 4, 4, 3)]),
    "max_pool3d_ceil_unbatched": (lambda m, x: m.nn.functional.max_pool3d(
        x, 2, 2, 0, ceil_mode=True, return_indices=True)[0], [_u(3, 5, 5, 3)]),
    "adaptive_max_pool2d": (lambda m, x: m.nn.functional.adaptive_max_pool2d(x, (3, 2)),
                            [_u(2, 3, 5, 4)]),
    "adaptive_max_pool3d": (lambda m, x: m.nn.functional.adaptive_max_pool3d(x, (3, 2, 2)),
                            [_u(2, 5, 4, 3)]),
    "_adaptive_avg_pool3d": (lambda m, x: _aten(m, "_adaptive_avg_pool3d")(x, [3, 2, 2]),
                             [_u(2, 2, 5, 4, 3)]),
    "avg_pool3d": (lambda m, x: m.nn.functional.avg_pool3d(x, 2, 1, 1), [_u(1, 2, 4, 4, 3)]),
    "avg_pool3d_ceil_exclude_pad": (lambda m, x: m.nn.functional.avg_pool3d(
        x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [_u(2, 5, 5, 4)]),
    "avg_pool3d_divisor": (lambda m, x: m.nn.functional.avg_pool3d(x, 2, divisor_override=3),
                           [_u(1, 2, 4, 4, 4)]),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pooling_gradients_match_torch(name):
    fn, inputs = POOLS[name]
    compare_grads(fn, [t.detach().clone().requires_grad_() for t in inputs])


def _op(name, *args):
    return lambda m, x: _aten(m, name)(x, *args)


# F.interpolate records the .vec overloads, which in torch decompose to these per-dimension
# overloads (the ones derivatives.yaml describes); reftrace's .vec overloads of these modes do
# not decompose yet, so the programs call the per-dimension ops.
UPSAMPLES = {
    "linear1d": (_op("upsample_linear1d", [12], False, 2.5), [_u(2, 3, 5)]),
    "linear1d_corners_down": (_op("upsample_linear1d", [3], True), [_u(2, 3, 7)]),
    "bicubic2d": (_op("upsample_bicubic2d", [6, 8], False, 1.7, 1.7), [_u(1, 2, 4, 5)]),
    "bicubic2d_corners": (_op("upsample_bicubic2d", [3, 7], True), [_u(1, 2, 4, 5)]),
    "trilinear3d": (_op("upsample_trilinear3d", [3, 5, 4], False), [_u(1, 2, 2, 3, 5)]),
    "nearest3d": (_op("upsample_nearest3d", [4, 6, 4], 2.0, 2.0, 2.0), [_u(1, 2, 2, 3, 2)]),
    "nearest3d_down": (_op("upsample_nearest3d", [1, 2, 3]), [_u(1, 2, 2, 3, 5)]),
    "nearest_exact1d": (_op("_upsample_nearest_exact1d", [7]), [_u(2, 3, 5)]),
    "nearest_exact2d": (_op("_upsample_nearest_exact2d", [3, 2], 0.6, 0.6), [_u(2, 3, 5, 4)]),
    "nearest_exact3d": (_op("_upsample_nearest_exact3d", [3, 4, 2]), [_u(1, 2, 2, 3, 5)]),
    "bilinear2d_aa": (_op("_upsample_bilinear2d_aa", [3, 2], False), [_u(1, 2, 7, 5)]),
    "bicubic2d_aa": (_op("_upsample_bicubic2d_aa", [3, 6], False), [_u(1, 2, 7, 5)]),
    "bicubic2d_aa_corners_up": (_op("_upsample_bicubic2d_aa", [9, 6], True), [_u(1, 2, 7, 5)]),
}


@pytest.mark.parametrize("name", sorted(UPSAMPLES))
def test_upsampling_gradients_match_torch(name):
    fn, inputs = UPSAMPLES[name]
    compare_grads(fn, [t.detach().clone().requires_grad_() for t in inputs])


def test_upsampling_float32_gradient():
    x = _u(1, 2, 4, 5).detach().float().requires_grad_()
    compare_grads(_op("upsample_bicubic2d", [7, 3], False), [x])


REST = {
    "fractional_max_pool2d": (lambda m, x: m.nn.functional.fractional_max_pool2d(
        x, 2, output_size=(3, 3), _random_samples=m.tensor([[[0.3, 0.7]]], dtype=m.float64)),
        [_u(1, 1, 6, 7)], True),
    "fractional_max_pool3d": (lambda m, x: m.nn.functional.fractional_max_pool3d(
        x, 2, output_size=(2, 3, 2), _random_samples=m.tensor([[[0.3, 0.7, 0.5]]],
                                                              dtype=m.float64)),
        [_u(1, 1, 5, 6, 4)], True),
    "affine_grid_2d": (lambda m, th: m.nn.functional.affine_grid(th, [2, 3, 4, 5],
                                                                 align_corners=False),
                       [_u(2, 2, 3)], True),
    "affine_grid_3d_corners": (lambda m, th: m.nn.functional.affine_grid(
        th, [1, 3, 2, 4, 5], align_corners=True), [_u(1, 3, 4)], True),
    "pack_padded_sequence": (lambda m, x: m.nn.utils.rnn.pack_padded_sequence(
        x, m.tensor([4, 2, 1]), batch_first=False).data, [_u(4, 3, 2)], False),
    "pack_padded_sequence_batch_first": (lambda m, x: m.nn.utils.rnn.pack_padded_sequence(
        x, m.tensor([3, 3, 2, 1]), batch_first=True).data, [_u(4, 3, 2)], False),
    # (conv_tbc's double backward: test_conv_tbc_double_backward); torch differentiates
    # _pdist_backward no further
    "conv_tbc": (lambda m, x, w, b: m.conv_tbc(x, w, b, 1),
                 [_u(5, 2, 3), _u(3, 3, 4, seed=1), _u(4, seed=2)], False),
    **{f"pdist_p{p}": ((lambda p: lambda m, x: m.nn.functional.pdist(x, p))(p), [_u(5, 3)], False)
       for p in (0.0, 0.5, 1.0, 2.0, 3.0, float("inf"))},
}


@pytest.mark.parametrize("name", sorted(REST))
def test_other_gradients_match_torch(name):
    fn, inputs, second_order = REST[name]
    compare_grads(fn, [t.detach().clone().requires_grad_() for t in inputs],
                  second_order=second_order)


def test_pdist_double_backward_refused_as_torch():
    """torch declares _pdist_backward's derivative not implemented: double backward says so."""
    errors = []
    for m in (torch, reftrace):
        x = m.tensor(np.linspace(-1, 1, 15).reshape(5, 3) ** 2, requires_grad=True)
        (g,) = m.autograd.grad(m.nn.functional.pdist(x).sum(), [x], create_graph=True)
        errors.append(type(g.grad_fn).__name__)
        with pytest.raises(NotImplementedError) as info:
            m.autograd.grad(g.sum(), [x])
        errors.append(str(info.value))
    assert errors[2:] == errors[:2]


def test_conv_tbc_double_backward():
    """torch's conv_tbc_backward is a composite of in-place ops (addmm_ into narrowed zeros) that
    torch differentiates again: so does reftrace, with the same nodes."""
    fn, inputs, _ = REST["conv_tbc"]
    compare_grads(fn, [t.detach().clone().requires_grad_() for t in inputs])


def _bag(mode, freq=False, pad=-1, last=False):
    """aten::_embedding_bag (what torch's embedding_bag calls; reftrace's F.embedding_bag records
    embedding_bag itself, which has no derivative yet): the bags' values only."""
    def program(m, w, *per_sample_weights):
        offsets = [0, 3, 3, 7] + ([10] if last else [])
        return _aten(m, "_embedding_bag")(
            w, m.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0]), m.tensor(offsets), freq, mode, False,
            per_sample_weights[0] if per_sample_weights else None, last, pad)[0]
    return program


# torch's _embedding_bag_backward derivatives are not implemented: first order only
BAGS = {
    "sum": (_bag(0), [_u(10, 3)]),
    "mean": (_bag(1), [_u(10, 3)]),
    "max": (_bag(2), [_u(10, 3)]),
    "max_include_last_offset": (_bag(2, last=True), [_u(10, 3)]),
    "sum_padding_idx": (_bag(0, pad=4), [_u(10, 3)]),
    "sum_scale_grad_by_freq": (_bag(0, True), [_u(10, 3)]),
    "mean_padding_idx_scale_grad_by_freq": (_bag(1, True, 2), [_u(10, 3)]),
    "per_sample_weights": (_bag(0), [_u(10, 3), _u(10, seed=3)]),
    "per_sample_weights_padding_last_offset": (_bag(0, pad=0, last=True),
                                               [_u(10, 3), _u(10, seed=3)]),
}


@pytest.mark.parametrize("name", sorted(BAGS))
def test_embedding_bag_gradients_match_torch(name):
    fn, inputs = BAGS[name]
    compare_grads(fn, [t.detach().clone().requires_grad_() for t in inputs], second_order=False)
