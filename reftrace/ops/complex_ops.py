"""Complex tensors: conjugate views, the real and imaginary views, and the complex constructors.

torch's sources: ``_conj``, ``resolve_conj``, ``conj_physical`` (UnaryOps.cpp),
``real``/``imag``/``view_as_real``/``view_as_complex`` (TensorShape.cpp, ComplexHelper.h),
``angle``, ``isreal`` (UnaryOps.cpp, TensorCompare.cpp), ``complex``/``polar``
(TensorFactories.cpp). The conjugate and negative bits are reftrace/_math_bits.py's: the ops here
read and set them, so they are ``bits_aware`` (their kernels see a conjugate view as it is).

NumPy gives exactly torch's views: ``a.real``/``a.imag`` are views of the same memory with twice
the element strides (the imaginary part one element further), and a float array's ``(..., 2)``
pairs reinterpreted as complex (``view_as_complex``) halve them again.
"""
import math

import numpy as np

from .. import _dtype as D
from .._math_bits import CONJ, NEG, materialize, set_bits
from .._tensor import _fresh, _view_of, xp_of
from ..autograd._view_func import as_strided_to, chain, replay, steps
from ._iter import broadcast_shapes, like_result, pointwise_result, strides_for, wrap_strided
from ._pointwise_helpers import as_np, float_of, unary
from ._registry import composite, derivatives, op


def _aware(*overloads):
    for ov in overloads:
        ov.bits_aware = "own"


def _as_strided(xp, a, shape, strides_bytes):
    return xp.lib.stride_tricks.as_strided(a, shape=tuple(shape), strides=tuple(strides_bytes))


def _no_complex32(what):
    raise NotImplementedError(
        f"reftrace: {what} would be a complex32 (ComplexHalf) tensor, which reftrace does not "
        f"have (NumPy has no complex32 dtype); convert the half tensor to float first")


# -- the conjugate view ------------------------------------------------------------------------------

@op("_conj(Tensor(a) self) -> Tensor(a)", variants=("function", "method"))
def _conj(self):
    if not self.dtype.is_complex:
        return self
    return chain(self, set_bits(_view_of(self, self._array[...], self.stride()), self._mbits ^ CONJ),
                 replay("aten::_conj"))


derivatives(_conj, {"self": "grad.conj()"})


def conj(input):
    """torch.conj: ``input.conj()`` (a conjugate view of a complex tensor, recorded as
    ``aten::_conj``; a real tensor itself)."""
    return input.conj()


def _resolve(self, bit):
    """Itself when ``bit`` is not set (torch calls resolve_conj/neg where values leave a tensor:
    tolist, numpy, so a trace records them there); else a plain copy of its values (torch's
    clone resolves every bit)."""
    if not self._mbits & bit:
        return self
    return materialize(self, carry_grad=False)


@op("resolve_conj(Tensor(a) self) -> Tensor(a)", variants=("function", "method"))
def resolve_conj(self):
    return _resolve(self, CONJ)


@composite(resolve_conj)
def _resolve_conj_composite(self):
    return self.clone() if self.is_conj() else self  # (CloneBackward0, as torch's)


@op("resolve_neg(Tensor(a) self) -> Tensor(a)", variants=("function", "method"))
def resolve_neg(self):
    return _resolve(self, NEG)


@composite(resolve_neg)
def _resolve_neg_composite(self):
    return self.clone() if self.is_neg() else self


@op("_neg_view(Tensor(a) self) -> Tensor(a)", variants=("function", "method"))
def _neg_view(self):
    return chain(self, set_bits(_view_of(self, self._array[...], self.stride()), self._mbits ^ NEG),
                 replay("aten::_neg_view"))


derivatives(_neg_view, {"self": "grad.neg()"})


@op("conj_physical(Tensor self) -> Tensor", variants=("function", "method"))
def conj_physical(self):
    if not self.dtype.is_complex:
        return self
    # _conj_physical writes into at::empty_like(self): self's strides kept when dense (an empty
    # tensor's too, whatever they are), not TensorIterator's
    return like_result(xp_of(self).conjugate(self._array), self.dtype, self.device, self)


derivatives(conj_physical, {"self": "grad.conj_physical()"})


@op("conj_physical_(Tensor(a!) self) -> Tensor(a!)", variants=("function", "method"))
def conj_physical_(self):
    if self.dtype.is_complex:
        xp_of(self).conjugate(self._array, out=self._array)
        self._version += 1
    return self


derivatives(conj_physical_, {"self": "grad.conj_physical()"})


_aware(_conj, resolve_conj, resolve_neg, _neg_view)


# -- real and imaginary views -----------------------------------------------------------------------

def _real_strides(self):
    return [2 * s for s in self.stride()]


@op("view_as_real(Tensor(a) self) -> Tensor(a)", variants=("function",))
def view_as_real(self):
    if self._mbits & CONJ:
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
            "tensor so you can view it as real, use self.resolve_conj(); however, be warned that "
            "the resulting tensor will NOT alias the original.")
    if not self.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    re = self._array.real
    arr = _as_strided(xp_of(self), re, re.shape + (2,), re.strides + (re.itemsize,))
    return chain(self, _view_of(self, arr, _real_strides(self) + [1], self.dtype.to_real()),
                 replay("aten::view_as_real"))


derivatives(view_as_real, {"self": "view_as_complex(grad.contiguous())"})


@op("view_as_complex(Tensor(a) self) -> Tensor(a)", variants=("function",))
def view_as_complex(self):
    dt = self.dtype
    if dt not in (D.float32, D.float64, D.float16):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, "
                           f"but got a tensor of scalar type: {dt.ir_name}")
    a = self._array
    if a.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = self.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if dt is D.float16:
        _no_complex32("view_as_complex of a half tensor")
    cdt = dt.to_complex()
    xp = xp_of(self)
    shape = a.shape[:-1]
    if a.size == 0:  # (no element to start the view from: an empty view of the same memory)
        arr = xp.empty(shape, dtype=cdt.np)
    else:
        first = a[(0,) * (a.ndim - 1)].view(cdt.np)  # the first pair, read as one complex number
        arr = _as_strided(xp, first.reshape(()), shape, [s * a.itemsize for s in strides[:-1]])
    return chain(self, set_bits(_view_of(self, arr, [s // 2 for s in strides[:-1]], cdt), 0),
                 replay("aten::view_as_complex"))


derivatives(view_as_complex, {"self": "view_as_real(grad.contiguous().resolve_conj())"})


def _part_replay(self, t, negated):
    """The real or imaginary view ``t`` of ``self`` replays as torch's composite makes it (below):
    [_conj,] view_as_real[, _neg_view], then the select, which as_strided redoes."""
    own = [replay("aten::view_as_real"), as_strided_to(t)]
    if negated:
        own.insert(1, replay("aten::_neg_view"))
    if self.is_conj():
        own.insert(0, replay("aten::_conj"))
    return chain(self, t, steps(*own))


@op("real(Tensor(a) self) -> Tensor(a)", variants=("function",))
def real(self):
    if not self.dtype.is_complex:
        return self
    t = set_bits(_view_of(self, self._array.real, _real_strides(self), self.dtype.to_real()),
                 self._mbits & NEG)
    return _part_replay(self, t, negated=False)


@composite(real)  # CompositeImplicitAutograd: SelectBackward0 of ViewAsRealBackward0
def _real_composite(self):
    if not self.is_complex():
        return self
    r = view_as_real(self._conj() if self.is_conj() else self)
    return r.select(r.dim() - 1, 0)


@op("imag(Tensor(a) self) -> Tensor(a)", variants=("function",))
def imag(self):
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    # the imaginary part of a conjugate view is the negated stored one: a negative view
    bits = (self._mbits & NEG) ^ (NEG if self._mbits & CONJ else 0)
    t = set_bits(_view_of(self, self._array.imag, _real_strides(self), self.dtype.to_real()), bits)
    return _part_replay(self, t, negated=self.is_conj())


@composite(imag)
def _imag_composite(self):
    if not self.is_complex():
        imag.kernel(self)  # (its error)
    if self.is_conj():
        r = view_as_real(self._conj())._neg_view()
    else:
        r = view_as_real(self)
    return r.select(r.dim() - 1, 1)


_aware(view_as_real, view_as_complex, real, imag)


# -- complex numbers from real ones, and back ---------------------------------------------------------

@op("angle(Tensor self) -> Tensor", variants=("function", "method"))
def angle(self):
    xp = xp_of(self)
    if self.dtype.is_complex:  # (torch's complex angle is contiguous, whatever the input's layout)
        return _fresh(xp.ascontiguousarray(xp.angle(self._array)), self.dtype.to_real(), self.device)

    def real_angle(x):  # pi for negatives, 0 otherwise, NaN kept (torch's angle_impl)
        return xp.where(xp.isnan(x), x, xp.where(x < 0, x.dtype.type(math.pi), x.dtype.type(0)))
    return unary(self, real_angle, compute=float_of)


derivatives(angle, {"self": "angle_backward(grad, self)"})


@op("isreal(Tensor self) -> Tensor", variants=("function", "method"))
def isreal(self):
    xp = xp_of(self)
    if not self.dtype.is_complex:  # at::ones_like(self, kBool): empty_like's layout
        return like_result(xp.ones(self._array.shape, dtype=np.bool_), D.bool, self.device, self)
    # torch: ``at::imag(self) == 0``, a TensorIterator over the imaginary view (twice self's
    # strides) and a 0-dim scalar (so never its same-shape fast path: an empty input's result
    # gets TensorIterator's own size-0-multiplied strides)
    shape = self._array.shape
    strides = strides_for(shape, [(shape, tuple(_real_strides(self))), ((), ())])
    return wrap_strided(self._array.imag == 0, D.bool, self.device, strides)


def _complex_inputs(a, b, name_a, name_b):
    ok = (D.float16, D.float32, D.float64)
    if a.dtype not in ok or b.dtype not in ok:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{a.dtype.ir_name} and {b.dtype.ir_name}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {a.dtype.ir_name} but got scalar "
                           f"type {b.dtype.ir_name} for second argument")
    if a.dtype is D.float16:
        _no_complex32("complex of half tensors")
    shape = broadcast_shapes(a._array.shape, b._array.shape)
    return a.dtype.to_complex(), shape


@op("complex(Tensor real, Tensor imag) -> Tensor", variants=("function",))
def complex(real, imag):
    cdt, shape = _complex_inputs(real, imag, "real", "imag")
    xp = xp_of(real)
    out = xp.empty(shape, dtype=cdt.np)
    out.real, out.imag = real._array, imag._array
    return pointwise_result(out, cdt, real.device, (real, imag))


derivatives(complex, {"real": "grad.real", "imag": "grad.imag"})


@op("polar(Tensor abs, Tensor angle) -> Tensor", variants=("function",))
def polar(abs, angle):
    cdt, shape = _complex_inputs(abs, angle, "abs", "angle")
    xp = xp_of(abs)
    r, t = abs._array, angle._array
    out = xp.empty(shape, dtype=cdt.np)
    out.real, out.imag = r * xp.cos(t), r * xp.sin(t)
    return pointwise_result(out, cdt, abs.device, (abs, angle))


derivatives(polar, {"abs, angle": "polar_backward(grad, result)"})
