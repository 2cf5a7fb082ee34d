"""torch.types: the aliases torch's stubs use for argument and return types.

The generated stubs (reftrace/_variable_functions.pyi, _tensor_methods.pyi, ...: see
tests/gen_stubs.py) spell schema types with these names, as torch's _VariableFunctions.pyi does:
``int[]`` is ``_size``, ``Scalar`` is ``Number | _complex``, ``Device`` is ``DeviceLikeType``.
The underscore names exist because ``reftrace.float``/``reftrace.int``/``reftrace.bool`` are
dtypes, which shadow the builtins inside the package (https://github.com/python/mypy/issues/4146).
"""
import os
from builtins import (  # noqa: F401
    bool as _bool,
    bytes as _bytes,
    complex as _complex,
    float as _float,
    int as _int,
    str as _str,
)
from collections.abc import Sequence
from typing import IO, Union

from typing_extensions import TypeAlias

from ._device import _Enum, device as _device
from ._dtype import dtype as _dtype
from ._tensor import Size, Tensor

__all__ = ["Number", "Device", "FileLike"]

_TensorOrTensors: TypeAlias = Union[Tensor, Sequence[Tensor]]
_size: TypeAlias = Union[Size, list[int], tuple[int, ...]]

# Meta-type for "numeric" things; matches torch's docs
Number: TypeAlias = Union[int, float, bool]

FileLike: TypeAlias = Union[str, "os.PathLike[str]", IO[bytes]]

# "device-like" things, as torch's PythonArgParser takes them; None is the default device
Device: TypeAlias = Union[_device, str, int, None]
DeviceLikeType: TypeAlias = Union[str, _device, int]  # (torch/_prims_common: DeviceLikeType)

# torch.layout and torch.memory_format: one enum class in reftrace (reftrace/_device.py)
_layout: TypeAlias = _Enum
memory_format: TypeAlias = _Enum
