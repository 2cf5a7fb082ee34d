"""Channels-last results: the NN kernels torch writes in the input's memory format.

ATen's convolution, pooling, batch/group norm, upsampling, padding and pixel/channel shuffle
kernels allocate their output with ``input.suggest_memory_format()``: a channels-last 4-d input
gives a channels-last output (strides ordered C, W, H, N). reftrace's kernels compute a
contiguous array; ``like_input`` re-lays it out when torch would not have.
"""
from .._tensor import _strided, xp_of
from .casts import _channels_last_strides, suggest_memory_format
from .._device import channels_last


def like_input(result, input):
    """``result`` (a fresh contiguous 4-d tensor) in channels-last layout when ``input`` is."""
    if input._stride is None:  # (contiguous: what suggest_memory_format would find, sooner)
        return result
    if result.ndim != 4 or input.ndim != 4 or suggest_memory_format(input) is not channels_last:
        return result
    xp = xp_of(result)
    nhwc = xp.ascontiguousarray(result._array.transpose(0, 2, 3, 1))
    t = _strided(nhwc.transpose(0, 3, 1, 2), result.dtype, result.device,
                 _channels_last_strides(result.shape_tuple, 4))
    t.requires_grad = result.requires_grad
    return t


def like_conv(result, input, weight):
    """A 2-d convolution's result: channels-last when the input or the weight suggests it
    (Convolution.cpp, thnn/mkldnn_conv_use_channels_last; 3-d convolutions stay contiguous on
    the CPU)."""
    if weight._stride is not None and weight.ndim == 4 \
            and suggest_memory_format(weight) is channels_last:
        return like_input(result, weight)
    return like_input(result, input)


def like_input_3d(result, input):
    """``like_input``, also for 5-d tensors in channels_last_3d (what torch's 3-d upsampling
    kernels keep; verified for those only)."""
    if result.ndim != 5 or input.ndim != 5:
        return like_input(result, input)
    if input._stride is None or input.stride() != _channels_last_strides(input.shape_tuple, 5):
        return result
    xp = xp_of(result)
    ndhwc = xp.ascontiguousarray(result._array.transpose(0, 2, 3, 4, 1))
    t = _strided(ndhwc.transpose(0, 4, 1, 2, 3), result.dtype, result.device,
                 _channels_last_strides(result.shape_tuple, 5))
    t.requires_grad = result.requires_grad
    return t
