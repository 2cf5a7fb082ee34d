"""special.i1 / special.i1e (reftrace/ops/special_math.py) against live torch: their CPU kernels
are scalar loops over Math.h's calc_i1/calc_i1e (fused chbevl, libm's exp, the header's product
order), so float64 matches bit for bit and float32 all but a rare last bit of expf."""
import numpy as np
import pytest

import reftrace

torch = pytest.importorskip("torch")


def _pair(name, x):
    t = getattr(torch.special, name)(torch.from_numpy(x)).numpy()
    r = getattr(reftrace.special, name)(reftrace.from_numpy(x)).numpy()
    assert r.dtype == t.dtype
    return r, t


def _inputs(dtype):
    rng = np.random.RandomState(0)
    return np.concatenate([rng.uniform(-30, 30, 20000), rng.uniform(-700, 700, 500),
                           [0.0, -0.0, 8.0, -8.0, 1e-30, np.inf, -np.inf, np.nan]]).astype(dtype)


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_float64_bit_exact(name):
    r, t = _pair(name, _inputs("float64"))
    assert np.array_equal(r, t, equal_nan=True)


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_float32(name):
    # the element OpInfo's sample once caught (355.73727 vs torch's 355.73679), then a sweep
    x = np.concatenate([[7.876089096069336, -7.876089096069336], _inputs("float32")]).astype(np.float32)
    r, t = _pair(name, x)
    assert np.array_equal(r[:2], t[:2])
    differ = ~((r == t) | (np.isnan(r) & np.isnan(t)))
    assert np.allclose(r, t, rtol=1.3e-6, atol=1e-5, equal_nan=True) and differ.mean() < 0.002
