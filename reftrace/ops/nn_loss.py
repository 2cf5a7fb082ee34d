"""Losses: cross_entropy_loss, nll_loss_nd (and nll_loss / nll_loss2d), mse_loss.

torch's Python layer turns ``reduction='mean'|'sum'|'none'`` into an int before the call
(``_Reduction.get_enum``: none=0, mean=1, sum=2), so a trace records ``aten::cross_entropy_loss``
/ ``aten::nll_loss_nd`` / ``aten::mse_loss`` with that int. cross_entropy_loss is one recorded
op: the log_softmax and nll_loss it runs inside are not recorded.

Sums are taken in float64 and rounded once to the input dtype.
"""
import numpy as np

from .. import _dtype as D
from .._promotion import result_type
from .._tensor import _fresh, xp_of
from .nn_conv import sizes
from ._iter import broadcast_shapes
from ._registry import OVERLOADS, composite, derivatives, op
from ..autograd._variable_type import record_without_formula
from reftrace_backends import get_backend

NONE, MEAN, SUM = 0, 1, 2


def _result(x, value, dtype=None):
    dtype = dtype or x.dtype
    xp = xp_of(x)
    return _fresh(xp.asarray(value).astype(dtype.np), dtype, x.device)


def _log_softmax(a, axis):
    shifted = a - a.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _nll(logp, target, weight, reduction, ignore_index, class_axis):
    """Negative log-likelihood on float64 arrays: logp (N, C, ...) or (C,), target its shape
    without the class axis. Returns the reduced array (0-dim or target-shaped)."""
    xp = np if isinstance(logp, np.ndarray) else get_backend("cuda").xp
    n_classes = logp.shape[class_axis]
    ignored = target == ignore_index
    safe = xp.where(ignored, 0, target)
    bad = (~ignored) & ((target < 0) | (target >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    picked = xp.take_along_axis(logp, xp.expand_dims(safe, class_axis), axis=class_axis)
    picked = xp.squeeze(picked, axis=class_axis)
    w = weight[safe] if weight is not None else xp.ones(target.shape)
    w = xp.where(ignored, 0.0, w)
    losses = -picked * w
    if reduction == NONE:
        return losses
    if reduction == SUM:
        return losses.sum()
    total = w.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return losses.sum() / total  # all ignored: 0 / 0 = nan, as torch


def _check_weight(weight, n_classes):
    if weight is not None and weight._array.size != n_classes:
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no "
                           f"classes but got weight tensor of shape: {sizes(weight.shape_tuple)}")


def _check_target(self, target):
    if self.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.ndim})")
    if self.ndim != 1 and self.shape_tuple[0] != target.shape_tuple[0]:
        raise ValueError(f"Expected input batch_size ({self.shape_tuple[0]}) to match target "
                         f"batch_size ({target.shape_tuple[0]}).")
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected scalar type Long but found {target.dtype.ir_name}")
    expected = self.shape_tuple[:1] + self.shape_tuple[2:] if self.ndim > 1 else ()
    if target.shape_tuple != expected:
        if self.ndim <= 2:
            if target.ndim > 1:
                raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
            raise RuntimeError(f"size mismatch (got input: {sizes(self.shape_tuple)} , target: "
                               f"{sizes(target.shape_tuple)})")
        raise RuntimeError(f"size mismatch (got input: {sizes(self.shape_tuple)}, target: "
                           f"{sizes(target.shape_tuple)}")


def _float64(t):
    return None if t is None else t._array.astype(np.float64)


@op("nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "SymInt ignore_index=-100) -> Tensor", variants=())
def nll_loss_nd(self, target, weight, reduction, ignore_index):
    _check_target(self, target)
    class_axis = 0 if self.ndim == 1 else 1
    _check_weight(weight, self.shape_tuple[class_axis])
    out = _nll(_float64(self), target._array.astype(np.int64), _float64(weight), reduction,
               ignore_index, class_axis)
    return _result(self, out)


@composite(nll_loss_nd)
def _nll_loss_nd_composite(self, target, weight, reduction, ignore_index):
    # LossNLL.cpp nll_loss_nd: 1-2 dims -> nll_loss, 4 -> nll_loss2d, else reshaped to 4-d
    if self.dim() <= 2:
        return nll_loss(self, target, weight, reduction, ignore_index)
    if self.dim() == 4:
        return nll_loss2d(self, target, weight, reduction, ignore_index)
    return record_without_formula(nll_loss_nd, [self, target, weight, reduction, ignore_index])


@op("nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "SymInt ignore_index=-100) -> Tensor", variants=())
def nll_loss(self, target, weight, reduction, ignore_index):
    if self.ndim > 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    return nll_loss_nd.kernel(self, target, weight, reduction, ignore_index)


derivatives(nll_loss, {"self": "nll_loss_backward(grad, self, target, weight, reduction, ignore_index)",
                       "target": "non_differentiable"})


@op("nll_loss2d(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "SymInt ignore_index=-100) -> Tensor", variants=())
def nll_loss2d(self, target, weight, reduction, ignore_index):
    if target.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets "
                           f"of dimension: {target.ndim}")
    return nll_loss_nd.kernel(self, target, weight, reduction, ignore_index)


derivatives(nll_loss2d, {"self": "nll_loss_backward(grad, self, target, weight, reduction, ignore_index)",
                         "target": "non_differentiable"})


@op("cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "SymInt ignore_index=-100, float label_smoothing=0.) -> Tensor", variants=())
def cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing):
    class_axis = 0 if self.ndim == 1 else 1
    if self.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {self.ndim})")
    n_classes = self.shape_tuple[class_axis]
    # log_softmax is computed and rounded in the input dtype first, as torch's composite does
    logp = _log_softmax(_float64(self), class_axis).astype(self.dtype.np).astype(np.float64)
    w = _float64(weight)
    wshape = (-1,) + (1,) * (self.ndim - 1 - class_axis)
    if self.shape_tuple == target.shape_tuple:  # class probabilities
        if not target.dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class probabilities, "
                               f"got {target.dtype.ir_name}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        p = _float64(target)
        if label_smoothing > 0:
            p = p * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * p * (w.reshape(wshape) if w is not None else 1)
        losses = -terms.sum(axis=class_axis)
        if reduction == NONE:
            return _result(self, losses)
        if reduction == SUM:
            return _result(self, losses.sum())
        return _result(self, losses.sum() / (self._array.size / n_classes) if self._array.size
                       else np.nan)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    _check_target(self, target)
    _check_weight(weight, n_classes)
    t = target._array.astype(np.int64)
    nll = _nll(logp, t, w, reduction, ignore_index, class_axis)
    if label_smoothing <= 0:
        return _result(self, nll)
    # torch's cross_entropy_loss_label_smoothing: mix in the mean over classes of -log p
    ignored = t == ignore_index
    smooth = -(logp * (w.reshape(wshape) if w is not None else 1)).sum(axis=class_axis)
    smooth = np.where(ignored, 0.0, smooth)
    if reduction == MEAN:
        denom = w[t[~ignored]].sum() if w is not None else (~ignored).sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            smooth = smooth.sum() / denom
    elif reduction == SUM:
        smooth = smooth.sum()
    return _result(self, (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes))


@composite(cross_entropy_loss)
def _cross_entropy_composite(self, target, weight, reduction, ignore_index, label_smoothing):
    # LossNLL.cpp cross_entropy_loss: log_softmax over the class dim, then nll_loss_nd
    class_dim = 0 if self.dim() == 1 else 1
    if self.shape_tuple == target.shape_tuple and target.dtype.is_floating_point:
        # cross_entropy_loss_prob_target: -(log_softmax * target [* weight]) reduced
        cross_entropy_loss.kernel(self, target, weight, reduction, ignore_index, label_smoothing)
        n_classes = self.shape_tuple[class_dim]
        logp = self.log_softmax(class_dim)
        target_ = target * (1 - label_smoothing) + (label_smoothing / n_classes) \
            if label_smoothing > 0 else target
        terms = logp * target_
        if weight is not None:
            shape = [1] * self.dim()
            shape[class_dim] = weight.shape_tuple[0]
            terms = terms * (weight.view(shape) if self.dim() > 1 else weight)
        if reduction == MEAN:  # C++ divides by a number: div.Scalar (DivBackward1)
            return OVERLOADS["aten::div.Scalar"](-terms.sum(), self.numel() / n_classes)
        return -terms.sum() if reduction == SUM else -terms.sum(class_dim)
    if label_smoothing > 0:  # class indices with label smoothing: no gradient yet
        return record_without_formula(cross_entropy_loss, [self, target, weight, reduction,
                                                           ignore_index, label_smoothing])
    return nll_loss_nd(self.log_softmax(0 if self.dim() == 1 else 1), target, weight, reduction,
                       ignore_index)


@op("mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", variants=())
def mse_loss(self, target, reduction):
    dtype = result_type(self, target)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{dtype.ir_name}'")
    broadcast_shapes(self.shape_tuple, target.shape_tuple)
    diff = self._array.astype(np.float64) - target._array.astype(np.float64)
    sq = diff * diff
    if reduction == NONE:
        return _result(self, sq, dtype)
    return _result(self, sq.sum() if reduction == SUM else sq.mean(), dtype)


derivatives(mse_loss, {"self": "mse_loss_backward(grad, self, target, reduction)",
                       "target": "mse_loss_backward(grad, target, self, reduction)"})
