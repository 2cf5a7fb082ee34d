"""torch.special's Bessel and Airy functions (reftrace/ops/special_bessel.py) against live torch:
values over wide ranges (negative, zero, tiny, large, inf, nan) in float32 and float64, integer
inputs (computed in the default float), float16's refusal, and the traced graph."""
import numpy as np
import pytest

import reftrace

try:
    import torch
except ImportError:  # pragma: no cover - the torch-free run
    torch = None

pytestmark = pytest.mark.skipif(torch is None, reason="torch 2.13 (the oracle) is not installed")

NAMES = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai"]


def _inputs(dtype):
    rng = np.random.RandomState(0)
    x = np.concatenate([rng.uniform(-30, 30, 4000), rng.uniform(-3, 3, 2000), rng.uniform(0, 1e-3, 200),
                        np.exp(rng.uniform(-20, 6, 1000)), -np.exp(rng.uniform(-20, 6, 1000)),
                        [0.0, -0.0, 1.0, 2.0, 5.0, 8.0, 25.0, 700.0, np.inf, -np.inf, np.nan]])
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_values_match_torch(name, dtype):
    x = _inputs(dtype)
    t = getattr(torch.special, name)(torch.from_numpy(x)).numpy()
    r = getattr(reftrace.special, name)(reftrace.from_numpy(x)).numpy()
    assert r.dtype == t.dtype
    # torch's own default tolerances (torch.testing.assert_close): near the functions' zeros a
    # last-bit difference in sin/cos is a large relative one
    rtol, atol = (1.3e-6, 1e-5) if dtype == "float32" else (1e-7, 1e-7)
    np.testing.assert_allclose(r, t, rtol=rtol, atol=atol, equal_nan=True)
    assert np.array_equal(np.isnan(r), np.isnan(t)) and np.array_equal(np.isinf(r), np.isinf(t))


@pytest.mark.parametrize("name", NAMES)
def test_integer_inputs_and_float16(name):
    x = np.arange(-5, 6)
    t = getattr(torch.special, name)(torch.from_numpy(x))
    r = getattr(reftrace.special, name)(reftrace.from_numpy(x))
    assert str(r.dtype) == str(t.dtype)
    np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=4e-6, equal_nan=True)
    with pytest.raises(Exception) as te:
        getattr(torch.special, name)(torch.ones(2, dtype=torch.float16))
    with pytest.raises(type(te.value)) as re_:
        getattr(reftrace.special, name)(reftrace.ones(2, dtype=reftrace.float16))
    assert str(re_.value) == str(te.value)


def test_traced_graph_matches_torch():
    def f(lib):
        return lambda x: lib.special.bessel_j0(x) + lib.special.airy_ai(x)
    gt = torch.jit.trace(f(torch), torch.ones(3)).graph.str(False)
    gr = reftrace.jit.trace(f(reftrace), reftrace.ones(3)).graph.str(False)
    assert gr == gt
