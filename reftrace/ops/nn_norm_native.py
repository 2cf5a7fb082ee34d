"""The native normalisation kernels behind the composites of nn_norm.py (torch's
Normalization.cpp, layer_norm.cpp, group_norm.cpp): ``native_batch_norm``,
``_native_batch_norm_legit`` (+ ``.no_stats``), ``_batch_norm_with_update``,
``native_layer_norm``, ``native_group_norm``, their backward ops, and
``native_dropout_backward``.

They return the statistics torch saves for the backward pass, as torch returns them:
- batch norm: ``save_mean`` and ``save_invstd`` (1 / sqrt(biased var + eps)) of shape (C,) in
  training, empty (0,) in evaluation;
- layer norm: ``mean`` and ``rstd`` of the input's shape with the normalized dims kept as 1s;
- group norm: ``mean`` and ``rstd`` of shape (N, group).
Their dtype is ATen's ``param_scalar_type``: float32 when a float16 input comes with float32
parameters (``is_mixed_type``: the first defined parameter's dtype differs from the input's),
else the input's dtype. The kernels themselves are nn_norm.py's (computed in float64, rounded
once).
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, scalar_to_tensor
from ._decomposed import decomposed
from ._registry import derivatives, op
from .arithmetic import mul
from .nn_conv import sizes
from .nn_norm import batch_norm_stats, group_norm_stats, layer_norm_stats, param_dtype


def _stat(array, dtype, device):
    return _fresh(np.ascontiguousarray(array, dtype=dtype.np), dtype, device)


# -- batch norm -------------------------------------------------------------------------------------

def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    out, mean, invstd = batch_norm_stats(input, weight, bias, running_mean, running_var, training,
                                      momentum, eps)
    dtype = param_dtype(input, weight, bias, running_mean, running_var)
    if not training:  # (evaluation saves nothing: empty statistics)
        return out, _stat(np.zeros(0), dtype, input.device), _stat(np.zeros(0), dtype, input.device)
    if mean is None:  # a 1-d input: no channel dim, no features
        mean = invstd = np.zeros(0)
    return out, _stat(mean, dtype, input.device), _stat(invstd, dtype, input.device)


_BATCH_NORM_GRAD = ("native_batch_norm_backward(grad, input, weight, running_mean, running_var, "
                    "result1, result2, training, eps, grad_input_mask) if grad is not None "
                    "else (None, None, None)")


@op("native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                              eps)


# (torch's codegen: a formula that reads only `grad` makes only the first output differentiable)
derivatives(native_batch_norm, {"input, weight, bias": _BATCH_NORM_GRAD},
            output_differentiability=[True, False, False])


@op("_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, "
    "Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)")
def _native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum,
                             eps):
    return _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                              eps)


derivatives(_native_batch_norm_legit, {"input, weight, bias": _BATCH_NORM_GRAD},
            output_differentiability=[True, False, False])


@op("_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, "
    "float momentum, float eps) -> (Tensor, Tensor, Tensor)")
def _native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    return _native_batch_norm(input, weight, bias, None, None, training, momentum, eps)


derivatives(_native_batch_norm_legit_no_stats, {
    "input, weight, bias": "native_batch_norm_backward(grad, input, weight, None, None, result1, "
                           "result2, training, eps, grad_input_mask) if grad is not None "
                           "else (None, None, None)"},
            output_differentiability=[True, False, False])


@op("_batch_norm_with_update(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, "
    "Tensor(b!) running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor)",
    variants=())  # (torch.ops.aten only, as the backward ops below)
def _batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    out, save_mean, save_invstd = _native_batch_norm(input, weight, bias, running_mean, running_var,
                                                     True, momentum, eps)
    # the reserve buffer is cudnn's; the CPU kernel returns it empty
    return out, save_mean, save_invstd, _fresh(np.zeros(0, np.uint8), D.uint8, input.device)


# The yaml's batch_norm_backward(..., update=true, ..., reserve) is, on the CPU,
# native_batch_norm_backward with train=true (Normalization.cpp _new_batch_norm_backward_cpu);
# the reserve clone for retain_variables is cudnn's.
derivatives(_batch_norm_with_update, {
    "input, weight, bias": "native_batch_norm_backward(grad, input, weight, running_mean, "
                           "running_var, result1, result2, True, eps, grad_input_mask) "
                           "if grad is not None else (None, None, None)"},
            output_differentiability=[True, False, False, False])


def _reduced(t, axes):
    """t summed over ``axes`` (a list; none: t itself)."""
    return t.sum(axes) if axes else t


@decomposed("native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
            "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
            "bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)", variants=())
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):
    """batch_norm_backward_cpu_template, written with ops (so it differentiates again): with
    xhat = (x - mean) * invstd and g = grad_out * weight,
    training:   grad_input = (g - mean(g) - xhat * mean(g * xhat)) * invstd,
    evaluation: grad_input = g * invstd (the running statistics are constants);
    grad_weight = sum(grad_out * xhat), grad_bias = sum(grad_out), over all dims but 1."""
    nd = input.dim()
    axes = [0] + list(range(2, nd))
    shape = [1, -1] + [1] * (nd - 2)
    if train:
        # (the batch statistics again, from input rather than save_mean / save_invstd: as
        # batchnorm_double_backward knows, they depend on input, and a double backward through
        # these ops must see that)
        mean = input.mean(axes, True)
        invstd = ((input - mean) * (input - mean)).mean(axes, True).add(eps).rsqrt()
    else:
        mean, invstd = running_mean.reshape(shape), (running_var + eps).rsqrt().reshape(shape)
    xhat = (input - mean) * invstd
    g = grad_out * weight.reshape(shape) if weight is not None else grad_out
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        if train:
            n = input.numel() // max(input.shape_tuple[1], 1)
            grad_input = (g - g.sum(axes, True) / n - xhat * ((g * xhat).sum(axes, True) / n)) * invstd
        else:
            grad_input = g * invstd
        grad_input = grad_input.to(input.dtype)
    if output_mask[1]:
        grad_weight = _reduced(grad_out * xhat, axes)
    if output_mask[2]:
        grad_bias = _reduced(grad_out, axes)
    return grad_input, grad_weight, grad_bias


# -- layer norm -------------------------------------------------------------------------------------

@op("native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor, Tensor, Tensor)")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    out, mean, rstd = layer_norm_stats(input, normalized_shape, weight, bias, eps)
    dtype = param_dtype(input, weight, bias)
    return out, _stat(mean, dtype, input.device), _stat(rstd, dtype, input.device)


derivatives(native_layer_norm, {
    "input, weight, bias": "native_layer_norm_backward(grad, input, normalized_shape, result1, "
                           "result2, weight, bias, grad_input_mask) if grad is not None "
                           "else (None, None, None)"},
            output_differentiability=[True, False, False])


@decomposed("native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
            "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) "
            "-> (Tensor, Tensor, Tensor)", variants=())
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    """layer_norm_backward_cpu, with ops: as batch norm's, over the normalized (last) dims;
    grad_weight / grad_bias sum over the leading ones."""
    nd, k = input.dim(), len(normalized_shape)
    axes, lead = list(range(nd - k, nd)), list(range(nd - k))
    # (the statistics again, from input: see native_batch_norm_backward; the schema has no eps,
    # so it is recovered from rstd as a constant: 1 / rstd^2 - var)
    mean = input.mean(axes, True)
    var = ((input - mean) * (input - mean)).mean(axes, True)
    eps = rstd.detach().pow(-2) - var.detach()
    rstd = (var + eps).rsqrt()
    xhat = (input - mean) * rstd
    g = grad_out * weight if weight is not None else grad_out
    n = 1
    for s in normalized_shape:
        n *= s
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_input = ((g - g.sum(axes, True) / n - xhat * ((g * xhat).sum(axes, True) / n)) *
                      rstd).to(input.dtype)
    if output_mask[1] and weight is not None:
        grad_weight = _reduced(grad_out * xhat, lead).to(weight.dtype)
    if output_mask[2] and bias is not None:
        grad_bias = _reduced(grad_out, lead).to(bias.dtype)
    return grad_input, grad_weight, grad_bias


# -- group norm -------------------------------------------------------------------------------------

@op("native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, "
    "SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    xs = input.shape_tuple
    if input.numel() != N * C * HxW:  # (group_norm.cpp's TORCH_CHECKs, in its words)
        raise RuntimeError(f"Expected input.numel() == N * C * HxW to be true, but got false.")
    if C % group:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but "
                           f"got input of shape {sizes(xs)} and num_groups={group}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {sizes(t.shape_tuple)} "
                               f"and input of shape {sizes(xs)}")
    out, mean, rstd = group_norm_stats(input, weight, bias, N, group, eps)
    dtype = param_dtype(input, weight, bias)
    return out, _stat(mean, dtype, input.device), _stat(rstd, dtype, input.device)


# (the yaml's native_group_norm_backward branch, taken without grad mode, gives the same values)
derivatives(native_group_norm, {
    "input, weight, bias": "infinitely_differentiable_native_group_norm_backward(grads[0], "
                           "grads[1], grads[2], input, result1, result2, weight, N, C, HxW, "
                           "group, eps, grad_input_mask)"})


# -- dropout ----------------------------------------------------------------------------------------

@op("native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor", variants=())
def native_dropout_backward(grad_output, mask, scale):
    # Dropout.cpp: grad_output * mask * scale (TensorIterator's promotion and layout; an integral
    # or bool gradient times the float scale becomes the default float dtype)
    return mul.kernel(mul.kernel(grad_output, mask), scalar_to_tensor(scale))


derivatives(native_dropout_backward, {
    "grad_output": "native_dropout_double_backward(grad, grad_output, mask, scale)",
    "mask": "not_implemented('native_dropout_backward: mask')"})
