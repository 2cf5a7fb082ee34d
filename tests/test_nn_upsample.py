"""F.interpolate in every mode and rank, and the Upsample layers, against torch: values, strides,
errors, and the recorded graphs (scale factors vs sizes, recompute_scale_factor's traced
arithmetic, area mode through adaptive average pooling)."""
import pytest

from nn_support import compare_forward, compare_trace
from oracle import check, requires_torch, sample

pytestmark = requires_torch

x3 = sample((2, 3, 5), seed=1)
x4 = sample((2, 3, 5, 6), seed=2)
x5 = sample((1, 2, 3, 4, 5), seed=3)

MODES = [
    ("nearest", x3, {}), ("nearest", x4, {}), ("nearest", x5, {}),
    ("nearest-exact", x3, {}), ("nearest-exact", x4, {}), ("nearest-exact", x5, {}),
    ("linear", x3, {}), ("linear", x3, {"align_corners": True}),
    ("bilinear", x4, {}), ("bilinear", x4, {"align_corners": True}),
    ("bilinear", x4, {"antialias": True}), ("bilinear", x4, {"antialias": True, "align_corners": True}),
    ("bicubic", x4, {}), ("bicubic", x4, {"align_corners": True}),
    ("bicubic", x4, {"antialias": True}),
    ("trilinear", x5, {}), ("trilinear", x5, {"align_corners": True}),
    ("area", x3, {}), ("area", x4, {}), ("area", x5, {}),
]
SIZES = [{"scale_factor": 2}, {"scale_factor": 0.5}, {"scale_factor": 1.7},
         {"scale_factor": 1.5, "recompute_scale_factor": True}, {"size": 7}, {"size": 3}]


@pytest.mark.parametrize("mode, x, kw", MODES, ids=lambda v: None)
@pytest.mark.parametrize("how", SIZES, ids=lambda v: None)
def test_interpolate(mode, x, kw, how):
    check(lambda m, x: m.nn.functional.interpolate(x, mode=mode, **how, **kw), x, atol=1e-5)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.nn.functional.interpolate(x, scale_factor=(2, 0.7), mode="bilinear"),
    lambda m, x: m.nn.functional.interpolate(x, size=(3, 9), mode="bicubic", align_corners=True),
    lambda m, x: m.nn.functional.interpolate(x, size=(3, 9), mode="nearest", align_corners=True),
    lambda m, x: m.nn.functional.interpolate(x, size=(3, 9), scale_factor=2),
    lambda m, x: m.nn.functional.interpolate(x),
    lambda m, x: m.nn.functional.interpolate(x, size=(3,)),
    lambda m, x: m.nn.functional.interpolate(x, scale_factor=(3,)),
    lambda m, x: m.nn.functional.interpolate(x, size=4, mode="linear"),
    lambda m, x: m.nn.functional.interpolate(x, size=4, mode="trilinear"),
    lambda m, x: m.nn.functional.interpolate(x, size=4, mode="nearest", antialias=True),
    lambda m, x: m.nn.functional.interpolate(x, size=4, recompute_scale_factor=True),
    lambda m, x: m.nn.functional.interpolate(x[0, 0], size=4, mode="bilinear"),
    lambda m, x: m.nn.functional.interpolate(x.transpose(2, 3), size=(4, 8), mode="bilinear"),
    lambda m, x: m.nn.functional.interpolate(x.to(m.float64), scale_factor=3, mode="bicubic"),
    lambda m, x: m.nn.functional.interpolate(x[:, :, :1], size=(5, 1), mode="bicubic"),
], ids=lambda v: None)
def test_interpolate_cases(fn):
    check(fn, x4, atol=1e-5)


LAYERS = {
    "upsample-nearest": (lambda nn: nn.Upsample(scale_factor=2), x4),
    "upsample-size": (lambda nn: nn.Upsample(size=(7, 3), mode="bilinear"), x4),
    "upsample-tuple": (lambda nn: nn.Upsample(scale_factor=(2, 3), mode="bicubic",
                                              align_corners=True), x4),
    "upsample-trilinear": (lambda nn: nn.Upsample(scale_factor=2, mode="trilinear"), x5),
    "upsample-recompute": (lambda nn: nn.Upsample(scale_factor=1.5, mode="linear",
                                                  recompute_scale_factor=True), x3),
    "upsample-area": (lambda nn: nn.Upsample(scale_factor=0.5, mode="area"), x4),
    "upsampling-nearest2d": (lambda nn: nn.UpsamplingNearest2d(scale_factor=2), x4),
    "upsampling-bilinear2d": (lambda nn: nn.UpsamplingBilinear2d(size=9), x4),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_upsample_layers(name):
    make, x = LAYERS[name]
    compare_forward(make, (x,))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_upsample_traces(name):
    make, x = LAYERS[name]
    other = x[:1].copy()
    compare_trace(make, (x,), other_inputs=[(other,)])
