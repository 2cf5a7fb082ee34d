"""Lazy layers and Container against torch: the placeholders' repr and state, the layer they
become after the first call (class, repr, parameter and buffer shapes, state_dict keys),
loading a state dict into a lazy layer, the traced graph afterwards."""
import warnings

import numpy as np
import pytest

import reftrace
from nn_support import trace_texts
from oracle import requires_torch, sample, torch

pytestmark = requires_torch

LAZY = {
    "LazyLinear": (lambda nn: nn.LazyLinear(3), (2, 5)),
    "LazyLinear-nobias": (lambda nn: nn.LazyLinear(3, bias=False), (2, 4, 5)),
    "LazyConv1d": (lambda nn: nn.LazyConv1d(4, 3, stride=2), (2, 3, 9)),
    "LazyConv2d": (lambda nn: nn.LazyConv2d(4, 3, padding=1, groups=2), (2, 6, 5, 5)),
    "LazyConv3d": (lambda nn: nn.LazyConv3d(2, 2), (1, 3, 3, 4, 4)),
    "LazyConvTranspose1d": (lambda nn: nn.LazyConvTranspose1d(4, 3, stride=2), (2, 3, 5)),
    "LazyConvTranspose2d": (lambda nn: nn.LazyConvTranspose2d(4, 2, bias=False), (2, 3, 4, 4)),
    "LazyConvTranspose3d": (lambda nn: nn.LazyConvTranspose3d(2, 2), (1, 3, 2, 3, 3)),
    "LazyBatchNorm1d": (lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    "LazyBatchNorm2d": (lambda nn: nn.LazyBatchNorm2d(affine=False), (2, 3, 4, 4)),
    "LazyBatchNorm3d": (lambda nn: nn.LazyBatchNorm3d(track_running_stats=False), (2, 3, 2, 2, 2)),
    "LazyInstanceNorm1d": (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 6)),
    "LazyInstanceNorm2d": (lambda nn: nn.LazyInstanceNorm2d(affine=False), (2, 3, 4, 4)),
    "LazyInstanceNorm3d": (lambda nn: nn.LazyInstanceNorm3d(), (2, 3, 2, 3, 2)),
}


def describe(m):
    return (type(m).__name__, repr(m), [(k, repr(v) if type(v).__name__.startswith("Uninit")
                                         else tuple(v.shape)) for k, v in m.state_dict().items()],
            [k for k, _ in m.named_parameters()])


@pytest.mark.parametrize("name", sorted(LAZY))
def test_lazy_becomes_its_eager_layer(name):
    make, shape = LAZY[name]
    rt, th = make(reftrace.nn), make(torch.nn)
    assert describe(rt) == describe(th)
    x = sample(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rt(reftrace.from_numpy(x.copy()))
        th(torch.from_numpy(x.copy()))
    assert describe(rt) == describe(th)
    assert not hasattr(rt, "_initialize_hook")


@pytest.mark.parametrize("name", ["LazyLinear", "LazyConv2d", "LazyBatchNorm2d"])
def test_lazy_load_state_dict_materializes(name):
    make, shape = LAZY[name]
    th = make(torch.nn)
    th(torch.from_numpy(sample(shape)))
    rt = make(reftrace.nn)
    rt.load_state_dict({k: reftrace.from_numpy(v.detach().numpy().copy())
                        for k, v in th.state_dict().items()})
    x = sample(shape, seed=3)
    th.eval()
    rt.eval()
    np.testing.assert_allclose(rt(reftrace.from_numpy(x.copy())).detach().numpy(),
                               th(torch.from_numpy(x.copy())).detach().numpy(), atol=1e-5)
    assert type(rt).__name__ == type(th).__name__


def test_lazy_then_traced():
    def make(nn):
        m = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.ReLU(), nn.Flatten(),
                          nn.LazyLinear(2))
        return m
    x = sample((2, 3, 6, 6))
    rt, th = make(reftrace.nn), make(torch.nn)
    th(torch.from_numpy(x.copy()))
    rt(reftrace.from_numpy(x.copy()))
    rt.load_state_dict({k: reftrace.from_numpy(v.detach().numpy().copy())
                        for k, v in th.state_dict().items()})
    rt.eval()
    th.eval()
    assert trace_texts(reftrace, rt, (x,))[0] == trace_texts(torch, th, (x,))[0]


def test_container():
    def make(nn):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            c = nn.Container(a=nn.Linear(2, 3), b=nn.ReLU())
        return c, [str(m.message) for m in w], [m.category for m in w]
    (rt, rt_w, rt_c), (th, th_w, th_c) = make(reftrace.nn), make(torch.nn)
    assert repr(rt) == repr(th) and rt_w == th_w and rt_c == th_c
    assert list(rt.state_dict()) == list(th.state_dict())
