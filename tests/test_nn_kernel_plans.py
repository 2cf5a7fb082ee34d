"""The planned NumPy paths of the convolution, pooling, upsampling and cat kernels
(reftrace/ops/_im2col.py and the per-signature plans) give the general algorithm's bits.

Each fast path reorganises copies (im2col, col2im, a bilinear step's taps) or reorders exact
operations (max) and must not change a bit: each is compared exactly, on awkward geometries
and values (NaN, -0.0, padding, stride, dilation, strided inputs), with the one-pass
formulation the kernels used before. Values against torch 2.13 (the oracle) are checked too.
"""
import itertools

import numpy as np
import pytest

import reftrace
import reftrace.nn.functional as RF
from oracle import check, requires_torch
from reftrace.ops._im2col import (constant_padded, im2col, im2col_plan, scatter_windows,
                                   windows)


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}")


def awkward(rng, shape, dtype=np.float32):
    """Normal values with zeros of both signs, NaNs and infinities sprinkled in."""
    a = rng.standard_normal(shape).astype(dtype)
    u = rng.random(shape)
    a[u < 0.1] = -0.0
    a[(u >= 0.1) & (u < 0.2)] = 0.0
    a[(u >= 0.2) & (u < 0.23)] = np.nan
    a[(u >= 0.23) & (u < 0.25)] = -np.inf
    return a


def im2col_one_pass(a, kernel, stride, pad_pairs, dilation):
    """The (N, C, *kernel, *out) matrix copied from the transposed windows in one pass."""
    n = len(kernel)
    if any(map(any, pad_pairs)):
        a = constant_padded(np, a, pad_pairs)
    win = windows(np, a, kernel, stride, dilation)
    order = (0, 1) + tuple(range(2 + n, 2 + 2 * n)) + tuple(range(2, 2 + n))
    return np.ascontiguousarray(win.transpose(order))


def geometries(rng, count):
    for i in range(count):
        n = 1 + i % 3
        kernel = tuple(int(rng.integers(1, 8 if n < 3 else 4)) for _ in range(n))
        stride = [int(rng.integers(1, 4)) for _ in range(n)]
        dilation = [int(rng.integers(1, 3)) for _ in range(n)]
        pads = [(int(rng.integers(0, 3)),) * 2 for _ in range(n)]
        if i % 5 == 0:  # padding='same' with an even total: the odd element after
            pads[-1] = (pads[-1][0], pads[-1][0] + 1)
        spatial = tuple(int(rng.integers(max(1, d * (k - 1) + 1 - sum(p)), 16))
                        for k, d, p in zip(kernel, dilation, pads))
        yield kernel, stride, pads, dilation, spatial


def test_im2col_is_the_one_pass_matrix():
    rng = np.random.default_rng(0)
    for i, (kernel, stride, pads, dilation, spatial) in enumerate(geometries(rng, 300)):
        dtype = np.float64 if i % 4 == 0 else np.float32
        a = awkward(rng, (2, 3) + spatial, dtype)
        if i % 3 == 1:  # a strided (non-contiguous) input
            a = awkward(rng, (2, 6) + spatial, dtype)[:, ::2]
        plan = im2col_plan(a.shape, a.dtype.itemsize, kernel, stride, pads, dilation)
        got = im2col(a, plan)
        assert got.flags.c_contiguous
        np.testing.assert_array_equal(bits(got),
                                      bits(im2col_one_pass(a, kernel, stride, pads, dilation)))


def scatter_one_loop(cols, full, stride, dilation):
    """col2im as one strided add per kernel offset into zeros."""
    n = len(full)
    kernel, positions = cols.shape[-2 * n:-n], cols.shape[-n:]
    out = np.zeros(cols.shape[:-2 * n] + tuple(full), cols.dtype)
    for k in np.ndindex(*kernel):
        target = tuple(slice(k[i] * dilation[i], k[i] * dilation[i] + (positions[i] - 1) * stride[i]
                             + 1, stride[i]) for i in range(n))
        out[(Ellipsis,) + target] += cols[(Ellipsis,) + k + (slice(None),) * n]
    return out


@pytest.mark.parametrize("n", [1, 2, 3])
def test_col2im_phases_and_tiles_sum_in_the_loops_order(n):
    rng = np.random.default_rng(n)
    for stride_, quotient, extra in itertools.product((1, 2, 3), (1, 2, 3), (0, 1)):
        stride = [stride_] * n
        kernel = tuple(quotient * s for s in stride)
        positions = tuple(int(rng.integers(1, 5)) for _ in range(n))
        full = [(L - 1) * s + k + extra for L, s, k in zip(positions, stride, kernel)]
        cols = awkward(rng, (2, 3) + kernel + positions)
        want = scatter_one_loop(cols, full, stride, [1] * n)
        got = scatter_windows(np, cols, full, stride, [1] * n, phases=True)
        crop = (Ellipsis,) + tuple(slice(0, f) for f in full)
        np.testing.assert_array_equal(bits(got[crop]), bits(want))
        assert not got[(Ellipsis,) + tuple(slice(f, None) for f in full)].any()
        np.testing.assert_array_equal(bits(scatter_windows(np, cols, full, stride, [1] * n)),
                                      bits(want))


def window_max_by_reduction(a, kernel, stride):
    win = windows(np, a, kernel, stride, [1] * len(kernel))
    return win.reshape(win.shape[:-len(kernel)] + (-1,)).max(axis=-1)


@pytest.mark.parametrize("relu", [False, True])
def test_max_pool_fast_path_is_the_reduction(relu):
    rng = np.random.default_rng(3)
    for kernel, stride in (((2, 2), (2, 2)), ((3, 3), (2, 2)), ((1, 3), (1, 1)), ((2, 1), (1, 2))):
        for values in ("plain", "awkward"):
            a = rng.standard_normal((2, 4, 9, 8)).astype(np.float32)
            if values == "awkward":
                a = awkward(rng, a.shape)
            if relu:
                np.copyto(a, 0, where=a < 0)
            got = RF.max_pool2d(reftrace.from_numpy(a.copy()), kernel, stride).numpy()
            np.testing.assert_array_equal(bits(got), bits(window_max_by_reduction(a, kernel, stride)))


def bilinear_per_tap(a, size):
    """upsample_bilinear2d (align_corners=True) as before: per axis, each tap taken and weighted
    on its own, then the sum."""
    from reftrace.ops.nn_upsample import _linear_weights
    for axis, out in enumerate(size, 2):
        i0, i1, l0, l1 = _linear_weights(a.shape[axis], out, True, None, np.float32)
        shape = (-1,) + (1,) * (a.ndim - 1 - axis)
        lo, hi = np.take(a, i0, axis=axis), np.take(a, i1, axis=axis)
        lo *= l0.reshape(shape)
        hi *= l1.reshape(shape)
        lo += hi
        a = lo
    return a


def test_bilinear_is_per_tap():
    rng = np.random.default_rng(4)
    for shape, size in (((1, 32, 4, 4), (8, 8)), ((2, 3, 5, 7), (9, 3)), ((1, 2, 1, 6), (4, 13))):
        a = awkward(rng, shape)
        got = RF.interpolate(reftrace.from_numpy(a.copy()), size=size, mode="bilinear",
                             align_corners=True).numpy()
        np.testing.assert_array_equal(bits(got), bits(bilinear_per_tap(a, size)))


def test_batch_norm_eval_follows_changed_parameters():
    # the evaluation transform is remembered by the parameters' values: changing them in place
    # between calls (same tensors, same shapes) must give the new result
    rng = np.random.default_rng(5)
    x = reftrace.from_numpy(rng.standard_normal((2, 3, 4, 4)).astype(np.float32))
    mean = reftrace.from_numpy(rng.standard_normal(3).astype(np.float32))
    var = reftrace.from_numpy(rng.random(3).astype(np.float32) + 0.5)
    first = RF.batch_norm(x, mean, var, training=False).numpy().copy()
    var.numpy()[...] *= 4
    second = RF.batch_norm(x, mean, var, training=False).numpy()
    a, m, v = x.numpy().astype(np.float64), mean.numpy().astype(np.float64), var.numpy()
    alpha = 1 / np.sqrt(v.astype(np.float64) + 1e-5)
    want = (a * alpha.reshape(1, -1, 1, 1) + (-m * alpha).reshape(1, -1, 1, 1)).astype(np.float32)
    np.testing.assert_array_equal(bits(second), bits(want))
    assert not np.array_equal(first, second)


@requires_torch
@pytest.mark.parametrize("case", ["convT-k4s2p1", "convT-tile", "convT-tile-op", "conv1d-k80",
                                  "conv2d-k5-pad", "conv3d-strided"])
def test_convolutions_against_torch(case):
    rng = np.random.default_rng(6)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    fn, args = {
        "convT-k4s2p1": (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2, padding=1),
                         (f32(2, 8, 5, 6), f32(8, 3, 4, 4))),
        "convT-tile": (lambda m, x, w, b: m.nn.functional.conv_transpose2d(x, w, b, stride=2),
                       (f32(1, 16, 8, 8), f32(16, 8, 2, 2), f32(8))),
        "convT-tile-op": (lambda m, x, w: m.nn.functional.conv_transpose1d(
            x, w, stride=3, output_padding=1), (f32(2, 4, 5), f32(4, 2, 3))),
        "conv1d-k80": (lambda m, x, w, b: m.nn.functional.conv1d(x, w, b, stride=4),
                       (f32(2, 1, 400), f32(16, 1, 80), f32(16))),
        "conv2d-k5-pad": (lambda m, x, w: m.nn.functional.conv2d(x, w, padding=2, dilation=(1, 2)),
                          (f32(2, 3, 9, 12), f32(4, 3, 5, 5))),
        "conv3d-strided": (lambda m, x, w: m.nn.functional.conv3d(x[:, ::2], w, stride=2, padding=1),
                           (f32(1, 4, 5, 6, 7), f32(3, 2, 3, 3, 3))),
    }[case]
    check(fn, *args, atol=1e-4)


@requires_torch
def test_pooling_and_cat_against_torch():
    rng = np.random.default_rng(7)
    a = awkward(rng, (2, 4, 8, 8))
    relu = np.where(a < 0, np.float32(0), a)
    for x in (a, relu):
        check(lambda m, x: m.nn.functional.max_pool2d(x, 2), x)
        check(lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True), x)
    b = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    # the same shapes, first contiguous then channels-last: the remembered checks keep layouts
    check(lambda m, x, y: m.cat([x, y], 1), a, b)
    check(lambda m, x, y: m.cat([x.contiguous(memory_format=m.channels_last),
                                 y.contiguous(memory_format=m.channels_last)], 1), a, b)
    check(lambda m, x, y: m.cat([x, y], 1), a, b)
