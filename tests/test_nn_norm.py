"""Normalisation and padding layers against torch: BatchNorm3d, SyncBatchNorm (one process),
InstanceNorm1d/2d/3d with and without running statistics, LocalResponseNorm, CrossMapLRN2d,
RMSNorm; every padding layer, F.pad with negative padding: construction, values, running-stat
updates, errors, traced graphs."""
import numpy as np
import pytest

from nn_support import compare_forward, compare_trace
from oracle import check, requires_torch, sample

pytestmark = requires_torch

x3 = sample((2, 3, 6), seed=1)
x4 = sample((2, 3, 5, 4), seed=2)
x5 = sample((2, 3, 3, 4, 2), seed=3)

NORMS = {
    "bn3d": (lambda nn: nn.BatchNorm3d(3), x5),
    "bn3d-noaffine": (lambda nn: nn.BatchNorm3d(3, affine=False, momentum=None), x5),
    "syncbn": (lambda nn: nn.SyncBatchNorm(3), x4),
    "in1d": (lambda nn: nn.InstanceNorm1d(3), x3),
    "in1d-unbatched": (lambda nn: nn.InstanceNorm1d(3, affine=True), x3[0]),
    "in2d-stats": (lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True), x4),
    "in2d-nobias": (lambda nn: nn.InstanceNorm2d(3, affine=True, bias=False), x4),
    "in3d": (lambda nn: nn.InstanceNorm3d(3, track_running_stats=True, momentum=0.3), x5),
    "lrn3d": (lambda nn: nn.LocalResponseNorm(2), x3),
    "lrn4d": (lambda nn: nn.LocalResponseNorm(3, alpha=0.1, beta=0.5, k=2.0), x4),
    "lrn5d": (lambda nn: nn.LocalResponseNorm(4), x5),
    "crossmaplrn": (lambda nn: nn.CrossMapLRN2d(3, alpha=0.1), sample((2, 7, 3, 2), seed=4)),
    "crossmaplrn-wide": (lambda nn: nn.CrossMapLRN2d(5, alpha=0.2, beta=0.5, k=2),
                         sample((1, 9, 2, 2), seed=5)),
    "rmsnorm": (lambda nn: nn.RMSNorm(4), x4),
    "rmsnorm-eps": (lambda nn: nn.RMSNorm([5, 4], eps=1e-3, elementwise_affine=False), x4),
}


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name", sorted(NORMS))
def test_norm_forward(name, train):
    make, x = NORMS[name]
    compare_forward(make, (x,), train=train, atol=1e-5)


@pytest.mark.parametrize("name", sorted(set(NORMS) - {"crossmaplrn", "crossmaplrn-wide"}))
def test_norm_trace(name):
    make, x = NORMS[name]
    compare_trace(make, (x,), other_inputs=[(x[:1].copy() + 1,)] if x.ndim > 3 else [])


def test_instance_norm_checks():
    check(lambda m, x: m.nn.InstanceNorm2d(4, affine=True)(x), x4)
    check(lambda m, x: m.nn.InstanceNorm2d(3)(x[:, :, :1, :1]), x4)
    check(lambda m, x: m.nn.InstanceNorm1d(3)(x), x4)
    check(lambda m, x: m.nn.functional.instance_norm(x, use_input_stats=False), x4)
    check(lambda m, x: m.nn.SyncBatchNorm(3)(x[0, 0, 0]), x4)
    check(lambda m, x: m.nn.BatchNorm3d(3)(x), x4)
    check(lambda m, x: m.rms_norm(x.long(), [4]), x4)
    check(lambda m, x: m.rms_norm(x, [5]), x4)
    check(lambda m, x: m.nn.functional.local_response_norm(x[0, 0], 2), x4)


PADS = {
    "zero1d": lambda nn: nn.ZeroPad1d((1, 2)),
    "zero2d": lambda nn: nn.ZeroPad2d(1),
    "zero3d": lambda nn: nn.ZeroPad3d((1, 0, 2, 1, 0, 1)),
    "const1d": lambda nn: nn.ConstantPad1d(2, 3.5),
    "const2d": lambda nn: nn.ConstantPad2d((1, -1, 0, 2), -1.0),
    "const3d": lambda nn: nn.ConstantPad3d(1, 0.5),
    "reflect1d": lambda nn: nn.ReflectionPad1d((2, 1)),
    "reflect2d": lambda nn: nn.ReflectionPad2d((1, 1, 2, 0)),
    "reflect3d": lambda nn: nn.ReflectionPad3d(1),
    "replicate1d": lambda nn: nn.ReplicationPad1d(3),
    "replicate2d": lambda nn: nn.ReplicationPad2d((0, 2, 1, 1)),
    "replicate3d": lambda nn: nn.ReplicationPad3d((1, 2, 0, 1, 1, 0)),
    "circular1d": lambda nn: nn.CircularPad1d(2),
    "circular2d": lambda nn: nn.CircularPad2d((1, 0, 2, 1)),
    "circular3d": lambda nn: nn.CircularPad3d(1),
}
PAD_INPUT = {"1d": x3, "2d": x4, "3d": x5}


@pytest.mark.parametrize("name", sorted(PADS))
def test_padding_layers(name):
    x = PAD_INPUT[name[-2:]]
    compare_forward(PADS[name], (x,))
    compare_forward(PADS[name], (x[0],))  # unbatched
    compare_trace(PADS[name], (x,), other_inputs=[(x[:1].copy(),)])


def test_circular_pad_checks_rank():
    check(lambda m, x: m.nn.CircularPad2d(1)(x), x5)


xp = np.arange(30, dtype="float32").reshape(2, 3, 5)
xp3 = np.arange(120, dtype="float32").reshape(1, 2, 3, 4, 5)
NEGATIVE = [(xp, (-1, 2)), (xp, (2, -1)), (xp, (-2, -2, 1, 0)), (xp, (-2, 3)), (xp, (1, -3)),
            (xp, (-5, 0)), (xp, (-3, -3)), (xp, (-2, 1, 2, -1)), (xp, (0, 0, -3, -1)),
            (xp, (-6, 1)), (xp, (-4, 0)), (xp, (0, 0, -3, 0)), (xp, (0, 0, -2, -1)),
            (xp, (-5, 0, -3, 0)), (xp3, (0, 0, 0, 0, -3, 0)), (xp3, (0, 0, -4, 0, 0, 0)),
            (xp3, (0, 0, 0, 0, -4, 0)), (xp3, (0, -5, 0, 0, 0, 0)), (xp3, (-1, 2, 1, -2, 0, 1))]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("x, pad", NEGATIVE, ids=lambda v: None)
def test_pad_negative(mode, x, pad):
    check(lambda m, t: m.nn.functional.pad(t, pad, mode=mode), x)


def test_pad_bool_value():  # defect D12
    check(lambda m, t: m.nn.functional.pad(t, (1, 1), value=True), xp)
    check(lambda m, t: m.nn.functional.pad(t.bool(), (1, 1), value=True), xp)
