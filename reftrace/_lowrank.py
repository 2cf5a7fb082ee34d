"""torch/_lowrank.py: svd_lowrank and pca_lowrank, randomized low-rank SVD / PCA (Halko,
Martinsson and Tropp's Algorithm 4.4 with ``niter`` power iterations), ported line by line.

torch writes these in Python, so their frames name traced values (``%R``, ``%Q``, ``%B`` ...):
every function here is ``@python_level``, with torch's local names, and ``_matmul`` stands for
torch/_linalg_utils.py's ``matmul(A, B)``.

The projection is ``randn(n, q)``: reftrace's generator is not torch's, so for the same seed the
computed bases differ from torch's (U and V by the signs or rotation of their columns); the
approximation ``U diag(S) V^H`` and, where q is at least the rank, ``S`` itself agree.
"""
import reftrace as torch

from ._frames import python_level

__all__ = ["svd_lowrank", "pca_lowrank"]


def _get_floating_dtype(A):
    """torch/_linalg_utils.py get_floating_dtype: integer types map to float32."""
    dtype = A.dtype
    if dtype in (torch.float16, torch.float32, torch.float64):
        return dtype
    return torch.float32


@python_level
def _matmul(A, B):
    if A is None:
        return B
    return torch.matmul(A, B)


@python_level
def get_approximate_basis(A, q, niter=2, M=None):
    niter = 2 if niter is None else niter
    dtype = _get_floating_dtype(A) if not A.is_complex() else A.dtype
    matmul = _matmul

    R = torch.randn(A.shape[-1], q, dtype=dtype, device=A.device)

    X = matmul(A, R)
    if M is not None:
        X = X - matmul(M, R)
    Q = torch.linalg.qr(X).Q
    for _ in range(niter):
        X = matmul(A.mH, Q)
        if M is not None:
            X = X - matmul(M.mH, Q)
        Q = torch.linalg.qr(X).Q
        X = matmul(A, Q)
        if M is not None:
            X = X - matmul(M, Q)
        Q = torch.linalg.qr(X).Q
    return Q


@python_level
def svd_lowrank(A, q=6, niter=2, M=None):
    return _svd_lowrank(A, q=q, niter=niter, M=M)


@python_level
def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    matmul = _matmul
    if M is not None:
        M = M.broadcast_to(A.size())

    # Algorithm 5.1 in Halko et al., 2009
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH

    Q = get_approximate_basis(A, q, niter=niter, M=M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = torch.linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)

    if m < n:
        U, V = V, U

    return U, S, V


@python_level
def pca_lowrank(A, q=None, center=True, niter=2):
    (m, n) = A.shape[-2:]

    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(
            f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}"
        )
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")

    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)

    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter=niter, M=None)
