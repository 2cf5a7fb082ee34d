"""Distances: cosine_similarity, pairwise_distance, pdist, cdist (torch.nn.functional and torch).

Each is one recorded ATen op (CompositeImplicit in ATen, which a trace does not see through);
with a gradient, the composites record Distance.cpp's decomposition, so grad_fn chains are torch's.
Norms are computed in float64 and rounded once to the result dtype.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, _wrap_dim, xp_of
from ._registry import OVERLOADS, composite, derivatives, op
from ..autograd.grad_mode import no_grad
from .._promotion import promote_types


def _pnorm(xp, a, p, axis, keepdims=False):
    """||a||_p along ``axis`` (torch's vector norm: p=0 counts non-zeros, +-inf max/min |a|)."""
    mag = xp.abs(a)
    if p == 0:
        return (mag != 0).sum(axis=axis, keepdims=keepdims).astype(np.float64)
    if p == np.inf:
        return mag.max(axis=axis, keepdims=keepdims)
    if p == -np.inf:
        return mag.min(axis=axis, keepdims=keepdims)
    if p == 1:
        return mag.sum(axis=axis, keepdims=keepdims)
    if p == 2:
        return xp.sqrt((mag * mag).sum(axis=axis, keepdims=keepdims))
    return (mag ** p).sum(axis=axis, keepdims=keepdims) ** (1.0 / p)


def _broadcast_shapes(a, b):
    """infer_size, with ATen's message for sizes that do not broadcast."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for i, (p, q) in enumerate(zip(a, b)):
        if p != q and p != 1 and q != 1:
            raise RuntimeError(f"The size of tensor a ({p}) must match the size of tensor b ({q}) "
                               f"at non-singleton dimension {i}")
    return tuple(max(p, q) if min(p, q) != 0 else 0 for p, q in zip(a, b))


def _broadcast(x1, x2):
    return _broadcast_shapes(x1.shape_tuple, x2.shape_tuple)


def _float_type(x1, x2):
    dt = promote_types(x1.dtype, x2.dtype)
    return dt if dt.is_floating_point else D.float32


@op("cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor")
def cosine_similarity(x1, x2, dim, eps):
    common = promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{common.ir_name}")
    shape = _broadcast(x1, x2)
    xp = xp_of(x1)
    dim = _wrap_dim(dim, len(shape))
    a = xp.broadcast_to(x1._array, shape).astype(np.float64)
    b = xp.broadcast_to(x2._array, shape).astype(np.float64)
    na = xp.maximum(_pnorm(xp, a, 2, dim, True), eps)
    nb = xp.maximum(_pnorm(xp, b, 2, dim, True), eps)
    res = ((a / na) * (b / nb)).sum(axis=dim)
    dt = _float_type(x1, x2)
    return _fresh(xp.asarray(res).astype(dt.np), dt, x1.device)


@composite(cosine_similarity)
def _cosine_similarity_composite(x1, x2, dim, eps):
    # Distance.cpp cosine_similarity: each input over its (cloned) norm, clamped without grad
    cosine_similarity.kernel(x1, x2, dim, eps)  # its checks and messages
    common = promote_types(x1.dtype, x2.dtype)
    x1 = x1 if x1.dtype.is_floating_point else x1.to(common)
    x2 = x2 if x2.dtype.is_floating_point else x2.to(common)
    shape = _broadcast(x1, x2)  # expand_outplace: a view only where a size differs
    x1 = x1 if x1.shape_tuple == shape else x1.expand(shape)
    x2 = x2 if x2.shape_tuple == shape else x2.expand(shape)
    linalg_vector_norm = OVERLOADS["aten::linalg_vector_norm"]
    x1_norm = linalg_vector_norm(x1, 2, [dim], True).clone()
    x2_norm = linalg_vector_norm(x2, 2, [dim], True).clone()
    with no_grad():
        x1_norm.clamp_min_(eps)
        x2_norm.clamp_min_(eps)
    return ((x1 / x1_norm) * (x2 / x2_norm)).sum(dim)


@op("pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) "
    "-> Tensor")
def pairwise_distance(x1, x2, p, eps, keepdim):
    xp = xp_of(x1)
    shape = _broadcast(x1, x2)
    dt = _float_type(x1, x2)
    diff = (x1._array.astype(np.float64) - x2._array.astype(np.float64) + eps)
    diff = xp.broadcast_to(diff, shape)
    if len(shape) == 0:
        res = _pnorm(xp, diff.reshape(1), p, 0, keepdim)
    else:
        res = _pnorm(xp, diff, p, len(shape) - 1, keepdim)
    return _fresh(xp.array(res, dtype=dt.np), dt, x1.device)


@composite(pairwise_distance)
def _pairwise_distance_composite(x1, x2, p, eps, keepdim):
    # Distance.cpp pairwise_distance: at::norm(x1 - x2 + eps, p, innermost_dim, keepdim)
    innermost_dim = max(x1.dim(), x2.dim()) - 1
    return OVERLOADS["aten::norm.ScalarOpt_dim"](x1 - x2 + eps, p, [innermost_dim], keepdim)


@op("pdist(Tensor self, float p=2) -> Tensor")
def pdist(self, p):
    if self.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.ndim}D")
    if not self.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    xp = xp_of(self)
    n = self.shape_tuple[0]
    i, j = np.triu_indices(n, 1)
    a = self._array.astype(np.float64)
    res = _pnorm(xp, a[xp.asarray(i)] - a[xp.asarray(j)], p, -1)
    return _fresh(xp.asarray(res).astype(self.dtype.np), self.dtype, self.device)


derivatives(pdist, {"self": "_pdist_backward(grad, self, p, result)"})


@op("cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor", variants=())
def cdist(x1, x2, p, compute_mode):
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape_tuple[-1] != x2.shape_tuple[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape_tuple[-1]} X2: {x2.shape_tuple[-1]}")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {x1.dtype.ir_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return _cdist_forward.kernel(x1, x2, p, compute_mode)


@composite(cdist)
def _cdist_composite(x1, x2, p, compute_mode):
    """Distance.cpp cdist: _cdist_forward (CdistBackward0), except the matrix-product path for
    p = 2 on more than 25 rows (or compute_mode 1): _euclidean_dist, viewed to the batch shape."""
    r1, r2 = x1.shape_tuple[-2], x2.shape_tuple[-2]
    if x1.numel() == 0 or x2.numel() == 0:
        return _cdist_forward(x1, x2, p, compute_mode)
    mode = 0 if compute_mode is None else compute_mode
    if p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        batch = list(_broadcast_shapes(x1.shape_tuple[:-2], x2.shape_tuple[:-2]))
        c1 = x1.shape_tuple[-1]
        product = 1
        for b in batch:
            product *= b
        if product == 1:
            dist = _euclidean_dist(x1, x2)
        else:
            dist = _euclidean_dist(x1.expand(batch + [r1, c1]).reshape([product, r1, c1]),
                                   x2.expand(batch + [r2, c1]).reshape([product, r2, c1]))
        return dist.view(batch + [r1, r2])
    return _cdist_forward(x1, x2, p, compute_mode)


@op("_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor", variants=())
def _cdist_forward(x1, x2, p, compute_mode):
    xp = xp_of(x1)
    batch = _broadcast_shapes(x1.shape_tuple[:-2], x2.shape_tuple[:-2])
    a = xp.broadcast_to(x1._array, batch + x1.shape_tuple[-2:]).astype(np.float64)
    b = xp.broadcast_to(x2._array, batch + x2.shape_tuple[-2:]).astype(np.float64)
    res = _pnorm(xp, a[..., :, None, :] - b[..., None, :, :], p, -1)
    return _fresh(xp.asarray(res).astype(x1.dtype.np), x1.dtype, x1.device)


derivatives(_cdist_forward, {
    "x1": "_cdist_backward(grad.contiguous(), x1, x2, p, result)",
    "x2": "_cdist_backward(grad.mT.contiguous(), x2, x1, p, result.mT.contiguous())"})


@op("_euclidean_dist(Tensor x1, Tensor x2) -> Tensor", variants=())
def _euclidean_dist(x1, x2):
    """Distance.cpp _euclidean_dist: ||x1||^2 - 2 x1.x2 + ||x2||^2 as one matrix product,
    clamped at 0, square-rooted."""
    xp = xp_of(x1)
    a, b = x1._array, x2._array
    a_norm = (a * a).sum(-1, keepdims=True)
    b_norm = (b * b).sum(-1, keepdims=True)
    a_ = xp.concatenate([a * -2, a_norm, xp.ones_like(a_norm)], -1)
    b_ = xp.concatenate([b, xp.ones_like(b_norm), b_norm], -1)
    res = xp.sqrt(xp.maximum(xp.matmul(a_, xp.swapaxes(b_, -1, -2)), 0))
    return _fresh(xp.asarray(res, dtype=x1.dtype.np), x1.dtype, x1.device)


derivatives(_euclidean_dist, {"x1, x2": "_euclidean_dist_backward(grad, x1, x2, result)"})

