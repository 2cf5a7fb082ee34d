"""_segment_reduce_backward (reftrace/ops/segment_reduce.py: SegmentReduce.cpp's CPU backward
kernel) against torch 2.13, bit for bit: every reduction, lengths and offsets, initial values,
NaNs, zeros (prod's exclusive products), ties (max / min share the gradient), empty segments,
leading dims, and the gradient torch computes through segment_reduce's SegmentReduceBackward0."""
import numpy as np
import pytest

import reftrace
from oracle import check

torch = pytest.importorskip("torch")

REDUCTIONS = ["sum", "mean", "max", "min", "prod", "amax", "amin"]


def _case(seed):
    """data (with ties, zeros and a NaN), lengths with empty segments, and the matching offsets;
    half the cases have a leading dim (axis 1) and a trailing one."""
    rng = np.random.default_rng(seed)
    lead = (2,) if seed % 2 else ()
    lengths = rng.integers(0, 4, lead + (4,))
    total = int(lengths.sum(-1).max())
    lengths[..., -1] += total - lengths.sum(-1)
    data = rng.integers(-2, 3, lead + (total,) + ((3,) if seed % 2 else ())).astype(np.float64) * 1.5
    if data.size and seed % 3 == 0:
        data.flat[rng.integers(0, data.size)] = np.nan
    offsets = np.concatenate([np.zeros(lead + (1,), np.int64), np.cumsum(lengths, -1)], -1)
    return data, lengths, offsets, len(lead)


def _backward(m, data, reduce, kw, axis, initial, dtype, seed):
    d = m.from_numpy(data.astype(dtype))
    kw = {k: m.from_numpy(v.copy()) for k, v in kw.items()}
    out = m.segment_reduce(d, reduce, axis=axis, initial=initial, **kw)
    g = np.random.default_rng(seed).standard_normal(tuple(out.shape)).astype(dtype)
    return m.ops.aten._segment_reduce_backward(m.from_numpy(g), out, d, reduce, axis=axis,
                                               initial=initial, **kw)


@pytest.mark.parametrize("reduce", REDUCTIONS)
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("by", ["lengths", "offsets"])
@pytest.mark.parametrize("initial", [None, 2.0])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_segment_reduce_backward_is_torchs_bit_for_bit(reduce, seed, by, initial, dtype):
    data, lengths, offsets, axis = _case(seed)
    kw = {"lengths": lengths} if by == "lengths" else {"offsets": offsets}
    t = _backward(torch, data, reduce, kw, axis, initial, dtype, seed)
    r = _backward(reftrace, data, reduce, kw, axis, initial, dtype, seed)
    assert str(r.dtype) == str(t.dtype) and tuple(r.shape) == tuple(t.shape)
    assert np.array_equal(r.numpy(), t.numpy(), equal_nan=True)


@pytest.mark.parametrize("reduce", ["sum", "prod", "max", "mean"])
def test_offsets_need_not_cover_the_data(reduce):
    """Elements before offsets[0] or after offsets[-1] are in no segment: gradient 0."""
    def program(m):
        d = m.tensor([1., 2., 0., 4., 5., 6.], dtype=m.float64, requires_grad=True)
        out = m.segment_reduce(d, reduce, offsets=m.tensor([1, 3, 4]))
        grad, = m.autograd.grad(out, d, m.tensor([1.5, -2.], dtype=m.float64))
        return out.detach(), grad
    check(program)


@pytest.mark.parametrize("case", range(4))
def test_segment_reduce_backward_errors(case):
    def program(m):
        ones, lengths = m.ones(2), m.tensor([2, 2])
        calls = [lambda: m.ops.aten._segment_reduce_backward(ones, ones, m.ones(4), "sum"),
                 lambda: m.ops.aten._segment_reduce_backward(ones.double(), ones, m.ones(4), "sum", lengths=lengths),
                 lambda: m.ops.aten._segment_reduce_backward(ones, ones, m.ones(4), "foo", lengths=lengths),
                 lambda: m.segment_reduce(m.ones(4), "foo", lengths=lengths)]
        return calls[case]()
    check(program)
