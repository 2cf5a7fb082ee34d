"""Nested tensors in and out: _nested_tensor_from_mask (NestedTensorFactories.cpp /
NestedTensorMath.cpp NestedTensor_nested_tensor_from_mask) and to_padded_tensor
(NestedTensor_to_padded_tensor_generic), the two ends of TransformerEncoder's nested path
(reftrace/_nested_tensor.py). Both are copies: their values are exact.

As in torch, ``_nested_tensor_from_mask`` is a (private) function and ``to_padded_tensor`` a
method, which dense tensors refuse.
"""
import numpy as np

from .. import _dtype as D
from .._nested_tensor import offsets, wrap_buffer
from .._tensor import _fresh
from ._registry import op
from .casts import checked_scalar


@op("_nested_tensor_from_mask(Tensor t, Tensor mask, bool mask_check=True) -> Tensor")
def _nested_tensor_from_mask(t, mask, mask_check):
    """Sequence i is the first ``mask[i].sum()`` rows of ``t[i]`` (``mask``: True = a real token),
    which with ``mask_check`` must be exactly the rows the mask marks (left-aligned)."""
    if mask.dtype is not D.bool:
        raise RuntimeError(f"Expected mask to be of ScalarType Bool, but got {mask.dtype.ir_name} "
                           "instead.")
    if mask.dim() != 2:
        raise RuntimeError("Padding mask should be 2D")
    if t.dim() != 3:
        raise RuntimeError("Input should be a 3D tensor, N * L * D")
    N, L, d = t.shape_tuple
    if mask.shape_tuple != (N, L):
        raise RuntimeError("Mask size should match input size")
    m = mask._array
    if L == 0:  # (cumsum(1).select(1, L - 1) on an empty dimension)
        raise IndexError(f"select(): index -1 out of range for tensor of size [{N}, 0] at "
                         "dimension 1")
    lengths = m.sum(axis=1, dtype=np.int64)
    if mask_check:
        # argmin of the row with a False appended: the first padding position
        first_pad = np.argmin(np.concatenate([m, np.zeros((N, 1), bool)], axis=1), axis=1)
        if not (first_pad == lengths).all():
            raise RuntimeError("Mask must be left-aligned without gaps")
    if N == 0:  # (nested_from_padded stacks one mask per sequence)
        raise RuntimeError("stack expects a non-empty TensorList")
    sizes = np.stack([lengths, np.full(N, d, np.int64)], axis=1)
    return wrap_buffer(pack_rows(t._array, lengths).reshape(-1), sizes, t.dtype, t.device)


def pack_rows(padded, lengths):
    """The first ``lengths[i]`` rows of each ``padded[i]``, one after another (a new contiguous
    array): _nested_from_padded's buffer."""
    return np.ascontiguousarray(np.concatenate([padded[i, :n] for i, n in enumerate(lengths)]))


def pad_rows(rows, lengths, padded):
    """pack_rows undone: the packed ``rows`` written into ``padded``, sequence by sequence."""
    start = 0
    for i, n in enumerate(lengths):
        padded[i, :n] = rows[start:start + n]
        start += n
    return padded


@op("to_padded_tensor(Tensor self, float padding, SymInt[]? output_size=None) -> Tensor",
    variants=("method",))
def to_padded_tensor(self, padding, output_size):
    """Each sequence padded with ``padding`` to the longest (per dimension), stacked; then padded
    to ``output_size`` when given (which may grow any dimension, never shrink one)."""
    if not self.is_nested:
        raise NotImplementedError(
            f"Could not run 'aten::to_padded_tensor' with arguments from the "
            f"'{self.device.type.upper()}' backend: to_padded_tensor is implemented for nested "
            "tensors only")
    sizes, buffer = self._nested_sizes, self._buffer
    if sizes.size == 0:
        return _fresh(buffer.copy(), self.dtype, self.device)
    if buffer.size == 0:
        raise RuntimeError("to_padded_tensor: at least one constituent tensor should have non-zero "
                           "numel")
    padded = (sizes.shape[0],) + tuple(int(s) for s in sizes.max(axis=0))
    if output_size is not None:
        if len(output_size) != len(padded):
            raise RuntimeError("Length of output_size does not match NestedTensor dims. "
                               "Broadcasting is not supported.")
        if any(o < p for o, p in zip(output_size, padded)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                               "Truncation is not supported.")
        padded = tuple(output_size)
    out = np.full(padded, checked_scalar(padding, self.dtype), self.dtype.np)
    starts = offsets(self)
    for i, shape in enumerate(sizes):
        region = tuple(slice(0, int(s)) for s in shape)
        out[(i,) + region] = buffer[starts[i]:starts[i + 1]].reshape(tuple(shape))
    return _fresh(out, self.dtype, self.device)
