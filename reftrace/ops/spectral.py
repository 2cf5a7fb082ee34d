"""torch.fft: fft_fft ... fft_ihfftn, fftshift/ifftshift (ATen/native/SpectralOps.cpp) over the
three transforms torch's CPU backend runs (native/mkl/SpectralOps.cpp): ``_fft_c2c``,
``_fft_r2c`` (real to one-sided complex) and ``_fft_c2r`` (one-sided complex to real).

The public ops are CompositeImplicit in torch: the front end below (argument checks, dtype
promotion, cropping or zero-padding the input to ``n``/``s``, the normalisation mode) is
torch's, and it calls the three transforms, so a traced graph shows ``aten::fft_rfft`` and
autograd records ``FftR2CBackward0``.

Values come from NumPy's pocketfft in double precision, rounded once to the result dtype (torch's
MKL computes in the dtype itself: float32 results agree to rounding). Layout is MKL's
``_exec_fft``: the batch (untransformed) dimensions are ordered by decreasing input stride and
collapsed in front of the transformed ones, which are contiguous in the order the transform
visits them; the result keeps that buffer, so ``fft(x, dim=0)`` of a contiguous ``x`` is
column-major over the batch.
"""
import math

import numpy as np

from .. import _dtype as D
from .._tensor import _strided, _view_of, _wrap_dim, contiguous_strides, xp_of
from ._iter import empty_strided_array
from ._registry import composite, derivatives, get_packet, op

_FFT_NP = {D.float32: D.complex64, D.float64: D.complex128}
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2  # fft_norm_mode (SpectralOpsUtils.h: none, by_root_n, by_n)


# -- the three transforms (native/mkl/SpectralOps.cpp) --------------------------------------------

def _sorted_dims(self, dim, exclude_last=False):
    """_sort_dims: the transformed dims by decreasing input stride (insertion sort: stable)."""
    strides = self.stride()
    head = list(dim[:-1] if exclude_last else dim)
    head.sort(key=lambda d: -strides[d])
    return head + ([dim[-1]] if exclude_last else [])


def _exec_layout(self, out_sizes, dim):
    """The strides _exec_fft gives its result (see the module docstring)."""
    strides = self.stride()
    ndim = len(out_sizes)
    batch = [d for d in range(ndim) if d not in dim]
    batch.sort(key=lambda d: -strides[d])
    signal = contiguous_strides(tuple(out_sizes[d] for d in dim))
    step = math.prod(max(out_sizes[d], 1) for d in dim)
    out, numel = [0] * ndim, 1
    for d in reversed(batch):
        out[d] = numel * step
        numel *= out_sizes[d]
    for i, d in enumerate(dim):
        out[d] = signal[i]
    return out


def _scale(sizes, normalization):
    n = math.prod(sizes)
    return {_NONE: 1.0, _BY_N: 1.0 / n, _BY_ROOT_N: 1.0 / math.sqrt(n)}[normalization]


def _result(self, values, dtype, out_sizes, dim):
    xp = xp_of(self)
    strides = _exec_layout(self, out_sizes, dim)
    out = empty_strided_array(xp, tuple(out_sizes), strides, dtype.np)
    out[...] = values
    return _strided(out, dtype, self.device, strides)


@op("_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor", variants=())
def _fft_c2c(self, dim, normalization, forward):
    if not self.dtype.is_complex:
        raise RuntimeError("self.is_complex() INTERNAL ASSERT FAILED")
    dim = _sorted_dims(self, dim)
    a = self._array.astype(np.complex128)
    xp = xp_of(self)
    # unnormalised transforms; torch's scale is applied once
    v = xp.fft.fftn(a, axes=dim) if forward else xp.fft.ifftn(a, axes=dim, norm="forward")
    v = v * _scale([a.shape[d] for d in dim], normalization)
    return _result(self, v, self.dtype, list(a.shape), dim)


derivatives(_fft_c2c, {"self": "_fft_c2c(grad, dim, normalization, not forward)"})


@op("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor", variants=())
def _fft_r2c(self, dim, normalization, onesided):
    a = self._array.astype(np.float64)
    xp = xp_of(self)
    v = xp.fft.rfftn(a, axes=dim) if onesided else xp.fft.fftn(a, axes=dim)
    v = v * _scale([a.shape[d] for d in dim], normalization)
    return _result(self, v, _FFT_NP[self.dtype], list(v.shape), _sorted_dims(self, dim, True))


derivatives(_fft_r2c, {"self": "fft_r2c_backward(grad, dim, normalization, onesided, self.shape[dim[-1]])"})


@op("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor",
    variants=())
def _fft_c2r(self, dim, normalization, last_dim_size):
    a = self._array.astype(np.complex128)
    xp = xp_of(self)
    sizes = [a.shape[d] for d in dim[:-1]] + [last_dim_size]
    v = xp.fft.irfftn(a, s=sizes, axes=dim, norm="forward") * _scale(sizes, normalization)
    # MKL runs a c2c over the leading dims first, then the c2r over the last on its result
    staged = self
    if len(dim) > 1:
        staged = _fft_c2c.kernel(self, dim[:-1], _NONE, False)
    real = D.float32 if self.dtype is D.complex64 else D.float64
    return _result(staged, v, real, list(v.shape), [dim[-1]])


derivatives(_fft_c2r, {"self": "fft_c2r_backward(grad, dim, normalization)"})


# -- the front end (SpectralOps.cpp) --------------------------------------------------------------

class _Kernels:
    """What the front end calls: the kernels (eager) or the ops (autograd's decomposition)."""

    def __init__(self, recorded):
        self.recorded = recorded

    def __getattr__(self, name):
        if self.recorded:
            return get_packet(name)
        return globals()[name].kernel if name.startswith("_fft") else _KERNEL_HELPERS[name]


def _conj_kernel(t):
    """x.conj(): torch's lazy conjugate view; here a conjugated copy with the same strides."""
    if not t.dtype.is_complex:
        return t
    if t._base is not None:
        # an input view (hfft's): the conjugate only feeds the transform, which reads the
        # values and the strides, so it stays a view-shaped stand-in of the input
        return _view_of(t, t._array.conj(), t.stride())
    out = empty_strided_array(xp_of(t), t._array.shape, t.stride(), t.dtype.np)
    out[...] = t._array.conj()
    return _strided(out, t.dtype, t.device, t.stride())


def _to_kernel(t, dtype):
    from .casts import _to_copy
    return _to_copy.kernel(t, dtype, None, None, None, False, None)


def _slice_kernel(t, dim, start, end):
    from .shape import slice_view
    return slice_view(t, dim, start, end, 1)


def _pad_kernel(t, pad):
    from .nn_misc import constant_pad_nd
    return constant_pad_nd.kernel(t, pad, 0)


_KERNEL_HELPERS = {"conj": _conj_kernel, "to": _to_kernel, "slice": _slice_kernel,
                   "constant_pad_nd": _pad_kernel}


def _recorded_helpers():
    return {"conj": lambda t: t.conj() if t.dtype.is_complex else t,
            "to": lambda t, dtype: t.to(dtype),
            "slice": lambda t, dim, start, end: t.narrow(dim, start, end - start),
            "constant_pad_nd": lambda t, pad: get_packet("constant_pad_nd")(t, pad, 0)}


class _Front:
    def __init__(self, recorded):
        self.k = _Kernels(recorded)
        self.h = _recorded_helpers() if recorded else _KERNEL_HELPERS

    def promote(self, t, require_complex=False):
        """promote_type_fft: integers to the default float; CPU has no half transforms."""
        dt = t.dtype
        if dt.is_complex:
            return t
        if not dt.is_floating_point:
            dt = D.get_default_dtype()
        if dt not in (D.float32, D.float64):
            raise RuntimeError(f"Unsupported dtype {dt.ir_name}")
        if require_complex:
            dt = _FFT_NP[dt]
        return t if dt is t.dtype else self.h["to"](t, dt)

    def resize(self, x, dims, sizes):
        """resize_fft_input: crop (a view) or zero-pad each dim to its size."""
        pad = [0] * (2 * x.ndim)
        must_copy = False
        for d, n in zip(dims, sizes):
            have = x.shape[d]
            if have > n:
                x = self.h["slice"](x, d, 0, n)
            elif have < n:
                must_copy = True
                pad[2 * (x.ndim - d - 1) + 1] = n - have
        return self.h["constant_pad_nd"](x, pad) if must_copy else x

    def c2c(self, x, dim, norm, forward):
        return self.k._fft_c2c(x, dim, norm, forward)

    def r2c(self, x, dim, norm, onesided):
        return self.k._fft_r2c(x, dim, norm, onesided)

    def c2r(self, x, dim, norm, last):
        return self.k._fft_c2r(x, dim, norm, last)

    def conj(self, x):
        return self.h["conj"](x)


_EAGER, _RECORDED = _Front(False), _Front(True)


def _norm(norm, forward):
    """norm_from_string."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap(dim, ndim):
    """maybe_wrap_dim(dim, ndim, wrap_scalar=false): a 0-dim tensor has no dim to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _r2c(f, name, x, n, dim, norm, forward, onesided):
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {x.dtype.ir_name}")
    x = f.promote(x)
    d = _wrap(dim, x.ndim)
    size = x.shape[d] if n is None else n
    _check_n(size)
    if n is not None:
        x = f.resize(x, [d], [n])
    ret = f.r2c(x, [d], _norm(norm, forward), onesided)
    return ret if forward else f.conj(ret)


def _c2r(f, name, x, n, dim, norm, forward):
    x = f.promote(x, True)
    d = _wrap(dim, x.ndim)
    size = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(size)
    if n is not None:
        x = f.resize(x, [d], [size // 2 + 1])
    if forward:
        x = f.conj(x)
    return f.c2r(x, [d], _norm(norm, forward), size)


def _c2c(f, x, n, dim, norm, forward):
    d = _wrap(dim, x.ndim)
    size = x.shape[d] if n is None else n
    _check_n(size)
    if n is not None:
        x = f.resize(x, [d], [n])
    return f.c2c(x, [d], _norm(norm, forward), forward)


def _shape_and_dims(x, s, dim):
    """canonicalize_fft_shape_and_dim_args."""
    ndim = x.ndim
    dims = None
    if dim is not None:
        dims = [_wrap(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} "
                               "dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    elif dims is None:
        dims, shape = list(range(ndim)), list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _check_n(n)
    return shape, dims


def _c2r_shape_and_dims(name, x, s, dim):
    """canonicalize_fft_c2r_shape_and_dim_args: the last dim's output size, and its input's."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = shape[-1] if s is not None and s[-1] != -1 else 2 * (x.shape[dims[-1]] - 1)
    _check_n(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


def _fftn(f, x, s, dim, norm, forward):
    shape, dims = _shape_and_dims(x, s, dim)
    x = f.resize(f.promote(x, True), dims, shape)
    return f.c2c(x, dims, _norm(norm, forward), forward)


def _rfftn(f, x, s, dim, norm):
    if x.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {x.dtype.ir_name}")
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = f.resize(f.promote(x), dims, shape)
    return f.r2c(x, dims, _norm(norm, True), True)


def _irfftn(f, x, s, dim, norm):
    shape, dims, last = _c2r_shape_and_dims("irfftn", x, s, dim)
    x = f.resize(f.promote(x, True), dims, shape)
    return f.c2r(x, dims, _norm(norm, False), last)


def _hfftn(f, x, s, dim, norm):
    shape, dims, last = _c2r_shape_and_dims("hfftn", x, s, dim)
    x = f.resize(f.promote(x, True), dims, shape)
    mode = _norm(norm, True)
    if len(dims) > 1:
        x = f.c2c(x, dims[:-1], mode, True)
    return f.c2r(f.conj(x), [dims[-1]], mode, last)


def _ihfftn(f, x, s, dim, norm):
    if x.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {x.dtype.ir_name}")
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = f.resize(f.promote(x), dims, shape)
    mode = _norm(norm, False)
    tmp = f.r2c(x, [dims[-1]], mode, True)
    if len(dims) == 1:
        return f.conj(tmp)
    return f.c2c(f.conj(tmp), dims[:-1], mode, False)


# -- the ops: one front-end function each, run on the kernels (eager) or the ops (autograd) ------

_ONE_D = "(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor"
_TWO_D = "(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor"
_N_D = "(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"
_FN = ("function",)

_ONE_D_OPS = {
    "fft": lambda f, x, n, d, m: _c2c(f, x, n, d, m, True) if x.dtype.is_complex
    else _r2c(f, "fft", x, n, d, m, True, False),
    "ifft": lambda f, x, n, d, m: _c2c(f, x, n, d, m, False) if x.dtype.is_complex
    else _r2c(f, "ifft", x, n, d, m, False, False),
    "rfft": lambda f, x, n, d, m: _r2c(f, "rfft", x, n, d, m, True, True),
    "irfft": lambda f, x, n, d, m: _c2r(f, "irfft", x, n, d, m, False),
    "hfft": lambda f, x, n, d, m: _c2r(f, "hfft", x, n, d, m, True),
    "ihfft": lambda f, x, n, d, m: _r2c(f, "ihfft", x, n, d, m, False, True),
}
_N_D_OPS = {
    "fft": lambda f, x, s, d, m: _fftn(f, x, s, d, m, True),
    "ifft": lambda f, x, s, d, m: _fftn(f, x, s, d, m, False),
    "rfft": _rfftn, "irfft": _irfftn, "hfft": _hfftn, "ihfft": _ihfftn,
}


def _register(name, schema, body):
    def kernel(self, a, dim, norm):
        return body(_EAGER, self, a, dim, norm)
    kernel.__name__ = name
    registered = op(name + schema, variants=_FN)(kernel)

    def decomposition(self, a, dim, norm):
        return body(_RECORDED, self, a, dim, norm)
    composite(registered)(decomposition)
    return registered


for _name, _body in _ONE_D_OPS.items():
    globals()["fft_" + _name] = _register("fft_" + _name, _ONE_D, _body)
for _name, _body in _N_D_OPS.items():
    globals()[f"fft_{_name}2"] = _register(f"fft_{_name}2", _TWO_D, _body)
    globals()[f"fft_{_name}n"] = _register(f"fft_{_name}n", _N_D, _body)


# -- fftshift / ifftshift: roll by half of each dim (CompositeImplicit) ---------------------------

def _shift(self, dim, inverse):
    dims = list(range(self.ndim)) if dim is None else [_wrap_dim(d, self.ndim) for d in dim]
    shifts = [(self.shape[d] + inverse) // 2 for d in dims]
    return dims, shifts


@op("fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor", variants=_FN)
def fft_fftshift(self, dim):
    from .shape_extra import roll
    dims, shifts = _shift(self, dim, 0)
    return roll.kernel(self, shifts, dims)


@composite(fft_fftshift)
def _fftshift_composite(self, dim):
    dims, shifts = _shift(self, dim, 0)
    return self.roll(shifts, dims)


@op("fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor", variants=_FN)
def fft_ifftshift(self, dim):
    from .shape_extra import roll
    dims, shifts = _shift(self, dim, 1)
    return roll.kernel(self, shifts, dims)


@composite(fft_ifftshift)
def _ifftshift_composite(self, dim):
    dims, shifts = _shift(self, dim, 1)
    return self.roll(shifts, dims)


# -- fftfreq / rfftfreq: sample frequencies (factories) -------------------------------------------

_FREQ = ("(int n, float d=1.0, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
         "bool? pin_memory=None) -> Tensor")


def _frequencies(name, index, n, d, dtype, device):
    """arange, then ``mul_(1.0 / (n * d))`` in the result dtype (torch's order of rounding)."""
    from .._tensor import _fresh
    from .creation import _xp_device
    dtype = dtype or D.get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if dtype.is_complex:  # (torch's arange has no complex kernel)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dtype.ir_name}'")
    device, xp = _xp_device(device)
    values = xp.asarray(index, dtype=dtype.np) * dtype.np.type(1.0 / (n * d))
    return _fresh(values.astype(dtype.np, copy=False), dtype, device)


@op("fft_fftfreq" + _FREQ, variants=_FN, differentiable=False)
def fft_fftfreq(n, d, dtype, layout, device, pin_memory):
    index = np.arange(n)
    index[(n + 1) // 2:] = np.arange(-(n // 2), 0)  # the negative frequencies, in order
    return _frequencies("fftfreq", index, n, d, dtype, device)


@op("fft_rfftfreq" + _FREQ, variants=_FN, differentiable=False)
def fft_rfftfreq(n, d, dtype, layout, device, pin_memory):
    return _frequencies("rfftfreq", np.arange(n // 2 + 1), n, d, dtype, device)
