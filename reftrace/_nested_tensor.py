"""NestedTensor: ATen's NestedTensorImpl (NestedTensorImpl.cpp), for the one place torch's nn
layers make one.

torch's ``TransformerEncoder`` in eval mode without grad, given a left-aligned
``src_key_padding_mask`` (spec SEQ-8), packs the real rows of its batch into a nested tensor,
runs every layer's ``aten::_transformer_encoder_layer_fwd`` on it and pads the result back. Like
torch's, a nested tensor here is a contiguous buffer holding each sequence's ``[len_i, d]`` rows
one after another, and the ``(N, 2)`` nested sizes ``[[len_i, d], ...]``.

reftrace implements that path and nothing more: the ops ``_nested_tensor_from_mask`` and
``to_padded_tensor`` (ops/nested_ops.py) and ``_transformer_encoder_layer_fwd`` on nested input
(ops/nested_transformer.py), and the metadata torch's Python code reads on the way (``dim()``,
``is_nested``, ``dtype``, ``device``, ``requires_grad``, ``size(d)`` of a regular dimension,
``numel()``, ``repr``). A nested tensor has no dense array: reading its ``_array`` (what every
dense kernel does) raises NotImplementedError, so no kernel ever takes the packed buffer for the
tensor, and any other use of a nested tensor is a clear error.
"""
import numpy as np

from ._frames import warn_at_caller
from ._tensor import Tensor, _fresh, _new, _wrap_dim

UNSUPPORTED = (
    "reftrace's nested tensors support only what torch's TransformerEncoder does with them "
    "(aten::_transformer_encoder_layer_fwd and to_padded_tensor); convert this one to a dense "
    "tensor with .to_padded_tensor(padding) first")

_PROTOTYPE_WARNING = (
    "The PyTorch API of nested tensors is in prototype stage and will change in the near future. "
    "We recommend specifying layout=torch.jagged when constructing a nested tensor, as this layout "
    "receives active development, has better operator coverage, and works with torch.compile.")
_WARNED = []


class NestedTensor(Tensor):
    """A batch of ``[len_i, d]`` sequences packed in one buffer (see the module's docstring)."""
    __slots__ = ("_buffer", "_nested_sizes")
    is_nested = True

    @property
    def _array(self):  # (shadows Tensor's slot: no dense kernel gets past this)
        raise NotImplementedError(UNSUPPORTED)

    # -- what torch's Python code reads of a nested tensor -----------------------------------------
    def dim(self):
        return self._nested_sizes.shape[1] + 1

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def size(self, dim=None):
        if dim is None:
            _no_sizes()
        d = _wrap_dim(dim, self.dim())
        if d == 0:
            return self._nested_sizes.shape[0]
        column = self._nested_sizes[:, d - 1]
        if column.size and (column == column[0]).all():
            return int(column[0])
        raise RuntimeError(f"Given dimension {d} is irregular and does not have a size.")

    @property
    def shape(self):
        _no_sizes()

    @property
    def shape_tuple(self):
        _no_sizes()

    def stride(self, dim=None):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support strides. Please file "
                           "an issue.")

    def numel(self):
        return int(self._buffer.size)

    nelement = numel

    def is_contiguous(self, memory_format=None):
        return True  # (the packed buffer: NestedTensorImpl's contiguity)

    def __repr__(self):
        parts = ",\n".join("\n".join("  " + line for line in repr(t).split("\n"))
                           for t in components(self))
        return f"nested_tensor([\n{parts}\n])"

    __str__ = __repr__


def _no_sizes():
    raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please file an "
                       "issue.")


def wrap_buffer(buffer, nested_sizes, dtype, device):
    """NestedTensorImpl(buffer, nested_sizes): ``buffer`` a contiguous 1-D array of the rows,
    ``nested_sizes`` an (N, 2) int64 array. The first one a process makes warns, as torch's
    constructor does (TORCH_WARN_ONCE)."""
    if not _WARNED:
        _WARNED.append(True)
        warn_at_caller(_PROTOTYPE_WARNING)
    t = _new(NestedTensor)  # (_init's fields, less the dense array)
    t.dtype, t.device, t.requires_grad = dtype, device, False
    t._stride = t._base = t._tv = t._grad = None
    t._wrapped = False
    t._vc = [0]
    t._buffer = buffer
    t._nested_sizes = nested_sizes
    return t


def offsets(nt):
    """Where each sequence starts in the buffer, and where the last ends (N + 1 element offsets)."""
    return np.concatenate([[0], np.cumsum(np.prod(nt._nested_sizes, axis=1))])


def components(nt):
    """The sequences as dense tensors (copies): torch's unbind of a nested tensor."""
    starts = offsets(nt)
    return [_fresh(nt._buffer[starts[i]:starts[i + 1]].reshape(tuple(s)).copy(), nt.dtype, nt.device)
            for i, s in enumerate(nt._nested_sizes)]
