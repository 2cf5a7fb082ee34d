"""Weight normalisation: w = g * v / ||v|| (aten/src/ATen/native/WeightNorm.cpp).

``torch._weight_norm(v, g, dim)`` is what both weight_norms call (the parametrization and the
old forward-pre-hook), and what a trace records: one ``aten::_weight_norm`` node. Behind it,
torch's composite picks the fused ``_weight_norm_interface`` when ``dim`` is the first or last
dimension (its grad_fn is ``WeightNormInterfaceBackward0``), else ``v * (g / norm_except_dim(v,
2, dim))``. ``norm_except_dim`` is the norm over every dimension but ``dim`` (``dim=-1``: over
all of them), shaped to broadcast against ``v``.

Norms are computed in float64 and rounded once to the result dtype: torch's float32 kernel
accumulates in float32, so the two agree to ~1 ulp (spec/numerics.md).
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, _wrap_dim, xp_of
from ._registry import composite, derivatives, op


def _norm_except_dim(xp, a, pow, dim):
    """||a||_pow over every axis but ``dim`` (all axes for dim == -1), keeping dims, in float64."""
    mag = xp.abs(a.astype(np.float64))
    axes = tuple(range(a.ndim)) if dim == -1 else tuple(i for i in range(a.ndim) if i != dim)
    if pow == 2:
        return xp.sqrt((mag * mag).sum(axis=axes, keepdims=dim != -1))
    return (mag ** pow).sum(axis=axes, keepdims=dim != -1) ** (1.0 / pow)


@op("norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor")
def norm_except_dim(v, pow, dim):
    if dim != -1:
        dim = _wrap_dim(dim, v.dim())
    res = _norm_except_dim(xp_of(v), v._array, pow, dim)
    return _fresh(xp_of(v).asarray(res).astype(v.dtype.np), v.dtype, v.device)


@composite(norm_except_dim)
def _norm_except_dim_composite(v, pow, dim):
    """WeightNorm.cpp norm_except_dim, op for op (its autograd graph is these ops')."""
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        size = [1] * v.dim()
        size[0] = v.size(0)
        return v.contiguous().view(v.size(0), -1).norm(pow, 1).view(size)
    if dim == v.dim() - 1:
        size = [1] * v.dim()
        size[-1] = v.size(-1)
        return v.contiguous().view(-1, v.size(-1)).norm(pow, 0).view(size)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _can_use_fused(v, dim):
    return v.dtype.ir_name not in ("Half", "BFloat16") and dim in (0, v.dim() - 1)


@op("_weight_norm(Tensor v, Tensor g, int dim=0) -> Tensor")
def _weight_norm(v, g, dim):
    if _can_use_fused(v, dim):
        return _weight_norm_interface.kernel(v, g, dim)[0]
    norms = norm_except_dim.kernel(v, 2, dim)
    dt = v.dtype
    w = v._array.astype(np.float64) * (g._array.astype(np.float64) / norms._array.astype(np.float64))
    return _fresh(xp_of(v).asarray(w).astype(dt.np), dt, v.device)


@composite(_weight_norm)
def _weight_norm_composite(v, g, dim):
    """WeightNorm.cpp _weight_norm: the fused kernel for the first or last dimension (it has a
    derivative of its own), else the formula in differentiable ops."""
    v, g = v.contiguous(), g.contiguous()
    if _can_use_fused(v, dim):
        return _weight_norm_interface(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))


@op("_weight_norm_interface(Tensor v, Tensor g, int dim=0) -> (Tensor, Tensor)")
def _weight_norm_interface(v, g, dim):
    """(w, norms): norms has g's shape and, for half types, float32 (torch's CPU kernel)."""
    xp = xp_of(v)
    norms = _norm_except_dim(xp, v._array, 2, _wrap_dim(dim, v.dim()))
    w = v._array.astype(np.float64) * (g._array.astype(np.float64) / norms)
    norm_dt = D.float32 if g.dtype.ir_name in ("Half", "BFloat16") else g.dtype
    return (_fresh(xp.asarray(w).astype(v.dtype.np), v.dtype, v.device),
            _fresh(xp.asarray(norms).reshape(g.shape_tuple).astype(norm_dt.np), norm_dt, v.device))


derivatives(_weight_norm_interface, {
    "v, g": "((_weight_norm_differentiable_backward(grad.contiguous(), v, g, result1, dim) "
            "if is_grad_enabled() else "
            "_weight_norm_interface_backward(grad.contiguous(), v, g, result1, dim)) "
            "if grad is not None else (None, None))"})


def _per_dim_sums(grad_w, saved_v, dim):
    """sum of grad_w * v over every dimension but ``dim``, shaped to broadcast (as WeightNorm.cpp)."""
    bcast = [1] * saved_v.dim()
    if dim == 0:
        bcast[0] = saved_v.size(0)
        return (grad_w * saved_v).view(saved_v.size(0), -1).sum(1).view(bcast)
    bcast[-1] = saved_v.size(-1)
    return (grad_w * saved_v).view(-1, saved_v.size(-1)).sum(0).view(bcast)


def _check_fused_dim(saved_v, dim):
    if dim not in (0, saved_v.dim() - 1):
        raise RuntimeError("Expected dim to be the first or last dimension")


@op("_weight_norm_differentiable_backward(Tensor grad_w, Tensor saved_v, Tensor saved_g, "
    "Tensor saved_norms, int dim) -> (Tensor, Tensor)")
def _weight_norm_differentiable_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    return _weight_norm_differentiable_backward.composite(grad_w, saved_v, saved_g, saved_norms, dim)


@composite(_weight_norm_differentiable_backward)
def _weight_norm_differentiable_backward_composite(grad_w, saved_v, saved_g, saved_norms, dim):
    """WeightNorm.cpp: the analytic backward in differentiable ops (double backward goes through it)."""
    _check_fused_dim(saved_v, dim)
    norms = saved_norms.to(saved_g.dtype)
    per_dim_sums = _per_dim_sums(grad_w, saved_v, dim)
    grad_v = (saved_g / norms) * (grad_w - saved_v * (per_dim_sums / (norms * norms)))
    grad_g = per_dim_sums / norms
    return grad_v, grad_g


@op("_weight_norm_interface_backward(Tensor grad_w, Tensor saved_v, Tensor saved_g, "
    "Tensor saved_norms, int dim) -> (Tensor, Tensor)")
def _weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    """The fused backward (grad mode off): the same formula, in float64, rounded once."""
    _check_fused_dim(saved_v, dim)
    xp = xp_of(saved_v)
    gw, v = grad_w._array.astype(np.float64), saved_v._array.astype(np.float64)
    g, norms = saved_g._array.astype(np.float64), saved_norms._array.astype(np.float64)
    axes = tuple(i for i in range(v.ndim) if i != _wrap_dim(dim, v.ndim))
    sums = (gw * v).sum(axis=axes, keepdims=True)
    grad_v = (g / norms) * (gw - v * (sums / (norms * norms)))
    grad_g = (sums / norms).reshape(saved_g.shape_tuple)
    return (_fresh(xp.asarray(grad_v).astype(saved_v.dtype.np), saved_v.dtype, saved_v.device),
            _fresh(xp.asarray(grad_g).astype(saved_g.dtype.np), saved_g.dtype, saved_g.device))
