"""Oracle tests of the nn kernels, called as ATen ops (torch.ops.aten.X vs reftrace's op table):
values, dtype, shape, strides, in-place effects and error messages against torch 2.13."""
import numpy as np
import pytest

import reftrace
from oracle import check, sample, torch
from reftrace.ops import get_packet


class _Table:
    def __getattr__(self, name):
        return get_packet(name)


def A(m):
    """The ATen op namespace of either library."""
    return torch.ops.aten if m is not reftrace else _Table()


x4 = sample((2, 3, 9, 8))
x3 = sample((3, 9, 8), seed=1)
x2 = sample((9, 8), seed=2)
x1d = sample((2, 3, 9), seed=3)
xl = sample((2, 3, 9, 8), "int64")
w3 = sample((4, 3, 3, 3), seed=4)
b4 = sample((4,), seed=5)

CONV_ARGS = [  # stride, padding, dilation, groups, weight shape
    ([1, 1], [0, 0], [1, 1], 1, (4, 3, 3, 3)),
    ([2, 2], [1, 1], [1, 1], 1, (4, 3, 3, 3)),
    ([1, 2], [2, 1], [2, 1], 1, (5, 3, 2, 3)),
    ([1], [1], [1], 3, (6, 1, 3, 3)),
    ([2, 1], [0, 0], [1, 2], 3, (3, 1, 1, 3)),
]


@pytest.mark.parametrize("stride,padding,dilation,groups,wshape", CONV_ARGS)
@pytest.mark.parametrize("bias", [False, True])
def test_convolution_2d(stride, padding, dilation, groups, wshape, bias):
    w = sample(wshape, seed=7)
    b = sample(wshape[:1], seed=8) if bias else None
    check(lambda m, x, w, b: A(m)._convolution(x, w, b, stride, padding, dilation, False, [0, 0],
                                               groups, False, False, True, True), x4, w, b)


@pytest.mark.parametrize("stride,padding,dilation,groups", [([1], [0], [1], 1), ([2], [2], [2], 1),
                                                            ([1], [1], [1], 3)])
def test_convolution_1d(stride, padding, dilation, groups):
    w = sample((6, 3 // groups, 3), seed=9)
    check(lambda m, x, w: A(m)._convolution(x, w, None, stride, padding, dilation, False, [0],
                                            groups, False, False, True, True), x1d, w)


def test_convolution_integer_and_double():
    check(lambda m, x, w: A(m)._convolution(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
                                            False, False, True, True), xl, sample((2, 3, 2, 2), "int64"))
    check(lambda m, x, w: A(m)._convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                            False, False, True, True), x4.astype("float64"),
          w3.astype("float64"))


@pytest.mark.parametrize("padding,dilation,k", [("same", [1, 1], 3), ("same", [2, 1], 3),
                                                ("same", [1, 1], 2), ("valid", [1, 1], 3),
                                                ("same", [1, 1], 4)])
def test_convolution_mode(padding, dilation, k):
    w = sample((4, 3, k, k), seed=10)
    check(lambda m, x, w, b: A(m)._convolution_mode(x, w, b, [1, 1], padding, dilation, 1), x4, w, b4)


CONV_ERRORS = [
    (lambda m, x, w: A(m)._convolution(x, w[:, :2], None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                       False, False, True, True)),
    (lambda m, x, w: A(m)._convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 2,
                                       False, False, True, True)),
    (lambda m, x, w: A(m)._convolution(x, w, None, [1, 1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                       False, False, True, True)),
    (lambda m, x, w: A(m)._convolution(x, w.double(), None, [1, 1], [0, 0], [1, 1], False, [0, 0],
                                       1, False, False, True, True)),
    (lambda m, x, w: A(m)._convolution(x[:, :, :2, :2], w, None, [1, 1], [0, 0], [1, 1], False,
                                       [0, 0], 1, False, False, True, True)),
    (lambda m, x, w: A(m)._convolution(x, w, w[0, 0, 0], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                       False, False, True, True)),
    (lambda m, x, w: A(m)._convolution(x, w, None, [1, 1], [-1, 0], [1, 1], False, [0, 0], 1,
                                       False, False, True, True)),
    (lambda m, x, w: A(m)._convolution(x, w, None, [0, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                       False, False, True, True)),
    (lambda m, x, w: A(m)._convolution(x[0], w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                       False, False, True, True)),
    (lambda m, x, w: A(m)._convolution_mode(x, w, None, [2, 2], "same", [1, 1], 1)),
    (lambda m, x, w: A(m)._convolution_mode(x, w, None, [1, 1], "full", [1, 1], 1)),
]


@pytest.mark.parametrize("fn", CONV_ERRORS)
def test_convolution_errors(fn):
    check(fn, x4, w3)


POOL_CASES = [
    (lambda m, x: A(m).max_pool2d(x, [2, 2]), x4),
    (lambda m, x: A(m).max_pool2d(x, [3, 2], [2, 1], [1, 1], [1, 1], True), x4),
    (lambda m, x: A(m).max_pool2d(x, [3, 3], [2, 2], [1, 1], [2, 1], True), x4),
    (lambda m, x: A(m).max_pool2d(x, [2], [], [0], [1], False), xl),
    (lambda m, x: A(m).max_pool2d_with_indices(x, [3, 2], [2, 1], [1, 1], [1, 1], True), x4),
    (lambda m, x: A(m).max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 0], [2, 2], False), x4),
    (lambda m, x: A(m).max_pool2d_with_indices(x, [2, 2]), x3),
    (lambda m, x: A(m).max_pool1d(x, [2]), x1d),
    (lambda m, x: A(m).max_pool1d(x, [3], [2], [1], [2], True), x1d),
    (lambda m, x: A(m).max_pool1d_with_indices(x, [3], [2], [1], [1], True), x1d),
    (lambda m, x: A(m).avg_pool2d(x, [2]), x4),
    (lambda m, x: A(m).avg_pool2d(x, [3, 2], [2, 1], [1, 1], True, True), x4),
    (lambda m, x: A(m).avg_pool2d(x, [3, 2], [2, 1], [1, 1], True, False), x4),
    (lambda m, x: A(m).avg_pool2d(x, [3, 3], [2, 2], [1, 1], True, False, 5), x4),
    (lambda m, x: A(m).avg_pool2d(x, [3, 3], [2, 2], [1, 1], True, False), xl),
    (lambda m, x: A(m).avg_pool2d(x, [2]), x3),
    (lambda m, x: A(m).adaptive_avg_pool2d(x, [1, 1]), x4),
    (lambda m, x: A(m).adaptive_avg_pool2d(x, [4, 3]), x4),
    (lambda m, x: A(m).adaptive_avg_pool2d(x, [5, 7]), x3),
    (lambda m, x: A(m).adaptive_avg_pool2d(x, [9, 16]), x3),
]

POOL_ERRORS = [
    (lambda m, x: A(m).max_pool2d(x, [2, 2, 2]), x4),
    (lambda m, x: A(m).max_pool2d(x, [2], [0]), x4),
    (lambda m, x: A(m).max_pool2d(x, [2], [1], [2]), x4),
    (lambda m, x: A(m).max_pool2d(x, [10], [1]), x4),
    (lambda m, x: A(m).max_pool2d(x, [2]), x2),
    (lambda m, x: A(m).max_pool2d(x, [2]), xl > 0),
    (lambda m, x: A(m).max_pool2d(x, [2], [1, 1, 1]), x4),
    (lambda m, x: A(m).max_pool2d(x, [2], [], [0], [0]), x4),
    (lambda m, x: A(m).max_pool1d(x, [2, 2]), x1d),
    (lambda m, x: A(m).max_pool1d(x, [2], [1, 1]), x1d),
    (lambda m, x: A(m).max_pool1d(x, [10]), x1d),
    (lambda m, x: A(m).max_pool1d(x, [2], [], [2]), x1d),
    (lambda m, x: A(m).max_pool1d(x, [2]), x1d[0, 0]),
    (lambda m, x: A(m).max_pool1d(x, [0]), x1d),
    (lambda m, x: A(m).max_pool1d(x, [2]), xl[0]),
    (lambda m, x: A(m).max_pool1d_with_indices(x, [2]), x4),
    (lambda m, x: A(m).max_pool1d_with_indices(x, [10]), x1d),
    (lambda m, x: A(m).avg_pool2d(x, [2, 2, 2]), x4),
    (lambda m, x: A(m).avg_pool2d(x, [2], [], [0], False, True, 0), x4),
    (lambda m, x: A(m).avg_pool2d(x, [2]), x2),
    (lambda m, x: A(m).avg_pool2d(x, [3], [], [2]), x4),
    (lambda m, x: A(m).adaptive_avg_pool2d(x, [2, 2]), xl),
    (lambda m, x: A(m).adaptive_avg_pool2d(x, [2, 2]), x2),
    (lambda m, x: A(m).adaptive_avg_pool2d(x, [2, 2, 2]), x4),
]


@pytest.mark.parametrize("fn,x", POOL_CASES + POOL_ERRORS)
def test_pooling(fn, x):
    check(fn, x)


special = np.array([[[[np.nan, 1, np.nan, -np.inf],
                      [2, np.nan, -np.inf, -np.inf],
                      [3, 3, 1, -np.inf],
                      [-np.inf, 0, 3, -np.inf]]]], dtype="float32")


@pytest.mark.parametrize("x", [np.ones((1, 1, 3, 3), "float32"), special,
                               np.full((1, 1, 3, 3), np.iinfo(np.int64).min)])
@pytest.mark.parametrize("k,s,p,ceil", [(2, 1, 0, False), (3, 2, 1, True), (2, 2, 1, True)])
def test_max_pool_ties_nans_and_padding_pick_atens_index(x, k, s, p, ceil):
    # ties: the first maximum; NaN: the last NaN; all -inf: the first in-bounds position
    check(lambda m, x: A(m).max_pool2d_with_indices(x, [k, k], [s, s], [p, p], [1, 1], ceil), x)


def test_max_pool_window_entirely_in_padding_reports_atens_start_index():
    check(lambda m, x: A(m).max_pool2d_with_indices(x, [2, 3], [3, 1], [1, 1], [2, 1]),
          sample((1, 2, 1, 3)))


# -- normalisation -----------------------------------------------------------------------------------

@pytest.mark.parametrize("training", [False, True])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 9, 8), (5, 3), (4, 3, 7)])
def test_batch_norm(training, affine, shape):
    x = sample(shape, seed=11)
    rm, rv = sample((3,), seed=12), sample((3,), low=0.5, high=2, seed=13)
    w, b = (sample((3,), seed=14), sample((3,), seed=15)) if affine else (None, None)
    # the running stats are inputs: check() also compares them after the call (in-place update)
    check(lambda m, x, w, b, rm, rv: A(m).batch_norm(x, w, b, rm, rv, training, 0.3, 1e-3, True),
          x, w, b, rm, rv)


def test_batch_norm_training_without_running_stats():
    check(lambda m, x: A(m).batch_norm(x, None, None, None, None, True, 0.1, 1e-5, True), x4)


@pytest.mark.parametrize("fn", [
    lambda m, x, r: A(m).batch_norm(x, None, None, None, None, False, 0.1, 1e-5, True),
    lambda m, x, r: A(m).batch_norm(x, None, None, r, r, False, 0.1, 1e-5, True),
    lambda m, x, r: A(m).batch_norm(x, r, None, None, None, True, 0.1, 1e-5, True),
])
def test_batch_norm_errors(fn):
    check(fn, x4, sample((4,)))


@pytest.mark.parametrize("fn", [
    lambda m, x, w, b: A(m).layer_norm(x, [8]),
    lambda m, x, w, b: A(m).layer_norm(x, [9, 8], w, b, 1e-3),
    lambda m, x, w, b: A(m).layer_norm(x, [9, 8], None, b),
    lambda m, x, w, b: A(m).layer_norm(x, [7]),
    lambda m, x, w, b: A(m).layer_norm(x, [8], w),
    lambda m, x, w, b: A(m).layer_norm(x, []),
    lambda m, x, w, b: A(m).group_norm(x, 3, w[0, :3], b[0, :3]),
    lambda m, x, w, b: A(m).group_norm(x, 1),
    lambda m, x, w, b: A(m).group_norm(x, 2),
    lambda m, x, w, b: A(m).group_norm(x, 3, w),
])
def test_layer_and_group_norm(fn):
    check(fn, x4, sample((9, 8), seed=16), sample((9, 8), seed=17))


# -- dropout, embedding, one_hot -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["dropout", "feature_dropout"])
def test_dropout_identity_cases(name):
    # train=False or p=0 returns the input itself (check() compares aliasing); p=1 zeros
    check(lambda m, x: getattr(A(m), name)(x, 0.5, False), x4)
    check(lambda m, x: getattr(A(m), name)(x, 0.0, True), x4)
    check(lambda m, x: getattr(A(m), name)(x, 1.0, True), x4)


def test_dropout_training_statistics():
    reftrace.manual_seed(0)
    x = reftrace.from_numpy(np.ones((200, 100), "float32"))
    y = get_packet("dropout")(x, 0.25, True)._array
    assert set(np.unique(y)) <= {0.0, np.float32(1) / np.float32(0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    z = get_packet("feature_dropout")(reftrace.from_numpy(np.ones((50, 40, 3, 3), "float32")),
                                      0.5, True)._array
    per_plane = z.reshape(50, 40, 9)
    assert (per_plane.min(-1) == per_plane.max(-1)).all()  # whole planes kept or dropped
    assert abs((per_plane[..., 0] == 0).mean() - 0.5) < 0.06


def test_dropout_inplace_writes_the_input():
    reftrace.manual_seed(0)
    x = reftrace.from_numpy(np.ones((100,), "float32"))
    assert get_packet("dropout_")(x, 0.5, True) is x
    assert (x._array == 0).any() and x._version == 1


def test_dropout_is_flagged_nondeterministic():
    for name in ("dropout", "feature_dropout", "dropout_", "feature_dropout_"):
        assert all(ov.nondeterministic for ov in get_packet(name).overloads)


idx = np.array([[1, 2, 0], [4, 3, 3]], dtype="int64")
table = sample((5, 3), seed=18)


@pytest.mark.parametrize("fn,args", [
    (lambda m, w, i: A(m).embedding(w, i), (table, idx)),
    (lambda m, w, i: A(m).embedding(w, i, 0), (table, idx.astype("int32"))),
    (lambda m, w, i: A(m).embedding(w, i), (table, np.array(3))),
    (lambda m, w, i: A(m).embedding(w, i), (table, np.array([5]))),
    (lambda m, w, i: A(m).embedding(w, i), (table, np.array([-1]))),
    (lambda m, w, i: A(m).embedding(w, i), (table, np.array([1.0], "float32"))),
    (lambda m, w, i: A(m).one_hot(i), (table, idx)),
    (lambda m, w, i: A(m).one_hot(i, 7), (table, idx)),
    (lambda m, w, i: A(m).one_hot(i, 3), (table, idx)),
    (lambda m, w, i: A(m).one_hot(i, 5), (table, -idx)),
    (lambda m, w, i: A(m).one_hot(i), (table, idx.astype("int32"))),
    (lambda m, w, i: A(m).one_hot(i), (table, np.zeros((0,), "int64"))),
    (lambda m, w, i: A(m).one_hot(i, 4), (table, np.zeros((0, 2), "int64"))),
])
def test_embedding_and_one_hot(fn, args):
    check(fn, *args)


# -- padding -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,x", [
    (lambda m, x: A(m).pad(x, [1, 2]), x4),
    (lambda m, x: A(m).pad(x, [1, 2, 0, 3], "constant", 2.5), x4),
    (lambda m, x: A(m).pad(x, [-1, 2, 1, -3]), x4),
    (lambda m, x: A(m).pad(x, [1, 2, 3, 0, 1, 1, 0, 1]), x4),
    (lambda m, x: A(m).pad(x, [1, 1], "constant", 1.7), xl),
    (lambda m, x: A(m).pad(x, [1, 2, 2, 1], "reflect"), x4),
    (lambda m, x: A(m).pad(x, [1, 2], "reflect"), x1d),
    (lambda m, x: A(m).pad(x, [1, 2, 2, 1], "replicate"), x3),
    (lambda m, x: A(m).pad(x, [3, 2], "replicate"), x1d),
    (lambda m, x: A(m).pad(x, [1, 2, 2, 1], "circular"), x4),
    (lambda m, x: A(m).pad(x, [1, 2, 3]), x4),
    (lambda m, x: A(m).pad(x, [1] * 10), x4),
    (lambda m, x: A(m).pad(x, [9, 9], "reflect"), x1d),
    (lambda m, x: A(m).pad(x, [1, 1], "reflect"), x4),
    (lambda m, x: A(m).pad(x, [1, 1], "foo"), x4),
    (lambda m, x: A(m).pad(x, [1, 1], "reflect", 2.0), x4),
    (lambda m, x: A(m).pad(x, [1, 1, 9, 0], "reflect"), x4),
    (lambda m, x: A(m).pad(x, [1, 1, 1, 1], "replicate"), x4[:, :, :0]),
    (lambda m, x: A(m).pad(x, [1, 1, 1, 1], "circular"), x4[:, :, :0]),
    (lambda m, x: A(m).pad(x, [-5, -5]), x1d),
    (lambda m, x: A(m).constant_pad_nd(x, [1, 2, 3, 4], 0.5), x4),
    (lambda m, x: A(m).constant_pad_nd(x, [1, 2, 3]), x4),
    (lambda m, x: A(m).reflection_pad2d(x, [1, 2, 3, 1]), x3),
    (lambda m, x: A(m).replication_pad1d(x, [2, 0]), x1d),
])
def test_pad(fn, x):
    check(fn, x)


# -- upsampling --------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn,x", [
    (lambda m, x: A(m).upsample_nearest2d.vec(x, [5, 13], None), x4),
    (lambda m, x: A(m).upsample_nearest2d.vec(x, None, [2.0, 3.0]), x4),
    (lambda m, x: A(m).upsample_nearest2d.vec(x, None, [1.7, 0.6]), x4),
    (lambda m, x: A(m).upsample_nearest2d.vec(x, [18, 16], None), xl),
    (lambda m, x: A(m).upsample_nearest2d(x, [7, 3]), x4),
    (lambda m, x: A(m).upsample_nearest2d(x, [7, 3], 0.9, 0.4), x4),
    (lambda m, x: A(m).upsample_nearest1d.vec(x, None, [2.5]), x1d),
    (lambda m, x: A(m).upsample_bilinear2d.vec(x, [5, 13], False, None), x4),
    (lambda m, x: A(m).upsample_bilinear2d.vec(x, [5, 13], True, None), x4),
    (lambda m, x: A(m).upsample_bilinear2d.vec(x, None, False, [3.0, 1.5]), x4),
    (lambda m, x: A(m).upsample_bilinear2d.vec(x, None, True, [0.5, 2.0]), x4.astype("float64")),
    (lambda m, x: A(m).upsample_bilinear2d.vec(x, [1, 1], True, None), x4),
    (lambda m, x: A(m).upsample_bilinear2d(x, [10, 4], False, 1.2, 0.5), x4),
    (lambda m, x: A(m).upsample_nearest2d.vec(x, [5, 5], [2.0, 2.0]), x4),
    (lambda m, x: A(m).upsample_nearest2d.vec(x, [5, 5, 5], None), x4),
    (lambda m, x: A(m).upsample_nearest2d.vec(x, [5, 5], None), x3),
    (lambda m, x: A(m).upsample_nearest2d.vec(x, None, [0.01, 1.0]), x4),
])
def test_upsample(fn, x):
    check(fn, x)


# -- losses ----------------------------------------------------------------------------------------

logits = sample((6, 5), seed=19)
logits4 = sample((2, 5, 3, 4), seed=20)
labels = np.array([1, 0, 4, 2, 2, 3], dtype="int64")
labels4 = np.random.default_rng(21).integers(0, 5, size=(2, 3, 4))
class_w = sample((5,), low=0.1, high=2, seed=22)
probs = np.abs(sample((6, 5), seed=23))
probs /= probs.sum(1, keepdims=True)


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("fn,args", [
    (lambda m, x, t, w, r: A(m).nll_loss_nd(x, t, None, r), (logits, labels, None)),
    (lambda m, x, t, w, r: A(m).nll_loss_nd(x, t, w, r, 2), (logits, labels, class_w)),
    (lambda m, x, t, w, r: A(m).nll_loss_nd(x, t, w, r), (logits4, labels4, class_w)),
    (lambda m, x, t, w, r: A(m).nll_loss_nd(x, t, None, r), (logits[0], np.array(labels[0]), None)),
    (lambda m, x, t, w, r: A(m).cross_entropy_loss(x, t, None, r), (logits, labels, None)),
    (lambda m, x, t, w, r: A(m).cross_entropy_loss(x, t, w, r, 4), (logits, labels, class_w)),
    (lambda m, x, t, w, r: A(m).cross_entropy_loss(x, t, w, r, -100, 0.2), (logits4, labels4, class_w)),
    (lambda m, x, t, w, r: A(m).cross_entropy_loss(x, t, None, r, 2, 0.1), (logits, labels, None)),
    (lambda m, x, t, w, r: A(m).cross_entropy_loss(x, t, None, r), (logits, probs, None)),
    (lambda m, x, t, w, r: A(m).cross_entropy_loss(x, t, w, r, -100, 0.3), (logits, probs, class_w)),
    (lambda m, x, t, w, r: A(m).mse_loss(x, t, r), (logits, probs, None)),
    (lambda m, x, t, w, r: A(m).mse_loss(x, t, r), (logits, probs[0], None)),
])
def test_losses(fn, args, reduction):
    check(lambda m, *a: fn(m, *a, reduction), *args)


@pytest.mark.parametrize("fn,args", [
    (lambda m, x, t: A(m).nll_loss_nd(x, t), (logits, labels + 2)),
    (lambda m, x, t: A(m).nll_loss_nd(x, t), (logits, labels[:4])),
    (lambda m, x, t: A(m).nll_loss_nd(x, t), (logits, labels4)),
    (lambda m, x, t: A(m).nll_loss_nd(x, t, None, 1, -100), (logits, np.full(6, -100))),
    (lambda m, x, t: A(m).nll_loss_nd(x, t, x[0]), (logits, labels)),
    (lambda m, x, t: A(m).cross_entropy_loss(x, t), (logits, labels - 1)),
    (lambda m, x, t: A(m).cross_entropy_loss(x, t, None, 1, -100, 1.5), (logits, labels)),
    (lambda m, x, t: A(m).cross_entropy_loss(x, t, None, 1, 1), (logits, probs)),
    (lambda m, x, t: A(m).mse_loss(x, t), (logits, probs[:, :2])),
])
def test_loss_errors_and_edges(fn, args):
    check(fn, *args)
