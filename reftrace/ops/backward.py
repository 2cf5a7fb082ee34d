"""ATen's backward ops: the ops derivatives.yaml formulas call (threshold_backward,
select_backward, slice_backward, _unsafe_view, the softmax backwards ...).

They are ordinary ops of the table (torch's schemas, verbatim), so a backward pass run with
``create_graph=True`` records them and differentiates them again (double backward): each carries
its own derivatives.yaml entry, as every other op.
"""
import numpy as np

from .._tensor import _fresh, xp_of
from ._memory_format import like_input
from ._registry import derivatives, op
from .shape import slice_bounds


def _zeros(sizes, like):
    return _fresh(xp_of(like).zeros(tuple(sizes), dtype=like.dtype.np), like.dtype, like.device)


@op("threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor")
def threshold_backward(grad_output, self, threshold):
    xp = xp_of(grad_output)
    from .._promotion import result_type
    dt = result_type(grad_output, self)
    arr = xp.where(self._array <= threshold, xp.zeros((), dtype=dt.np),
                   grad_output._array.astype(dt.np, copy=False))
    return _fresh(xp.asarray(arr, dtype=dt.np), dt, grad_output.device)


derivatives(threshold_backward, {"grad_output": "threshold_backward(grad, self, threshold)",
                                 "self": "zeros_like(grad)"})


@op("select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor")
def select_backward(grad_output, input_sizes, dim, index):
    out = _zeros(input_sizes, grad_output)
    n = len(input_sizes)
    dim = dim + n if dim < 0 else dim
    out._array[(slice(None),) * dim + (index,)] = grad_output._array
    return out


derivatives(select_backward, {"grad_output": "grad.select(dim, index)"})


@op("slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
    "SymInt step) -> Tensor")
def slice_backward(grad_output, input_sizes, dim, start, end, step):
    out = _zeros(input_sizes, grad_output)
    n = len(input_sizes)
    dim = dim + n if dim < 0 else dim
    s, e = slice_bounds(input_sizes[dim], start, end)
    out._array[(slice(None),) * dim + (slice(s, e, step),)] = grad_output._array
    return out


derivatives(slice_backward, {"grad_output": "grad.slice(dim, start, end, step)"})


@op("_unsafe_view(Tensor self, SymInt[] size) -> Tensor")
def _unsafe_view(self, size):
    from .shape import view
    if not self.is_contiguous():
        return _fresh(np.ascontiguousarray(self._array).reshape(_infer(size, self._array.size)),
                      self.dtype, self.device)
    # shares self's storage but is no view for autograd ("unsafe"): an in-place op on it (linear's
    # output.add_(bias) after matmul) records AddBackward0, not CopySlices; own version counter
    out = view.kernel(self, size)
    out._view_meta = False
    out._vc = [0]
    return out


def _infer(size, numel):
    size = list(size)
    if -1 in size:
        i = size.index(-1)
        rest = 1
        for j, s in enumerate(size):
            if j != i:
                rest *= s
        size[i] = numel // rest if rest else 0
    return tuple(size)


derivatives(_unsafe_view, {"self": "grad.reshape(self.shape)"})


@op("_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor")
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    g, y = grad_output._array, output._array
    if g.dtype == np.float16:  # SoftMaxKernel computes reduced floats in float (opmath)
        g, y = g.astype(np.float32), y.astype(np.float32)
    arr = (g - (g * y).sum(axis=dim, keepdims=True)) * y
    return _fresh(arr.astype(input_dtype.np, copy=False), input_dtype, grad_output.device)


derivatives(_softmax_backward_data, {
    "grad_output": "_softmax_backward_data(grad.to(output.dtype), output, dim, input_dtype)",
    "output": "softmax_double_backward(grad.to(output.dtype), grad_output, dim, output).to(output.dtype)"})


@op("_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor")
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    g, y = grad_output._array, output._array
    arr = g - xp_of(output).exp(y) * g.sum(axis=dim, keepdims=True)
    return _fresh(arr.astype(input_dtype.np, copy=False), input_dtype, grad_output.device)


derivatives(_log_softmax_backward_data, {
    "grad_output": "grad.to(output.dtype) - (grad.to(output.dtype) * output.exp()).sum(dim, True)",
    "output": "(-grad_output.sum(dim, True) * output.exp() * grad.to(output.dtype)).to(output.dtype)"})




# -- pointwise backward ops: one NumPy expression each -------------------------------------------

def _pointwise(fn, *tensors):
    """fn over the arrays of ``tensors`` (same dtype: autograd gives them so), a fresh tensor."""
    from .._promotion import result_type
    dt = result_type(*tensors)
    arr = fn(*[t._array.astype(dt.np, copy=False) for t in tensors])
    return _fresh(np.ascontiguousarray(np.asarray(arr, dtype=dt.np)), dt, tensors[0].device)


@op("sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor")
def sigmoid_backward(grad_output, output):
    # (complex: BinaryOpsKernel's sigmoid_backward multiplies by the conjugate, a * conj((1 - b) * b))
    return _pointwise(lambda g, y: g * np.conj((1 - y) * y), grad_output, output)


derivatives(sigmoid_backward, {"grad_output": "sigmoid_backward(grad, output.conj())",
                               "output": "grad.conj() * grad_output * (-2 * output.conj() + 1)"})


@op("tanh_backward(Tensor grad_output, Tensor output) -> Tensor")
def tanh_backward(grad_output, output):
    # (complex: a * conj(1 - b * b), as BinaryOpsKernel's tanh_backward)
    return _pointwise(lambda g, y: g * np.conj(1 - y * y), grad_output, output)


derivatives(tanh_backward, {"grad_output": "tanh_backward(grad, output.conj())",
                            "output": "grad.conj() * (-2 * output.conj() * grad_output)"})


@op("hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor")
def hardtanh_backward(grad_output, self, min_val, max_val):
    return _pointwise(lambda g, x: np.where((x <= min_val) | (x >= max_val), 0, g), grad_output, self)


derivatives(hardtanh_backward, {"grad_output": "hardtanh_backward(grad, self, min_val, max_val)",
                                "self": "zeros_like(grad)"})


@op("leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor")
def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    return _pointwise(lambda g, x: np.where(x > 0, g, g * negative_slope), grad_output, self)


derivatives(leaky_relu_backward, {
    "grad_output": "leaky_relu_backward(grad, self, negative_slope, False)",
    "self": "zeros_like(grad)"})


@op("elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, "
    "Tensor self_or_result) -> Tensor")
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    negcoef, poscoef, negiptcoef = alpha * scale, scale, input_scale
    if is_result:
        fn = lambda g, y: np.where(y <= 0, g * negiptcoef * (y + negcoef), g * poscoef)  # noqa: E731
    else:
        fn = lambda g, x: np.where(  # noqa: E731
            x <= 0, g * negiptcoef * negcoef * np.exp(x * negiptcoef), g * poscoef)
    return _pointwise(fn, grad_output, self_or_result)


derivatives(elu_backward, {
    "grad_output": "elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result)",
    "self_or_result": "elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result, "
                      "self_or_result)"})


@op("gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor")
def gelu_backward(grad_output, self, approximate):
    import math
    if approximate == "tanh":
        k_beta, k_kappa = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5, 0.044715

        def fn(g, x):
            inner = k_beta * (x + k_kappa * x ** 3)
            t = np.tanh(inner)
            left, right = 0.5 * x, 1 + t
            left_d, right_d = 0.5 * right, left * (1 - t * t) * k_beta * (1 + 3 * k_kappa * x * x)
            return g * (left_d + right_d)
    else:
        def fn(g, x):
            cdf = 0.5 * (1 + _erf(x / math.sqrt(2.0)))
            pdf = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
            return g * (cdf + x * pdf)
    return _pointwise(fn, grad_output, self)


def _erf(x):
    from .activation import _erf as erf  # NumPy has none: activation's Chebyshev series
    return erf(x)


derivatives(gelu_backward, {"grad_output": "gelu_backward(grad, self, approximate=approximate)",
                            "self": "gelu_double_backward(grad, grad_output, self, approximate)"})


@op("softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor")
def softplus_backward(grad_output, self, beta, threshold):
    def fn(g, x):
        z = np.exp(x * beta)
        return np.where(x * beta > threshold, g, g * z / (z + 1))
    return _pointwise(fn, grad_output, self)


derivatives(softplus_backward, {
    "grad_output": "softplus_backward(grad, self, beta, threshold)",
    "self": "softplus_double_backward(grad * grad_output, self, beta, threshold)"})


@op("silu_backward(Tensor grad_output, Tensor self) -> Tensor")
def silu_backward(grad_output, self):
    def fn(g, x):
        s = 1 / (1 + np.exp(-x))
        return g * s * (1 + x * (1 - s))
    return _pointwise(fn, grad_output, self)


derivatives(silu_backward, {
    "grad_output": "silu_backward(grad, self)",
    "self": "silu_double_backward(grad, grad_output, self)"})


# -- nn backward kernels ------------------------------------------------------------------------

def _window_slices(k_index, stride, dilation, out):
    """The input positions kernel offset ``k_index`` touches, as slices per spatial dim."""
    return tuple(slice(ki * d, ki * d + s * (o - 1) + 1, s)
                 for ki, s, d, o in zip(k_index, stride, dilation, out))


@op("convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, "
    "SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, "
    "SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                         transposed, output_padding, groups, output_mask):
    """Gradients of a convolution: input (the kernel's taps scattered back), weight (input
    windows times grad_output), bias (grad_output summed). A transposed convolution is the
    adjoint of a plain one, so its gradients are the plain convolution's with the roles of
    input and grad_output swapped (``_transposed_convolution_backward``)."""
    n = weight.ndim - 2
    stride, padding, dilation = (list(v) * n if len(v) == 1 else list(v)
                                 for v in (stride, padding, dilation))
    grad_bias = None
    if output_mask[2] and bias_sizes is not None:
        g = grad_output._array
        grad_bias = _fresh(g.sum(axis=(0,) + tuple(range(2, g.ndim))), grad_output.dtype,
                           grad_output.device)
    if input.numel() == 0 or grad_output.numel() == 0 or weight.numel() == 0:
        # ConvBackend::Empty: zero gradients of the inputs' shapes (nothing to convolve)
        xp = xp_of(input)
        grad_input = _fresh(xp.zeros(input.shape_tuple, input.dtype.np), input.dtype,
                            input.device) if output_mask[0] else None
        grad_weight = _fresh(xp.zeros(weight.shape_tuple, weight.dtype.np), weight.dtype,
                             weight.device) if output_mask[1] else None
        return grad_input, grad_weight, grad_bias
    if transposed:
        grad_input, grad_weight = _transposed_convolution_backward(
            grad_output, input, weight, stride, padding, dilation, groups, output_mask)
        return grad_input, grad_weight, grad_bias
    from .nn_conv import constant_padded, windows
    xp = xp_of(input)
    g = grad_output._array
    N, O = g.shape[:2]
    out = g.shape[2:]
    kernel = weight.shape_tuple[2:]
    C = input.shape_tuple[1]
    Cg, Og = C // groups, O // groups
    a = input._array
    pads = [(p, p) for p in padding]
    padded = constant_padded(xp, a, pads) if any(padding) else a
    gg = g.reshape((N, groups, Og) + tuple(out))
    grad_input = grad_weight = None
    if output_mask[0]:
        w = weight._array.reshape((groups, Og, Cg) + tuple(kernel))
        dx = xp.zeros(padded.shape, dtype=a.dtype).reshape((N, groups, Cg) + padded.shape[2:])
        for k_index in np.ndindex(*kernel):
            taps = w[(slice(None), slice(None), slice(None)) + k_index]       # (G, Og, Cg)
            contrib = xp.einsum("ngo...,goc->ngc...", gg, taps)
            dx[(Ellipsis,) + _window_slices(k_index, stride, dilation, out)] += contrib
        dx = dx.reshape(padded.shape)
        dx = dx[(slice(None), slice(None)) + tuple(slice(p, p + L) for p, L in
                                                    zip(padding, a.shape[2:]))]
        grad_input = _fresh(xp.ascontiguousarray(dx), input.dtype, input.device)
    if output_mask[1]:
        win = windows(xp, padded, kernel, stride, dilation)   # (N, C, *out, *kernel)
        win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in out)]
        win = win.reshape((N, groups, Cg) + win.shape[2:])
        # (spatial subscripts distinct from n, g, o, c)
        letters, ks = "ijk"[:n], "pqr"[:n]
        dw = xp.einsum(f"ngo{letters},ngc{letters}{ks}->goc{ks}", gg, win)
        grad_weight = _fresh(xp.ascontiguousarray(dw.reshape(weight.shape_tuple)).astype(
            weight.dtype.np, copy=False), weight.dtype, weight.device)
    return grad_input, grad_weight, grad_bias


def _transposed_convolution_backward(grad_output, input, weight, stride, padding, dilation,
                                     groups, output_mask):
    """y = conv_transpose(x, w) is the adjoint (in x) of the plain convolution with w, so
    grad_x = conv(grad_y, w) (the same stride, padding, dilation and groups; output_padding's
    extra far-end positions are never read), and grad_w is the plain convolution's weight
    gradient with x in the role of its grad_output and grad_y in the role of its input (the
    weight laid out (C_in, C_out / groups, *kernel) either way)."""
    from .nn_conv import constant_padded, conv_forward, windows
    xp = xp_of(input)
    n = weight.ndim - 2
    spatial = input.shape_tuple[2:]
    grad_input = grad_weight = None
    if output_mask[0]:
        gi = conv_forward(grad_output, weight, None, stride, [(p, p) for p in padding],
                          dilation, groups)
        gi = gi._array[(slice(None), slice(None)) + tuple(slice(0, L) for L in spatial)]
        grad_input = _fresh(xp.ascontiguousarray(gi), input.dtype, input.device)
    if output_mask[1]:
        g = grad_output._array
        N, O = g.shape[:2]
        C = input.shape_tuple[1]
        Cg, Og = C // groups, O // groups
        kernel = weight.shape_tuple[2:]
        padded = constant_padded(xp, g, [(p, p) for p in padding]) if any(padding) else g
        win = windows(xp, padded, kernel, stride, dilation)   # (N, O, *positions, *kernel)
        win = win[(slice(None), slice(None)) + tuple(slice(0, L) for L in spatial)]
        win = win.reshape((N, groups, Og) + win.shape[2:])
        xg = input._array.reshape((N, groups, Cg) + tuple(spatial))
        letters, ks = "ijk"[:n], "pqr"[:n]
        dw = xp.einsum(f"ngc{letters},ngo{letters}{ks}->gco{ks}", xg, win)
        grad_weight = _fresh(xp.ascontiguousarray(dw.reshape(weight.shape_tuple)).astype(
            weight.dtype.np, copy=False), weight.dtype, weight.device)
    return grad_input, grad_weight


@op("max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    xp = xp_of(self)
    shape = self.shape_tuple
    plane = shape[-2] * shape[-1]
    lead = int(np.prod(shape[:-2]))
    out = xp.zeros((lead, plane), dtype=grad_output.dtype.np)
    idx = indices._array.reshape(lead, -1)
    rows = xp.broadcast_to(xp.arange(lead)[:, None], idx.shape)
    xp.add.at(out, (rows, idx), grad_output._array.reshape(lead, -1))
    # (ATen resizes grad_input to self.suggest_memory_format(): channels-last stays so)
    return like_input(_fresh(out.reshape(shape), grad_output.dtype, grad_output.device), self)


derivatives(max_pool2d_with_indices_backward, {
    "grad_output": "max_pool_double_backward(grad, indices, 2)", "self": "zeros_like(self)",
    "indices": "non_differentiable"})


def _avg_divisors(xp, in_size, out, k, s, p, ceil_mode, count_include_pad, divisor_override):
    """AvgPoolKernel.cpp's divisor of each output position (per spatial dim, then combined)."""
    if divisor_override:
        return None
    per_dim = []
    for L, o, kk, ss, pp in zip(in_size, out, k, s, p):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, L + pp)
        pool = end - start
        cstart, cend = np.maximum(start, 0), np.minimum(end, L)
        per_dim.append((pool, cend - cstart))
    (ph, ch), (pw, cw) = per_dim
    full = np.outer(ph, pw) if count_include_pad else np.outer(ch, cw)
    return xp.asarray(full)


@op("avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
    "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    xp = xp_of(self)
    k = list(kernel_size) * (2 // len(kernel_size))
    s = list(stride) * (2 // len(stride)) if stride else k
    p = list(padding) * (2 // len(padding))
    g = grad_output._array
    out = g.shape[-2:]
    in_size = self.shape_tuple[-2:]
    div = _avg_divisors(xp, in_size, out, k, s, p, ceil_mode, count_include_pad, divisor_override)
    scaled = g / (div if div is not None else divisor_override)
    # taps beyond the padded input (ceil_mode) fall off the end: a generous buffer, then cropped
    H = max(in_size[0] + 2 * p[0], (out[0] - 1) * s[0] + k[0])
    W = max(in_size[1] + 2 * p[1], (out[1] - 1) * s[1] + k[1])
    dx = xp.zeros(g.shape[:-2] + (H, W), dtype=g.dtype)
    for kh in range(k[0]):
        for kw in range(k[1]):
            dx[..., kh:kh + s[0] * (out[0] - 1) + 1:s[0], kw:kw + s[1] * (out[1] - 1) + 1:s[1]] += scaled
    dx = dx[..., p[0]:p[0] + in_size[0], p[1]:p[1] + in_size[1]]
    return _fresh(xp.ascontiguousarray(dx).astype(self.dtype.np, copy=False), self.dtype, self.device)


derivatives(avg_pool2d_backward, {
    "grad_output": "avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, "
                   "divisor_override)",
    "self": "zeros_like(self)"})


@op("_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor")
def _adaptive_avg_pool2d_backward(grad_output, self):
    xp = xp_of(self)
    g = grad_output._array
    H, W = self.shape_tuple[-2:]
    OH, OW = g.shape[-2:]
    dx = xp.zeros(self.shape_tuple, dtype=g.dtype)
    for i in range(OH):
        h0, h1 = (i * H) // OH, -(-((i + 1) * H) // OH)
        for j in range(OW):
            w0, w1 = (j * W) // OW, -(-((j + 1) * W) // OW)
            dx[..., h0:h1, w0:w1] += g[..., i:i + 1, j:j + 1] / ((h1 - h0) * (w1 - w0))
    return _fresh(dx, self.dtype, self.device)


derivatives(_adaptive_avg_pool2d_backward, {
    "grad_output": "adaptive_avg_pool2d(grad, [grad_output.shape[-2], grad_output.shape[-1]])",
    "self": "zeros_like(self)"})


derivatives(convolution_backward, {
    "grad_output, input, weight": "convolution_backward_backward(grads, grad_output, input, weight, "
                                  "stride, padding, dilation, transposed, output_padding, groups, "
                                  "grad_input_mask)"})
