"""Compare reftrace's gradients with torch's on the same program (support for test_autograd_*).

``compare_grads(fn, inputs)`` runs ``fn(m, *inputs)`` under torch and reftrace (``m`` is the
module), with the same input values (tensors that require grad where the torch input does), then
compares: the outputs (values, dtype, shape), the grad_fn class name of every output, the
first-order gradients of the outputs with respect to every input that requires grad (torch's
``autograd.grad`` with the same random ``grad_outputs``; values, dtype, shape, None-ness), and,
with ``second_order``, the gradients of ``sum(grads * v)`` again (double backward, create_graph;
where torch refuses it, reftrace must refuse with the same message).
"""
import re

import numpy as np
import pytest

import reftrace

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None


def to_reftrace(v):
    """A torch value (tensor, or containers of them) as reftrace's, requires_grad kept."""
    if torch is not None and isinstance(v, torch.Tensor):
        t = reftrace.from_numpy(v.detach().resolve_conj().numpy().copy())
        if v.requires_grad:
            t.requires_grad_()
        return t
    if isinstance(v, (list, tuple)):
        return type(v)(to_reftrace(e) for e in v)
    if isinstance(v, dict):
        return {k: to_reftrace(e) for k, e in v.items()}
    if torch is not None and isinstance(v, (torch.dtype, torch.memory_format)):
        return getattr(reftrace, str(v).replace("torch.", ""))
    if torch is not None and isinstance(v, torch.nn.PairwiseDistance):
        # op_db passes this module as triplet_margin_with_distance_loss's distance_function
        return reftrace.nn.PairwiseDistance(v.norm, v.eps, v.keepdim)
    if torch is not None and isinstance(v, torch.nn.LinearCrossEntropyOptions):
        import dataclasses
        return reftrace.nn.LinearCrossEntropyOptions(
            **{f.name: to_reftrace(getattr(v, f.name)) for f in dataclasses.fields(v)})
    return v


def flat_tensors(v, kind):
    out = []
    stack = [v]
    while stack:
        x = stack.pop(0)
        if isinstance(x, kind):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            stack[0:0] = list(x)
        elif isinstance(x, dict):
            stack[0:0] = list(x.values())
    return out


def to_numpy(t):
    if torch is not None and isinstance(t, torch.Tensor):
        # a ZeroTensor (torch's gradient of abs/sgn/norm at 0) refuses numpy(): its value is 0
        # (and a conjugate view, e.g. the gradient of x.conj(), reads resolved)
        t = t.detach()
        return t.numpy(force=True) if t._is_zerotensor() else t.resolve_conj().resolve_neg().numpy()
    return np.asarray(t.detach().resolve_conj().resolve_neg().numpy())


def assert_close(got, want, what, rtol=1e-5, atol=1e-6):
    """reftrace tensor ``got`` against torch tensor ``want``: shape, dtype, values."""
    assert (got is None) == (want is None), f"{what}: reftrace {got!r} vs torch {want!r}"
    if want is None:
        return
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)} vs {tuple(want.shape)}"
    assert str(got.dtype) == str(want.dtype), \
        f"{what}: dtype {got.dtype} vs {want.dtype}"
    g, w = to_numpy(got), to_numpy(want)
    if w.dtype.kind in "fc":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(g, w, err_msg=what)


def _grad_fn_name(t):
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__


def _random_like(rng, t):
    """Random values of t's shape and dtype (complex ones with an imaginary part too)."""
    dtype = to_numpy(t).dtype
    v = rng.standard_normal(tuple(t.shape))
    if dtype.kind == "c":
        v = v + 1j * rng.standard_normal(tuple(t.shape))
    return np.asarray(v.astype(dtype))   # (a 0-d shape gives a NumPy scalar: from_numpy wants arrays)


def _real(s):
    """A complex scalar's real part (autograd differentiates real scalars): the usual choice for
    complex inputs, L = Re(sum(g * u)); real scalars are left as they are."""
    return s.real if s.dtype.is_complex else s


def compare_grads(fn, torch_inputs, second_order=True, rtol=1e-5, atol=1e-6, seed=0, names=True):
    """Run ``fn`` under both libraries on ``torch_inputs`` (a list of torch values) and compare
    outputs, grad_fn names and first (and second) order gradients. Returns the torch outputs."""
    rt_inputs = to_reftrace(torch_inputs)
    t_out = fn(torch, *torch_inputs)
    r_out = fn(reftrace, *rt_inputs)
    t_outs = flat_tensors(t_out, torch.Tensor)
    r_outs = flat_tensors(r_out, reftrace.Tensor)
    assert len(t_outs) == len(r_outs), f"{len(r_outs)} outputs, torch has {len(t_outs)}"
    for i, (r, t) in enumerate(zip(r_outs, t_outs)):
        assert_close(r, t, f"output {i}", rtol, atol)
        assert r.requires_grad == t.requires_grad, f"output {i} requires_grad"
        if names:
            assert _grad_fn_name(r) == _grad_fn_name(t), \
                f"output {i} grad_fn {_grad_fn_name(r)} vs torch {_grad_fn_name(t)}"
    t_in = [t for t in flat_tensors(torch_inputs, torch.Tensor) if t.requires_grad]
    r_in = [t for t in flat_tensors(rt_inputs, reftrace.Tensor) if t.requires_grad]
    pairs = [(r, t) for r, t in zip(r_outs, t_outs)
             if t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]
    if not t_in or not pairs:
        return t_out
    rng = np.random.default_rng(seed)
    vs = [_random_like(rng, t) for _, t in pairs]
    t_g = torch.autograd.grad([t for _, t in pairs], t_in, [torch.from_numpy(v.copy()) for v in vs],
                              allow_unused=True, create_graph=second_order)
    r_g = reftrace.autograd.grad([r for r, _ in pairs], r_in,
                                 [reftrace.from_numpy(v.copy()) for v in vs],
                                 allow_unused=True, create_graph=second_order)
    for i, (r, t) in enumerate(zip(r_g, t_g)):
        assert_close(r, t, f"gradient of input {i}", rtol * 10, atol * 10)
    if not second_order:
        return t_out
    live = [(r, t) for r, t in zip(r_g, t_g) if t is not None and t.requires_grad]
    if not live:
        return t_out
    us = [_random_like(rng, t) for _, t in live]
    t_s = _real(sum((t * torch.from_numpy(u.copy())).sum() for (_, t), u in zip(live, us)))
    r_s = _real(sum((r * reftrace.from_numpy(u.copy())).sum() for (r, _), u in zip(live, us)))
    try:
        t_gg = torch.autograd.grad(t_s, t_in, allow_unused=True)
    except RuntimeError as e:  # a backward torch cannot differentiate (a NotImplemented node)
        with pytest.raises(RuntimeError, match=re.escape(str(e))):
            reftrace.autograd.grad(r_s, r_in, allow_unused=True)
        return t_out
    if not r_s.requires_grad:
        # reftrace's first-order gradients do not depend on the inputs: torch's second-order
        # gradients must then be zero
        for t in t_gg:
            assert t is None or not t.abs().sum().item(), "missing second-order gradient"
        return t_out
    r_gg = reftrace.autograd.grad(r_s, r_in, allow_unused=True)
    for i, (r, t) in enumerate(zip(r_gg, t_gg)):
        if t is not None and r is None and not t.abs().sum().item():
            continue  # torch materialised a zero gradient where reftrace's path is unused
        assert_close(r, t, f"second-order gradient of input {i}", rtol * 100, atol * 100)
    return t_out
