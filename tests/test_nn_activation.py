"""Activation layers and functionals against torch: values (float32/float64, NaN/inf, strided
inputs), dtype errors, in-place forms, construction/repr, and traced graphs."""
import numpy as np
import pytest

from nn_support import compare_forward, compare_trace
from oracle import check, requires_torch, sample

pytestmark = requires_torch

x = sample((2, 4, 3, 5), seed=1)
special = np.array([[-np.inf, -5.0, -3.0, -0.5, 0.0], [0.5, 3.0, 5.0, np.inf, np.nan]], "float32")

LAYERS = {
    "threshold": lambda nn: nn.Threshold(0.1, 20.0),
    "threshold-inplace": lambda nn: nn.Threshold(0.1, 20.0, inplace=True),
    "relu6": lambda nn: nn.ReLU6(),
    "relu6-inplace": lambda nn: nn.ReLU6(inplace=True),
    "hardtanh": lambda nn: nn.Hardtanh(-2.0, 1.5),
    "hardsigmoid": lambda nn: nn.Hardsigmoid(),
    "hardswish": lambda nn: nn.Hardswish(),
    "hardswish-inplace": lambda nn: nn.Hardswish(inplace=True),
    "mish": lambda nn: nn.Mish(),
    "selu": lambda nn: nn.SELU(),
    "celu": lambda nn: nn.CELU(0.7),
    "glu": lambda nn: nn.GLU(1),
    "glu-negative-dim": lambda nn: nn.GLU(-3),
    "hardshrink": lambda nn: nn.Hardshrink(0.7),
    "softshrink": lambda nn: nn.Softshrink(),
    "logsigmoid": lambda nn: nn.LogSigmoid(),
    "softplus": lambda nn: nn.Softplus(2.0, 3.0),
    "softsign": lambda nn: nn.Softsign(),
    "tanhshrink": lambda nn: nn.Tanhshrink(),
    "prelu": lambda nn: nn.PReLU(),
    "prelu-channels": lambda nn: nn.PReLU(4, init=0.1),
    "softmin": lambda nn: nn.Softmin(1),
    "softmax2d": lambda nn: nn.Softmax2d(),
    "rrelu-eval": lambda nn: nn.RReLU(0.1, 0.3),
    "gelu-tanh": lambda nn: nn.GELU("tanh"),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_forward(name):
    compare_forward(LAYERS[name], (x,))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_trace(name):
    compare_trace(LAYERS[name], (x,), other_inputs=[(x[:1].copy(),)])


FUNCTIONS = {
    "hardswish": lambda F, t: F.hardswish(t),
    "hardsigmoid": lambda F, t: F.hardsigmoid(t),
    "mish": lambda F, t: F.mish(t),
    "selu": lambda F, t: F.selu(t),
    "celu": lambda F, t: F.celu(t, 1.5),
    "logsigmoid": lambda F, t: F.logsigmoid(t),
    "hardshrink": lambda F, t: F.hardshrink(t, 3.0),
    "softshrink": lambda F, t: F.softshrink(t, 3.0),
    "tanhshrink": lambda F, t: F.tanhshrink(t),
    "softsign": lambda F, t: F.softsign(t),
    "softmin": lambda F, t: F.softmin(t, 0),
    "rrelu": lambda F, t: F.rrelu(t),
    "prelu": lambda F, t: F.prelu(t, t.new_ones(1) * 0.3),
    "glu": lambda F, t: F.glu(t, 0),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_functional_special_values(name, dtype):
    fn = FUNCTIONS[name]
    check(lambda m, t: fn(m.nn.functional, t), special.astype(dtype), atol=1e-6)
    check(lambda m, t: fn(m.nn.functional, t.transpose(0, 1)), x[0, 0].astype(dtype), atol=1e-6)


@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid", "mish", "softshrink", "hardshrink",
                                  "logsigmoid", "glu", "celu"])
def test_functional_integer_input(name):
    check(lambda m, t: FUNCTIONS[name](m.nn.functional, t), np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("fn", [
    lambda m, t: m.nn.functional.hardswish(t, inplace=True),
    lambda m, t: m.nn.functional.hardsigmoid(t, inplace=True),
    lambda m, t: m.nn.functional.mish(t, inplace=True),
    lambda m, t: m.nn.functional.selu(t, inplace=True),
    lambda m, t: m.nn.functional.celu(t, 2.0, inplace=True),
    lambda m, t: m.nn.functional.rrelu(t, inplace=True),
    lambda m, t: m.nn.functional.celu(t, 0.0),
    lambda m, t: m.nn.functional.softshrink(t, -1),
    lambda m, t: m.nn.functional.glu(t[0]),
    lambda m, t: m.nn.functional.glu(t[0, 0, 0, 0]),
    lambda m, t: m.prelu(t, m.ones(2)),
    lambda m, t: m.prelu(t, m.ones(1, 4)),
    lambda m, t: m.prelu(t, m.ones(4, dtype=m.float64)),
    lambda m, t: m.rrelu(t, 0.5, 0.1),
    lambda m, t: m.nn.Softmax2d()(t[0, 0, 0]),
    lambda m, t: t.hardshrink(1.0),
    lambda m, t: t.prelu(m.ones(4) * 0.2),
], ids=lambda v: None)
def test_functional_cases(fn):
    check(fn, x)


def test_rrelu_training_draws_slopes_in_range():
    import reftrace
    t = reftrace.from_numpy(x.copy())
    out = reftrace.nn.functional.rrelu(t, 0.1, 0.3, training=True).numpy()
    neg = x < 0
    ratio = out[neg] / x[neg]
    assert np.all((ratio >= 0.1 - 1e-6) & (ratio <= 0.3 + 1e-6)) and np.unique(ratio).size > 10
    np.testing.assert_array_equal(out[~neg], x[~neg])
