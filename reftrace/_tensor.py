"""Tensor: an array + dtype + device + requires_grad (+ the wrapped-number flag).

The class is deliberately thin: every computing method goes through the op table (methods are
installed from it by ``reftrace/__init__.py``); what lives here is metadata (sizes, strides,
storage), Python protocols and the operator dunders, each mapped to the ATen op torch's own
binding calls.

Strides are torch's element strides, stored explicitly (``_stride`` is None for a tensor laid out
contiguously): NumPy picks its own strides for size-1 dimensions, torch's rules decide what a
traced graph prints. The NumPy array is only the accessor for the data; views share it with
their base, so an in-place op through a view is visible in the base, as in torch.
"""
import builtins
import functools

import numpy as np

from . import _dtype as D
from ._device import CPU
from ._dispatch import STATE
from .autograd.grad_mode import STATE as _GRAD
from ._frames import python_level
from reftrace_backends import get_backend


class Size(tuple):
    """torch.Size: a tuple of ints (of 0-dim Long tensors while tracing)."""

    def __repr__(self):
        return f"torch.Size([{', '.join(repr(s) if type(s) is int else str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


@functools.lru_cache(maxsize=4096)
def contiguous_strides(shape):
    """torch's contiguous strides: each stride is the product of the later sizes (0s count as 1)."""
    strides, acc = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= max(shape[i], 1)
    return tuple(strides)


def xp_of(t):
    """The array namespace (numpy or cupy) a tensor's data lives in."""
    return np if t.device.type == "cpu" else get_backend(t.device.type).xp


class Tensor:
    __slots__ = ("_array", "dtype", "device", "requires_grad", "_stride", "_base", "_wrapped",
                 "_tv", "_grad", "_vc", "__weakref__", "__dict__")

    # Autograd state lives in the instance __dict__ only once a tensor takes part in autograd:
    # tensors that never do pay nothing for it (these class attributes are the defaults).
    _grad_fn = None        # the Node that produced this tensor (None: a leaf)
    _output_nr = 0         # which output of _grad_fn this tensor is
    _retains_grad = False  # retain_grad() was called on this non-leaf
    _hooks = None          # register_hook's hooks on a leaf, in registration order
    _grad_acc = None       # weakref to the leaf's AccumulateGrad node (torch caches it weakly)
    _view_meta = None      # (base, node-maker) of a differentiable view, for in-place rebase

    # -- construction -----------------------------------------------------------------------
    def __new__(cls, *args, **kwargs):
        # torch.Tensor(2, 3) / torch.Tensor([1, 2]): the legacy constructor, default dtype
        self = object.__new__(cls)
        if len(args) == 1 and not isinstance(args[0], int):
            arr = np.array(args[0], dtype=D.get_default_dtype().np)
        else:
            arr = np.empty(tuple(args), dtype=D.get_default_dtype().np)
        _init(self, arr, D.get_default_dtype(), CPU)
        return self

    # -- metadata ---------------------------------------------------------------------------
    @property
    def shape(self):
        tracer = STATE.tracer
        if tracer is not None:
            return tracer.traced_sizes(self)
        return Size(self._array.shape)

    def size(self, dim=None):
        tracer = STATE.tracer
        if dim is None:
            return self.shape
        if tracer is not None:
            return tracer.traced_size(self, dim)
        return self._array.shape[_wrap_dim(dim, self._array.ndim)]

    def dim(self):
        return self._array.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._array.ndim

    def numel(self):
        tracer = STATE.tracer
        if tracer is not None:
            return tracer.traced_numel(self)
        return int(self._array.size)

    nelement = numel

    def stride(self, dim=None):
        s = self._stride if self._stride is not None else contiguous_strides(self._array.shape)
        return s if dim is None else s[_wrap_dim(dim, len(s))]

    def is_contiguous(self, memory_format=None):
        if memory_format is not None and memory_format.name != "contiguous_format":
            return _is_channels_last(self.shape_tuple, self.stride())
        return self._stride is None or _is_contiguous(self._array.shape, self._stride)

    def element_size(self):
        return self.dtype.itemsize

    def storage_offset(self):
        base = self._base if self._base is not None else self
        return (_data_ptr(self._array) - _data_ptr(base._array)) // self.dtype.itemsize \
            if self._base is not None else 0

    def data_ptr(self):
        return _data_ptr(self._array)

    def untyped_storage(self):
        return _Storage(self._base if self._base is not None else self)

    @property
    def shape_tuple(self):
        """The sizes as plain ints, never traced (for reftrace's own use)."""
        return self._array.shape

    @property
    def layout(self):
        from ._device import strided
        return strided  # reftrace has dense tensors only

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    # -- autograd (reftrace/autograd: the engine; the methods here are torch's Tensor API) --------
    @property
    def _version(self):
        # torch's version counter, shared by a tensor, its views and its detach()es
        return self._vc[0]

    @_version.setter
    def _version(self, value):
        self._vc[0] = value

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def grad_fn(self):
        if self._grad_fn is None:
            return None
        from .autograd._variable_type import grad_fn_of
        return grad_fn_of(self)

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad and self.requires_grad:
            from .autograd._variable_type import warn_non_leaf_grad
            warn_non_leaf_grad()
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            from .autograd._variable_type import check_grad_assignment
            check_grad_assignment(self, value)
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def output_nr(self):
        return self._output_nr

    def retain_grad(self):
        from .autograd._variable_type import retain_grad
        retain_grad(self)

    def register_hook(self, hook):
        from .autograd._variable_type import register_hook
        return register_hook(self, hook)

    def conj(self):
        """torch's Tensor.conj: a real tensor is its own conjugate (``x.conj() is x``), which is
        all the derivative formulas need of it for real dtypes."""
        if not self.dtype.is_complex:
            return self
        from .ops import PACKETS
        if "aten::conj" in PACKETS:
            return PACKETS["aten::conj"](self)
        raise NotImplementedError("conj of a complex tensor is not implemented in reftrace yet")

    def sgn(self):
        """torch's Tensor.sgn: sign for real dtypes (x / |x| for complex ones)."""
        if not self.dtype.is_complex:
            return self.sign()
        from .ops import PACKETS
        if "aten::sgn" in PACKETS:
            return PACKETS["aten::sgn"](self)
        raise NotImplementedError("sgn of a complex tensor is not implemented in reftrace yet")

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def get_device(self):
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = bool(requires_grad)
        return self

    @property
    def data(self):
        return _detached_alias(self)  # a detached alias sharing the data, as torch's .data

    @data.setter
    def data(self, value):
        """``x.data = y`` (torch's set_data): x now holds y's data, shape, strides and dtype."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._array, self.dtype, self.device = value._array, value.dtype, value.device
        self._stride = value._stride
        self._base = value._base if value._base is not None else value
        self._version += 1

    def __getattr__(self, name):
        # only reached when normal lookup fails: a torch.Tensor name reftrace lacks says so
        from ._missing import missing
        if name in Tensor.__slots__:  # an unset slot is not a missing feature
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")
        raise missing("torch.Tensor", name, "'Tensor' object")

    # the properties are ATen ops of their own (aten::numpy_T, aten::mT ...: ops/matrix_views.py),
    # so a trace records them and generalises to other ranks, as torch's does
    @property
    def T(self):
        return _property_op("numpy_T")(self)

    @property
    def mT(self):
        return _property_op("mT")(self)

    @property
    def H(self):
        return _property_op("matrix_H")(self)

    @property
    def mH(self):
        return _property_op("mH")(self)

    # -- Python conversions (the tracer turns these into constants and warns) -------------------
    def _to_number(self):
        """The Python value of a one-element tensor, without any tracer involvement."""
        if self._array.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._array.size} elements cannot be converted to Scalar")
        v = get_backend(self.device.type).to_host(self._array).reshape(()).item()
        return v

    def item(self):
        tracer = STATE.tracer
        if tracer is not None:
            tracer.warn_python_dataflow(self, "number")
        return self._to_number()

    def tolist(self):
        tracer = STATE.tracer
        if tracer is not None:
            tracer.warn_python_dataflow(self, "list")
            # torch's tensor_to_list reads self.resolve_conj().resolve_neg(): both return the
            # tensor itself, so the trace maps it to their outputs (which later uses then read)
            self.resolve_conj().resolve_neg()
        return get_backend(self.device.type).to_host(self._array).tolist()

    def numpy(self, force=False):
        tracer = STATE.tracer
        if tracer is not None:
            tracer.warn_python_dataflow(self, "numpy")
            _record_tensor_to_numpy(self)
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device.type}:0 device type tensor to numpy. "
                            "Use Tensor.cpu() to copy the tensor to host memory first.")
        return self._array

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def __bool__(self):
        if self._array.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous")
        tracer = STATE.tracer
        if tracer is not None:
            tracer.warn_python_dataflow(self, "bool")
        return builtins.bool(self._to_number())

    def __int__(self):
        tracer = STATE.tracer
        if tracer is not None:
            tracer.warn_python_dataflow(self, "int")
        return int(self._to_number())

    def __float__(self):
        tracer = STATE.tracer
        if tracer is not None:
            tracer.warn_python_dataflow(self, "float")
        return float(self._to_number())

    def __complex__(self):
        return complex(self._to_number())

    def __index__(self):
        # silent, as torch: x[t] / range(t) with a 0-dim integer tensor
        if self.dtype.category > 1 or self._array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._to_number())

    @python_level  # torch/_tensor.py's __len__ and __iter__ are Python: `self` is not named
    def __len__(self):
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        tracer = STATE.tracer
        if tracer is not None:
            # torch/_tensor.py: warn, then `return self.shape[0]` (a traced size; len() takes its
            # __index__ silently), so the size nodes it records use up value numbers
            tracer.warn_len()
            return self.shape[0]
        return self._array.shape[0]

    @python_level
    def __iter__(self):
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        tracer = STATE.tracer
        if tracer is not None:
            tracer.warn_iterate()
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __repr__(self):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self._array.ndim == 0:
            return self._to_number().__format__(spec)
        return object.__format__(self, spec)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = _fresh(self._array.copy(), self.dtype, self.device)
        new._stride = None
        new.requires_grad = self.requires_grad
        memo[id(self)] = new
        return new

    @python_level
    def split(self, split_size, dim=0):
        """torch/_tensor.py's Tensor.split: an int (or a tensor holding one) calls aten::split,
        a list calls aten::split_with_sizes."""
        from .ops import OVERLOADS
        if isinstance(split_size, Tensor):
            try:
                split_size = int(split_size)
            except (ValueError, RuntimeError, TypeError):
                pass
        if isinstance(split_size, int):
            return OVERLOADS["aten::split.Tensor"](self, split_size, dim)
        return OVERLOADS["aten::split_with_sizes"](self, split_size, dim)

    @python_level
    def unflatten(self, dim, sizes):
        """torch/_tensor.py's Tensor.unflatten: a Python method, so while tracing the tensor it is
        called on is named from this frame, where it is `self` (left unnamed)."""
        from .ops import OVERLOADS
        return OVERLOADS["aten::unflatten.int"](self, dim, sizes)

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """torch/_tensor.py's Tensor.norm: torch.norm(self, ...)."""
        from .ops.reduction import norm
        return norm(self, p, dim, keepdim, dtype=dtype)

    def __getitem__(self, index):
        from ._indexing import getitem
        return getitem(self, index)

    def __setitem__(self, index, value):
        from ._indexing import setitem
        setitem(self, index, value)

    def __reduce_ex__(self, proto):
        raise TypeError("reftrace tensors are not picklable with Python's pickle: save tensors "
                        "with reftrace.save (torch.save's format), traces with reftrace.jit.save")


def _record_tensor_to_numpy(self):
    """What torch's tensor_to_numpy records while tracing: ``self.detach().to(cpu,
    self.dtype)`` then ``resolve_conj()``, ``resolve_neg()`` on that detached tensor (never used
    afterwards, so dead code, but its values take up numbers in the graph)."""
    from .ops import OVERLOADS
    from ._device import strided
    d = OVERLOADS["aten::to.dtype_layout"](self.detach(), dtype=self.dtype, layout=strided,
                                         device=CPU, pin_memory=None, non_blocking=False,
                                         copy=False, memory_format=None)
    d.resolve_conj().resolve_neg()


def _property_op(name):
    from .ops import get_packet
    return get_packet(name)


def _wrap_dim(dim, ndim):
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _is_contiguous(shape, strides):
    # torch ignores the strides of size-1 dims; an empty tensor is contiguous
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 0:
            return True
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _is_channels_last(shape, strides):
    if len(shape) != 4:
        return False
    n, c, h, w = shape
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1 and strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _data_ptr(array):
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]
    return array.data.ptr  # cupy


class _Storage:
    """Enough of torch's UntypedStorage to compare data pointers (storage sharing)."""
    __slots__ = ("_owner",)

    def __init__(self, owner):
        self._owner = owner

    def data_ptr(self):
        return _data_ptr(self._owner._array)

    def size(self):
        return self._owner._array.nbytes

    nbytes = size


def _init(t, array, dtype, device, stride=None, base=None, wrapped=False):
    t._array = array
    t.dtype = dtype
    t.device = device
    t.requires_grad = False
    t._stride = stride
    t._base = base
    t._wrapped = wrapped
    t._tv = None
    t._grad = None
    t._vc = [0]
    return t


_new = object.__new__


def _fresh(array, dtype, device=CPU):
    """A tensor owning a fresh array, laid out contiguously (torch's default for new results)."""
    if not array.flags.c_contiguous:
        array = xp_of_device(device).ascontiguousarray(array)
    t = _new(Tensor)
    t._array = array
    t.dtype = dtype
    t.device = device
    t.requires_grad = False
    t._stride = None
    t._base = None
    t._wrapped = False
    t._tv = None
    t._grad = None
    t._vc = [0]
    return t


def _strided(array, dtype, device, stride):
    """A tensor owning a fresh array whose torch strides are ``stride`` (layout-preserving results)."""
    stride = tuple(stride)
    return _init(_new(Tensor), array, dtype, device,
                 None if stride == contiguous_strides(array.shape) else stride)


def _view_of(base, array, stride, dtype=None):
    """A view of ``base`` whose data is ``array`` (a numpy/cupy view) and torch strides ``stride``."""
    t = _new(Tensor)
    root = base._base if base._base is not None else base
    stride = tuple(stride)
    _init(t, array, dtype or base.dtype, base.device,
          None if stride == contiguous_strides(array.shape) else stride, root)
    t._vc = root._vc  # views share their base's version counter
    if base.requires_grad:
        # a view of a tensor that requires grad requires grad, even made under no_grad (torch);
        # made so, it may not be modified in place with grad on (see autograd check_inplace)
        t.requires_grad = True
        if not _GRAD.enabled:
            t._view_meta = "no_grad"
    return t


def _detached_alias(t):
    """torch's ``.data``: same data, no autograd history, a version counter of its own."""
    a = _view_of(t, t._array, t.stride())
    a._vc = [0]
    a.requires_grad = False
    a._view_meta = False  # not an autograd view
    return a


def xp_of_device(device):
    return np if device.type == "cpu" else get_backend(device.type).xp


def scalar_to_tensor(value, device=CPU):
    """A Python number as torch wraps it for a Tensor parameter: 0-dim, wrapped-number flag set."""
    dt = D.python_scalar_dtype(value)
    xp = xp_of_device(device)
    t = _fresh(xp.asarray(value, dtype=dt.np), dt, device)
    t._wrapped = True
    return t
