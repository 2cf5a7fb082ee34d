"""Shared by the nn layer tests: build one layer in torch and in reftrace with the same parameters,
run both, and trace both.

``make(nn)`` builds the layer against either library's ``nn``; torch's parameters and buffers are
copied into the reftrace layer (through NumPy). Inputs are NumPy arrays (or tuples of them),
converted for each library. Everything compared comes from running torch, never from a literal.
"""
import re
import warnings

import numpy as np

import reftrace
from oracle import assert_same, torch

MANGLE = re.compile(r"___torch_mangle_\d+\.")


def lib_inputs(lib, inputs):
    return [lib.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in inputs]


def twin(make):
    """(reftrace layer, torch layer), the reftrace one holding torch's parameters and buffers."""
    th = make(torch.nn)
    rt = make(reftrace.nn)
    state = {k: reftrace.from_numpy(v.detach().numpy().copy()) for k, v in th.state_dict().items()}
    result = rt.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys
    return rt, th


def check_construction(rt, th):
    """Parameter and buffer names, shapes and dtypes, state_dict keys and the repr."""
    assert [(k, tuple(v.shape), str(v.dtype)) for k, v in rt.named_parameters()] == \
        [(k, tuple(v.shape), str(v.dtype)) for k, v in th.named_parameters()]
    assert [(k, tuple(v.shape)) for k, v in rt.named_buffers()] == \
        [(k, tuple(v.shape)) for k, v in th.named_buffers()]
    assert list(rt.state_dict()) == list(th.state_dict())
    assert repr(rt) == repr(th)


def compare_forward(make, inputs, *, train=False, atol=1e-5, rtol=1e-5, check_stride=True):
    """Forward outputs (values, dtype, strides) of both layers on the same inputs."""
    rt, th = twin(make)
    check_construction(rt, th)
    rt.train(train)
    th.train(train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = rt(*lib_inputs(reftrace, inputs))
        expected = th(*lib_inputs(torch, inputs))
    assert_same(got, expected, atol=atol, rtol=rtol, check_stride=check_stride)
    th_state = th.state_dict()
    for k, v in rt.state_dict().items():  # running statistics included
        assert_same(v, th_state[k], atol=atol, rtol=rtol, path=k)
    return rt, th


def trace_texts(lib, module, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = lib.jit.trace(module, tuple(lib_inputs(lib, inputs)), check_trace=False)
    texts = {"graph": traced.graph.str(False), "inlined_graph": traced.inlined_graph.str(False),
             "code": traced.code, "repr": repr(traced)}
    return {k: MANGLE.sub("", v) for k, v in texts.items()}, traced


def compare_trace(make, inputs, *, other_inputs=(), atol=1e-5, train=False):
    """graph, inlined_graph, code and repr of the traced layer equal torch's; the traced layers
    then agree with each other on ``other_inputs`` (other batch sizes)."""
    rt, th = twin(make)
    rt.train(train)
    th.train(train)
    got, rt_traced = trace_texts(reftrace, rt, inputs)
    expected, th_traced = trace_texts(torch, th, inputs)
    for key in expected:
        assert got[key] == expected[key], key
    for more in [inputs, *other_inputs]:
        assert_same(rt_traced(*lib_inputs(reftrace, more)), th_traced(*lib_inputs(torch, more)),
                    atol=atol, rtol=1e-5)
