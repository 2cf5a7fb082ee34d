"""igamma / igammac (reftrace/ops/igamma.py, Math.h's calc_igamma / calc_igammac) against live
torch: values bit for bit in float32 and float64 over every branch of the algorithm (boundary
values, the two series, the continued fraction, the uniform asymptotic expansion, both sides of
_igam_helper_fac's Lanczos form), float16 / bfloat16, promotion, errors, in-place and out=, the
special.gammainc spellings, the traced graph and the gradient in ``other``."""
import numpy as np
import pytest

import reftrace

try:
    import torch
except ImportError:  # pragma: no cover - the torch-free run
    torch = None

pytestmark = pytest.mark.skipif(torch is None, reason="torch 2.13 (the oracle) is not installed")

NAMES = ["igamma", "igammac"]
SPECIAL = {"igamma": "gammainc", "igammac": "gammaincc"}


def _inputs(dtype):
    """(a, x) pairs over every branch: x near a (the asymptotic expansion for 20 < a < 200 and
    past 200, the Lanczos form of the prefactor), x far from a, x <= 0.5, 0.5 < x <= 1.1, and
    the boundary values (0, negative, inf, nan)."""
    rng = np.random.RandomState(0)
    a, x = [], []
    for lo, hi in [(1e-4, 1), (0.1, 5), (1, 30), (15, 250), (150, 5000), (1e4, 1e7)]:
        n = 600
        u = rng.uniform(lo, hi, n)
        a += [u, rng.uniform(lo, hi, n), rng.uniform(lo, hi, n)]
        x += [u * rng.uniform(0.6, 1.4, n), rng.uniform(0, 2 * hi, n), rng.uniform(0, 1.2, n)]
    a.append(np.exp(rng.uniform(-20, 8, 1000)))
    x.append(np.exp(rng.uniform(-20, 8, 1000)))
    edges = [0.0, -0.0, -1.0, 0.5, 1.0, 1.1, 20.0, 200.0, 1e30, np.inf, -np.inf, np.nan]
    ea, ex = np.meshgrid(edges, edges)
    a.append(ea.ravel())
    x.append(ex.ravel())
    return np.concatenate(a).astype(dtype), np.concatenate(x).astype(dtype)


def _both(name, a, x, special=False):
    t = (getattr(torch.special, SPECIAL[name]) if special else getattr(torch, name))(
        torch.from_numpy(a), torch.from_numpy(x))
    r = (getattr(reftrace.special, SPECIAL[name]) if special else getattr(reftrace, name))(
        reftrace.from_numpy(a), reftrace.from_numpy(x))
    return r, t


def _assert_same_bits(r, t):
    assert str(r.dtype) == str(t.dtype) and tuple(r.shape) == tuple(t.shape)
    rn, tn = r.numpy(), t.numpy()
    same = (rn == tn) | (np.isnan(rn) & np.isnan(tn))
    assert same.all(), (np.flatnonzero(~same)[:10], rn[~same][:10], tn[~same][:10])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_values_bit_exact(name, dtype):
    a, x = _inputs(dtype)
    _assert_same_bits(*_both(name, a, x))


@pytest.mark.parametrize("name", NAMES)
def test_special_spellings(name):
    a, x = _inputs("float32")
    _assert_same_bits(*_both(name, a[::7].copy(), x[::7].copy(), special=True))


@pytest.mark.parametrize("dtype", ["float16"])  # (reftrace has no bfloat16)
@pytest.mark.parametrize("name", NAMES)
def test_half_types_compute_in_float(name, dtype):
    a, x = _inputs("float32")
    ta, tx = (torch.from_numpy(v).to(getattr(torch, dtype)) for v in (a, x))
    t = getattr(torch, name)(ta, tx)
    r = getattr(reftrace, name)(reftrace.from_numpy(ta.float().numpy()).to(getattr(reftrace, dtype)),
                                reftrace.from_numpy(tx.float().numpy()).to(getattr(reftrace, dtype)))
    assert str(r.dtype) == str(t.dtype)
    rn, tn = r.float().numpy(), t.float().numpy()
    assert ((rn == tn) | (np.isnan(rn) & np.isnan(tn))).all()


def _operands(m):
    """Operand pairs of mixed dtypes, shapes and layouts, built the same way in torch and reftrace."""
    a = m.linspace(0.5, 30, 12, dtype=m.float64).reshape(3, 4).t()  # non-contiguous
    x = m.tensor([0.7, 2.0, 9.0], dtype=m.float32)
    return [(a, x), (x, a), (m.arange(1, 4), x), (x, m.tensor(3.0, dtype=m.float64)),
            (m.tensor(2.5), x.double()), (m.tensor(2.5), m.tensor(0.5))]


@pytest.mark.parametrize("name", NAMES)
def test_promotion_broadcast_and_layout(name):
    for (ta, tx), (ra, rx) in zip(_operands(torch), _operands(reftrace)):
        t, r = getattr(torch, name)(ta, tx), getattr(reftrace, name)(ra, rx)
        _assert_same_bits(r, t)
        assert r.stride() == t.stride()


def _error(fn_t, fn_r):
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(type(te.value)) as re_:
        fn_r()
    assert str(re_.value) == str(te.value)


@pytest.mark.parametrize("name", NAMES)
def test_errors(name):
    for dt in ["int64", "int32", "bool", "complex64"]:
        def run(m):
            return getattr(m, name)(m.ones(2, dtype=getattr(m, dt)), m.ones(2, dtype=getattr(m, dt)))
        _error(lambda: run(torch), lambda: run(reftrace))
    # an integer self cannot hold the float result of the in-place op
    _error(lambda: getattr(torch.arange(2), name + "_")(torch.ones(2)),
           lambda: getattr(reftrace.arange(2), name + "_")(reftrace.ones(2)))
    # a Python number is no Tensor here (the type only: reftrace's argument parser lists the
    # out= overload as a second signature, where torch's merges them; atan2 shows it too)
    with pytest.raises(TypeError):
        getattr(torch, name)(torch.ones(2), 2.0)
    with pytest.raises(TypeError):
        getattr(reftrace, name)(reftrace.ones(2), 2.0)
    _error(lambda: getattr(torch, name)(torch.ones(2), torch.ones(3)),
           lambda: getattr(reftrace, name)(reftrace.ones(2), reftrace.ones(3)))


@pytest.mark.parametrize("name", NAMES)
def test_inplace_and_out(name):
    a, x = _inputs("float64")
    a, x = a[:500].copy(), x[:500].copy()
    t, r = torch.from_numpy(a.copy()), reftrace.from_numpy(a.copy())
    getattr(t, name + "_")(torch.from_numpy(x))
    getattr(r, name + "_")(reftrace.from_numpy(x))
    _assert_same_bits(r, t)
    to, ro = torch.empty(500, dtype=torch.float32), reftrace.empty(500, dtype=reftrace.float32)
    getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(x), out=to)
    getattr(reftrace, name)(reftrace.from_numpy(a), reftrace.from_numpy(x), out=ro)
    _assert_same_bits(ro, to)
    ro2 = reftrace.empty(500, dtype=reftrace.float64)
    reftrace.special.gammainc(reftrace.from_numpy(a), reftrace.from_numpy(x), out=ro2)
    expected = torch.special.gammainc(torch.from_numpy(a), torch.from_numpy(x)).numpy()
    assert np.array_equal(ro2.numpy(), expected, equal_nan=True)


def test_traced_graph_matches_torch():
    def f(lib):
        return lambda a, x: lib.igamma(a, x) + lib.special.gammaincc(a, x) + a.igammac(x)
    a, x = torch.rand(3) + 0.5, torch.rand(3) + 0.5
    gt = torch.jit.trace(f(torch), (a, x)).graph.str(False)
    ra, rx = reftrace.from_numpy(a.numpy()), reftrace.from_numpy(x.numpy())
    gr = reftrace.jit.trace(f(reftrace), (ra, rx)).graph.str(False)
    assert gr == gt


@pytest.mark.parametrize("name", NAMES)
def test_gradient_in_other_matches_torch(name):
    from autograd_oracle import compare_grads
    rng = np.random.default_rng(0)
    a = torch.from_numpy(rng.uniform(0.5, 5, (3, 4)))
    x = torch.from_numpy(rng.uniform(0.1, 6, (3, 4))).requires_grad_()
    compare_grads(lambda m, a, x: getattr(m, name)(a, x), [a, x])
    compare_grads(lambda m, a, x: getattr(a * 1, name + "_")(x), [a, x])


@pytest.mark.parametrize("name", NAMES)
def test_gradient_in_self_is_not_implemented(name):
    def run(m, a, x):
        getattr(m, name)(a, x).sum().backward()
    mk = [lambda: torch.tensor([1.5, 2.0], dtype=torch.float64, requires_grad=True),
          lambda: reftrace.tensor([1.5, 2.0], dtype=reftrace.float64, requires_grad=True)]
    _error(lambda: run(torch, mk[0](), torch.tensor([1.0, 2.0], dtype=torch.float64)),
           lambda: run(reftrace, mk[1](), reftrace.tensor([1.0, 2.0], dtype=reftrace.float64)))
    t = getattr(torch, name)(mk[0](), torch.tensor([1.0, 2.0], dtype=torch.float64))
    r = getattr(reftrace, name)(mk[1](), reftrace.tensor([1.0, 2.0], dtype=reftrace.float64))
    assert type(r.grad_fn).__name__ == type(t.grad_fn).__name__
