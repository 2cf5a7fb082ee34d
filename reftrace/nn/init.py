"""torch.nn.init: the in-place initialisers the layers' reset_parameters() call.

Each runs under no_grad and mutates its tensor in place (uniform_, normal_, fill_, zero_), as
torch's do, and returns it. Draws come from reftrace's generator: the same distributions and
bounds as torch, not torch's numbers.

The default layer scheme, for the record: Linear and Conv weights use
``kaiming_uniform_(w, a=sqrt(5))``, i.e. U(-b, b) with b = gain * sqrt(3 / fan_in) and
gain = sqrt(2 / (1 + 5)), which simplifies to b = 1 / sqrt(fan_in); biases U(-1/sqrt(fan_in),
1/sqrt(fan_in)); norms ones and zeros; Embedding N(0, 1).
"""
import math
import warnings

from ..autograd import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def _no_grad_uniform_(tensor, a, b, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def _no_grad_normal_(tensor, mean, std, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _no_grad_fill_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def calculate_gain(nonlinearity, param=None):
    """The factor that keeps activations' variance stable through ``nonlinearity``."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    elif nonlinearity == "tanh":
        return 5.0 / 3
    elif nonlinearity == "relu":
        return math.sqrt(2.0)
    elif nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    elif nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return _no_grad_uniform_(tensor, a, b, generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return _no_grad_normal_(tensor, mean, std, generator)


def constant_(tensor, val):
    return _no_grad_fill_(tensor, val)


def ones_(tensor):
    return _no_grad_fill_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def _calculate_fan_in_and_fan_out(tensor):
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (a conv weight's
    receptive field is the product of its kernel sizes)."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    shape = tensor.shape_tuple  # plain ints, never traced sizes
    receptive_field_size = 1
    for s in shape[2:]:
        receptive_field_size *= s
    return shape[1] * receptive_field_size, shape[0] * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std  # U(-a, a) has standard deviation a / sqrt(3)
    return _no_grad_uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _no_grad_normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape_tuple:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return _no_grad_uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor.shape_tuple:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return _no_grad_normal_(tensor, 0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


# -- nn-layers: the rest of torch.nn.init -------------------------------------------------------------

def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std) restricted to [a, b], by rejection as torch's: redraw out-of-range values
    while any is left (a loop over rounds, each vectorised)."""
    from .. import _factories, where
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        p = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
        if p > 0.3:
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < a) | (result > b)
                if not mask.any():
                    break
                result = where(mask, _factories.empty_like(result).normal_(mean, std,
                                                                          generator=generator),
                               result)
            if tensor is not result:
                tensor.copy_(result)
        else:  # narrow window: uniform proposals accepted with the normal density
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2
            tensor.uniform_(a, b, generator=generator)
            candidates = tensor.clone()
            logp = candidates.sub(mean).div(std).pow(2).mul(-0.5).sub(log_peak)
            pending = _factories.empty_like(tensor).uniform_(generator=generator).log().gt(logp)
            result = tensor
            while pending.any():
                candidates = _factories.empty_like(tensor).uniform_(a, b, generator=generator)
                result = where(pending, candidates, result)
                logp = candidates.sub(mean).div(std).pow(2).mul(-0.5).sub(log_peak)
                pending = where(pending, _factories.empty_like(tensor).uniform_(
                    generator=generator).log().gt(logp), pending)
            tensor.copy_(result)
        return tensor


def _write(tensor, array):
    """Copy a NumPy array into ``tensor`` in place (no_grad, version bumped, views see it)."""
    from .. import from_numpy
    with no_grad():
        tensor.copy_(from_numpy(array.astype(tensor.dtype.np)))
    return tensor


def dirac_(tensor, groups=1):
    import numpy as np
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape_tuple
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    a = np.zeros(sizes)
    g, d = np.meshgrid(np.arange(groups), np.arange(min_dim), indexing="ij")
    centre = tuple(s // 2 for s in sizes[2:])
    a[(g * out_chans_per_grp + d, d) + centre] = 1
    return _write(tensor, a)


def eye_(tensor):
    import numpy as np
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape_tuple))


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix: QR of a standard normal draw, signs fixed by diag(R)."""
    import numpy as np
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape_tuple[0]
    cols = tensor.numel() // rows
    flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator).numpy()
    flat = flat.astype(np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tensor.shape_tuple))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std) with ceil(sparsity * rows) zeros in each column, at random rows."""
    import numpy as np
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape_tuple
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
    a = tensor.numpy().copy()
    from .. import rand
    keys = rand(rows, cols, generator=generator).numpy()      # reftrace's generator: seedable
    zero_rows = np.argsort(keys, axis=0)[:num_zeros]          # a random permutation per column
    a[zero_rows, np.arange(cols)[None, :]] = 0
    return _write(tensor, a)


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)

__all__ += ["trunc_normal_", "dirac_", "eye_", "orthogonal_", "sparse_", "uniform", "normal",
            "constant", "eye", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
            "kaiming_normal", "orthogonal", "sparse"]
