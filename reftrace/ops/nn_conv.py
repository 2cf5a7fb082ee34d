"""Convolution: the ATen calls torch's Python layer makes, computed by im2col + one matmul.

torch never records ``aten::conv2d`` in a trace: conv1d/conv2d/convolution are on the tracer's
do-not-record list (tools/autograd/gen_trace_type.py), so what a trace shows is the op they call:
``aten::_convolution`` (13 inputs: the global benchmark / deterministic / cudnn / tf32 flags
included) or, for ``padding='same'|'valid'``, ``aten::_convolution_mode``.
``F.conv2d`` (``reftrace/ops/nn_bindings.py``) therefore calls those two ops directly.

The kernel views every receptive field of the padded input at once (``windows``: a strided view,
no copy), copies them once into a (C*kH*kW, positions) matrix per image (im2col) and multiplies
by the weight matrix with BLAS: torch's own CPU algorithm (im2col + GEMM), and within a small
factor of its speed.
"""
import numpy as np

from .._tensor import _fresh, xp_of
from ._registry import composite, derivatives, get_packet, op
from .._frames import warn_at_caller


def legacy_type_name(t):
    """torch's old-style type name used in some messages: torch.FloatTensor, torch.LongTensor."""
    return f"torch.{t.dtype.ir_name}Tensor"


def sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def windows(xp, a, kernel, stride, dilation):
    """All windows of the last len(kernel) dims of ``a``: shape (..., *out, *kernel), a view.

    out[i] = (L[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 (the caller pads first).
    """
    n = len(kernel)
    lead, spatial = a.shape[:-n], a.shape[-n:]
    out = [(L - d * (k - 1) - 1) // s + 1 for L, k, s, d in zip(spatial, kernel, stride, dilation)]
    st = a.strides
    strides = st[:-n] + tuple(st[-n + i] * stride[i] for i in range(n)) \
        + tuple(st[-n + i] * dilation[i] for i in range(n))
    return xp.lib.stride_tricks.as_strided(a, tuple(lead) + tuple(out) + tuple(kernel), strides)


def constant_padded(xp, a, pad_pairs, fill=0):
    """``a`` with (before, after) ``fill`` elements around its last len(pad_pairs) dims
    (np.pad is several times slower for this simple case)."""
    n = len(pad_pairs)
    shape = a.shape[:-n] + tuple(L + b + e for L, (b, e) in zip(a.shape[-n:], pad_pairs))
    out = xp.full(shape, fill, dtype=a.dtype)
    out[(Ellipsis,) + tuple(slice(b, b + L) for L, (b, e) in zip(a.shape[-n:], pad_pairs))] = a
    return out


def _expand(values, name, dim):
    # expand_param_if_needed: one value applies to every spatial dim
    if len(values) == 1:
        return list(values) * dim
    if len(values) != dim:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {dim} values to match the "
            f"convolution dimensions, but got {name}={sizes(values)}")
    return list(values)


def _check_shapes(x, w, bias, padding, stride, dilation, groups):
    """ATen's check_shape_forward, in its order and with its messages."""
    k, ws, xs = w.ndim, w.shape_tuple, x.shape_tuple
    if x.ndim != k:
        raise RuntimeError(
            f"Expected {k}-dimensional input for {k}-dimensional weight {sizes(ws)}, but got "
            f"{x.ndim}-dimensional input of size {sizes(xs)} instead")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
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


def conv_forward(x, w, bias, stride, pad_pairs, dilation, groups):
    """The convolution itself. ``pad_pairs``: (before, after) zeros per spatial dim."""
    if w.dtype is not x.dtype:
        raise RuntimeError(
            f"Input type ({legacy_type_name(x)}) and weight type ({legacy_type_name(w)}) should be "
            "the same or input should be a MKLDNN tensor and weight is a dense tensor")
    xp = xp_of(x)
    a = x._array
    if any(p != (0, 0) for p in pad_pairs):
        a = constant_padded(xp, a, pad_pairs)
    n = w.ndim - 2
    kernel = w.shape_tuple[2:]
    win = windows(xp, a, kernel, stride, dilation)           # (N, C, *out, *kernel)
    N, C = a.shape[:2]
    out = win.shape[2:2 + n]
    positions = int(np.prod(out))
    # im2col: (N, C, *kernel, *out) copied contiguously, the output positions innermost (the copy
    # then reads the input nearly sequentially); one batched GEMM per group then yields
    # (N, O, *out) directly, already in torch's contiguous layout.
    order = (0, 1) + tuple(range(2 + n, 2 + 2 * n)) + tuple(range(2, 2 + n))
    cols = xp.ascontiguousarray(win.transpose(order))
    cols = cols.reshape(N, groups, -1, positions)              # (N, G, Cg*prod(kernel), P)
    wa = w._array.reshape(1, groups, w.shape_tuple[0] // groups, -1)  # (1, G, O/G, Cg*prod(kernel))
    res = xp.matmul(wa, cols).reshape((N, -1) + tuple(out))  # (N, O, *out)
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
    dim = weight.ndim - 2
    if dim <= 0:
        raise RuntimeError("weight should have at least three dimensions")
    stride = _expand(stride, "stride", dim)
    padding = _expand(padding, "padding", dim)
    dilation = _expand(dilation, "dilation", dim)
    if transposed:
        raise NotImplementedError("reftrace: transposed convolution is not implemented")
    _check_shapes(input, weight, bias, padding, stride, dilation, groups)
    return conv_forward(input, weight, bias, stride, [(p, p) for p in padding], dilation, groups)


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
            return conv_forward(input, weight, bias, [1] * dim, pairs, dil, groups)
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


derivatives(convolution, {
    "input, weight, bias": "convolution_backward(grad, input, weight, (None if bias is None else "
                           "bias.shape), stride, padding, dilation, transposed, output_padding, "
                           "groups, grad_input_mask)"})
