"""segment_reduce (torch.segment_reduce, alias torch._segment_reduce; ATen's SegmentReduce.cpp):
reduce consecutive segments of ``data`` along ``axis``, the segments given by their ``lengths``
or by ``offsets`` (segment k is offsets[k]:offsets[k + 1]); lengths / offsets may carry leading
dims of data (one row of segments per leading index), ``axis`` is their last dim.

Like ATen's CPU kernel, each segment is folded element by element in the data's dtype (a
float16 sum rounds at every step), starting from ``initial`` (else the reduction's identity:
-inf for max, inf for min, 0 for sum and mean, 1 for prod); max and min propagate NaN; mean
divides by the length, and an empty segment's mean is ``initial`` (NaN without one).
"""
import numpy as np

from .._tensor import _fresh, _wrap_dim, xp_of
from ._registry import derivatives, op

_IDENTITY = {"max": -np.inf, "min": np.inf, "sum": 0, "mean": 0, "prod": 1}


def _fold(reduce, acc, x):
    if reduce == "max":
        return np.where(np.isnan(x), x, np.maximum(acc, x))
    if reduce == "min":
        return np.where(np.isnan(x), x, np.minimum(acc, x))
    if reduce == "prod":
        return acc * x
    return acc + x


def _check(data, reduce, lengths, indices, offsets, axis, unsafe):
    if reduce not in _IDENTITY:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    axis = _wrap_dim(axis, data.ndim)
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    segs = lengths if lengths is not None else offsets
    name = "lengths" if lengths is not None else "offsets"
    if data.ndim < segs.ndim:
        raise RuntimeError(f"Expected data.dim() >= {name}_value.dim() to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    if axis != segs.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} "
                           f"but got {axis}.")
    if lengths is not None and not unsafe:
        a = lengths._array
        if a.size and a.min() < 0:
            raise RuntimeError("lengths contains negative value!")
        if not (a.sum(-1) == data.shape_tuple[axis]).all():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{data.dtype.ir_name}'")
    return axis


@op("segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, "
    "Tensor? offsets=None, int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor")
def segment_reduce(data, reduce, lengths, indices, offsets, axis, unsafe, initial):
    axis = _check(data, reduce, lengths, indices, offsets, axis, unsafe)
    if lengths is not None:
        counts = np.asarray(lengths._array, dtype=np.int64)
        zero = np.zeros(counts.shape[:-1] + (1,), np.int64)
        bounds = np.concatenate([zero, np.cumsum(counts, -1)], -1)
    else:
        bounds = np.asarray(offsets._array, dtype=np.int64)
    a = np.asarray(data._array)
    dt = a.dtype.type
    lead, trail = a.shape[:axis], a.shape[axis + 1:]
    n_segments = bounds.shape[-1] - 1
    out = np.empty(lead + (n_segments,) + trail, a.dtype)
    start_value = dt(_IDENTITY[reduce] if initial is None else initial)
    for i in np.ndindex(*lead):
        row, b = a[i], bounds[i]
        for k in range(n_segments):
            acc = np.full(trail, start_value, a.dtype)
            for j in range(b[k], b[k + 1]):
                acc = _fold(reduce, acc, row[j])
            if reduce == "mean":
                length = b[k + 1] - b[k]
                if length > 0:
                    acc = acc / dt(length)
                elif initial is None:
                    acc = np.full(trail, np.nan, a.dtype)
            out[i + (k,)] = acc
    return _fresh(xp_of(data).asarray(out), data.dtype, data.device)


derivatives(segment_reduce, {
    "data": "_segment_reduce_backward(grad, result, data, reduce, lengths, offsets, axis, initial)"})
