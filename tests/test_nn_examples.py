"""The model programs of examples/ (DCGAN, UNet, MobileNetV3, audio CNN, super-resolution)
against torch end to end: each file is run under torch and under reftrace (its imports rebound),
the reftrace model gets torch's parameters and buffers, both are traced on the example inputs,
and graph, inlined graph, code and the traced module's repr must be equal; the two traces then
agree on the check inputs (other batch sizes and image or clip sizes), and with eager."""
import os
import warnings

import numpy as np
import pytest

import reftrace
from nn_support import MANGLE
from oracle import assert_same, requires_torch, torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["dcgan", "unet", "mobilenet", "audio_cnn", "super_resolution"]


def load(name, lib):
    with open(os.path.join(ROOT, "examples", name + ".py"), encoding="utf-8") as f:
        source = f.read()
    libname = lib.__name__
    source = (source.replace("import reftrace.nn.functional as F", f"import {libname}.nn.functional as F")
              .replace("import reftrace as torch", f"import {libname} as torch")
              .replace("from reftrace import nn", f"from {libname} import nn"))
    namespace = {"__name__": f"example_{name}"}
    exec(compile(source, name + ".py", "exec"), namespace)
    return namespace


def texts(traced):
    return {k: MANGLE.sub("", v) for k, v in (
        ("graph", traced.graph.str(False)), ("inlined_graph", traced.inlined_graph.str(False)),
        ("code", traced.code), ("repr", repr(traced)))}


def arrays(inputs):
    return [t.numpy().copy() for t in inputs]


@requires_torch
@pytest.mark.parametrize("name", EXAMPLES)
def test_example_traces_like_torch(name):
    th_ns, rt_ns = load(name, torch), load(name, reftrace)
    th_model, rt_model = th_ns["model"], rt_ns["model"]
    state = {k: reftrace.from_numpy(v.detach().numpy().copy())
             for k, v in th_model.state_dict().items()}
    rt_model.load_state_dict(state)
    example = arrays([th_ns["EXAMPLE_INPUTS"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        th_traced = torch.jit.trace(th_model, tuple(torch.from_numpy(a) for a in example),
                                    check_trace=False)
        rt_traced = reftrace.jit.trace(rt_model, tuple(reftrace.from_numpy(a) for a in example),
                                       check_trace=False)
    got, expected = texts(rt_traced), texts(th_traced)
    for key in expected:
        assert got[key] == expected[key], key
    for inputs in [example] + [arrays(c) for c in th_ns["CHECK_INPUTS"]]:
        rt_out = rt_traced(*[reftrace.from_numpy(a) for a in inputs])
        assert_same(rt_out, th_traced(*[torch.from_numpy(a) for a in inputs]), atol=2e-4,
                    rtol=1e-4)
        np.testing.assert_allclose(rt_out.detach().numpy(),
                                   rt_model(*[reftrace.from_numpy(a) for a in inputs]).detach().numpy(),
                                   rtol=1e-6, atol=1e-6)
