"""linalg.ldl_factor / ldl_factor_ex / ldl_solve against torch: LAPACK's Bunch-Kaufman pivots
(1x1 and 2x2 blocks, interchanges), values, info, batches, symmetric and Hermitian complex input,
layouts and error texts."""
import numpy as np
import pytest

from oracle import check, sample

DTYPES = ["float64", "float32", "complex128", "complex64"]


def tol(dt):
    return dict(atol=1e-4, rtol=1e-4) if dt in ("float32", "complex64") else dict(atol=1e-10, rtol=1e-10)


def indefinite(shape, dt, seed=0, rounded=False):
    """Random (not definite) matrices: they make sytrf pivot, with 2x2 blocks; rounded ones have
    ties and zeros in the pivot search."""
    a = sample(shape, dt, seed=seed)
    return np.round(a) if rounded else a


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("seed", range(4))
def test_ldl_factor_ex_pivoting(dt, hermitian, n, seed):
    a = indefinite((n, n), dt, seed, rounded=seed % 2 == 1)
    check(lambda m, x: m.linalg.ldl_factor_ex(x, hermitian=hermitian), a, **tol(dt))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_factor_batched_and_symmetrized(dt, hermitian):
    a = sample((3, 4, 4), dt, seed=2)
    sym = a + np.swapaxes(a, -1, -2).conj() if hermitian else a + np.swapaxes(a, -1, -2)
    check(lambda m, x: m.linalg.ldl_factor(x, hermitian=hermitian), sym, **tol(dt))
    check(lambda m, x: m.linalg.ldl_factor_ex(x, hermitian=hermitian), a, **tol(dt))


@pytest.mark.parametrize("shape", [(0, 0), (0, 2, 2), (2, 0, 0)])
def test_ldl_factor_empty(shape):
    check(lambda m, x: m.linalg.ldl_factor_ex(x), np.zeros(shape))
    check(lambda m, x: m.linalg.ldl_factor_ex(x), np.zeros(shape, np.float16))


def test_ldl_factor_info_and_check_errors():
    z = np.zeros((2, 2))
    batch = np.array([[[0., 0.], [0., 0.]], [[1., 0.], [0., 0.]]])
    check(lambda m, x: m.linalg.ldl_factor_ex(x), batch)
    check(lambda m, x: m.linalg.ldl_factor_ex(x, check_errors=True), batch)
    check(lambda m, x: m.linalg.ldl_factor(x), z)
    check(lambda m, x: m.linalg.ldl_factor(x), batch)
    check(lambda m, x: m.linalg.ldl_factor(x.T, hermitian=True), np.array([[1., 2.], [3., 4.]]))


@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_factor_nan_and_inf_diagonal_real(hermitian):
    """MKL's real sytrf pivots a NaN diagonal like any value (no DISNAN test); 1 / inf is 0."""
    for a in ([[np.nan, 0.], [1., 2.]], [[1., 0.], [np.nan, 2.]], [[1., 0.], [2., np.nan]],
              [[np.inf, 0.], [1., 2.]], [[1., 0.], [np.inf, 1.]]):
        check(lambda m, x: m.linalg.ldl_factor_ex(x, hermitian=hermitian), np.array(a))


def test_ldl_factor_strided_input_and_out():
    a = sample((4, 4), "float64", seed=3)
    check(lambda m, x: m.linalg.ldl_factor(x.t()), a)
    check(lambda m, x: m.linalg.ldl_factor(x[::2, ::2]), a)

    def out(m, x):
        LD, p = m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int32)
        m.linalg.ldl_factor(x, out=(LD, p))
        return LD, p
    check(out, a)


@pytest.mark.parametrize("fn", [
    lambda m: m.linalg.ldl_factor(m.zeros(2, 3)),
    lambda m: m.linalg.ldl_factor(m.zeros(2)),
    lambda m: m.linalg.ldl_factor(m.zeros(2, 2, dtype=m.int64)),
    lambda m: m.linalg.ldl_factor(m.zeros(2, 2, dtype=m.float16)),
    lambda m: m.linalg.ldl_factor_ex(m.zeros(2, 2, dtype=m.bool)),
])
def test_ldl_factor_errors(fn):
    check(lambda m: fn(m))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_ldl_solve(dt, hermitian, seed):
    a = indefinite((5, 5), dt, seed)
    b = sample((5, 3), dt, seed=seed + 10)
    # a well-conditioned system: the comparison is of the solver, not of rounding blown up
    a = a + np.eye(5, dtype=dt) * 10

    def fn(m, x, y):
        LD, p = m.linalg.ldl_factor(x, hermitian=hermitian)
        return m.linalg.ldl_solve(LD, p, y, hermitian=hermitian)
    check(fn, a, b, **tol(dt))


@pytest.mark.parametrize("ashape,bshape", [((2, 4, 4), (4, 2)), ((2, 4, 4), (2, 4, 2)),
                                           ((4, 4), (3, 4, 1)), ((4, 4), (4, 0)),
                                           ((0, 4, 4), (4, 2)), ((0, 0), (0, 2))])
def test_ldl_solve_batches(ashape, bshape):
    def fn(m, x, y):
        LD, p, _ = m.linalg.ldl_factor_ex(x + x.mT + 8 * m.eye(x.shape[-1], dtype=x.dtype))
        return m.linalg.ldl_solve(LD, p, y)
    check(fn, sample(ashape, "float64"), sample(bshape, "float64", seed=1), atol=1e-10, rtol=1e-10)


def test_ldl_solve_int64_pivots_and_layouts():
    def fn(m, x, y):
        LD, p = m.linalg.ldl_factor(x)
        return m.linalg.ldl_solve(LD.mT.contiguous().mT, p.long(), y.t())
    check(fn, sample((4, 4), "float64"), sample((2, 4), "float64", seed=1), atol=1e-10, rtol=1e-10)


def _solve_args(m):
    LD, p = m.linalg.ldl_factor(m.eye(3, dtype=m.float64))
    return LD, p, m.ones(3, 2, dtype=m.float64)


@pytest.mark.parametrize("fn", [
    lambda m, LD, p, B: m.linalg.ldl_solve(LD, p, B.float()),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD, p.float(), B),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD, p.bool(), B),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD, p[:2], B),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD, p, B[:2]),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD, p, B[0]),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD, p, B[0, 0]),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD[:2], p, B),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD[0], p, B),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD.int(), p, B.int()),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD.half(), p, B.half()),
    lambda m, LD, p, B: m.linalg.ldl_solve(LD.half(), p, B[:, :0].half()),
])
def test_ldl_solve_errors(fn):
    check(lambda m: fn(m, *_solve_args(m)))


def test_ldl_requires_grad():
    """No derivatives.yaml entry: floating results require grad, pivots and info do not."""
    def fn(m, x):
        LD, p, info = m.linalg.ldl_factor_ex(x.requires_grad_())
        X = m.linalg.ldl_solve(LD, p, m.ones(3, 1, dtype=m.float64))
        return LD.requires_grad, p.requires_grad, info.requires_grad, X.requires_grad
    check(fn, np.eye(3) * 2)
