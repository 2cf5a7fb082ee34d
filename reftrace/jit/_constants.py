"""How a tensor-valued prim::Constant prints (ir.cpp printAttribute + ATen's Formatting.cpp).

One element: ``{2}``, ``{0.333333}`` (C++ ostream, 6 significant digits). Up to 10 elements:
the C++ tensor printout with newlines turned into spaces (`` 1  2  3 [ CPUFloatType{3} ]``).
More: ``<Tensor>``.
"""
import math

import numpy as np

from reftrace_backends import get_backend

MAX_TENSOR_DISPLAY_SIZE = 10

_CPP_TYPE = {"Byte": "Byte", "Char": "Char", "Short": "Short", "Int": "Int", "Long": "Long",
             "Half": "Half", "Float": "Float", "Double": "Double", "Bool": "Bool",
             "ComplexFloat": "ComplexFloat", "ComplexDouble": "ComplexDouble", "UInt64": "UInt64"}


_FLOAT_NAMES = ("Half", "Float", "Double")


def _cpp_g(v):
    """std::ostream << double with default flags (like %g, 6 significant digits)."""
    if math.isnan(v):
        return "nan" if math.copysign(1, v) > 0 else "-nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "%g" % v


def format_tensor_constant(t):
    host = np.asarray(get_backend(t.device.type).to_host(t._array))
    if host.size == 1:
        v = host.reshape(()).item()
        if t.dtype.is_floating_point:
            return "{" + _cpp_g(float(v)) + "}"
        if t.dtype.is_complex:
            return "{(" + _cpp_g(v.real) + "," + _cpp_g(v.imag) + ")}"
        return "{" + str(int(v)) + "}"
    if host.size <= MAX_TENSOR_DISPLAY_SIZE:
        return cpp_tensor_print(host, t.dtype.ir_name, t.device.type).replace("\n", " ")
    return "<Tensor>"


def _print_format(values):
    """__printFormat: (scale, width, formatter) for a flat float64 array."""
    if values.size == 0:
        return 1.0, 0, _cpp_g
    finite = values[np.isfinite(values)]
    int_mode = bool(np.all(finite == np.ceil(finite)))
    exp_min = exp_max = 1.0
    if finite.size:
        first = abs(float(finite[0]))
        exp_min = exp_max = first
        for z_signed in finite:
            z = abs(float(z_signed))
            exp_min = min(exp_min, z)
            if z_signed > exp_max:  # torch compares the signed value here (sic)
                exp_max = z
        exp_min = math.floor(math.log10(exp_min)) + 1 if exp_min != 0 else 1
        exp_max = math.floor(math.log10(exp_max)) + 1 if exp_max != 0 else 1
    scale = 1.0
    if int_mode:
        if exp_max > 9:
            return scale, 11, lambda v: _sci(v)
        return scale, int(exp_max) + 1, _cpp_g
    if exp_max - exp_min > 4:
        width = 12 if abs(exp_max) > 99 or abs(exp_min) > 99 else 11
        return scale, width, lambda v: _sci(v)
    if exp_max > 5 or exp_max < 0:
        return 10.0 ** (exp_max - 1), 7, _fixed
    return scale, 7 if exp_max == 0 else int(exp_max) + 6, _fixed


def _sci(v):
    if not math.isfinite(v):
        return _cpp_g(v)
    return "%.4e" % v


def _fixed(v):
    if not math.isfinite(v):
        return _cpp_g(v)
    return "%.4f" % v


def _print_scale(scale):
    return _cpp_g(scale) + " *\n"


def _print_matrix(m, linesize, indent):
    scale, width, fmt = _print_format(m.reshape(-1))
    out = []  # the first row is not indented (later rows are, after each newline)
    rows, cols = m.shape
    per_line = (linesize - indent) // (width + 1)
    first = 0
    while first < cols:
        last = first + per_line - 1 if first + per_line <= cols else cols - 1
        if per_line < cols:
            if first != 0:
                out.append("\n")
            out.append(f"Columns {first + 1} to {last + 1}")
            out.append(" " * indent)
        if scale != 1:
            out.append(_print_scale(scale))
            out.append(" " * indent)
        for r in range(rows):
            for c in range(first, last + 1):
                out.append(fmt(m[r, c] / scale).rjust(width))
                if c == last:
                    out.append("\n")
                    if r != rows - 1:
                        out.append(" " * indent + (" " if scale != 1 else ""))
                else:
                    out.append(" ")
        first = last + 1
    return "".join(out)


def cpp_tensor_print(host, ir_name, device_type="cpu", linesize=80, legacy_type_name=False):
    """at::print(stream, tensor, linesize) for a small tensor, as text with newlines. Constants
    print their type as ``CPUFloatType``; a Variable's printout (the requires-grad constant
    error) as the legacy ``torch.FloatTensor``."""
    values = host.astype(np.float64)
    if legacy_type_name:
        type_name = "torch." + ("cuda." if device_type == "cuda" else "") + _CPP_TYPE[ir_name] + "Tensor"
    else:
        type_name = ("CUDA" if device_type == "cuda" else "CPU") + _CPP_TYPE[ir_name] + "Type"
    sizes = ",".join(str(s) for s in host.shape)
    if values.ndim == 0:
        v = values.item()
        return (str(int(v)) if ir_name not in _FLOAT_NAMES else _cpp_g(v)) + f"\n[ {type_name}{{}} ]"
    if values.ndim == 1:
        out = []
        if values.size:
            scale, width, fmt = _print_format(values)
            if scale != 1:
                out.append(_print_scale(scale))
            for v in values:
                out.append(fmt(v / scale).rjust(width) + "\n")
        return "".join(out) + f"[ {type_name}{{{values.shape[0]}}} ]"
    if values.ndim == 2:
        return _print_matrix(values, linesize, 0) + f"[ {type_name}{{{sizes}}} ]"
    out = []
    for idx in np.ndindex(*values.shape[:-2]):
        if out:
            out.append("\n")
        out.append("(" + "".join(f"{i + 1}," for i in idx) + ".,.) = \n")
        out.append(_print_matrix(values[idx], linesize, 1))
    return "".join(out) + f"[ {type_name}{{{sizes}}} ]"
