"""pixel_shuffle / pixel_unshuffle / channel_shuffle: pure data movement (reshape, permute, copy),
each one recorded ATen op, its result contiguous as ATen's CPU kernels write it."""
from .._tensor import _fresh, xp_of
from ._memory_format import like_input
from ._registry import derivatives, op


def _shuffle(t, shape, order, out_shape):
    xp = xp_of(t)
    a = xp.ascontiguousarray(t._array.reshape(shape).transpose(order)).reshape(out_shape)
    return like_input(_fresh(a, t.dtype, t.device), t)


@op("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor")
def pixel_shuffle(self, upscale_factor):
    if self.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input "
                           f"with {self.ndim} dimension(s)")
    if upscale_factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {upscale_factor}")
    r = upscale_factor
    *lead, c, h, w = self.shape_tuple
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                           f"the square of upscale_factor, but input.size(-3)={c} is not divisible "
                           f"by {r * r}")
    n = len(lead)
    order = tuple(range(n)) + tuple(n + i for i in (0, 3, 1, 4, 2))
    return _shuffle(self, (*lead, c // (r * r), r, r, h, w), order,
                    (*lead, c // (r * r), h * r, w * r))


derivatives(pixel_shuffle, {"self": "pixel_unshuffle(grad, upscale_factor)"})


@op("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor")
def pixel_unshuffle(self, downscale_factor):
    if self.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got "
                           f"input with {self.ndim} dimension(s)")
    if downscale_factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got "
                           f"{downscale_factor}")
    r = downscale_factor
    *lead, c, h, w = self.shape_tuple
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    n = len(lead)
    order = tuple(range(n)) + tuple(n + i for i in (0, 2, 4, 1, 3))
    return _shuffle(self, (*lead, c, h // r, r, w // r, r), order, (*lead, c * r * r, h // r, w // r))


derivatives(pixel_unshuffle, {"self": "pixel_shuffle(grad, downscale_factor)"})


def _channel_shuffle(self, groups):
    if self.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"[{', '.join(map(str, self.shape_tuple))}]")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, *rest = self.shape_tuple
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                           f"{groups} groups.")
    order = (0, 2, 1) + tuple(range(3, 3 + len(rest)))
    return _shuffle(self, (n, groups, c // groups, *rest), order, self.shape_tuple)


@op("channel_shuffle(Tensor self, SymInt groups) -> Tensor")
def channel_shuffle(self, groups):
    return _channel_shuffle(self, groups)


derivatives(channel_shuffle, {"self": "channel_shuffle(grad, grad.shape[1] // groups)"})


@op("native_channel_shuffle(Tensor self, SymInt groups) -> Tensor")
def native_channel_shuffle(self, groups):
    return _channel_shuffle(self, groups)
