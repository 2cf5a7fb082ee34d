"""Comparing one module of the sequence/attention families with live torch: construction
(parameter names and shapes, state_dict keys, repr), forward values/dtype/shape/strides on
several inputs with torch's parameters loaded, and the traced graph, inlined graph and code."""
import re
import warnings

import numpy as np

import reftrace

MANGLE = re.compile(r"___torch_mangle_\d+\.")


def to_reftrace(x):
    import torch
    if isinstance(x, torch.Tensor):
        return reftrace.tensor(x.detach().numpy())  # (inputs given to these tests are contiguous)
    if isinstance(x, (tuple, list)):
        return type(x)(to_reftrace(e) for e in x)
    return x


def flat(out):
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in flat(o)]
    return [out]


def assert_same_outputs(th, rt, rtol=1e-4, atol=1e-5):
    th, rt = flat(th), flat(rt)
    assert len(th) == len(rt)
    for a, b in zip(th, rt):
        if a is None:
            assert b is None
            continue
        assert str(a.dtype) == str(b.dtype)
        assert tuple(a.shape) == tuple(b.shape)
        assert tuple(a.stride()) == tuple(b.stride())
        assert bool(a.requires_grad) == bool(b.requires_grad)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=rtol, atol=atol)


def pair(make):
    """make(lib) -> module, built in both; reftrace gets torch's parameters and modes."""
    import torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, rm = make(torch), make(reftrace)
    assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in rm.named_parameters()]
    assert list(tm.state_dict()) == list(rm.state_dict())
    assert MANGLE.sub("", repr(tm)) == repr(rm)
    rm.load_state_dict({k: reftrace.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    modes = dict(tm.named_modules())
    for name, sub in rm.named_modules():
        sub.training = modes[name].training
    return tm, rm


def traced_texts(traced):
    return {k: MANGLE.sub("", v) for k, v in (("graph", traced.graph.str(False)),
                                              ("inlined_graph", traced.inlined_graph.str(False)),
                                              ("code", traced.code))}


def compare(make, inputs, *, trace=True, check_trace=False, no_grad=False):
    """Forward on every input tuple, then the trace of the first (checked on the others when
    check_trace), under grad mode or no_grad as asked."""
    import torch
    tm, rm = pair(make)
    tctx = torch.no_grad if no_grad else torch.enable_grad
    rctx = reftrace.no_grad if no_grad else reftrace.enable_grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in inputs:
            with tctx():
                th = tm(*args)
            with rctx():
                rt = rm(*to_reftrace(args))
            assert_same_outputs(th, rt)
        if not trace:
            return
        kw = {"check_trace": check_trace}
        if check_trace and len(inputs) > 1:
            kw["check_inputs"] = [a for a in inputs[1:] if _structure(a) == _structure(inputs[0])]
        with tctx():
            tt = torch.jit.trace(tm, inputs[0], **kw)
        rkw = dict(kw)
        if "check_inputs" in rkw:
            rkw["check_inputs"] = [to_reftrace(a) for a in rkw["check_inputs"]]
        with rctx():
            rtr = reftrace.jit.trace(rm, to_reftrace(inputs[0]), **rkw)
    assert traced_texts(rtr) == traced_texts(tt)
    for args in inputs:
        if _structure(args) == _structure(inputs[0]):  # what the trace generalises to
            assert_same_outputs(tt(*args), rtr(*to_reftrace(args)))


def _structure(args):
    return [(type(a).__name__, a.dim() if hasattr(a, "dim") else _structure(a)
             if isinstance(a, (tuple, list)) else None) for a in args]
