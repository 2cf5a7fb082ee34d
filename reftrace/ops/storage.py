"""set_: a tensor takes another tensor's storage, sizes and strides (TensorShape.cpp set_).

Afterwards both share data: a write through either is seen by the other, as in torch. The tensor
keeps its identity (so a Parameter stays the module's Parameter), which is why
torch.nn.utils.parametrize uses it to store a new value into an existing parameter.
"""
from ._registry import op
from .linalg import _CPP_TYPES


@op("set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)", variants=("method",),
    differentiable=False)
def set_(self, source):
    if source.dtype is not self.dtype:
        raise RuntimeError(f"Could not set tensor of type {_CPP_TYPES[source.dtype]} to a tensor "
                           f"of type {_CPP_TYPES[self.dtype]}")
    self._array, self._stride = source._array, source._stride
    self._version += 1
    return self
