"""torch/nn/utils/memory_format.py: the weights of every (transposed) 2-d or 3-d convolution of a
module re-laid in a memory format (channels_last for NHWC convolutions)."""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        # torch then calls weight_data.resize_(same size, memory_format): a no-op on a clone
        # already laid out in that format
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
