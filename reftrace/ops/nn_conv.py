"""Convolution: the ATen calls torch's Python layer makes, computed by im2col + one matmul.

torch never records ``aten::conv2d`` in a trace: conv1d/conv2d/convolution are on the tracer's
do-not-record list (tools/autograd/gen_trace_type.py), so what a trace shows is the op they call:
``aten::_convolution`` (13 inputs: the global benchmark / deterministic / cudnn / tf32 flags
included) or, for ``padding='same'|'valid'``, ``aten::_convolution_mode``.
``F.conv2d`` (``reftrace/ops/nn_bindings.py``) therefore calls those two ops directly.

The kernel copies every receptive field of the padded input into a (C*kH*kW, positions) matrix
per image (im2col, ``_im2col.py``) and multiplies by the weight matrix with BLAS: torch's own
CPU algorithm (im2col + GEMM), and within a small factor of its speed. A transposed convolution
multiplies first and sums the windows back into the image (col2im).
"""
import math

import numpy as np

from .._tensor import _fresh, xp_of
from ._registry import composite, derivatives, get_packet, op
from ._memory_format import like_conv
from ._im2col import constant_padded, im2col, im2col_plan, scatter_windows, windows
from .._frames import warn_at_caller
from ._layout_cache import keep_plan


def legacy_type_name(t):
    """torch's old-style type name used in some messages: torch.FloatTensor, torch.LongTensor."""
    return f"torch.{t.dtype.ir_name}Tensor"


def sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _expand(values, name, dim):
    # expand_param_if_needed: one value applies to every spatial dim
    if len(values) == 1:
        return list(values) * dim
    if len(values) != dim:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {dim} values to match the "
            f"convolution dimensions, but got {name}={sizes(values)}")
    return list(values)


def _check_rank_and_params(x, w, padding, stride, dilation, output_padding=()):
    """The first checks of ATen's check_shape_forward (both directions of convolution)."""
    k, ws, xs = w.ndim, w.shape_tuple, x.shape_tuple
    if x.ndim != k:
        raise RuntimeError(
            f"Expected {k}-dimensional input for {k}-dimensional weight {sizes(ws)}, but got "
            f"{x.ndim}-dimensional input of size {sizes(xs)} instead")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")


def _check_shapes(x, w, bias, padding, stride, dilation, groups):
    """ATen's check_shape_forward, in its order and with its messages."""
    k, ws, xs = w.ndim, w.shape_tuple, x.shape_tuple
    _check_rank_and_params(x, w, padding, stride, dilation)
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {sizes(ws)} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size {sizes(ws)} instead")
    if xs[1] != ws[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {sizes(ws)}, expected input{sizes(xs)} to have "
            f"{ws[1] * groups} channels, but got {xs[1]} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape_tuple[0] != ws[0]):
        raise RuntimeError(
            f"Given weight of size {sizes(ws)}, expected bias to be 1-dimensional with {ws[0]} "
            f"elements, but got bias of size {sizes(bias.shape_tuple)} instead")
    padded = [xs[2 + i] + 2 * padding[i] for i in range(k - 2)]
    effective = [dilation[i] * (ws[2 + i] - 1) + 1 for i in range(k - 2)]
    if any(e > p for e, p in zip(effective, padded)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, effective))}). "
            "Kernel size can't be greater than actual input size")


def conv_forward(x, w, bias, stride, pad_pairs, dilation, groups, plan=None):
    """The convolution itself. ``pad_pairs``: (before, after) zeros per spatial dim. ``plan``:
    ``conv_plan``'s for this signature when the caller has it cached."""
    if w.dtype is not x.dtype:
        raise RuntimeError(
            f"Input type ({legacy_type_name(x)}) and weight type ({legacy_type_name(w)}) should be "
            "the same or input should be a MKLDNN tensor and weight is a dense tensor")
    xp = xp_of(x)
    a = x._array
    if xp is np:
        if plan is None:
            plan = conv_plan(a.shape, a.dtype, w.shape_tuple, stride, pad_pairs, dilation, groups)
        im_plan, w_shape, cols_shape, res_shape, bias_shape = plan
        # im2col: (N, C, *kernel, *out), the output positions innermost; one batched GEMM per
        # group then yields (N, O, *out) directly, already in torch's contiguous layout. A 1x1
        # convolution is a GEMM over the input as it lies: no windows, no im2col copy.
        cols = a if im_plan is None else im2col(a, im_plan)
        res = np.matmul(w._array.reshape(w_shape), cols.reshape(cols_shape)).reshape(res_shape)
        if bias is not None:
            res += bias._array.reshape(bias_shape)
        return _fresh(res, x.dtype, x.device)
    n = w.ndim - 2
    kernel = w.shape_tuple[2:]
    N = a.shape[0]
    wa = w._array.reshape(1, groups, w.shape_tuple[0] // groups, -1)  # (1, G, O/G, Cg*prod(kernel))
    if all(k == 1 for k in kernel) and all(s == 1 for s in stride) and not any(map(any, pad_pairs)):
        out = a.shape[2:]
        cols = a.reshape(N, groups, -1, math.prod(out))
    else:
        if any(map(any, pad_pairs)):
            a = constant_padded(xp, a, pad_pairs)
        win = windows(xp, a, kernel, stride, dilation)           # (N, C, *out, *kernel)
        out = win.shape[2:2 + n]
        # the same (N, C, *kernel, *out) matrix as im2col's, copied in one pass
        order = (0, 1) + tuple(range(2 + n, 2 + 2 * n)) + tuple(range(2, 2 + n))
        cols = xp.ascontiguousarray(win.transpose(order))
        cols = cols.reshape(N, groups, -1, math.prod(out))          # (N, G, Cg*prod(kernel), P)
    res = xp.matmul(wa, cols).reshape((N, -1) + tuple(out))  # (N, O, *out)
    if bias is not None:
        res += bias._array.reshape((-1,) + (1,) * n)
    return _fresh(res, x.dtype, x.device)


def conv_plan(shape, dtype, w_shape, stride, pad_pairs, dilation, groups):
    """What conv_forward's NumPy path needs beyond the arrays, from the geometry alone (made once
    per signature: a model calls each convolution with the same one every time):
    (im2col's plan or None for a 1x1 convolution, and the weight, columns, result and bias
    shapes)."""
    key = (shape, dtype, w_shape, tuple(stride), tuple(map(tuple, pad_pairs)), tuple(dilation),
           groups)
    plan = _CONV_PLANS.get(key)
    if plan is None:
        n = len(w_shape) - 2
        kernel = tuple(w_shape[2:])
        if all(k == 1 for k in kernel) and all(s == 1 for s in stride) \
                and not any(map(any, pad_pairs)):
            im_plan, out = None, shape[2:]
        else:
            im_plan = im2col_plan(shape, dtype.itemsize, kernel, stride, pad_pairs, dilation)
            out = im_plan[-1]
        plan = (im_plan, (1, groups, w_shape[0] // groups, -1),
                (shape[0], groups, -1, math.prod(out)), (shape[0], -1) + tuple(out),
                (-1,) + (1,) * n)
        keep_plan(_CONV_PLANS, key, plan, 1024)
    return plan


_CONV_PLANS = {}  # conv_forward's geometry -> its plan


def _check_transposed(x, w, bias, padding, stride, dilation, output_padding, groups):
    """check_shape_forward for transposed=True, and the output-size checks, with ATen's words."""
    k, ws, xs = w.ndim, w.shape_tuple, x.shape_tuple
    _check_rank_and_params(x, w, padding, stride, dilation, output_padding)
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {sizes(ws)} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size [{sizes(ws)}] instead")
    if xs[1] != ws[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {sizes(ws)}, expected input{sizes(xs)} to have "
            f"{ws[0]} channels, but got {xs[1]} channels instead")
    out_channels = ws[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape_tuple[0] != out_channels):
        raise RuntimeError(
            f"Given transposed=1, weight of size {sizes(ws)}, expected bias to be 1-dimensional "
            f"with {out_channels} elements, but got bias of size {sizes(bias.shape_tuple)} instead")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        names = ("depth", "height", "width")[-max(k - 2, 2):]
        if k == 3:  # ATen computes a 1d transposed convolution as a 2d one of height 1
            output_padding, stride, dilation = [0, *output_padding], [1, *stride], [1, *dilation]
        parts = ([f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
                 + [f"stride_{n}: {v}" for n, v in zip(names, stride)]
                 + [f"dilation_{n}: {v}" for n, v in zip(names, dilation)])
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(parts))
    out = transposed_output_size(xs[2:], ws[2:], stride, padding, dilation, output_padding)
    if any(o < 1 for o in out):
        raise RuntimeError(
            f"Given input size per channel: ({' x '.join(map(str, xs[2:]))}). Calculated output "
            f"size per channel: ({' x '.join(map(str, out))}). Output size is too small")


def transposed_output_size(spatial, kernel, stride, padding, dilation, output_padding):
    return [(L - 1) * s - 2 * p + d * (k - 1) + op + 1
            for L, k, s, p, d, op in zip(spatial, kernel, stride, padding, dilation, output_padding)]


def conv_transpose_forward(x, w, bias, stride, padding, dilation, output_padding, groups):
    """The transposed convolution: one GEMM per group gives every window's contribution
    (N, O, *kernel, *in), which col2im (``scatter_windows``) sums into the full output; the
    padding is then cropped off (and output_padding extends the far end)."""
    if w.dtype is not x.dtype:
        raise RuntimeError(
            f"Input type ({legacy_type_name(x)}) and weight type ({legacy_type_name(w)}) should be "
            "the same or input should be a MKLDNN tensor and weight is a dense tensor")
    xp = xp_of(x)
    n = w.ndim - 2
    N, C = x.shape_tuple[:2]
    spatial, kernel = x.shape_tuple[2:], w.shape_tuple[2:]
    positions = int(np.prod(spatial))
    og = w.shape_tuple[1]
    xa = x._array.reshape(N, groups, C // groups, positions)            # (N, G, Cg, P)
    wa = w._array.reshape(groups, C // groups, -1).transpose(0, 2, 1)   # (G, Og*prod(k), Cg)
    cols = xp.matmul(wa[None], xa)                                      # (N, G, Og*prod(k), P)
    cols = cols.reshape((N, groups * og) + tuple(kernel) + tuple(spatial))
    full = [(L - 1) * s + d * (k - 1) + 1 + op
            for L, k, s, d, op in zip(spatial, kernel, stride, dilation, output_padding)]
    res = scatter_windows(xp, cols, full, stride, dilation, phases=True)
    out = transposed_output_size(spatial, kernel, stride, padding, dilation, output_padding)
    res = res[(Ellipsis,) + tuple(slice(p, p + o) for p, o in zip(padding, out))]
    res = xp.ascontiguousarray(res)
    if bias is not None:
        res += bias._array.reshape((-1,) + (1,) * n)
    return _fresh(res, x.dtype, x.device)


@op("_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, "
    "bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor")
def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups,
                 benchmark, deterministic, cudnn_enabled, allow_tf32):
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(
            f"Input type ({legacy_type_name(input)}) and bias type ({legacy_type_name(bias)}) "
            "should be the same")
    a = input._array
    key = (a.shape, a.dtype, weight.shape_tuple, None if bias is None else bias.shape_tuple,
           tuple(stride), tuple(padding), tuple(dilation), transposed, tuple(output_padding), groups)
    params = _CHECKED.get(key)
    if params is None:
        params = _checked_params(input, weight, bias, stride, padding, dilation, transposed,
                                 output_padding, groups)
        if not transposed and a.size:
            params += (conv_plan(a.shape, a.dtype, weight.shape_tuple, params[0],
                                 [(p, p) for p in params[1]], params[2], groups),)
        keep_plan(_CHECKED, key, params, 4096)
    stride, padding, dilation, output_padding = params[:4]
    if a.size == 0:
        return _empty_convolution(input, weight, stride, padding, dilation, transposed,
                                  output_padding, groups)
    if transposed:
        return like_conv(conv_transpose_forward(input, weight, bias, stride, padding, dilation,
                                                output_padding, groups), input, weight)
    return like_conv(conv_forward(input, weight, bias, stride, [(p, p) for p in padding],
                                  dilation, groups, params[4]), input, weight)


def _empty_convolution(input, weight, stride, padding, dilation, transposed, output_padding, groups):
    """ConvBackend::Empty (an input with no elements): the output shape without computing; with
    no input channels (a weight with no elements) torch's output has no channels either."""
    if transposed:
        spatial = transposed_output_size(input.shape_tuple[2:], weight.shape_tuple[2:], stride,
                                         padding, dilation, output_padding)
        channels = weight.shape_tuple[1] * groups
    else:
        spatial = [(i + 2 * p - d * (k - 1) - 1) // s + 1 for i, k, s, p, d in
                   zip(input.shape_tuple[2:], weight.shape_tuple[2:], stride, padding, dilation)]
        channels = weight.shape_tuple[0]
    channels = channels if weight.numel() else 0
    shape = (input.shape_tuple[0], channels, *spatial)
    return _fresh(xp_of(input).zeros(shape, input.dtype.np), input.dtype, input.device)


# The shape checks depend on the shapes and parameters only: a call with a signature that passed
# them before skips them (a model calls each of its convolutions with the same ones every time).
_CHECKED = {}  # (shapes, dtype, parameters) -> the expanded (stride, padding, dilation,
#   output_padding), and conv_forward's plan for a (non-empty) direct convolution


def _checked_params(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                    groups):
    """ATen's parameter expansion and shape checks (raising its errors); the expanded lists."""
    dim = weight.ndim - 2
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    stride = _expand(stride, "stride", dim)
    padding = _expand(padding, "padding", dim)
    dilation = _expand(dilation, "dilation", dim)
    if transposed:
        output_padding = _expand(output_padding, "output_padding", dim)
        _check_transposed(input, weight, bias, padding, stride, dilation, output_padding, groups)
    else:
        _check_shapes(input, weight, bias, padding, stride, dilation, groups)
    return stride, padding, dilation, output_padding


derivatives(_convolution, {
    "input, weight, bias": "convolution_backward(grad, input, weight, (None if bias is None else "
                           "bias.shape), stride, padding, dilation, transposed, output_padding, "
                           "groups, grad_input_mask)"})


_WARNED_SAME_PADDING = []


def _warn_same_padding_once():
    """TORCH_WARN_ONCE in Convolution.cpp: once per process (torch's message, without the
    "(Triggered internally at <C++ source>)" suffix)."""
    if not _WARNED_SAME_PADDING:
        _WARNED_SAME_PADDING.append(True)
        warn_at_caller("Using padding='same' with even kernel lengths and odd dilation may require "
                       "a zero-padded copy of the input be created")


@op("_convolution_mode(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, str padding, "
    "SymInt[] dilation, SymInt groups) -> Tensor")
def _convolution_mode(input, weight, bias, stride, padding, dilation, groups):
    dim = weight.ndim - 2
    if padding == "valid":
        pads = [0] * dim
    elif padding == "same":
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        dil = _expand(dilation, "dilation", dim)
        # total padding d*(k-1), the odd element on the right (torch's _convolution_same)
        total = [dil[i] * (weight.shape_tuple[2 + i] - 1) for i in range(dim)]
        if all(t % 2 == 0 for t in total):
            pads = [t // 2 for t in total]
        else:
            _warn_same_padding_once()
            _check_shapes(input, weight, bias, [t // 2 for t in total], [1] * dim, dil, groups)
            pairs = [(t // 2, t - t // 2) for t in total]
            return like_conv(conv_forward(input, weight, bias, [1] * dim, pairs, dil, groups),
                             input, weight)
    else:
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    return _convolution.kernel(input, weight, bias, stride, pads, dilation, False, [0] * dim,
                               groups, False, False, True, True)


@composite(_convolution_mode)
def _convolution_mode_composite(input, weight, bias, stride, padding, dilation, groups):
    # Convolution.cpp _convolution_mode: 'valid' and symmetric 'same' are a convolution; an
    # asymmetric 'same' pads the input first
    dim = weight.ndim - 2
    dil = _expand(dilation, "dilation", dim)
    if padding == "same" and all(s == 1 for s in stride):
        total = [dil[i] * (weight.shape_tuple[2 + i] - 1) for i in range(dim)]
        if any(t % 2 for t in total):
            pad = []
            for t in reversed(total):
                pad += [t // 2, t - t // 2]
            _check_shapes(input, weight, bias, [t // 2 for t in total], [1] * dim, dil, groups)
            input = get_packet("constant_pad_nd")(input, pad, 0)
            return convolution(input, weight, bias, [1] * dim, [0] * dim, dil, False, [0] * dim, groups)
        return convolution(input, weight, bias, stride, [t // 2 for t in total], dil, False,
                           [0] * dim, groups)
    if padding == "valid":
        return convolution(input, weight, bias, stride, [0] * dim, dil, False, [0] * dim, groups)
    return _convolution_mode.kernel(input, weight, bias, stride, padding, dilation, groups)


@op("convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    # torch.ops.aten.convolution: what nn.Module code never calls directly, kept for the table
    return _convolution.kernel(input, weight, bias, stride, padding, dilation, transposed,
                               output_padding, groups, False, False, True, True)


@op("conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor")
def conv_tbc(self, weight, bias, pad):
    """A 1d convolution in (time, batch, channel) layout: weight (kernel, C_in, C_out)."""
    if self.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if self.shape_tuple[2] != weight.shape_tuple[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape_tuple[2] != bias.shape_tuple[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    xp = xp_of(self)
    x = _fresh(xp.ascontiguousarray(self._array.transpose(1, 2, 0)), self.dtype, self.device)
    w = _fresh(xp.ascontiguousarray(weight._array.transpose(2, 1, 0)), weight.dtype, weight.device)
    out = conv_forward(x, w, bias, [1], [(pad, pad)], [1], 1)    # (B, C_out, T')
    return _fresh(xp.ascontiguousarray(out._array.transpose(2, 0, 1)), self.dtype, self.device)


derivatives(conv_tbc, {"self, weight, bias": "(conv_tbc_backward(grad, self, weight, bias, pad) "
                                             "if grad is not None else (None, None, None))"})
derivatives(convolution, {
    "input, weight, bias": "convolution_backward(grad, input, weight, (None if bias is None else "
                           "bias.shape), stride, padding, dilation, transposed, output_padding, "
                           "groups, grad_input_mask)"})
