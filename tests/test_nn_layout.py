"""Channels-last inputs keep channels-last outputs where torch does (convolution, pooling, batch
and group norm, upsampling, padding, pixel and channel shuffle): values and strides against
torch, and a channels-last model traced."""
import pytest

from oracle import check, requires_torch, sample

pytestmark = requires_torch

x = sample((2, 4, 6, 6), seed=1)
w = sample((3, 4, 3, 3), seed=2)
wt = sample((4, 3, 3, 3), seed=3)
dw = sample((4, 1, 3, 3), seed=4)


def cl(m, t):
    return t.contiguous(memory_format=m.channels_last)


CASES = {
    "conv2d": lambda m, F, t: F.conv2d(cl(m, t), m.from_numpy(w), padding=1),
    "conv2d-depthwise": lambda m, F, t: F.conv2d(cl(m, t), m.from_numpy(dw), groups=4),
    "conv2d-same": lambda m, F, t: F.conv2d(cl(m, t), m.from_numpy(w), padding="same"),
    "conv_transpose2d": lambda m, F, t: F.conv_transpose2d(cl(m, t), m.from_numpy(wt), stride=2),
    "max_pool2d": lambda m, F, t: F.max_pool2d(cl(m, t), 2),
    "max_pool2d-indices": lambda m, F, t: F.max_pool2d(cl(m, t), 3, 2, 1, return_indices=True),
    "avg_pool2d": lambda m, F, t: F.avg_pool2d(cl(m, t), 3, 2, 1),
    "adaptive_avg_pool2d": lambda m, F, t: F.adaptive_avg_pool2d(cl(m, t), (3, 1)),
    "adaptive_avg_pool2d-1": lambda m, F, t: F.adaptive_avg_pool2d(cl(m, t), 1),
    "adaptive_max_pool2d": lambda m, F, t: F.adaptive_max_pool2d(cl(m, t), 4, True),
    "batch_norm": lambda m, F, t: F.batch_norm(cl(m, t), m.zeros(4), m.ones(4) * 2),
    "batch_norm-train": lambda m, F, t: F.batch_norm(cl(m, t), None, None, training=True),
    "group_norm": lambda m, F, t: F.group_norm(cl(m, t), 2),
    "nearest": lambda m, F, t: F.interpolate(cl(m, t), scale_factor=2),
    "bilinear": lambda m, F, t: F.interpolate(cl(m, t), size=(5, 9), mode="bilinear"),
    "bicubic": lambda m, F, t: F.interpolate(cl(m, t), scale_factor=1.5, mode="bicubic"),
    "pixel_shuffle": lambda m, F, t: F.pixel_shuffle(cl(m, t), 2),
    "channel_shuffle": lambda m, F, t: F.channel_shuffle(cl(m, t), 2),
    "pad-constant": lambda m, F, t: F.pad(cl(m, t), (1, 2, 0, 1), value=3.0),
    "pad-reflect": lambda m, F, t: F.pad(cl(m, t), (1, 1, 2, 2), mode="reflect"),
    "lp_pool2d": lambda m, F, t: F.lp_pool2d(cl(m, t).abs(), 2, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_channels_last(name):
    check(lambda m, t: CASES[name](m, m.nn.functional, t), x, atol=1e-5)


def test_channels_last_model_trace():
    """A channels-last input through conv, batch norm, pooling and upsampling: the traced graph
    (strides in every value's type) and the outputs equal torch's."""
    import reftrace
    from nn_support import MANGLE, twin
    from oracle import assert_same, torch

    def make(nn):
        return nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Upsample(scale_factor=2, mode="bilinear"),
                             nn.AdaptiveAvgPool2d(1)).eval()
    rt, th = twin(make)
    outs, graphs = [], []
    for lib, model in ((reftrace, rt), (torch, th)):
        t = lib.from_numpy(x.copy()).contiguous(memory_format=lib.channels_last)
        traced = lib.jit.trace(model, t, check_trace=False)
        graphs.append(MANGLE.sub("", traced.inlined_graph.str(False)))
        outs.append(traced(t))
    assert graphs[0] == graphs[1]
    assert "Float(2, 8, 6, 6, strides=[288, 1, 48, 8]" in graphs[1]  # the conv output, channels last
    assert_same(outs[0], outs[1], atol=1e-5)


@pytest.mark.parametrize("fn, x_shape, w_shape, kw", [
    ("conv2d", (1, 3, 6, 6), (4, 3, 3, 3), {}),
    ("conv2d", (1, 4, 6, 6), (4, 1, 3, 3), {"groups": 4}),
    ("conv2d", (2, 3, 6, 6), (4, 3, 1, 1), {}),
    ("conv2d", (1, 3, 6, 6), (4, 3, 3, 3), {"padding": "same"}),
    ("conv_transpose2d", (1, 3, 6, 6), (3, 2, 2, 2), {})])
@pytest.mark.parametrize("x_cl, w_cl", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_conv_result_layout_follows_input_or_weight(fn, x_shape, w_shape, kw, x_cl, w_cl):
    """A channels-last weight (convert_conv2d_weight_memory_format) makes the result
    channels-last too, as torch's CPU convolution does."""
    def run(m, x, w):
        x = x.contiguous(memory_format=m.channels_last) if x_cl else x
        w = w.contiguous(memory_format=m.channels_last) if w_cl else w
        return getattr(m.nn.functional, fn)(x, w, **kw)
    check(run, sample(x_shape, seed=1), sample(w_shape, seed=2), atol=1e-5, rtol=1e-5)
