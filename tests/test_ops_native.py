"""ATen's native kernels reached as torch reaches them, against torch: the normalisation kernels
with their saved statistics, torch.ops.aten's namespace, _safe_softmax, _chunk_cat,
segment_reduce, the masked index ops, grid_sampler_2d/3d and native_dropout_backward (values,
dtypes, strides, errors, traced graphs, gradients)."""
import warnings

import numpy as np
import pytest

import reftrace
from oracle import check, sample

X = sample((3, 2, 4))
W2, B2 = sample((2,), seed=1), sample((2,), seed=2)
RM, RV = sample((2,), seed=3), sample((2,), low=0.5, high=2, seed=4)
X4 = sample((2, 3, 4, 5), seed=5)
f16 = np.float16


def _cl(m, x):
    return x.contiguous(memory_format=m.channels_last)


# -- batch norm ------------------------------------------------------------------------------------

@pytest.mark.parametrize("training", [True, False])
def test_native_batch_norm(training):
    # outputs and the running statistics updated in place (compared after the call)
    check(lambda m, x, w, b, rm, rv: m.native_batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5),
          X, W2, B2, RM, RV)
    check(lambda m, x, rm, rv: m._native_batch_norm_legit(x, None, None, rm, rv, training, 0.5, 0.6),
          X, RM, RV)
    check(lambda m, x, w, b, rm, rv: m.native_batch_norm(_cl(m, x), w, b, rm, rv, training, 0.1, 1e-5),
          sample((2, 2, 3, 4)), W2, B2, RM, RV)


def test_native_batch_norm_float16_statistics():
    # float16 parameters: float16 statistics, rounded before the transform; float32 parameters
    # with a float16 input: float32 statistics
    check(lambda m, x, w, b, rm, rv: m.native_batch_norm(x, w, b, rm, rv, True, 0.5, 0.6),
          X.astype(f16), W2.astype(f16), B2.astype(f16), RM.astype(f16), RV.astype(f16), atol=1e-3, rtol=1e-3)
    check(lambda m, x, w, b, rm, rv: m.native_batch_norm(x, w, b, rm, rv, True, 0.5, 0.6),
          X.astype(f16), W2, B2, RM, RV, atol=1e-3, rtol=1e-3)
    check(lambda m, x, w, b, rm, rv: m.native_batch_norm(x, w, b, rm, rv, False, 0.5, 0.6),
          X.astype(f16), W2, B2, RM, RV, atol=1e-3, rtol=1e-3)


def test_native_batch_norm_no_stats_and_with_update():
    check(lambda m, x, w: m._native_batch_norm_legit(x, w, None, True, 0.1, 1e-5), X, W2)
    check(lambda m, x, w, b, rm, rv: m.ops.aten._batch_norm_with_update(x, w, b, rm, rv, 0.1, 1e-5),
          X, W2, B2, RM, RV)


# -- layer norm, group norm ------------------------------------------------------------------------

def test_native_layer_norm():
    check(lambda m, x: m.native_layer_norm(x, [4], None, None, 1e-5), X)
    check(lambda m, x, w: m.native_layer_norm(x, [2, 4], w, w, 0.5), X, sample((2, 4), seed=6))
    check(lambda m, x: m.native_layer_norm(_cl(m, x), [5], None, None, 1e-5), X4)
    check(lambda m, x: m.native_layer_norm(x, [3], None, None, 1e-5), X)  # error
    # float16: torch's fused multiply-adds in float32 (a constant row gives a small nonzero)
    check(lambda m, x: m.native_layer_norm(x, [1], x, None, 1e-5),
          np.array([-8.4766], f16), atol=1e-5, rtol=1e-3)
    check(lambda m, x, w: m.native_layer_norm(x, [4], w, w, 1e-5), X.astype(f16),
          sample((4,), seed=7).astype(f16), atol=1e-5, rtol=1e-3)


def test_native_group_norm():
    check(lambda m, x, w, b: m.native_group_norm(x, w, b, 3, 2, 4, 2, 0.5), X, W2, B2)
    check(lambda m, x: m.native_group_norm(_cl(m, x), None, None, 2, 3, 20, 3, 1e-5), X4)
    check(lambda m, x: m.native_group_norm(x, None, None, 3, 2, 4, 1, 1e-5), X.astype(f16),
          atol=1e-3, rtol=1e-3)
    check(lambda m, x: m.native_group_norm(x, None, None, 3, 2, 4, 3, 1e-5), X)  # error


def test_native_norm_gradients():
    torch = pytest.importorskip("torch", exc_type=ImportError)
    from autograd_oracle import compare_grads
    x = torch.from_numpy(X.astype(np.float64)).requires_grad_()
    w = torch.from_numpy(W2.astype(np.float64)).requires_grad_()
    b = torch.from_numpy(B2.astype(np.float64)).requires_grad_()
    compare_grads(lambda m, x, w, b: m.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5),
                  [x, w, b])
    compare_grads(lambda m, x, w, b: m.native_layer_norm(x, [4], None, None, 1e-5)[0] * 2,
                  [x, w, b], names=False)
    # every output of native_group_norm is differentiable: mean and rstd too
    compare_grads(lambda m, x, w, b: m.native_group_norm(x, w, b, 3, 2, 4, 2, 1e-5), [x, w, b])


# -- dropout backward, _safe_softmax, torch.ops.aten -----------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool"])
def test_native_dropout_backward(dtype):
    check(lambda m, g, mask: m.ops.aten.native_dropout_backward(g, mask, 2.5),
          sample((3, 4), dtype), sample((3, 4), "bool", seed=1), atol=1e-3, rtol=1e-3)


def test_safe_softmax():
    a = sample((3, 4))
    a[1] = -np.inf
    check(lambda m, x: m._safe_softmax(x, 1), a)
    check(lambda m, x: m._safe_softmax(x, 0), a)
    check(lambda m, x: m.ops.aten._safe_softmax.default(x, -1, m.float64), a)


def test_ops_aten_namespace():
    check(lambda m, x: m.ops.aten.add.Tensor(x, x, alpha=2), X)
    check(lambda m, x: m.ops.aten.relu(x), X)
    check(lambda m: m.ops.aten.no_such_op_here, check_message=True)
    check(lambda m: m.ops.aten.add.no_such_overload, check_message=True)


def _graphs(fn, *arrays):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        th = torch.jit.trace(lambda *a: fn(torch, *a), tuple(torch.from_numpy(a) for a in arrays))
        rt = reftrace.jit.trace(lambda *a: fn(reftrace, *a),
                                tuple(reftrace.from_numpy(a.copy()) for a in arrays))
    return rt.graph.str(False), th.graph.str(False)


def test_traced_graphs():
    # called through torch.ops.aten, no operand is named (torch's frame is _ops.py's __call__)
    def pool_backward(m, x):
        out, indices = m.nn.functional.max_pool2d_with_indices(x, 2, return_indices=True)
        grad_out = m.ones_like(out)
        return m.ops.aten.max_pool2d_with_indices_backward.default(
            grad_out, x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices)
    rt, th = _graphs(pool_backward, sample((1, 2, 4, 4)))
    assert rt == th
    rt, th = _graphs(lambda m, x, w: m.native_layer_norm(x, [4], w, None, 1e-5), X, sample((4,)))
    assert rt == th
    rt, th = _graphs(lambda m, x, y: m._chunk_cat([x, y], 1, 3), X, X)
    assert rt == th


def test_max_pool2d_backward_channels_last():
    def fn(m, x):
        x = _cl(m, x)
        out, indices = m.nn.functional.max_pool2d_with_indices(x, 3, 2, ceil_mode=True,
                                                               return_indices=True)
        return m.ops.aten.max_pool2d_with_indices_backward(m.ones_like(out), x, [3, 3], [2, 2],
                                                           [0, 0], [1, 1], True, indices)
    check(fn, sample((1, 2, 3, 6)))


# -- _chunk_cat, segment_reduce, masked index ------------------------------------------------------

def test_chunk_cat():
    check(lambda m, x, y: m._chunk_cat([x, y], -1, 5), X, sample((3, 2, 7), seed=1))
    check(lambda m, x, y: m._chunk_cat([x, y], 1, 2), X, sample((3, 2), seed=1))
    check(lambda m, x: m._chunk_cat([x.transpose(0, 2)], 0, 3), X)
    for bad in (lambda m, x: m._chunk_cat([x], 1, 0), lambda m, x: m._chunk_cat([], 1, 2),
                lambda m, x: m._chunk_cat([x, x.double()], 1, 2),
                lambda m, x: m._chunk_cat([x, x[:2]], 1, 2),
                lambda m, x: m._chunk_cat([x, x[0]], -1, 2),
                lambda m, x: m._chunk_cat([x, x[0]], 2, 2),
                lambda m, x: m._chunk_cat([x[:, :0]], 1, 2)):
        check(bad, X)


@pytest.mark.parametrize("reduce", ["max", "min", "mean", "sum", "prod"])
@pytest.mark.parametrize("initial", [None, 2.5])
def test_segment_reduce(reduce, initial):
    data = sample((6, 2))
    data[3, 1] = np.nan
    lengths = np.array([2, 0, 3, 1])
    check(lambda m, d, n: m.segment_reduce(d, reduce, lengths=n, initial=initial), data, lengths)
    check(lambda m, d, o: m._segment_reduce(d, reduce, offsets=o, initial=initial, unsafe=True),
          data, np.array([0, 2, 2, 5, 6]))
    check(lambda m, d, n: m.segment_reduce(d, reduce, lengths=n, axis=1, initial=initial),
          sample((2, 5)), np.array([[2, 3], [0, 5]]))
    check(lambda m, d, n: m.segment_reduce(d, reduce, lengths=n), data.astype(f16), lengths,
          atol=1e-3, rtol=1e-3)


def test_segment_reduce_errors():
    d = sample((5,))
    check(lambda m, d, n: m.segment_reduce(d, "max", lengths=n), d, np.array([2, 2]))
    check(lambda m, d, n: m.segment_reduce(d, "max", lengths=n), d, np.array([6, -1]))
    check(lambda m, d: m.segment_reduce(d, "max"), d)
    check(lambda m, d, n: m.segment_reduce(d, "median", lengths=n), d, np.array([5]))
    check(lambda m, d, n: m.segment_reduce(d, "sum", lengths=n, axis=1), sample((2, 5)), np.array([5]))


def test_unsafe_masked_index():
    x = sample((5, 5))
    rows, cols = np.arange(-1, 9).reshape(10, 1), np.arange(-2, 8).reshape(1, 10)
    mask = (rows >= 0) & (rows < 5) & (cols >= 0) & (cols < 5)
    check(lambda m, x, mask, r, c: m._unsafe_masked_index(x, mask, [r, c], -1.5), x, mask, rows, cols)
    check(lambda m, x, mask, r, c: m._unsafe_masked_index(x, mask, [r, c], 7), x.astype(np.int64),
          mask, rows, cols)
    check(lambda m, x, mask, r, c: m._unsafe_masked_index(x[:0], mask, [r, c], 2.0), x, mask, rows, cols)
    check(lambda m, x, mask, r, c: m._unsafe_masked_index(x, mask, [r.bool(), c], 3),
          x, mask, rows, cols)
    v = sample((10, 10), seed=2)
    check(lambda m, x, mask, r, c, v: m._unsafe_masked_index_put_accumulate(x, mask, [r, c], v),
          x, mask, rows, cols, v)
    check(lambda m, x, mask, r, c, v: m._unsafe_masked_index_put_accumulate(x.t(), mask, [r, c], v),
          x, mask, rows, cols, v)


def test_unsafe_masked_index_gradients():
    torch = pytest.importorskip("torch", exc_type=ImportError)
    from autograd_oracle import compare_grads
    rows, cols = torch.arange(-1, 6).reshape(7, 1), torch.arange(3).reshape(1, 3)
    mask = ((rows >= 0) & (rows < 5)).expand(7, 3).numpy()
    rows, cols = rows.numpy(), cols.numpy()
    x = torch.from_numpy(sample((5, 3)).astype(np.float64)).requires_grad_()
    v = torch.from_numpy(sample((7, 3), seed=1).astype(np.float64)).requires_grad_()
    compare_grads(lambda m, x: m._unsafe_masked_index(
        x, m.tensor(mask), [m.tensor(rows), m.tensor(cols)], 0.5), [x])
    compare_grads(lambda m, x, v: m._unsafe_masked_index_put_accumulate(
        x, m.tensor(mask), [m.tensor(rows), m.tensor(cols)], v), [x, v])


# -- grid sampler ----------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sampler_2d(mode, padding, align):
    check(lambda m, x, g: m.grid_sampler_2d(x, g, mode, padding, align), sample((2, 3, 4, 5)),
          sample((2, 3, 6, 2), low=-1.3, high=1.3, seed=1))


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 2])
def test_grid_sampler_3d(mode, padding):
    check(lambda m, x, g: m.grid_sampler_3d(x, g, mode, padding, False), sample((1, 2, 3, 4, 5)),
          sample((1, 2, 3, 4, 3), low=-1.3, high=1.3, seed=1))


def test_grid_sampler_errors():
    check(lambda m, x, g: m.grid_sampler_2d(x, g, 0, 0, False), sample((1, 1, 2, 2, 2)),
          sample((1, 2, 2, 2, 3)))
    check(lambda m, x, g: m.grid_sampler_3d(x, g, 0, 0, False), sample((1, 1, 2, 2)),
          sample((1, 2, 2, 2)))
    check(lambda m, x, g: m.grid_sampler_2d(x, g, 0, 0, False), sample((1, 1, 2, 2), "int64"),
          sample((1, 2, 2, 2), "int64"))
    check(lambda m, x, g: m.grid_sampler_3d(x, g, 0, 0, False), sample((1, 1, 2, 2, 2), "int64"),
          sample((1, 2, 2, 2, 3), "int64"))


# -- svd_lowrank, pca_lowrank ---------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(6, 4), (3, 7), (2, 5, 4)])
def test_svd_lowrank_reconstructs(shape):
    """The bases come from a random projection (reftrace's generator is not torch's): compared are
    the shapes, dtypes, strides, the singular values (q >= rank: exact) and U diag(S) V^H."""
    torch = pytest.importorskip("torch", exc_type=ImportError)
    a = sample(shape[:-1] + (2,)).astype(np.float64)
    b = sample(shape[:-2] + (shape[-1], 2), seed=1).astype(np.float64)
    for name, kwargs in (("svd_lowrank", {"q": 3}), ("pca_lowrank", {"q": 2, "center": False}),
                         ("pca_lowrank", {})):
        outs = []
        for m in (torch, reftrace):
            A = m.from_numpy(a) @ m.from_numpy(b).mT
            U, S, V = getattr(m, name)(A, **kwargs)
            outs.append([(tuple(t.shape), str(t.dtype), t.stride()) for t in (U, S, V)] +
                        [(U * S.unsqueeze(-2)) @ V.mT, S[..., :2]])
        th, rt = outs
        assert rt[:3] == th[:3]
        np.testing.assert_allclose(rt[3].numpy(), th[3].numpy(), atol=1e-10)   # U S V^H
        np.testing.assert_allclose(rt[4].numpy(), th[4].numpy(), atol=1e-10)   # S (rank 2)


def test_pca_lowrank_errors():
    check(lambda m, x: m.pca_lowrank(x, q=5), sample((3, 4)))
    check(lambda m, x: m.pca_lowrank(x, niter=-1), sample((3, 4)))


# -- stft, istft ------------------------------------------------------------------------------------

def _hann(m, n):
    return m.from_numpy(np.hanning(n + 1)[:-1].astype(np.float32))


@pytest.mark.parametrize("kwargs", [
    {"n_fft": 10, "return_complex": True},
    {"n_fft": 8, "hop_length": 3, "return_complex": False},
    {"n_fft": 7, "center": False, "return_complex": True},
    {"n_fft": 16, "hop_length": 4, "win_length": 10, "normalized": True, "return_complex": True},
    {"n_fft": 8, "pad_mode": "constant", "onesided": False, "return_complex": True},
    {"n_fft": 8},                                                     # error: return_complex
    {"n_fft": 64, "center": False, "return_complex": True},          # error: n_fft > length
    {"n_fft": 8, "center": True, "align_to_window": True, "return_complex": True},  # error
])
def test_stft(kwargs):
    check(lambda m, x: m.stft(x, **kwargs), sample((40,)))
    check(lambda m, x: x.stft(**kwargs), sample((3, 40)))
    if "win_length" not in kwargs:
        check(lambda m, x: m.stft(x, window=_hann(m, kwargs["n_fft"]), **kwargs), sample((40,)))


def test_stft_complex_and_errors():
    check(lambda m, x: m.stft(x, 8, return_complex=True, center=False), sample((30,), "complex64"))
    check(lambda m, x: m.stft(x, 8, onesided=True, return_complex=True), sample((30,), "complex64"))
    check(lambda m, x: m.stft(x, 4, window=m.ones(3), center=False, return_complex=True),
          sample((10,)))
    check(lambda m, x: m.stft(x, 4, hop_length=0, center=False, return_complex=True), sample((10,)))
    check(lambda m, x: m.stft(x, 4, center=False, return_complex=True), sample((2, 2, 10)))


@pytest.mark.parametrize("kwargs", [
    {"n_fft": 10}, {"n_fft": 8, "onesided": False}, {"n_fft": 8, "center": False},
    {"n_fft": 8, "length": 30}, {"n_fft": 8, "length": 60}, {"n_fft": 8, "normalized": True},
    {"n_fft": 8, "hop_length": 3, "win_length": 6},
    {"n_fft": 8, "onesided": False, "return_complex": True},
    {"n_fft": 8, "return_complex": True},                            # error: onesided
    {"n_fft": 8, "hop_length": 9},                                   # error
])
def test_istft(kwargs):
    spectrum = sample((40,)).astype(np.float64)
    n_fft = kwargs["n_fft"]

    def fn(m, x):
        spec = m.stft(x, n_fft, window=_hann(m, n_fft).double(), return_complex=True,
                      onesided=not kwargs.get("onesided") is False)
        return m.istft(spec, window=_hann(m, kwargs.get("win_length", n_fft)).double(),
                       **kwargs)
    check(fn, spectrum, atol=1e-10, rtol=1e-7)


def test_istft_errors():
    check(lambda m, x: m.istft(x, 8), sample((5, 4)))
    check(lambda m, x: m.istft(x, 8, window=m.zeros(8)), sample((5, 4), "complex64"))
    check(lambda m, x: m.istft(x, 8, window=m.ones(3)), sample((5, 4), "complex64"))
    check(lambda m, x: x.istft(8, onesided=False), sample((2, 8, 4), "complex64"))
