"""torch/nn/common_types.py: the type aliases of torch.nn's signatures (kernel sizes, paddings ...)."""
from typing import TypeVar, Union

from typing_extensions import TypeAlias

from .._tensor import Tensor

# Arguments given as a tuple, or as one value that torch broadcasts to a tuple: a tuple of unknown
# size, or of a fixed size for 1d, 2d or 3d operations.
T = TypeVar("T")
_scalar_or_tuple_any_t: TypeAlias = Union[T, tuple[T, ...]]
_scalar_or_tuple_1_t: TypeAlias = Union[T, tuple[T]]
_scalar_or_tuple_2_t: TypeAlias = Union[T, tuple[T, T]]
_scalar_or_tuple_3_t: TypeAlias = Union[T, tuple[T, T, T]]
_scalar_or_tuple_4_t: TypeAlias = Union[T, tuple[T, T, T, T]]
_scalar_or_tuple_5_t: TypeAlias = Union[T, tuple[T, T, T, T, T]]
_scalar_or_tuple_6_t: TypeAlias = Union[T, tuple[T, T, T, T, T, T]]

# size parameters (kernel size, padding ...)
_size_any_t: TypeAlias = _scalar_or_tuple_any_t[int]
_size_1_t: TypeAlias = _scalar_or_tuple_1_t[int]
_size_2_t: TypeAlias = _scalar_or_tuple_2_t[int]
_size_3_t: TypeAlias = _scalar_or_tuple_3_t[int]
_size_4_t: TypeAlias = _scalar_or_tuple_4_t[int]
_size_5_t: TypeAlias = _scalar_or_tuple_5_t[int]
_size_6_t: TypeAlias = _scalar_or_tuple_6_t[int]

# optional size parameters (adaptive pooling's output sizes)
_size_any_opt_t: TypeAlias = _scalar_or_tuple_any_t[Union[int, None]]
_size_2_opt_t: TypeAlias = _scalar_or_tuple_2_t[Union[int, None]]
_size_3_opt_t: TypeAlias = _scalar_or_tuple_3_t[Union[int, None]]

# ratios for each dimension (upsampling's scale factors)
_ratio_2_t: TypeAlias = _scalar_or_tuple_2_t[float]
_ratio_3_t: TypeAlias = _scalar_or_tuple_3_t[float]
_ratio_any_t: TypeAlias = _scalar_or_tuple_any_t[float]

_tensor_list_t: TypeAlias = _scalar_or_tuple_any_t[Tensor]

# the result of max pooling, which may or may not return indices
_maybe_indices_t: TypeAlias = _scalar_or_tuple_2_t[Tensor]
