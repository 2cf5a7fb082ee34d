"""torch.gradient (ATen/native/ReduceOps.cpp): central differences inside, one-sided differences
of order edge_order at the ends, per dimension; spacing a scalar, scalars, or coordinate tensors.

CompositeImplicitAutograd in torch: written with reftrace ops in torch's order (so values round
as torch's do and a recorded gradient runs through the inner ops); each overload records itself.
"""
from .._tensor import _wrap_dim
from ._decomposed import decomposed
from ._registry import get_packet

_TAIL = "int edge_order=1) -> Tensor[]"


def _P(name):
    return get_packet(name)


def _pre_check(self, spacing_size, dim, edge_order):
    """pre_check_gradient."""
    if self.dtype.name == "uint8":
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dim is None and spacing_size != self.dim():
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                           f"equal to 'self.dim() = {self.dim()}', since dim argument was not given, but got "
                           f"a list of length {spacing_size}")
    if spacing_size is not None and dim is not None and spacing_size != len(dim):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length "
                           f"{spacing_size} and a dim argument of length {len(dim)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is not None:
        seen = set()
        for d in dim:
            w = _wrap_dim(d, self.dim())
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
    for d in (dim if dim is not None else range(self.dim())):
        if self.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")


def _dims(self, dim):
    """gradient_dim_preprocess: the one dim given, else every dim."""
    return [dim] if dim is not None else list(range(self.dim()))


def _with_ends(center, prepend, append, direction):
    """prepend_append_on_dim."""
    return _P("cat")([prepend, center, append], direction)


def _helper_float(self, spacing, dims, edge_order):
    """gradient_helper_float: scalar spacings."""
    result = []
    for d, h in zip(dims, spacing):
        d = _wrap_dim(d, self.dim())
        center = (self.slice(d, 2) - self.slice(d, 0, -2)) / h
        if edge_order == 1:
            prepend = (self.slice(d, 1, 2) - self.slice(d, 0, 1)) / h
            append = (self.slice(d, -1) - self.slice(d, -2, -1)) / h
        else:
            prepend = (self.slice(d, 0, 1) * -1.5 + self.slice(d, 1, 2) * 2 - self.slice(d, 2, 3) * 0.5) / h
            append = (self.slice(d, -3, -2) * 0.5 + self.slice(d, -2, -1) * -2 + self.slice(d, -1) * 1.5) / h
        result.append(_with_ends(center / 2, prepend, append, d))
    return tuple(result)


def _helper_coordinates(self, coordinates, dims, edge_order):
    """gradient_helper: coordinate tensors (uneven spacing)."""
    result = []
    for d, coords in zip(dims, coordinates):
        d = _wrap_dim(d, self.dim())
        shape = [1] * self.dim()
        shape[d] = -1
        ax_dx = coords.diff(1, 0)
        dx1, dx2 = ax_dx.slice(0, 0, -1), ax_dx.slice(0, 1)
        a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
        b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
        c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
        center = a * self.slice(d, 0, -2) + b * self.slice(d, 1, -1) + c * self.slice(d, 2)
        if edge_order == 1:
            prepend = (self.slice(d, 1, 2) - self.slice(d, 0, 1)) / ax_dx[0]
            append = (self.slice(d, -1) - self.slice(d, -2, -1)) / ax_dx[-1]
        else:
            a = -(2.0 * ax_dx[0] + ax_dx[1]) / (ax_dx[0] * (ax_dx[0] + ax_dx[1]))
            b = (ax_dx[0] + ax_dx[1]) / (ax_dx[0] * ax_dx[1])
            c = (-ax_dx[0]) / (ax_dx[1] * (ax_dx[0] + ax_dx[1]))
            prepend = a * self.slice(d, 0, 1) + b * self.slice(d, 1, 2) + c * self.slice(d, 2, 3)
            a = ax_dx[-1] / (ax_dx[-2] * (ax_dx[-1] + ax_dx[-2]))
            b = -(ax_dx[-1] + ax_dx[-2]) / (ax_dx[-1] * ax_dx[-2])
            c = (2 * ax_dx[-1] + ax_dx[-2]) / (ax_dx[-1] * (ax_dx[-1] + ax_dx[-2]))
            append = a * self.slice(d, -3, -2) + b * self.slice(d, -2, -1) + c * self.slice(d, -1)
        result.append(_with_ends(center, prepend, append, d))
    return tuple(result)


# overloads in native_functions.yaml's order (torch's parser order)

@decomposed("gradient.scalarint(Tensor self, *, Scalar? spacing=None, int? dim=None, " + _TAIL)
def gradient_scalarint(self, spacing, dim, edge_order):
    dims = _dims(self, dim)
    _pre_check(self, len(dims) if spacing is not None else None, dims if dim is not None else None, edge_order)
    return _helper_float(self, [spacing if spacing is not None else 1.0] * len(dims), dims, edge_order)


@decomposed("gradient.scalararray(Tensor self, *, Scalar spacing, int[] dim, " + _TAIL)
def gradient_scalararray(self, spacing, dim, edge_order):
    _pre_check(self, len(dim), dim, edge_order)
    return _helper_float(self, [spacing] * len(dim), dim, edge_order)


@decomposed("gradient.array(Tensor self, *, int[] dim, " + _TAIL)
def gradient_array(self, dim, edge_order):
    _pre_check(self, len(dim), dim, edge_order)
    return _helper_float(self, [1.0] * len(dim), dim, edge_order)


@decomposed("gradient.scalarrayint(Tensor self, *, Scalar[] spacing, int? dim=None, " + _TAIL)
def gradient_scalarrayint(self, spacing, dim, edge_order):
    dims = _dims(self, dim)
    _pre_check(self, len(spacing), dims if dim is not None else None, edge_order)
    return _helper_float(self, spacing, dims, edge_order)


@decomposed("gradient.scalarrayarray(Tensor self, *, Scalar[] spacing, int[] dim, " + _TAIL)
def gradient_scalarrayarray(self, spacing, dim, edge_order):
    _pre_check(self, len(spacing), dim, edge_order)
    return _helper_float(self, spacing, dim, edge_order)


@decomposed("gradient.tensorarrayint(Tensor self, *, Tensor[] spacing, int? dim=None, " + _TAIL)
def gradient_tensorarrayint(self, spacing, dim, edge_order):
    dims = _dims(self, dim)
    _pre_check(self, len(spacing), dims if dim is not None else None, edge_order)
    return _helper_coordinates(self, spacing, dims, edge_order)


@decomposed("gradient.tensorarray(Tensor self, *, Tensor[] spacing, int[] dim, " + _TAIL)
def gradient_tensorarray(self, spacing, dim, edge_order):
    _pre_check(self, len(spacing), dim, edge_order)
    return _helper_coordinates(self, spacing, dim, edge_order)
