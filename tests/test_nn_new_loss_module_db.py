"""torch's own ModuleInfo samples (common_modules.module_db) for CTCLoss and
LinearCrossEntropyLoss, run under torch and reftrace with torch's parameters: outputs equal in
values, dtype, shape and strides, and the gradients of the inputs (float32 and float64, CPU).
Every sample runs with REFTRACE_EXHAUSTIVE=1 (~1800, minutes); by default every twentieth."""
import dataclasses
import os
import warnings

import pytest

import reftrace

try:
    import torch
    from torch.testing._internal.common_modules import module_db
except ImportError:  # pragma: no cover - exercised on torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)
from oracle import assert_same  # noqa: E402

NAMES = {"CTCLoss", "LinearCrossEntropyLoss"}


def _to_reftrace(x):
    if isinstance(x, torch.Tensor):
        t = reftrace.from_numpy(x.detach().numpy().copy())
        return t.requires_grad_() if x.requires_grad else t
    if isinstance(x, (tuple, list)):
        return type(x)(_to_reftrace(e) for e in x)
    if isinstance(x, dict):
        return {k: _to_reftrace(v) for k, v in x.items()}
    if isinstance(x, torch.dtype):
        return getattr(reftrace, str(x).split(".")[1])
    if isinstance(x, torch.nn.LinearCrossEntropyOptions):
        return reftrace.nn.LinearCrossEntropyOptions(
            **{f.name: _to_reftrace(getattr(x, f.name)) for f in dataclasses.fields(x)})
    return x


def _samples():
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in module_db:
            if info.module_cls.__name__ not in NAMES:
                continue
            for dtype in (torch.float32, torch.float64):
                for i, s in enumerate(info.module_inputs_func(info, device="cpu", dtype=dtype,
                                                              requires_grad=True, training=True)):
                    if s.forward_input is None:
                        continue
                    out.append(pytest.param(info, s, id=f"{info.module_cls.__name__}-{dtype}-{i}"))
    return out if os.environ.get("REFTRACE_EXHAUSTIVE") else out[::20]


@pytest.mark.parametrize("info, sample", _samples())
def test_module_db_sample(info, sample):
    name = info.module_cls.__name__
    c, f = sample.constructor_input, sample.forward_input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = info.module_cls(*c.args, **c.kwargs)
        rm = getattr(reftrace.nn, name)(*_to_reftrace(c.args), **_to_reftrace(c.kwargs))
        rm.load_state_dict({k: reftrace.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
        assert repr(rm) == repr(tm)
        t_args = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a
                  for a in f.args]
        r_args = _to_reftrace(t_args)
        expected = tm(*t_args, **f.kwargs)
        got = rm(*r_args, **_to_reftrace(f.kwargs))
    assert_same(got, expected, atol=1e-5, rtol=1e-4)
    t_in = [a for a in t_args if isinstance(a, torch.Tensor) and a.requires_grad]
    r_in = [a for a in r_args if isinstance(a, reftrace.Tensor) and a.requires_grad]
    if t_in:
        for g_rt, g_th in zip(reftrace.autograd.grad(got.sum(), r_in),
                              torch.autograd.grad(expected.sum(), t_in)):
            assert_same(g_rt, g_th, atol=1e-5, rtol=1e-4, path="grad")
