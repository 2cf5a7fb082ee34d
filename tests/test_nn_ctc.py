"""CTC loss (aten::ctc_loss; LossCTC.cpp's alpha and beta recursions) against torch: values and
gradients for padded and concatenated targets, every reduction, zero_infinity, int-list and
Tensor lengths, unbatched input, float64; errors; the traced graph of CTCLoss."""
import warnings

import numpy as np
import pytest

import reftrace
from nn_support import compare_trace
from oracle import assert_same, check, requires_torch, sample, torch

pytestmark = requires_torch

T, N, C = 7, 3, 6
log_probs = np.log(np.exp(sample((T, N, C), seed=11)) /
                   np.exp(sample((T, N, C), seed=11)).sum(-1, keepdims=True)).astype("float32")
padded = np.array([[1, 2, 2, 5], [3, 1, 0, 0], [4, 4, 4, 1]])  # repeated labels need a blank
# lengths: a full item, a short one, one that cannot fit its target (inf unless zeroed), empty ones
LENGTHS = [([7, 5, 7], [4, 2, 3]), ([7, 3, 2], [4, 2, 3]), ([0, 7, 4], [0, 0, 2]),
           ([1, 2, 7], [3, 1, 4])]


def _concat(target_lengths):
    return np.concatenate([padded[b, :n] for b, n in enumerate(target_lengths)])


def _run(lib, lp, targets, il, tl, as_tensor, **kw):
    lp = lib.from_numpy(lp.copy()).requires_grad_()
    targets = lib.from_numpy(targets.copy())
    if as_tensor:
        il, tl = lib.tensor(il), lib.tensor(tl)
    loss = lib.nn.functional.ctc_loss(lp, targets, il, tl, **kw)
    (grad,) = lib.autograd.grad(loss.sum(), lp)
    return loss, grad


@pytest.mark.parametrize("lengths", LENGTHS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("form", ["padded", "concatenated", "tensor-lengths"])
def test_values_and_gradients(lengths, reduction, zero_infinity, form):
    il, tl = lengths
    targets = _concat(tl) if form == "concatenated" else padded
    kw = dict(reduction=reduction, zero_infinity=zero_infinity, blank=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _run(reftrace, log_probs, targets, il, tl, form == "tensor-lengths", **kw)
        expected = _run(torch, log_probs, targets, il, tl, form == "tensor-lengths", **kw)
    assert type(got[0].grad_fn).__name__ == type(expected[0].grad_fn).__name__
    assert_same(got[0], expected[0], atol=1e-5, rtol=1e-5, path="loss")
    assert_same(got[1], expected[1], atol=1e-5, rtol=1e-5, path="grad")


def test_float64_other_blank_and_unbatched():
    lp64 = log_probs.astype("float64")
    for lp, targets, il, tl, blank in ((lp64, padded, [7, 6, 5], [4, 2, 3], 0),
                                       (log_probs, padded, [7, 6, 5], [4, 2, 3], 3),
                                       (log_probs[:, 0], padded[0], [7], [4], 0)):
        for tensor_lengths in (False, True):
            targets = np.where(targets == blank, (blank + 1) % C, targets) if blank else targets
            got = _run(reftrace, lp, targets, il, tl, tensor_lengths, blank=blank,
                       reduction="none")
            expected = _run(torch, lp, targets, il, tl, tensor_lengths, blank=blank,
                            reduction="none")
            assert_same(got[0], expected[0], atol=1e-6, rtol=1e-6)
            assert_same(got[1], expected[1], atol=1e-6, rtol=1e-6)


def test_int32_targets_and_lengths():
    check(lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, m.tensor([7, 5, 7], dtype=m.int32),
                                                    m.tensor([4, 2, 3], dtype=m.int32)),
          log_probs, padded.astype("int32"))


@pytest.mark.parametrize("case", [
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, [7, 8, 7], [4, 2, 3]),  # input too long
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, [7, 5, 7], [5, 2, 3]),  # target too long
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, [7, 5, 7], [-1, 2, 3]),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, [7, -5, 7], [1, 2, 3]),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, [7, 5], [4, 2, 3]),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, [7, 5, 7], [4, 2]),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, [7, 5, 7], [4, 2, 3], blank=6),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, [7, 5, 7], [4, 2, 3], blank=-1),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t.flatten()[:8], [7, 5, 7], [4, 2, 3]),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t[:, None], [7, 5, 7], [4, 2, 3]),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, m.tensor([7., 5., 7.]), m.tensor([4, 2, 3])),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp.half(), t, [7, 5, 7], [4, 2, 3]),
    lambda m, lp, t: m.nn.functional.ctc_loss(lp, t, [7, 5, 7], [4, 2, 3], reduction="bad"),
], ids=["input-length", "target-length", "neg-target", "neg-input", "input-batch",
        "target-batch", "blank-high", "blank-neg", "concat-size", "targets-3d", "float-lengths",
        "half", "reduction"])
def test_errors(case):
    check(case, log_probs, padded)


def test_ctc_loss_module_and_trace():
    make = lambda nn: nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    rt, th = make(reftrace.nn), make(torch.nn)
    assert repr(rt) == repr(th) and list(rt.state_dict()) == list(th.state_dict())
    il, tl = np.array([7, 5, 7]), np.array([4, 2, 3])
    compare_trace(make, (log_probs, padded, il, tl),
                  other_inputs=[(log_probs[:, :2], padded[:2], il[:2], tl[:2])])
    compare_trace(lambda nn: nn.CTCLoss(), (log_probs, padded, il, tl))


def test_out_of_range_label_is_refused():
    # torch's CPU kernel reads outside log_probs for such a label (an undefined result);
    # reftrace refuses it with a message naming the label
    lp = reftrace.from_numpy(log_probs.copy())
    with pytest.raises(RuntimeError, match="target label 6 is out of range"):
        reftrace.nn.functional.ctc_loss(lp, reftrace.from_numpy(padded + 1), [7, 5, 7], [4, 2, 3])
