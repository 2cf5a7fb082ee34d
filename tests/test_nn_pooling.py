"""Pooling layers in 1d/2d/3d against torch: max (with indices), average (count_include_pad,
divisor_override, ceil_mode), adaptive max/average, LP pooling, max-unpooling: construction,
forward values/strides/indices, errors, traced graphs."""
import numpy as np
import pytest

from nn_support import compare_forward, compare_trace
from oracle import check, requires_torch, sample

pytestmark = requires_torch

x3 = sample((2, 3, 9), seed=1)
x4 = sample((2, 3, 7, 8), seed=2)
x5 = sample((1, 2, 5, 6, 7), seed=3)

LAYERS = {
    "max1d": (lambda nn: nn.MaxPool1d(3, 2, padding=1, dilation=2, ceil_mode=True), x3),
    "max1d-idx": (lambda nn: nn.MaxPool1d(2, return_indices=True), x3),
    "max3d": (lambda nn: nn.MaxPool3d(2), x5),
    "max3d-idx": (lambda nn: nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=1,
                                          return_indices=True, ceil_mode=True), x5),
    "avg1d": (lambda nn: nn.AvgPool1d(3, 2, padding=1), x3),
    "avg1d-ceil-nopad": (lambda nn: nn.AvgPool1d(2, ceil_mode=True, count_include_pad=False), x3),
    "avg3d": (lambda nn: nn.AvgPool3d(2, stride=1, padding=1, count_include_pad=False), x5),
    "avg3d-divisor": (lambda nn: nn.AvgPool3d((1, 2, 3), ceil_mode=True, divisor_override=5), x5),
    "adaptive-avg1d": (lambda nn: nn.AdaptiveAvgPool1d(4), x3),
    "adaptive-avg3d": (lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), x5),
    "adaptive-max1d": (lambda nn: nn.AdaptiveMaxPool1d(4), x3),
    "adaptive-max1d-idx": (lambda nn: nn.AdaptiveMaxPool1d(5, return_indices=True), x3),
    "adaptive-max2d": (lambda nn: nn.AdaptiveMaxPool2d((3, None)), x4),
    "adaptive-max2d-idx": (lambda nn: nn.AdaptiveMaxPool2d(3, return_indices=True), x4),
    "adaptive-max3d": (lambda nn: nn.AdaptiveMaxPool3d(2, return_indices=True), x5),
    "adaptive-max2d-unbatched": (lambda nn: nn.AdaptiveMaxPool2d(1), x4[0]),
    "lp1d": (lambda nn: nn.LPPool1d(2, 3, stride=2), x3),
    "lp2d": (lambda nn: nn.LPPool2d(1.5, (2, 3), ceil_mode=True), abs(x4)),
    "lp3d": (lambda nn: nn.LPPool3d(3, 2), x5),
    "lp2d-inf": (lambda nn: nn.LPPool2d(float("inf"), 2), x4),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_forward(name):
    make, x = LAYERS[name]
    compare_forward(make, (x,))


@pytest.mark.parametrize("name", ["max1d", "max3d-idx", "avg1d", "avg3d", "adaptive-avg1d",
                                  "adaptive-avg3d", "adaptive-max2d", "adaptive-max3d", "lp2d",
                                  "lp1d"])
def test_trace(name):
    make, x = LAYERS[name]
    compare_trace(make, (x,), other_inputs=[(x[:1].copy(),)])


@pytest.mark.parametrize("n, x, kw", [
    (1, x3, {}), (1, x3, {"stride": 3, "padding": 1}),
    (2, x4, {}), (2, x4, {"stride": (2, 1), "padding": (1, 0)}),
    (3, x5, {}), (3, x5, {"stride": 3}),
], ids=lambda v: None)
def test_max_unpool(n, x, kw):
    def fn(m, x):
        F = m.nn.functional
        pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[n - 1]
        unpool = (m.nn.MaxUnpool1d, m.nn.MaxUnpool2d, m.nn.MaxUnpool3d)[n - 1](2, **kw)
        out, idx = pool(x, 2, kw.get("stride"), kw.get("padding", 0), return_indices=True)
        return unpool(out, idx), repr(unpool)
    # with overlapping windows some configurations name an invalid index: which one ATen names
    # depends on its thread schedule (see test_max_unpool_invalid_index)
    check(fn, x, check_message=False)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.nn.functional.max_unpool2d(*m.nn.functional.max_pool2d(x, 2, return_indices=True),
                                              2, output_size=(8, 9)),
    lambda m, x: m.nn.functional.max_unpool2d(*m.nn.functional.max_pool2d(x, 2, return_indices=True),
                                              2, output_size=(2, 3, 7, 8)),
    lambda m, x: m.nn.functional.max_unpool2d(*m.nn.functional.max_pool2d(x, 2, return_indices=True),
                                              2, output_size=(12, 9)),
    lambda m, x: m.nn.functional.max_unpool2d(x, x.int(), 2),
    lambda m, x: m.nn.functional.avg_pool1d(x, (2, 2)),
    lambda m, x: m.nn.functional.avg_pool1d(x[0, 0], 2),
    lambda m, x: m.nn.functional.avg_pool1d(x[0], 2, padding=2),
    lambda m, x: m.nn.functional.avg_pool3d(x[0], 2),
    lambda m, x: m.nn.functional.max_pool3d(x[0, 0], 2),
    lambda m, x: m.nn.functional.adaptive_avg_pool1d(x[0, 0, 0], 2),
    lambda m, x: m.nn.functional.adaptive_max_pool1d(x[0, 0, 0], 2),
    lambda m, x: m.nn.functional.adaptive_avg_pool3d(x[0, 0], 2),
    lambda m, x: m.nn.functional.adaptive_max_pool2d(x[0, 0, 0], 2),
    lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 3, return_indices=True),
    lambda m, x: m.nn.functional.adaptive_max_pool2d(x.transpose(2, 3), (4, 5)),
    lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, (1, 3, 2)),
    lambda m, x: m.nn.functional.adaptive_max_pool3d(x.to(m.float64), (2, 3, 10)),
    lambda m, x: m.nn.functional.avg_pool1d(x[0].to(m.int64), 2),
    lambda m, x: m.nn.functional.lp_pool1d(x[0], 2, 3),
    lambda m, x: m.nn.functional.lp_pool2d(x, -float("inf"), 2),
], ids=lambda v: None)
def test_functional_cases(fn):
    check(fn, x4)


def test_max_unpool_invalid_index():
    # which invalid index ATen names depends on its parallel loop: only the message's form is
    # compared here
    check(lambda m, x: m.nn.functional.max_unpool2d(x, x.long(), 2), x4, check_message=False)
    import reftrace
    with pytest.raises(RuntimeError, match=r"^Found an invalid max index: -?\d+ \(output volumes "
                                           r"are of size 14x16\)$"):
        reftrace.nn.functional.max_unpool2d(reftrace.from_numpy(x4), reftrace.from_numpy(x4).long(), 2)


rng = np.random.default_rng(0)
samples2 = rng.random((2, 3, 2)).astype("float32")
samples3 = rng.random((1, 2, 3)).astype("float32")


@pytest.mark.parametrize("fn, args", [
    (lambda m, x, s: m.nn.functional.fractional_max_pool2d(x, (2, 3), output_size=(4, 5),
                                                           return_indices=True, _random_samples=s),
     (x4, samples2)),
    (lambda m, x, s: m.nn.functional.fractional_max_pool2d(x[0], 3, output_ratio=(0.5, 0.6),
                                                           _random_samples=s[:1]), (x4, samples2)),
    (lambda m, x, s: m.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=s)(x), (x4, samples2)),
    (lambda m, x, s: m.nn.functional.fractional_max_pool3d(x, 2, output_size=(3, 4, 5),
                                                           return_indices=True, _random_samples=s),
     (x5, samples3)),
    (lambda m, x, s: m.nn.FractionalMaxPool3d((1, 2, 2), output_ratio=(0.5, 0.5, 0.5),
                                              _random_samples=s)(x[0]), (x5, samples3)),
    (lambda m, x, s: m.nn.functional.fractional_max_pool2d(x, 3, output_size=(7, 7),
                                                           _random_samples=s), (x4, samples2)),
    (lambda m, x, s: m.nn.FractionalMaxPool2d(2), (x4, samples2)),
    (lambda m, x, s: m.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5), (x4, samples2)),
    (lambda m, x, s: m.nn.FractionalMaxPool2d(2, output_ratio=1.5), (x4, samples2)),
    (lambda m, x, s: m.nn.FractionalMaxPool3d(0, output_size=2), (x4, samples2)),
    (lambda m, x, s: repr(m.nn.FractionalMaxPool2d(2, output_ratio=0.5)), (x4, samples2)),
], ids=lambda v: None)
def test_fractional_max_pool(fn, args):
    check(fn, *args)


def test_fractional_max_pool_draws_samples():
    import reftrace
    out = reftrace.nn.FractionalMaxPool2d(2, output_size=(3, 4))(reftrace.from_numpy(x4.copy()))
    assert out.shape == (2, 3, 3, 4)
