"""diagonal and unfold (views: ATen/native/TensorShape.cpp), their backward ops, and the
view-copy ops (``permute_copy`` ...: the view op's result cloned contiguous, as torch's generated
CompositeExplicitAutogradNonFunctional kernels do, with the view's derivative and a
``<ViewNode>_copy`` grad_fn)."""
from .._device import contiguous_format
from .._tensor import _fresh, _view_of, _wrap_dim, xp_of
from ._registry import derivatives, get_packet, op
from .shape import _narrow, _restride


def _strided_view(self, first, shape, strides):
    """A view of self starting at element ``first`` (an index tuple, or None: the first one)."""
    a = self._array
    if not a.size:  # nothing to read: an empty view (or a restrided one of the empty array)
        return _view_of(self, a.reshape(-1)[:0].reshape(shape) if 0 in shape else
                        _restride(a, tuple(shape), strides), strides)
    start = a[first] if first is not None else a  # (as_strided reads from its first element)
    arr = xp_of(self).lib.stride_tricks.as_strided(
        start, tuple(shape), tuple(s * a.itemsize for s in strides))
    return _view_of(self, arr, strides)


@op("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
    variants=("function", "method"))
def diagonal(self, offset, dim1, dim2):
    a = self._array
    d1, d2 = _wrap_dim(dim1, a.ndim), _wrap_dim(dim2, a.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = a.shape[d1], a.shape[d2]
    size = max(min(n1, n2 - offset), 0) if offset >= 0 else max(min(n1 + offset, n2), 0)
    st = self.stride()
    keep = [i for i in range(a.ndim) if i not in (d1, d2)]
    shape = [a.shape[i] for i in keep] + [size]
    strides = [st[i] for i in keep] + [st[d1] + st[d2]]
    first = None
    if size and a.size:
        idx = [slice(None)] * a.ndim
        idx[d1] = slice(max(-offset, 0), None)
        idx[d2] = slice(max(offset, 0), None)
        first = tuple(idx)
    return _strided_view(self, first, shape, strides)


derivatives(diagonal, {"self": "diagonal_backward(grad, self.shape, offset, dim1, dim2)"})


@op("diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor")
def diagonal_backward(grad_output, input_sizes, offset, dim1, dim2):
    xp = xp_of(grad_output)
    out = _fresh(xp.zeros(tuple(input_sizes), dtype=grad_output.dtype.np), grad_output.dtype, grad_output.device)
    view = diagonal.kernel(out, offset, dim1, dim2)
    view._array[...] = grad_output._array
    return out


derivatives(diagonal_backward, {"grad_output": "grad.diagonal(offset, dim1, dim2)"})


@op("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", variants=("method",))
def unfold(self, dimension, size, step):
    a = self._array
    d = _wrap_dim(dimension, a.ndim)
    max_size = a.shape[d] if a.ndim else 1
    if size > max_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {max_size} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if a.ndim == 0:
        return _strided_view(self, None, [size], [1])
    st = list(self.stride())
    shape = list(a.shape)
    shape[d] = (shape[d] - size) // step + 1
    shape.append(size)
    strides = st[:d] + [st[d] * step] + st[d + 1:] + [st[d]]
    return _strided_view(self, None, shape, strides)


derivatives(unfold, {"self": "unfold_backward(grad, self.shape, dimension, size, step)"})


@op("unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) -> Tensor")
def unfold_backward(grad_in, input_sizes, dim, size, step):
    xp = xp_of(grad_in)
    out = xp.zeros(tuple(input_sizes), dtype=grad_in.dtype.np)
    d = _wrap_dim(dim, len(input_sizes))
    g = grad_in._array
    moved = xp.moveaxis(out, d, -1) if out.ndim else out.reshape(1)
    gm = xp.moveaxis(g, d, -2) if out.ndim else g.reshape(-1, size)
    for i in range(gm.shape[-2]):  # windows may overlap: accumulate them one by one
        moved[..., i * step:i * step + size] += gm[..., i, :]
    return _fresh(out, grad_in.dtype, grad_in.device)


derivatives(unfold_backward, {"grad_in": "grad.unfold(dim, size, step)"})


# -- view copies ---------------------------------------------------------------------------------

def _view_copy(schema, view_overload):
    def kernel(*args):
        out = view_overload.kernel(*args)
        clone = get_packet("clone").overloads[0].kernel
        if isinstance(out, (tuple, list)):
            return tuple(clone(t, contiguous_format) for t in out)  # (Tensor[] results are tuples)
        return clone(out, contiguous_format)
    ov = op(schema)(kernel)
    if view_overload.derivatives is not None:
        derivatives(ov, view_overload.derivatives, view_overload.output_differentiability)
    return ov


def _overload(qualified):
    from ._registry import OVERLOADS
    return OVERLOADS["aten::" + qualified]


alias_copy = _view_copy("alias_copy(Tensor self) -> Tensor", _overload("alias"))
expand_copy = _view_copy("expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor",
                         _overload("expand"))
permute_copy = _view_copy("permute_copy(Tensor self, int[] dims) -> Tensor", _overload("permute"))
squeeze_copy = _view_copy("squeeze_copy(Tensor self) -> Tensor", _overload("squeeze"))
squeeze_copy_dim = _view_copy("squeeze_copy.dim(Tensor self, int dim) -> Tensor", _overload("squeeze.dim"))
squeeze_copy_dims = _view_copy("squeeze_copy.dims(Tensor self, int[] dim) -> Tensor", _overload("squeeze.dims"))
t_copy = _view_copy("t_copy(Tensor self) -> Tensor", _overload("t"))
transpose_copy = _view_copy("transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor",
                            _overload("transpose.int"))
unsqueeze_copy = _view_copy("unsqueeze_copy(Tensor self, int dim) -> Tensor", _overload("unsqueeze"))
view_copy = _view_copy("view_copy(Tensor self, SymInt[] size) -> Tensor", _overload("view"))
view_copy_dtype = _view_copy("view_copy.dtype(Tensor self, ScalarType dtype) -> Tensor", _overload("view.dtype"))
unbind_copy = _view_copy("unbind_copy.int(Tensor self, int dim=0) -> Tensor[]", _overload("unbind.int"))
split_with_sizes_copy = _view_copy("split_with_sizes_copy(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]",
                                   _overload("split_with_sizes"))
diagonal_copy = _view_copy("diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor", diagonal)
as_strided_copy = _view_copy("as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, "
                             "SymInt? storage_offset=None) -> Tensor", _overload("as_strided"))
unfold_copy = _view_copy("unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor", unfold)


@op("narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor", variants=("function", "method"))
def narrow_copy(self, dim, start, length):
    return get_packet("clone").overloads[0].kernel(_narrow(self, dim, start, length), contiguous_format)


derivatives(narrow_copy, {"self": "slice_backward_wrapper(grad, self.shape, dim, start, start + length, 1)"})
