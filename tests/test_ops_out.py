"""out= overloads (reftrace/ops/_out.py) against torch 2.13: values, resize (with torch's
deprecation warning when the out tensor had elements), layout of a resized out, dtype rule,
the autograd refusal, several outputs as a tuple, factories, and out=None as no out."""
import warnings

import numpy as np
import pytest

from oracle import check, requires_torch, sample, torch

A, B = sample((2, 3)), sample((2, 3), seed=1)


def _warnings(m, fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        result = fn(m)
    return result, [str(x.message).split(" (Triggered internally")[0] for x in w]


@pytest.mark.parametrize("out_shape", [(2, 3), (0,), (5,)])
def test_add_out_writes_and_resizes(out_shape):
    def fn(m, a, b):
        z = m.zeros(out_shape)
        r = m.add(a, b, alpha=2, out=z)
        return r, z, r is z
    check(fn, A, B)


@requires_torch
def test_resize_warning_is_torchs():
    import reftrace
    msgs = []
    for m in (torch, reftrace):
        x = m.ones(2, 3)
        _, w = _warnings(m, lambda m: m.add(x, x, out=m.ones(5)))
        msgs.append(w)
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1
    for m in (torch, reftrace):  # an empty out is resized silently
        x = m.ones(2, 3)
        assert _warnings(m, lambda m: m.add(x, x, out=m.ones(0)))[1] == []


def test_resized_out_takes_the_result_layout():
    check(lambda m, a: (lambda z: (m.neg(a.t(), out=z), z.stride()))(m.empty(0))[1], A)


@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_out_dtype_rule(dtype):
    check(lambda m, a, b: m.mul(a, b, out=m.empty(0, dtype=getattr(m, dtype))), A, B)


def test_out_with_grad_is_refused():
    def fn(m, a):
        x = a.requires_grad_()
        return m.add(x, x, out=m.empty(2, 3))
    check(fn, A)


def test_several_outputs_as_a_tuple():
    def fn(m, a):
        v, i = m.empty(0), m.empty(0, dtype=m.long)
        r = m.cummax(a, 1, out=(v, i))
        return r, v, i
    check(fn, A)


def test_several_outputs_need_a_tuple():
    check(lambda m, a: m.cummax(a, 1, out=m.empty(0)), A)  # 'out' must be tuple of Tensors


def test_factory_out_takes_the_out_dtype():
    check(lambda m: m.ones(2, 3, out=m.empty(0, dtype=m.int32)))
    check(lambda m: m.arange(5, out=m.empty(0, dtype=m.float64)))


def test_out_none_is_the_functional_call():
    check(lambda m, a, b: m.add(a, b, out=None), A, B)
    check(lambda m, a: m.sum(a, 1, out=None), A)


def test_reduction_out():
    check(lambda m, a: (lambda z: (m.sum(a, 1, keepdim=True, out=z), z))(m.empty(0)), A)
    check(lambda m, a: (lambda z: (m.mm(a, a.t(), out=z), z))(m.empty(0)), A)


@requires_torch
def test_traced_out_graph():
    import reftrace

    def graph(m):
        def fn(x, y):
            z = m.empty(2, 3)
            m.add(x, y, out=z)
            return z
        t = m.jit.trace(fn, (m.ones(2, 3), m.ones(2, 3)))
        return t.graph.str(False), t(m.full((2, 3), 2.0), m.ones(2, 3))

    (g_rt, r_rt), (g_th, r_th) = graph(reftrace), graph(torch)
    assert g_rt == g_th
    np.testing.assert_array_equal(r_rt.numpy(), r_th.numpy())
