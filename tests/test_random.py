"""Random numbers: torch's shapes, dtypes, strides and errors (oracle, values not compared: the
draws are reftrace's own), the statistics of the draws, and reproducibility from seeds/states."""
import warnings

import numpy as np
import pytest

import reftrace
from oracle import check, requires_torch, sample, torch
from reftrace.ops import PACKETS

RANDOM_OPS = ["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
              "rand_like", "randn_like", "randint_like", "uniform_", "normal_", "bernoulli_",
              "dropout", "feature_dropout", "dropout_", "feature_dropout_"]


def test_every_random_op_is_flagged_nondeterministic():
    for name in RANDOM_OPS:
        assert all(ov.nondeterministic for ov in PACKETS["aten::" + name].overloads), name


x = sample((3, 4))
probs = np.abs(sample((2, 5), seed=1)) + 0.1


@pytest.mark.parametrize("fn,args", [
    (lambda m: m.rand(2, 3), ()),
    (lambda m: m.rand((4,), dtype=m.float64), ()),
    (lambda m: m.rand([]), ()),
    (lambda m: m.randn(2, 3, 4), ()),
    (lambda m: m.randn(5, dtype=m.float16), ()),
    (lambda m: m.randint(10, (2, 3)), ()),
    (lambda m: m.randint(-3, 4, (5,), dtype=m.int32), ()),
    (lambda m: m.randint(3, (2,), dtype=m.float32), ()),
    (lambda m: m.randperm(6), ()),
    (lambda m: m.randperm(0), ()),
    (lambda m: m.randperm(4, dtype=m.float64), ()),
    (lambda m: m.normal(0.0, 2.0, (3, 2)), ()),
    (lambda m, t: m.normal(t, 2.0), (x,)),
    (lambda m, t: m.normal(t.t(), 1.0), (x,)),
    (lambda m, t: m.normal(1.0, t.abs()), (x,)),
    (lambda m, t: m.normal(t, t.abs().double()), (x,)),
    (lambda m, t: m.bernoulli(t.sigmoid()), (x,)),
    (lambda m, t: m.bernoulli(t.sigmoid().t()), (x,)),
    (lambda m, t: m.bernoulli(t, 0.3), (x,)),
    (lambda m, t: t.bernoulli(0.7), (x,)),
    (lambda m, t: m.multinomial(t, 3), (probs,)),
    (lambda m, t: m.multinomial(t[0], 8, True), (probs,)),
    (lambda m, t: m.rand_like(t), (x,)),
    (lambda m, t: m.rand_like(t.t()), (x,)),
    (lambda m, t: m.randn_like(t, dtype=m.float64), (x,)),
    (lambda m, t: m.randint_like(t, 5), (x,)),
    (lambda m, t: m.randint_like(t.t(), 2, 5), (x,)),
    (lambda m, t: t.uniform_(), (x,)),
    (lambda m, t: t.uniform_(-2, 5), (x,)),
    (lambda m, t: t.t().normal_(3, 0.5), (x,)),
    (lambda m, t: t.bernoulli_(), (x,)),
    (lambda m, t: t.bernoulli_(t.sigmoid()), (x,)),
    # requires_grad: *_like and multinomial never; bernoulli/normal follow their inputs
    (lambda m, t: m.rand_like(t.requires_grad_()), (x,)),
    (lambda m, t: m.randint_like(t.requires_grad_(), 3), (x,)),
    (lambda m, t: m.multinomial(t.abs().requires_grad_(), 2), (x,)),
    (lambda m, t: m.bernoulli(t.sigmoid().detach().requires_grad_()), (x,)),
    (lambda m, t: m.normal(t.requires_grad_(), 1.0), (x,)),
    (lambda m, t: m.rand(3, requires_grad=True), ()),
    (lambda m, t: m.randint(3, (2,), requires_grad=True), (x,)),
])
def test_layout_dtype_and_shape(fn, args):
    check(fn, *args, check_values=False)


@pytest.mark.parametrize("fn,args", [
    (lambda m: m.rand(3, dtype=m.int64), ()),
    (lambda m: m.randn(3, dtype=m.int64), ()),
    (lambda m: m.randint(5, 2, (3,)), ()),
    (lambda m: m.randperm(-1), ()),
    (lambda m, t: m.normal(t, -1.0), (x,)),
    (lambda m, t: m.normal(t, -t.abs() - 1), (x,)),
    (lambda m, t: m.bernoulli(t * 5), (x,)),
    (lambda m, t: m.bernoulli(t.long()), (x,)),
    (lambda m, t: m.bernoulli(t, 1.5), (x,)),
    (lambda m, t: m.multinomial(t, 6), (probs,)),
    (lambda m, t: m.multinomial(t - 1, 1), (probs,)),
    (lambda m, t: m.multinomial(t * 0, 1), (probs,)),
    (lambda m, t: m.multinomial(t, 0), (probs,)),
    (lambda m, t: m.multinomial(t.long(), 1), (probs,)),
    (lambda m, t: m.multinomial(t[None], 1), (probs,)),
    (lambda m, t: m.rand_like(t.long()), (x,)),
    (lambda m, t: t.long().uniform_(), (x,)),
    (lambda m, t: t.uniform_(2, 1), (x,)),
    (lambda m, t: t.long().normal_(), (x,)),
    (lambda m, t: t.normal_(0, -2), (x,)),
    (lambda m, t: t.bernoulli_(2.0), (x,)),
    (lambda m, t: t.bernoulli_(t), (x,)),
])
def test_errors(fn, args):
    check(fn, *args)


# -- statistics ---------------------------------------------------------------------------------------

def _np(t):
    return t._array


def test_uniform_and_normal_statistics():
    reftrace.manual_seed(1)
    u = _np(reftrace.rand(100_000))
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.01
    n = _np(reftrace.randn(100_000, dtype=reftrace.float64))
    assert abs(n.mean()) < 0.02 and abs(n.std() - 1) < 0.02
    g = _np(reftrace.normal(3.0, 0.5, (100_000,)))
    assert abs(g.mean() - 3) < 0.01 and abs(g.std() - 0.5) < 0.01
    t = reftrace.from_numpy(np.zeros(100_000, "float32")).uniform_(-2, 6)
    assert _np(t).min() >= -2 and _np(t).max() < 6 and abs(_np(t).mean() - 2) < 0.05
    t.normal_(-1, 3)
    assert abs(_np(t).mean() + 1) < 0.05 and abs(_np(t).std() - 3) < 0.05


def test_integer_draws():
    reftrace.manual_seed(2)
    r = _np(reftrace.randint(-2, 3, (50_000,)))
    counts = np.bincount(r + 2)
    assert len(counts) == 5 and (abs(counts / r.size - 0.2) < 0.01).all()
    assert sorted(_np(reftrace.randperm(50))) == list(range(50))


def test_bernoulli_and_multinomial_frequencies():
    reftrace.manual_seed(3)
    p = reftrace.from_numpy(np.array([0.1, 0.5, 0.9] * 20_000, dtype="float32"))
    b = _np(reftrace.bernoulli(p)).reshape(-1, 3)
    assert set(np.unique(b)) <= {0, 1} and (abs(b.mean(0) - [0.1, 0.5, 0.9]) < 0.015).all()
    w = reftrace.from_numpy(np.array([1.0, 0.0, 3.0], dtype="float32"))
    draws = _np(reftrace.multinomial(w, 40_000, True))
    assert (abs(np.bincount(draws, minlength=3) / draws.size - [0.25, 0, 0.75]) < 0.01).all()
    once = _np(reftrace.multinomial(reftrace.from_numpy(probs), 5))
    assert all(sorted(row) == list(range(5)) for row in once)  # without replacement: a permutation
    # zero-probability categories come last, once the others are used up
    assert sorted(_np(reftrace.multinomial(w, 3))[:2]) == [0, 2]


# -- reproducibility -----------------------------------------------------------------------------------

def _draws():
    x = reftrace.from_numpy(np.zeros((2, 3), "float32"))
    return [_np(reftrace.rand(4)), _np(reftrace.randn(2, 2)), _np(reftrace.randint(9, (3,))),
            _np(reftrace.randperm(5)), _np(x.normal_()).copy(),
            _np(reftrace.bernoulli(reftrace.from_numpy(np.full(6, 0.5, "float32"))))]


def _same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def test_manual_seed_reproduces_every_draw():
    reftrace.manual_seed(123)
    first = _draws()
    reftrace.manual_seed(123)
    assert _same(first, _draws())
    reftrace.manual_seed(124)
    assert not _same(first, _draws())


def test_seed_state_and_initial_seed():
    gen = reftrace.manual_seed(7)
    assert gen is reftrace.random.default_generator and reftrace.initial_seed() == 7
    reftrace.manual_seed(-1)
    assert reftrace.initial_seed() == 2 ** 64 - 1  # torch reads negative seeds as uint64
    s = reftrace.seed()
    assert isinstance(s, int) and reftrace.initial_seed() == s


def test_rng_state_is_a_uint8_tensor_that_restores_the_stream():
    reftrace.manual_seed(5)
    state = reftrace.get_rng_state()
    assert isinstance(state, reftrace.Tensor) and state.dtype is reftrace.uint8 and state.ndim == 1
    first = _draws()
    reftrace.set_rng_state(state)
    assert _same(first, _draws())
    with pytest.raises(TypeError):
        reftrace.set_rng_state(reftrace.from_numpy(np.zeros(37, "float32")))
    with pytest.raises(RuntimeError, match="RNG state size"):
        reftrace.set_rng_state(reftrace.from_numpy(np.zeros(3, "uint8")))


def test_fork_rng_restores_the_state_on_exit_and_on_error():
    reftrace.manual_seed(9)
    with reftrace.random.fork_rng():
        inside = _np(reftrace.rand(3))
    assert np.array_equal(inside, _np(reftrace.rand(3)))
    reftrace.manual_seed(9)
    with pytest.raises(ValueError):
        with reftrace.random.fork_rng():
            reftrace.rand(3)
            raise ValueError
    assert np.array_equal(inside, _np(reftrace.rand(3)))


def test_explicit_generators_are_independent_of_the_global_stream():
    g1, g2 = reftrace.Generator().manual_seed(11), reftrace.Generator().manual_seed(11)
    reftrace.manual_seed(0)
    a = _np(reftrace.rand(4, generator=g1))
    reftrace.rand(10)  # the global stream moves; g2 does not
    assert np.array_equal(a, _np(reftrace.rand(4, generator=g2)))
    assert g1.initial_seed() == 11
    state = g1.get_state()
    b = _np(reftrace.randn(3, generator=g1))
    g1.set_state(state)
    assert np.array_equal(b, _np(reftrace.normal(0.0, 1.0, (3,), generator=g1)))


# -- tracing ---------------------------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("fn", [
    lambda m, x: x + m.rand(3, 4),
    lambda m, x: m.randn_like(x),
    lambda m, x: m.bernoulli(x.sigmoid()),
    lambda m, x: m.normal(x, 0.5),
    lambda m, x: x.uniform_(),
    lambda m, x: m.multinomial(x.abs() + 0.1, 2),
    lambda m, x: x + m.randint(0, 5, (3, 4)),
    lambda m, x: x + m.randperm(4, dtype=m.float32),
    lambda m, x: m.normal(0.5, 2.0, (4,)) + m.randint_like(x, 3),
    lambda m, x: m.dropout(x, 0.5, True),
])
def test_random_ops_are_recorded_like_torch(fn):
    def graph(m):
        inp = (reftrace if m is reftrace else torch).from_numpy(x.copy())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return m.jit.trace(lambda t: fn(m, t), (inp,), check_trace=False).graph.str(False)
    assert graph(reftrace) == graph(torch)
