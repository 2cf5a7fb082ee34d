"""torch.signal.windows (torch/signal/windows/windows.py): Python functions over tensor ops, as in
torch: each builds its window from ``linspace`` over the sample positions and a pointwise
formula, in float32 or float64 only. The arithmetic (which op runs in which dtype, in which
order) is torch's, so the windows agree with torch's to rounding.
"""
import math
from collections.abc import Iterable

import reftrace as _r


def _checks(function_name, M, dtype, layout):
    """_window_function_checks."""
    if M < 0:
        raise ValueError(f"{function_name} requires non-negative window length, got M={M}")
    if layout is not _r.strided:
        raise ValueError(f"{function_name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_r.float32, _r.float64):
        raise ValueError(f"{function_name} expects float32 or float64 dtypes, got: {dtype}")


def _empty(M, dtype, layout, device, requires_grad):
    """The M == 0 (empty) and M == 1 (a single 1) windows, or None."""
    if M == 0:
        return _r.empty((0,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    return None


def _ones(dtype, layout, device, requires_grad):
    return _r.ones((1,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def _positions(start, end, M, dtype, layout, device, requires_grad):
    return _r.linspace(start=start, end=end, steps=M, dtype=dtype, layout=layout, device=device,
                       requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=_r.strided, device=None,
                requires_grad=False):
    dtype = dtype or _r.get_default_dtype()
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(M, dtype, layout, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _positions(-center * constant, (-center + (M - 1)) * constant, M, dtype, layout, device,
                   requires_grad)
    return _r.exp(-_r.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=_r.strided, device=None, requires_grad=False):
    dtype = dtype or _r.get_default_dtype()
    _checks("cosine", M, dtype, layout)
    if M == 0:
        return _empty(M, dtype, layout, device, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _positions(start * constant, (start + (M - 1)) * constant, M, dtype, layout, device,
                   requires_grad)
    return _r.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=_r.strided, device=None,
             requires_grad=False):
    dtype = dtype or _r.get_default_dtype()
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(M, dtype, layout, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _positions(start * constant, (start + (M - 1)) * constant, M, dtype, layout, device,
                   requires_grad)
    return _r.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=_r.strided, device=None,
           requires_grad=False):
    dtype = dtype or _r.get_default_dtype()
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(M, dtype, layout, device, requires_grad)
    if M == 1:
        return _ones(dtype, layout, device, requires_grad)
    # beta as a tensor of the window's dtype (torch: "Avoid NaNs by casting beta")
    beta = _r.tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = _r.minimum(beta, start + (M - 1) * constant)
    k = _positions(start, end, M, dtype, layout, device, requires_grad)
    return _r.i0(_r.sqrt(beta * beta - _r.pow(k, 2))) / _r.i0(beta)


def hamming(M, *, sym=True, dtype=None, layout=_r.strided, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=_r.strided, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=_r.strided, device=None, requires_grad=False):
    dtype = dtype or _r.get_default_dtype()
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=_r.strided, device=None, requires_grad=False):
    dtype = dtype or _r.get_default_dtype()
    _checks("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(M, dtype, layout, device, requires_grad)
    if M == 1:
        return _ones(dtype, layout, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _positions(start, start + (M - 1) * constant, M, dtype, layout, device, requires_grad)
    return 1 - _r.abs(k)


def general_cosine(M, *, a, sym=True, dtype=None, layout=_r.strided, device=None,
                   requires_grad=False):
    dtype = dtype or _r.get_default_dtype()
    _checks("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(M, dtype, layout, device, requires_grad)
    if M == 1:
        return _ones(dtype, layout, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _positions(0, (M - 1) * constant, M, dtype, layout, device, requires_grad)
    a_i = _r.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                    requires_grad=requires_grad)
    i = _r.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device,
                  requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * _r.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=_r.strided, device=None,
                    requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=_r.strided, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
