"""Stacking, splitting and flipping ops torch writes over cat / split / flip / repeat
(ATen/native/TensorShape.cpp, TensorTransformations.cpp): atleast_{1,2,3}d, hstack, vstack,
dstack, column_stack, tensor_split, hsplit / vsplit / dsplit, ravel, fliplr, flipud, tile, rot90,
unsafe_split."""
from .._device import contiguous_format
from .._tensor import _wrap_dim
from ._decomposed import decomposed
from ._registry import derivatives, get_packet, op
from .layout import flip
from .shape import _split_sizes, _split_with_sizes

_FM = ("function", "method")


def _P(name):
    return get_packet(name)


# -- atleast_Nd --------------------------------------------------------------------------------

@decomposed("atleast_1d(Tensor self) -> Tensor")
def atleast_1d(self):
    return self.reshape([1]) if self.dim() == 0 else self


@decomposed("atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]")
def atleast_1d_sequence(tensors):
    return tuple(atleast_1d.kernel(t) for t in tensors)


@decomposed("atleast_2d(Tensor self) -> Tensor")
def atleast_2d(self):
    d = self.dim()
    return self.reshape([1, 1]) if d == 0 else self.unsqueeze(0) if d == 1 else self


@decomposed("atleast_2d.Sequence(Tensor[] tensors) -> Tensor[]")
def atleast_2d_sequence(tensors):
    return tuple(atleast_2d.kernel(t) for t in tensors)


@decomposed("atleast_3d(Tensor self) -> Tensor")
def atleast_3d(self):
    d = self.dim()
    if d == 0:
        return self.reshape([1, 1, 1])
    if d == 1:
        return self.unsqueeze(0).unsqueeze(-1)
    return self.unsqueeze(-1) if d == 2 else self


@decomposed("atleast_3d.Sequence(Tensor[] tensors) -> Tensor[]")
def atleast_3d_sequence(tensors):
    return tuple(atleast_3d.kernel(t) for t in tensors)


# -- stacks: cat of the tensors made at least N-d ------------------------------------------------

def _nonempty(tensors, name):
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


@decomposed("hstack(Tensor[] tensors) -> Tensor")
def hstack(tensors):
    _nonempty(tensors, "hstack")
    rep = [atleast_1d.kernel(t) for t in tensors]
    return _P("cat")(rep, 0 if rep[0].dim() == 1 else 1)


@decomposed("vstack(Tensor[] tensors) -> Tensor")
def vstack(tensors):
    _nonempty(tensors, "vstack")
    return _P("cat")([atleast_2d.kernel(t) for t in tensors], 0)


@decomposed("dstack(Tensor[] tensors) -> Tensor")
def dstack(tensors):
    _nonempty(tensors, "dstack")
    return _P("cat")([atleast_3d.kernel(t) for t in tensors], 2)


@decomposed("column_stack(Tensor[] tensors) -> Tensor")
def column_stack(tensors):
    _nonempty(tensors, "column_stack")
    rep = [t.reshape([t.numel(), 1]) if t.numel() <= 1 or t.dim() <= 1 else t for t in tensors]
    return _P("cat")(rep, 1)


# -- splits -------------------------------------------------------------------------------------

def _check_split_dim(self, name):
    if self.dim() == 0:
        raise RuntimeError(f"{name} expected at least a 1-dimensional tensor, but got a tensor "
                           f"with {self.dim()} dims")


@decomposed("tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]",
            variants=_FM)
def tensor_split_sections(self, sections, dim):
    _check_split_dim(self, "tensor_split")
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    dim = _wrap_dim(dim, self.dim())
    size = self.shape[dim]
    small, extra = divmod(size, sections)
    out, start = [], 0
    for i in range(sections):
        stop = start + small + (1 if i < extra else 0)
        out.append(self.slice(dim, start, stop))
        start = stop
    return tuple(out)


@decomposed("tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]",
            variants=_FM)
def tensor_split_indices(self, indices, dim):
    _check_split_dim(self, "tensor_split")
    dim = _wrap_dim(dim, self.dim())
    out, start = [], 0
    for stop in indices:
        out.append(self.slice(dim, start, stop))
        start = stop
    out.append(self.slice(dim, start, self.shape[dim]))
    return tuple(out)


@decomposed("tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, Tensor tensor_indices_or_sections, "
            "int dim=0) -> Tensor(a)[]", variants=_FM)
def tensor_split_tensor(self, tensor_indices_or_sections, dim):
    t = tensor_indices_or_sections
    if t.device.type != "cpu":
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be on cpu, but "
                           f"it's on {t.device}")
    if str(t.dtype) != "torch.int64":
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of "
                           f"long, but got {t.dtype}")
    if t.dim() > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                           f"zero-dimensional or one-dimensional tensor, but got a tensor with {t.dim()} dims")
    if t.dim() == 0:
        return tensor_split_sections.kernel(self, int(t.item()), dim)
    return tensor_split_indices.kernel(self, [int(v) for v in t.tolist()], dim)


def _directional_split(name, min_dim, dim_of):
    def by_sections(self, sections):
        if self.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, "
                               f"but got a tensor with {self.dim()} dimensions!")
        dim = dim_of(self)
        if sections == 0 or self.shape[dim] % sections != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size "
                               f"of the dimension {self.shape[dim]} is not divisible by the split_size "
                               f"{sections}!")
        return tensor_split_sections.kernel(self, sections, dim)

    def by_indices(self, indices):
        if self.dim() < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, "
                               f"but got a tensor with {self.dim()} dimensions!")
        return tensor_split_indices.kernel(self, indices, dim_of(self))
    return (decomposed(f"{name}.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]", variants=_FM)(by_sections),
            decomposed(f"{name}.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]", variants=_FM)(by_indices))


hsplit, hsplit_array = _directional_split("hsplit", 1, lambda t: 0 if t.dim() == 1 else 1)
vsplit, vsplit_array = _directional_split("vsplit", 2, lambda t: 0)
dsplit, dsplit_array = _directional_split("dsplit", 3, lambda t: 2)


@op("unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]", variants=_FM)
def unsafe_split(self, split_size, dim):
    # torch: split's results sharing self's storage, which autograd does not treat as views
    # ("unsafe"), each with a version counter of its own
    out = _split_with_sizes(self, _split_sizes(self, split_size, dim), dim)
    for t in out:
        t._view_meta = False
        t._vc = [0]
    return out


derivatives(unsafe_split, {"self": "split_backward(grads, split_size, dim, self.shape, self)"})


# -- ravel, flips, tile, rot90 ------------------------------------------------------------------

@decomposed("ravel(Tensor(a) self) -> Tensor(a)", variants=_FM)
def ravel(self):
    return self.contiguous().view([-1])


@decomposed("fliplr(Tensor self) -> Tensor", variants=_FM)
def fliplr(self):
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return self.flip([1])


@decomposed("flipud(Tensor self) -> Tensor", variants=_FM)
def flipud(self):
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return self.flip([0])


@decomposed("tile(Tensor self, SymInt[] dims) -> Tensor", variants=_FM)
def tile(self, dims):
    lead = self.dim() - len(dims)
    return self.repeat(([1] * lead if lead > 0 else []) + list(dims))


@op("rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor", variants=_FM)
def rot90(self, k, dims):
    n = self.dim()
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == n:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    k = (4 + k % 4) % 4
    if k == 1:
        return flip.kernel(self, [d1]).transpose_(d0, d1)
    if k == 2:
        return flip.kernel(self, [d0, d1])
    if k == 3:
        return flip.kernel(self, [d0]).transpose_(d0, d1)
    return _P("clone")(self, memory_format=contiguous_format)


derivatives(rot90, {"self": "grad.rot90(-k, dims)"})
