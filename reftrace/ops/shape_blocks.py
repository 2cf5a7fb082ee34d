"""Ops that lay tensors out in blocks or grids (ATen/native/TensorShape.cpp, LinearAlgebra.cpp,
Itertools.cpp): diag_embed, diagflat, trace, kron, block_diag, meshgrid, cartesian_prod,
combinations, the *_scatter ops (a clone of self with a view of it overwritten by src), and
sum_to_size."""
import numpy as np

from .. import _dtype as D
from .._frames import warn_at_caller
from .._promotion import result_type
from .._tensor import _fresh, _wrap_dim, xp_of
from ._decomposed import decomposed
from ._registry import derivatives, get_packet, op
from .shape import _fmt
from .shape_views import diagonal

_FM = ("function", "method")


def _P(name):
    return get_packet(name)


def _zeros(shape, dtype, device, xp):
    return _fresh(xp.zeros(tuple(shape), dtype=dtype.np), dtype, device)


@op("diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", variants=_FM)
def diag_embed(self, offset, dim1, dim2):
    n = self.dim() + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    length = abs(offset) + (self.shape[-1] if self.dim() else 1)
    sizes = list(self.shape[:-1]) if self.dim() else []
    lo, hi = min(d1, d2), max(d1, d2)
    sizes.insert(lo, length)
    sizes.insert(hi, length)
    out = _zeros(sizes, self.dtype, self.device, xp_of(self))
    diagonal.kernel(out, offset, d1, d2)._array[...] = self._array
    return out


derivatives(diag_embed, {"self": "grad.diagonal(offset, dim1, dim2)"})


@decomposed("diagflat(Tensor self, int offset=0) -> Tensor", variants=_FM)
def diagflat(self, offset):
    # torch: self.contiguous().view(-1).diag(offset), whose 1-d case is diag_embed
    return self.contiguous().view([-1]).diag_embed(offset)


@op("trace(Tensor self) -> Tensor", variants=_FM)
def trace(self):
    if self.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.dim()}")
    dt = D.int64 if not (self.dtype.is_floating_point or self.dtype.is_complex) else self.dtype
    arr = xp_of(self).asarray(xp_of(self).trace(self._array, dtype=dt.np))
    return _fresh(arr.astype(dt.np, copy=False), dt, self.device)


derivatives(trace, {"self": "trace_backward(grad, self.shape)"})


@decomposed("trace_backward(Tensor grad, SymInt[] sizes) -> Tensor")
def trace_backward(grad, sizes):
    # torch writes grad on the diagonal of zeros (index_fill); grad times an identity mask is
    # the same values and stays differentiable in grad
    if len(sizes) != 2:
        raise RuntimeError("expected matrix input")
    eye = _P("eye")(sizes[0], sizes[1], dtype=grad.dtype, device=grad.device)
    return grad * eye


@decomposed("kron(Tensor self, Tensor other) -> Tensor", variants=_FM)
def kron(self, other):
    # LinearAlgebra.cpp KronImpl: interleave the dims, multiply broadcast, view the product
    n = max(self.dim(), other.dim())
    ps, po = n - self.dim(), n - other.dim()
    a, b, r = [], [], []
    for i in range(n):
        sa = self.shape[i - ps] if i >= ps else 1
        sb = other.shape[i - po] if i >= po else 1
        a += [sa, 1]
        b += [1, sb]
        r.append(sa * sb)
    return _P("_unsafe_view")(_P("_unsafe_view")(self, a) * _P("_unsafe_view")(other, b), r)


@op("block_diag(Tensor[] tensors) -> Tensor")
def block_diag(tensors):
    if not tensors:
        return _fresh(np.empty((1, 0), dtype=np.float32), D.float32)
    dtype = result_type(*tensors)
    device = tensors[0].device
    shapes = []
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.dim()} dimensions")
        if t.device != device:
            raise RuntimeError("torch.block_diag: input tensors must all be on the same device. "
                               f"Input 0 is on device {device} and input {i} is on device {t.device}")
        shapes.append((1, 1) if t.dim() == 0 else (1, t.shape[0]) if t.dim() == 1 else tuple(t.shape))
    xp = xp_of(tensors[0])
    out = xp.zeros((sum(s[0] for s in shapes), sum(s[1] for s in shapes)), dtype=dtype.np)
    r = c = 0
    for t, (h, w) in zip(tensors, shapes):
        out[r:r + h, c:c + w] = t._array.reshape(h, w)
        r, c = r + h, c + w
    return _fresh(out, dtype, device)


derivatives(block_diag, {"tensors": "block_diag_backward(grad, to_args_sizes(tensors), to_args_scalartypes(tensors))"})


_MESHGRID_WARNED = []


def _meshgrid(tensors, indexing):
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors, tensors[1:]):
        if a.dtype != b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    refs = list(tensors)
    swap = indexing == "xy" and len(refs) >= 2
    if swap:
        refs[0], refs[1] = refs[1], refs[0]
    for t in refs:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    shape = [t.numel() for t in refs]
    grids = []
    for i, t in enumerate(refs):
        view = [1] * len(refs)
        view[i] = -1
        grids.append(t.view(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@decomposed("meshgrid(Tensor[] tensors) -> Tensor[]")
def meshgrid(tensors):
    if not _MESHGRID_WARNED:  # TORCH_WARN_ONCE: once per process
        _MESHGRID_WARNED.append(True)
        warn_at_caller("torch.meshgrid: in an upcoming release, it will be required to pass the "
                       "indexing argument.")
    return _meshgrid(tensors, "ij")


@decomposed("meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]")
def meshgrid_indexing(tensors, indexing):
    return _meshgrid(tensors, indexing)


@decomposed("cartesian_prod(Tensor[] tensors) -> Tensor")
def cartesian_prod(tensors):
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_fmt(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = _meshgrid(tensors, "ij")
    return _P("stack")([g.flatten() for g in grids], 1)


@decomposed("combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor")
def combinations(self, r, with_replacement):
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_fmt(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _P("empty")([0], dtype=self.dtype, device=self.device)
    n = self.numel()
    # Itertools.cpp _triu_mask: the grid points whose indices increase (or never decrease)
    idx = np.meshgrid(*([np.arange(n)] * r), indexing="ij")
    mask = np.ones(idx[0].shape, dtype=bool)
    for i in range(r - 1):
        mask &= (idx[i] <= idx[i + 1]) if with_replacement else (idx[i] < idx[i + 1])
    mask_t = _fresh(xp_of(self).asarray(mask), D.bool, self.device)
    grids = _meshgrid([self] * r, "ij")
    return _P("stack")([g.masked_select(mask_t) for g in grids], 1)


# -- the *_scatter ops: self cloned, a view of the clone overwritten by src ---------------------

def _scatter_into(self, src, view_of):
    out = _P("clone")(self)
    view = view_of(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_fmt(src.shape)}, slice size = {_fmt(view.shape)}")
    view._array[...] = src._array.astype(view._array.dtype, copy=False)
    return out


@op("select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor", variants=_FM)
def select_scatter(self, src, dim, index):
    return _scatter_into(self, src, lambda t: _P("select")(t, dim, index))


derivatives(select_scatter, {"self": "select_scatter(grad, zeros_like(src), dim, index)",
                             "src": "grad.select(dim, index)"})


@op("slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
    "SymInt step=1) -> Tensor", variants=_FM)
def slice_scatter(self, src, dim, start, end, step):
    return _scatter_into(self, src, lambda t: _P("slice")(t, dim, start, end, step))


derivatives(slice_scatter, {"self": "slice_scatter(grad, zeros_like(src), dim, start, end, step)",
                            "src": "grad.slice(dim, start, end, step)"})


@op("diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor", variants=_FM)
def diagonal_scatter(self, src, offset, dim1, dim2):
    return _scatter_into(self, src, lambda t: diagonal.kernel(t, offset, dim1, dim2))


derivatives(diagonal_scatter, {"self": "diagonal_scatter(grad, zeros_like(src), offset, dim1, dim2)",
                               "src": "grad.diagonal(offset, dim1, dim2)"})


@op("as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, "
    "SymInt? storage_offset=None) -> Tensor", variants=_FM)
def as_strided_scatter(self, src, size, stride, storage_offset):
    return _scatter_into(self, src, lambda t: _P("as_strided")(t, size, stride, storage_offset))


derivatives(as_strided_scatter, {
    "self": "as_strided_scatter_backward(grad, TensorGeometry(self), TensorGeometry(src), size, stride, storage_offset)",
    "src": "grad.contiguous().as_strided(size, stride, storage_offset)"})


@decomposed("sum_to_size(Tensor self, SymInt[] size) -> Tensor", variants=("method",))
def sum_to_size(self, size):
    shape = tuple(self.shape)
    ok = len(size) <= len(shape) and all(
        s == d or s == 1 for s, d in zip(reversed(size), reversed(shape)))
    if not ok:
        raise RuntimeError(f"size {{{_fmt(size)}}} is not expandable to size {{{_fmt(shape)}}}.")
    if not size:  # ExpandUtils.h sum_to: an empty shape is the full sum
        return self.sum()
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    out = self.sum(dims, True) if dims else self
    return out.view(list(size)) if lead else out
