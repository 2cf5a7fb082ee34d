"""Convolution-family layers against torch: Conv3d, ConvTranspose1d/2d/3d, Fold/Unfold,
PixelShuffle/Unshuffle, ChannelShuffle: construction, forward values/strides, traced graphs."""
import pytest

import reftrace
import reftrace.nn.functional as RF
from nn_support import compare_forward, compare_trace
from oracle import check, requires_torch, sample, torch

pytestmark = requires_torch

sig = sample((2, 4, 7), seed=1)
img = sample((2, 4, 5, 6), seed=2)
vol = sample((1, 4, 3, 4, 5), seed=3)

LAYERS = {
    "conv3d": (lambda nn: nn.Conv3d(4, 3, 2, stride=2, padding=1), vol),
    "conv3d-groups-dil": (lambda nn: nn.Conv3d(4, 6, (1, 2, 3), groups=2, dilation=(1, 2, 1)), vol),
    "conv3d-same-reflect": (lambda nn: nn.Conv3d(4, 2, 3, padding="same", padding_mode="replicate"), vol),
    "convT1d": (lambda nn: nn.ConvTranspose1d(4, 3, 3, stride=3, padding=1, bias=False), sig),
    "convT1d-unbatched": (lambda nn: nn.ConvTranspose1d(4, 3, 3, stride=2), sig[0]),
    "convT2d": (lambda nn: nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1, groups=2,
                                              dilation=2, padding=1), img),
    "convT2d-plain": (lambda nn: nn.ConvTranspose2d(4, 2, 4, stride=2, padding=1), img),
    "convT3d": (lambda nn: nn.ConvTranspose3d(4, 3, 2, stride=2), vol),
    "unfold": (lambda nn: nn.Unfold(2, dilation=2, padding=1, stride=(1, 2)), img),
    "unfold-unbatched": (lambda nn: nn.Unfold(3), img[0]),
    "fold": (lambda nn: nn.Fold((5, 6), 2, dilation=2, padding=1, stride=(1, 2)),
             sample((2, 12, 15), seed=4)),
    "fold-unbatched": (lambda nn: nn.Fold(4, 2), sample((8, 9), seed=5)),
    "pixel_shuffle": (lambda nn: nn.PixelShuffle(2), sample((2, 8, 3, 4), seed=6)),
    "pixel_unshuffle": (lambda nn: nn.PixelUnshuffle(2), sample((2, 2, 4, 6), seed=7)),
    "channel_shuffle": (lambda nn: nn.ChannelShuffle(2), img),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_forward(name):
    make, x = LAYERS[name]
    compare_forward(make, (x,), atol=1e-4)


@pytest.mark.parametrize("name", ["conv3d", "convT1d", "convT2d", "convT3d", "unfold", "fold",
                                  "pixel_shuffle", "channel_shuffle", "convT1d-unbatched"])
def test_trace(name):
    make, x = LAYERS[name]
    compare_trace(make, (x,), atol=1e-4)


def test_conv_transpose_output_size():
    import numpy as np
    from nn_support import twin
    rt, th = twin(lambda nn: nn.ConvTranspose2d(4, 2, 3, stride=2))
    x = sample((1, 4, 5, 6))
    for size in ([12, 14], [1, 2, 11, 13]):
        a = rt(reftrace.from_numpy(x.copy()), output_size=size)
        b = th(torch.from_numpy(x.copy()), output_size=size)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-4)
    for bad in ([20, 20], [1, 2, 3]):
        with pytest.raises(ValueError) as e1:
            rt(reftrace.from_numpy(x.copy()), output_size=bad)
        with pytest.raises(ValueError) as e2:
            th(torch.from_numpy(x.copy()), output_size=bad)
        assert str(e1.value) == str(e2.value)


def test_conv_transpose_padding_mode_refused():
    for lib in (torch, reftrace):
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
            lib.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")


x4 = sample((1, 4, 3, 3))
w4 = sample((4, 2, 3, 3), seed=1)


@pytest.mark.parametrize("fn, args", [
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2, output_padding=2), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2, output_padding=2, dilation=2), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, padding=-1), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, groups=3), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, padding=5), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x[0, 0], w), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, bias=m.ones(3)), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv_transpose1d(x[0], w[..., 0], stride=2, output_padding=2), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv_transpose1d(x[0], w[..., 0], stride=2, padding=1), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=(2, 1), padding=(0, 1), groups=2), (x4, w4)),
    (lambda m, x, w: m.nn.functional.conv3d(x[None], w[:, :, None].transpose(0, 1)), (x4, w4)),
], ids=lambda v: None)
def test_functional_conv_transpose(fn, args):
    check(fn, *args, atol=1e-4)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.nn.functional.unfold(x, 5),
    lambda m, x: m.nn.functional.unfold(x, 2, stride=0),
    lambda m, x: m.nn.functional.fold(x.flatten(2)[:, :, :5], (3, 3), 2),
    lambda m, x: m.nn.functional.fold(x.reshape(2, 12, 4), (3, 3), 2, padding=-1),
    lambda m, x: m.nn.functional.fold(x.reshape(2, 7, -1), (3, 3), 2),
    lambda m, x: m.nn.functional.pixel_shuffle(x, 3),
    lambda m, x: m.nn.functional.pixel_shuffle(x[0, 0, 0], 2),
    lambda m, x: m.nn.functional.pixel_unshuffle(x, 3),
    lambda m, x: m.nn.functional.pixel_unshuffle(x.transpose(2, 3), 2),
    lambda m, x: m.nn.functional.channel_shuffle(x, 3),
    lambda m, x: m.nn.functional.channel_shuffle(x[0, 0], 2),
    lambda m, x: m.nn.functional.channel_shuffle(x.transpose(1, 3), 2),
    lambda m, x: m.nn.functional.native_channel_shuffle(x, 4),
    lambda m, x: m.nn.functional.unfold(x.to(m.int64), 2),
    lambda m, x: m.nn.functional.unfold(x.to(m.float64).transpose(2, 3), (2, 3), padding=(1, 0)),
], ids=lambda v: None)
def test_functional_fold_shuffle(fn):
    check(fn, sample((2, 8, 3, 4)))


tbc = sample((5, 2, 3), seed=8)
wtbc = sample((2, 3, 4), seed=9)
btbc = sample((4,), seed=10)


@pytest.mark.parametrize("fn", [
    lambda m, x, w, b: m.conv_tbc(x, w, b, 1),
    lambda m, x, w, b: m.nn.functional.conv_tbc(x, w, b),
    lambda m, x, w, b: m.conv_tbc(x[0], w, b),
    lambda m, x, w, b: m.conv_tbc(x, w[0], b),
    lambda m, x, w, b: m.conv_tbc(x, w, b[:2]),
    lambda m, x, w, b: m.conv_tbc(x, w[:, :2], b),
], ids=lambda v: None)
def test_conv_tbc(fn):
    check(fn, tbc, wtbc, btbc, atol=1e-5)


# -- complex input: torch's complex_convolution (Gauss's trick, three real convolutions) ----------

def _complex_conv_program(m, x, w, b):
    return (m.nn.functional.conv1d(x, w, b, padding=1)
            + m.nn.functional.conv_transpose1d(x, w.transpose(0, 1), None))


def _complex_conv_run(m):
    import numpy as np
    rng = np.random.default_rng(0)

    def c(*s):  # small integers: every real convolution's sums are exact, whatever their order
        return m.tensor(rng.integers(-4, 5, s) + 1j * rng.integers(-4, 5, s), requires_grad=True)
    x, w, b = c(2, 3, 7), c(4, 3, 2), c(4)
    y = _complex_conv_program(m, x, w, b)
    gs = m.autograd.grad(m.real(y * y.conj()).sum(), (x, w, b))
    trace = m.jit.trace(lambda x, w, b: _complex_conv_program(m, x, w, b),
                        (x.detach(), w.detach(), b.detach()), check_trace=False)
    graph = [line.split("#")[0] for line in str(trace.graph).splitlines()]
    return type(y.grad_fn).__name__, y.detach().numpy(), [g.numpy() for g in gs], graph


def test_complex_convolution_is_torchs_three_real_ones():
    import numpy as np
    got, want = _complex_conv_run(reftrace), _complex_conv_run(torch)
    assert got[0] == want[0] == "AddBackward0"
    np.testing.assert_array_equal(got[1], want[1])
    for g, t in zip(got[2], want[2]):
        np.testing.assert_array_equal(g, t)
    assert got[3] == want[3]


def _complex_conv_errors(m):
    out = []
    x, w = m.ones(2, 3, 5, dtype=m.complex128), m.ones(4, 3, 2, dtype=m.complex128)
    for args in [(x, m.ones(4, 3, 2), None), (x, w.to(m.complex64), None),
                 (x, w, m.ones(4, dtype=m.complex64)), (x, w, m.ones(4, dtype=m.float64))]:
        try:
            m.nn.functional.conv1d(*args)
            out.append(None)
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_complex_convolution_type_errors_are_torchs():
    assert _complex_conv_errors(reftrace) == _complex_conv_errors(torch)
