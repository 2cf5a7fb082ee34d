"""torch.masked (torch/masked/__init__.py): reductions and normalizations over the elements a
boolean mask selects, written as torch's Python code writes them (reftrace/masked/_ops.py).

Strided tensors only: reftrace has no sparse layouts (NumPy has none), and no MaskedTensor."""
from ._ops import (  # noqa: F401
    _canonical_dim,
    _combine_input_and_mask,
    _input_mask,
    _output_mask,
    _reduction_identity,
    _where,
    amax,
    amin,
    argmax,
    argmin,
    cumprod,
    cumsum,
    log_softmax,
    logaddexp,
    logsumexp,
    mean,
    median,
    norm,
    normalize,
    prod,
    softmax,
    softmin,
    std,
    sum,
    var,
)

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
           "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]

from .._missing import module_getattr as _module_getattr  # noqa: E402

# MaskedTensor, masked_tensor, as_masked_tensor ...: "reftrace does not implement torch.masked.X yet"
__getattr__ = _module_getattr("torch.masked", "reftrace.masked")
