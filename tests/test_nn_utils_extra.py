"""nn.utils: skip_init, convert_conv2d/3d_weight_memory_format and stateless.functional_call
against torch (shapes, dtypes, strides, values, warnings and errors)."""
import warnings

import numpy as np
import pytest

import reftrace
from nn_support import twin
from oracle import assert_same, check, requires_torch, sample, torch

pytestmark = requires_torch
LIBS = {"rt": reftrace, "th": torch}


@pytest.mark.parametrize("make", [lambda m: m.nn.utils.skip_init(m.nn.Linear, 3, 4),
                                  lambda m: m.nn.utils.skip_init(m.nn.Conv2d, 2, 5, 3, bias=False,
                                                                 dtype=m.float64),
                                  lambda m: m.nn.utils.skip_init(m.nn.BatchNorm2d, 3)])
def test_skip_init(make):
    rt, th = make(reftrace), make(torch)
    assert repr(rt) == repr(th)
    got = [(k, tuple(v.shape), str(v.dtype), v.stride(), v.requires_grad, type(v).__name__)
           for k, v in list(rt.named_parameters()) + list(rt.named_buffers())]
    expected = [(k, tuple(v.shape), str(v.dtype), v.stride(), v.requires_grad, type(v).__name__)
                for k, v in list(th.named_parameters()) + list(th.named_buffers())]
    assert got == expected


@pytest.mark.parametrize("case", [lambda m: m.nn.utils.skip_init(m.nn.Identity),
                                  lambda m: m.nn.utils.skip_init(int)])
def test_skip_init_errors(case):
    check(case)


def test_convert_weight_memory_format():
    def make(nn):
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.Sequential(nn.ConvTranspose2d(4, 2, 2)),
                             nn.Conv3d(2, 2, 1), nn.ConvTranspose3d(2, 3, 2), nn.Conv1d(2, 2, 1))
    rt, th = twin(make)
    for lib, m in ((reftrace, rt), (torch, th)):
        lib.nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last)
        lib.nn.utils.convert_conv3d_weight_memory_format(m, lib.channels_last_3d)
    for (k, a), (_, b) in zip(rt.named_parameters(), th.named_parameters()):
        assert_same(a, b, path=k)  # values, and the strides of the new layout
        assert type(a).__name__ == type(b).__name__
    x = sample((1, 3, 6, 6), seed=1)
    assert_same(rt[1](rt[0](reftrace.from_numpy(x))), th[1](th[0](torch.from_numpy(x))),
                atol=1e-5, rtol=1e-5)


def _call(lib, m, params, *args, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = lib.nn.utils.stateless.functional_call(m, params, *args, **kw)
    return out, [(c.category.__name__, str(c.message)) for c in w]


def _tied(nn):
    m = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))
    m[2].weight = m[0].weight
    return m


def test_functional_call_values_restores_and_warns():
    rt, th = twin(_tied)
    w = sample((4, 4), seed=2)
    x = sample((2, 4), seed=3)
    results = {}
    for key, m in (("rt", rt), ("th", th)):
        lib = LIBS[key]
        before = m[0].weight
        out, warned = _call(lib, m, {"0.weight": lib.from_numpy(w.copy())},
                            (lib.from_numpy(x.copy()),))
        untied, _ = _call(lib, m, {"0.weight": lib.from_numpy(w.copy())},
                          lib.from_numpy(x.copy()), tie_weights=False)
        assert m[0].weight is before and m[2].weight is before
        results[key] = (out, untied, warned)
    assert_same(results["rt"][0], results["th"][0], atol=1e-5)
    assert_same(results["rt"][1], results["th"][1], atol=1e-5)
    assert results["rt"][2] == results["th"][2]


@pytest.mark.parametrize("params, kw", [({"0.weight": 1, "2.weight": 2}, {}),
                                        ({"0.wrong": 0}, {"strict": True}),
                                        ({"0.weight": 0}, {"strict": True})],
                         ids=["tied-twice", "unexpected", "missing"])
def test_functional_call_errors(params, kw):
    rt, th = twin(_tied)
    arrays = [sample((4, 4), seed=4), sample((4, 4), seed=5), sample((4,), seed=6)]
    for key, m in (("rt", rt), ("th", th)):
        lib = LIBS[key]
        given = {k: lib.from_numpy(arrays[v].copy()) for k, v in params.items()}
        try:
            _call(lib, m, given, (lib.from_numpy(sample((2, 4)).copy()),), **kw)
            raised = None
        except Exception as e:
            raised = (type(e).__name__, str(e))
        if key == "rt":
            got = raised
        else:
            assert raised is not None and got == raised


def test_functional_call_refuses_traced_modules():
    rt, th = twin(_tied)
    for lib, m in ((reftrace, rt), (torch, th)):
        traced = lib.jit.trace(m, (lib.from_numpy(sample((2, 4))),))
        with pytest.raises(RuntimeError, match="can't be used with Jitted modules"):
            _call(lib, traced, {}, (lib.from_numpy(sample((2, 4))),))
