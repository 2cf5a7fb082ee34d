"""roll and broadcast_to (ATen/native/TensorTransformations.cpp, TensorShape.cpp)."""
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
