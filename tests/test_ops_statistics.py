"""Statistics against torch 2.13: cov, corrcoef, quantile / nanquantile (every interpolation
mode), histogram / histogramdd / histc: values, dtypes, strides, warnings and errors."""
import warnings

import numpy as np
import pytest

from oracle import check, sample, torch

FLOATS = ["float32", "float64"]


def nan_sample(shape, dtype="float32"):
    a = sample(shape, dtype)
    a.flat[1] = np.nan
    a.flat[-2] = np.nan
    return a


# -- cov, corrcoef -------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "float16", "bool"])
def test_cov_corrcoef_dtypes(dt):
    a = sample((3, 5), dt, seed=1)
    check(lambda m, x: m.cov(x), a)
    check(lambda m, x: x.corrcoef(), a, atol=1e-3 if dt == "float16" else 1e-5, rtol=1e-3)
    check(lambda m, x: (m.cov(x[0]), m.corrcoef(x[0])), a, atol=1e-3, rtol=1e-3)


def test_cov_weights_and_correction():
    a = sample((3, 5))
    fw = np.array([1, 2, 0, 3, 1])
    aw = np.array([0.5, 1.0, 2.0, 0.1, 1.5], np.float32)
    check(lambda m, x, f: m.cov(x, fweights=f), a, fw)
    check(lambda m, x, w: m.cov(x, aweights=w), a, aw)
    check(lambda m, x, f, w: x.cov(correction=0, fweights=f, aweights=w), a, fw, aw)
    check(lambda m, x, f, w: x.cov(correction=2, fweights=f, aweights=w), a, fw, aw)
    check(lambda m, x, w: m.cov(x.t(), aweights=w[:3]), a, aw)
    check(lambda m, x: m.cov(x, correction=0), a)


@pytest.mark.parametrize("bad", [
    lambda m: m.cov(m.rand(2, 3, 4)),
    lambda m: m.cov(m.ones(3, dtype=m.bool)),
    lambda m: m.cov(m.rand(3, 4), fweights=m.tensor([1, 2, 3, 4.])),
    lambda m: m.cov(m.rand(3, 4), fweights=m.tensor([1, 2, 3])),
    lambda m: m.cov(m.rand(3, 4), fweights=m.tensor([1, 2, 3, -4])),
    lambda m: m.cov(m.rand(3, 4), fweights=m.tensor([[1, 2, 3, 4]])),
    lambda m: m.cov(m.rand(3, 4), aweights=m.tensor([1, 2, 3, 4])),
    lambda m: m.cov(m.rand(3, 4), aweights=m.tensor([0, 0, 0, 0.])),
    lambda m: m.corrcoef(m.rand(2, 3, 4)),
])
def test_cov_errors(bad):
    check(bad)


def test_cov_degrees_of_freedom_warning():
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    import reftrace
    for m in (torch, reftrace):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = m.cov(m.tensor([1.0, 2.0, 4.0]), correction=5)
        assert str(w[0].message).startswith("cov(): degrees of freedom is <= 0. Correction should be "
                                            "strictly less than the number of observations.")
        assert w[0].filename == __file__
        assert r.item() == float("inf")


# -- quantile, nanquantile -----------------------------------------------------------------------

MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dt", FLOATS)
def test_quantile_modes(name, mode, dt):
    a = sample((3, 4, 5), dt)
    nans = nan_sample((3, 4, 5), dt)
    nans[1] = np.nan  # a row of nans only
    for x in (a, nans):
        check(lambda m, x: getattr(m, name)(x, 0.3, interpolation=mode), x)
        check(lambda m, x: getattr(x, name)(0.5, dim=1, keepdim=True, interpolation=mode), x)
        check(lambda m, x: getattr(m, name)(x, m.tensor([0.0, 0.25, 1.0], dtype=x.dtype), dim=-1,
                                            interpolation=mode), x)
        check(lambda m, x: getattr(m, name)(x, m.tensor([0.7, 0.1], dtype=x.dtype), dim=None,
                                            keepdim=True, interpolation=mode), x)
        check(lambda m, x: getattr(m, name)(x.transpose(0, 2), 0.9, dim=0, interpolation=mode), x)


def test_quantile_shapes():
    check(lambda m, x: m.quantile(x, 0.2, dim=0, keepdim=True), np.array(2.0, np.float32))
    check(lambda m, x: m.quantile(x, m.tensor(0.2), dim=0), np.array(2.0, np.float32))
    check(lambda m, x: m.quantile(x, m.tensor([0.2, 0.7]), dim=0, keepdim=True), sample((3, 4)))


@pytest.mark.parametrize("bad", [
    lambda m: m.quantile(m.rand(3, 4), 0.5, interpolation="foo"),
    lambda m: m.nanquantile(m.rand(3, 4), 0.5, interpolation="foo"),
    lambda m: m.quantile(m.rand(3, 4), 1.5),
    lambda m: m.quantile(m.rand(3, 4), -0.25),
    lambda m: m.quantile(m.rand(3, 4), m.tensor([1.5])),
    lambda m: m.quantile(m.rand(3, 4).double(), m.tensor([0.5])),
    lambda m: m.quantile(m.rand(3, 4).long(), 0.5),
    lambda m: m.quantile(m.rand(0), 0.5),
    lambda m: m.quantile(m.rand(3, 4), m.rand(2, 2)),
    lambda m: m.quantile(m.rand(3, 4), 0.5, dim=5),
])
def test_quantile_errors(bad):
    check(bad)


# -- histogram, histogramdd, histc ---------------------------------------------------------------

@pytest.mark.parametrize("dt", FLOATS)
def test_histogram(dt):
    a = sample((4, 6), dt)
    w = sample((4, 6), dt, seed=3, low=0)
    check(lambda m, x: m.histogram(x, 5), a)
    check(lambda m, x: x.histogram(7, range=(-1.0, 2.0), density=True), a)
    check(lambda m, x, w: m.histogram(x, 4, weight=w), a, w)
    check(lambda m, x, w: m.histogram(x.t(), m.tensor([-2.0, -0.5, 0.0, 0.25, 3.0], dtype=x.dtype),
                                      weight=w.t(), density=True), a, w)
    check(lambda m, x: m.histogram(x, m.tensor([0.0, 1.0], dtype=x.dtype)), a)
    check(lambda m, x: m.histogram(x[:0], 3), a)          # empty: edges over [0, 1]
    check(lambda m, x: m.histogram(x[0, :1], 3), a)       # one value: widened by 0.5
    check(lambda m, x: m.histogram(x, 3, range=(1.0, 1.0)), a)
    check(lambda m: m.histogram(m.linspace(0, 1, 101, dtype=getattr(m, dt)), 10))  # values on edges


@pytest.mark.parametrize("dt", FLOATS)
def test_histogramdd(dt):
    a = sample((20, 3), dt)
    w = sample((20,), dt, seed=3, low=0)
    check(lambda m, x: m.histogramdd(x, [2, 3, 4]), a)
    check(lambda m, x: m.histogramdd(x, 3, range=[-1.0, 1.0, -2.0, 2.0, 0.0, 3.0], density=True), a)
    check(lambda m, x, w: m.histogramdd(x, [2, 2, 5], weight=w), a, w)
    check(lambda m, x: m.histogramdd(x.view(4, 5, 3), [m.tensor([-3.0, 0.0, 3.0], dtype=x.dtype)] * 3), a)


@pytest.mark.parametrize("bad", [
    lambda m: m.histogram(m.rand(3, 4).long(), 3),
    lambda m: m.histogram(m.rand(3, 4), 0),
    lambda m: m.histogram(m.rand(3, 4), 3, range=(1.0, 0.0)),
    lambda m: m.histogram(m.rand(3, 4), 3, range=(0.0, float("inf"))),
    lambda m: m.histogram(m.rand(3, 4), 3, range=(0.0, 1.0, 2.0)),
    lambda m: m.histogram(m.rand(3, 4), 3, weight=m.rand(3)),
    lambda m: m.histogram(m.rand(3, 4), m.tensor([0.0, 1.0]).double()),
    lambda m: m.histogram(m.rand(3, 4), 3, weight=m.rand(3, 4).double()),
    lambda m: m.histogram(m.rand(3, 4), m.tensor([[0.0, 1.0]])),
    lambda m: m.histogramdd(m.rand(3), [2]),
    lambda m: m.histogramdd(m.rand(3, 4), [2, 3]),
    lambda m: m.histogramdd(m.rand(3, 4), [m.tensor([0.0, 1.0])]),
    lambda m: m.histogramdd(m.rand(3, 4), [2, 2, 2, 0]),
    lambda m: m.histogramdd(m.rand(3, 4), [2, 2, 2, 2], range=[0.0, 1.0]),
    lambda m: m.histogramdd(m.rand(3, 4), [2, 2, 2, 2], weight=m.rand(4)),
    lambda m: m.histc(m.rand(3).long()),
    lambda m: m.histc(m.rand(3), 0),
    lambda m: m.histc(m.rand(3), 4, 2, 1),
    lambda m: m.histc(m.rand(3), 4, 0, float("inf")),
])
def test_histogram_errors(bad):
    check(bad)


@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
def test_histc(dt):
    a = sample((1000,), dt, low=-10, high=10)
    check(lambda m, x: m.histc(x), a)
    check(lambda m, x: x.histc(37, -3, 7), a)
    check(lambda m, x: m.histc(x[:0], 3), a)
    check(lambda m, x: m.histc(x[:1], 3), a)
    check(lambda m: m.histc(m.tensor([1.0, float("inf")]), 4))
    check(lambda m: m.histc(m.rand(3), 4, float("nan"), 1))


def test_histogramdd_returns_its_bin_tensors():
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    import reftrace
    for m in (torch, reftrace):
        bins = [m.tensor([0.0, 0.5, 1.0])] * 2
        hist, edges = m.histogramdd(m.rand(6, 2), bins)
        assert edges[0] is bins[0] and isinstance(edges, tuple)
        b = m.tensor([0.0, 0.5, 1.0])
        assert m.histogram(m.rand(6), b)[1] is not b
