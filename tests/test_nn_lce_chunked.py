"""F.linear_cross_entropy's chunked path (``options`` given, outside tracing) against torch:
the loss, the custom op's autograd node (name, inputs, gradients; first-order gradients
without a graph; the consumed stash on a second backward) and its dtype errors."""
import numpy as np
import pytest

import reftrace
from oracle import assert_same, check, requires_torch, sample, torch

pytestmark = requires_torch

x = sample((7, 5), dtype="float64", seed=11)
w = sample((6, 5), dtype="float64", seed=12)
b = sample((6,), dtype="float64", seed=13)
cw = np.abs(sample((6,), dtype="float64", seed=14)) + 0.1
target = np.array([0, 1, 5, 2, 1, 3, 0])


def _node_names(t):
    node = t.grad_fn
    return type(node).__name__, [type(n).__name__ if n is not None else None
                                 for n, _ in node.next_functions]


def _run(lib, reduction, unbatched, bias, weighted, chunk, dtype, ignore_index):
    dt = getattr(lib, dtype)
    a = lib.tensor(x, dtype=dt, requires_grad=True)
    lw = lib.tensor(w, dtype=dt, requires_grad=True)
    lb = lib.tensor(b, dtype=dt, requires_grad=True)
    t = lib.tensor(target)
    options = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk)
    loss = lib.nn.functional.linear_cross_entropy(
        a[0] if unbatched else a, lw, t[0] if unbatched else t,
        linear_bias=lb if bias else None,
        weight=lib.tensor(cw, dtype=dt) if weighted else None, reduction=reduction,
        ignore_index=ignore_index, options=options)
    wrt = [a, lw] + ([lb] if bias else [])
    grads = lib.autograd.grad(loss.sum(), wrt, create_graph=True)
    return loss, grads, _node_names(loss), [g.grad_fn for g in grads]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("unbatched", [False, True])
@pytest.mark.parametrize("bias, weighted", [(False, False), (True, True)])
@pytest.mark.parametrize("chunk", [1, 3, 7])
@pytest.mark.parametrize("dtype, ignore_index", [("float64", None), ("float32", 1),
                                                 ("float16", 2)])
def test_chunked_loss_node_and_gradients(reduction, unbatched, bias, weighted, chunk, dtype,
                                         ignore_index):
    args = (reduction, unbatched, bias, weighted, chunk, dtype, ignore_index)
    rt, th = _run(reftrace, *args), _run(torch, *args)
    tol = {"atol": 2e-3, "rtol": 2e-3} if dtype == "float16" else {}
    assert_same(rt[0].detach(), th[0].detach(), **tol)
    for g_rt, g_th in zip(rt[1], th[1]):
        assert_same(g_rt, g_th, **tol)
    assert rt[2] == th[2]
    assert rt[3] == th[3] == [None] * len(th[3])  # the gradients carry no graph


@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("allow_retain_graph", [False, True])
def test_second_backward(reduction, allow_retain_graph):
    """mean/sum consume their stashed gradients unless allow_retain_graph ('none' recomputes)."""
    def fn(m, a, lw, t):
        a, lw = a.requires_grad_(), lw.requires_grad_()
        options = m.nn.LinearCrossEntropyOptions(allow_retain_graph=allow_retain_graph)
        loss = m.nn.functional.linear_cross_entropy(a, lw, t, reduction=reduction,
                                                   options=options).sum()
        first = m.autograd.grad(loss, (a, lw), retain_graph=True)
        return first, m.autograd.grad(loss, (a, lw))
    check(fn, x, w, target)


def test_acc_dtype_error():
    check(lambda m, a, lw, t: m.nn.functional.linear_cross_entropy(
        a.float(), lw.float(), t, options=m.nn.LinearCrossEntropyOptions(acc_dtype=m.float16)),
        x, w, target)


@pytest.mark.parametrize("acc_policy", ["accurate", "balanced", "compact"])
@pytest.mark.parametrize("dtype, acc_dtype", [("float16", "float32"), ("float16", None),
                                              ("float32", None)])
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("rows, features", [(7, 3), (7, 9), (0, 5)])
def test_acc_policies(acc_policy, dtype, acc_dtype, reduction, rows, features):
    """Each accumulation policy's buffers and casts (float16 input, float32 accumulation)."""
    xs = sample((rows, features), dtype="float64", seed=15)
    ws = sample((6, features), dtype="float64", seed=16)

    def fn(m, a, lw, lb, t):
        dt = getattr(m, dtype)
        a, lw, lb = (v.to(dt).requires_grad_() for v in (a, lw, lb))
        options = m.nn.LinearCrossEntropyOptions(
            acc_policy=acc_policy, batch_chunk_size=3,
            acc_dtype=getattr(m, acc_dtype) if acc_dtype else None)
        loss = m.nn.functional.linear_cross_entropy(a, lw, t, linear_bias=lb,
                                                   reduction=reduction, options=options)
        return (loss,) + m.autograd.grad(loss.sum(), (a, lw, lb))
    tol = {"atol": 2e-3, "rtol": 2e-3} if dtype == "float16" else {}
    check(fn, xs, ws, b, target[:rows], **tol)
