"""Tensor.__getitem__ / __setitem__, lowered to ATen ops exactly as torch does it.

torch's Python binding (torch/csrc/autograd/python_variable_indexing.cpp, with the helpers of
ATen/TensorIndexing.h) turns an index expression into a sequence of op calls, and the tracer
records exactly those calls, so reftrace makes the same ones:

    x[1]           select(x, 0, 1)            int        -> select (negative kept, bound-checked)
    x[1:3]         slice(x, 0, 1, 3, 1)       slice      -> slice (open end = INT64_MAX)
    x[None]        unsqueeze(x, 0)            None       -> unsqueeze
    x[...]         alias(x)                   nothing to do -> alias (a new tensor object)
    x[True]        unsqueeze, empty, fill_, index   a bool is a new dim indexed by [0] or []
    x[:, 1]        select(x, 1, 1)            a full slice is skipped in eager mode...
                   slice(x, 0, 0, INT64_MAX, 1); select(..., 1, 1)   ...but recorded while tracing
    x[idx]         index(x, [idx])            tensors (and lists -> tensors) -> one aten::index
    x[:, idx]      index(x, [None, idx])      with None for the dims they skip

    x[i] = v       select; copy_(dst, v)      same shapes -> copy_
    x[i] = 2.5     select; fill_(dst, c)      a number (or any 0-dim src) -> fill_ with a 0-dim
                                              constant of x's dtype
    x[i] = v       select; view(v, ..); expand(..); copy_   other shapes: strip leading 1s, expand
    x[m] = v       index_put_(x, [m], v, False)   tensor indices -> index_put_

Every op is called through its OpOverload via ``dispatch`` (so the tracer sees it). A 0-dim
integer tensor used as an index or slice bound is passed to the op as is while tracing, so that
the trace keeps it dynamic (torch's recordSelectTrace / recordSliceTrace); its value is used for
the checks here. The reference table of expressions and the ops torch records for them is in
tests/test_indexing.py.
"""
import warnings

import numpy as np

from . import _dtype as D
from ._device import LAYOUTS
from ._dispatch import PLAIN, STATE, dispatch
from ._tensor import Tensor, _fresh, xp_of_device

INT64_MAX = 2 ** 63 - 1
INT64_MIN = -2 ** 63
SYMINT_MIN = -2 ** 62  # c10::SymInt::min_representable_int(): slice bounds are clipped to it

_OPS = {}


def _op(name):
    """The OpOverload ``aten::<name>`` (looked up once; the op table is built after this module)."""
    ov = _OPS.get(name)
    if ov is None:
        from .ops import OVERLOADS
        ov = _OPS[name] = OVERLOADS["aten::" + name]
    return ov


def _call(name, *args):
    """Call an op with its schema arguments already in kernel form (what binding would produce)."""
    return dispatch(_op(name), list(args))


# -- what kind of index object is this (torch's THPUtils_* checks) ---------------------------------

def _is_long(obj):
    """THPUtils_checkLong: a Python int (not bool) or a NumPy integer."""
    return type(obj) is int or (isinstance(obj, (int, np.integer)) and not isinstance(obj, bool))


def _is_sequence(obj):
    """PySequence_Check, roughly: lists, tuples, ranges, strings, arrays and other indexables."""
    if isinstance(obj, (dict, Tensor)):
        return isinstance(obj, Tensor)
    return hasattr(type(obj), "__getitem__") and hasattr(type(obj), "__len__")


def _treat_sequence_as_tuple(index):
    """NumPy's heuristic, as torch applies it: a short list holding a tensor, a sequence, a slice,
    ... or None means several indices (deprecated), otherwise it is one index."""
    if isinstance(index, tuple):
        return True
    if isinstance(index, (Tensor, np.ndarray)) or not _is_sequence(index):
        return False
    try:
        n = len(index)
    except TypeError:
        return False
    if n >= 32:
        return False
    for obj in index:
        if isinstance(obj, (Tensor, slice)) or _is_sequence(obj) or obj is Ellipsis or obj is None:
            return True
    return False


def _wrap_tuple(index):
    if _treat_sequence_as_tuple(index):
        if not isinstance(index, tuple):
            warnings.warn(
                "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
                "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
                "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
                "error or a different result", UserWarning, stacklevel=4)
        return tuple(index)
    return (index,)


def _is_mask(t):
    return t.dtype is D.bool or t.dtype is D.uint8


def _count_specified_dims(items):
    """Every index but None/Ellipsis/bools takes one dim; a mask takes as many as it has."""
    count = 0
    for obj in items:
        if isinstance(obj, Tensor):
            count += obj._array.ndim if _is_mask(obj) else 1
        elif obj is not None and obj is not Ellipsis and obj is not True and obj is not False:
            count += 1
    return count


def _type_name(obj):
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _invalid_index(obj):
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                     f"are valid indices (got {_type_name(obj)})")


# -- the pieces of ATen/TensorIndexing.h -----------------------------------------------------------

def _traced_int(t):
    """What to pass for an int argument given as a 0-dim tensor: the tensor itself while tracing
    (the trace then records aten::Int of it, as torch's ArgumentStash does), else its value
    (what the op binder would do; ``_call`` skips the binder)."""
    return t if STATE.tracer is not None else t.__index__()


def _slice_bound(v):
    """One slice bound as torch unpacks it: (value, what to pass to aten::slice)."""
    if type(v) is int and SYMINT_MIN <= v <= INT64_MAX:
        return v, v
    if isinstance(v, Tensor):
        return v.__index__(), _traced_int(v)
    if not isinstance(v, int):
        if not hasattr(v, "__index__"):
            raise TypeError("slice indices must be integers or None or have an __index__ method")
        v = v.__index__()
    v = max(min(v, INT64_MAX), INT64_MIN)  # Py_ssize_t saturation, then SymInt's range
    if v < SYMINT_MIN:
        warnings.warn("Truncating the start/stop/step of slice. This is likely because of saved old "
                      "models when the start/stop/step were larger.", UserWarning, stacklevel=5)
        v = SYMINT_MIN
    return v, v


def _unpack_slice(s):
    """torch's __PySlice_Unpack: ((start, arg), (stop, arg), (step, arg)) with torch's defaults."""
    step = (1, 1) if s.step is None else _slice_bound(s.step)
    if step[0] == 0:
        raise ValueError("slice step cannot be zero")
    start = ((INT64_MAX if step[0] < 0 else 0),) * 2 if s.start is None else _slice_bound(s.start)
    stop = ((SYMINT_MIN if step[0] < 0 else INT64_MAX),) * 2 if s.stop is None else _slice_bound(s.stop)
    return start, stop, step


def _apply_slice(self, dim, start, stop, step, disable_slice_optimization):
    """applySlice: a full slice (0 to the end, step 1) is skipped unless tracing."""
    if step[0] <= 0:
        raise ValueError("step must be greater than zero")
    shape = self._array.shape
    if shape and not disable_slice_optimization and start[0] == 0 and shape[dim] <= stop[0] \
            and step[0] == 1:
        return self
    return _call("slice.Tensor", self, dim, start[1], stop[1], step[1])


def _apply_select(self, dim, index, real_dim):
    """applySelect: torch's bound check (message names the position in the index expression);
    the index is passed unnormalized, so a trace keeps negative indices."""
    value = index if type(index) is int else index.__index__() if isinstance(index, Tensor) else int(index)
    shape = self._array.shape
    if value == 0 and dim == 0 and not shape:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    size = shape[dim] if dim < len(shape) else 0
    if not (size > -1 - value and size > value):
        raise IndexError(f"index {value} is out of bounds for dimension {real_dim} with size {size}")
    # (dispatch called here, not through _call: x[3] is the commonest index, ~2 us in all)
    return dispatch(_op("select.int"), [self, dim, _traced_int(index) if isinstance(index, Tensor) else value])


def _select_kernel(self, dim, index):
    """select.int's kernel. Looked up on the first call (the op table is built after this
    module), which rebinds the name to the kernel itself."""
    global _select_kernel
    _select_kernel = _op("select.int").kernel
    return _select_kernel(self, dim, index)


def _bool_to_index(self, value):
    """A Python bool as an index tensor over a new size-1 dim: [0] for True, [] for False."""
    t = _call("empty.memory_format", [1 if value else 0], D.int64, LAYOUTS["strided"], self.device,
              None, None)
    if value:
        t = _call("fill_.Scalar", t, 0.0)
    return t


def _record_tensor_index(tensor, out, dim):
    """recordTensorIndex: the first tensor index pads the list with None up to its dim."""
    if not out:
        out.extend([None] * dim)
    out.append(tensor)
    return dim + (tensor._array.ndim if _is_mask(tensor) else 1)


def _sequence_to_tensor(self, seq):
    """A list index becomes a tensor (bool/uint8 kept, anything else int64), made as torch's
    indexing_tensor_from_data makes it: built outside the op table (a trace sees a constant),
    then converted with aten::to, which is recorded (no detach, no warning: not torch.tensor)."""
    from ._creation import _infer_dtype, _new_from_data
    _reject_strings(seq)
    if not isinstance(seq, (list, tuple, np.ndarray)):
        seq = list(seq)  # range and other sequences
    dtype = _infer_dtype(seq)
    if dtype not in (D.bool, D.uint8):
        dtype = D.int64
    t = _new_from_data(seq.tolist() if isinstance(seq, np.ndarray) else seq, dtype, self.device)
    return _call("to.device", t, t.device, t.dtype, False, False, None)


def _reject_strings(seq):
    if isinstance(seq, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(seq).__name__}'")
    if isinstance(seq, (list, tuple)):
        for item in seq:
            _reject_strings(item)


_AS_IS = (int, slice, type(None), type(Ellipsis), bool, Tensor)


def _index_of(self, obj):
    """What one entry of an index tuple means (the lambda inside torch's applySlicing)."""
    if type(obj) in _AS_IS or _is_long(obj) or isinstance(obj, Tensor):
        return obj
    if _is_sequence(obj):
        return _sequence_to_tensor(self, obj)
    if not hasattr(obj, "__index__"):
        _invalid_index(obj)
    try:
        return obj.__index__()
    except TypeError:
        _invalid_index(obj)


def _apply_slicing(self, items, disable_slice_optimization):
    """applySlicing + handleDimInMultiDimIndexing: the view part of an index, applied dim by dim;
    returns (view, tensor indices for aten::index)."""
    ndim = self._array.ndim
    specified = _count_specified_dims(items)
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result, dim, out = self, 0, []
    for real_dim, obj in enumerate(items):
        obj = _index_of(self, obj)
        kind = type(obj)
        if kind is slice:
            start, stop, step = _unpack_slice(obj)
            result = _apply_slice(result, dim, start, stop, step, disable_slice_optimization)
            dim += 1
            if out:
                out.append(None)
        elif kind is int or (kind is not bool and _is_long(obj)):
            result = _apply_select(result, dim, obj, real_dim)
        elif obj is None:
            result = _call("unsqueeze", result, dim)
            dim += 1
            if out:
                out.append(None)
        elif obj is Ellipsis:
            skip = ndim - specified
            dim += skip
            if out:
                out.extend([None] * skip)
        elif kind is bool:
            result = _call("unsqueeze", result, dim)
            dim = _record_tensor_index(_bool_to_index(result, obj), out, dim)
        elif obj._array.ndim == 0 and obj.dtype.category <= 1:  # an integer or bool scalar tensor
            if not _is_mask(obj):
                result = _apply_select(result, dim, obj, real_dim)
            else:
                result = _call("unsqueeze", result, dim)
                dim = _record_tensor_index(_bool_to_index(result, obj._to_number() != 0), out, dim)
        else:
            dim = _record_tensor_index(obj, out, dim)
    return result, out


def _strip_trailing_none(indices):
    while indices and indices[-1] is None:
        indices.pop()
    return indices


# -- __getitem__ ------------------------------------------------------------------------------------

def getitem(self, index):
    """Tensor.__getitem__ (THPVariable_getitem)."""
    # simple cases first, as torch: one int, one slice, None, Ellipsis, a bool
    if type(index) is int:  # x[3], the commonest
        shape = self._array.shape
        if PLAIN[0] and shape and -shape[0] <= index < shape[0] and not self.requires_grad:
            # _apply_select's call when its bound check passes, as dispatch would run it then
            # (see _dispatch.PLAIN): three Python frames fewer
            return _select_kernel(self, 0, index)
        return _apply_select(self, 0, index, 0)
    if _is_long(index):
        return _apply_select(self, 0, index, 0)
    if isinstance(index, slice):
        start, stop, step = _unpack_slice(index)
        # a lone slice is always recorded (torch returns a new tensor object for x[:])
        return _apply_slice(self, 0, start, stop, step, True)
    if index is None:
        return _call("unsqueeze", self, 0)
    if index is Ellipsis:
        return _call("alias", self)
    if index is True or index is False:
        result = _call("unsqueeze", self, 0)
        return _call("index.Tensor", result, [_bool_to_index(result, index)])

    sliced, indices = _apply_slicing(self, _wrap_tuple(index), STATE.tracer is not None)
    if not indices:
        # a new tensor object even when nothing was indexed (x[:, :] in eager mode, x[()])
        return _call("alias", sliced) if sliced is self else sliced
    return _call("index.Tensor", sliced, _strip_trailing_none(indices))


# -- __setitem__ ------------------------------------------------------------------------------------

def _value_to_tensor(self, value):
    """valueToTensor: a tensor stays; a Python number becomes a 0-dim tensor of self's dtype made
    outside the op table (a trace sees it as a constant), with torch's overflow check."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, np.bool_)) or _is_long(value):
        value = int(value)
    elif isinstance(value, (float, np.floating)):
        value = float(value)
    elif isinstance(value, (complex, np.complexfloating)):
        value = complex(value)
    else:
        raise TypeError(f"can't assign a {_type_name(value)} to a torch.{self.dtype.ir_name}Tensor")
    from .ops.casts import checked_scalar
    v = checked_scalar(value, self.dtype)
    return _fresh(xp_of_device(self.device).asarray(v, dtype=self.dtype.np), self.dtype, self.device)


def _strip_leading_ones(shape):
    """slicePrefix1sSize: NumPy compatibility drops leading size-1 dims of an assigned value."""
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return list(shape[i:])


def copy_to(dst, src):
    """ATen's copy_to: the op sequence that assigns ``src`` into the view ``dst``."""
    if dst._array.shape == src._array.shape:
        # no view/expand with constant sizes: a trace stays valid for other shapes
        _call("copy_", dst, src, False)
    elif src._array.ndim == 0 and src.device.type == "cpu":
        _call("fill_.Tensor", dst, src)
    else:
        view = _call("view", src, _strip_leading_ones(src._array.shape))
        if view._array.shape != dst._array.shape:
            view = _call("expand", view, list(dst._array.shape), False)
        _call("copy_", dst, view, False)


def setitem(self, index, value):
    """Tensor.__setitem__ (THPVariable_setitem)."""
    tracing = STATE.tracer is not None
    value = _value_to_tensor(self, value)
    if index is False:
        return  # torch does nothing (it does not even check sizes)
    if index is Ellipsis:
        return copy_to(self, value)
    if index is None or index is True:
        return copy_to(_call("unsqueeze", self, 0), value)
    if _is_long(index):
        return copy_to(_apply_select(self, 0, index, 0), value)
    if isinstance(index, slice):
        start, stop, step = _unpack_slice(index)
        return copy_to(_apply_slice(self, 0, start, stop, step, tracing), value)

    sliced, indices = _apply_slicing(self, _wrap_tuple(index), STATE.tracer is not None)
    if not indices:
        return copy_to(sliced, value)
    shape = value._array.shape
    stripped = _strip_leading_ones(shape)
    if len(stripped) != len(shape):
        value = _call("view", value, stripped)
    _call("index_put_", sliced, _strip_trailing_none(indices), value, False)


# Tensor.__getitem__/__setitem__ import this module on first use; from then on they come straight
# here (an import statement per indexing expression costs as much as the select itself).
Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem
