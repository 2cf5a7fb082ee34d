"""OpInfo's nn.functional.* entries (torch.testing._internal.common_methods_invocations.op_db)
against reftrace: each sample input's result (values, dtype, strides) or error must equal
torch's. The default run takes the first few float32 samples of every entry; set
REFTRACE_OPINFO_ALL=1 for every sample.

Entries left out are listed with the reason (random results: dropout & co). Tensors keep torch's
layout (channels-last, and the strides of empty tensors); a parameterless torch layer passed as an
argument becomes reftrace's.
"""
import dataclasses
import os
import warnings

import pytest

import reftrace
from oracle import assert_same, torch

if torch is None:  # pragma: no cover
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)

try:
    from torch.testing._internal.common_methods_invocations import op_db
except Exception as e:  # pragma: no cover - expecttest missing
    pytest.skip(f"torch's OpInfo database is not importable: {e}", allow_module_level=True)

RANDOM = {"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
          "feature_alpha_dropout", "rrelu", "gumbel_softmax",
          # their samples draw the pooling intervals at random (tests/test_nn_pooling.py
          # passes _random_samples instead)
          "fractional_max_pool2d", "fractional_max_pool3d"}
ALL = os.environ.get("REFTRACE_OPINFO_ALL") == "1"
PER_OP = None if ALL else 3


def _entries():
    for info in op_db:
        if not info.name.startswith("nn.functional."):
            continue
        fname = info.name.split(".")[2]
        if fname in RANDOM or not hasattr(reftrace.nn.functional, fname):
            continue
        yield pytest.param(info, fname, id=info.name[len("nn.functional."):])


def _convert(v):
    if isinstance(v, torch.Tensor):
        if v.numel() == 0:  # (NumPy gives an empty array zero strides: keep torch's)
            return reftrace.empty_strided(tuple(v.shape), v.stride(),
                                          dtype=_convert(v.dtype)).requires_grad_(v.requires_grad)
        t = reftrace.from_numpy(v.detach().numpy().copy())
        for rank, fmt in ((4, "channels_last"), (5, "channels_last_3d")):
            if v.dim() == rank and v.is_contiguous(memory_format=getattr(torch, fmt)) \
                    and not v.is_contiguous():
                t = t.contiguous(memory_format=getattr(reftrace, fmt))
        return t
    if isinstance(v, (list, tuple)):
        return type(v)(_convert(e) for e in v)
    if isinstance(v, torch.dtype):
        return getattr(reftrace, str(v).split(".")[1])
    if isinstance(v, torch.Size):
        return tuple(v)
    if isinstance(v, torch.nn.Module) and not list(v.parameters()):
        # a parameterless layer passed as an argument (triplet_margin_with_distance_loss's
        # PairwiseDistance()): reftrace's layer of that class, with the same settings
        m = getattr(reftrace.nn, type(v).__name__)()
        for k, val in vars(v).items():
            if not k.startswith("_") and k != "training":
                setattr(m, k, _convert(val))
        return m
    if isinstance(v, torch.nn.LinearCrossEntropyOptions):  # a dataclass of plain fields and dtypes
        return reftrace.nn.LinearCrossEntropyOptions(
            **{f.name: _convert(getattr(v, f.name)) for f in dataclasses.fields(v)})
    return v


def _draws_random(fname, s):
    if fname == "scaled_dot_product_attention":
        return s.kwargs.get("dropout_p", 0.0) > 0.0
    if fname == "multi_head_attention_forward":  # dropout_p is its 11th positional argument
        return s.kwargs.get("training", True) and s.args[9] > 0.0
    return False


@pytest.mark.parametrize("info, fname", list(_entries()))
def test_opinfo_samples(info, fname):
    th_fn = getattr(torch.nn.functional, fname)
    rt_fn = getattr(reftrace.nn.functional, fname)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        samples = list(info.sample_inputs("cpu", torch.float32, requires_grad=False))
        for i, s in enumerate(samples[:PER_OP]):
            if _draws_random(fname, s):
                continue  # attention with dropout draws random numbers (reftrace's stream differs)
            args = (s.input,) + tuple(s.args)
            try:
                expected, th_err = th_fn(*args, **s.kwargs), None
            except Exception as e:
                expected, th_err = None, e
            try:
                got, rt_err = rt_fn(*_convert(args), **{k: _convert(v) for k, v in s.kwargs.items()}), None
            except Exception as e:
                got, rt_err = None, e
            if th_err is not None:
                assert rt_err is not None and type(rt_err).__name__ == type(th_err).__name__, \
                    f"sample {i}: torch raised {th_err!r}, reftrace gave {rt_err or got!r}"
                continue
            assert rt_err is None, f"sample {i}: reftrace raised {rt_err!r}"
            assert_same(got, expected, atol=1e-4, rtol=1e-4, path=f"sample {i}")
