"""Python-level functions that torch defines in torch/functional.py (not ATen ops themselves)."""
from ._frames import python_level
from .ops import get_packet

__all__ = ["broadcast_tensors", "norm", "split"]


@python_level
def broadcast_tensors(*tensors):
    """torch.broadcast_tensors(*tensors): views of the tensors expanded to one shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return tuple(get_packet("broadcast_tensors")(list(tensors)))


@python_level
def split(tensor, split_size_or_sections, dim=0):
    """torch.split (torch/functional.py): ``tensor.split(split_size_or_sections, dim)``."""
    return tensor.split(split_size_or_sections, dim)


# torch.norm (torch/functional.py) picks aten::linalg_vector_norm or an aten::norm overload
from .ops.reduction import norm  # noqa: E402
