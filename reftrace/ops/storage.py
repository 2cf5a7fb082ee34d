"""set_: a tensor takes another tensor's storage, sizes and strides (TensorShape.cpp set_); resize_
and resize_as_ (Resize.cpp): new sizes over the same storage, grown when too small.

Afterwards both share data: a write through either is seen by the other, as in torch. The tensor
keeps its identity (so a Parameter stays the module's Parameter), which is why
torch.nn.utils.parametrize uses it to store a new value into an existing parameter.

reftrace's storage is the data of a tensor's root (``_base``, or the tensor itself). resize_ lays
the new sizes contiguously (or in the memory format asked) from the tensor's storage offset; when
they need more elements than the storage has, the storage grows, keeping its data, and the root
moves to the grown storage as torch's StorageImpl does. Two differences from torch, both about
storage that is never read: a storage does not keep its size when its root shrinks, and other
views of a grown storage keep the old data rather than following it.
"""
import numpy as np

from .._device import channels_last, preserve_format
from .._tensor import contiguous_strides, xp_of
from ._registry import op
from .casts import _channels_last_strides, suggest_memory_format
from .arithmetic import TYPE_META_NAMES as _CPP_TYPES


@op("set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)", variants=("method",),
    differentiable=False)
def set_(self, source):
    if source.dtype is not self.dtype:
        raise RuntimeError(f"Could not set tensor of type {_CPP_TYPES[source.dtype]} to a tensor "
                           f"of type {_CPP_TYPES[self.dtype]}")
    self._array, self._stride = source._array, source._stride
    self._version += 1
    return self


def _flat_storage(root):
    """The root's data as a flat array of elements (its lowest address first)."""
    a = root._array
    xp = xp_of(root)
    return xp.lib.stride_tricks.as_strided(a, shape=(a.size,), strides=(a.itemsize,))


def _restride(self, size, strides):
    """self: ``size`` with element ``strides`` from its storage offset, the storage grown to fit."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(n < 0 for n in size):
        raise RuntimeError("numel: integer multiplication overflow")
    xp = xp_of(self)
    root = self._base if self._base is not None else self
    offset = self.storage_offset()
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, strides))
    flat = _flat_storage(root)
    if needed > flat.shape[0]:
        grown = xp.empty(needed, dtype=flat.dtype)  # (torch leaves the new elements uninitialised)
        grown[:flat.shape[0]] = flat
        if root is not self:
            root._array = xp.lib.stride_tricks.as_strided(grown, shape=root._array.shape,
                                                          strides=root._array.strides)
        flat = grown
    item = flat.itemsize
    start = flat[offset:] if offset < flat.shape[0] else flat[:0]
    self._array = xp.lib.stride_tricks.as_strided(start, shape=tuple(size),
                                                  strides=tuple(s * item for s in strides))
    self._stride = None if tuple(strides) == contiguous_strides(tuple(size)) else tuple(strides)
    self._version += 1
    return self


def _format_strides(size, memory_format):
    if memory_format is None or memory_format.name == "contiguous_format":
        return contiguous_strides(tuple(size))
    if memory_format is preserve_format:
        raise RuntimeError("Unsupported memory formatPreserve")
    return _channels_last_strides(tuple(size), 4 if memory_format is channels_last else 5)


@op("resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
    variants=("method",), differentiable=False)
def resize_(self, size, memory_format):
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if tuple(size) == self.shape_tuple and memory_format is None:
        return self  # the same sizes: nothing changes, strides included
    return _restride(self, size, _format_strides(size, memory_format))


@op("resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
    variants=("function", "method"), differentiable=False)
def resize_as_(self, the_template, memory_format):
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    size = the_template.shape_tuple
    if memory_format is preserve_format:
        memory_format = suggest_memory_format(the_template)
    if size == self.shape_tuple and memory_format is None:
        return self
    return _restride(self, size, _format_strides(size, memory_format))
