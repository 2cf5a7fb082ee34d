"""Dropout variants, distances, Unflatten against torch: eval-mode identity and traced graphs
(the random masks themselves differ between libraries: training mode is checked for its
statistics and its graph), values, errors."""
import warnings

import numpy as np
import pytest

import reftrace
from nn_support import compare_forward, compare_trace, trace_texts, twin
from oracle import check, requires_torch, sample, torch

x3 = sample((4, 3, 6), seed=1)
x4 = sample((2, 3, 5, 4), seed=2)
x5 = sample((2, 3, 3, 4, 2), seed=3)

DROPOUTS = {
    "dropout1d": (lambda nn: nn.Dropout1d(0.3), x3),
    "dropout2d": (lambda nn: nn.Dropout2d(0.3), x4),
    "dropout3d": (lambda nn: nn.Dropout3d(0.3, inplace=False), x5),
    "alpha": (lambda nn: nn.AlphaDropout(0.2), x3),
    "feature-alpha": (lambda nn: nn.FeatureAlphaDropout(0.2), x5),
}


@requires_torch
@pytest.mark.parametrize("name", sorted(DROPOUTS))
def test_dropout_eval_and_graphs(name):
    make, x = DROPOUTS[name]
    compare_forward(make, (x,))          # eval: the identity
    compare_trace(make, (x,))            # eval graph
    rt, th = twin(make)                  # training graph: same nodes (values are random)
    rt.train()
    th.train()
    got, _ = trace_texts(reftrace, rt, (x,))
    expected, _ = trace_texts(torch, th, (x,))
    for key in ("graph", "code"):
        assert got[key] == expected[key]


def test_alpha_dropout_keeps_mean_and_variance():
    t = reftrace.randn(200000)
    out = reftrace.nn.functional.alpha_dropout(t, 0.3, training=True).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    # dropped elements all take one value: -alpha * a + alpha * a * p (ATen's b for noise 0)
    alpha, p = 1.7580993408473766, 0.3
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    dropped = np.isclose(out, -alpha * a + alpha * a * p, atol=1e-6)
    assert 0.28 < dropped.mean() < 0.32


def test_feature_dropout_drops_whole_channels():
    out = reftrace.nn.functional.dropout1d(reftrace.ones(50, 40, 7), 0.5).numpy()
    per_channel = out.reshape(50, 40, 7)
    assert np.all((per_channel == per_channel[..., :1]))
    assert set(np.unique(out)) == {0.0, 2.0}


@requires_torch
@pytest.mark.parametrize("fn", [
    lambda m, x: m.nn.functional.dropout1d(x[0, 0, 0]),
    lambda m, x: m.nn.functional.dropout1d(x, 1.5),
    lambda m, x: m.nn.functional.dropout1d(x[0], 0.0),
    lambda m, x: m.nn.functional.alpha_dropout(x, 1.0, training=True),
    lambda m, x: m.nn.functional.feature_alpha_dropout(x, 0.5, training=False),
    lambda m, x: m.nn.functional.dropout3d(x[0], 0.0),
], ids=lambda v: None)
def test_dropout_cases(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(fn, x4)


@requires_torch
@pytest.mark.parametrize("fn, args", [
    (lambda m, a, b: m.nn.CosineSimilarity()(a, b), (x4, x4[::-1].copy())),
    (lambda m, a, b: m.nn.CosineSimilarity(dim=-1, eps=0.5)(a, b[:1]), (x4, x4[::-1].copy())),
    (lambda m, a, b: m.nn.functional.cosine_similarity(a, b * 0, 0), (x3, x3)),
    (lambda m, a, b: m.nn.functional.cosine_similarity(a.long(), b.long(), 1), (x3, x3)),
    (lambda m, a, b: m.nn.PairwiseDistance()(a, b), (x3, x3[::-1].copy())),
    (lambda m, a, b: m.nn.PairwiseDistance(p=1.5, keepdim=True)(a, b), (x3, x3[::-1].copy())),
    (lambda m, a, b: m.nn.PairwiseDistance(p=float("inf"), eps=0.0)(a, b), (x3, x3[::-1].copy())),
    (lambda m, a, b: m.nn.functional.pairwise_distance(a[0, 0], b[0, 0], 0), (x3, x3[::-1].copy())),
    (lambda m, a, b: m.nn.functional.pdist(a[0]), (x3, x3)),
    (lambda m, a, b: m.nn.functional.pdist(a[0].double(), 3), (x3, x3)),
    (lambda m, a, b: m.nn.functional.pdist(a), (x3, x3)),
    (lambda m, a, b: m.cdist(a, b[:2]), (x3, x3)),
    (lambda m, a, b: m.cdist(a[0], b[1], p=1), (x3, x3)),
    (lambda m, a, b: m.nn.Unflatten(1, (3, 1))(a), (x3, x3)),
    (lambda m, a, b: m.nn.Unflatten(-1, [2, -1])(a), (x3, x3)),
    (lambda m, a, b: m.nn.Unflatten(-1, (2, 2.0)), (x3, x3)),
    (lambda m, a, b: m.nn.Unflatten(-1, 5), (x3, x3)),
], ids=lambda v: None)
def test_distance_and_unflatten(fn, args):
    check(fn, *args, atol=1e-5)


@requires_torch
@pytest.mark.parametrize("make, inputs", [
    (lambda nn: nn.CosineSimilarity(), (x4, x4[::-1].copy())),
    (lambda nn: nn.PairwiseDistance(keepdim=True), (x3, x3[::-1].copy())),
    (lambda nn: nn.Unflatten(2, (2, 3)), (x3,)),
], ids=["cosine", "pairwise", "unflatten"])
def test_traces(make, inputs):
    compare_forward(make, inputs)
    compare_trace(make, inputs)
