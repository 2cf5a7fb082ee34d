"""torch/nn/utils/clip_grad.py: gradient clipping by total norm or by value.

Written against ``p.grad`` as torch's (the autograd engine fills it); parameters without a
gradient are skipped. The total norm is the norm of the per-tensor norms, computed with
linalg_vector_norm; the clip coefficient is clamped to 1 and multiplies every gradient in place.
"""
import warnings

import reftrace
from ...autograd import no_grad


def _grads(tensors):
    if isinstance(tensors, reftrace.Tensor):
        tensors = [tensors]
    return [t for t in tensors if t is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    tensors = _grads(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return reftrace.tensor(0.0)
    with no_grad():
        # Tensor.norm(p) is aten::linalg_vector_norm, what torch's _foreach_norm computes
        norms = [g.norm(norm_type) for g in tensors]
        total_norm = reftrace.stack(norms).norm(norm_type)
    if error_if_nonfinite and (total_norm.isnan().item() or total_norm.isinf().item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total_norm


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    if isinstance(parameters, reftrace.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    with no_grad():
        clip_coef = max_norm / (total_norm + 1e-6)
        clip_coef_clamped = reftrace.clamp(clip_coef, max=1.0)
        for g in grads:
            g.mul_(clip_coef_clamped)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(parameters, reftrace.Tensor):
        parameters = [parameters]
    else:
        parameters = list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    if isinstance(parameters, reftrace.Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]
