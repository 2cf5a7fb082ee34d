"""torch/nn/modules/normalization.py: LayerNorm and GroupNorm (weight ones, bias zeros)."""
import numbers

from .. import functional as F
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
