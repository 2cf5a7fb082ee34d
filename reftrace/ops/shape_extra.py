"""roll, broadcast_to and _chunk_cat (ATen/native/TensorTransformations.cpp, TensorShape.cpp)."""
from .._tensor import _fresh, _wrap_dim, xp_of
from ._registry import composite, derivatives, op
from .shape import expand_to


@op("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", variants=("function", "method"))
def roll(self, shifts, dims):
    a = self._array
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:  # no dims: roll the flattened tensor, keep the shape
        out = xp_of(self).roll(a.reshape(-1), shifts[0]).reshape(a.shape)
        return _fresh(out, self.dtype, self.device)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    axes = [_wrap_dim(d, a.ndim) for d in dims]
    return _fresh(xp_of(self).roll(a, shifts, axes), self.dtype, self.device)


derivatives(roll, {"self": "grad.roll([-i for i in reverse_list_symint(shifts)], reverse_list(dims))"})


@op("broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)", variants=("function", "method"))
def broadcast_to(self, size):
    return expand_to(self, size)  # CompositeImplicit: self.expand(size)


@composite(broadcast_to)  # CompositeImplicit in torch: self.expand(size) (ExpandBackward0)
def _broadcast_to_composite(self, size):
    return self.expand(size)


def _chunk_cat_dim(tensors, dim, num_chunks):
    """TensorShape.cpp's _chunk_cat input checks, in its order and words; the wrapped dim."""
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    for t in tensors:
        if t.numel() == 0:
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("_chunk_cat expects all input tensors with the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("_chunk_cat expects all inputs tensors on the same device")
    if all(t.ndim == tensors[0].ndim for t in tensors):
        dim = _wrap_dim(dim, tensors[0].ndim)
    else:
        if dim < 0:
            raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have "
                               "different ndims")
        if any(dim >= t.ndim for t in tensors):
            raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
    if any(t.shape_tuple[:dim] != tensors[0].shape_tuple[:dim] for t in tensors):
        raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors")
    return dim


@op("_chunk_cat(Tensor[] tensors, int dim, int num_chunks) -> Tensor")
def _chunk_cat(tensors, dim, num_chunks):
    """Each tensor is cut into num_chunks equal chunks along dim (zero-padded at the end up to a
    multiple of num_chunks), each chunk flattened; chunk i of every tensor, in order, makes row i
    of the result: shape sizes[:dim] + [num_chunks, sum of the flattened chunk sizes]."""
    dim = _chunk_cat_dim(tensors, dim, num_chunks)
    xp = xp_of(tensors[0])
    rows = []
    for t in tensors:
        a, size = t._array, t.shape_tuple[dim]
        padded = -(-size // num_chunks) * num_chunks
        if padded != size:
            pad = [(0, 0)] * a.ndim
            pad[dim] = (0, padded - size)
            a = xp.pad(a, pad)
        rows.append(a.reshape(t.shape_tuple[:dim] + (num_chunks, -1)))
    return _fresh(xp.ascontiguousarray(xp.concatenate(rows, axis=dim + 1)), tensors[0].dtype,
                  tensors[0].device)
