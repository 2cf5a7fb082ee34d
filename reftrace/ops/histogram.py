"""Histograms (ATen/native/Histogram.cpp, cpu/HistogramKernel.cpp): histogram, histogramdd and
its helpers _histogramdd_bin_edges / _histogramdd_from_bin_cts / _histogramdd_from_bin_tensors,
and histc.

torch bins each element in the input's own dtype: a bin count's edges come from linspace in that
dtype, and the position of an element is ``(elt - leftmost) * (edges - 1) / (rightmost -
leftmost)`` evaluated in that dtype (a float16 rounds after every step), truncated, then checked
against the edges next to it (histogram) or not (histc); explicit bin tensors are searched
(``upper_bound``). Counts accumulate in the input dtype, element by element. None of these has a
derivative in torch.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh
from ._registry import derivatives, op
from .arithmetic import TYPE_META_NAMES
from .creation import _linspace

_FM = ("function", "method")
_BINARY_SEARCH, _LINEAR, _LINEAR_LOCAL = range(3)


def _cpp(dtype):
    return dtype.ir_name  # 'Float', 'Long': as AT_DISPATCH names them


def _check_inputs(self, bins, weight):
    """histogramdd_check_inputs; ``bins``: the bin-edge tensors (or None when only counts)."""
    if self.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    n = self.shape[-1]
    if bins is not None:
        if len(bins) != n:
            raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a {n}-dimensional "
                               f"histogram but got {len(bins)}")
        for d, b in enumerate(bins):
            if b.dtype != self.dtype:
                raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same "
                                   f"dtype, but got input with dtype {TYPE_META_NAMES[self.dtype]} and bins for "
                                   f"dimension {d} with dtype {TYPE_META_NAMES[b.dtype]}")
            if b.dim() != 1:
                raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                                   f"{b.dim()} dimensions in the bins tensor for dimension {d}")
            if b.numel() == 0:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, but got "
                                   f"{b.numel()} elements in the bins tensor for dimension {d}")
    if weight is not None:
        if weight.dtype != self.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight "
                               f"tensor should have the same dtype, but got input({TYPE_META_NAMES[self.dtype]}), "
                               f"and weight({TYPE_META_NAMES[weight.dtype]})")
        if tuple(weight.shape) != tuple(self.shape[:-1]):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape "
                               "as the input tensor excluding its innermost dimension, but got input with "
                               f"shape {list(self.shape)} and weight with shape {list(weight.shape)}")


def _check_dtype(self):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_cpp(self.dtype)}'")


def _check_bin_cts(bin_cts, n):
    if len(bin_cts) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of "
                           "the input.")
    for d, ct in enumerate(bin_cts):
        if ct <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {ct} for dimension {d}")


def _fmt(v):
    return f"{v:g}"


def _outer_bin_edges(x, range_):
    """select_outer_bin_edges: the range, else each dimension's min and max (empty input: 0, 1);
    an empty range widens by 0.5 each side."""
    n = x.shape[-1]
    if range_ is not None:
        if len(range_) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should have "
                               f"{2 * n} elements, but got {len(range_)}")
        lo, hi = list(range_[0::2]), list(range_[1::2])
    elif x.size:
        a = x.reshape(-1, n)
        lo, hi = [float(v) for v in a.min(0)], [float(v) for v in a.max(0)]
    else:
        lo, hi = [0.0] * n, [1.0] * n
    for d in range(n):
        if not (np.isfinite(lo[d]) and np.isfinite(hi[d])):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_fmt(lo[d])}, {_fmt(hi[d])}] "
                               "is not finite")
        if lo[d] > hi[d]:
            raise RuntimeError("torch.histogramdd: min should not exceed max, but got min "
                               f"{_fmt(lo[d])} max {_fmt(hi[d])} for dimension {d}")
        if lo[d] == hi[d]:
            lo[d], hi[d] = lo[d] - 0.5, hi[d] + 0.5
    return lo, hi


def _positions(x, edges, algorithm):
    """The bin of each element of ``x`` (1-D, the input dtype) among ``edges`` (same dtype), -1
    outside [edges[0], edges[-1]]: histogramdd_cpu_contiguous's per-dimension step."""
    n = edges.shape[0]
    left, right = edges[0], edges[-1]
    inside = (x >= left) & (x <= right)
    xs = np.where(inside, x, left)
    if algorithm == _BINARY_SEARCH:
        pos = np.searchsorted(edges, xs, side="right") - 1
    else:
        with np.errstate(all="ignore"):
            pos = ((xs - left) * x.dtype.type(n - 1) / (right - left)).astype(np.int64)
        if algorithm == _LINEAR_LOCAL:
            # the edges next to it decide (division can misplace an element near an edge)
            lo = np.maximum(pos - 1, 0)
            hi = np.minimum(pos + 2, n)
            count = np.zeros_like(pos)
            for k in range(3):
                cand = lo + k
                count += (cand < hi) & (edges[np.minimum(cand, n - 1)] <= xs)
            pos = lo + count - 1
    pos = np.where(pos == n - 1, n - 2, pos)  # the last bin includes its right edge
    return np.where(inside, pos, -1)


def _fill_hist(x, edges_list, weight, algorithm, dtype, device):
    """Counts (or weights) per bin, accumulated in ``dtype`` in element order."""
    n = x.shape[-1]
    a = x.reshape(-1, n)
    shape = tuple(e.shape[0] - 1 for e in edges_list)
    hist = np.zeros(shape, dtype=dtype.np)
    keep = np.ones(a.shape[0], dtype=bool)
    flat = np.zeros(a.shape[0], dtype=np.int64)
    for d, e in enumerate(edges_list):
        pos = _positions(a[:, d], e, algorithm)
        keep &= pos >= 0
        flat = flat * shape[d] + np.maximum(pos, 0)
    w = np.ones(a.shape[0], dtype=dtype.np) if weight is None else weight.reshape(-1)
    np.add.at(hist.reshape(-1), flat[keep], w[keep])
    return _fresh(hist, dtype, device)


def _density(hist, edges):
    """hist / its sum / each dimension's bin lengths."""
    hist.div_(hist.sum().item())
    for d, e in enumerate(edges):
        shape = [1] * len(edges)
        shape[d] = e.numel() - 1
        hist.div_(e.diff().reshape(shape))
    return hist


def _edges_from_cts(self, bin_cts, range_):
    _check_dtype(self)
    _check_bin_cts(bin_cts, self.shape[-1])
    lo, hi = _outer_bin_edges(self._array, range_)
    return [_linspace(lo[d], hi[d], ct + 1, self.dtype, self.device) for d, ct in enumerate(bin_cts)]


def _histogramdd(self, bin_cts, bins, range_, weight, density):
    """(hist, bin_edges) of an (..., N) input: bin counts or bin-edge tensors."""
    _check_dtype(self)
    if bins is None:
        edges = _edges_from_cts(self, bin_cts, range_)
        algorithm = _LINEAR_LOCAL
    else:
        edges, algorithm = list(bins), _BINARY_SEARCH
    _check_inputs(self, edges, weight)
    hist = _fill_hist(self._array, [e._array for e in edges], None if weight is None else weight._array,
                      algorithm, self.dtype, self.device)
    if density:
        _density(hist, edges)
    return hist, edges


def _as_columns(self):
    return self.reshape(self.numel(), 1)


# -- histogram (1-D) ------------------------------------------------------------------------------

@op("histogram.bins_tensor(Tensor self, Tensor bins, *, Tensor? weight=None, bool density=False) -> "
    "(Tensor hist, Tensor bin_edges)", variants=_FM, differentiable=False)
def histogram_bins_tensor(self, bins, weight, density):
    _check_dtype(self)
    w = None if weight is None else weight.reshape(weight.numel())
    if weight is not None and weight.shape != self.shape:
        _check_inputs(_as_columns(self), None, weight)
    hist, edges = _histogramdd(_as_columns(self), None, [bins], None, w, density)
    return hist, bins.clone()


@op("histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None, "
    "bool density=False) -> (Tensor hist, Tensor bin_edges)", variants=_FM, differentiable=False)
def histogram_bin_ct(self, bins, range, weight, density):
    _check_dtype(self)
    if weight is not None and weight.shape != self.shape:
        _check_inputs(_as_columns(self), None, weight)
    w = None if weight is None else weight.reshape(weight.numel())
    hist, edges = _histogramdd(_as_columns(self), [bins], None, range, w, density)
    return hist, edges[0]


# -- histogramdd and the ops it is made of ------------------------------------------------------

@op("_histogramdd_bin_edges(Tensor self, int[] bins, *, float[]? range=None, Tensor? weight=None, "
    "bool density=False) -> Tensor[]", differentiable=False)
def _histogramdd_bin_edges(self, bins, range, weight, density):
    _check_inputs(self, None, weight)
    return _edges_from_cts(self, bins, range)


@op("_histogramdd_from_bin_cts(Tensor self, int[] bins, *, float[]? range=None, Tensor? weight=None, "
    "bool density=False) -> Tensor", differentiable=False)
def _histogramdd_from_bin_cts(self, bins, range, weight, density):
    _check_inputs(self, None, weight)
    return _histogramdd(self, bins, None, range, weight, density)[0]


@op("_histogramdd_from_bin_tensors(Tensor self, Tensor[] bins, *, Tensor? weight=None, "
    "bool density=False) -> Tensor", differentiable=False)
def _histogramdd_from_bin_tensors(self, bins, weight, density):
    return _histogramdd(self, None, bins, None, weight, density)[0]


def _histogramdd_of(self, bin_cts, bins, range_, weight, density):
    _check_inputs(self, None, weight)
    hist, edges = _histogramdd(self, bin_cts, bins, range_, weight, density)
    return hist, tuple(edges if bins is None else bins)  # the bins themselves, as torch returns them


_DD = "float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor[] bin_edges)"


@op("histogramdd(Tensor self, int[] bins, " + _DD, differentiable=False)
def histogramdd(self, bins, range, weight, density):
    return _histogramdd_of(self, bins, None, range, weight, density)


@op("histogramdd.int_bins(Tensor self, int bins, " + _DD, differentiable=False)
def histogramdd_int_bins(self, bins, range, weight, density):
    _check_inputs(self, None, weight)
    return _histogramdd_of(self, [bins] * self.shape[-1], None, range, weight, density)


@op("histogramdd.TensorList_bins(Tensor self, Tensor[] bins, " + _DD, differentiable=False)
def histogramdd_tensorlist_bins(self, bins, range, weight, density):
    return _histogramdd_of(self, None, bins, range, weight, density)


# -- histc ----------------------------------------------------------------------------------------

@op("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", variants=_FM)
def histc(self, bins, min, max):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_cpp(self.dtype)}'")
    _check_bin_cts([bins], 1)
    a = self._array.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
    edges = _linspace(lo, hi, bins + 1, self.dtype, self.device)._array
    return _fill_hist(a.reshape(-1, 1), [edges], None, _LINEAR, self.dtype, self.device)


derivatives(histc, {"self": "not_implemented('histc')"})
