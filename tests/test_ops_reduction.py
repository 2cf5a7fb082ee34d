"""Reductions, scans and sorting against torch 2.13: values, dtypes, shapes, strides, errors."""
import numpy as np
import pytest

import reftrace
from oracle import check, requires_torch, sample, torch
from reftrace._dispatch import observed
from reftrace.ops import get_packet
from reftrace.ops import reduction

ALL_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64"]
REAL_DTYPES = [d for d in ALL_DTYPES if d != "complex64"]
FLOATS = ["float16", "float32", "float64"]


def fortran(m, a):
    """A column-major (non-contiguous) tensor of a fresh copy of ``a``, in either library."""
    return m.from_numpy(np.asfortranarray(a))


def nan_sample(shape=(3, 4), dtype="float32"):
    a = sample(shape, dtype)
    a.flat[1] = np.nan
    a.flat[-2] = np.nan
    return a


# -- sum / prod / mean ----------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_sum_prod_dtypes(dt):
    a = sample((3, 4), dt, low=-2, high=2)
    for name in ("sum", "prod"):
        check(lambda m, x: getattr(x, name)(), a)
        check(lambda m, x: getattr(m, name)(x, 1), a)
        check(lambda m, x: getattr(x, name)(0, keepdim=True), a)
        check(lambda m, x: getattr(x, name)(dtype=m.float64), a)
        check(lambda m, x: getattr(x, name)(-1, dtype=m.int32), a)


@pytest.mark.parametrize("dims", [None, [], 0, -1, [0, 2], (2, -3), [1, 1], 3])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean_dims(dims, keepdim):
    a = sample((2, 3, 4))
    check(lambda m, x: x.sum(dims, keepdim), a)
    check(lambda m, x: m.mean(x, dims, keepdim=keepdim), a)
    check(lambda m: fortran(m, a).sum(dims, keepdim))


def test_sum_special_inputs():
    check(lambda m, x: x.sum(), np.array(2.5, np.float32))
    check(lambda m, x: (x.sum(0), x.sum(-1, keepdim=True), x.sum([])), np.array(2.5, np.float32))
    check(lambda m, x: x.sum(1), np.array(2.5, np.float32))  # 0-dim: only 0 and -1
    empty = np.zeros((0, 3), np.float32)
    check(lambda m, x: (x.sum(), x.sum(0), x.sum(1), x.prod(0), x.mean(0), x.mean()), empty)
    check(lambda m, x: x.sum(), sample((1000,), "float16"))  # accumulates in float32
    check(lambda m, x: x.sum(), np.array([np.iinfo(np.int64).max, 1]))  # wraps like torch
    check(lambda m, x: x.sum(), sample((3,), "complex64"))
    check(lambda m, x: x.sum(dtype=m.float32), sample((3,), "complex64"))


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_mean_dtypes_and_errors(dt):
    a = sample((3, 4), dt)
    check(lambda m, x: x.mean(), a)
    check(lambda m, x: x.mean(0, keepdim=True), a)
    check(lambda m, x: x.mean(dtype=m.float64), a)
    check(lambda m, x: x.mean(1, dtype=m.int64), a)


def test_prod_dim_overloads():
    a = sample((2, 3, 4), "int32")
    check(lambda m, x: (x.prod(1), x.prod(-1, True), m.prod(x, dim=0, dtype=m.float32)), a)
    # prod.dim_int takes one int: torch's parser's TypeError, word for word
    check(lambda m, x: x.prod([0, 1]), a)
    check(lambda m, x: x.prod(0), np.array(3, np.int8))


# -- max / min / amax / amin / argmax / argmin ----------------------------------------------------

@pytest.mark.parametrize("dt", ALL_DTYPES)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_overloads(dt, name):
    a, b = sample((3, 4), dt), sample((3, 4), dt, seed=1)
    check(lambda m, x: getattr(x, name)(), a)
    check(lambda m, x: getattr(m, name)(x, 1), a)
    check(lambda m, x: getattr(x, name)(dim=0, keepdim=True), a)
    check(lambda m, x, y: getattr(m, name)(x, y), a, b)
    check(lambda m, x: getattr(m, "a" + name)(x, 1), a)
    check(lambda m, x: getattr(x, "arg" + name)(), a)
    check(lambda m, x: getattr(x, "arg" + name)(0, keepdim=True), a)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "argmax", "argmin"])
def test_extremes_nan_ties_empty_zero_dim(name):
    f = getattr
    check(lambda m, x: f(x, name)(), nan_sample())
    check(lambda m, x: f(x, name)(1), nan_sample())
    check(lambda m, x: f(x, name)(0), np.array([[1, 3, 3], [3, 1, 1]], np.int64))  # first wins
    check(lambda m, x: f(x, name)(0), np.array(1.5, np.float32))
    check(lambda m, x: f(x, name)(-1), np.array(1.5, np.float32))
    check(lambda m, x: f(x, name)(), np.zeros((0, 3), np.float32))
    check(lambda m, x: f(x, name)(0), np.zeros((0, 3), np.float32))
    check(lambda m, x: f(x, name)(1), np.zeros((0, 3), np.float32))
    check(lambda m, x: f(x, name)(2), np.zeros((2, 3), np.float32))
    check(lambda m: f(fortran(m, sample((3, 4, 5))), name)(1, keepdim=True))


def test_amax_dims_and_binary_promotion():
    a = sample((2, 3, 4))
    check(lambda m, x: (x.amax(), x.amax([0, 2]), x.amin((-1, 0), True), x.amax([])), a)
    check(lambda m, x: x.argmax(keepdim=True), a)
    check(lambda m, x, y: m.max(x, y), sample((3, 1), "int32"), sample((4,), "float32"))
    check(lambda m, x, y: x.min(y), nan_sample(), sample((3, 4)))
    check(lambda m, x: m.max(x, 2), a)  # a number is not a Tensor here: max.dim
    check(lambda m, x: m.max(x, 2.5), a)


# -- all / any ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_all_any(dt):
    a = sample((2, 3, 4), dt, low=0, high=2)
    for name in ("all", "any"):
        check(lambda m, x: getattr(x, name)(), a)
        check(lambda m, x: getattr(m, name)(x, 1), a)
        check(lambda m, x: getattr(x, name)([0, 2], keepdim=True), a)
        check(lambda m, x: getattr(x, name)(dim=None), a)
        check(lambda m, x: getattr(x, name)(()), a)
    check(lambda m, x: (x.all(), x.any(), x.all(0)), np.zeros((0, 2), dt))


# -- std / var ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ALL_DTYPES)
@pytest.mark.parametrize("name", ["std", "var"])
def test_std_var_overloads(dt, name):
    a = sample((3, 4, 2), dt)
    f = getattr
    check(lambda m, x: f(x, name)(), a)
    check(lambda m, x: f(x, name)(0), a)
    check(lambda m, x: f(x, name)(False), a)
    check(lambda m, x: f(x, name)(dim=1, unbiased=False), a)
    check(lambda m, x: f(x, name)([0, 2], keepdim=True), a)
    check(lambda m, x: f(x, name)(correction=0), a)
    check(lambda m, x: f(m, name)(x, dim=None, correction=2.5, keepdim=True), a)


def test_std_var_degenerate():
    one = np.array([1.5], np.float32)
    check(lambda m, x: (x.var(), x.std(0), x.var(correction=3), x.var(correction=0)), one)
    check(lambda m, x: (x.var(), x.std(0)), np.array(2.0, np.float64))
    check(lambda m, x: (x.var(), x.std(0)), np.zeros((0, 2), np.float32))
    check(lambda m, x: x.std(1), nan_sample())
    check(lambda m: fortran(m, sample((3, 4))).std(0, keepdim=True))


# -- norm -----------------------------------------------------------------------------------------

def _norm(m):
    return m.norm if m is torch else reduction.norm


def _vector_norm(m):
    return m.linalg.vector_norm if m is torch else get_packet("linalg_vector_norm")


@pytest.mark.parametrize("p", [2, 1, 0, 3, 0.5, -1, float("inf"), float("-inf"), None, "fro"])
def test_norm_p(p):
    a = sample((3, 4))
    check(lambda m, x: _norm(m)(x, p), a)
    check(lambda m, x: _norm(m)(x, p, 1), a)
    check(lambda m, x: _norm(m)(x, p, dim=(0, 1), keepdim=True), a)


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_vector_norm_dtypes(dt):
    a = sample((3, 4), dt)
    check(lambda m, x: _vector_norm(m)(x), a)
    check(lambda m, x: _vector_norm(m)(x, 2, [1], True), a)
    check(lambda m, x: _vector_norm(m)(x, dtype=m.float64), a)
    check(lambda m, x: _vector_norm(m)(x, 1, dtype=m.complex128), a)


def test_vector_norm_empty():
    e = np.zeros((0, 3), np.float32)
    check(lambda m, x: (_vector_norm(m)(x), _vector_norm(m)(x, 2, 0)), e)
    check(lambda m, x: _vector_norm(m)(x, float("inf")), e)
    check(lambda m, x: _vector_norm(m)(x, float("inf"), 1), e)


# -- logsumexp ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_logsumexp(dt):
    a = sample((3, 4), dt)
    check(lambda m, x: x.logsumexp(1), a)
    check(lambda m, x: m.logsumexp(x, [0, 1], keepdim=True), a)


def test_logsumexp_special():
    inf = np.array([[np.inf, 1.0], [-np.inf, -np.inf], [np.nan, 0.0], [1000.0, 1000.0]], np.float32)
    check(lambda m, x: (x.logsumexp(1), x.logsumexp(0)), inf)
    check(lambda m, x: x.logsumexp(0), np.zeros((0, 3), np.float32))
    check(lambda m, x: x.logsumexp(0), np.array(2.0, np.float32))
    check(lambda m, x: x.logsumexp([]), sample((2, 3)))
    check(lambda m, x: x.logsumexp([], keepdim=True), sample((2, 3)))


# -- scans ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_cumsum_cumprod(dt):
    a = sample((3, 4), dt, low=-2, high=2)
    for name in ("cumsum", "cumprod"):
        check(lambda m, x: getattr(x, name)(0), a)
        check(lambda m, x: getattr(m, name)(x, -1, dtype=m.float64), a)
    check(lambda m: fortran(m, a).cumsum(1))


def test_scans_special():
    for name in ("cumsum", "cumprod", "cummax", "cummin"):
        check(lambda m, x: getattr(x, name)(0), np.array(2.5, np.float32))
        check(lambda m, x: getattr(x, name)(-1), np.zeros((2, 0), np.float32))
        check(lambda m, x: getattr(x, name)(2), sample((2, 3)))
    check(lambda m, x: x.cumsum(0), sample((100,), "float16"))


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_cummax_cummin(dt):
    a = sample((4, 5), dt, low=-1, high=1)
    check(lambda m, x: x.cummax(1), a)
    check(lambda m, x: m.cummin(x, 0), a)


def test_cummax_ties_and_nan():
    ties = np.array([1, 3, 3, 2, 3, 0], np.float32)
    check(lambda m, x: (x.cummax(0), x.cummin(0)), ties)
    nan = np.array([1, np.nan, 5, np.nan, 0], np.float32)
    check(lambda m, x: (x.cummax(0), x.cummin(0)), nan)
    check(lambda m: fortran(m, sample((3, 4))).cummax(0))


# -- sort / argsort / topk ------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_sort_argsort_dtypes(dt):
    a = sample((3, 5), dt, low=-2, high=2)
    check(lambda m, x: x.sort(), a)
    check(lambda m, x: m.sort(x, 0, descending=True), a)
    check(lambda m, x: x.sort(stable=True, dim=0), a)
    check(lambda m, x: x.argsort(descending=True), a)
    check(lambda m, x: x.argsort(stable=True), a)


def test_sort_stability_nan_layout():
    ties = np.array([[2, 1, 2, 1, 2, 0]], np.int64)
    check(lambda m, x: (x.sort(stable=True), x.sort(descending=True, stable=True)), ties)
    check(lambda m, x: (x.sort(), x.sort(descending=True)), nan_sample())
    check(lambda m: fortran(m, sample((3, 4, 5))).sort(1))
    check(lambda m: fortran(m, sample((3, 4, 5))).argsort(0, descending=True))
    check(lambda m, x: (x.sort(), x.sort(0), x.argsort()), np.array(2.0, np.float32))
    check(lambda m, x: x.sort(), np.zeros((2, 0), np.float32))
    check(lambda m, x: x.sort(2), sample((2, 3)))


@pytest.mark.parametrize("dt", ALL_DTYPES)
def test_topk_dtypes(dt):
    a = sample((3, 6), dt, low=-5, high=5, seed=3)
    check(lambda m, x: x.topk(2), a)
    check(lambda m, x: m.topk(x, 2, dim=0, largest=False), a)


def test_topk_special():
    distinct = sample((4, 6), "float64")
    check(lambda m, x: (x.topk(6), x.topk(0), x.topk(3, 0, sorted=True)), distinct)
    check(lambda m, x: x.topk(7), distinct)
    check(lambda m, x: x.topk(2), nan_sample())
    check(lambda m, x: (x.topk(1), x.topk(1, 0), x.topk(0)), np.array(1.5, np.float32))
    check(lambda m, x: x.topk(2), np.array(1.5, np.float32))
    check(lambda m: fortran(m, distinct).topk(2, 0))


# -- which overload a call reaches (it decides the node a trace records) ----------------------------

def _torch_overload(name, fn, x):
    """The overload of aten::<name> that torch records for ``fn`` (read off torch.jit.trace)."""
    graph = torch.jit.trace(lambda t: fn(torch, t), (torch.from_numpy(x),)).graph
    schema = next(n.schema() for n in graph.nodes() if n.kind() == "aten::" + name)
    head = schema.split("(")[0]
    return head.split(".")[1] if "." in head else ""


def _reftrace_overload(name, fn, x):
    """The overload reftrace's dispatcher picks for ``fn`` (spied on through the kernels)."""
    chosen, packet = [], get_packet(name)
    original = [(ov, ov.kernel) for ov in packet.overloads]
    try:
        for ov, kernel in original:
            ov.kernel = (lambda ov, k: lambda *a: chosen.append(ov.overload) or k(*a))(ov, kernel)
        with observed():  # (the eager fast paths hold the kernels they call: through dispatch)
            fn(reftrace, reftrace.from_numpy(x.copy()))
    finally:
        for ov, kernel in original:
            ov.kernel = kernel
    return chosen[0]


@pytest.mark.parametrize("name, fn", [
    ("std", lambda m, x: x.std()), ("std", lambda m, x: x.std(0)), ("std", lambda m, x: x.std(False)),
    ("std", lambda m, x: x.std(dim=1, unbiased=False)), ("var", lambda m, x: x.var(correction=0)),
    ("var", lambda m, x: m.var(x, [0, 1], keepdim=True)), ("var", lambda m, x: x.var(None)),
    ("sum", lambda m, x: x.sum()), ("sum", lambda m, x: x.sum(1)), ("sum", lambda m, x: x.sum(None)),
    ("sum", lambda m, x: x.sum(dtype=m.float64)), ("mean", lambda m, x: x.mean((0, 1))),
    ("prod", lambda m, x: x.prod(0)),
    ("max", lambda m, x: x.max()), ("max", lambda m, x: m.max(x, x)), ("max", lambda m, x: x.max(1)),
    ("min", lambda m, x: m.min(x, dim=0)),
    ("all", lambda m, x: x.all()), ("all", lambda m, x: x.all(1)), ("all", lambda m, x: x.all((0, 1))),
    ("any", lambda m, x: x.any(dim=None)),
    ("sort", lambda m, x: x.sort()), ("sort", lambda m, x: x.sort(stable=False)),
    ("sort", lambda m, x: m.sort(x, 0, True)),
    ("argsort", lambda m, x: x.argsort()), ("argsort", lambda m, x: x.argsort(stable=True)),
    ("softmax", lambda m, x: x.softmax(0)), ("cumsum", lambda m, x: x.cumsum(0, dtype=m.float64)),
])
@requires_torch
def test_overload_choice_matches_torch(name, fn):
    x = sample((3, 4))
    assert _reftrace_overload(name, fn, x) == _torch_overload(name, fn, x)


# -- views as inputs: transposed and strided (non-dense) --------------------------------------------

VIEWS = {
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 1),
    "step": lambda x: x[:, ::2],          # not dense: results are laid out densely
    "step_t": lambda x: x[::2].t(),
}
VIEW_OPS = [
    lambda m, v: (v.sum(0), v.sum(1, keepdim=True), v.mean(), v.prod(1)),
    lambda m, v: (v.max(0), v.amin(1, True), v.argmax(0), v.all(1), v.any()),
    lambda m, v: (v.std(0), v.var(1, keepdim=True), v.logsumexp(0)),
    lambda m, v: (v.cumsum(0), v.cumprod(1), v.cummax(0), v.cummin(1)),
    lambda m, v: (v.sort(0), v.sort(1, descending=True), v.argsort(0), v.topk(2, 0)),
    lambda m, v: (_vector_norm(m)(v, 2, [0]), _norm(m)(v, 1, 1)),
]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("fn", VIEW_OPS)
def test_reductions_of_views(view, fn):
    check(lambda m, x: fn(m, VIEWS[view](x)), sample((4, 6)))


@pytest.mark.parametrize("fn", [
    lambda m, x: x.max(0), lambda m, x: x.sort(), lambda m, x: x.argmax(), lambda m, x: x.cummax(0),
    lambda m, x: x.topk(2), lambda m, x: x.std(0), lambda m, x: x.all(),
])
def test_requires_grad_of_results(fn):
    # float results of a requires-grad input require grad; indices, bools and ints never do
    check(lambda m, x: fn(m, x.requires_grad_()), sample((3, 4)))
