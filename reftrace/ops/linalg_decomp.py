"""torch.linalg's factorizations and solvers (ATen/native/BatchLinearAlgebra.cpp, LinearAlgebra.cpp):
det/slogdet/logdet, inv_ex, solve/solve_ex, solve_triangular, cholesky/cholesky_ex, qr, svd/svdvals,
eigh/eigvalsh, eig/eigvals, lu_factor/lu/lu_solve/lu_unpack, cholesky_solve/cholesky_inverse,
triangular_solve, geqrf, householder_product (orgqr).

LAPACK writes its results column-major, so torch's matrix results have strides (..., 1, m): each
matrix of a batch is Fortran-ordered, the batch itself contiguous (``_lapack_result``). The values
come from NumPy's LAPACK in the input's precision; LU (getrf: partial pivoting, first maximum
wins) is written out here, NumPy having none. Factorizations whose result is only defined up to
signs or phases (eigenvectors, singular vectors) are LAPACK-implementation-defined: spec/ops.md.

torch's public ops here are CompositeImplicit over underscore ops that carry the derivatives
(``linalg_det`` -> ``_linalg_det``, ``linalg_eigh`` -> ``_linalg_eigh``, ``linalg_svd`` ->
``_linalg_svd``, ``linalg_solve`` -> ``_linalg_solve_ex``): a trace records the public op, autograd
the underscore op's node, as in torch.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, _strided, contiguous_strides, xp_of
from ._iter import broadcast_shapes, empty_strided_array
from ._registry import composite, derivatives, get_packet, op
from .linalg import _LinAlgError

_F = ("function",)
_FM = ("function", "method")


# -- checks (LinearAlgebraUtils.h) --------------------------------------------------------------

def check_float(name, A):
    """checkFloatingOrComplex, and linalg's refusal of half precision."""
    if A.dtype.category <= 1:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.ir_name}")
    if A.dtype is D.float16:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")


def check_matrix(name, A, what="A"):
    if A._array.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def check_square(name, A, what="A"):
    check_matrix(name, A, what)
    m, n = A._array.shape[-2:]
    if m != n:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are "
                           f"{m} by {n} matrices")


def square_float(name, A):
    check_square(name, A)
    check_float(name, A)


# -- results -------------------------------------------------------------------------------------

def lapack_strides(shape):
    """Column-major matrices in a contiguous batch: (..., 1, m)."""
    if len(shape) < 2:
        return contiguous_strides(shape)
    m, n = shape[-2:]
    # (torch allocates the transposed shape contiguously and transposes it back)
    s = contiguous_strides(tuple(shape[:-2]) + (n, m))
    return s[:-2] + (s[-1], s[-2])


def lapack_result(array, dtype, device):
    strides = lapack_strides(array.shape)
    out = empty_strided_array(xp_of_array(array), array.shape, strides, dtype.np)
    out[...] = array
    return _strided(out, dtype, device, strides)


def xp_of_array(array):
    return np if isinstance(array, np.ndarray) else __import__("cupy")


def fresh(array, dtype, device):
    return _fresh(np.asarray(array).astype(dtype.np, copy=False), dtype, device)


def int_info(shape, device, values=None):
    """LAPACK's info codes: int32, one per matrix."""
    arr = np.zeros(shape, np.int32) if values is None else np.asarray(values, np.int32).reshape(shape)
    return _fresh(arr, D.int32, device)


def real_of(dtype):
    return {D.complex64: D.float32, D.complex128: D.float64}.get(dtype, dtype)


def complex_of(dtype):
    return {D.float32: D.complex64, D.float64: D.complex128}.get(dtype, dtype)


def quiet_np(fn):
    def run(*a, **k):
        with np.errstate(all="ignore"):
            return fn(*a, **k)
    return run


# -- LU (getrf) ------------------------------------------------------------------------------------

def getrf(a, pivot=True):
    """LU with partial pivoting of each matrix of a batch (m x n): (LU, 1-based pivots, info)."""
    a = np.array(a, copy=True)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    flat = a.reshape((int(np.prod(batch, dtype=np.int64)), m, n))
    piv = np.tile(np.arange(1, k + 1, dtype=np.int32), (flat.shape[0], 1))
    info = np.zeros(flat.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for b in range(flat.shape[0]):
            lu = flat[b]
            for j in range(k):
                # i?amax: complex entries compare by |re| + |im| (LAPACK's cabs1)
                col = lu[j:, j]
                size = np.abs(col.real) + np.abs(col.imag) if np.iscomplexobj(col) else np.abs(col)
                p = j + int(np.argmax(size)) if pivot else j
                piv[b, j] = p + 1
                if lu[p, j] == 0:
                    if info[b] == 0:
                        info[b] = j + 1
                    continue
                if p != j:
                    lu[[j, p]] = lu[[p, j]]
                lu[j + 1:, j] /= lu[j, j]
                lu[j + 1:, j + 1:] -= np.outer(lu[j + 1:, j], lu[j, j + 1:])
    return flat.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _perm_from_pivots(piv, m):
    """The row permutation LAPACK's pivots (1-based swaps) describe: P such that A = P L U."""
    perm = np.arange(m)
    for j, p in enumerate(piv):
        perm[[j, p - 1]] = perm[[p - 1, j]]
    P = np.zeros((m, m))
    P[perm, np.arange(m)] = 1
    return P


# -- det / slogdet / logdet -----------------------------------------------------------------------

@quiet_np
def _det_parts(A):
    # torch's _linalg_det / _linalg_slogdet factor A.mH when A is contiguous and real (lu_factor
    # wants a column-major input; det(A^T) = det(A)): the values, and the LU and pivots saved for
    # the backward (linalg_det_backward solves with adjoint=!use_A_T) are those of A.mT then
    a = A._array
    use_A_T = A.is_contiguous() and not A.dtype.is_complex
    lu, piv, _ = getrf(np.swapaxes(a, -1, -2) if use_A_T else a)
    n = a.shape[-1]
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    swaps = (piv != np.arange(1, n + 1)).sum(-1) % 2
    sign = np.where(swaps == 1, -1, 1).astype(a.dtype)
    return lu, piv, diag, sign


@op("_linalg_det(Tensor A) -> (Tensor result, Tensor LU, Tensor pivots)", variants=())
def _linalg_det(A):
    square_float("linalg.det", A)
    lu, piv, diag, sign = _det_parts(A)
    det = sign * np.prod(diag, axis=-1) if A._array.size else np.ones(A._array.shape[:-2], A.dtype.np)
    return (fresh(np.asarray(det), A.dtype, A.device), lapack_result(lu, A.dtype, A.device),
            fresh(piv, D.int32, A.device))


derivatives(_linalg_det, {"A": "linalg_det_backward(grad, result, A, LU, pivots)"},
            output_differentiability=[True, False, False])


@op("linalg_det(Tensor A) -> Tensor", variants=_F)
def linalg_det(A):
    return _linalg_det.kernel(A)[0]


composite(linalg_det)(lambda A: get_packet("_linalg_det")(A)[0])


@op("det(Tensor self) -> Tensor", variants=_FM)
def det(self):
    return _linalg_det.kernel(self)[0]


composite(det)(lambda self: get_packet("_linalg_det")(self)[0])


@op("_linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet, Tensor LU, Tensor pivots)",
    variants=())
def _linalg_slogdet(A):
    square_float("linalg.slogdet", A)
    lu, piv, diag, sign = _det_parts(A)
    with np.errstate(all="ignore"):
        if A.dtype.is_complex:
            phase = diag / np.abs(diag)
            sgn = sign * np.prod(np.where(diag == 0, 0, phase), axis=-1)
        else:
            sgn = sign * np.prod(np.sign(diag), axis=-1)
        logabs = np.sum(np.log(np.abs(diag)), axis=-1)
    real = real_of(A.dtype)
    return (fresh(np.asarray(sgn), A.dtype, A.device), fresh(np.asarray(logabs), real, A.device),
            lapack_result(lu, A.dtype, A.device), fresh(piv, D.int32, A.device))


derivatives(_linalg_slogdet, {"A": "slogdet_backward(grads[0], grads[1], A, sign, LU, pivots)"},
            output_differentiability=[True, True, False, False])


@op("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", variants=_F)
def linalg_slogdet(A):
    return tuple(_linalg_slogdet.kernel(A)[:2])


composite(linalg_slogdet)(lambda A: tuple(get_packet("_linalg_slogdet")(A)[:2]))


@op("logdet(Tensor self) -> Tensor", variants=_FM)
def logdet(self):
    square_float("linalg.slogdet", self)
    sign, logabs = _linalg_slogdet.kernel(self)[:2]
    s, v = sign._array, logabs._array
    if self.dtype.is_complex:
        out = np.log(s.astype(self.dtype.np)) + v
    else:
        out = np.where(s == -1, np.nan, np.where(s == 0, -np.inf, v))
    return fresh(np.asarray(out), self.dtype, self.device)


@composite(logdet)
def _logdet_composite(self):
    sign, logabsdet = get_packet("linalg_slogdet")(self)
    if self.dtype.is_complex:
        return sign.log() + logabsdet
    return get_packet("where")(sign == -1.0, float("nan"), logabsdet)


# -- inv_ex ---------------------------------------------------------------------------------------

@op("linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
    variants=_F)
def linalg_inv_ex(A, check_errors):
    from .linalg import linalg_inv
    square_float("linalg.inv", A)
    _, _, info = getrf(A._array)
    if info.any() and not check_errors:
        with np.errstate(all="ignore"):
            inv = np.full(A._array.shape, np.nan, A.dtype.np)
        return lapack_result(inv, A.dtype, A.device), int_info(info.shape, A.device, info)
    return linalg_inv.kernel(A), int_info(info.shape, A.device, info)


derivatives(linalg_inv_ex, {"A": "-matmul(inverse.transpose(-2, -1).conj(), matmul(grad, inverse.transpose(-2, -1).conj()))"},
            output_differentiability=[True, False])


# -- solve / solve_ex -----------------------------------------------------------------------------

def _solve_vector_case(A, B):
    """linalg_solve_is_vector_rhs: B is a vector (batch) rather than a matrix (batch)."""
    return B._array.ndim == 1 or (A._array.ndim - 1 == B._array.ndim and
                                  B._array.shape == A._array.shape[:-1])


@quiet_np
def _solve_values(A, B, left):
    a, b = A._array, B._array
    vector = _solve_vector_case(A, B)
    if vector:
        b = b[..., None]
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    # torch factors A.mT when A is contiguous and real (linalg_solve_ex_out's use_A_T: no copy
    # into a column-major matrix) and solves with adjoint=True; the LU and pivots it saves for
    # the backward are those of A.mT then (linalg_solve_backward reads them so), A's batch shape
    use_A_T = A.is_contiguous() and not A.dtype.is_complex
    lu, piv, info = getrf(np.swapaxes(A._array, -1, -2) if use_A_T else A._array)
    x = np.linalg.solve(a, b) if not info.any() and a.size and b.size else \
        np.full(b.shape, np.nan, a.dtype)
    if not left:
        x = np.swapaxes(x, -1, -2)
    return x, lu, piv, info, vector


def _check_solve(A, B, left):
    name = "linalg.solve"
    square_float(name, A)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found A of type "
                           f"{A.dtype.ir_name} and B of type {B.dtype.ir_name} instead")
    vector = _solve_vector_case(A, B)
    # checkInputsSolver on B_ (B.unsqueeze(-1) in the vector case): the message names the last
    # two dims of each
    a = A._array.shape
    b = B._array.shape + (1,) if vector else B._array.shape
    if (a[-2] != b[-2]) if left else (a[-1] != b[-1]):
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({a[-2]}x{a[-1]} and {b[-2]}x{b[-1]})")
    broadcast_shapes(b[:-2], a[:-2])  # _linalg_broadcast_batch_dims(B_, A)
    if not left and vector:
        raise RuntimeError(f"{name}: Vector broadcasting of the left hand side is not supported for "
                           "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)")


def _solve_result(x, dtype, device, vector, left):
    if vector:
        # the vector case: _linalg_solve_ex's meta function lays the (*, n) result out with
        # batched_matrix_contiguous_strides(result_shape, f_contig): its last two dims as a
        # column-major matrix, (1, b) for (b, n)
        strides = lapack_strides(x.shape[:-1])
        x = x[..., 0]
        out = empty_strided_array(np, x.shape, strides, dtype.np)
        out[...] = x
        return _strided(out, dtype, device, strides)
    if not left:  # solved as A.mT X.mT = B.mT: the column-major result, transposed back
        return fresh(np.ascontiguousarray(x), dtype, device)
    return lapack_result(x, dtype, device)


@op("_linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> "
    "(Tensor result, Tensor LU, Tensor pivots, Tensor info)", variants=())
def _linalg_solve_ex(A, B, left, check_errors):
    _check_solve(A, B, left)
    x, lu, piv, info, vector = _solve_values(A, B, left)
    if check_errors and info.any():
        _raise_singular("torch.linalg.solve", info)
    return (_solve_result(x, A.dtype, A.device, vector, left),
            lapack_result(lu, A.dtype, A.device), fresh(piv, D.int32, A.device),
            int_info(info.shape, A.device, info))


derivatives(_linalg_solve_ex, {"A, B": "linalg_solve_backward(grad, result, A, LU, pivots, left, grad_input_mask[1])"},
            output_differentiability=[True, False, False, False])


def _raise_singular(name, info):
    flat = info.reshape(-1)
    i = int(np.nonzero(flat)[0][0])
    prefix = f"(Batch element {i}): " if info.ndim else ""
    raise _LinAlgError(f"{name}: {prefix}The solver failed because the input matrix is singular.")


@op("linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> "
    "(Tensor result, Tensor info)", variants=_F)
def linalg_solve_ex(A, B, left, check_errors):
    r = _linalg_solve_ex.kernel(A, B, left, check_errors)
    return r[0], r[3]


@composite(linalg_solve_ex)
def _solve_ex_composite(A, B, left, check_errors):
    r = get_packet("_linalg_solve_ex")(A, B, left=left, check_errors=check_errors)
    return r[0], r[3]


@op("linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", variants=_F)
def linalg_solve(A, B, left):
    return _linalg_solve_ex.kernel(A, B, left, True)[0]


composite(linalg_solve)(lambda A, B, left: get_packet("_linalg_solve_ex")(A, B, left=left, check_errors=True)[0])


# -- triangular solves ------------------------------------------------------------------------------

@quiet_np
def _tri_solve(a, b, upper, left, unitriangular):
    """X with op(A) X = B (left) or X A = B, A triangular, by substitution (trsm)."""
    if not left:
        a, b, upper = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper
    a = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        n = a.shape[-1]
        a = a.copy()
        a[..., np.arange(n), np.arange(n)] = 1
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    n = a.shape[-1]
    x = np.zeros(b.shape, np.result_type(a, b))
    rows = range(n - 1, -1, -1) if upper else range(n)
    for i in rows:
        acc = b[..., i, :] - np.einsum("...j,...jk->...k", a[..., i, :], x)
        x[..., i, :] = acc / a[..., i, i][..., None]
    return np.swapaxes(x, -1, -2) if not left else x


@op("linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, "
    "bool unitriangular=False) -> Tensor", variants=_F)
def linalg_solve_triangular(self, B, upper, left, unitriangular):
    name = "linalg.solve_triangular"
    check_float(name, self)
    x = _tri_solve(self._array, B._array, upper, left, unitriangular)
    return lapack_result(x, self.dtype, self.device)


derivatives(linalg_solve_triangular, {
    "self, B": "linalg_solve_triangular_backward(grad, self, result, upper, left, unitriangular, grad_input_mask)"})


@op("triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, "
    "bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)", variants=_FM)
def triangular_solve(self, A, upper, transpose, unitriangular):
    a = A._array
    if transpose:
        a, upper = np.swapaxes(a, -1, -2), not upper
    x = _tri_solve(a, self._array, upper, True, unitriangular)
    batch = x.shape[:-2]
    return (lapack_result(x, self.dtype, self.device),
            lapack_result(np.broadcast_to(A._array, batch + A._array.shape[-2:]), A.dtype, A.device))


derivatives(triangular_solve, {
    "self, A": "triangular_solve_backward(grads[0], grads[1], self, A, solution, upper, transpose, unitriangular, grad_input_mask)"})


# -- Cholesky -------------------------------------------------------------------------------------

def _cholesky_values(A, upper):
    a = A._array
    n = a.shape[-1]
    flat = a.reshape((int(np.prod(a.shape[:-2], dtype=np.int64)), n, n))
    out = np.zeros_like(flat)
    info = np.zeros(flat.shape[0], np.int32)
    for b, m in enumerate(flat):
        try:
            out[b] = np.linalg.cholesky(m) if n else m
        except np.linalg.LinAlgError:
            info[b] = _first_bad_minor(m)
    out = out.reshape(a.shape)
    if upper:
        out = np.swapaxes(out, -1, -2).conj()
    return out, info.reshape(a.shape[:-2])


def _first_bad_minor(m):
    for k in range(1, m.shape[-1] + 1):
        try:
            np.linalg.cholesky(m[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return m.shape[-1]


@op("linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> "
    "(Tensor L, Tensor info)", variants=_F)
def linalg_cholesky_ex(self, upper, check_errors):
    square_float("linalg.cholesky", self)
    L, info = _cholesky_values(self, upper)
    if check_errors and info.any():
        _raise_not_pd("linalg.cholesky", info)
    return lapack_result(L, self.dtype, self.device), int_info(info.shape, self.device, info)


derivatives(linalg_cholesky_ex, {"self": "cholesky_backward(grad, upper, L)"},
            output_differentiability=[True, False])


def _raise_not_pd(name, info):
    flat = info.reshape(-1)
    i = int(np.nonzero(flat)[0][0])
    prefix = f"(Batch element {i}): " if info.ndim else ""
    raise _LinAlgError(f"{name}: {prefix}The factorization could not be completed because the "
                       f"input is not positive-definite (the leading minor of order {flat[i]} is "
                       "not positive-definite).")


@op("linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor", variants=_F)
def linalg_cholesky(self, upper):
    return linalg_cholesky_ex.kernel(self, upper, True)[0]


composite(linalg_cholesky)(lambda self, upper: get_packet("linalg_cholesky_ex")(self, upper=upper, check_errors=True)[0])


@op("cholesky(Tensor self, bool upper=False) -> Tensor", variants=_FM)
def cholesky(self, upper):
    import warnings
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                  "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced "
                  "with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
                  "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will "
                  "produce equivalent results for all valid (symmetric positive definite) inputs.")
    square_float("cholesky", self)
    L, info = _cholesky_values(self, upper)
    if info.any():
        _raise_not_pd("cholesky", info)
    if not self._array.size:  # (torch returns empty_like's contiguous tensor early)
        return fresh(L, self.dtype, self.device)
    return lapack_result(L, self.dtype, self.device)


derivatives(cholesky, {"self": "cholesky_backward(grad, upper, result)"})


@op("cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor", variants=_FM)
def cholesky_solve(self, input2, upper):
    L = input2._array
    U = L if upper else np.swapaxes(L, -1, -2).conj()
    Lo = np.swapaxes(U, -1, -2).conj()
    y = _tri_solve(Lo, self._array, False, True, False)
    x = _tri_solve(U, y, True, True, False)
    return lapack_result(x, self.dtype, self.device)


derivatives(cholesky_solve, {
    "self, input2": "cholesky_solve_backward(grad, self, input2, result, upper, grad_input_mask)"})


@op("cholesky_inverse(Tensor self, bool upper=False) -> Tensor", variants=_FM)
def cholesky_inverse(self, upper):
    L = self._array
    U = L if upper else np.swapaxes(L, -1, -2).conj()
    with np.errstate(all="ignore"):
        a = np.swapaxes(U, -1, -2).conj() @ U
        inv = np.linalg.inv(a) if a.size else a
    return lapack_result(inv, self.dtype, self.device)


derivatives(cholesky_inverse, {"self": "cholesky_inverse_backward(grad, self, upper, result)"})


# -- QR (geqrf + orgqr) -----------------------------------------------------------------------------

@op("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", variants=_F)
def linalg_qr(A, mode):
    name = "linalg.qr"
    check_matrix(name, A)
    check_float(name, A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    a = A._array
    m, n = a.shape[-2:]
    np_mode = "complete" if mode == "complete" else "reduced"
    if a.size:
        q, r = np.linalg.qr(a, mode=np_mode)
    else:
        k = m if mode == "complete" else min(m, n)
        q = np.zeros(a.shape[:-2] + (m, k), a.dtype)
        q[..., np.arange(min(m, k)), np.arange(min(m, k))] = 1
        r = np.zeros(a.shape[:-2] + (k, n), a.dtype)
    if mode == "r":
        return fresh(np.zeros((0,), a.dtype), A.dtype, A.device), lapack_result(r, A.dtype, A.device)
    return lapack_result(q, A.dtype, A.device), lapack_result(r, A.dtype, A.device)


derivatives(linalg_qr, {"A": "linalg_qr_backward(grads[0], grads[1], Q, R, mode)"})


@op("qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)", variants=_FM)
def qr(self, some):
    import warnings
    warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
                  "future PyTorch release.\nThe boolean parameter 'some' has been replaced with a "
                  "string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
                  "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    return linalg_qr.kernel(self, "reduced" if some else "complete")


composite(qr)(lambda self, some: get_packet("linalg_qr")(self, "reduced" if some else "complete"))


@op("geqrf(Tensor self) -> (Tensor a, Tensor tau)", variants=_FM)
def geqrf(self):
    check_matrix("geqrf", self)
    a = self._array
    m, n = a.shape[-2:]
    k = min(m, n)
    flat = a.reshape((int(np.prod(a.shape[:-2], dtype=np.int64)), m, n))
    out, taus = np.empty_like(flat), np.zeros((flat.shape[0], k), a.dtype)
    for b, mat in enumerate(flat):
        out[b], taus[b] = _householder_qr(mat)
    return (lapack_result(out.reshape(a.shape), self.dtype, self.device),
            fresh(taus.reshape(a.shape[:-2] + (k,)), self.dtype, self.device))


derivatives(geqrf, {"self": "not_implemented('geqrf')"})


def _householder_qr(a):
    """LAPACK's geqr2: reflectors H = I - tau v v^H with v[0] = 1, beta = -sign(alpha) ||x||."""
    a = a.copy()
    m, n = a.shape
    taus = np.zeros(min(m, n), a.dtype)
    for j in range(min(m, n)):
        x = a[j:, j]
        alpha = x[0]
        xnorm = np.linalg.norm(x[1:])
        if xnorm == 0 and np.imag(alpha) == 0:
            continue
        beta = -np.copysign(np.sqrt(abs(alpha) ** 2 + xnorm ** 2), np.real(alpha))
        tau = (beta - alpha) / beta
        v = x[1:] / (alpha - beta)
        a[j + 1:, j] = v
        a[j, j] = beta
        taus[j] = tau
        w = np.concatenate(([1], v)).astype(a.dtype)
        a[j:, j + 1:] -= np.conj(tau) * np.outer(w, w.conj() @ a[j:, j + 1:])
    return a, taus


def _apply_householder(a, tau, c, left=True, transpose=False):
    """Q C, Q^H C, C Q or C Q^H with Q = H_1 ... H_k from geqrf's (a, tau) (ormqr)."""
    m = a.shape[0]
    k = tau.shape[0]
    c = c.astype(np.result_type(a, c), copy=True)
    order = range(k)
    forward = (left and transpose) or (not left and not transpose)
    if not forward:
        order = reversed(order)
    for i in order:
        v = np.zeros(m, a.dtype)
        v[i] = 1
        v[i + 1:] = a[i + 1:, i]
        t = np.conj(tau[i]) if transpose else tau[i]
        if left:
            c -= t * np.outer(v, v.conj() @ c)
        else:
            c -= t * np.outer(c @ v, v.conj())
    return c


@op("linalg_householder_product(Tensor input, Tensor tau) -> Tensor", variants=_F)
def linalg_householder_product(input, tau):
    a, t = input._array, tau._array
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    flat_a = a.reshape((int(np.prod(batch, dtype=np.int64)), m, n))
    flat_t = t.reshape((flat_a.shape[0], t.shape[-1]))
    out = np.empty_like(flat_a)
    eye = np.eye(m, n, dtype=a.dtype)
    with np.errstate(all="ignore"):
        for b in range(flat_a.shape[0]):
            out[b] = _apply_householder(flat_a[b], flat_t[b], eye)
    return lapack_result(out.reshape(a.shape), input.dtype, input.device)


derivatives(linalg_householder_product, {"input, tau": "householder_product_backward(grad, result, input, tau)"})


@op("orgqr(Tensor self, Tensor input2) -> Tensor", variants=_FM)
def orgqr(self, input2):
    return linalg_householder_product.kernel(self, input2)


composite(orgqr)(lambda self, input2: get_packet("linalg_householder_product")(self, input2))


@op("ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor",
    variants=_FM)
def ormqr(self, input2, input3, left, transpose):
    a, t, c = self._array, input2._array, input3._array
    batch = c.shape[:-2]
    nb = int(np.prod(batch, dtype=np.int64))
    fa = np.broadcast_to(a, batch + a.shape[-2:]).reshape((nb,) + a.shape[-2:])
    ft = np.broadcast_to(t, batch + t.shape[-1:]).reshape((nb, t.shape[-1]))
    fc = c.reshape((nb,) + c.shape[-2:])
    out = np.empty(fc.shape, np.result_type(a, c))
    with np.errstate(all="ignore"):
        for b in range(nb):
            out[b] = _apply_householder(fa[b], ft[b], fc[b], left, transpose)
    return lapack_result(out.reshape(c.shape), self.dtype, self.device)


derivatives(ormqr, {"self, input2, input3": "ormqr_backward(grad, result, self, input2, input3, left, transpose, grad_input_mask)"})


# -- SVD --------------------------------------------------------------------------------------------

def _svd_values(A, full_matrices, compute_uv):
    a = A._array
    m, n = a.shape[-2:]
    k = min(m, n)
    if not a.size:
        s = np.zeros(a.shape[:-2] + (k,), real_of(A.dtype).np)
        if not compute_uv:
            return None, s, None
        mu, nv = (m, n) if full_matrices else (k, k)
        u = np.zeros(a.shape[:-2] + (m, mu), a.dtype)
        vh = np.zeros(a.shape[:-2] + (nv, n), a.dtype)
        if full_matrices:
            u[..., np.arange(m), np.arange(m)] = 1
            vh[..., np.arange(n), np.arange(n)] = 1
        return u, s, vh
    if not compute_uv:
        return None, np.linalg.svd(a, compute_uv=False), None
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return u, s, vh


@op("_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *, str? driver=None) -> "
    "(Tensor U, Tensor S, Tensor Vh)", variants=())
def _linalg_svd(A, full_matrices, compute_uv, driver):
    name = "linalg.svd"
    check_matrix(name, A)
    check_float(name, A)
    u, s, vh = _svd_values(A, full_matrices, compute_uv)
    S = fresh(s, real_of(A.dtype), A.device)
    if not compute_uv:
        empty = fresh(np.zeros((0,), A.dtype.np), A.dtype, A.device)
        return empty, S, empty
    # gesdd writes U column-major and Vh column-major too (torch's strides (.., 1, m))
    return lapack_result(u, A.dtype, A.device), S, lapack_result(vh, A.dtype, A.device)


derivatives(_linalg_svd, {"A": "svd_backward((grads[0].narrow(-1, 0, S.shape[-1]) if full_matrices and grads[0] is not None else grads[0]), grads[1], (grads[2].narrow(-2, 0, S.shape[-1]) if full_matrices and grads[2] is not None else grads[2]), (U.narrow(-1, 0, S.shape[-1]) if full_matrices else U), S, (Vh.narrow(-2, 0, S.shape[-1]) if full_matrices else Vh))"})


@op("linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)",
    variants=_F)
def linalg_svd(A, full_matrices, driver):
    return _linalg_svd.kernel(A, full_matrices, True, driver)


composite(linalg_svd)(lambda A, full_matrices, driver: get_packet("_linalg_svd")(A, full_matrices, True, driver=driver))


@op("linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor", variants=_F)
def linalg_svdvals(A, driver):
    return _linalg_svd.kernel(A, False, False, driver)[1]


composite(linalg_svdvals)(lambda A, driver: get_packet("_linalg_svd")(A, False, A.requires_grad, driver=driver)[1])


@op("svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)",
    variants=_FM)
def svd(self, some, compute_uv):
    name = "svd"
    check_matrix(name, self)
    u, s, vh = _svd_values(self, not some, True)
    S = fresh(s, real_of(self.dtype), self.device)
    U = lapack_result(u, self.dtype, self.device)
    V = fresh(np.swapaxes(vh, -1, -2).conj(), self.dtype, self.device)  # Vh.mH: row-major
    if not compute_uv:
        U = fresh(np.zeros(u.shape, self.dtype.np), self.dtype, self.device)
        V = fresh(np.zeros(V._array.shape, self.dtype.np), self.dtype, self.device)
    return U, S, V


@composite(svd)
def _svd_composite(self, some, compute_uv):
    U, S, Vh = get_packet("_linalg_svd")(self, not some, True)
    return U, S, Vh.transpose(-2, -1).conj()


# -- eigh / eigvalsh / eig / eigvals -----------------------------------------------------------------

def _check_uplo(uplo):
    if uplo not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")


@op("_linalg_eigh(Tensor A, str UPLO=\"L\", bool compute_v=True) -> (Tensor eigenvalues, Tensor eigenvectors)",
    variants=())
def _linalg_eigh(A, UPLO, compute_v):
    name = "linalg.eigh"
    square_float(name, A)
    _check_uplo(UPLO)
    a = A._array
    real = real_of(A.dtype)
    if not a.size:
        w, v = np.zeros(a.shape[:-1], real.np), np.zeros(a.shape, a.dtype)
    elif compute_v:
        w, v = np.linalg.eigh(a, UPLO=UPLO.upper())
    else:
        w, v = np.linalg.eigvalsh(a, UPLO=UPLO.upper()), None
    W = fresh(w, real, A.device)
    if not compute_v:
        return W, fresh(np.zeros((0,), a.dtype), A.dtype, A.device)
    return W, lapack_result(v, A.dtype, A.device)


derivatives(_linalg_eigh, {"A": "linalg_eig_backward(grads[0], grads[1], eigenvalues, eigenvectors, True)"})


@op("linalg_eigh(Tensor self, str UPLO=\"L\") -> (Tensor eigenvalues, Tensor eigenvectors)", variants=_F)
def linalg_eigh(self, UPLO):
    return _linalg_eigh.kernel(self, UPLO, True)


composite(linalg_eigh)(lambda self, UPLO: get_packet("_linalg_eigh")(self, UPLO, True))


@op("linalg_eigvalsh(Tensor self, str UPLO=\"L\") -> Tensor", variants=_F)
def linalg_eigvalsh(self, UPLO):
    return _linalg_eigh.kernel(self, UPLO, False)[0]


composite(linalg_eigvalsh)(lambda self, UPLO: get_packet("_linalg_eigh")(self, UPLO, self.requires_grad)[0])


def _eig_values(A, vectors):
    name = "linalg.eig"
    square_float(name, A)
    a = A._array
    cplx = complex_of(A.dtype)
    if not np.isfinite(a).all():
        raise RuntimeError(f"{name}: input tensor should not contain infs or NaNs.")
    if not a.size:
        return np.zeros(a.shape[:-1], cplx.np), np.zeros(a.shape, cplx.np)
    if vectors:
        w, v = np.linalg.eig(a)
        return w.astype(cplx.np), v.astype(cplx.np)
    return np.linalg.eigvals(a).astype(cplx.np), None


@op("linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)", variants=_F)
def linalg_eig(self):
    w, v = _eig_values(self, True)
    cplx = complex_of(self.dtype)
    return fresh(w, cplx, self.device), lapack_result(v, cplx, self.device)


derivatives(linalg_eig, {"self": "handle_r_to_c(self.dtype, linalg_eig_backward(grads[0], grads[1], eigenvalues, eigenvectors, False))"})


@op("linalg_eigvals(Tensor self) -> Tensor", variants=_F)
def linalg_eigvals(self):
    w, _ = _eig_values(self, False)
    return fresh(w, complex_of(self.dtype), self.device)


composite(linalg_eigvals)(lambda self: get_packet("linalg_eig")(self)[0])


# -- LU ----------------------------------------------------------------------------------------------

@op("linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> "
    "(Tensor LU, Tensor pivots, Tensor info)", variants=_F)
def linalg_lu_factor_ex(A, pivot, check_errors):
    name = "torch.lu_factor"
    check_matrix(name, A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    lu, piv, info = getrf(A._array, pivot)
    if check_errors and info.any():
        raise _LinAlgError(f"{name}: U[{info.reshape(-1)[0]},{info.reshape(-1)[0]}] is zero and "
                           "using it on lu_solve would result in a division by zero. If you still "
                           "want to perform the factorization, consider calling linalg.lu(A, "
                           "pivot) or linalg.lu_factor_ex(A, pivot)")
    return (lapack_result(lu, A.dtype, A.device), fresh(piv, D.int32, A.device),
            int_info(info.shape, A.device, info))


derivatives(linalg_lu_factor_ex, {"A": "lu_factor_ex_backward(grad, LU, pivots, pivot)"},
            output_differentiability=[True, False, False])


@op("linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)", variants=_F)
def linalg_lu_factor(A, pivot):
    return tuple(linalg_lu_factor_ex.kernel(A, pivot, True)[:2])


composite(linalg_lu_factor)(lambda A, pivot: tuple(get_packet("linalg_lu_factor_ex")(A, pivot=pivot, check_errors=True)[:2]))


def _unpack(lu, piv, m, n, unpack_data=True, unpack_pivots=True):
    k = min(m, n)
    L = np.tril(lu[..., :, :k], -1)
    L[..., np.arange(k), np.arange(k)] = 1
    U = np.triu(lu[..., :k, :])
    batch = lu.shape[:-2]
    P = np.zeros(batch + (m, m), lu.dtype)
    flat_p = P.reshape((-1, m, m)) if P.size else P
    for b, p in enumerate(piv.reshape((-1, piv.shape[-1]))) if P.size else ():
        flat_p[b] = _perm_from_pivots(p, m)
    return P, L, U


@op("linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)", variants=_F)
def linalg_lu(A, pivot):
    check_matrix("linalg.lu", A)
    lu, piv, _ = getrf(A._array, pivot)
    m, n = A._array.shape[-2:]
    P, L, U = _unpack(lu, piv, m, n)
    return tuple(fresh(x, A.dtype, A.device) for x in (P, L, U))


derivatives(linalg_lu, {"A": "linalg_lu_backward(grads[1], grads[2], P, L, U, pivot)"},
            output_differentiability=[False, True, True])


@op("lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> "
    "(Tensor P, Tensor L, Tensor U)", variants=_F)
def lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots):
    m, n = LU_data._array.shape[-2:]
    P, L, U = _unpack(LU_data._array, LU_pivots._array, m, n)
    empty = fresh(np.zeros((0,), LU_data.dtype.np), LU_data.dtype, LU_data.device)
    L = fresh(L, LU_data.dtype, LU_data.device) if unpack_data else empty
    U = fresh(U, LU_data.dtype, LU_data.device) if unpack_data else empty
    P = fresh(P, LU_data.dtype, LU_data.device) if unpack_pivots else empty
    return P, L, U


derivatives(lu_unpack, {"LU_data": "lu_unpack_backward(grads[1], grads[2], LU_data.shape[-2], LU_data.shape[-1])",
                        "LU_pivots": "non_differentiable"},
            output_differentiability=[False, True, True])


@quiet_np
def _lu_solve_values(lu, piv, b, left, adjoint):
    n = lu.shape[-1]
    batch = broadcast_shapes(broadcast_shapes(lu.shape[:-2], piv.shape[:-1]), b.shape[:-2])
    lu = np.broadcast_to(lu, batch + lu.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    L = np.tril(lu, -1) + np.eye(n, dtype=lu.dtype)
    U = np.triu(lu)
    flat = int(np.prod(batch, dtype=np.int64))
    P = np.stack([_perm_from_pivots(p, n) for p in piv.reshape((flat, n))]).reshape(batch + (n, n)) \
        if flat else np.zeros(batch + (n, n))
    A = P @ L @ U
    if adjoint:
        A = np.swapaxes(A, -1, -2).conj()
    if not left:
        return np.swapaxes(np.linalg.solve(np.swapaxes(A, -1, -2), np.swapaxes(b, -1, -2)), -1, -2) \
            if b.size else np.zeros(b.shape, lu.dtype)
    return np.linalg.solve(A, b) if b.size else np.zeros(b.shape, lu.dtype)


@op("linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor",
    variants=_F)
def linalg_lu_solve(LU, pivots, B, left, adjoint):
    x = _lu_solve_values(LU._array, pivots._array, B._array, left, adjoint)
    if not left:  # (solved as the adjoint system, then transposed back: row-major)
        return fresh(x.astype(B.dtype.np), B.dtype, B.device)
    return lapack_result(x.astype(B.dtype.np), B.dtype, B.device)


derivatives(linalg_lu_solve, {"LU": "linalg_lu_solve_LU(grad, LU, pivots, result, left, adjoint)",
                              "B": "linalg_lu_solve(LU, pivots, grad, left=left, adjoint=not adjoint)"})


@op("lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor", variants=_FM)
def lu_solve(self, LU_data, LU_pivots):
    return linalg_lu_solve.kernel(LU_data, LU_pivots, self, True, False)


composite(lu_solve)(lambda self, LU_data, LU_pivots: get_packet("linalg_lu_solve")(LU_data, LU_pivots, self))


@op("_lu_with_info(Tensor self, bool pivot=True, bool check_errors=True) -> "
    "(Tensor LU, Tensor pivots, Tensor info)", variants=_F)
def _lu_with_info(self, pivot, check_errors):
    return linalg_lu_factor_ex.kernel(self, pivot, check_errors)


composite(_lu_with_info)(lambda self, pivot, check_errors: get_packet("linalg_lu_factor_ex")(
    self, pivot=pivot, check_errors=check_errors))
