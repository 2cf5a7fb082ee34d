"""new_empty_strided and empty_permuted (ATen/native/TensorFactories.cpp): uninitialised
tensors with given strides, or laid out in a given dimension order."""
from .. import _dtype as D
from ._registry import op
from .creation import _OPTIONS, _filled


@op(f"new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, {_OPTIONS}) -> Tensor",
    variants=("method",))
def new_empty_strided(self, size, stride, dtype, layout, device, pin_memory):
    return _filled(size, None, dtype or self.dtype, device or self.device, tuple(stride))


@op(f"empty_permuted(SymInt[] size, int[] physical_layout, *, {_OPTIONS}) -> Tensor")
def empty_permuted(size, physical_layout, dtype, layout, device, pin_memory):
    n = len(size)
    if sorted(physical_layout) != list(range(n)):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; "
                           f"i.e. len(size) = {n} is not equal to len(physical_layout) = {len(physical_layout)}"
                           if len(physical_layout) != n else "physical_layout must be a permutation")
    # the strides of a contiguous tensor of the permuted sizes, put back in logical order
    strides = [0] * n
    step = 1
    for d in reversed(physical_layout):
        strides[d] = step
        step *= max(size[d], 1)
    return _filled(size, None, dtype or D.get_default_dtype(), device, tuple(strides))
