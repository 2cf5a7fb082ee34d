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


# -- lazy initialisation (nn-layers): parameters and buffers whose shape the first input decides ------

class UninitializedTensorMixin:
    """A placeholder without a shape until ``materialize(shape)``, which gives it empty data of
    that shape and turns it into its ``cls_to_become`` (Parameter, or a plain Tensor buffer)."""

    def materialize(self, shape, device=None, dtype=None):
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        data = _factories.empty(shape, device=device, dtype=dtype)
        requires_grad = self.requires_grad
        _init(self, data._array, data.dtype, data.device, data._stride, data._base)
        self.requires_grad = requires_grad
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, _factories.empty(0, device=device, dtype=dtype),
                                 requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = _factories.empty(0, device=device, dtype=dtype)
        t = object.__new__(cls)
        _init(t, data._array, data.dtype, data.device, data._stride, data._base)
        t.requires_grad = requires_grad
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass
