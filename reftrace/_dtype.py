"""torch dtypes: the eleven scalar types reftrace supports, their aliases and the default dtype;
and uint64, one of torch's "barebones" unsigned types, which torch itself supports only in part
(hash_tensor's result; promotion with anything but itself or a floating type is an error, most
kernels are not compiled for it). It is kept out of ALL_DTYPES, which the op table and the
promotion table range over.

Each dtype knows the NumPy dtype that stores it, its ScalarType number (what the tracer records
for a ``dtype=`` argument) and the name TorchScript types print (``Float(2, 3, ...)``).
bfloat16 and the float8 types are not supported: NumPy has no storage type for them.
"""
import numpy as np


class dtype:
    __slots__ = ("name", "np", "scalar_type", "ir_name", "is_floating_point", "is_complex",
                 "is_signed", "itemsize", "category")

    def __init__(self, name, np_dtype, scalar_type, ir_name, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.scalar_type = scalar_type
        self.ir_name = ir_name
        # promotion categories, in torch's order: bool < integral < floating < complex
        self.category = category
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_signed = name not in ("bool", "uint8", "uint64")
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name

    def to_real(self):
        """torch.dtype.to_real(): a complex dtype's real counterpart, other dtypes themselves."""
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        """torch.dtype.to_complex() (float16's would be complex32, which reftrace has not:
        complex64 stands in, as reftrace's promotion does)."""
        return {float32: complex64, float64: complex128, float16: complex64}.get(self, self)


bool = dtype("bool", np.bool_, 11, "Bool", 0)
uint8 = dtype("uint8", np.uint8, 0, "Byte", 1)
int8 = dtype("int8", np.int8, 1, "Char", 1)
int16 = dtype("int16", np.int16, 2, "Short", 1)
int32 = dtype("int32", np.int32, 3, "Int", 1)
int64 = dtype("int64", np.int64, 4, "Long", 1)
float16 = dtype("float16", np.float16, 5, "Half", 2)
float32 = dtype("float32", np.float32, 6, "Float", 2)
float64 = dtype("float64", np.float64, 7, "Double", 2)
complex64 = dtype("complex64", np.complex64, 9, "ComplexFloat", 3)
complex128 = dtype("complex128", np.complex128, 10, "ComplexDouble", 3)

uint64 = dtype("uint64", np.uint64, 29, "UInt64", 1)

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128)
BAREBONES_UNSIGNED = (uint64,)
# torch's aliases are the same objects: torch.float is torch.float32
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
           "long": int64, "cfloat": complex64, "cdouble": complex128}

BY_SCALAR_TYPE = {d.scalar_type: d for d in ALL_DTYPES + BAREBONES_UNSIGNED}
BY_NUMPY = {d.np: d for d in ALL_DTYPES + BAREBONES_UNSIGNED}
BY_NAME = {d.name: d for d in ALL_DTYPES + BAREBONES_UNSIGNED}
BY_NAME.update(ALIASES)

_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def default_complex_dtype():
    return complex128 if _default[0] is float64 else complex64


def from_numpy_dtype(np_dtype):
    try:
        return BY_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
            "uint8, and bool.") from None


def python_scalar_dtype(value):
    """The dtype torch gives a Python number turned into a tensor: bool, int64, double or cdouble."""
    t = type(value)
    if t is builtins_bool:
        return bool
    if t is int:
        return int64
    if t is float:
        return float64
    if t is complex:
        return complex128
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    if isinstance(value, builtins_bool):
        return bool
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return float64
    raise TypeError(f"not a Python number: {value!r}")


import builtins as _builtins  # noqa: E402  (after the module-level name `bool` shadows the builtin)
builtins_bool = _builtins.bool
