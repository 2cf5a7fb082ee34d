"""grid_sample, affine_grid and gumbel_softmax against torch: every mode, padding mode and
align_corners setting (2d and 3d), errors, and gumbel_softmax's distribution."""
import warnings

import numpy as np
import pytest

import reftrace
from oracle import check, requires_torch, sample

x4 = sample((2, 3, 5, 6), seed=1)
x5 = sample((1, 2, 3, 4, 5), seed=2)
g4 = sample((2, 4, 7, 2), seed=3, low=-1.3, high=1.3)
g5 = sample((1, 3, 2, 4, 3), seed=4, low=-1.2, high=1.2)
theta2 = sample((2, 2, 3), seed=5, low=-1, high=1)
theta3 = sample((1, 3, 4), seed=6, low=-1, high=1)


@requires_torch
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_2d(mode, padding_mode, align_corners):
    check(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode, padding_mode, align_corners),
          x4, g4, atol=1e-5)


@requires_torch
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d(mode, padding_mode, align_corners):
    check(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode, padding_mode, align_corners),
          x5, g5, atol=1e-5)


@requires_torch
@pytest.mark.parametrize("fn", [
    lambda m, t2, t3: m.nn.functional.affine_grid(t2, [2, 3, 4, 5], align_corners=False),
    lambda m, t2, t3: m.nn.functional.affine_grid(t2, [2, 3, 4, 5], align_corners=True),
    lambda m, t2, t3: m.nn.functional.affine_grid(t3, [1, 2, 3, 4, 2], align_corners=False),
    lambda m, t2, t3: m.nn.functional.affine_grid(t3, [1, 2, 3, 1, 2], align_corners=True),
    lambda m, t2, t3: m.nn.functional.affine_grid(t3, [2, 3, 4, 5], align_corners=False),
    lambda m, t2, t3: m.nn.functional.affine_grid(t2, [2, 3, 4], align_corners=False),
    lambda m, t2, t3: m.nn.functional.affine_grid(t2.long(), [2, 3, 4, 5], align_corners=False),
    lambda m, t2, t3: m.nn.functional.affine_grid(t2, [2, 3, 0, 5], align_corners=False),
    lambda m, t2, t3: m.nn.functional.grid_sample(t2[None], t2[..., :2][None], "linear"),
    lambda m, t2, t3: m.nn.functional.grid_sample(t2[None], t2[..., :2][None], "nearest", "edge"),
], ids=lambda v: None)
def test_affine_grid_and_errors(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(fn, theta2, theta3, atol=1e-6)


@requires_torch
def test_affine_grid_then_grid_sample():
    def fn(m, x, t):
        grid = m.nn.functional.affine_grid(t, list(x.shape), align_corners=False)
        return m.nn.functional.grid_sample(x, grid, align_corners=False)
    check(fn, x4, theta2, atol=1e-5)


def test_gumbel_softmax():
    logits = reftrace.from_numpy(np.log(np.array([[0.1, 0.2, 0.7]] * 20000, "float32")))
    soft = reftrace.nn.functional.gumbel_softmax(logits, tau=0.5).numpy()
    np.testing.assert_allclose(soft.sum(-1), 1, rtol=1e-5)
    hard = reftrace.nn.functional.gumbel_softmax(logits, hard=True).numpy()
    assert set(np.unique(hard)) == {0.0, 1.0} and np.all(hard.sum(-1) == 1)
    np.testing.assert_allclose(hard.mean(0), [0.1, 0.2, 0.7], atol=0.015)
