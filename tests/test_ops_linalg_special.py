"""torch.linalg and torch.special additions against torch 2.13, beyond the OpInfo test: traced
graphs of the spellings NormalizeOps renames, LAPACK's column-major result layouts, errors."""
import numpy as np
import pytest

import reftrace

try:  # torch is the oracle: without it these tests skip
    import torch
except ImportError:  # pragma: no cover - torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)

pytestmark = pytest.mark.filterwarnings("ignore")


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    a = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(shape[-1], dtype="float32") if shape[-1] == shape[-2] else a
    return reftrace.from_numpy(a.copy()), torch.from_numpy(a.copy())


@pytest.mark.parametrize("fn", [
    lambda m, x: m.matrix_exp(x), lambda m, x: m.det(x), lambda m, x: m.linalg.det(x),
    lambda m, x: m.special.psi(x), lambda m, x: m.special.gammaln(x),
    lambda m, x: m.special.polygamma(2, x), lambda m, x: m.special.multigammaln(x + 2, 2),
    lambda m, x: m.orgqr(x, x[:, 0]), lambda m, x: m.linalg.slogdet(x),
    lambda m, x: m.linalg.pinv(x), lambda m, x: m.linalg.matrix_norm(x, 2),
    lambda m, x: m.special.chebyshev_polynomial_t(x, 3), lambda m, x: m.linalg.lstsq(x, x),
])
def test_traced_graph(fn):
    r, t = _pair((3, 3))
    got = reftrace.jit.trace(lambda x: fn(reftrace, x), (r,), check_trace=False).graph.str(False)
    want = torch.jit.trace(lambda x: fn(torch, x), (t,), check_trace=False).graph.str(False)
    assert got == want


@pytest.mark.parametrize("name, call", [
    ("inv_ex", lambda L, x: L.inv_ex(x)), ("cholesky", lambda L, x: L.cholesky(x)),
    ("qr", lambda L, x: L.qr(x)), ("eigvalsh", lambda L, x: L.eigvalsh(x)),
    ("lu_factor", lambda L, x: L.lu_factor(x)), ("solve", lambda L, x: L.solve(x, x[..., :2])),
    ("householder", lambda L, x: L.householder_product(x, x[..., 0])),
])
def test_lapack_layout(name, call):
    r, t = _pair((2, 4, 4))
    got, want = call(reftrace.linalg, r), call(torch.linalg, t)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert g.stride() == w.stride() and str(g.dtype) == str(w.dtype)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda m: m.linalg.det(m.ones(2, 3)), lambda m: m.linalg.det(m.ones(3, dtype=m.int64)),
    lambda m: m.linalg.cholesky(-m.eye(3)), lambda m: m.linalg.solve(m.zeros(2, 2), m.ones(2)),
    lambda m: m.linalg.vander(m.ones(3), N=1), lambda m: m.linalg.multi_dot([m.ones(2, 2)]),
    lambda m: m.mvlgamma(m.ones(3), 0), lambda m: m.mvlgamma(m.ones(3, dtype=m.bool), 2),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(Exception) as got:
        call(reftrace)
    assert type(got.value).__name__ == type(want.value).__name__
    assert str(got.value) == str(want.value).split("\n")[0]
