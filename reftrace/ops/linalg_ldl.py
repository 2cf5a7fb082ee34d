"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve (ATen/native/BatchLinearAlgebra.cpp
``linalg_ldl_factor_ex_out``, ``linalg_ldl_solve_out``; the CPU kernels call LAPACK).

torch factors ``tril(A)`` with LAPACK's ``?sytrf`` (``?hetrf`` for ``hermitian=True`` complex
input), always with ``uplo='L'``, and solves with ``?sytrs`` / ``?hetrs``. NumPy exposes none of
them, so the unblocked algorithms (``?sytf2`` / ``?hetf2``: Bunch-Kaufman diagonal pivoting,
alpha = (1 + sqrt(17)) / 8; ``?sytrf`` runs exactly this for n <= its block size 64) are written
out below step by step in the input's precision: the pivots (LAPACK's 1-based convention, a
negative pair for a 2x2 block) are then LAPACK's, and the values agree to rounding (bit for bit
in float64 on the random matrices tried, up to n = 65; beyond, MKL's blocked ?lasyf rounds
differently, which can flip a pivot choice at a near tie).

NaN input is where MKL and the reference algorithm part: a NaN diagonal of a real matrix is
matched (``_zero_or_nan_column``); a NaN elsewhere follows the reference i?amax, which skips it,
whereas MKL's may not, so pivots can differ there.

None of the three has a derivatives.yaml entry: their floating results require grad and
backward raises (torch: "derivative for aten::linalg_ldl_factor_ex is not implemented").
"""
import numpy as np

from .. import _dtype as D
from ._iter import broadcast_shapes
from ._registry import composite, get_packet, op
from .linalg_decomp import check_square, fresh, int_info, lapack_result

_F = ("function",)

_ASSERT = ("false INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/native/"
           "BatchLinearAlgebra.cpp\":1642, please report a bug to PyTorch. ")


def _check_float(name, A):
    """checkFloatingOrComplex; half precision passes it and fails at the kernel's dispatch."""
    if A.dtype.category <= 1:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.ir_name}")


def _check_kernel_dtype(kernel, A):
    if A.dtype is D.float16:  # (reftrace has no bfloat16)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{A.dtype.ir_name}'")


def _check_errors(info, name):
    """_linalg_check_errors: an info > 0 of sytrf has no message of its own in torch, which
    reaches its internal assert (for a batch too, without the batch element)."""
    bad = info[info != 0]
    if bad.size:
        raise RuntimeError(f"{_ASSERT}{name}: Unknown error code: {int(bad[0])}.")


# -- ?sytf2 / ?hetf2, uplo = 'L' ------------------------------------------------------------------

def _abs1(x):
    """The size LAPACK's pivot search compares: |x| for reals, |re| + |im| (cabs1) for complex."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def _zero_or_nan_column(absakk, colmax, is_complex):
    """sytf2's test ``MAX(ABSAKK, COLMAX) .EQ. ZERO .OR. DISNAN(ABSAKK)``. torch's LAPACK (MKL)
    runs it so for complex input; for real input it behaves as the test without DISNAN, with
    MAX as x86's maxsd (a NaN operand yields the second one): a NaN diagonal then pivots as
    any other value does (torch gives pivots [2, 2], info 2 for [[nan, 0], [1, 2]])."""
    if is_complex:
        return max(absakk, colmax) == 0 or np.isnan(absakk)
    m = colmax if np.isnan(absakk) or np.isnan(colmax) else max(absakk, colmax)
    return m == 0


def _swap(a, i, j):
    """DSWAP of two equally long index expressions of ``a``."""
    t = a[i].copy()
    a[i] = a[j]
    a[j] = t


def _sytf2_lower(a, herm):
    """Factor the lower triangle of one n x n matrix in place: (ipiv, info) as LAPACK's."""
    n = a.shape[0]
    herm = herm and np.iscomplexobj(a)
    real = a.real.dtype.type
    one = real(1)
    alpha = (one + np.sqrt(real(17))) / real(8)
    ipiv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k].real) if herm else _abs1(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(_abs1(a[k + 1:, k])))
            colmax = _abs1(a[imax, k])
        else:
            imax, colmax = k, real(0)
        if _zero_or_nan_column(absakk, colmax, np.iscomplexobj(a)):
            # column k is zero (or NaN): record it and go on without pivoting
            info = info or k + 1
            kp = k
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk >= alpha * colmax:
                kp = k
            else:
                jmax = k + int(np.argmax(_abs1(a[imax, k:imax])))
                rowmax = _abs1(a[imax, jmax])
                if imax < n - 1:
                    jmax = imax + 1 + int(np.argmax(_abs1(a[imax + 1:, imax])))
                    rowmax = max(rowmax, _abs1(a[jmax, imax]))
                diag = abs(a[imax, imax].real) if herm else _abs1(a[imax, imax])
                if absakk >= alpha * colmax * (colmax / rowmax):
                    kp = k
                elif diag >= alpha * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                # interchange rows and columns kk and kp of the trailing submatrix
                _swap(a, (slice(kp + 1, None), kk), (slice(kp + 1, None), kp))
                if herm:
                    for j in range(kk + 1, kp):
                        t = np.conj(a[j, kk])
                        a[j, kk] = np.conj(a[kp, j])
                        a[kp, j] = t
                    a[kp, kk] = np.conj(a[kp, kk])
                    r1 = a[kk, kk].real
                    a[kk, kk] = a[kp, kp].real
                    a[kp, kp] = r1
                    if kstep == 2:
                        a[k, k] = a[k, k].real
                else:
                    _swap(a, (slice(kk + 1, kp), kk), (kp, slice(kk + 1, kp)))
                    _swap(a, (kk, kk), (kp, kp))
                if kstep == 2:
                    _swap(a, (k + 1, k), (kp, k))
            elif herm:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                if k < n - 1:
                    _rank1(a, k, herm, one)
            elif k < n - 2:
                _rank2(a, k, herm, one)
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def _rank1(a, k, herm, one):
    """A(k+1:, k+1:) -= W(k) (1 / D(k)) W(k)^T (?syr / ?her, lower), then L(k) = W(k) / D(k)."""
    x = a[k + 1:, k].copy()
    if herm:
        r1 = one / a[k, k].real
        temp = -r1 * np.conj(x)
    else:
        r1 = a.dtype.type(1) / a[k, k]  # (CONE / A(K,K) for complex)
        temp = -r1 * x
    temp = np.where(x == 0, 0, temp).astype(a.dtype)  # (?syr skips a zero x(j))
    sub = a[k + 1:, k + 1:]
    sub += np.tril(np.outer(x, temp))
    if herm:
        idx = np.arange(sub.shape[0])
        sub[idx, idx] = sub[idx, idx].real
    a[k + 1:, k] = x * r1


def _rank2(a, k, herm, one):
    """A(k+2:, k+2:) -= (W(k) W(k+1)) inv(D(k)) (W(k) W(k+1))^T, columns k, k+1 become L's."""
    ck, ck1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
    if herm:
        d = np.hypot(a[k + 1, k].real, a[k + 1, k].imag)
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = one / (d11 * d22 - one)
        d21 = a[k + 1, k] / d
        d = tt / d
        wk = d * (d11 * ck - d21 * ck1)
        wkp1 = d * (d22 * ck1 - np.conj(d21) * ck)
        upd = np.outer(ck, np.conj(wk)), np.outer(ck1, np.conj(wkp1))
    else:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        t = one / (d11 * d22 - one)
        d21 = t / d21
        wk = d21 * (d11 * ck - ck1)
        wkp1 = d21 * (d22 * ck1 - ck)
        upd = np.outer(ck, wk), np.outer(ck1, wkp1)
    sub = a[k + 2:, k + 2:]
    sub[...] = np.tril(sub - upd[0] - upd[1])
    if herm:
        idx = np.arange(sub.shape[0])
        sub[idx, idx] = sub[idx, idx].real
    a[k + 2:, k] = wk
    a[k + 2:, k + 1] = wkp1


def ldl_factor_values(a, herm):
    """(LD, pivots, info) of a batch: LAPACK's factorization of each matrix's lower triangle."""
    n = a.shape[-1]
    batch = a.shape[:-2]
    ld = np.tril(a).reshape((-1, n, n)).copy()
    piv = np.zeros((ld.shape[0], n), np.int32)
    info = np.zeros(ld.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for b in range(ld.shape[0]):
            piv[b], info[b] = _sytf2_lower(ld[b], herm)
    return ld.reshape(a.shape), piv.reshape(batch + (n,)), info.reshape(batch)


# -- ?sytrs / ?hetrs, uplo = 'L' ------------------------------------------------------------------

def _sytrs_lower(a, ipiv, b, herm):
    """Solve A X = B in place for one factored matrix (a: LD, b: n x nrhs)."""
    n = a.shape[0]
    herm = herm and np.iscomplexobj(a)
    one = a.real.dtype.type(1)
    conj = np.conj if herm else (lambda x: x)
    # L D X = B
    k = 0
    while k < n:
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                _swap(b, k, kp)
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] *= (one / a[k, k].real) if herm else a.dtype.type(1) / a[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                _swap(b, k + 1, kp)
            b[k + 2:] -= np.outer(a[k + 2:, k], b[k])
            b[k + 2:] -= np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1 = a[k, k] / conj(akm1k)
            ak = a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - one
            bkm1 = b[k] / conj(akm1k)
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    # L^T X = B (L^H for hetrs)
    k = n - 1
    while k >= 0:
        if ipiv[k] > 0:
            b[k] -= conj(a[k + 1:, k]) @ b[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                _swap(b, k, kp)
            k -= 1
        else:
            b[k] -= conj(a[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= conj(a[k + 1:, k - 1]) @ b[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                _swap(b, k, kp)
            k -= 2


# -- the ops -------------------------------------------------------------------------------------

@op("linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> "
    "(Tensor LD, Tensor pivots, Tensor info)", variants=_F)
def linalg_ldl_factor_ex(self, hermitian, check_errors):
    return _factor(self, hermitian, check_errors, "torch.linalg.ldl_factor_ex")


def _factor(self, hermitian, check_errors, name):
    check_square("torch.linalg.ldl_factor_ex", self)
    _check_float("torch.linalg.ldl_factor_ex", self)
    a = self._array
    if a.size == 0:  # (torch returns before LAPACK: LD is left as allocated, info zeroed)
        ld, piv, info = np.zeros(a.shape, a.dtype), np.zeros(a.shape[:-1], np.int32), None
    else:
        _check_kernel_dtype("ldl_factor_kernel_cpu", self)
        ld, piv, info = ldl_factor_values(a, hermitian)
        if check_errors:
            _check_errors(info, name)
    return (lapack_result(ld, self.dtype, self.device), fresh(piv, D.int32, self.device),
            int_info(a.shape[:-2], self.device, info))


@op("linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)",
    variants=_F)
def linalg_ldl_factor(self, hermitian):
    return tuple(_factor(self, hermitian, True, "torch.linalg.ldl_factor")[:2])


def _ldl_factor_composite(self, hermitian):
    LD, pivots, info = get_packet("linalg_ldl_factor_ex")(self, hermitian=hermitian)
    _check_errors(info._array, "torch.linalg.ldl_factor")
    return LD, pivots


composite(linalg_ldl_factor)(_ldl_factor_composite)


@op("linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor",
    variants=_F)
def linalg_ldl_solve(LD, pivots, B, hermitian):
    name = "torch.linalg.ldl_solve"
    check_square(name, LD)
    _check_float(name, LD)
    _linear_solve_check_inputs(B, LD, name)
    if B._array.ndim < 2:
        raise RuntimeError(f"{name}: Expected B to have at least 2 dimensions, but it has "
                           f"{B._array.ndim} dimensions instead")
    if tuple(pivots._array.shape) != tuple(LD._array.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots._array.shape)} instead")
    if pivots.dtype.category != 1:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {pivots.dtype.ir_name}")
    ld, piv, b = LD._array, pivots._array, B._array
    batch = broadcast_shapes(tuple(b.shape[:-2]), tuple(ld.shape[:-2]))
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), copy=True)
    if ld.size and piv.size:
        _check_kernel_dtype("ldl_solve_kernel_cpu", LD)
    if ld.size and piv.size and x.size:
        n = ld.shape[-1]
        ld = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((-1, n, n))
        piv = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((-1, n))
        flat = x.reshape((-1,) + x.shape[-2:])
        with np.errstate(all="ignore"):
            for i in range(flat.shape[0]):
                _sytrs_lower(ld[i], piv[i], flat[i], hermitian)
        x = flat.reshape(x.shape)
    return lapack_result(x, B.dtype, B.device)


def _linear_solve_check_inputs(B, A, name):
    """LinearAlgebraUtils.h linearSolveCheckInputs(self=B, A)."""
    if B.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype.ir_name} and A of type {A.dtype.ir_name} instead.")
    nd = B._array.ndim
    if nd == 0:
        raise IndexError("Dimension specified as -2 but tensor has no dimensions")
    if nd == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    n = A._array.shape[-1]
    if B._array.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B._array.shape[-2]} by {B._array.shape[-1]}")
