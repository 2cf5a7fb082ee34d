"""torch.linalg's functions built on the factorizations (ATen/native/LinearAlgebra.cpp): matrix_power,
multi_dot, vecdot, cross, vander, diagonal, matrix_norm/norm/cond, pinv/pinverse, matrix_rank,
tensorinv/tensorsolve, matrix_exp, lstsq.

Most are CompositeImplicit in torch: a trace records the op itself (``aten::linalg_pinv``), autograd
the ops it is made of, so each kernel computes the values directly and the ``@composite`` beside it
is torch's decomposition for gradients.
"""
import math

import numpy as np

from .. import _dtype as D
from .._device import MEMORY_FORMATS
from .._frames import warn_at_caller
from .._promotion import result_type
from .._tensor import _fresh, _view_of, _wrap_dim, contiguous_strides
from ._iter import broadcast_shapes, wrap_strided
from ._decomposed import decomposed
from ._registry import composite, derivatives, get_packet, op
from .linalg_matrix_exp import linalg_matrix_exp_array
from .linalg_decomp import (check_float, check_matrix, fresh, lapack_result, lapack_strides,
                            quiet_np, real_of, square_float)

_F = ("function",)
_FM = ("function", "method")


def _p(name):
    return get_packet(name)


# -- matrix_power ---------------------------------------------------------------------------------

_CONTIGUOUS = MEMORY_FORMATS["contiguous_format"]


def _matrix_power(a, n, matmul, inverse, eye_like, clone):
    """LinearAlgebra.cpp linalg_matrix_power: squaring over n's bits, least significant first."""
    if n == 0:   # (torch: a contiguous clone of a, overwritten with the identity)
        return eye_like(a)
    if n == 1:   # (a contiguous clone)
        return clone(a)
    if n == -1:
        return inverse(a)
    if n < 0:
        a, n = inverse(a), -n
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def _check_power(self):
    check_matrix("linalg.matrix_power", self)
    m, k = self._array.shape[-2:]
    if m != k:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {m} by {k} matrices")


def _eye_like(a):
    n = a._array.shape[-1]
    out = np.broadcast_to(np.eye(n, dtype=a.dtype.np), a._array.shape).copy()
    return _fresh(out, a.dtype, a.device)


@op("linalg_matrix_power(Tensor self, int n) -> Tensor", variants=_F)
def linalg_matrix_power(self, n):
    from .linalg import linalg_inv, matmul
    _check_power(self)
    clone = get_packet("clone").overloads[0].kernel
    return _matrix_power(self, n, matmul.kernel, linalg_inv.kernel, _eye_like,
                         lambda a: clone(a, _CONTIGUOUS))


@composite(linalg_matrix_power)
def _matrix_power_composite(self, n):
    _check_power(self)
    def identity(a):   # out = self.clone(Contiguous); out.copy_(at::eye(n)): CopyBackwards
        return a.clone(memory_format=_CONTIGUOUS).copy_(_p("eye")(a.shape[-1], dtype=a.dtype))
    return _matrix_power(self, n, _p("matmul"), _p("linalg_inv"), identity,
                         lambda a: a.clone(memory_format=_CONTIGUOUS))


@op("matrix_power(Tensor self, int n) -> Tensor", variants=_FM)
def matrix_power(self, n):
    return linalg_matrix_power.kernel(self, n)


composite(matrix_power)(_matrix_power_composite)


# -- multi_dot ------------------------------------------------------------------------------------

def _chain_order(shapes):
    """The optimal parenthesisation (matrix-chain DP, as torch's multi_dot_impl): order[i][j]."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    order = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], order[i][j] = c, k
    return order


def _multi_dot(tensors, mm):
    """LinearAlgebra.cpp's multi_dot_impl: 1-D ends as a row / column, every check in its order,
    two or three matrices multiplied directly (ties of the 3-matrix cost go left first), more
    in matrix_chain_order's; the result viewed back to the ends' dimensionality (ViewBackward0)."""
    from .arithmetic import TYPE_META_NAMES
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    mats, out_shape = list(tensors), []
    for i, where, unsq, keep in ((0, "first", 0, 0), (n - 1, "last", -1, 1)):
        t = tensors[i]
        if t.dim() == 1:
            mats[i] = t.unsqueeze(unsq)
        elif t.dim() == 2:
            out_shape.append(t.shape[keep])
        else:
            raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got {t.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
    for i in range(1, n):
        if mats[i].dtype is not mats[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 "
                               f"is {TYPE_META_NAMES[mats[0].dtype]} and tensor {i} "
                               f"{TYPE_META_NAMES[mats[i].dtype]}")
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i - 1} and {i} with shapes {list(tensors[i - 1].shape)} "
                f"and {list(tensors[i].shape)} cannot be multiplied")
    if n == 2:
        out = mm(mats[0], mats[1])
    elif n == 3:
        a, b, c, d = mats[0].shape[0], mats[1].shape[0], mats[2].shape[0], mats[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            out = mm(mats[0], mm(mats[1], mats[2]))
        else:
            out = mm(mm(mats[0], mats[1]), mats[2])
    else:
        order = _chain_order([tuple(m.shape) for m in mats])

        def chain(i, j):
            if i == j:
                return mats[i]
            return mm(chain(i, order[i][j]), chain(order[i][j] + 1, j))
        out = chain(0, n - 1)
    return out.view(out_shape)


@op("linalg_multi_dot(Tensor[] tensors) -> Tensor", variants=_F)
def linalg_multi_dot(tensors):
    from .linalg import mm
    return _multi_dot(tensors, mm.kernel)


composite(linalg_multi_dot)(lambda tensors: _multi_dot(tensors, _p("mm")))


# -- vecdot, cross, vander, diagonal ----------------------------------------------------------------

def _check_vecdot(x, y):
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {x.dtype.ir_name} and y of type {y.dtype.ir_name} instead")


@op("linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor", variants=_F)
def linalg_vecdot(x, y, dim):
    _check_vecdot(x, y)
    from .reduction import sum_dim_IntList
    # (conj_physical: a conjugate view would reach mul's kernel unresolved, outside the funnel)
    prod = _p("mul").overloads[0].kernel(_p("conj_physical").overloads[0].kernel(x), y)
    return sum_dim_IntList.kernel(prod, [dim], False, None)


@composite(linalg_vecdot)
def _vecdot_composite(x, y, dim):
    _check_vecdot(x, y)
    if x.dim() == 1 and y.dim() == 1:   # torch: at::vdot (VdotBackward0), whatever dim says
        return _p("vdot")(x, y)
    return ((x.conj() if x.dtype.is_complex else x) * y).sum(dim)


@op("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor", variants=_F)
def linalg_cross(self, other, dim):
    if self.dim() != other.dim():
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    shape = broadcast_shapes(self._array.shape, other._array.shape)
    d = _wrap_dim(dim, len(shape))
    if self._array.shape[d] != 3 or other._array.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self._array.shape[d]} and {other._array.shape[d]}")
    dt = result_type(self, other)
    a = np.broadcast_to(self._array.astype(dt.np), shape)
    b = np.broadcast_to(other._array.astype(dt.np), shape)
    return _fresh(np.ascontiguousarray(np.cross(a, b, axis=d)).astype(dt.np, copy=False),
                  dt, self.device)


derivatives(linalg_cross, {"self": "linalg_cross(other.conj(), grad, dim=dim)",
                           "other": "linalg_cross(grad, self.conj(), dim=dim)"})


_CROSS_WARNED = []


@decomposed("cross(Tensor self, Tensor other, int? dim=None) -> Tensor", variants=("method", "function"))
def cross(self, other, dim):
    """Cross.cpp: linalg_cross along ``dim``, else (deprecated) the first dimension of size 3."""
    if dim is None:
        if not _CROSS_WARNED:  # TORCH_WARN_ONCE: once per process
            _CROSS_WARNED.append(True)
            warn_at_caller("Using torch.cross without specifying the dim arg is deprecated.\n"
                           "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                           "The default value of dim will change to agree with that of linalg.cross in a "
                           "future release.")
        dim = next((i for i, n in enumerate(self.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(self, other, dim=dim)


def _vander_n(x, N):
    dt = x.dtype
    if not (dt in (D.float32, D.float64, D.complex64, D.complex128) or dt.category == 1):
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           f"but got {dt.ir_name}")
    n = (x.shape[-1] if x.dim() else 1) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    return n


@op("linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor", variants=_F)
def linalg_vander(x, N):
    n = _vander_n(x, N)
    # cumprod of the powers (integers accumulate in int64, as cumprod does), after a row of ones
    dt = D.int64 if x.dtype.category <= 1 else x.dtype
    a = x._array.astype(dt.np).reshape(x._array.shape or (1,))[..., None]
    powers = np.cumprod(np.broadcast_to(a, a.shape[:-1] + (n - 1,)), axis=-1)
    out = np.concatenate([np.ones(a.shape, dt.np), powers], axis=-1)
    return _fresh(out, dt, x.device)


@composite(linalg_vander)
def _vander_composite(x, N):
    n = _vander_n(x, N)
    x = x if x.dim() else x.unsqueeze(-1)
    shape = list(x.shape) + [n - 1]
    result = x.unsqueeze(-1).expand(shape).cumprod(-1)
    shape[-1] = 1
    return _p("cat")([result.new_ones(shape), result], -1)


@op("linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)",
    variants=_F)
def linalg_diagonal(A, offset, dim1, dim2):
    nd = A.dim()
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = np.diagonal(A._array, offset, d1, d2).shape[-1]
    stride = list(A.stride())
    first = (offset * stride[d2] if offset >= 0 else -offset * stride[d1]) if size else 0
    strides = [s for i, s in enumerate(stride) if i not in (d1, d2)] + [stride[d1] + stride[d2]]
    shape = [s for i, s in enumerate(A.shape) if i not in (d1, d2)] + [size]
    return get_packet("as_strided").overloads[0].kernel(A, shape, strides, A.storage_offset() + first)


@composite(linalg_diagonal)  # CompositeImplicitAutograd in torch: at::diagonal (DiagonalBackward0)
def _(A, offset, dim1, dim2):
    return A.diagonal(offset, dim1, dim2)


# -- norms ----------------------------------------------------------------------------------------

def _norm_dtype(A, dtype):
    dt = dtype or A.dtype
    return real_of(dt)


@quiet_np
def _matrix_norm_values(a, ord, dims, keepdim):
    """LinearAlgebra.cpp's linalg_matrix_norm over NumPy arrays, step by step (see
    _matrix_norm_composite for the same steps as recorded ops)."""
    if ord == "fro":
        return np.sqrt(np.sum(np.abs(a) ** 2, axis=tuple(dims), keepdims=keepdim))
    if ord == "nuc" or abs(ord) == 2:
        perm = _backshift(dims[0], dims[1], a.ndim)
        m = np.transpose(a, perm)
        s = np.linalg.svd(m, compute_uv=False) if min(m.shape[-2:]) else \
            np.zeros(m.shape[:-2] + (0,), m.dtype)
        r = np.sum(s, axis=-1, keepdims=keepdim) if ord == "nuc" else _max_min(s, -1, ord > 0, keepdim)
        if keepdim:
            r = np.transpose(r[..., None], [perm.index(d) for d in range(a.ndim)])
        return r
    d0, d1 = (dims[1], dims[0]) if abs(ord) == math.inf else dims
    if not keepdim and d0 < d1:
        d1 -= 1
    return _max_min(np.sum(np.abs(a), axis=d0, keepdims=keepdim), d1, ord > 0, keepdim)


def _max_min(a, dim, largest, keepdim):
    """linalg_matrix_norm's max_min: amax for a positive ord, amin for a negative one; over an
    empty dim amax gives zeros (the norm of an empty matrix), amin raises amin's error."""
    if a.shape[dim] == 0:
        if not largest:
            raise IndexError(f"amin(): Expected reduction dim {dim} to have non-zero size.")
        shape = list(a.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return np.zeros(shape, a.dtype)
    return (np.max if largest else np.min)(a, axis=dim, keepdims=keepdim)


def _check_matrix_norm(A, ord, dim):
    name = "linalg.matrix_norm"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if ord not in ("fro", "nuc") and not isinstance(ord, str):
        if ord not in (1, -1, 2, -2, math.inf, -math.inf):
            raise RuntimeError(f"{name}: Order {ord} not supported.")
    elif ord not in ("fro", "nuc"):
        raise RuntimeError(f"{name}: Order {ord} not supported.")
    if A.dtype.category <= 1:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{A.dtype.ir_name}")
    dims = [_wrap_dim(d, A.dim()) for d in dim]
    if dims[0] == dims[1]:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return dims


def _matrix_norm(A, ord, dim, keepdim, dtype):
    dims = _check_matrix_norm(A, ord, dim)
    a = A._array.astype(dtype.np) if dtype is not None else A._array
    r = np.asarray(_matrix_norm_values(a, ord, dims, keepdim))
    if keepdim and (ord == "nuc" or ord in (2, -2)):
        # torch reduces svdvals of the dims-moved-last input with keepdim, unsqueezes and
        # permutes back: a view whose strides are not the contiguous ones
        return wrap_strided(r, _norm_dtype(A, dtype), A.device, _svd_norm_keepdim_strides(A.dim(), dims, r.shape))
    return fresh(r, _norm_dtype(A, dtype), A.device)


def _backshift(d0, d1, ndim):
    """create_dim_backshift_permutation: the other dims in order, then d0, d1."""
    return [d for d in range(ndim) if d not in (d0, d1)] + [d0, d1]


def _svd_norm_keepdim_strides(ndim, dims, shape):
    perm = _backshift(dims[0], dims[1], ndim)
    moved = tuple(shape[d] for d in perm)  # the batch dims, then 1, 1
    src = contiguous_strides(moved[:-1]) + (1,)  # amax/sum(-1, keepdim), then unsqueeze(-1)
    out = [0] * ndim
    for i, d in enumerate(perm):  # .permute(reverse permutation)
        out[d] = src[i]
    return tuple(out)


@op("linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", variants=_F)
def linalg_matrix_norm(self, ord, dim, keepdim, dtype):
    return _matrix_norm(self, ord, dim, keepdim, dtype)


@op("linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], bool keepdim=False, "
    "*, ScalarType? dtype=None) -> Tensor", variants=_F)
def linalg_matrix_norm_str(self, ord, dim, keepdim, dtype):
    return _matrix_norm(self, ord, dim, keepdim, dtype)


def _matrix_norm_composite(self, ord, dim, keepdim, dtype):
    """LinearAlgebra.cpp's linalg_matrix_norm (both overloads), step by step."""
    dims = _check_matrix_norm(self, ord, dim)
    if ord == "fro":
        return _p("linalg_vector_norm")(self, 2, dims, keepdim, dtype=dtype)
    if ord == "nuc" or abs(ord) == 2:
        A = self.to(dtype) if dtype is not None else self
        perm = _backshift(dims[0], dims[1], self.dim())
        s = _p("linalg_svdvals")(A.permute(perm))
        r = s.sum(-1, keepdim) if ord == "nuc" else _max_min_op(s, -1, ord > 0, keepdim)
        if keepdim:
            reverse = [perm.index(d) for d in range(len(perm))]
            r = r.unsqueeze(-1).permute(reverse)
        return r
    # 1, -1, inf, -inf: the inf norm is the 1 norm of the transposed matrix
    d0, d1 = (dims[1], dims[0]) if abs(ord) == math.inf else dims
    if not keepdim and d0 < d1:
        d1 -= 1
    r = _p("linalg_vector_norm")(self, 1.0, [d0], keepdim, dtype=dtype)
    return _max_min_op(r, d1, ord > 0, keepdim)


def _max_min_op(t, dim, largest, keepdim):
    if largest and t.shape[dim] == 0:  # a new zeros tensor: no grad_fn, as torch's
        shape = list(t.shape)
        if keepdim:
            shape[dim] = 1
        else:
            del shape[dim]
        return _p("zeros")(shape, dtype=t.dtype, device=t.device)
    return t.amax(dim, keepdim) if largest else t.amin(dim, keepdim)


composite(linalg_matrix_norm)(_matrix_norm_composite)
composite(linalg_matrix_norm_str)(_matrix_norm_composite)


def _linalg_norm(A, ord, dim, keepdim, dtype, recorded):
    """LinearAlgebra.cpp linalg_norm: a vector norm or a matrix norm by ord and dim."""
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dim)}")
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                           f"1D or 2D. Got {A.dim()}D.")
    matrix = (dim is not None and len(dim) == 2) or (dim is None and ord is not None and A.dim() == 2)
    if isinstance(ord, str) and not matrix:
        raise RuntimeError(f"linalg.norm: If dim is specified, it mut be of length 1 or 2. Got "
                           f"{list(dim) if dim is not None else []}")
    if matrix:
        mdim = list(dim) if dim is not None else [0, 1]
        fn = _matrix_norm_composite if recorded else _matrix_norm
        return fn(A, ord if ord is not None else "fro", mdim, keepdim, dtype)
    vec = _p("linalg_vector_norm")
    if recorded:
        return vec(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    return vec.overloads[0].kernel(A, 2 if ord is None else ord, dim, keepdim, dtype)


@op("linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", variants=_F)
def linalg_norm(self, ord, dim, keepdim, dtype):
    return _linalg_norm(self, ord, dim, keepdim, dtype, False)


@op("linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", variants=_F)
def linalg_norm_str(self, ord, dim, keepdim, dtype):
    return _linalg_norm(self, ord, dim, keepdim, dtype, False)


composite(linalg_norm)(lambda self, ord, dim, keepdim, dtype: _linalg_norm(self, ord, dim, keepdim, dtype, True))
composite(linalg_norm_str)(lambda self, ord, dim, keepdim, dtype: _linalg_norm(self, ord, dim, keepdim, dtype, True))


@quiet_np
def _cond_values(A, p):
    a = A._array
    if p is None or p in (2, -2):
        s = np.linalg.svd(a, compute_uv=False)
        return s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    try:
        inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        return np.full(a.shape[:-2], np.inf)
    dims = (a.ndim - 2, a.ndim - 1)
    return _matrix_norm_values(a, p, dims, False) * _matrix_norm_values(inv, p, dims, False)


def _cond(self, p):
    name = "linalg.cond"
    check_matrix(name, self)
    check_float(name, self)
    if p is not None and p not in (2, -2):
        square_float(name, self)
    if self.numel() == 0:  # _linalg_cond_empty_matrix: zeros of the batch shape
        return fresh(np.zeros(self._array.shape[:-2], real_of(self.dtype).np), real_of(self.dtype),
                     self.device)
    return fresh(np.asarray(_cond_values(self, p)), real_of(self.dtype), self.device)


@op("linalg_cond(Tensor self, Scalar? p=None) -> Tensor", variants=_F)
def linalg_cond(self, p):
    return _cond(self, p)


@op("linalg_cond.p_str(Tensor self, str p) -> Tensor", variants=_F)
def linalg_cond_str(self, p):
    return _cond(self, p)


def _cond_composite(self, p):
    """torch's linalg_cond (LinearAlgebra.cpp), op for op: the recorded nodes are torch's
    (SqueezeBackward1 over DivBackward0 for ord 2; NanToNumBackward0 over the norms' product)."""
    if self.numel() == 0:  # NumPy leaves it undefined; torch returns zeros of the batch shape
        return self.new_zeros(list(self.shape[:-2]), dtype=real_of(self.dtype))
    if p is None or p in (2, -2):
        # narrow the extreme singular values, divide, squeeze(-1)
        s = _p("linalg_svdvals")(self)
        # singular values come sorted in descending order
        s_max, s_min = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (s_min / s_max if p == -2 else s_max / s_min).squeeze(-1)
    if p == "nuc":   # the nuclear norms from the singular values (matrix_norm raises on inf)
        s = _p("linalg_svdvals")(self)
        return s.sum(-1) * s.reciprocal().sum(-1)
    inverse, info = _p("linalg_inv_ex")(self)   # _linalg_cond_helper: a singular block's
    inverse.masked_fill_(info.unsqueeze(-1).unsqueeze(-1) > 0, math.inf)   # inverse is inf
    result = _p("linalg_matrix_norm")(self, p) * _p("linalg_matrix_norm")(inverse, p)
    return result.nan_to_num_(math.inf, math.inf, -math.inf)   # 0 * inf is inf, as NumPy


composite(linalg_cond)(_cond_composite)
composite(linalg_cond_str)(_cond_composite)


# -- pinv / pinverse / matrix_rank ------------------------------------------------------------------

def _tolerances(A, atol, rtol, s_max):
    """get_atol_rtol: rtol defaults to eps * max(m, n) when neither is given, else to 0."""
    eps = float(np.finfo(real_of(A.dtype).np).eps)
    m, n = A._array.shape[-2:]
    atol_v = 0.0 if atol is None else (atol._array if hasattr(atol, "_array") else atol)
    if rtol is None:
        rtol_v = eps * max(m, n) if atol is None or (np.all(np.asarray(atol_v) <= 0)) else 0.0
    else:
        rtol_v = rtol._array if hasattr(rtol, "_array") else rtol
    return np.maximum(np.asarray(atol_v)[..., None] if np.ndim(atol_v) else atol_v,
                      (np.asarray(rtol_v)[..., None] if np.ndim(rtol_v) else rtol_v) * s_max)


@quiet_np
def _pinv_values(A, atol, rtol, hermitian):
    a = A._array
    m, n = a.shape[-2:]
    if not a.size:
        return np.zeros(a.shape[:-2] + (n, m), a.dtype)
    if hermitian:
        w, u = np.linalg.eigh(a)
        s_abs = np.abs(w)
        tol = _tolerances(A, atol, rtol, s_abs.max(-1, keepdims=True))
        w_pinv = np.where(s_abs > tol, 1 / w, 0).astype(w.dtype)
        return (u * w_pinv[..., None, :]) @ np.swapaxes(u, -1, -2).conj()
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    tol = _tolerances(A, atol, rtol, s.max(-1, keepdims=True) if s.shape[-1] else 0)
    s_pinv = np.where(s > tol, 1 / s, 0).astype(s.dtype)
    return (np.swapaxes(vh, -1, -2).conj() * s_pinv[..., None, :]) @ np.swapaxes(u, -1, -2).conj()


def _pinv(self, atol, rtol, hermitian):
    name = "linalg.pinv"
    check_matrix(name, self)
    check_float(name, self)
    return fresh(_pinv_values(self, atol, rtol, hermitian).astype(self.dtype.np), self.dtype, self.device)


@op("linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, "
    "bool hermitian=False) -> Tensor", variants=_F)
def linalg_pinv(self, atol, rtol, hermitian):
    return _pinv(self, atol, rtol, hermitian)


derivatives(linalg_pinv, {"self": "pinv_backward(grad, result, self)"})


@op("linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, "
    "bool hermitian=False) -> Tensor", variants=_F)
def linalg_pinv_float(self, atol, rtol, hermitian):
    return _pinv(self, atol, rtol, hermitian)


composite(linalg_pinv_float)(lambda self, atol, rtol, hermitian: _p("linalg_pinv")(
    self, atol=None if atol is None else _p("scalar_tensor")(atol, dtype=real_of(self.dtype)),
    rtol=None if rtol is None else _p("scalar_tensor")(rtol, dtype=real_of(self.dtype)),
    hermitian=hermitian))


@op("linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor", variants=_F)
def linalg_pinv_rcond(self, rcond, hermitian):
    return _pinv(self, 0.0, rcond, hermitian)


composite(linalg_pinv_rcond)(lambda self, rcond, hermitian: _p("linalg_pinv")(
    self, atol=_p("scalar_tensor")(0.0, dtype=real_of(self.dtype)),
    rtol=_p("scalar_tensor")(rcond, dtype=real_of(self.dtype)), hermitian=hermitian))


@op("linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) -> Tensor",
    variants=_F)
def linalg_pinv_rcond_tensor(self, rcond, hermitian):
    return _pinv(self, 0.0, rcond, hermitian)


composite(linalg_pinv_rcond_tensor)(lambda self, rcond, hermitian: _p("linalg_pinv")(
    self, atol=_p("scalar_tensor")(0.0, dtype=real_of(self.dtype)), rtol=rcond, hermitian=hermitian))


@op("pinverse(Tensor self, float rcond=1e-15) -> Tensor", variants=_FM)
def pinverse(self, rcond):
    return _pinv(self, 0.0, rcond, False)


composite(pinverse)(lambda self, rcond: _p("linalg_pinv")(
    self, atol=_p("scalar_tensor")(0.0, dtype=real_of(self.dtype)),
    rtol=_p("scalar_tensor")(rcond, dtype=real_of(self.dtype))))


@quiet_np
def _rank_values(A, atol, rtol, hermitian):
    a = A._array
    if not a.size:
        return np.zeros(a.shape[:-2], np.int64)
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    tol = _tolerances(A, atol, rtol, s.max(-1, keepdims=True))
    return (s > tol).sum(-1).astype(np.int64)


def _rank(self, atol, rtol, hermitian):
    name = "torch.linalg.matrix_rank"
    check_matrix(name, self)
    check_float(name, self)
    return _fresh(np.asarray(_rank_values(self, atol, rtol, hermitian)), D.int64, self.device)


_RANK = {"differentiable": False}


@op("linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, "
    "bool hermitian=False) -> Tensor", variants=_F, **_RANK)
def linalg_matrix_rank(input, atol, rtol, hermitian):
    return _rank(input, atol, rtol, hermitian)


@op("linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, "
    "bool hermitian=False) -> Tensor", variants=_F, **_RANK)
def linalg_matrix_rank_float(self, atol, rtol, hermitian):
    return _rank(self, atol, rtol, hermitian)


@op("linalg_matrix_rank(Tensor self, float tol, bool hermitian=False) -> Tensor", variants=_F, **_RANK)
def linalg_matrix_rank_tol(self, tol, hermitian):
    return _rank(self, tol, 0.0, hermitian)


@op("linalg_matrix_rank.tol_tensor(Tensor input, Tensor tol, bool hermitian=False) -> Tensor",
    variants=_F, **_RANK)
def linalg_matrix_rank_tol_tensor(input, tol, hermitian):
    return _rank(input, tol, 0.0, hermitian)


# -- tensorinv / tensorsolve ------------------------------------------------------------------------

def _tensorinv_shapes(self, ind):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = list(self.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return shape[ind:] + shape[:ind], rows


@op("linalg_tensorinv(Tensor self, int ind=2) -> Tensor", variants=_F)
def linalg_tensorinv(self, ind):
    from .linalg import linalg_inv
    shape, rows = _tensorinv_shapes(self, ind)
    from .shape import reshape
    square = reshape.kernel(self, [rows, rows])
    return reshape.kernel(linalg_inv.kernel(square), shape)


@composite(linalg_tensorinv)
def _tensorinv_composite(self, ind):
    shape, rows = _tensorinv_shapes(self, ind)
    return _p("linalg_inv")(self.reshape([rows, rows])).reshape(shape)


def _tensorsolve_parts(self, other, dims, recorded):
    if dims is not None:
        nd = self.dim()
        wrapped = [_wrap_dim(d, nd) for d in dims]
        rest = [d for d in range(nd) if d not in wrapped]
        self = self.permute(rest + wrapped) if recorded else \
            get_packet("permute").overloads[0].kernel(self, rest + wrapped)
    result_shape = list(self.shape[other.dim():])
    n = math.prod(result_shape)
    rows = other.numel()
    if rows != n:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {n} != {rows}")
    return self, result_shape, rows


@op("linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor", variants=_F)
def linalg_tensorsolve(self, other, dims):
    from .linalg_decomp import linalg_solve
    a, shape, rows = _tensorsolve_parts(self, other, dims, False)
    from .shape import reshape
    x = linalg_solve.kernel(reshape.kernel(a, [rows, rows]), reshape.kernel(other, [rows]), True)
    return reshape.kernel(x, shape)


@composite(linalg_tensorsolve)
def _tensorsolve_composite(self, other, dims):
    a, shape, rows = _tensorsolve_parts(self, other, dims, True)
    return _p("linalg_solve")(a.reshape([rows, rows]), other.reshape([rows])).reshape(shape)


# -- matrix_exp -------------------------------------------------------------------------------------

# ATen's mexp, ported in linalg_matrix_exp.py


@op("linalg_matrix_exp(Tensor self) -> Tensor", variants=_F)
def linalg_matrix_exp(self):
    square_float("linalg.matrix_exp", self) if self.dtype is not D.float16 else \
        check_matrix("linalg.matrix_exp", self)
    return fresh(linalg_matrix_exp_array(np.asarray(self._array)), self.dtype, self.device)


derivatives(linalg_matrix_exp, {"self": "linalg_matrix_exp_differential(self, grad, True)"})


@op("matrix_exp(Tensor self) -> Tensor", variants=_FM)
def matrix_exp(self):
    return linalg_matrix_exp.kernel(self)


composite(matrix_exp)(lambda self: _p("linalg_matrix_exp")(self))


# -- lstsq ------------------------------------------------------------------------------------------

@op("linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> "
    "(Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)", variants=_F)
def linalg_lstsq(self, b, rcond, driver):
    name = "torch.linalg.lstsq"
    check_float(name, self)
    if self.dim() < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if self.dtype is not b.dtype:
        raise RuntimeError(f"{name}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {self.dtype.ir_name} and other's dtype "
                           f"{b.dtype.ir_name}")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"{name}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           f"gelss)")
    a, bb = self._array, b._array
    vector = bb.ndim == a.ndim - 1
    if vector:
        bb = bb[..., None]
    m, n = a.shape[-2:]
    batch = broadcast_shapes(a.shape[:-2], bb.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    bb = np.broadcast_to(bb, batch + bb.shape[-2:])
    k = bb.shape[-1]
    eps = float(np.finfo(real_of(self.dtype).np).eps)
    cond = rcond if rcond is not None else eps * max(m, n)
    flat_a = a.reshape((-1, m, n)) if a.size else np.zeros((0, m, n), a.dtype)
    flat_b = bb.reshape((-1, m, k)) if bb.size else np.zeros((0, m, k), a.dtype)
    sols, ranks, svs = [], [], []
    with np.errstate(all="ignore"):
        for x, y in zip(flat_a, flat_b):
            sol, _, rank, sv = np.linalg.lstsq(x, y, rcond=cond)
            sols.append(sol)
            ranks.append(rank)
            svs.append(sv)
    sol = np.array(sols).reshape(batch + (n, k)) if sols else np.zeros(batch + (n, k), a.dtype)
    # the solution is the top of LAPACK's (max(m, n) x k) column-major right-hand side
    rows = max(m, n)
    strides = lapack_strides(batch + (rows, k))
    from ._iter import empty_strided_array
    from .._tensor import _strided
    buf = empty_strided_array(np, batch + (rows, k), strides, self.dtype.np)
    buf[...] = 0
    buf[..., :n, :] = sol
    solution = _view_of(_strided(buf, self.dtype, self.device, strides), buf[..., :n, :],
                        strides)
    if vector:
        solution = solution.squeeze(-1)
    real = real_of(self.dtype)

    def empty():  # (a new tensor each: the outputs are distinct values in a trace)
        return fresh(np.zeros((0,), real.np), real, self.device)
    rank = _fresh(np.array(ranks, np.int64).reshape(batch), D.int64, self.device) \
        if driver != "gels" else fresh(np.zeros((0,), np.int64), D.int64, self.device)
    sv = fresh(np.array(svs).reshape(batch + (min(m, n),)), real, self.device) \
        if driver in ("gelsd", "gelss") else empty()
    residuals = empty()
    if m > n and driver != "gelsy" and all(r == n for r in ranks):
        res = np.sum(np.abs(bb - a @ sol) ** 2, axis=-2)
        residuals = fresh(res.squeeze(-1) if vector else res, real, self.device)
    return solution, residuals, rank, sv


derivatives(linalg_lstsq, {"self, b": "linalg_lstsq_backward(grads[0], grads[1], self, b, solution, grad_input_mask)"},
            output_differentiability=[True, True, False, False])
