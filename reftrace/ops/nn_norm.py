"""Normalisation: batch_norm, layer_norm, group_norm.

torch records the composite ops (``aten::batch_norm`` with 9 inputs, ``aten::layer_norm`` and
``aten::group_norm`` with 6; the last argument is the global cudnn flag, True), never the
native_* kernels behind them. Statistics are computed in float64 and the result rounded once to
the input dtype: torch's float32 kernels accumulate in float32, so the two agree to ~1 ulp.

batch_norm in training mode updates running_mean / running_var IN PLACE (torch's CPU kernel):
    running_mean = momentum * batch_mean + (1 - momentum) * running_mean
    running_var  = momentum * batch_var_unbiased + (1 - momentum) * running_var
the batch is normalised with the biased variance.
"""
import functools
import math

import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, xp_of
from .nn_conv import sizes
from ._memory_format import like_input
from ._registry import composite, derivatives, op
from .reduction import not_implemented
from ._layout_cache import keep_plan


def _affine_result(x, normalized, weight, bias, channel_shape):
    """normalized * weight + bias (per channel), rounded once to x's dtype."""
    if weight is not None:
        normalized = normalized * weight._array.astype(np.float64).reshape(channel_shape)
    if bias is not None:
        normalized = normalized + bias._array.astype(np.float64).reshape(channel_shape)
    return _fresh(normalized.astype(x.dtype.np), x.dtype, x.device)


def _mean(a, axes, count):
    """a.mean(axes, keepdims=True) computed as np.mean does (a sum, then divided by the count)
    without its Python wrapper, which costs more than the arithmetic on small rows."""
    if count == 0:  # empty rows: np.mean's own NaN (and warning), as before
        return a.mean(axis=axes, keepdims=True)
    return np.true_divide(np.add.reduce(a, axis=axes, keepdims=True), count)


def _write_stat(t, value):
    """Store a running statistic in place (views and bases see it, as torch's in-place update).
    Written below autograd, as torch's kernel does: the version counter does not move (so a
    backward that saved the running statistics still finds them at their saved version)."""
    t._array[...] = value.astype(t.dtype.np)


@op("batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor")
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return batch_norm_stats(input, weight, bias, running_mean, running_var, training, momentum,
                            eps)[0]


def param_dtype(input, *params):
    """ATen's param_scalar_type(input, is_mixed_type(input, params...)): the dtype of saved
    statistics: float32 for a float16 input with float32 parameters, else the input's."""
    first = next((p.dtype for p in params if p is not None), None)
    return D.float32 if first is not None and first is not input.dtype else input.dtype


def batch_norm_stats(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """ATen's batch_norm_cpu: (output, save_mean, save_invstd); the statistics are float64 arrays
    holding values of the parameters' dtype (None outside training, and for a 1-d input)."""
    if input.ndim < 1:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(input.ndim, 1)}, "
                         f"{max(input.ndim, 1) - 1}], but got 1)")
    # a 1-d input has no channel dim: ATen counts 0 features (so only an empty one passes)
    features = input.shape_tuple[1] if input.ndim > 1 else 0
    if input.ndim == 1:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is not None and t._array.size != 0:
                raise RuntimeError(f"{name} should contain 0 elements not {t._array.size}")
        return _fresh(input._array.copy(), input.dtype, input.device), None, None
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None:
            if t._array.size != features:
                raise RuntimeError(f"{name} should contain {features} elements not {t._array.size}")
        elif not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t._array.size != features:
            raise RuntimeError(f"{name} should contain {features} elements not {t._array.size}")
    channel = (1, -1) + (1,) * (input.ndim - 2)
    if training:
        a = input._array.astype(np.float64)
        axes = (0,) + tuple(range(2, a.ndim))
        if a.size:
            # np.mean's and np.var's own steps (a sum divided by the count; the squared
            # deviations from that mean summed and divided by it), the first sum shared
            n = a.size // features
            mean = _mean(a, axes, n)
            deviation = a - mean
            np.square(deviation, out=deviation)
            mean = mean.reshape(-1)
            var = np.true_divide(np.add.reduce(deviation, axis=axes), n)  # biased
        else:
            mean = a.mean(axis=axes)
            var = a.var(axis=axes)                      # biased: what normalises the batch
            n = a.size // features
        if running_mean is not None:
            _write_stat(running_mean, momentum * mean +
                        (1 - momentum) * running_mean._array.astype(np.float64))
        if running_var is not None:
            unbiased = var * n / (n - 1) if n > 1 else var * np.inf
            _write_stat(running_var, momentum * unbiased +
                        (1 - momentum) * running_var._array.astype(np.float64))
        # the batch is normalised with the saved statistics, stored in the parameters' dtype
        # (float16 ones round before the transform, as torch's)
        stat = param_dtype(input, weight, bias, running_mean, running_var).np
        mean = mean.astype(stat).astype(np.float64)
        invstd = (1 / np.sqrt(var + eps)).astype(stat).astype(np.float64)
    else:
        alpha, beta = _eval_transform(weight, bias, running_mean, running_var, eps, channel)
        # out = x * alpha + beta in float64, the sum rounded once into the result's dtype
        out = np.multiply(input._array, alpha)
        res = xp_of(input).empty(out.shape, input.dtype.np)  # (CuPy arrays on a GPU)
        np.add(out, beta, out=res, casting="unsafe")
        return like_input(_fresh(res, input.dtype, input.device), input), None, None
    alpha, beta = _transform(mean, invstd, weight, bias)
    out = a * alpha.reshape(channel)
    out += beta.reshape(channel)
    return (like_input(_fresh(out.astype(input.dtype.np, copy=False), input.dtype, input.device),
                       input), mean, invstd)


def _transform(mean, invstd, weight, bias):
    """ATen's batch_norm_cpu_transform_input: one fused affine per channel,
    out = x * alpha + beta with alpha = weight * invstd, beta = bias - mean * alpha."""
    alpha = invstd * weight._array if weight is not None else invstd
    beta = -mean * alpha
    if bias is not None:
        beta += bias._array
    return alpha, beta


def _eval_transform(weight, bias, running_mean, running_var, eps, channel):
    """The per-channel (alpha, beta) of evaluation mode, shaped ``channel`` (float64): what the
    transform below computes from the running statistics, remembered by their values (bytes,
    dtypes) and eps: a model normalises with the same parameters call after call, and these
    few small array ops cost as much as the transform itself; changed parameters are new keys."""
    key = (eps, channel) + tuple(None if t is None else (t._array.dtype, t._array.tobytes())
                                 for t in (weight, bias, running_mean, running_var))
    found = _EVAL_TRANSFORMS.get(key)
    if found is not None:
        return found
    alpha, beta = _transform(running_mean._array.astype(np.float64),
                             1 / np.sqrt(running_var._array.astype(np.float64) + eps), weight, bias)
    found = (alpha.reshape(channel), beta.reshape(channel))
    for v in found:
        if type(v) is np.ndarray:
            v.flags.writeable = False  # (shared by every call with these parameters)
    return keep_plan(_EVAL_TRANSFORMS, key, found, 256)


_EVAL_TRANSFORMS = {}  # (eps, parameter values) -> batch_norm's evaluation-mode (alpha, beta)


# torch records NativeBatchNormBackward0 (batch_norm is a composite over native_batch_norm)
derivatives(batch_norm, {"input, weight, bias": "batchnorm_backward(grad, input, weight, running_mean, "
                                                 "running_var, training, eps, grad_input_mask)"})


@op("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor")
def layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable):
    return layer_norm_stats(input, normalized_shape, weight, bias, eps)[0]


def layer_norm_stats(input, normalized_shape, weight, bias, eps):
    """ATen's layer_norm_cpu: (output, mean, rstd), the statistics float64 arrays of the input's
    shape with the normalized dims kept as 1s."""
    shape = tuple(normalized_shape)
    k = len(shape)
    if k < 1:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing "
                           f"at least one element, but got normalized_shape = {sizes(shape)}")
    if (weight is not None and weight._array.shape != shape) or \
            (bias is not None and bias._array.shape != shape):
        for name, t in (("weight", weight), ("bias", bias)):
            if t is not None and t.shape_tuple != shape:
                raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                                   f"{name} of shape {sizes(t.shape_tuple)} and normalized_shape = "
                                   f"{sizes(shape)}")
    xs = input._array.shape
    if len(xs) < k or xs[len(xs) - k:] != shape:
        raise RuntimeError(f"Given normalized_shape={sizes(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size{sizes(xs)}")
    half = input.dtype is D.float16
    a = input._array.astype(np.float64, order="C")  # (a strided input: one copy, row-major)
    count = math.prod(shape)
    if count == 0:  # empty rows: np.mean's NaN (and its warning)
        axes = tuple(range(a.ndim - k, a.ndim))
        mean = _mean(a, axes, count)
        centered = a - mean
        var = _mean(np.square(centered), axes, count)
    else:
        # the same arithmetic as _mean (a sum, then divided by the count), written in place: on
        # a model's small rows the NumPy calls and their temporaries are the cost (so the
        # divisor is a 0-d float64 array too: NumPy converts a Python number on every call)
        red = -1 if k == 1 else tuple(range(a.ndim - k, a.ndim))
        divisor = _divisor(count)
        mean = np.add.reduce(a, axis=red, keepdims=True)
        mean /= divisor
        centered = np.subtract(a, mean, out=None if half else a)  # (half's path reads a again)
        var = np.add.reduce(np.square(centered), axis=red, keepdims=True)  # (np.var's steps)
        var /= divisor
    if half:
        return _layer_norm_half(input, a, mean, var, eps, weight, bias)
    rstd = var  # (var is not needed after: 1 / sqrt(var + eps) in its place)
    rstd += _divisor(eps) if type(eps) is float else eps  # (a 0-d float64: no conversion a call)
    np.sqrt(rstd, out=rstd)
    np.divide(_ONE, rstd, out=rstd)
    centered *= rstd                                            # (x - mean) * rstd, as ATen
    if weight is not None:
        centered *= weight._array
    if bias is not None:
        centered += bias._array
    return _fresh(centered.astype(input.dtype.np, copy=False), input.dtype, input.device), mean, rstd


@functools.lru_cache(maxsize=64)
def _divisor(count):
    """A row size (or eps) as a 0-d float64 array (the divisor of the row sums; never written)."""
    return np.array(count, np.float64)


_ONE = np.ones((), np.float64)


def _layer_norm_half(input, a, mean, var, eps, weight, bias):
    """LayerNormKernel's float16 path, in float32 (its opmath type): y = x * scale + shift with
    scale = rstd, shift = -mean * rstd, then y * gamma + beta, each a fused multiply-add (one
    rounding: computed here in float64 and rounded to float32). For a constant row this gives
    torch's small nonzero outputs, not 0."""
    f32 = np.float32
    rstd = f32(1) / np.sqrt(var.astype(f32) + f32(eps))
    scale = rstd
    shift = (-mean.astype(f32) * scale).astype(np.float64)
    y = (a * scale + shift).astype(f32)
    if weight is not None or bias is not None:
        w = weight._array.astype(np.float64) if weight is not None else 1.0
        b = bias._array.astype(np.float64) if bias is not None else 0.0
        y = (y.astype(np.float64) * w + b).astype(f32)
    return _fresh(y.astype(np.float16), input.dtype, input.device), mean, rstd


# NativeLayerNormBackward0
derivatives(layer_norm, {"input, weight, bias": "layer_norm_backward(grad, input, normalized_shape, "
                                                 "weight, eps, grad_input_mask)"})


@op("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor")
def group_norm(input, num_groups, weight, bias, eps, cudnn_enabled):
    xs = input.shape_tuple
    n, c = xs[0], xs[1]
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but "
                           f"got input of shape {sizes(xs)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t._array.size != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {sizes(t.shape_tuple)} "
                               f"and input of shape {sizes(xs)}")
    return group_norm_stats(input, weight, bias, n, num_groups, eps)[0]


def group_norm_stats(input, weight, bias, n, group, eps):
    """ATen's GroupNormKernel: (output, mean, rstd), the statistics (N, group) float64 arrays."""
    xs = input.shape_tuple
    grouped = input._array.astype(np.float64).reshape(n, group, input._array.size // max(
        n * group, 1))
    mean = grouped.mean(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(grouped.var(axis=-1, keepdims=True) + eps)
    normalized = ((grouped - mean) * rstd).reshape(xs)
    out = like_input(_affine_result(input, normalized, weight, bias,
                                    (1, -1) + (1,) * (len(xs) - 2)), input)
    return out, mean[..., 0], rstd[..., 0]


# NativeGroupNormBackward0
derivatives(group_norm, {"input, weight, bias": "group_norm_backward(grad, input, num_groups, weight, "
                                                 "eps, grad_input_mask)"})


# -- nn-layers: instance_norm, rms_norm ---------------------------------------------------------------

def _check_instance_norm(input, running_mean, running_var, use_input_stats):
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(input.ndim, 1)}, "
                         f"{max(input.ndim, 1) - 1}], but got 1)")


@op("instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) "
    "-> Tensor")
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled):
    """ATen's composite: a batch_norm of the (1, N*C, *spatial) view, the per-channel tensors
    repeated N times; the running statistics then get the mean over the batch of the updated
    per-instance statistics."""
    _check_instance_norm(input, running_mean, running_var, use_input_stats)
    xs = input.shape_tuple
    b, c = xs[0], xs[1]
    shape = (1, b * c) + xs[2:]
    x = _fresh(np.ascontiguousarray(input._array).reshape(shape), input.dtype, input.device)

    def repeated(t):
        return None if t is None else _fresh(np.tile(t._array, b), t.dtype, t.device)
    mean_r, var_r = repeated(running_mean), repeated(running_var)
    out = batch_norm.kernel(x, repeated(weight), repeated(bias), mean_r, var_r, use_input_stats,
                            momentum, eps, cudnn_enabled)
    if use_input_stats:
        for t, r in ((running_mean, mean_r), (running_var, var_r)):
            if t is not None:
                _write_stat(t, r._array.astype(np.float64).reshape(b, c).mean(0))
    return _fresh(out._array.reshape(xs), input.dtype, input.device)


@composite(instance_norm)
def _instance_norm_composite(input, weight, bias, running_mean, running_var, use_input_stats,
                             momentum, eps, cudnn_enabled):
    # Normalization.cpp instance_norm, in its order: batch_norm of the (1, N*C, *) view
    _check_instance_norm(input, running_mean, running_var, use_input_stats)
    xs = input.shape_tuple
    b, c = xs[0], xs[1]

    def repeat_if_defined(t):
        return None if t is None else t.repeat([b])
    weight_, bias_ = repeat_if_defined(weight), repeat_if_defined(bias)
    running_mean_, running_var_ = repeat_if_defined(running_mean), repeat_if_defined(running_var)
    input_reshaped = input.contiguous().view([1, b * c] + list(xs[2:]))
    out = batch_norm(input_reshaped, weight_, bias_, running_mean_, running_var_, use_input_stats,
                     momentum, eps, cudnn_enabled)
    # (torch copies into at::alias(running_mean): the caller's tensor sees the new statistics)
    if running_mean is not None:
        running_mean.copy_(running_mean_.view([b, c]).mean(0, False))
    if running_var is not None:
        running_var.copy_(running_var_.view([b, c]).mean(0, False))
    return out.view(list(xs))


@op("rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) "
    "-> Tensor")
def rms_norm(input, normalized_shape, weight, eps):
    shape = _rms_norm_checks(input, normalized_shape, weight)
    if input.dtype.is_complex:  # (torch's math path, op by op: its complex rounding)
        return _rms_norm_math(input, normalized_shape, weight, eps)
    if eps is None:
        eps = float(np.finfo(input.dtype.np).eps)
    k = len(shape)
    a = input._array.astype(np.float64)
    axes = tuple(range(a.ndim - k, a.ndim))
    normalized = a / np.sqrt((a * a).mean(axis=axes, keepdims=True) + eps)
    if a.size == 0 and weight is not None:
        # torch's last step is result.mul(weight): an empty result takes mul's broadcast strides
        from ._registry import OVERLOADS
        return OVERLOADS["aten::mul.Tensor"].kernel(input.detach(), weight.detach())
    return _affine_result(input, normalized, weight, None, shape)


def _rms_norm_checks(input, normalized_shape, weight):
    shape = tuple(normalized_shape)
    k = len(shape)
    xs = input.shape_tuple
    if k < 1:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing "
                           f"at least one element, but got normalized_shape = {sizes(shape)}")
    if weight is not None and weight.shape_tuple != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight "
                           f"of shape {sizes(weight.shape_tuple)} and normalized_shape = {sizes(shape)}")
    if len(xs) < k or xs[len(xs) - k:] != shape:
        raise RuntimeError(f"Given normalized_shape={sizes(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size{sizes(xs)}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise not_implemented("rms_norm", input.dtype)
    return shape


@composite(rms_norm)
def _rms_norm_composite(input, normalized_shape, weight, eps):
    _rms_norm_checks(input, normalized_shape, weight)
    return _rms_norm_math(input, normalized_shape, weight, eps)


def _rms_norm_math(input, normalized_shape, weight, eps):
    # layer_norm.cpp rms_norm (the CPU math path), in its order
    from .. import _dtype as D
    opmath = D.float32 if input.dtype is D.float16 else input.dtype  # (no bfloat16 here)
    if eps is None:  # numeric_limits<opmath_type<scalar_t>>::epsilon() (a complex's: its part's)
        eps = float(np.finfo(opmath.np).eps)
    dims_to_reduce = [input.dim() - i - 1 for i in range(len(normalized_shape))]
    upcasted_input = input.to(opmath)
    # (torch's add_(eps) is add_.Scalar, AddBackward1; reftrace has only add_.Tensor: AddBackward0)
    rqrst_input = upcasted_input.pow(2).mean(dims_to_reduce, True).add_(eps).rsqrt()
    result = upcasted_input.mul(rqrst_input).type_as(input)
    if weight is not None:
        result = result.mul(weight)
    return result
