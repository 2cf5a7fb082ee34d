"""torch.masked against torch 2.13 (beyond the first samples the OpInfo test compares): masks
that broadcast, reductions over several dims, dtype rules, torch's error messages, traced graphs
and gradients (the masked ops are compositions of ATen ops, so their gradients are those ops')."""
import numpy as np
import pytest

import reftrace
from oracle import check, sample

try:  # torch is the oracle: without it these tests skip
    import torch
except ImportError:  # pragma: no cover - torch-free machines
    pytest.skip("torch 2.13 (the oracle) is not installed", allow_module_level=True)

X = sample((3, 4, 5))
MASK = sample((3, 4, 5), "bool", seed=1)
ROW_MASK = sample((4, 1), "bool", seed=2)    # broadcasts over dims 0 and 2
FULL_ROW = np.array([[True, False, True, True, False], [False] * 5, [True] * 5])  # a row all out


REDUCTIONS = ["sum", "prod", "amax", "amin", "mean", "norm", "var", "std", "logsumexp"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, True), ((0, 2), False), ((-1, 0), True)])
@pytest.mark.parametrize("mask", [MASK, ROW_MASK, None], ids=["mask", "broadcast", "none"])
def test_reductions(name, dim, keepdim, mask):
    if name == "norm":
        check(lambda m, x, k: m.masked.norm(x, 2.0, dim, keepdim=keepdim, mask=k), X, mask)
    else:
        check(lambda m, x, k: getattr(m.masked, name)(x, dim, keepdim=keepdim, mask=k), X, mask)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "cumsum", "cumprod",
                                  "argmax", "argmin", "median"])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("mask", [MASK, ROW_MASK, None], ids=["mask", "broadcast", "none"])
def test_dim_ops(name, dim, mask):
    check(lambda m, x, k: getattr(m.masked, name)(x, dim, mask=k), X, mask)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "int64", "float64"])
@pytest.mark.parametrize("name", ["sum", "prod", "amax", "amin", "argmax", "cumsum", "median",
                                  "var", "std", "logsumexp"])
def test_dtypes(name, dtype):
    # integral sums and products in int64, median and var of integers in float, identities of
    # each dtype (iinfo's min and max for amax/amin, nan for median)
    mask = FULL_ROW[:, None, :] if name != "median" else MASK
    x = sample((3, 4, 5), dtype, low=0, high=2 if name in ("prod", "logsumexp") else 5)
    dim = 0 if name in ("argmax", "cumsum", "median") else 1
    check(lambda m, x, k: getattr(m.masked, name)(x, dim, mask=k), x, mask)


@pytest.mark.parametrize("kwargs", [{"dtype": "float64"}, {"dtype": "int32"}, {"dtype": "complex64"}])
@pytest.mark.parametrize("name", ["sum", "mean", "amax", "cumprod", "softmax", "norm", "var"])
def test_dtype_argument(name, kwargs):
    if name == "var" and kwargs["dtype"] == "complex64":
        pytest.skip("x.conj() of a complex tensor: reftrace has no conjugate views yet")
    def call(m, x, k):
        dtype = getattr(m, kwargs["dtype"])
        if name == "norm":
            return m.masked.norm(x, 3, 1, dtype=dtype, mask=k)
        return getattr(m.masked, name)(x, 1, dtype=dtype, mask=k)
    check(call, X, MASK)


@pytest.mark.parametrize("kwargs", [{"unbiased": False}, {"unbiased": True}, {"correction": 0},
                                    {"correction": 2}, {"correction": 1.5, "keepdim": True}])
@pytest.mark.parametrize("name", ["var", "std"])
def test_std_var_corrections(name, kwargs):
    check(lambda m, x, k: getattr(m.masked, name)(x, 1, mask=k, **kwargs), X, ROW_MASK)


@pytest.mark.parametrize("ord", [2.0, 1, 0, float("inf"), float("-inf"), 3.5])
def test_norm_and_normalize_orders(ord):
    check(lambda m, x, k: m.masked.norm(x, ord, (0, 1), mask=k), X, MASK)
    check(lambda m, x, k: m.masked.normalize(x, ord, 2, mask=k), X, MASK)
    check(lambda m, x, k: m.masked.normalize(x, ord, 0, eps=10.0, mask=k), X, ROW_MASK)


def test_logaddexp():
    y = sample((3, 4, 5), seed=5)
    check(lambda m, x, y, a, b: m.masked.logaddexp(x, y, input_mask=a, other_mask=b),
          X, y, MASK, ROW_MASK)
    check(lambda m, x, y, a: m.masked.logaddexp(x, y, input_mask=a, dtype=m.float64), X, y, MASK)
    xi, yi = sample((4,), "int64"), sample((4,), "int64", seed=3)
    check(lambda m, x, y, a: m.masked.logaddexp(x, y, other_mask=a), xi, yi, np.array([1, 0, 1, 0]) > 0)


def test_mask_of_another_dtype_is_converted():
    mask = sample((3, 4, 5), "int64", low=0, high=1, seed=4)
    check(lambda m, x, k: m.masked.sum(x, 1, mask=k), X, mask)
    check(lambda m, x, k: m.masked.mean(x, 1, mask=k), X, mask.astype("float32"))


def test_helpers():
    check(lambda m, x, k: m.masked._input_mask(x, mask=k), X, ROW_MASK)
    check(lambda m, x, k: m.masked._output_mask(m.masked.sum, x, (0, 2), mask=k, keepdim=True), X, MASK)
    check(lambda m, x, k: m.masked._output_mask(m.masked.norm, x, 2.0, 1, mask=k), X, MASK)
    check(lambda m, x, k: m.masked._output_mask(m.masked.softmax, x, 1, mask=k), X, ROW_MASK)
    check(lambda m, x: m.masked._canonical_dim((-1, 0), x.ndim), X)
    check(lambda m, x: m.masked._canonical_dim((), x.ndim), X)
    for name in ("sum", "prod", "amax", "amin", "logsumexp", "median", "norm", "mean", "var"):
        for dtype in ("float32", "int16", "uint8", "complex64"):
            if name in ("amax", "amin") and dtype == "complex64":
                continue
            check(lambda m, x: m.masked._reduction_identity(name, x), sample((2,), dtype))
    check(lambda m, x: m.masked._reduction_identity("norm", x, float("-inf")), X)


def not_a_masked_op(x):
    return x


@pytest.mark.parametrize("call", [
    lambda m, x, k: m.masked.sum(x, 3, mask=k),
    lambda m, x, k: m.masked.sum(x, (0, -3), mask=k),
    lambda m, x, k: m.masked.softmax(x, -4, mask=k),
    lambda m, x, k: m.masked.sum(x, 0, mask=k[None]),
    lambda m, x, k: m.masked.sum(x, 0, mask=k[:2]),
    lambda m, x, k: m.masked.mean(x.long(), 0, mask=k),
    lambda m, x, k: m.masked.mean(x, 0, mask=k, dtype=m.int32),
    lambda m, x, k: m.masked.median(x.int(), 1, mask=k.any(1, keepdim=True) & k),
    lambda m, x, k: m.masked.var(x, 0, True, correction=1, mask=k),
    lambda m, x, k: m.masked.norm(x.long(), float("-inf"), mask=k),
    lambda m, x, k: m.masked._output_mask(not_a_masked_op, x, mask=k),
    lambda m, x, k: m.masked._output_mask("sum", x, mask=k),
    lambda m, x, k: m.masked._input_mask(x),
    lambda m, x, k: m.masked._reduction_identity("cummax", x),
    lambda m, x, k: m.masked.amax(x.bool(), 0, mask=k),
], ids=["dim", "repeated-dim", "softmax-dim", "mask-ndim", "mask-shape", "mean-int", "mean-dtype",
        "median-fully-masked", "unbiased-and-correction", "norm-ninf-int", "not-masked-op",
        "not-callable", "no-mask", "no-identity", "amax-bool"])
def test_errors_match_torch(call):
    check(call, X, MASK)


def test_median_fully_masked_row_of_integers():
    x = sample((3, 5), "int32")
    check(lambda m, x, k: m.masked.median(x, 1, mask=k), x, FULL_ROW)
    check(lambda m, x, k: m.masked.median(x.float(), 1, mask=k), x, FULL_ROW)


def test_missing_names_say_so():
    with pytest.raises(AttributeError, match="reftrace does not implement torch.masked.MaskedTensor yet"):
        reftrace.masked.MaskedTensor
    assert set(reftrace.masked.__all__) <= set(torch.masked.__all__)


# -- traced graphs ------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda m, x, k: m.masked.sum(x, (0, 2), keepdim=True, mask=k),
    lambda m, x, k: m.masked.softmax(x, 1, mask=k),
    lambda m, x, k: m.masked.var(x, 1, mask=k),
    lambda m, x, k: m.masked.std(x, None, keepdim=True, mask=k),
    lambda m, x, k: m.masked.normalize(x, 2.0, 0, mask=k),
    lambda m, x, k: m.masked.median(x, 2, mask=k),
    lambda m, x, k: m.masked.prod(x, (1, 2), mask=k),
    lambda m, x, k: m.masked.logaddexp(x, x * 2, input_mask=k),
])
@pytest.mark.parametrize("mask", [MASK, ROW_MASK], ids=["mask", "broadcast"])
def test_traced_graph(fn, mask):
    def graph(m):
        x, k = m.from_numpy(X.copy()), m.from_numpy(mask.copy())
        return m.jit.trace(lambda x, k: fn(m, x, k), (x, k), check_trace=False).graph.str(False)
    assert graph(reftrace) == graph(torch)


# -- gradients ----------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda m, x, k: m.masked.sum(x, 1, mask=k),
    lambda m, x, k: m.masked.mean(x, (0, 2), mask=k),
    lambda m, x, k: m.masked.amax(x, 2, mask=k),
    lambda m, x, k: m.masked.softmax(x, 1, mask=k),
    lambda m, x, k: m.masked.log_softmax(x, 0, mask=k),
    lambda m, x, k: m.masked.var(x, 1, mask=k),
    lambda m, x, k: m.masked.norm(x, 2.0, 2, mask=k),
    lambda m, x, k: m.masked.logsumexp(x, 1, mask=k),
    lambda m, x, k: m.masked.cumprod(x, 2, mask=k),
    lambda m, x, k: m.masked.normalize(x, 2.0, 1, mask=k),
])
def test_gradients(fn):
    from autograd_oracle import compare_grads
    x = torch.from_numpy(sample((3, 4, 5), "float64")).requires_grad_()
    compare_grads(fn, [x, torch.from_numpy(ROW_MASK.copy())])
