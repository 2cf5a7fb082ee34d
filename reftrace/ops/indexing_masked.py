"""_unsafe_masked_index and _unsafe_masked_index_put_accumulate (TensorAdvancedIndexing.cpp):
the gathers and scatters of upsampling decompositions, where a mask says which indices are real.

    _unsafe_masked_index(self, mask, indices, fill)  ==  where(mask, self[indices], fill)
    _unsafe_masked_index_put_accumulate(self, mask, indices, values)
        ==  self.index_put(indices, values.where(mask, 0), accumulate=True)

except that an index is never looked up where the mask is False, so it may be out of bounds
there: ATen clamps every index into [-size, size - 1] first.
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, xp_of
from ._registry import derivatives, op
from .indexing import index, index_put


def _clamped(self, indices, name):
    out = []
    for idx, size in zip(indices, self.shape_tuple):
        if idx is None:
            out.append(None)
            continue
        if idx.dtype not in (D.int64, D.int32):  # (bool masks are refused)
            raise RuntimeError(f"{name} found unexpected index type {idx.dtype.ir_name}")
        out.append(_fresh(xp_of(idx).clip(idx._array, -size, size - 1), idx.dtype, idx.device))
    return out


@op("_unsafe_masked_index(Tensor self, Tensor mask, Tensor?[] indices, Scalar fill) -> Tensor")
def _unsafe_masked_index(self, mask, indices, fill):
    xp = xp_of(self)
    clamped = _clamped(self, indices, "_unsafe_masked_index")
    if self.numel() == 0:
        # nothing to gather from: index a tensor of `fill` whose indexed empty dims are 1s
        # (ATen's own workaround), so the result has the indexing's shape
        sizes = tuple(1 if idx is not None and s == 0 else s
                      for idx, s in zip(indices, self.shape_tuple)) + self.shape_tuple[len(indices):]
        source = _fresh(xp.full(sizes, fill, dtype=self.dtype.np), self.dtype, self.device)
        return index.kernel(source, clamped)
    result = index.kernel(self, clamped)
    a = result._array
    keep = xp.broadcast_to(mask._array, a.shape)
    return _fresh(xp.ascontiguousarray(xp.where(keep, a, np.asarray(fill).astype(a.dtype))),
                  result.dtype, result.device)


derivatives(_unsafe_masked_index, {
    "self": "_unsafe_masked_index_put_accumulate(grad.new_zeros(self.shape), mask, indices, grad)",
    "mask": "non_differentiable"})


@op("_unsafe_masked_index_put_accumulate(Tensor self, Tensor mask, Tensor?[] indices, "
    "Tensor values) -> Tensor")
def _unsafe_masked_index_put_accumulate(self, mask, indices, values):
    xp = xp_of(values)
    clamped = _clamped(self, indices, "_unsafe_masked_index_put_accumulate")
    masked = _fresh(xp.ascontiguousarray(xp.where(mask._array, values._array,
                                                  values._array.dtype.type(0))),
                    values.dtype, values.device)
    return index_put.kernel(self, clamped, masked, True)


derivatives(_unsafe_masked_index_put_accumulate, {
    "self": "grad", "mask": "non_differentiable",
    "values": "_unsafe_masked_index(grad, mask, indices, 0)"})
