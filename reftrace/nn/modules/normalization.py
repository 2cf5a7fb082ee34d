"""torch/nn/modules/normalization.py: LayerNorm and GroupNorm (weight ones, bias zeros),
LocalResponseNorm, CrossMapLRN2d, RMSNorm."""
import numbers

from ... import _factories
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._affine import register_affine, reset_affine
from .module import Module


class LayerNorm(Module):
    """Normalises over the trailing ``normalized_shape`` dimensions (an int means one dim)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        register_affine(self, elementwise_affine, self.normalized_shape, bias, factory_kwargs)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self, self.elementwise_affine)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
                "bias={use_bias}").format(**self.__dict__, use_bias=self.bias is not None)


class GroupNorm(Module):
    """Normalises each of ``num_groups`` channel groups; affine parameters are per channel."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None,
                 *, bias=True):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        register_affine(self, affine, num_channels, bias, factory_kwargs)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self, self.affine)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None)


# -- nn-layers: LocalResponseNorm, CrossMapLRN2d, RMSNorm ----------------------------------------------

class LocalResponseNorm(Module):
    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class CrossMapLRN2d(LocalResponseNorm):
    """torch runs a legacy autograd.Function (a trace shows one prim::PythonOp); reftrace computes
    the same numbers with ops (spec NN-L6). Its running channel window never drops channel 0 (a
    quirk of torch's loop, kept)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__(size, alpha, beta, k)

    def forward(self, input):
        import numpy as np
        import reftrace
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels = input.shape_tuple[1]
        pre_pad = int((self.size - 1) / 2 + 1)
        c = np.arange(channels)
        hi = np.minimum(c + pre_pad - 1, channels - 1) + 1
        lo = np.where(c > pre_pad, c - pre_pad + 1, 0)
        square = input.pow(2)
        sums = reftrace.cat([reftrace.zeros_like(square[:, :1]), square.cumsum(1)], 1)
        scale = sums.index_select(1, reftrace.from_numpy(hi)) \
            - sums.index_select(1, reftrace.from_numpy(lo))
        keep_first = reftrace.from_numpy((c > pre_pad).astype(input.dtype.np)).view(1, -1, 1, 1)
        scale = scale + square[:, :1] * keep_first
        return scale.mul(self.alpha / self.size).add(self.k).pow(-self.beta).mul(input)


class RMSNorm(Module):
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:  # a weight only, no bias
            self.weight = Parameter(_factories.empty(self.normalized_shape, **factory_kwargs))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(
            **self.__dict__)
