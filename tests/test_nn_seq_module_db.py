"""torch's own ModuleInfo samples (torch.testing._internal.common_modules.module_db) for the
sequence and attention modules, run under torch and reftrace with torch's parameters: outputs
equal in values, dtype, shape and strides, in eval and training mode (float32, CPU).

A sample whose constructor takes a torch module instance (TransformerEncoder(layer, n)) has no
reftrace counterpart to build from, and is left out. Where torch converts the input to a
NestedTensor (spec SEQ-8), so does reftrace, and the outputs must agree all the same.
Every sample runs with REFTRACE_EXHAUSTIVE=1; by default every fourth one."""
import os
import warnings

import pytest

import reftrace

try:
    import torch
    from torch.testing._internal.common_modules import module_db
except ImportError:  # pragma: no cover - exercised on torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)
from nn_seq_support import assert_same_outputs  # noqa: E402

NAMES = {"LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell", "MultiheadAttention",
         "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder", "Transformer",
         "EmbeddingBag"}


def _to_reftrace(x):
    if isinstance(x, torch.Tensor):
        # the same layout: torch's samples include transposed inputs
        order = sorted(range(x.dim()), key=lambda d: -x.stride(d))
        dense = reftrace.tensor(x.detach().permute(*order).contiguous().numpy())
        return dense.permute(*[order.index(d) for d in range(x.dim())])
    if isinstance(x, (tuple, list)):
        return type(x)(_to_reftrace(e) for e in x)
    if isinstance(x, dict):
        return {k: _to_reftrace(v) for k, v in x.items()}
    if callable(x) and getattr(x, "__name__", None) in ("relu", "gelu"):
        return getattr(reftrace.nn.functional, x.__name__)
    return x


def _samples():
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in module_db:
            if info.module_cls.__name__ not in NAMES:
                continue
            for training in (False, True):
                for i, s in enumerate(info.module_inputs_func(info, device="cpu", dtype=torch.float32,
                                                              requires_grad=False, training=training)):
                    if s.forward_input is None:
                        continue
                    args = list(s.constructor_input.args) + list(s.constructor_input.kwargs.values())
                    if any(isinstance(a, torch.nn.Module) for a in args):
                        continue
                    out.append(pytest.param(info, s, training,
                                            id=f"{info.module_cls.__name__}-{'train' if training else 'eval'}-{i}"))
    return out if os.environ.get("REFTRACE_EXHAUSTIVE") else out[::4]


@pytest.mark.parametrize("info, sample, training", _samples())
def test_module_db_sample(info, sample, training):
    name = info.module_cls.__name__
    c, f = sample.constructor_input, sample.forward_input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = info.module_cls(*c.args, **c.kwargs).train(training)
        rm = getattr(reftrace.nn, name)(*_to_reftrace(c.args), **_to_reftrace(c.kwargs)).train(training)
        rm.load_state_dict({k: reftrace.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
        with torch.no_grad():
            expected = tm(*f.args, **f.kwargs)
        with reftrace.no_grad():
            got = rm(*_to_reftrace(f.args), **_to_reftrace(f.kwargs))
    assert_same_outputs(expected, got, rtol=1e-4, atol=2e-5)
