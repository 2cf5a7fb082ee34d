"""im2col / col2im: ``F.unfold`` and ``F.fold`` (nn.Unfold, nn.Fold), torch's C++ builtins
``torch._C._nn.im2col`` / ``col2im``, recorded as ``aten::im2col`` / ``aten::col2im``.

im2col copies every (padded) sliding window into a column: (N, C*kH*kW, L), channel-major then
kernel offset, the L window positions row-major. col2im is its adjoint: the columns summed back
into the (padded) image (``nn_conv.scatter_windows``), padding then cropped. Both accept an
unbatched input (one fewer dim) as ATen does.
"""
from .._tensor import _fresh, xp_of
from ._registry import derivatives, op
from .nn_conv import constant_padded, scatter_windows, windows


def _pairs(what, values):
    return "(" + ", ".join(map(str, values)) + ")"


def _check_params(kernel_size, dilation, padding, stride):
    # col2im_shape_check / im2col_shape_check's parameter checks, with ATen's words
    if any(k <= 0 for k in kernel_size):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{kernel_size[0]} kernel_width: {kernel_size[1]}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {stride[0]} "
                           f"stride_width: {stride[1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{dilation[0]} dilation_width: {dilation[1]}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"padding should be non-negative, but got padding_height: {padding[0]} "
                           f"padding_width: {padding[1]}")


def _blocks(spatial, kernel_size, dilation, padding, stride):
    return [(L + 2 * p - (d * (k - 1) + 1)) // s + 1
            for L, k, d, p, s in zip(spatial, kernel_size, dilation, padding, stride)]


def _float_only(t, name):
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise NotImplementedError(f"\"{name}\" not implemented for '{t.dtype.ir_name}'")


@op("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) "
    "-> Tensor", variants=())
def im2col(self, kernel_size, dilation, padding, stride):
    _check_params(kernel_size, dilation, padding, stride)
    if self.ndim not in (3, 4) or any(v == 0 for v in self.shape_tuple[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor input with possible 0 batch size "
                           f"and non-zero dimensions, but got: [{', '.join(map(str, self.shape_tuple))}]")
    spatial = self.shape_tuple[-2:]
    blocks = _blocks(spatial, kernel_size, dilation, padding, stride)
    if any(b < 1 for b in blocks):
        raise RuntimeError(
            f"Given input with spatial size {_pairs('', spatial)}, kernel_size="
            f"{_pairs('', kernel_size)}, dilation={_pairs('', dilation)}, padding="
            f"{_pairs('', padding)}, calculated shape of the array of sliding blocks as "
            f"{_pairs('', blocks)}, but its components must be at least one.")
    _float_only(self, "im2col_out_cpu")
    xp = xp_of(self)
    a = self._array
    if any(padding):
        a = constant_padded(xp, a, [(p, p) for p in padding])
    win = windows(xp, a, kernel_size, stride, dilation)      # (..., C, oH, oW, kH, kW)
    lead = win.shape[:-5]
    C = win.shape[-5]
    cols = win.transpose(tuple(range(len(lead))) + tuple(len(lead) + i for i in (0, 3, 4, 1, 2)))
    cols = xp.ascontiguousarray(cols).reshape(lead + (C * kernel_size[0] * kernel_size[1],
                                                      blocks[0] * blocks[1]))
    return _fresh(cols, self.dtype, self.device)


derivatives(im2col, {"self": "col2im(grad, [self.shape[-2], self.shape[-1]], kernel_size, "
                             "dilation, padding, stride)"})


@op("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
    "int[2] padding, int[2] stride) -> Tensor", variants=())
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    if len(output_size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(output_size)}")
    _check_params(kernel_size, dilation, padding, stride)
    if self.ndim not in (2, 3) or any(v == 0 for v in self.shape_tuple[-2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possible 0 batch "
                           f"size and non-zero dimensions, but got: "
                           f"[{', '.join(map(str, self.shape_tuple))}]")
    rows, L = self.shape_tuple[-2:]
    kk = kernel_size[0] * kernel_size[1]
    if rows % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={rows} and kernel_size="
                           f"{_pairs('', kernel_size)}")
    blocks = _blocks(output_size, kernel_size, dilation, padding, stride)
    if any(b < 1 for b in blocks):
        raise RuntimeError(
            f"Given output_size={_pairs('', output_size)}, kernel_size={_pairs('', kernel_size)}, "
            f"dilation={_pairs('', dilation)}, padding={_pairs('', padding)}, stride="
            f"{_pairs('', stride)}, calculated shape of the array of sliding blocks as "
            f"{_pairs('', blocks)}, but its components must be at least one.")
    if blocks[0] * blocks[1] != L:
        raise RuntimeError(
            f"Given output_size={_pairs('', output_size)}, kernel_size={_pairs('', kernel_size)}, "
            f"dilation={_pairs('', dilation)}, padding={_pairs('', padding)}, stride="
            f"{_pairs('', stride)}, expected size of input's dimension 2 to match the calculated "
            f"number of sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={L}.")
    _float_only(self, "col2im_out_cpu")
    xp = xp_of(self)
    lead = self.shape_tuple[:-2]
    cols = self._array.reshape(lead + (rows // kk,) + tuple(kernel_size) + tuple(blocks))
    full = [o + 2 * p for o, p in zip(output_size, padding)]
    res = scatter_windows(xp, cols, full, stride, dilation)
    res = res[..., padding[0]:padding[0] + output_size[0], padding[1]:padding[1] + output_size[1]]
    return _fresh(xp.ascontiguousarray(res), self.dtype, self.device)


derivatives(col2im, {"self": "im2col(grad, kernel_size, dilation, padding, stride)"})
