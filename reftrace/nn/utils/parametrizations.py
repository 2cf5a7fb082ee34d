"""torch/nn/utils/parametrizations.py: weight_norm and spectral_norm as parametrizations.

Each registers a small module (``_WeightNorm``, ``_SpectralNorm``) with
``parametrize.register_parametrization``, so the module's tensor is recomputed on every access
and ``state_dict`` holds the originals (``parametrizations.weight.original0/1`` for weight_norm,
``parametrizations.weight.original`` and the power-iteration vectors ``..weight.0._u/_v`` for
spectral_norm, ``parametrizations.weight.original`` and the ``base`` buffer for orthogonal). The
forward of each is torch's, op for op, so traces record the same nodes.
"""
from enum import Enum, auto

import numpy as np

import reftrace
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return reftrace._weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        weight_g = reftrace.norm_except_dim(weight, 2, self.dim)
        weight_v = weight
        return weight_g, weight_v


def weight_norm(module, name="weight", dim=0):
    """w = g * v / ||v||: ``original0`` is the magnitude g, ``original1`` the direction v.
    A state_dict of the old hook-based weight_norm (``weight_g``, ``weight_v``) still loads."""
    _weight_norm = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, _weight_norm, unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            original0 = state_dict.pop(g_key)
            original1 = state_dict.pop(v_key)
            state_dict[f"{prefix}parametrizations.{name}.original0"] = original0
            state_dict[f"{prefix}parametrizations.{name}.original1"] = original1

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # For ndim == 1 we do not need to approximate anything (see forward)
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start with u, v already converged (torch runs 15 iterations here)
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            # permute dim to front
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are updated in place (out=), under no_grad: the caller's autograd graph does
        # not see them, a trace records them (torch's decorator is the same no_grad)
        with reftrace.no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(reftrace.mv(weight_mat, self._v), dim=0, eps=self.eps,
                                      out=self._u)
                self._v = F.normalize(reftrace.mv(weight_mat.H, self._u), dim=0, eps=self.eps,
                                      out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            # Faster and more exact path, no need to approximate anything
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # the vectors are cloned so that backward does not see them change (in place) later
        u = self._u.clone(memory_format=reftrace.contiguous_format)
        v = self._v.clone(memory_format=reftrace.contiguous_format)
        sigma = reftrace.vdot(u, reftrace.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        # a new weight is stored as it is: the parametrization normalises it on access
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """weight / sigma, sigma the largest singular value estimated by power iteration (one step
    per training-mode access). ``dim`` defaults to 1 for ConvTranspose layers, else 0."""
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
    weight = getattr(module, name, None)
    if not isinstance(weight, reftrace.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _is_orthogonal(Q, eps=None):
    n, k = Q.size(-2), Q.size(-1)
    Id = reftrace.eye(k, dtype=Q.dtype, device=Q.device)
    # a reasonable eps, but not too large
    eps = 10.0 * n * float(np.finfo(Q.dtype.np).eps)  # torch.finfo(dtype).eps
    return reftrace.allclose(Q.mH @ Q, Id, atol=eps)


def _make_orthogonal(A):
    """Q of A's QR decomposition, with the signs making diag(R) positive."""
    X, tau = reftrace.geqrf(A)
    Q = reftrace.linalg.householder_product(X, tau)
    # the diagonal of X is the diagonal of R (always real): normalise by its signs
    Q *= X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        # (torch's Note [Householder complex]: the reflectors cannot parametrize unitary matrices)
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # here n > k and X is a tall matrix
        if self.orthogonal_map == _OrthMaps.matrix_exp or self.orthogonal_map == _OrthMaps.cayley:
            # n x k - k(k-1)/2 parameters
            X = X.tril()
            if n != k:
                # embed into a square matrix
                X = reftrace.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            # A is skew-symmetric (or skew-hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = reftrace.matrix_exp(A)
            else:
                # the Cayley retraction (I+A/2)(I-A/2)^{-1}
                Id = reftrace.eye(n, dtype=A.dtype, device=A.device)
                Q = reftrace.linalg.solve(reftrace.add(Id, A, alpha=-0.5),
                                          reftrace.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            # X is real here (no householder with complex numbers)
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = reftrace.linalg.householder_product(A, tau)
            # the diagonal of X is 1's and -1's; cast so it is neither differentiated nor updated
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with reftrace.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        # Q is copied on every path
        if not hasattr(self, "base"):
            # (torch's Note [right_inverse expm cayley]: only the householder map is inverted)
            if self.orthogonal_map == _OrthMaps.cayley or \
                    self.orthogonal_map == _OrthMaps.matrix_exp:
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential "
                    "or the Cayley parametrizations when use_trivialization=False.")
            # make Q orthogonal through QR, with diag(R) > 0
            A, tau = reftrace.geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            # LAPACK returns exactly zero where it uses no reflection
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            # complete Q into a full n x n orthogonal matrix (random columns: reftrace's RNG
            # stream is not torch's, so base differs from torch's here, as any random init)
            N = reftrace.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = reftrace.cat([Q, N], dim=-1)
            Q = _make_orthogonal(Q)
        self.base = Q
        # -Id, so that householder(zeros(m, n)) == eye(m, n)
        neg_Id = reftrace.zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """An orthogonal (unitary) weight: the image of a free matrix under the matrix exponential,
    the Cayley map or a product of Householder reflectors (torch's parametrization)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, reftrace.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    # 1-d tensors (maps on the sphere) are refused, as torch does
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
