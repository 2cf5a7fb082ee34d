"""Statistics (ATen/native/Correlation.cpp, Sorting.cpp's quantile): cov, corrcoef, quantile,
nanquantile.

All four are CompositeImplicitAutograd in torch: the kernels below are torch's C++ decompositions
written with reftrace ops, in the same order (so values round as torch's do, and a recorded
gradient runs through the inner ops: ``quantile`` -> ``LerpBackward0`` on ``GatherBackward0`` on
``SortBackward0``). Histograms are in histogram.py.
"""
from .. import _dtype as D
from .._frames import warn_at_caller
from .._tensor import _wrap_dim
from ._decomposed import decomposed
from ._registry import get_packet

_FM = ("function", "method")


def _P(name):
    return get_packet(name)


def _is_true(t):
    """at::is_scalar_tensor_true: a 0-dim bool read on the host."""
    return bool(t._array)


# -- cov, corrcoef (Correlation.cpp) --------------------------------------------------------------


def _check_weights(w, name, num_observations, integral):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.dim()} dimensions")
    ok = (w.dtype.category == 1) if integral else w.dtype.is_floating_point
    if not ok:
        kind = "integral" if integral else "floating point"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype.ir_name} dtype")
    if w.numel() != num_observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in "
                           f"the input but got {w.numel()} != {num_observations}")
    if num_observations and not _is_true(w.min().ge(0)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@decomposed("cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor",
            variants=_FM)
def cov(self, correction, fweights, aweights):
    if self.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{self.dim()} dimensions")
    if self.dtype.name == "bool":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    # the input as (variables, observations)
    x = self.view(1, -1) if self.dim() < 2 else self
    num_observations = x.shape[1]
    w = None  # the product of frequencies (fweights) and weights (aweights)
    if fweights is not None:
        _check_weights(fweights, "fweights", num_observations, True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", num_observations, False)
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else _P("scalar_tensor")(num_observations, dtype=D.int64,
                                                                  device=x.device)
    if w is not None and not _is_true(w_sum.ne(0)):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if _is_true(norm_factor.le(0)):
        warn_at_caller("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
                       "number of observations.")
        norm_factor.zero_()
    x = x - avg.unsqueeze(1)
    c = _P("mm")(x, (x * w if w is not None else x).t().conj())
    return _P("true_divide")(c, norm_factor).squeeze()


@decomposed("corrcoef(Tensor self) -> Tensor", variants=_FM)
def corrcoef(self):
    if self.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input "
                           f"with {self.dim()} dimensions")
    c = cov(self)
    if c.dim() == 0:
        return c / c  # a scalar covariance: nan for nan, inf or 0, else 1
    d = c.diagonal()
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        return _P("complex")(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# -- quantile, nanquantile (Sorting.cpp) ----------------------------------------------------------

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_interpolation(interpolation):
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or "
                           f"nearest, but got {interpolation}")


def _quantile_checks(self, q):
    if self.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self.dtype.name not in ("float32", "float64"):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if self.dtype != q.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if self.device != q.device:
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")


def _output_shape(dim, self, q, keepdim, wrapped_dim):
    """q's size, then the reduced shape."""
    if dim is not None and self.dim() > 0:
        out_shape = list(self.shape)
        if keepdim:
            out_shape[wrapped_dim] = 1
        else:
            del out_shape[wrapped_dim]
    elif keepdim:
        out_shape = [1] * self.dim()
    else:
        out_shape = []
    if q.dim() > 0:
        out_shape.insert(0, q.numel())
    return out_shape


def _quantile_compute(self, q, dim, keepdim, interpolation, ignore_nan, wrapped_dim, out_shape):
    if self.device.type == "cpu" and not _is_true(q.ge(0).logical_and_(q.le(1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    # flatten without dim, else move dim last; sorting makes the kth values a gather
    if dim is None:
        s = self.flatten().sort()[0]
    elif wrapped_dim == self.dim() - 1:
        s = self.sort()[0]
    else:
        s = self.unsqueeze(-1).transpose(wrapped_dim, -1).sort()[0]
    if q.dim() == 0:
        out_shape = [q.numel()] + out_shape
    in_shape = out_shape[1:] + [s.shape[-1]]  # (*reduced shape, n)
    s = s.view(in_shape)
    if s.shape[-1] > 2 ** 24:
        raise RuntimeError("quantile() input tensor is too large")
    # q in [0, 1] -> ranks in [0, n-1]
    if ignore_nan:
        # ranks over the non-nan values; all nan: rank 0, so the quantile is nan
        ranks = q * (s.isnan().logical_not_().sum(-1, True) - 1)
        ranks.masked_fill_(ranks < 0, 0)
    else:
        # a nan in the row: the last rank, so the quantile is nan (sort puts nan last)
        last_index = s.shape[-1] - 1
        tl = _P("broadcast_tensors")([q * last_index, s.isnan().any(-1, True)])
        ranks = _P("masked_fill")(tl[0], tl[1], last_index)
    if interpolation == "lower":
        ranks.floor_()
    elif interpolation == "higher":
        ranks.ceil_()
    elif interpolation == "nearest":
        ranks.round_()
    ranks_below = ranks.to(D.int64)
    values_below = s.gather(-1, ranks_below)
    if interpolation in ("linear", "midpoint"):
        weights = _P("full_like")(ranks, 0.5) if interpolation == "midpoint" else ranks - ranks_below
        ranks_above = ranks.ceil_().to(D.int64)
        values_above = s.gather(-1, ranks_above)
        values_below.lerp_(values_above, weights)
    if q.dim() == 0:
        values_below.squeeze_(-1)  # a scalar q: drop the q dim
    else:
        values_below.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)  # the q dim first
    return values_below


def _quantile(self, q, dim, keepdim, interpolation, ignore_nan):
    _quantile_checks(self, q)
    _check_interpolation(interpolation)
    wrapped_dim = _wrap_dim(dim if dim is not None else 0, self.dim())
    out_shape = _output_shape(dim, self, q, keepdim, wrapped_dim)
    return _quantile_compute(self, q, dim, keepdim, interpolation, ignore_nan, wrapped_dim, out_shape)


def _scalar_q(self, q):
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    return _P("scalar_tensor")(q, dtype=self.dtype, device=self.device)


_SCHEMA = ("{name}{overload}(Tensor self, {q}, int? dim=None, bool keepdim=False, *, "
           "str interpolation='linear') -> Tensor")


def _register(name, ignore_nan):
    tensor_q = decomposed(_SCHEMA.format(name=name, overload="", q="Tensor q"), variants=_FM)(
        lambda self, q, dim, keepdim, interpolation:
        _quantile(self, q, dim, keepdim, interpolation, ignore_nan))
    scalar_q = decomposed(_SCHEMA.format(name=name, overload=".scalar", q="float q"), variants=_FM)(
        lambda self, q, dim, keepdim, interpolation:
        _quantile(self, _scalar_q(self, q), dim, keepdim, interpolation, ignore_nan))
    return tensor_q, scalar_q


quantile, quantile_scalar = _register("quantile", False)
nanquantile, nanquantile_scalar = _register("nanquantile", True)
