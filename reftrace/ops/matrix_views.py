"""The transposing properties as the ATen ops torch records for them (TensorShape.cpp):
``x.T`` -> aten::numpy_T, ``x.mT`` -> aten::mT, ``x.H`` -> aten::matrix_H, ``x.mH`` -> aten::mH.
Python has them only as properties (native_functions.yaml's variants say method, but torch's
Tensor exposes them as attributes), hence no generated methods. Each is one node in a trace, so the trace generalises to other ranks as torch's does.

The Hermitian ones of a complex tensor are conjugate views (reftrace/_math_bits.py) of the
transpose: torch's autograd sees them as ConjBackward0 of TransposeBackward0.
"""
import warnings

from .._math_bits import CONJ, set_bits
from .._tensor import _view_of
from ._registry import composite, op
from .shape import _transposed


def _reversed(self):
    a = self._array
    return a.transpose(), list(reversed(self.stride()))


def _hermitian(self, view):
    """The transposed view, conjugated (a conjugate view) when complex."""
    return set_bits(view, view._mbits ^ CONJ) if self.dtype.is_complex else view


def _matrix_check(self, name, hint):
    n = self._array.ndim
    if n not in (0, 2):  # (a 0-dim tensor is its own transpose)
        raise RuntimeError(f"tensor.{name} is only supported on matrices (2-D tensors). Got "
                           f"{n}-D tensor.{hint if n > 2 else ''}")


def _batch_check(self, name):
    if self._array.ndim == 1:  # (a 0-dim tensor is its own transpose)
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                           f"Got {self._array.ndim}-D tensor.")


@op("numpy_T(Tensor(a) self) -> Tensor(a)", variants=())
def numpy_T(self):
    n = self._array.ndim
    if n not in (0, 2):
        warnings.warn(
            f"The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            f"deprecated and it will throw an error in a future release. Consider `x.mT` to "
            f"transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            f"reverse the dimensions of a tensor.", UserWarning, stacklevel=3)
    return _view_of(self, *_reversed(self))


@composite(numpy_T)  # CompositeImplicit in torch: a permute (PermuteBackward0)
def _numpy_T_composite(self):
    numpy_T.kernel(self)  # its checks and warning
    return self.permute(list(range(self.ndim - 1, -1, -1)))


@op("matrix_H(Tensor(a) self) -> Tensor(a)", variants=())
def matrix_H(self):
    _matrix_check(self, "H", " For batches of matrices, consider using tensor.mH")
    return _hermitian(self, _view_of(self, *_transposed(self, 0, -1)))


@composite(matrix_H)  # CompositeImplicit in torch: a transpose (TransposeBackward0)
def _matrix_H_composite(self):
    matrix_H.kernel(self)
    return self.transpose(0, -1).conj()


@op("mT(Tensor(a) self) -> Tensor(a)", variants=())
def mT(self):
    _batch_check(self, "mT")
    return _view_of(self, *_transposed(self, 0, -1) if self._array.ndim == 0 else _transposed(self, -2, -1))


@composite(mT)  # CompositeImplicit in torch: a transpose (TransposeBackward0)
def _mT_composite(self):
    mT.kernel(self)
    return self.transpose(0, -1) if self.ndim == 0 else self.transpose(-2, -1)


@op("mH(Tensor(a) self) -> Tensor(a)", variants=())
def mH(self):
    _batch_check(self, "mH")
    return _hermitian(self, _view_of(
        self, *_transposed(self, 0, -1) if self._array.ndim == 0 else _transposed(self, -2, -1)))


@composite(mH)  # CompositeImplicit in torch: a transpose (TransposeBackward0)
def _mH_composite(self):
    mH.kernel(self)
    return (self.transpose(0, -1) if self.ndim == 0 else self.transpose(-2, -1)).conj()


def adjoint(input):
    """torch.adjoint: ``input.mH`` (torch records it as aten::mH)."""
    return input.mH
