"""torch.fft, torch.signal.windows and the i0 family against torch 2.13 (beyond what the OpInfo
test compares): MKL's result layouts, fftfreq, traced graphs of the special spellings."""
import numpy as np
import pytest

import reftrace

try:  # torch is the oracle: without it these tests skip
    import torch
except ImportError:  # pragma: no cover - torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)


def _pair(shape, seed=0, dtype="float32"):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return reftrace.from_numpy(a.copy()), torch.from_numpy(a.copy())


@pytest.mark.parametrize("name, kwargs", [
    ("fft", {"dim": 0}), ("fft", {"dim": 1}), ("rfft", {"dim": 0}), ("irfft", {"dim": 0}),
    ("hfft", {"dim": 1}), ("ihfft", {"dim": 0}), ("fftn", {"dim": (0, 2)}),
    ("rfft2", {"dim": (0, 1)}), ("irfftn", {}), ("hfftn", {"dim": (0, 1)}),
    ("ihfftn", {"dim": (0, 1)}), ("fft", {"n": 7, "dim": 0}), ("rfft", {"n": 3}),
])
def test_fft_layout_and_values(name, kwargs):
    r, t = _pair((3, 4, 5))
    for rx, tx in ((r, t), (r.transpose(0, 2), t.transpose(0, 2))):
        got, want = getattr(reftrace.fft, name)(rx, **kwargs), getattr(torch.fft, name)(tx, **kwargs)
        assert got.stride() == want.stride() and str(got.dtype) == str(want.dtype)
        np.testing.assert_allclose(got.numpy(), want.resolve_conj().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n, d", [(1, 1.0), (5, 1.0), (6, 0.3)])
def test_fftfreq(n, d):
    for fn in ("fftfreq", "rfftfreq"):
        for dt in (None, "float64"):
            kw = {} if dt is None else {"dtype": getattr(torch, dt)}
            want = getattr(torch.fft, fn)(n, d, **kw)
            got = getattr(reftrace.fft, fn)(n, d, **({} if dt is None else {"dtype": getattr(reftrace, dt)}))
            assert str(got.dtype) == str(want.dtype)
            assert np.array_equal(got.numpy(), want.numpy())


def test_fft_errors_match_torch():
    r, t = _pair((3, 4))
    for call in (lambda m, x: m.fft.fft(x, n=0), lambda m, x: m.fft.fft(x, norm="bad"),
                 lambda m, x: m.fft.fftn(x, dim=(0, 0)), lambda m, x: m.fft.fftn(x, s=(1, 2, 3)),
                 lambda m, x: m.fft.rfft(m.fft.fft(x)), lambda m, x: m.fft.fft(x.half())):
        with pytest.raises(Exception) as want:
            call(torch, t)
        with pytest.raises(type(want.value), match=None) as got:
            call(reftrace, r)
        assert str(got.value) == str(want.value).split("\n")[0]


@pytest.mark.parametrize("fn", [lambda m, x: m.special.i0(x), lambda m, x: m.fft.rfft(x),
                                lambda m, x: m.fft.fftshift(m.fft.ihfft2(x))])
def test_traced_graph(fn):
    r, t = _pair((3, 4))
    got = reftrace.jit.trace(lambda x: fn(reftrace, x), (r,)).graph.str(False)
    want = torch.jit.trace(lambda x: fn(torch, x), (t,)).graph.str(False)
    assert got == want
