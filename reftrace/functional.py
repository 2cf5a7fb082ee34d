"""Python-level functions that torch defines in torch/functional.py (not ATen ops themselves)."""
import itertools
import operator
from typing import Sequence, Union

from ._frames import python_level
from ._tensor import Tensor
from .ops import get_packet

__all__ = ["broadcast_tensors", "norm", "split", "stft"]


@python_level
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """torch.broadcast_tensors(*tensors): views of the tensors expanded to one shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return tuple(get_packet("broadcast_tensors")(list(tensors)))


@python_level
def split(tensor: Tensor, split_size_or_sections: Union[int, Sequence[int]],
          dim: int = 0) -> tuple[Tensor, ...]:
    """torch.split (torch/functional.py): ``tensor.split(split_size_or_sections, dim)``."""
    return tensor.split(split_size_or_sections, dim)


# torch.norm (torch/functional.py) picks aten::linalg_vector_norm or an aten::norm overload
from .ops.reduction import norm  # noqa: E402


_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


@python_level
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """torch.cdist (torch/functional.py): aten::cdist with the compute mode as an int."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return get_packet("cdist")(x1, x2, p, _CDIST_MODES[compute_mode])


__all__ += ["cdist"]


@python_level
def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu (torch/functional.py's _lu_impl): aten::_lu_with_info, its info checked unless
    ``get_infos``; (LU, pivots) or (LU, pivots, infos)."""
    LU, pivots, infos = get_packet("_lu_with_info")(A, pivot=pivot, check_errors=not get_infos)
    return (LU, pivots, infos) if get_infos else (LU, pivots)


__all__ += ["lu"]


@python_level
def unravel_index(indices: Tensor, shape: Union[int, Sequence[int]]) -> tuple[Tensor, ...]:
    """torch.unravel_index (torch/functional.py): the coordinates of flat indices in ``shape``."""
    res_tensor = _unravel_index(indices, shape)
    return res_tensor.unbind(-1)


def _unravel_index(indices: Tensor, shape: Union[int, Sequence[int]]) -> Tensor:
    from . import _dtype as D
    from ._creation import tensor
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, bool) or not isinstance(shape, (int, Sequence)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if isinstance(shape, int):
        shape = (shape,)
    for dim in shape:
        if not isinstance(dim, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(dim)}")
    shape = tuple(shape)
    if not all(dim >= 0 for dim in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs = list(reversed(list(itertools.accumulate(reversed(shape[1:] + (1,)), func=operator.mul))))
    return indices.unsqueeze(-1).floor_divide(
        tensor(coefs, device=indices.device, dtype=D.int64)
    ) % tensor(shape, device=indices.device, dtype=D.int64)


__all__ += ["unravel_index"]


@python_level
def stft(input: Tensor, n_fft: int, hop_length=None, win_length=None, window=None,
         center: bool = True, pad_mode: str = "reflect", normalized: bool = False, onesided=None,
         return_complex=None, align_to_window=None) -> Tensor:
    """torch.stft (torch/functional.py): with ``center``, the signal padded by n_fft // 2 on both
    sides (F.pad of a 3-d view, ``pad_mode``), then aten::stft (reftrace/ops/spectral_stft.py)."""
    from .nn import functional as F
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        signal_dim = input.dim()
        extended_shape = [1] * (3 - signal_dim) + list(input.size())
        pad = int(n_fft // 2)
        input = F.pad(input.view(extended_shape), [pad, pad], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    return get_packet("stft")(input, n_fft, hop_length, win_length, window, normalized, onesided,
                              return_complex, align_to_window)
