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
    nll_loss_nd.kernel(self, target, weight, reduction, ignore_index)  # its checks
    # dim 3 or > 4: viewed as (N, C, 1, -1) for nll_loss2d, the unreduced loss viewed back
    n, c = self.shape_tuple[:2]
    out_size = [n] + list(self.shape_tuple[2:])
    input_ = self.contiguous()
    target_ = target.contiguous()
    input_ = input_.view([n, c, 1, -1]) if input_.numel() > 0 else input_.view([n, c, 0, 0])
    target_ = target_.view([n, 1, -1]) if target_.numel() > 0 else target_.view([n, 0, 0])
    out = nll_loss2d(input_, target_, weight, reduction, ignore_index)
    return out if reduction != NONE else out.view(out_size)


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
    if label_smoothing > 0:
        return _label_smoothing_composite(self, target, weight, reduction, ignore_index,
                                          label_smoothing)
    return nll_loss_nd(self.log_softmax(0 if self.dim() == 1 else 1), target, weight, reduction,
                       ignore_index)


def _label_smoothing_composite(self, target, weight, reduction, ignore_index, label_smoothing):
    # LossNLL.cpp cross_entropy_loss_label_smoothing, op for op
    class_dim = 0 if self.dim() == 1 else 1
    input = self.log_softmax(class_dim)
    nllloss = nll_loss_nd(input, target, weight, reduction, ignore_index)
    n_classes = input.shape_tuple[class_dim]
    ignore_mask = target == ignore_index
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = weight.shape_tuple[0]
        smooth_loss = -(input * weight.view(shape)).sum(class_dim)
    else:
        smooth_loss = -input.sum(class_dim)
    smooth_loss.masked_fill_(ignore_mask, 0.0)
    if reduction == MEAN:
        if weight is not None:
            ret = smooth_loss.sum() / weight.gather(0, target.masked_select(~ignore_mask)
                                                    .flatten()).sum()
        else:
            ret = smooth_loss.sum() / (~ignore_mask).sum()
    elif reduction == SUM:
        ret = smooth_loss.sum()
    else:
        ret = smooth_loss
    return (1 - label_smoothing) * nllloss + ret * (label_smoothing / n_classes)


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
# -- nn-layers: the other losses ---------------------------------------------------------------------
# Each computes the unreduced loss in float64 (ATen's formula, in its order) and reduces it with
# apply_loss_reduction: none -> as is, mean -> mean over all elements, sum -> sum.

def _reduce(x, losses, reduction, dtype=None):
    if reduction == MEAN:
        losses = losses.mean()
    elif reduction == SUM:
        losses = losses.sum()
    return _result(x, losses, dtype)


def apply_loss_reduction(unreduced, reduction):
    """Loss.cpp's apply_loss_reduction over recorded ops: the composite losses end with it."""
    if reduction == MEAN:
        return unreduced.mean()
    if reduction == SUM:
        return unreduced.sum()
    return unreduced


def _pointwise_loss(self, target, name):
    """(a, b, dtype): both operands broadcast, in float64, and the result dtype."""
    dtype = result_type(self, target)
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{dtype.ir_name}'")
    shape = broadcast_shapes(self.shape_tuple, target.shape_tuple)
    xp = xp_of(self)
    return (xp.broadcast_to(_float64(self), shape), xp.broadcast_to(_float64(target), shape),
            dtype)


@op("binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) "
    "-> Tensor", variants=())
def binary_cross_entropy(self, target, weight, reduction):
    if self.shape_tuple != target.shape_tuple:
        raise RuntimeError(f"The size of tensor a ({self.shape_tuple[-1]}) must match the size of "
                           f"tensor b ({target.shape_tuple[-1]}) at non-singleton dimension "
                           f"{self.ndim - 1}")
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for '{self.dtype.ir_name}'")
    a, t = _float64(self), _float64(target)
    if ((a < 0) | (a > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore"):
        losses = (t - 1) * np.maximum(np.log1p(-a), -100) - t * np.maximum(np.log(a), -100)
    if weight is not None:
        losses = losses * _float64(weight)
    return _reduce(self, losses, reduction)


derivatives(binary_cross_entropy, {
    "self": "binary_cross_entropy_backward(grad, self, target, weight, reduction)",
    "target": "binary_cross_entropy_target_backward(grad, self, target, weight, reduction)"})


@op("binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, int reduction=1) -> Tensor")
def binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction):
    a, t, dtype = _pointwise_loss(self, target, "binary_cross_entropy_with_logits")
    log_sigmoid = np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))
    if pos_weight is not None:
        log_weight = (_float64(pos_weight) - 1) * t + 1
        losses = (1 - t) * a - log_weight * log_sigmoid
    else:
        losses = (1 - t) * a - log_sigmoid
    if weight is not None:
        losses = losses * _float64(weight)
    return _reduce(self, losses, reduction, dtype)


derivatives(binary_cross_entropy_with_logits, {
    "self": "binary_cross_entropy_with_logits_backward(grad, self, target, weight, pos_weight, "
            "reduction)",
    "target": "binary_cross_entropy_with_logits_target_backward(grad, self, target, weight, "
              "pos_weight, reduction)"})


@op("l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", variants=())
def l1_loss(self, target, reduction):
    # torch's l1_loss is CompositeImplicitAutograd with or without grad: its values, dtypes (a
    # complex input's loss is real) and errors are those of sub, abs and the reduction
    return _l1_loss_composite(self, target, reduction)


@composite(l1_loss)
def _l1_loss_composite(self, target, reduction):
    # Loss.cpp l1_loss: (self - target).abs(), reduced
    return apply_loss_reduction((self - target).abs(), reduction)


@op("smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor",
    variants=())
def smooth_l1_loss(self, target, reduction, beta):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    a, t, dtype = _pointwise_loss(self, target, "smooth_l1_cpu")
    z = np.abs(a - t)
    losses = z if beta == 0 else np.where(z < beta, 0.5 * z * z / (beta or 1), z - 0.5 * beta)
    return _reduce(self, losses, reduction, dtype)


derivatives(smooth_l1_loss, {"self": "smooth_l1_loss_backward(grad, self, target, reduction, beta)",
                             "target": "smooth_l1_loss_backward(grad, target, self, reduction, "
                                       "beta)"})


@op("huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.0) -> Tensor",
    variants=())
def huber_loss(self, target, reduction, delta):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    a, t, dtype = _pointwise_loss(self, target, "huber_cpu")
    z = np.abs(a - t)
    return _reduce(self, np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction,
                   dtype)


derivatives(huber_loss, {"self": "huber_loss_backward(grad, self, target, reduction, delta)",
                         "target": "huber_loss_backward(grad, target, self, reduction, delta)"})


@op("kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor")
def kl_div(self, target, reduction, log_target):
    a, t, dtype = _pointwise_loss(self, target, "kl_div")
    with np.errstate(divide="ignore", invalid="ignore"):
        if log_target:
            losses = np.exp(t) * (t - a)
        else:  # xlogy(t, t) - t * a: 0 where t == 0
            losses = np.where(t == 0, 0.0, t * np.log(np.where(t == 0, 1, t))) - t * a
            losses = np.where(np.isnan(t), np.nan, losses)
    return _reduce(self, losses, reduction, dtype)


@composite(kl_div)
def _kl_div_composite(self, target, reduction, log_target):
    # Loss.cpp kl_div, in its order
    kl_div.kernel(self, target, reduction, log_target)  # its checks
    if log_target:
        output = target.exp() * (target - self)
    else:
        output = OVERLOADS["aten::xlogy.Tensor"](target, target) - target * self
    return apply_loss_reduction(output, reduction)


@op("poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, "
    "int reduction) -> Tensor")
def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    a, t, dtype = _pointwise_loss(input, target, "poisson_nll_loss")
    with np.errstate(divide="ignore", invalid="ignore"):
        losses = np.exp(a) - t * a if log_input else a - t * np.log(a + eps)
        if full:
            stirling = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
            losses = losses + np.where(t <= 1, 0.0, stirling)
    return _reduce(input, losses, reduction, dtype)


@composite(poisson_nll_loss)
def _poisson_nll_loss_composite(input, target, log_input, full, eps, reduction):
    # Loss.cpp poisson_nll_loss, in its order
    poisson_nll_loss.kernel(input, target, log_input, full, eps, reduction)  # its checks
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling_term = target * target.log() - target + 0.5 * (2 * np.pi * target).log()
        loss = loss + stirling_term.masked_fill(target <= 1, 0)  # loss += ...: AddBackward0
    return apply_loss_reduction(loss, reduction)


@op("margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, "
    "int reduction=1) -> Tensor")
def margin_ranking_loss(input1, input2, target, margin, reduction):
    shape = broadcast_shapes(broadcast_shapes(input1.shape_tuple, input2.shape_tuple),
                             target.shape_tuple)
    dtype = result_type(input1, input2, target)
    losses = np.maximum(-_float64(target) * (_float64(input1) - _float64(input2)) + margin, 0)
    return _reduce(input1, np.broadcast_to(losses, shape), reduction, dtype)


@composite(margin_ranking_loss)
def _margin_ranking_loss_composite(input1, input2, target, margin, reduction):
    # Loss.cpp margin_ranking_loss: (-target * (input1 - input2) + margin).clamp_min_(0), reduced
    margin_ranking_loss.kernel(input1, input2, target, margin, reduction)  # its checks
    output = (-target * (input1 - input2) + margin).clamp_min_(0)
    return apply_loss_reduction(output, reduction)


@op("hinge_embedding_loss(Tensor self, Tensor target, float margin=1.0, int reduction=1) "
    "-> Tensor")
def hinge_embedding_loss(self, target, margin, reduction):
    a, t, dtype = _pointwise_loss(self, target, "hinge_embedding_loss")
    losses = np.where(t != 1, np.maximum(margin - a, 0), 0.0) + np.where(t != -1, a, 0.0)
    return _reduce(self, losses, reduction, dtype)


@composite(hinge_embedding_loss)
def _hinge_embedding_loss_composite(self, target, margin, reduction):
    # Loss.cpp hinge_embedding_loss, in its order
    hinge_embedding_loss.kernel(self, target, margin, reduction)  # its checks
    zeros = self.new_zeros(self.shape_tuple)
    margin_clamp = (margin - self).clamp_min_(0)
    output_margin = margin_clamp.where(target != 1, zeros)
    output_self = self.where(target != -1, zeros)
    return apply_loss_reduction(output_margin + output_self, reduction)


@op("soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", variants=())
def soft_margin_loss(self, target, reduction):
    a, t, dtype = _pointwise_loss(self, target, "soft_margin_loss")
    return _reduce(self, np.log1p(np.exp(-t * a)), reduction, dtype)


derivatives(soft_margin_loss, {"self": "soft_margin_loss_backward(grad, self, target, reduction)"})


@op("cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, "
    "int reduction=1) -> Tensor")
def cosine_embedding_loss(input1, input2, target, margin, reduction):
    targ_dim = target.ndim
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1:
        if input1.ndim != 2 or input2.ndim != 2:
            raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                               f"sizes {sizes(input1.shape_tuple)} and {sizes(input2.shape_tuple)}.")
    elif input1.ndim != 1 or input2.ndim != 1:
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{sizes(input1.shape_tuple)} and {sizes(input2.shape_tuple)}.")
    axis = targ_dim
    a, b, t = _float64(input1), _float64(input2), _float64(target)
    eps = 1e-12
    cos = (a * b).sum(axis) / np.sqrt(((a * a).sum(axis) + eps) * ((b * b).sum(axis) + eps))
    losses = np.where(t == 1, 1 - cos, 0.0) + np.where(t == -1, np.maximum(cos - margin, 0), 0.0)
    return _reduce(input1, losses, reduction, result_type(input1, input2))


@composite(cosine_embedding_loss)
def _cosine_embedding_loss_composite(input1, input2, target, margin, reduction):
    # Loss.cpp cosine_embedding_loss, in its order (EPSILON = 1e-12)
    cosine_embedding_loss.kernel(input1, input2, target, margin, reduction)  # its checks
    targ_dim = target.dim()
    prod_sum = (input1 * input2).sum(targ_dim)
    mag_square1 = (input1 * input1).sum(targ_dim) + 1e-12
    mag_square2 = (input2 * input2).sum(targ_dim) + 1e-12
    denom = (mag_square1 * mag_square2).sqrt_()
    cos = prod_sum / denom
    zeros = cos.new_zeros(cos.shape_tuple)
    pos = 1 - cos
    neg = (cos - margin).clamp_min_(0)
    output_pos = pos.where(target == 1, zeros)
    output_neg = neg.where(target == -1, zeros)
    return apply_loss_reduction(output_pos + output_neg, reduction)


def _pairwise(a, b, p, eps):
    diff = np.abs(a - b + eps)
    axis = max(a.ndim, b.ndim) - 1
    if p == np.inf:
        return diff.max(axis=axis)
    return (diff ** p).sum(axis=axis) ** (1.0 / p)


@op("triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, "
    "float p=2, float eps=1e-06, bool swap=False, int reduction=1) -> Tensor")
def triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction):
    dims = {anchor.ndim, positive.ndim, negative.ndim}
    if len(dims) != 1:
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
            f"{negative.ndim}D inputs")
    a, pos, neg = _float64(anchor), _float64(positive), _float64(negative)
    d_pos = _pairwise(a, pos, p, eps)
    d_neg = _pairwise(a, neg, p, eps)
    if swap:
        d_neg = np.minimum(d_neg, _pairwise(pos, neg, p, eps))
    return _reduce(anchor, np.maximum(margin + d_pos - d_neg, 0), reduction)


@composite(triplet_margin_loss)
def _triplet_margin_loss_composite(anchor, positive, negative, margin, p, eps, swap, reduction):
    # Loss.cpp triplet_margin_loss: pairwise distances, clamp_min, reduced
    triplet_margin_loss.kernel(anchor, positive, negative, margin, p, eps, swap, reduction)
    pairwise_distance = OVERLOADS["aten::pairwise_distance"]
    dist_pos = pairwise_distance(anchor, positive, p, eps, False)
    dist_neg = pairwise_distance(anchor, negative, p, eps, False)
    if swap:
        dist_neg = OVERLOADS["aten::min.other"](dist_neg, pairwise_distance(positive, negative, p,
                                                                            eps, False))
    output = (margin + dist_pos - dist_neg).clamp_min(0)
    return apply_loss_reduction(output, reduction)


@op("multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, "
    "int reduction=1) -> Tensor", variants=())
def multi_margin_loss(self, target, p, margin, weight, reduction):
    a = _float64(self)
    if self.ndim > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {sizes(self.shape_tuple)}")
    x = a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1)
    n, c = x.shape
    t = target._array.reshape(-1).astype(np.int64)
    if t.size != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got "
                           f"{sizes(target.shape_tuple)}")
    if ((t < 0) | (t >= c)).any():
        raise RuntimeError("target out of range")
    rows = np.arange(n)
    z = np.maximum(margin - x[rows, t][:, None] + x, 0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * _float64(weight)[t][:, None]
    z[rows, t] = 0
    losses = z.sum(1) / c
    if reduction == NONE:
        losses = losses.reshape(target.shape_tuple)
    return _reduce(self, losses, reduction)


derivatives(multi_margin_loss, {"self": "multi_margin_loss_backward(grad, self, target, p, margin, "
                                        "weight, reduction)", "target": "non_differentiable"})


@op("multilabel_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", variants=())
def multilabel_margin_loss(self, target, reduction):
    return multilabel_margin_loss_forward.kernel(self, target, reduction)[0]


@composite(multilabel_margin_loss)
def _multilabel_margin_loss_composite(self, target, reduction):
    # Loss.cpp: the output of multilabel_margin_loss_forward (MultilabelMarginLossBackward0)
    return multilabel_margin_loss_forward(self, target, reduction)[0]


@op("multilabel_margin_loss_forward(Tensor self, Tensor target, int reduction) -> "
    "(Tensor output, Tensor is_target)", variants=())
def multilabel_margin_loss_forward(self, target, reduction):
    a = _float64(self)
    x = a.reshape(-1, a.shape[-1]) if a.ndim else a.reshape(1, 1)
    n, c = x.shape
    t = target._array.reshape(n, c).astype(np.int64)
    if ((t < -1) | (t >= c)).any():
        raise RuntimeError("target out of range")
    # the targets of a row are its entries up to the first -1
    valid = np.cumprod(t >= 0, axis=1).astype(bool)
    is_target = np.zeros((n, c), dtype=bool)
    rows = np.repeat(np.arange(n), c).reshape(n, c)
    is_target[rows[valid], t[valid]] = True
    picked = np.take_along_axis(x, np.where(valid, t, 0), 1)        # x[target_j]
    hinge = np.maximum(1 - (picked[:, :, None] - x[:, None, :]), 0)   # (n, j, k)
    mask = valid[:, :, None] & ~is_target[:, None, :]
    losses = (hinge * mask).sum((1, 2)) / c
    if reduction == NONE:
        losses = losses.reshape(self.shape_tuple[:-1]) if self.ndim > 1 else losses.reshape(())
    return (_reduce(self, losses, reduction),
            _result(self, is_target.reshape(target.shape_tuple)))


derivatives(multilabel_margin_loss_forward, {
    "self": "multilabel_margin_loss_backward(grad, self, target, reduction, is_target)",
    "target": "non_differentiable"})
