"""Loss layers and functionals against torch: values in every reduction, weights, legacy flags,
errors, and traced graphs."""
import warnings

import numpy as np
import pytest

from nn_support import compare_trace
from oracle import check, requires_torch, sample

pytestmark = requires_torch

x = sample((4, 5), seed=1)
y = sample((4, 5), seed=2)
prob = 1 / (1 + np.exp(-x))
target01 = (sample((4, 5), seed=3) > 0).astype("float32")
sign = np.where(target01 > 0, 1.0, -1.0).astype("float32")
s = sample((4,), seed=4)
ssign = np.sign(sample((4,), seed=5)).astype("float32")
cls = np.array([1, 0, 4, 2])
w = np.abs(sample((5,), seed=6)) + 0.1
ml = np.array([[3, 0, -1, 1, 2], [1, 2, 4, -1, 0], [0, -1, 2, 3, 4], [4, 3, 2, 1, 0]])

CASES = {
    "bce": (lambda m, a, b: m.nn.BCELoss(**kw(m))(a, b), (prob, target01)),
    "bce-weight": (lambda m, a, b, w: m.nn.BCELoss(weight=w, **kw(m))(a, b), (prob, target01, w)),
    "bce-logits": (lambda m, a, b: m.nn.BCEWithLogitsLoss(**kw(m))(a, b), (x, target01)),
    "bce-logits-pos": (lambda m, a, b, w: m.nn.BCEWithLogitsLoss(pos_weight=w, weight=w[0],
                                                                 **kw(m))(a, b), (x, target01, w)),
    "l1": (lambda m, a, b: m.nn.L1Loss(**kw(m))(a, b), (x, y)),
    "smoothl1": (lambda m, a, b: m.nn.SmoothL1Loss(beta=0.5, **kw(m))(a, b), (x, y)),
    "smoothl1-beta0": (lambda m, a, b: m.nn.SmoothL1Loss(beta=0.0, **kw(m))(a, b), (x, y)),
    "huber": (lambda m, a, b: m.nn.HuberLoss(delta=0.7, **kw(m))(a, b), (x, y)),
    "kldiv": (lambda m, a, b: m.nn.KLDivLoss(**kw(m))(a.log_softmax(1), b.softmax(1)), (x, y)),
    "kldiv-log": (lambda m, a, b: m.nn.KLDivLoss(log_target=True, **kw(m))(a, b), (x, y)),
    "mse": (lambda m, a, b: m.nn.MSELoss(**kw(m))(a, b), (x, y)),
    "poisson": (lambda m, a, b: m.nn.PoissonNLLLoss(**kw(m))(a, b.abs()), (x, y)),
    "poisson-full": (lambda m, a, b: m.nn.PoissonNLLLoss(log_input=False, full=True, **kw(m))(
        a.abs(), b.abs() * 3), (x, y)),
    "gaussian": (lambda m, a, b: m.nn.GaussianNLLLoss(**kw(m))(a, b, b.abs()), (x, y)),
    "gaussian-full": (lambda m, a, b: m.nn.GaussianNLLLoss(full=True, **kw(m))(a, b, b[:, 0].abs()),
                      (x, y)),
    "margin-ranking": (lambda m, a, b, c: m.nn.MarginRankingLoss(0.3, **kw(m))(a, b, c),
                       (s, s[::-1].copy(), ssign)),
    "hinge": (lambda m, a, b: m.nn.HingeEmbeddingLoss(0.5, **kw(m))(a, b), (x, sign)),
    "soft-margin": (lambda m, a, b: m.nn.SoftMarginLoss(**kw(m))(a, b), (x, sign)),
    "multilabel-soft": (lambda m, a, b, w: m.nn.MultiLabelSoftMarginLoss(w, **kw(m))(a, b),
                        (x, target01, w)),
    "cosine-embedding": (lambda m, a, b, c: m.nn.CosineEmbeddingLoss(0.1, **kw(m))(a, b, c),
                         (x, y, ssign)),
    "triplet": (lambda m, a, b, c: m.nn.TripletMarginLoss(**kw(m))(a, b, c), (x, y, x[::-1].copy())),
    "triplet-swap": (lambda m, a, b, c: m.nn.TripletMarginLoss(0.5, p=1, swap=True, **kw(m))(a, b, c),
                     (x, y, x[::-1].copy())),
    "triplet-distance": (lambda m, a, b, c: m.nn.TripletMarginWithDistanceLoss(swap=True, **kw(m))(
        a, b, c), (x, y, x[::-1].copy())),
    "multi-margin": (lambda m, a, t: m.nn.MultiMarginLoss(**kw(m))(a, t), (x, cls)),
    "multi-margin-p2": (lambda m, a, t, w: m.nn.MultiMarginLoss(p=2, margin=0.5, weight=w,
                                                                **kw(m))(a, t), (x, cls, w)),
    "multilabel-margin": (lambda m, a, t: m.nn.MultiLabelMarginLoss(**kw(m))(a, t), (x, ml)),
    "nll": (lambda m, a, t: m.nn.NLLLoss(**kw(m))(a.log_softmax(1), t), (x, cls)),
    "ce-smooth": (lambda m, a, t, w: m.nn.CrossEntropyLoss(w, label_smoothing=0.2, ignore_index=4,
                                                           **kw(m))(a, t), (x, cls, w)),
    "ce-probs": (lambda m, a, b: m.nn.CrossEntropyLoss(label_smoothing=0.1, **kw(m))(a, b.softmax(1)),
                 (x, y)),
}
REDUCTION = {}


def kw(m):
    return REDUCTION


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_loss(name, reduction):
    fn, args = CASES[name]
    REDUCTION.clear()
    REDUCTION["reduction"] = reduction
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(fn, *args, atol=1e-5, rtol=1e-5)
    finally:
        REDUCTION.clear()


@pytest.mark.parametrize("fn, args", [
    (lambda m, a, b: m.nn.functional.binary_cross_entropy(a, b), (x, target01)),
    (lambda m, a, b: m.nn.functional.binary_cross_entropy(a[0], b), (prob, target01)),
    (lambda m, a, b: m.nn.functional.binary_cross_entropy_with_logits(a[0], b), (x, target01)),
    (lambda m, a, b: m.nn.functional.kl_div(a, b, reduction="batchmean"), (x, y)),
    (lambda m, a, b: m.nn.functional.l1_loss(a, b[0]), (x, y)),
    (lambda m, a, b: m.nn.functional.l1_loss(a, b, weight=b.abs()), (x, y)),
    (lambda m, a, b: m.nn.functional.huber_loss(a, b, weight=b.abs(), reduction="mean"), (x, y)),
    (lambda m, a, b: m.nn.functional.smooth_l1_loss(a, b, beta=-1.0), (x, y)),
    (lambda m, a, b: m.nn.functional.huber_loss(a, b, delta=0.0), (x, y)),
    (lambda m, a, b: m.nn.functional.margin_ranking_loss(a, b, b[0]), (x, y)),
    (lambda m, a, b: m.nn.functional.triplet_margin_loss(a, b, a, margin=0.0), (x, y)),
    (lambda m, a, b: m.nn.functional.multi_margin_loss(a, b.long()[:, 0], p=3), (x, y)),
    (lambda m, a, b: m.nn.functional.poisson_nll_loss(a, b, reduction="avg"), (x, y)),
    (lambda m, a, b: m.nn.functional.gaussian_nll_loss(a, b, -1.0), (x, y)),
    (lambda m, a, b: m.nn.functional.gaussian_nll_loss(a, b, b[:2].abs()), (x, y)),
    (lambda m, a, b: m.nn.functional.l1_loss(a, b, size_average=False), (x, y)),
    (lambda m, a, b: m.nn.functional.soft_margin_loss(a, b, reduce=False), (x, y)),
    (lambda m, a, b: m.nn.L1Loss(size_average=False)(a, b), (x, y)),
], ids=lambda v: None)
def test_loss_cases(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(fn, *args, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("make, inputs", [
    (lambda nn: nn.BCEWithLogitsLoss(pos_weight=None), (x, target01)),
    (lambda nn: nn.SmoothL1Loss(beta=0.5), (x, y)),
    (lambda nn: nn.HuberLoss(reduction="sum"), (x, y)),
    (lambda nn: nn.L1Loss(), (x, y)),
    (lambda nn: nn.KLDivLoss(reduction="batchmean", log_target=True), (x, y)),
    (lambda nn: nn.MarginRankingLoss(0.2), (s, s[::-1].copy(), ssign)),
    (lambda nn: nn.TripletMarginLoss(), (x, y, x[::-1].copy())),
    (lambda nn: nn.MultiLabelSoftMarginLoss(), (x, target01)),
    (lambda nn: nn.CosineEmbeddingLoss(), (x, y, ssign)),
    (lambda nn: nn.SoftMarginLoss(reduction="none"), (x, sign)),
], ids=lambda v: None)
def test_loss_traces(make, inputs):
    compare_trace(make, inputs)
