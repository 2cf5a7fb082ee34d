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
_ALIASES = {"amax": "max", "amin": "min"}  # (ReductionType.h get_reduction_enum)


def _reduction(reduce):
    reduce = _ALIASES.get(reduce, reduce)
    if reduce not in _IDENTITY:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return reduce


def _fold(reduce, acc, x):
    if reduce == "max":
        return np.where(np.isnan(x), x, np.maximum(acc, x))
    if reduce == "min":
        return np.where(np.isnan(x), x, np.minimum(acc, x))
    if reduce == "prod":
        return acc * x
    return acc + x


def _check(data, reduce, lengths, indices, offsets, axis, unsafe):
    """segment_reduce_kernel's checks, in its order; returns (axis, reduce)."""
    axis = _wrap_dim(axis, data.ndim)
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    reduce = _reduction(reduce)
    if offsets is not None:  # (lengths are then ignored)
        lengths = None
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
    return axis, reduce


@op("segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, "
    "Tensor? offsets=None, int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor")
def segment_reduce(data, reduce, lengths, indices, offsets, axis, unsafe, initial):
    axis, reduce = _check(data, reduce, lengths, indices, offsets, axis, unsafe)
    bounds = _bounds(lengths, offsets)
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


# (the yaml passes lengths, offsets, axis and initial positionally; they are keyword-only in
# Python)
derivatives(segment_reduce, {
    "data": "_segment_reduce_backward(grad, result, data, reduce, lengths=lengths, "
            "offsets=offsets, axis=axis, initial=initial)"})


def _bounds(lengths, offsets):
    """Each row's segment boundaries: offsets as given (its first segment starts at offsets[0]),
    or lengths' running sums from 0. The offsets win when both are given, as in torch."""
    if offsets is not None:
        return np.asarray(offsets._array, dtype=np.int64)
    counts = np.asarray(lengths._array, dtype=np.int64)
    zero = np.zeros(counts.shape[:-1] + (1,), np.int64)
    return np.concatenate([zero, np.cumsum(counts, -1)], -1)


@op("_segment_reduce_backward(Tensor grad, Tensor output, Tensor data, str reduce, *, "
    "Tensor? lengths=None, Tensor? offsets=None, int axis=0, Scalar? initial=None) -> Tensor",
    variants=())
def _segment_reduce_backward(grad, output, data, reduce, lengths, offsets, axis, initial):
    """SegmentReduce.cpp _segment_reduce_cpu_lengths_backward_kernel1, segment by segment in the
    data's dtype: sum copies the output's gradient, mean divides it by the length; max / min
    give it to every element equal to the result (or NaN), and where several are, divide the
    positive ones by their count (torch's kernel leaves negative ones undivided); prod gives
    grad * result / x, or, for a zero or NaN x, grad times the product of the others (from
    ``initial``). Elements outside every segment get 0; torch has no derivative of this op."""
    axis = _wrap_dim(axis, data.ndim)
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    reduce = _reduction(reduce)
    for t in (output, grad):  # the kernel reads them as the data's scalar type
        if t.dtype is not data.dtype:
            raise RuntimeError(f"expected scalar type {data.dtype.ir_name} but found {t.dtype.ir_name}")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{data.dtype.ir_name}'")
    bounds = _bounds(lengths, offsets)
    axis = bounds.ndim - 1
    a, out, g = np.asarray(data._array), np.asarray(output._array), np.asarray(grad._array)
    dt = a.dtype.type
    gi = np.zeros(a.shape, a.dtype)
    start_prod = dt(1 if initial is None else initial)
    with np.errstate(all="ignore"):
        for i in np.ndindex(*a.shape[:axis]):
            b = bounds[i]
            for k in range(b.shape[-1] - 1):
                lo, hi = b[k], b[k + 1]
                if hi - lo <= 0:
                    continue
                gi[i][lo:hi] = _segment_grad(reduce, a[i][lo:hi], out[i + (k,)], g[i + (k,)],
                                             start_prod, dt)
    return _fresh(xp_of(data).asarray(gi), data.dtype, data.device)


def _segment_grad(reduce, x, out, g, start_prod, dt):
    """The gradient of one segment ``x`` (its elements along the first axis) whose result is
    ``out`` and the result's gradient ``g``."""
    if reduce == "sum":
        return np.broadcast_to(g, x.shape)
    if reduce == "mean":
        return np.broadcast_to(g / dt(x.shape[0]), x.shape)
    if reduce in ("max", "min"):
        chosen = np.isnan(x) | (x == out)
        gx = np.where(chosen, g, dt(0))
        counter = chosen.sum(0)
        return np.where((counter >= 2) & (gx > 0), gx / counter.astype(x.dtype), gx)
    grad_val = g * out  # prod
    gx = grad_val / x
    for j in range(x.shape[0]):
        special = np.isnan(x[j]) | (x[j] == 0)
        if special.any():  # the product of the others, in order, from initial
            exclusive = np.full(x.shape[1:], start_prod, x.dtype)
            for k in range(x.shape[0]):
                if k != j:
                    exclusive = exclusive * x[k]
            gx[j] = np.where(special, g * exclusive, gx[j])
    return gx
