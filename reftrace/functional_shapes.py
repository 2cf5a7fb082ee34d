"""The variadic wrappers torch/functional.py puts over ATen ops of the shape family:
atleast_{1,2,3}d, block_diag, cartesian_prod, meshgrid, broadcast_shapes (each passes its
``*tensors`` on as one ``Tensor[]``, as torch's do)."""
from ._frames import python_level
from .ops import get_packet

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "meshgrid",
           "broadcast_shapes", "nonzero", "unique", "unique_consecutive",
           "tensordot", "einsum"]


def _atleast(name):
    @python_level
    def fn(*tensors):
        if len(tensors) == 1:
            tensors = tensors[0]
        return get_packet(name)(list(tensors) if isinstance(tensors, (list, tuple)) else tensors)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}(*tensors) (torch/functional.py)"
    return fn


atleast_1d = _atleast("atleast_1d")
atleast_2d = _atleast("atleast_2d")
atleast_3d = _atleast("atleast_3d")


@python_level
def block_diag(*tensors):
    """torch.block_diag(*tensors): aten::block_diag of the list."""
    return get_packet("block_diag")(list(tensors))


@python_level
def cartesian_prod(*tensors):
    """torch.cartesian_prod(*tensors): aten::cartesian_prod of the list."""
    return get_packet("cartesian_prod")(list(tensors))


@python_level
def meshgrid(*tensors, indexing=None):
    """torch.meshgrid(*tensors, indexing=None): aten::meshgrid (aten::meshgrid.indexing when
    ``indexing`` is given)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    kwargs = {} if indexing is None else {"indexing": indexing}
    return get_packet("meshgrid")(list(tensors), **kwargs)


@python_level
def broadcast_shapes(*shapes):
    """torch.broadcast_shapes(*shapes) -> Size (torch._refs._broadcast_shapes, its messages)."""
    from ._tensor import Size
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    if not shapes:
        return Size([])
    for s in shapes:
        if not isinstance(s, (list, tuple)):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list of "
                               f"ints, got {s}")
    common = [1] * max(len(s) for s in shapes)
    for arg, s in enumerate(shapes):
        for i in range(-1, -1 - len(s), -1):
            if s[i] == common[i]:
                continue
            if common[i] == 1:
                if s[i] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = s[i]
            if s[i] != 1 and common[i] != s[i]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[i]} at {i}! "
                                   f"Mismatching argument at index {arg} had {s}; but expected "
                                   f"shape should be broadcastable to {common}")
    return Size(common)


def nonzero(input, *, out=None, as_tuple=False):
    """torch.nonzero / Tensor.nonzero (python_torch_functions_manual.cpp, C++ in torch: no
    caller frame of its own): ``as_tuple=True`` is aten::nonzero_numpy, one index tensor per
    dimension."""
    if as_tuple:
        if out is not None:
            raise RuntimeError("nonzero(): as_tuple=True is not supported with out=")
        return tuple(get_packet("nonzero_numpy")(input))
    return get_packet("nonzero")(input) if out is None else get_packet("nonzero")(input, out=out)


def _install_nonzero_method():
    from ._tensor import Tensor

    def method(self, *, out=None, as_tuple=False):
        return nonzero(self, out=out, as_tuple=as_tuple)
    method.__name__ = "nonzero"
    method.__qualname__ = "Tensor.nonzero"
    Tensor.nonzero = method


_install_nonzero_method()


def _unique_result(output, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


@python_level
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique (torch/functional.py): aten::unique_dim with a dim, else aten::_unique2."""
    if dim is not None:
        r = get_packet("unique_dim")(input, dim, sorted=sorted, return_inverse=return_inverse,
                                     return_counts=return_counts)
    else:
        r = get_packet("_unique2")(input, sorted=sorted, return_inverse=return_inverse,
                                   return_counts=return_counts)
    return _unique_result(*r, return_inverse, return_counts)


@python_level
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive (torch/functional.py): aten::unique_consecutive."""
    r = get_packet("unique_consecutive")(input, return_inverse=return_inverse,
                                         return_counts=return_counts, dim=dim)
    return _unique_result(*r, return_inverse, return_counts)


def _install_unique_methods():
    # torch/_tensor.py: Tensor.unique / unique_consecutive call the torch functions
    from ._tensor import Tensor

    @python_level
    def unique_method(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        return unique(self, sorted=sorted, return_inverse=return_inverse,
                      return_counts=return_counts, dim=dim)

    @python_level
    def unique_consecutive_method(self, return_inverse=False, return_counts=False, dim=None):
        return unique_consecutive(self, return_inverse=return_inverse,
                                  return_counts=return_counts, dim=dim)
    unique_method.__name__, unique_method.__qualname__ = "unique", "Tensor.unique"
    unique_consecutive_method.__name__ = "unique_consecutive"
    unique_consecutive_method.__qualname__ = "Tensor.unique_consecutive"
    Tensor.unique = unique_method
    Tensor.unique_consecutive = unique_consecutive_method


_install_unique_methods()


@python_level
def tensordot(a, b, dims=2, out=None):
    """torch.tensordot (torch/functional.py): ``dims`` (an int, a pair of lists, or a tensor)
    becomes aten::tensordot's two dim lists."""
    from ._tensor import Tensor
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    dims_a, dims_b = [], []
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims.size()[0] != 2:
                raise AssertionError(f"dims tensor must have size 2 in first dimension, got {dims.size()[0]}")
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            n = int(dims.item())
            if n < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(range(-n, 0)), list(range(n))
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    if isinstance(dims_a, int):
        dims_a = [dims_a]
    if isinstance(dims_b, int):
        dims_b = [dims_b]
    if out is None:
        return get_packet("tensordot")(a, b, list(dims_a), list(dims_b))
    return get_packet("tensordot")(a, b, list(dims_a), list(dims_b), out=out)


def _sublist_letters(sub):
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, int) and 0 <= s < 52:
            out.append(chr(ord("a") + s) if s < 26 else chr(ord("A") + s - 26))
        else:
            raise ValueError("subscript in subscript list is not within the valid range [0, 52)")
    return "".join(out)


@python_level
def einsum(*args):
    """torch.einsum (torch/functional.py): the equation form, the operands-as-a-list form and
    the sublist form (operand, [0, 1], operand, [1, 2], [0, 2]) all become aten::einsum."""
    from ._tensor import Tensor
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        ops, subs = list(args[0::2]), list(args[1::2])
        out = None
        if len(args) % 2 == 1:
            out = args[-1]
            ops = ops[:-1]
        equation = ",".join(_sublist_letters(s) for s in subs[:len(ops)])
        if out is not None:
            equation += "->" + _sublist_letters(out)
        operands = ops
    else:
        equation, operands = args[0], list(args[1:])
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    return get_packet("einsum")(equation, list(operands))
