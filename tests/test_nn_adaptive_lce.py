"""AdaptiveLogSoftmaxWithLoss and LinearCrossEntropyLoss (with F.linear_cross_entropy and
LinearCrossEntropyOptions) against torch: construction, forward, log_prob/predict, errors and
traced graphs."""
import dataclasses
import warnings

import numpy as np
import pytest

import reftrace
from nn_support import compare_forward, compare_trace, twin
from oracle import assert_same, check, requires_torch, sample, torch

pytestmark = requires_torch

x = sample((6, 8), seed=1)
classes = np.array([0, 3, 7, 9, 12, 2])


@pytest.mark.parametrize("make", [
    lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 14, [4, 10], div_value=2.0),
    lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 14, (5,), head_bias=True),
], ids=["two-clusters", "head-bias"])
def test_adaptive_forward_log_prob_predict_trace(make):
    rt, th = compare_forward(make, (x, classes))
    compare_forward(make, (x[0], np.array(classes[0])))  # unbatched
    assert_same(rt.log_prob(reftrace.from_numpy(x)), th.log_prob(torch.from_numpy(x)))
    for rows in (x, x[:1], x * 0):
        assert_same(rt.predict(reftrace.from_numpy(rows)), th.predict(torch.from_numpy(rows)))
    compare_trace(make, (x, classes))


@pytest.mark.parametrize("args", [(8, 14, []), (8, 14, [4, 4]), (8, 14, [14]), (8, 14, [0, 3]),
                                  (8, 14, [5, 2])])
def test_adaptive_bad_cutoffs(args):
    check(lambda m: m.nn.AdaptiveLogSoftmaxWithLoss(*args))


@pytest.mark.parametrize("inputs", [(x, classes[:5]), (x[0], classes), (x, classes[:, None]),
                                    (x, np.array([0, 3, 7, 9, 14, 2]))])
def test_adaptive_bad_inputs(inputs):
    rt, th = twin(lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 14, [4, 10]))
    check(lambda m, a, b: (rt if m is reftrace else th)(a, b), *inputs)


LCE = {
    "plain": (lambda nn: nn.LinearCrossEntropyLoss(8, 5), classes % 5),
    "k-dim-bias": (lambda nn: nn.LinearCrossEntropyLoss(8, 5, out_features=(3,), bias=True),
                   np.array([[0, 3, 4], [1, 2, 0], [4, 4, 1], [0, 0, 0], [2, 3, 1], [1, 1, 1]])),
    "smoothing-sum": (lambda nn: nn.LinearCrossEntropyLoss(8, 5, label_smoothing=0.1,
                                                           reduction="sum"), classes % 5),
    "ignore-none": (lambda nn: nn.LinearCrossEntropyLoss(8, 5, ignore_index=2,
                                                         reduction="none"), classes % 5),
    "probabilities": (lambda nn: nn.LinearCrossEntropyLoss(8, 5), np.abs(sample((6, 5), seed=3))),
}


@pytest.mark.parametrize("name", list(LCE))
def test_linear_cross_entropy_loss(name):
    make, target = LCE[name]
    compare_forward(make, (x, target))
    compare_trace(make, (x, target))


def test_linear_cross_entropy_loss_weight_and_errors():
    w = np.abs(sample((5,), seed=4)) + 0.1
    lib = {id(torch.nn): torch, id(reftrace.nn): reftrace}
    compare_forward(lambda nn: nn.LinearCrossEntropyLoss(
        8, 5, weight=lib[id(nn)].from_numpy(w.copy())), (x, classes % 5))
    check(lambda m, w: m.nn.LinearCrossEntropyLoss(8, 5, weight=w[:3]), w)
    check(lambda m: m.nn.LinearCrossEntropyLoss(8, 5, label_smoothing=1.5))


@pytest.mark.parametrize("case", [
    lambda F, a, w, t: F.linear_cross_entropy(a[None], w, t),
    lambda F, a, w, t: F.linear_cross_entropy(a, w[0], t),
    lambda F, a, w, t: F.linear_cross_entropy(a[:, :3], w, t),
    lambda F, a, w, t: F.linear_cross_entropy(a, w, t, linear_bias=w[:, 0, :2].contiguous()),
    lambda F, a, w, t: F.linear_cross_entropy(a[0], w, t[0]),
    lambda F, a, w, t: F.linear_cross_entropy(a, w[:, 0], t[:, 0]),  # unbatched-free 2-d weight
], ids=["input-3d", "weight-1d", "in-features", "bias-shape", "k-dim-unbatched", "plain"])
def test_linear_cross_entropy_functional(case):
    w = sample((5, 3, 8), seed=5)
    t = LCE["k-dim-bias"][1]
    check(lambda m, a, w, t: case(m.nn.functional, a, w, t), x, w, t)


def test_linear_cross_entropy_probabilities_with_ignore_index():
    check(lambda m, a, w, t: m.nn.functional.linear_cross_entropy(a, w, t, ignore_index=1),
          x, sample((5, 8), seed=5), np.abs(sample((6, 5), seed=3)))


def test_options_fields_validation_and_adjust():
    O = {"rt": reftrace.nn.LinearCrossEntropyOptions, "th": torch.nn.LinearCrossEntropyOptions}
    assert [f.name for f in dataclasses.fields(O["rt"])] == \
        [f.name for f in dataclasses.fields(O["th"])]
    assert repr(O["rt"]()) == repr(O["th"]())
    for kw in ({"acc_policy": "x"}, {"chunking_method": "aspect"}, {"batch_chunk_size": 0},
               {"chunking_method": "aspect_ratio:0"}):
        check(lambda m: m.nn.LinearCrossEntropyOptions(**kw))
    for kw, shape in (({}, (64, 8, 100)), ({"batch_chunk_size": 5}, (16, 8, 4)),
                      ({"chunking_method": "aspect_ratio:4"}, (64, 8, 100)),
                      ({"chunking_method": None}, (3, 2, 1))):
        got = O["rt"](**kw)._adjust(*shape, reftrace.float32, reftrace.device("cpu"))
        expected = O["th"](**kw)._adjust(*shape, torch.float32, torch.device("cpu"))
        assert repr(got) == repr(expected)
    check(lambda m: m.nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio")
          ._adjust(64, 8, 100, m.float32, m.device("cpu")))


def test_options_ignored_while_tracing_warns_as_torch():
    def make(nn):
        return nn.LinearCrossEntropyLoss(8, 5, options=nn.LinearCrossEntropyOptions())
    rt, th = twin(make)
    assert repr(rt) == repr(th)
    compare_trace(make, (x, classes % 5))
    msgs = {}
    for lib, m in (("rt", rt), ("th", th)):
        lib_ = reftrace if lib == "rt" else torch
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib_.jit.trace(m, (lib_.from_numpy(x.copy()), lib_.tensor(classes % 5)),
                           check_trace=False)
        msgs[lib] = [str(i.message) for i in w if "linear_cross_entropy" in str(i.message)]
    assert msgs["rt"] == msgs["th"] and msgs["rt"]


@pytest.mark.parametrize("shape, tshape", [((4, 5), (4,)), ((3, 5, 4), (3, 4)),
                                           ((2, 5, 2, 3, 2), (2, 2, 3, 2)), ((5,), ())])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_gradients(shape, tshape, reduction, label_smoothing, weighted):
    """linear_cross_entropy's loss: cross_entropy's autograd graph (nll_loss_nd on 3-d and 5-d
    inputs, label smoothing's composite, ignored targets) equals torch's."""
    xs = sample(shape, dtype="float64", seed=7)
    t = (np.abs(sample(tshape, seed=8)) * 2).astype("int64") % 5
    w = np.abs(sample((5,), dtype="float64", seed=9)) + 0.1

    def run(lib):
        a = lib.from_numpy(xs.copy()).requires_grad_()
        loss = lib.nn.functional.cross_entropy(
            a, lib.from_numpy(np.array(t)), weight=lib.from_numpy(w.copy()) if weighted else None,
            reduction=reduction, label_smoothing=label_smoothing, ignore_index=2)
        return loss, lib.autograd.grad(loss.sum(), a)[0], type(loss.grad_fn).__name__

    got, expected = run(reftrace), run(torch)
    assert got[2] == expected[2]
    assert_same(got[0], expected[0], atol=1e-10, rtol=1e-10)
    assert_same(got[1], expected[1], atol=1e-10, rtol=1e-10, path="grad")
