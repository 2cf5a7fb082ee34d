"""nn.Module backward hooks (register_full_backward_hook, register_full_backward_pre_hook, the
deprecated register_backward_hook, the global ones) against torch 2.13.

Each ``prog_*(lib)`` runs one program under a library and returns what its hooks saw (gradient
tuples as comparable pictures, call order), the gradients that reached the leaves, and warnings
or errors; ``test_matches_torch[prog]`` compares reftrace with torch 2.13.
"""
import warnings

import pytest

import reftrace
from program_support import Programs, error, seen


def _linear(lib):
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():  # fixed weights: the two libraries' random initialisations differ
        m.weight.copy_(lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
        m.bias.copy_(lib.tensor([0.1, -0.2]))
    return m


def prog_full_hook_sees_input_and_output_grads(lib):
    m = _linear(lib)
    log = []
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("hook", mod is m, seen(gi), seen(go))))
    x = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = m(x)
    (y * lib.tensor([[1.0, 2.0]])).sum().backward()
    return [log, seen(x.grad), seen(m.weight.grad)]


def prog_full_hook_replaces_grad_input(lib):
    m = _linear(lib)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10,))
    x = lib.ones(1, 3, requires_grad=True)
    m(x).sum().backward()
    return [seen(x.grad), seen(m.bias.grad)]


def prog_pre_hook_replaces_grad_output(lib):
    m = _linear(lib)
    log = []
    m.register_full_backward_pre_hook(lambda mod, go: log.append(seen(go)) or (go[0] * 2,))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("after", seen(go))))
    x = lib.ones(1, 3, requires_grad=True)
    m(x).sum().backward()
    return [log, seen(x.grad), seen(m.weight.grad)]


def prog_hook_when_no_input_requires_grad(lib):
    m = _linear(lib)
    log = []
    m.register_full_backward_hook(lambda mod, gi, go: log.append((seen(gi), seen(go))))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m(lib.ones(1, 3)).sum().backward()
    return [log, [str(x.message) for x in w if x.category is UserWarning]]


def prog_non_tensor_arguments(lib):
    class Scale(lib.nn.Module):
        def forward(self, x, k, y):
            return x * k + y, k

    m = Scale()
    log = []
    m.register_full_backward_hook(lambda mod, gi, go: log.append((seen(gi), seen(go))))
    x, y = lib.ones(2, requires_grad=True), lib.ones(2)
    out, k = m(x, 3.0, y)
    out.sum().backward()
    return [log, k, seen(x.grad)]


def prog_hook_errors(lib):
    m = _linear(lib)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    x = lib.ones(1, 3, requires_grad=True)
    wrong_count = error(lambda: m(x).sum().backward())
    p = _linear(lib)
    p.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
    wrong_pre = error(lambda: p(x).sum().backward())
    q = _linear(lib)
    q.register_backward_hook(lambda mod, gi, go: None)
    mixed = error(lambda: q.register_full_backward_hook(lambda mod, gi, go: None))
    return [wrong_count, wrong_pre, mixed]


def prog_removed_hook_does_not_run(lib):
    m = _linear(lib)
    log = []
    h = m.register_full_backward_hook(lambda mod, gi, go: log.append("ran"))
    h.remove()
    x = lib.ones(1, 3, requires_grad=True)
    m(x).sum().backward()
    return [log, seen(x.grad)]


def prog_global_hooks(lib):
    m = _linear(lib)
    log = []
    h1 = lib.nn.modules.module.register_module_full_backward_pre_hook(
        lambda mod, go: log.append(("global pre", type(mod).__name__)))
    h2 = lib.nn.modules.module.register_module_full_backward_hook(
        lambda mod, gi, go: log.append(("global", type(mod).__name__, seen(gi))))
    try:
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("own", seen(gi))))
        x = lib.ones(1, 3, requires_grad=True)
        m(x).sum().backward()
    finally:
        h1.remove()
        h2.remove()
    return log


def prog_non_full_hook(lib):
    m = _linear(lib)
    log = []
    m.register_backward_hook(lambda mod, gi, go: log.append((len(gi), seen(go))))
    x = lib.ones(1, 3, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m(x).sum().backward()
    return [log, sorted({str(x.message) for x in w if x.category is FutureWarning})]


def prog_tracing_refuses_backward_hooks(lib):
    m = _linear(lib)
    m.register_full_backward_hook(lambda mod, gi, go: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [error(lambda: lib.jit.trace(m, (lib.ones(1, 3),)))]


test_matches_torch, test_runs_without_torch = Programs(globals()).tests()
