"""torch/nn/utils/parametrizations.py: weight_norm and spectral_norm as parametrizations.

Each registers a small module (``_WeightNorm``, ``_SpectralNorm``) with
``parametrize.register_parametrization``, so the module's tensor is recomputed on every access
and ``state_dict`` holds the originals (``parametrizations.weight.original0/1`` for weight_norm,
``parametrizations.weight.original`` and the power-iteration vectors ``..weight.0._u/_v`` for
spectral_norm). The forward of each is torch's, op for op, so traces record the same nodes.
(``orthogonal`` needs geqrf and householder_product, which reftrace lacks.)
"""
import reftrace
from ..._missing import NotImplementedInReftrace
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["spectral_norm", "weight_norm"]


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


def __getattr__(name):
    if name == "orthogonal":
        raise NotImplementedInReftrace(
            "reftrace does not implement torch.nn.utils.parametrizations.orthogonal yet: it needs "
            "torch.geqrf, torch.linalg.householder_product and torch.matrix_exp, which reftrace lacks")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
