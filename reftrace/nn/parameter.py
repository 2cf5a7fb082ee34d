"""torch.nn.Parameter and torch.nn.Buffer.

A Parameter is a Tensor subclass whose only job is to be recognised: assigning one to a Module
attribute registers it in ``_parameters``. It shares its data with the tensor it wraps (torch's
``Tensor._make_subclass``: no copy) and requires grad by default. Results of ops on a Parameter
are plain Tensors; in-place ops return the Parameter itself.

A Buffer is not a class of its own at runtime, as in torch: ``Buffer(t)`` returns a detached
plain Tensor marked ``_is_buffer`` (and ``persistent``), which ``Module.__setattr__`` registers
as a buffer; ``isinstance(x, Buffer)`` checks the mark.
"""
from .. import _factories
from .._tensor import Tensor, _init


class Parameter(Tensor):
    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _factories.empty(0)
        t = object.__new__(cls)  # not Tensor.__new__: that is the legacy torch.Tensor(2, 3) constructor
        _init(t, data._array, data.dtype, data.device, data._stride, data._base)
        t.requires_grad = requires_grad
        return t

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happened in __new__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _factories.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
