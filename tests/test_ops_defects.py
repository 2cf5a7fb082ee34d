"""Regression tests against torch 2.13 for the op defects of /work/shared/defects/defects.md
fixed on the ops branch: D3 (T/mT/H/mH recorded as their own ops), D4 (t() of a 0-dim tensor),
D9(a) (float16 prod over an empty dim), D11/D18 (strides of empty and size-1 dims), D12 (bool
matmul with an empty inner dim, gather with an empty uint8 index, scatter(reduce=))."""
import warnings

import numpy as np
import pytest

import reftrace
from oracle import check, requires_torch, sample, torch


def _graph(m, fn, *shapes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = m.jit.trace(fn, tuple(m.ones(*s) for s in shapes))
    return t.graph.str(False), t


@requires_torch
@pytest.mark.parametrize("prop", ["T", "mT", "H", "mH"])
def test_D3_transposing_properties_are_recorded_as_torch_records_them(prop):
    fn = lambda x: getattr(x, prop)  # noqa: E731
    (g_rt, t_rt), (g_th, t_th) = _graph(reftrace, fn, (2, 3)), _graph(torch, fn, (2, 3))
    assert g_rt == g_th
    if prop in ("T", "mT"):  # the trace generalises to other ranks, as torch's does
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert tuple(t_rt(reftrace.ones(4, 3, 2)).shape) == tuple(t_th(torch.ones(4, 3, 2)).shape)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
@pytest.mark.parametrize("prop", ["T", "mT", "H", "mH"])
def test_D3_properties_eager(prop, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, a: getattr(a, prop), sample(shape))


def test_D3_T_warns_on_other_ranks():
    with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
        reftrace.ones(2, 3, 4).T


def test_D4_t_of_a_0dim_tensor():
    check(lambda m, a: (a.t(), m.t(a), a.t().t_()), sample(()))


def test_D9a_float16_prod_over_an_empty_dim():
    check(lambda m, a: (a.prod(0), a.prod(1), a.prod()), sample((0, 3), "float16"))
    check(lambda m, a: a.prod(1, keepdim=True), sample((3, 0), "float16"))


def test_D11_clone_of_an_empty_view_then_inplace():
    def fn(m):
        c = m.ones(4, 3).t().narrow(0, 1, 0).clone()
        return c, c.clamp_(0, 1), c.stride()
    check(fn)


@pytest.mark.parametrize("case", [
    lambda m: (m.zeros(0, 1) > 0),
    lambda m: m.outer(m.zeros(0), m.zeros(1)),
    lambda m: m.zeros(0, 1, 3) + 1,
    lambda m: m.zeros(1, 4).t().sort(1)[0],
    lambda m: m.zeros(1, 4).t().sort(1)[1],
    lambda m: 0.5 ** m.ones(4, 4, dtype=m.int32).t(),
    lambda m: 2 ** m.ones(3, 4).t(),
    lambda m: m.ones(1, 5).expand(1, 1, 5),
    lambda m: m.arange(4).expand((1, -1)),
    lambda m: m.ones(5).expand(2, 1, 5),
    lambda m: m.ones(3, 1).expand(2, 3, 4),
    lambda m: m.tensor(1.0).expand(1, 1),
    lambda m: m.zeros(0, 3).t() * 2,
])
def test_D18_strides_of_empty_and_size1_dims(case):
    check(lambda m: (lambda r: (r, r.stride()))(case(m)))


def test_D12_bool_matmul_with_an_empty_inner_dim():
    check(lambda m, a, b: (a @ b, m.mm(a, b)), sample((2, 0), "bool"), sample((0, 3), "bool"))
    check(lambda m, a, b: a @ b, sample((2, 1), "bool"), sample((1, 3), "bool"))  # still refused


def test_D12_gather_with_an_empty_uint8_index():
    check(lambda m, a: m.gather(a, 0, m.tensor([], dtype=m.uint8)), sample((5,)))
    check(lambda m, a: m.gather(a, 0, m.tensor([1], dtype=m.uint8)), sample((5,)))  # refused


@pytest.mark.parametrize("reduce", ["add", "multiply", "mean"])
def test_D12_scatter_reduce(reduce):
    idx = np.array([[0, 0, 1], [2, 2, 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, a, i, s: m.scatter(a, 1, i, s, reduce=reduce), sample((2, 4)), idx, sample((2, 3), seed=1))
        check(lambda m, a, i: a.scatter(1, i, 1.5, reduce=reduce), sample((2, 4)), idx)
        check(lambda m, a, i, s: (a.scatter_(1, i, s, reduce=reduce), a), sample((2, 4)), idx, sample((2, 3), seed=1))
        check(lambda m, a, i: (a.scatter_(1, i, 2.0, reduce=reduce), a), sample((2, 4)), idx)


def test_scatter_add():
    idx = np.array([[0, 0, 1], [2, 2, 2]])
    check(lambda m, a, i, s: m.scatter_add(a, 1, i, s), sample((2, 4)), idx, sample((2, 3), seed=1))
    check(lambda m, a, i, s: (a.scatter_add_(0, i, s), a), sample((3, 4)), idx, sample((2, 3), seed=1))


@requires_torch
def test_scatter_reduce_graph():
    fn = lambda x: x.scatter(1, x.long().clamp(0, 1), 2.0, reduce="add")  # noqa: E731
    assert _graph(reftrace, fn, (2, 3))[0] == _graph(torch, fn, (2, 3))[0]
