"""Whole models: every parameter's gradient (and the input's) equals torch's to 1e-5.

Each model is built by the same code under both libraries (``m`` is torch or reftrace), torch's
parameters and buffers are copied into the reftrace model (so the values are equal), both run
forward and backward on the same input, and the gradients are compared; models with batch norm
in training mode also compare the updated running statistics. The examples/ models are loaded
from their source with ``reftrace`` swapped for ``torch``. Each model is also traced with
reftrace.jit.trace and the trace's gradients compared with torch's eager ones.
"""
import os
import types
import warnings

import numpy as np
import pytest

import reftrace

try:  # torch is the oracle: without it these tests skip
    import torch
except ImportError:  # pragma: no cover - torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


def mlp(m):
    nn = m.nn
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))


def cnn_batch_norm(m):
    nn = m.nn
    return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(6, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Flatten(), nn.Linear(4 * 2 * 2, 5))


def attention_block(m):
    nn = m.nn

    class Block(nn.Module):
        def __init__(self, dim=16, heads=2):
            super().__init__()
            self.heads, self.dim = heads, dim
            self.norm = nn.LayerNorm(dim)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
            q, k, v = [y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v)]
            att = (q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.mlp(x)
    return Block()


def _example(name, m):
    """examples/<name>.py run with ``m`` as its ``torch``: its ``model`` and EXAMPLE_INPUTS."""
    with open(os.path.join(EXAMPLES, name + ".py")) as f:
        source = f.read()
    if m is torch:
        source = source.replace("import reftrace as torch", "import torch").replace("reftrace", "torch")
    module = types.ModuleType(f"example_{name}")
    exec(compile(source, f"examples/{name}.py", "exec"), module.__dict__)
    return module


def _copy_state(src, dst):
    """torch module -> reftrace module: same parameter and buffer values."""
    state = {k: reftrace.from_numpy(v.detach().numpy().copy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(state)


def _inputs(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return torch.from_numpy(x.copy()).requires_grad_(), reftrace.from_numpy(x.copy()).requires_grad_()


def _as_tuple(v):
    return v if isinstance(v, tuple) else (v,)


def _compare(t_model, r_model, t_x, r_x, rtol=1e-5, atol=1e-5):
    """Run both models on their inputs (one tensor or a tuple), back-propagate the same weighted
    sum of every floating output, compare outputs, the floating inputs' gradients, every
    parameter's gradient and every buffer."""
    t_xs, r_xs = _as_tuple(t_x), _as_tuple(r_x)
    t_outs, r_outs = _as_tuple(t_model(*t_xs)), _as_tuple(r_model(*r_xs))
    t_loss, r_loss = 0, 0
    for k, (t_out, r_out) in enumerate(zip(t_outs, r_outs)):
        np.testing.assert_allclose(r_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol,
                                   atol=atol, err_msg=f"output {k}")
        if t_out.is_floating_point():
            weights = np.random.default_rng(1 + k).standard_normal(tuple(t_out.shape))
            weights = weights.astype(np.float32)
            t_loss = t_loss + (t_out * torch.from_numpy(weights)).sum()
            r_loss = r_loss + (r_out * reftrace.from_numpy(weights)).sum()
    t_loss.backward()
    r_loss.backward()
    for k, (t, r) in enumerate(zip(t_xs, r_xs)):
        if t.requires_grad:
            np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"input {k} gradient")
    t_params = dict(t_model.named_parameters()) if isinstance(t_model, torch.nn.Module) else {}
    r_params = dict(r_model.named_parameters()) if hasattr(r_model, "named_parameters") else {}
    assert sorted(r_params) == sorted(t_params)
    for name, p in r_params.items():
        assert p.grad is not None, f"{name} has no gradient"
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), rtol=rtol,
                                   atol=atol, err_msg=name)
    if t_params:
        t_buffers = dict(t_model.named_buffers())
        for name, b in r_model.named_buffers():
            np.testing.assert_allclose(b.numpy(), t_buffers[name].numpy(), rtol=rtol, atol=atol,
                                       err_msg=name)


MODELS = {
    "mlp": (mlp, (4, 8)),
    "cnn_batch_norm": (cnn_batch_norm, (2, 3, 8, 8)),
    "attention_block": (attention_block, (2, 5, 16)),
}


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_model_gradients_match_torch(name, traced):
    build, shape = MODELS[name]
    torch.manual_seed(0)
    t_model, r_model = build(torch), build(reftrace)
    _copy_state(t_model, r_model)
    t_x, r_x = _inputs(shape)
    if traced:
        traced_model = reftrace.jit.trace(r_model, r_x.detach(), check_trace=False)
        _copy_state(t_model, r_model)  # tracing ran the model once: batch norm's statistics moved
        r_model = traced_model
    _compare(t_model, r_model, t_x, r_x)


# Every model file in examples/ (programs.py holds the conformance runner's programs, not a
# model): its ``model`` on its EXAMPLE_INPUTS' values, floating inputs requiring grad; integer
# inputs (token ids, masks) are passed as they are. control_flow's ``model`` and ``loop`` are
# functions: only the input's gradient is compared.
EXAMPLES_WITH_MODELS = sorted(f[:-3] for f in os.listdir(EXAMPLES)
                              if f.endswith(".py") and f != "programs.py")


def _example_inputs(values):
    """EXAMPLE_INPUTS (reftrace tensors) -> the same values as a torch and a reftrace tuple."""
    t_xs, r_xs = [], []
    for v in _as_tuple(values):
        a = v.numpy().copy()
        t, r = torch.from_numpy(a.copy()), reftrace.from_numpy(a.copy())
        if v.is_floating_point():
            t.requires_grad_(), r.requires_grad_()
        t_xs.append(t)
        r_xs.append(r)
    return tuple(t_xs), tuple(r_xs)


@pytest.mark.parametrize("name", EXAMPLES_WITH_MODELS + ["control_flow:loop"])
@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_example_gradients_match_torch(name, traced):
    name, _, attr = name.partition(":")
    torch.manual_seed(0)
    reftrace.manual_seed(0)
    t_mod, r_mod = _example(name, torch), _example(name, reftrace)
    t_model, r_model = getattr(t_mod, attr or "model"), getattr(r_mod, attr or "model")
    if isinstance(t_model, torch.nn.Module):
        _copy_state(t_model, r_model)
    t_x, r_x = _example_inputs(getattr(r_mod, f"{attr}_inputs" if attr else "EXAMPLE_INPUTS"))
    if traced:
        with warnings.catch_warnings():  # control_flow: the TracerWarning is the example's point
            warnings.simplefilter("ignore")
            traced_model = reftrace.jit.trace(r_model, tuple(x.detach() for x in r_x),
                                              check_trace=False)
        if isinstance(t_model, torch.nn.Module):
            _copy_state(t_model, r_model)
        r_model = traced_model
    _compare(t_model, r_model, t_x, r_x)
