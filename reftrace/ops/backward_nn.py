"""ATen's backward ops of the nn activations and losses (hardswish_backward, glu_backward,
smooth_l1_loss_backward, ...): the ops the nn layers' derivatives.yaml formulas call.

Kernels follow ATen's CPU kernels (aten/src/ATen/native/cpu/Activation.cpp, BinaryOpsKernel.cpp,
Loss.cpp), one vectorised xp expression each. Each op carries its own derivatives.yaml entry where
the yaml has one, so double backward runs through it as torch's does.
"""
import numpy as np

from .._tensor import _fresh, xp_of
from ._registry import composite, derivatives, op

_MEAN = 1  # at::Reduction::Mean


def _elementwise(fn, out_like, *tensors):
    """fn(xp, *arrays) over ``tensors`` in their common dtype, broadcast to ``out_like``'s shape."""
    from .._promotion import result_type
    xp = xp_of(out_like)
    dt = result_type(*tensors)
    arrays = [t._array.astype(dt.np, copy=False) for t in tensors]
    arr = xp.broadcast_to(xp.asarray(fn(xp, *arrays), dtype=dt.np), out_like.shape_tuple)
    return _fresh(xp.ascontiguousarray(arr), dt, out_like.device)


# -- activations --------------------------------------------------------------------------------

@op("log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor")
def log_sigmoid_backward(grad_output, self, buffer):
    # ATen's CPU kernel: z = buffer = exp(-|x|); (x < 0 ? 1 - z/(1+z) : z/(1+z)) * grad
    return _elementwise(lambda xp, g, x, z: xp.where(x < 0, 1 - z / (1 + z), z / (1 + z)) * g,
                        self, grad_output, self, buffer)


derivatives(log_sigmoid_backward, {
    "grad_output": "log_sigmoid_backward(grad, self, buffer)",
    "self": "log_sigmoid_double_backward(grad * grad_output, self)"})


@op("hardswish_backward(Tensor grad_output, Tensor self) -> Tensor")
def hardswish_backward(grad_output, self):
    return _elementwise(lambda xp, g, x: xp.where(x <= -3, 0, xp.where(x < 3, g * (x / 3 + 0.5), g)),
                        self, grad_output, self)


derivatives(hardswish_backward, {
    "grad_output": "hardswish_backward(grad, self)",
    "self": "where(logical_and(-3.0 < self, self < 3.0), grad * grad_output / 3.0, "
            "zeros((), dtype=self.dtype, device=self.device))"})


@op("hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor")
def hardsigmoid_backward(grad_output, self):
    return _elementwise(lambda xp, g, x: xp.where((x > -3) & (x < 3), g / 6, 0),
                        self, grad_output, self)


def _shrink_backward(grad_out, self, lambd):
    return _elementwise(lambda xp, g, x: xp.where((x >= -lambd) & (x <= lambd), 0, g),
                        self, grad_out, self)


@op("softshrink_backward(Tensor grad_output, Tensor self, Scalar lambd) -> Tensor")
def softshrink_backward(grad_output, self, lambd):
    return _shrink_backward(grad_output, self, lambd)


derivatives(softshrink_backward, {"grad_output": "softshrink_backward(grad, self, lambd)",
                                  "self": "zeros_like(grad)"})


@op("hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor")
def hardshrink_backward(grad_out, self, lambd):
    return _shrink_backward(grad_out, self, lambd)


derivatives(hardshrink_backward, {"grad_out": "hardshrink_backward(grad, self, lambd)",
                                  "self": "zeros_like(grad)"})


@op("mish_backward(Tensor grad_output, Tensor self) -> Tensor")
def mish_backward(grad_output, self):
    def fn(xp, g, x):
        sigmoid = 1 / (1 + xp.exp(-x))
        tanh_softplus = xp.tanh(xp.log1p(xp.exp(x)))
        return g * (tanh_softplus + x * sigmoid * (1 - tanh_softplus * tanh_softplus))
    return _elementwise(fn, self, grad_output, self)


@op("glu_backward(Tensor grad_output, Tensor self, int dim) -> Tensor")
def glu_backward(grad_output, self, dim):
    def fn(xp, g, x):
        first, second = xp.split(x, 2, axis=dim)
        sig = 1 / (1 + xp.exp(-second))
        return xp.concatenate([g * sig, g * first * sig * (1 - sig)], axis=dim)
    return _elementwise(fn, self, grad_output, self)


derivatives(glu_backward, {"grad_output": "glu_double_backward_grad_output(grad, self, dim)",
                           "self": "glu_double_backward(grad, grad_output, self, dim)"})


@op("_prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)")
def _prelu_kernel_backward(grad_output, self, weight):
    """grad_input = x > 0 ? g : w * g; grad_weight = x > 0 ? 0 : x * g, summed to weight's shape
    (one weight per channel, dim 1, or a single one)."""
    xp = xp_of(self)
    g, x = grad_output._array, self._array
    w = weight._array.reshape(-1)
    n = w.size
    if n != 1 and self.ndim >= 2:
        w = w.reshape((-1,) + (1,) * (self.ndim - 2))
    elif n == 1:
        w = w.reshape(())
    grad_input = xp.where(x > 0, g, w * g)
    per_elem = xp.where(x > 0, 0, x * g)
    if n == 1:
        gw = per_elem.sum().reshape(weight.shape_tuple)
    else:
        axes = tuple(i for i in range(self.ndim) if i != (1 if self.ndim >= 2 else 0))
        gw = per_elem.sum(axis=axes).reshape(weight.shape_tuple)
    return (_fresh(xp.ascontiguousarray(grad_input.astype(self.dtype.np, copy=False)), self.dtype,
                   self.device),
            _fresh(xp.ascontiguousarray(gw.astype(weight.dtype.np, copy=False)), weight.dtype,
                   weight.device))


derivatives(_prelu_kernel_backward, {
    "grad_output": "((where(self >= 0, grads[0], grads[0] * weight + grads[1] * self) "
                   "if grads[1] is not None else where(self >= 0, grads[0], grads[0] * weight)) "
                   "if grads[0] is not None else "
                   "where(self >= 0, zeros((), dtype=grad_output.dtype, device=grad_output.device), "
                   "grads[1] * self))",
    "self": "(where(self >= 0, zeros((), dtype=self.dtype, device=self.device), "
            "grad_output * grads[1]) if grads[1] is not None else zeros_like(self))",
    "weight": "(where(self >= 0, zeros((), dtype=weight.dtype, device=weight.device), "
              "grad_output * grads[0]) if grads[0] is not None else zeros_like(self))"})


# -- losses -------------------------------------------------------------------------------------

def _norm(self, reduction):
    return 1.0 / self._array.size if reduction == _MEAN and self._array.size else 1.0


@op("smooth_l1_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
    "float beta) -> Tensor")
def smooth_l1_loss_backward(grad_output, self, target, reduction, beta):
    norm = _norm(self, reduction)
    if beta <= 0:  # Loss.cpp: l1_loss_backward, sign(self - target)
        return _elementwise(lambda xp, g, x, t: xp.sign(x - t) * norm * g,
                            self, grad_output, self, target)

    def fn(xp, g, x, t):
        d = x - t
        return xp.where(d <= -beta, -norm * g, xp.where(d >= beta, norm * g, norm * d * g / beta))
    return _elementwise(fn, self, grad_output, self, target)


derivatives(smooth_l1_loss_backward, {
    "grad_output": "smooth_l1_loss_backward(grad, self, target, reduction, beta)",
    "self": "smooth_l1_loss_double_backward(grad * grad_output, self, target, reduction, beta)",
    "target": "-smooth_l1_loss_double_backward(grad * grad_output, self, target, reduction, beta)"})


@op("huber_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "
    "float delta) -> Tensor")
def huber_loss_backward(grad_output, self, target, reduction, delta):
    norm = _norm(self, reduction)

    def fn(xp, g, x, t):
        d = x - t
        return xp.where(d <= -delta, -norm * delta * g,
                        xp.where(d >= delta, norm * delta * g, norm * d * g))
    return _elementwise(fn, self, grad_output, self, target)


derivatives(huber_loss_backward, {
    "grad_output": "huber_loss_double_backward_grad_output(grad, grad_output, self, target, "
                   "reduction, delta)",
    "self": "huber_loss_double_backward(grad * grad_output, self, target, reduction, delta)",
    "target": "-huber_loss_double_backward(grad * grad_output, self, target, reduction, delta)"})


@op("soft_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) "
    "-> Tensor")
def soft_margin_loss_backward(grad_output, self, target, reduction):
    norm = _norm(self, reduction)

    def fn(xp, g, x, t):
        z = xp.exp(-t * x)
        return -norm * t * z / (1 + z) * g
    return _elementwise(fn, self, grad_output, self, target)


derivatives(soft_margin_loss_backward, {
    "grad_output": "soft_margin_loss_double_backward_grad_output(grad, grad_output, self, target, "
                   "reduction)",
    "self": "soft_margin_loss_double_backward(grad * grad_output, self, target, reduction)"})


@op("binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, "
    "Tensor? weight=None, int reduction=Mean) -> Tensor")
def binary_cross_entropy_backward(grad_output, self, target, weight, reduction):
    norm = _norm(self, reduction)
    eps = 1e-12  # Loss.cpp's EPSILON

    def fn(xp, g, x, t, *w):
        r = g * (x - t) / xp.maximum((1 - x) * x, eps)
        return (r * w[0] if w else r) * norm
    tensors = (grad_output, self, target) + ((weight,) if weight is not None else ())
    return _elementwise(fn, self, *tensors)


derivatives(binary_cross_entropy_backward, {
    "self": "binary_cross_entropy_double_backward(grad_output, grad, self, target, weight, "
            "reduction)",
    "target": "binary_cross_entropy_double_backward_target(grad, grad_output, self, target, weight, "
              "reduction)",
    "grad_output": "binary_cross_entropy_double_backward_grad_output(grad, self, target, weight, "
                   "reduction)"})


@op("multi_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, Scalar p, "
    "Scalar margin, Tensor? weight=None, int reduction=Mean) -> Tensor")
def multi_margin_loss_backward(grad_output, self, target, p, margin, weight, reduction):
    """LossMultiMargin.cpp: for each sample, every class j != target whose margin
    z = margin - x[target] + x[j] is positive adds h = (p == 1 ? 1 : 2 z) (times weight[target])
    to grad[j] and takes it from grad[target]; scaled by 1 / dim (and 1 / nframe for mean)."""
    xp = xp_of(self)
    x = self._array.reshape(-1, self.shape_tuple[-1]) if self.ndim else self._array.reshape(1, 1)
    nframe, dim = x.shape
    t = target._array.reshape(-1).astype(xp.int64)
    rows = xp.arange(nframe)
    z = margin - x[rows, t][:, None] + x
    h = xp.where(z > 0, 1 if p == 1 else 2 * z, 0).astype(x.dtype)
    h[rows, t] = 0
    if weight is not None:
        h = h * weight._array[t][:, None]
    g = 1.0 / (nframe * dim) if reduction == _MEAN else 1.0 / dim
    gi = h * g
    gi[rows, t] = -gi.sum(axis=1)
    go = grad_output._array
    gi = gi * (go.reshape(-1, 1) if go.ndim else go)
    return _fresh(xp.ascontiguousarray(gi.reshape(self.shape_tuple).astype(self.dtype.np)),
                  self.dtype, self.device)


@op("multilabel_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, "
    "int reduction, Tensor is_target) -> Tensor")
def multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target):
    """LossMultiLabelMargin.cpp: for each sample, every target j (entries before the first -1)
    and non-target k with 1 - (x[j] - x[k]) > 0 adds g to grad[k] and takes it from grad[j];
    g = 1 / dim (and 1 / nframe for mean), times grad_output."""
    xp = xp_of(self)
    x = self._array.reshape(-1, self.shape_tuple[-1]) if self.ndim else self._array.reshape(1, 1)
    nframe, dim = x.shape
    t = target._array.reshape(nframe, dim).astype(xp.int64)
    valid = xp.cumprod(t >= 0, axis=1).astype(bool)
    is_t = is_target._array.reshape(nframe, dim) != 0
    picked = xp.take_along_axis(x, xp.where(valid, t, 0), 1)                     # (n, j)
    active = ((1 - (picked[:, :, None] - x[:, None, :])) > 0) \
        & valid[:, :, None] & ~is_t[:, None, :]                                  # (n, j, k)
    g = 1.0 / (nframe * dim) if reduction == _MEAN else 1.0 / dim
    gi = active.sum(1).astype(x.dtype) * g                                       # to each k
    take = active.sum(2).astype(x.dtype) * g                                     # from each j
    rows = xp.repeat(xp.arange(nframe), dim).reshape(nframe, dim)
    xp.subtract.at(gi, (rows[valid], t[valid]), take[valid])
    go = grad_output._array
    gi = gi * (go.reshape(-1, 1) if go.ndim else go)
    return _fresh(xp.ascontiguousarray(gi.reshape(self.shape_tuple).astype(self.dtype.np)),
                  self.dtype, self.device)


# (no derivatives.yaml entry: torch cannot differentiate it again either)


# -- pooling ------------------------------------------------------------------------------------

def _scatter_to_planes(xp, grad, shape, nd, flat_index):
    """The adjoint of a gather over the last ``nd`` dims: ``grad`` (leading dims, then the
    gathered taps, flattened) added at the flat spatial positions ``flat_index`` (the same shape,
    or one row of taps shared by every leading index) of a zero tensor of ``shape``."""
    lead = int(np.prod(shape[:-nd]))
    plane = int(np.prod(shape[-nd:]))
    if lead == 0:  # an empty batch: nothing to scatter (and reshape(0, -1) is ambiguous)
        return xp.zeros(shape, dtype=grad.dtype)
    g = grad.reshape(lead, -1)
    idx = xp.broadcast_to(flat_index, g.shape) + xp.arange(lead)[:, None] * plane
    if g.dtype.kind == "f":  # bincount: a vectorised add.at (it sums in float64)
        out = xp.bincount(idx.ravel(), weights=g.ravel(), minlength=lead * plane)
    else:
        out = xp.zeros(lead * plane, dtype=g.dtype)
        xp.add.at(out, idx.ravel(), g.ravel())
    return out.reshape(shape).astype(grad.dtype, copy=False)


def _max_pool_backward(grad_output, self, indices, nd):
    """max pooling's gradient: each output's gradient goes to the input position its index
    (flat over the last ``nd`` dims, as the forward's indices are) names."""
    xp = xp_of(self)
    lead = int(np.prod(self.shape_tuple[:-nd]))
    arr = _scatter_to_planes(xp, grad_output._array, self.shape_tuple, nd,
                             indices._array.reshape(lead, -1))
    return _fresh(xp.ascontiguousarray(arr), grad_output.dtype, grad_output.device)


@op("max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, "
    "int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> Tensor")
def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation,
                                     ceil_mode, indices):
    return _max_pool_backward(grad_output, self, indices, 3)


derivatives(max_pool3d_with_indices_backward, {
    "grad_output": "max_pool_double_backward(grad, indices, 3)", "self": "zeros_like(self)",
    "indices": "non_differentiable"})


@op("adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor")
def adaptive_max_pool2d_backward(grad_output, self, indices):
    return _max_pool_backward(grad_output, self, indices, 2)


derivatives(adaptive_max_pool2d_backward, {
    "grad_output": "max_pool_double_backward(grad, indices, 2)", "self": "zeros_like(self)"})


@op("adaptive_max_pool3d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor")
def adaptive_max_pool3d_backward(grad_output, self, indices):
    return _max_pool_backward(grad_output, self, indices, 3)


derivatives(adaptive_max_pool3d_backward, {
    "grad_output": "max_pool_double_backward(grad, indices, 3)", "self": "zeros_like(self)"})


@op("_adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor")
def _adaptive_avg_pool3d_backward(grad_output, self):
    """Each output's gradient, over its region's size, to every input of its region (the
    forward's regions: nn_adaptive_pool._gathered)."""
    from .nn_adaptive_pool import _gathered
    xp = xp_of(self)
    out = grad_output.shape_tuple[-3:]
    _, valid, flat_index = _gathered(xp, self._array, list(out))   # (*out, K) each
    share = grad_output._array[..., None] * valid / valid.sum(-1, keepdims=True)  # (..., *out, K)
    arr = _scatter_to_planes(xp, share.reshape(share.shape[:-4] + (int(np.prod(share.shape[-4:])),)), self.shape_tuple, 3,
                             xp.where(valid, flat_index, 0).reshape(-1))
    return _fresh(xp.ascontiguousarray(arr), grad_output.dtype, grad_output.device)


derivatives(_adaptive_avg_pool3d_backward, {
    "grad_output": "_adaptive_avg_pool3d(grad, [grad_output.shape[-3], grad_output.shape[-2], "
                   "grad_output.shape[-1]])",
    "self": "zeros_like(self)"})


@op("avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, "
    "int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor")
def avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    """Each output's gradient over its divisor (AvgPoolKernel.cpp's, as the forward's) to every
    tap of its window: one strided add per kernel offset."""
    xp = xp_of(self)
    nd = 3
    k = list(kernel_size) * (nd // len(kernel_size))
    s = list(stride) * (nd // len(stride)) if stride else k
    p = list(padding) * (nd // len(padding))
    g = grad_output._array
    out = g.shape[-nd:]
    in_size = self.shape_tuple[-nd:]
    div = divisor_override
    if not div:
        div = 1
        for i, (L, kk, pp, ss, o) in enumerate(zip(in_size, k, p, s, out)):
            start = np.arange(o) * ss - pp
            end = np.minimum(start + kk, L + pp)
            count = end - start if count_include_pad else np.minimum(end, L) - np.maximum(start, 0)
            div = div * count.reshape((-1,) + (1,) * (nd - 1 - i))
        div = xp.asarray(div)
    scaled = g / div
    # taps beyond the padded input (ceil_mode) fall off the end: a generous buffer, then cropped
    padded = tuple(max(L + 2 * pp, (o - 1) * ss + kk) for L, pp, o, ss, kk in zip(in_size, p, out, s, k))
    dx = xp.zeros(g.shape[:-nd] + padded, dtype=g.dtype)
    for offset in np.ndindex(*k):
        dx[(Ellipsis,) + tuple(slice(o0, o0 + ss * (o - 1) + 1, ss)
                               for o0, ss, o in zip(offset, s, out))] += scaled
    dx = dx[(Ellipsis,) + tuple(slice(pp, pp + L) for pp, L in zip(p, in_size))]
    return _fresh(xp.ascontiguousarray(dx).astype(self.dtype.np, copy=False), self.dtype,
                  self.device)


derivatives(avg_pool3d_backward, {
    "grad_output": "avg_pool3d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, "
                   "divisor_override)",
    "self": "zeros_like(self)"})


# -- upsampling ---------------------------------------------------------------------------------
# The forward (nn_upsample._separable / _nearest) reads, one spatial axis at a time,
# out[o] = sum_k w[o, k] * in[idx[o, k]]; its adjoint adds grad[o] * w[o, k] to in[idx[o, k]],
# the axes in reverse order, with the forward's own taps.

def _upsample_adjoint(grad_output, input_size, taps, order):
    xp = xp_of(grad_output)
    dims = len(input_size) - 2
    ftype = np.float64 if grad_output.dtype.np == np.float64 else np.float32
    g = grad_output._array.astype(ftype, copy=False)
    for i in reversed(list(order or range(dims))):
        axis = 2 + i
        idx, w = taps(input_size[axis], g.shape[axis], i, ftype)
        moved = xp.moveaxis(g, axis, -1)                                # (..., out)
        contrib = moved[..., None] * xp.asarray(w)                      # (..., out, K)
        shape = moved.shape[:-1] + (input_size[axis],)
        g = xp.moveaxis(_scatter_to_planes(xp, contrib, shape, 1, xp.asarray(idx).reshape(-1)),
                        -1, axis)
    return _fresh(xp.ascontiguousarray(g.astype(grad_output.dtype.np, copy=False)),
                  grad_output.dtype, grad_output.device)


_SCALE_ARGS = {1: "float? scales=None", 2: "float? scales_h=None, float? scales_w=None",
               3: "float? scales_d=None, float? scales_h=None, float? scales_w=None"}


def _register_upsample_backward(name, dims, align_corners):
    """``{name}_backward``: native_functions.yaml's schema, the adjoint kernel, and the yaml's
    entry (its gradient is the forward itself: the op is linear in grad_output)."""
    from . import nn_upsample as U
    ac = "bool align_corners, " if align_corners else ""
    scales = ", ".join(s.split()[1].split("=")[0] for s in _SCALE_ARGS[dims].split(", "))

    @op(f"{name}_backward(Tensor grad_output, SymInt[{dims}] output_size, "
        f"SymInt[{dims + 2}] input_size, {ac}{_SCALE_ARGS[dims]}) -> Tensor")
    def backward(grad_output, output_size, input_size, *args):
        input_size = [int(s) for s in input_size]
        if align_corners:
            _, taps, _, order = U._INTERP[name]
            return _upsample_adjoint(grad_output, input_size, taps(args[0], list(args[1:])), order)
        exact = name.startswith("_upsample_nearest_exact")

        def nearest_taps(in_size, out_size, i, ftype):
            idx = U._nearest_index(in_size, out_size, args[i], exact)
            return idx[:, None], np.ones((out_size, 1), ftype)
        return _upsample_adjoint(grad_output, input_size, nearest_taps, None)

    derivatives(backward, {"grad_output": f"{name}(grad, output_size, "
                                          f"{'align_corners, ' if align_corners else ''}{scales})"})
    return backward


upsample_linear1d_backward = _register_upsample_backward("upsample_linear1d", 1, True)
upsample_bicubic2d_backward = _register_upsample_backward("upsample_bicubic2d", 2, True)
upsample_trilinear3d_backward = _register_upsample_backward("upsample_trilinear3d", 3, True)
_upsample_bilinear2d_aa_backward = _register_upsample_backward("_upsample_bilinear2d_aa", 2, True)
_upsample_bicubic2d_aa_backward = _register_upsample_backward("_upsample_bicubic2d_aa", 2, True)
upsample_nearest3d_backward = _register_upsample_backward("upsample_nearest3d", 3, False)
_upsample_nearest_exact1d_backward = _register_upsample_backward("_upsample_nearest_exact1d", 1,
                                                                 False)
_upsample_nearest_exact2d_backward = _register_upsample_backward("_upsample_nearest_exact2d", 2,
                                                                 False)
_upsample_nearest_exact3d_backward = _register_upsample_backward("_upsample_nearest_exact3d", 3,
                                                                 False)


# -- the rest: fractional pooling, affine grids, conv_tbc, pdist --------------------------------

@op("fractional_max_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] output_size, Tensor indices) -> Tensor")
def fractional_max_pool2d_backward(grad_output, self, kernel_size, output_size, indices):
    return _max_pool_backward(grad_output, self, indices, 2)


derivatives(fractional_max_pool2d_backward, {
    "grad_output": "max_pool_double_backward(grad, indices, 2)", "self": "zeros_like(self)"})


@op("fractional_max_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, "
    "int[3] output_size, Tensor indices) -> Tensor")
def fractional_max_pool3d_backward(grad_output, self, kernel_size, output_size, indices):
    return _max_pool_backward(grad_output, self, indices, 3)


derivatives(fractional_max_pool3d_backward, {
    "grad_output": "max_pool_double_backward(grad, indices, 3)", "self": "zeros_like(self)"})


def _affine_base_grid(grad, size, align_corners):
    """The (x, y[, z], 1) rows of the output positions, (H*W[*D], k + 1): the forward itself
    returns their coordinates for theta = [I | 0]."""
    from .nn_sampling import affine_grid_generator
    xp = xp_of(grad)
    k = len(size) - 2
    eye = np.concatenate([np.eye(k), np.zeros((k, 1))], 1)[None]
    coords = affine_grid_generator.kernel(_fresh(xp.asarray(eye), grad.dtype, grad.device),
                                          [1, 1] + size[2:], align_corners)._array.reshape(-1, k)
    return xp.concatenate([coords, xp.ones((coords.shape[0], 1), dtype=coords.dtype)], 1)


@op("affine_grid_generator_backward(Tensor grad, SymInt[] size, bool align_corners) -> Tensor")
def affine_grid_generator_backward(grad, size, align_corners):
    """The grid is base @ theta^T (base: the (x, y[, z], 1) rows of the output positions), so
    theta's gradient is grad^T @ base. The base rows come from the forward itself: with theta
    = [I | 0] it returns their coordinates."""
    xp = xp_of(grad)
    size = [int(s) for s in size]
    k = len(size) - 2
    base = _affine_base_grid(grad, size, align_corners)
    g = grad._array.reshape(size[0], -1, k)
    res = xp.swapaxes(g, 1, 2) @ base                                   # (N, k, k + 1)
    return _fresh(xp.ascontiguousarray(res.astype(grad.dtype.np, copy=False)), grad.dtype,
                  grad.device)


@composite(affine_grid_generator_backward)
def _affine_grid_generator_backward_composite(grad, size, align_corners):
    # AffineGridGenerator.cpp (CompositeImplicit): base_grid.view(N, HW, k + 1).transpose(1, 2)
    # .bmm(grad.reshape(N, HW, k)).transpose(1, 2); the base grid has no history
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    size = [int(s) for s in size]
    k = len(size) - 2
    base = _affine_base_grid(grad, size, align_corners)
    xp = xp_of(grad)
    base = _fresh(xp.ascontiguousarray(xp.broadcast_to(base, (size[0],) + base.shape)), grad.dtype,
                  grad.device)
    return base.transpose(1, 2).bmm(grad.reshape(size[0], -1, k)).transpose(1, 2)


@op("conv_tbc_backward(Tensor self, Tensor input, Tensor weight, Tensor bias, int pad) "
    "-> (Tensor, Tensor, Tensor)")
def conv_tbc_backward(self, input, weight, bias, pad):
    """conv_tbc is a 1d convolution in (time, batch, channel) layout (its forward calls the
    convolution kernel on transposed views): its gradients are convolution_backward's, transposed
    back. ``self`` is the gradient of the output, as in ATen's schema."""
    from .backward import convolution_backward
    xp = xp_of(input)

    def tensor(arr, like):
        return _fresh(xp.ascontiguousarray(arr), like.dtype, like.device)
    g = tensor(self._array.transpose(1, 2, 0), self)                  # (B, C_out, T')
    x = tensor(input._array.transpose(1, 2, 0), input)                # (B, C_in, T)
    w = tensor(weight._array.transpose(2, 1, 0), weight)              # (C_out, C_in, K)
    gi, gw, gb = convolution_backward.kernel(g, x, w, list(bias.shape_tuple), [1], [pad], [1],
                                             False, [0], 1, [True, True, True])
    return (tensor(gi._array.transpose(2, 0, 1), input), tensor(gw._array.transpose(2, 1, 0),
                                                                 weight),
            tensor(gb._array.astype(bias.dtype.np, copy=False), bias))


@composite(conv_tbc_backward)
def _conv_tbc_backward_composite(dOutput, input, weight, bias, pad):
    # ConvolutionTBC.cpp (CompositeImplicit): per kernel tap k, addmm_ into narrowed slices of
    # zero gradients, then the bias gradient as two sums (so a double backward records these)
    ilen, batch, in_planes = input.shape
    kw, out_planes = weight.shape[0], weight.shape[2]
    olen = ilen - kw + 1 + pad * 2
    real_pad = (olen - ilen + kw - 1) // 2
    shifts = []
    for k in range(kw):
        i_shift, o_shift = max(0, k - real_pad), max(0, real_pad - k)
        shifts.append((k, i_shift, o_shift, min(ilen + real_pad - k, olen) - o_shift))
    d_input = _zeros_like(input)
    for k, i_shift, o_shift, t in shifts:
        if t > 0:
            d_output_ = dOutput.narrow(0, o_shift, t)
            d_input.narrow(0, i_shift, t).view(t * batch, in_planes).addmm_(
                d_output_.view(t * batch, out_planes), weight[k].t())
    d_weight = _zeros_like(weight)
    for k, i_shift, o_shift, t in shifts:
        if t > 0:
            d_output_ = dOutput.narrow(0, o_shift, t)
            input_ = input.narrow(0, i_shift, t)
            d_weight[k].addmm_(input_.view(t * batch, in_planes).t(),
                               d_output_.view(t * batch, out_planes))
    return d_input, d_weight, dOutput.sum(0, False).sum(0, False)


def _zeros_like(t):
    from .creation import zeros_like
    return zeros_like(t)


def _distance_grad(xp, diff, d, p):
    """d ||x - y||_p / dx per coordinate, from diff = x - y and the distance d (Distance.cpp's
    backward kernels, one per p; 0 where d = 0, and where diff = 0 for p < 1)."""
    safe = xp.where(d == 0, 1, d)
    if p == 0:
        dd = xp.zeros_like(diff)
    elif p == 1:
        dd = xp.sign(diff)
    elif p == 2:
        dd = diff / safe
    elif p == float("inf"):
        dd = xp.sign(diff) * (xp.abs(diff) == d)
    elif p < 2:
        with np.errstate(divide="ignore", invalid="ignore"):
            dd = xp.sign(diff) * xp.abs(diff) ** (p - 1) / safe ** (p - 1)
        if p < 1:
            dd = xp.where(diff == 0, 0, dd)
    else:
        dd = diff * xp.abs(diff) ** (p - 2) / safe ** (p - 1)
    return xp.where(d == 0, 0, dd)


@op("_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor")
def _pdist_backward(grad, self, p, pdist):
    """Each pair's distance d = ||x_i - x_j||_p gives x_i grad * dd/dx_i and x_j its negative
    (Distance.cpp's per-p formulas: 0 for p = 0 and for d = 0)."""
    xp = xp_of(self)
    n = self.shape_tuple[0]
    i, j = (xp.asarray(v) for v in np.triu_indices(n, 1))
    a = self._array
    diff = a[i] - a[j]                                                   # (pairs, m)
    d = pdist._array[:, None]
    g = grad._array[:, None]
    contrib = g * _distance_grad(xp, diff, d, p)
    out = xp.zeros(a.shape, dtype=a.dtype)
    xp.add.at(out, i, contrib)
    xp.add.at(out, j, -contrib)
    return _fresh(out.astype(self.dtype.np, copy=False), self.dtype, self.device)


derivatives(_pdist_backward, {"grad": 'not_implemented("_pdist_backward")',
                              "self": 'not_implemented("_pdist_backward")',
                              "pdist": 'not_implemented("_pdist_backward")'})


@op("_cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor")
def _cdist_backward(grad, x1, x2, p, cdist):
    """Distance.cpp _cdist_backward: x1's gradient, sum over j of grad_ij * d dist_ij / d x1_i
    (the per-p formulas of pdist's backward), for x1 expanded to the batch shape (the engine sums
    a broadcast batch back)."""
    xp = xp_of(x1)
    batch = tuple(cdist.shape_tuple[:-2])
    r1, c = x1.shape_tuple[-2:]
    a = xp.broadcast_to(x1._array, batch + (r1, c))
    b = xp.broadcast_to(x2._array, batch + x2.shape_tuple[-2:])
    diff = a[..., :, None, :] - b[..., None, :, :]                      # (..., r1, r2, c)
    d = cdist._array[..., None]
    g = grad._array[..., None]
    dd = _distance_grad(xp, diff, d, p)
    out = (g * dd).sum(-2)
    return _fresh(xp.ascontiguousarray(out.astype(x1.dtype.np, copy=False)), x1.dtype, x1.device)


derivatives(_cdist_backward, {"grad": 'not_implemented("_cdist_backward")',
                              "x1": 'not_implemented("_cdist_backward")',
                              "x2": 'not_implemented("_cdist_backward")',
                              "cdist": 'not_implemented("_cdist_backward")'})


@op("_pack_padded_sequence_backward(Tensor grad, SymInt[] input_size, Tensor batch_sizes, "
    "bool batch_first) -> Tensor")
def _pack_padded_sequence_backward(grad, input_size, batch_sizes, batch_first):
    """The packed rows back to their (time, batch) slots: step t holds batch_sizes[t] rows, the
    first batch_sizes[t] sequences' elements at time t (PackedSequence.cpp); padding gets 0."""
    xp = xp_of(grad)
    size = [int(s) for s in input_size]
    if batch_first:
        size[0], size[1] = size[1], size[0]
    sizes = np.asarray(batch_sizes._array if xp is np else batch_sizes._array.get(), np.int64)
    steps = np.repeat(np.arange(len(sizes)), sizes)
    batch = np.concatenate([np.arange(s) for s in sizes]) if len(sizes) else steps
    out = xp.zeros(tuple(size), dtype=grad.dtype.np)
    out[xp.asarray(steps), xp.asarray(batch)] = grad._array
    if batch_first:
        out = xp.swapaxes(out, 0, 1)
    return _fresh(xp.ascontiguousarray(out), grad.dtype, grad.device)


# -- embedding_bag ------------------------------------------------------------------------------

def _bag_of(xp, offsets, n):
    """Each index's bag (ATen's offset2bag, which its 'sum' fast path leaves empty)."""
    return xp.searchsorted(offsets._array.astype(np.int64), xp.arange(n), side="right") - 1


@op("_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag, "
    "Tensor bag_size, Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, "
    "int mode, bool sparse, Tensor? per_sample_weights, int padding_idx=-1) -> Tensor")
def _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
                            num_weights, scale_grad_by_freq, mode, sparse, per_sample_weights,
                            padding_idx):
    """The weight's gradient (EmbeddingBag.cpp _embedding_bag_dense_backward): 'sum' and 'mean'
    add each bag's gradient (times the sample's weight, over the bag's size) to the rows its
    indices name, 'max' to the row each maximum came from; padding_idx's rows get none."""
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported by reftrace "
                                  "(reftrace has no sparse tensors); pass sparse=False")
    xp = xp_of(grad)
    g = grad._array
    out = xp.zeros((int(num_weights), g.shape[1]), dtype=g.dtype)
    idx = indices._array.reshape(-1).astype(np.int64)
    if mode == 2:
        rows = maximum_indices._array.astype(np.int64)              # (bags, dim)
        live = (bag_size._array > 0)[:, None] & xp.ones(rows.shape, dtype=bool)
        cols = xp.broadcast_to(xp.arange(g.shape[1]), rows.shape)
        xp.add.at(out, (rows[live], cols[live]), g[live])
        return _fresh(out, grad.dtype, grad.device)
    bag = _bag_of(xp, offsets, idx.shape[0])
    keep = idx != padding_idx
    scale = xp.ones(idx.shape[0], dtype=g.dtype)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights._array.reshape(-1)
    if mode == 1:
        sizes = xp.bincount(bag[keep], minlength=g.shape[0])
        scale = scale / xp.maximum(sizes, 1)[bag]
    if scale_grad_by_freq:
        # as ATen's loop over the sorted indices' unique values: the k-th unique value's rows are
        # scaled by 1 / counts[sorted[k]] (it reads counts[indices_data[i]] with i the group
        # number, not the group's start), which is what torch 2.13 computes
        ordered = xp.sort(idx)
        uniq, group = xp.unique(idx, return_inverse=True)
        counts = xp.bincount(idx, minlength=int(num_weights))
        scale = scale / counts[ordered[:uniq.shape[0]]][group.reshape(-1)]
    xp.add.at(out, idx[keep], g[bag[keep]] * scale[keep][:, None])
    return _fresh(out, grad.dtype, grad.device)


derivatives(_embedding_bag_backward, {
    "grad": 'not_implemented("_embedding_bag_backward")', "indices": "non_differentiable",
    "offsets": "non_differentiable", "offset2bag": "non_differentiable",
    "bag_size": "non_differentiable", "maximum_indices": "non_differentiable",
    "per_sample_weights": 'not_implemented("_embedding_bag_backward")'})


@op("_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, "
    "Tensor offsets, Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor")
def _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
                                               padding_idx):
    """Each sample's weight multiplied its row into its bag's sum: its gradient is that row
    dotted with the bag's gradient (0 for padding_idx)."""
    if mode != 0:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for "
                           "mode='sum'")
    xp = xp_of(grad)
    idx = indices._array.reshape(-1).astype(np.int64)
    bag = _bag_of(xp, offsets, idx.shape[0])
    res = (grad._array[bag] * weight._array[idx]).sum(-1)
    res = xp.where(idx == padding_idx, 0, res).astype(grad.dtype.np, copy=False)
    return _fresh(xp.ascontiguousarray(res), grad.dtype, grad.device)
