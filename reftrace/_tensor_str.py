"""repr(tensor): a port of torch/_tensor_str.py (torch 2.13), for strided cpu/cuda tensors.

The rules a reader meets in torch's output, all decided here as there:

- one ``_Formatter`` per tensor (two for complex: real and imaginary parts) looks at every
  finite non-zero value once: all integral -> ``int_mode`` (``1.``, ``-0.``); a ratio of the
  largest to the smallest magnitude above 1000, or a value above 1e8 or below 1e-4 -> scientific
  mode (``1.0000e+08``); otherwise ``precision`` (4) decimals. Every element is right-aligned to
  the widest one.
- rows wrap at ``linewidth`` (80); tensors with more than ``threshold`` (1000) elements are
  summarised to ``edgeitems`` (3) per side with ``...``.
- suffixes: ``dtype=`` unless the dtype is the default float, the default complex, int64 or
  bool; ``size=`` for empty tensors that are not 1-d; ``device=`` off the cpu;
  ``grad_fn=<MulBackward0>`` for a result of recorded ops, else ``requires_grad=True``.

It works on the host NumPy array directly, never through the op table, so printing is never
recorded by the tracer (torch's printer runs with tracing effectively invisible too).
"""
import contextlib
import dataclasses
import math

import numpy as np

from . import _dtype as D
from reftrace_backends import get_backend
from ._math_bits import resolved_array as _resolved_array

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "tensor_repr"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions: the same options, profiles and defaults."""
    if profile is not None:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Decides int/scientific/fixed mode and the common width from the values (a NumPy array)."""

    def __init__(self, values, floating):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return
        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return  # no valid number: int mode, width 1
        magnitude = np.abs(nonzero_finite).astype(np.float64)
        lo, hi = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                         if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
        p = PRINT_OPTS.precision
        for value in nonzero_finite.tolist():
            if self.sci_mode:
                width = len(f"{value:.{p}e}")
            elif self.int_mode:
                width = len(f"{value:.0f}") + 1  # room for the '.' of `1.`
            else:
                width = len(f"{value:.{p}f}")
            self.max_width = max(self.max_width, width)

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(value, real_fmt, imag_fmt):
    real = real_fmt.format(value.real)
    imag = (imag_fmt.format(value.imag) + "j").lstrip()
    # a sign already present (negative, or '+' never produced) joins directly
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _value_str(value, fmt1, fmt2):
    return fmt1.format(value) if fmt2 is None else _complex_str(value, fmt1, fmt2)


def _vector_str(a, indent, summarize, fmt1, fmt2):
    element_length = fmt1.width() + 2
    if fmt2 is not None:
        element_length += fmt2.width() + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = ([_value_str(v, fmt1, fmt2) for v in a[:e].tolist()] + [" ..."]
                + [_value_str(v, fmt1, fmt2) for v in a[-e:].tolist()])
    else:
        data = [_value_str(v, fmt1, fmt2) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(a, indent, summarize, fmt1, fmt2=None):
    if a.ndim == 0:
        return _value_str(a.item(), fmt1, fmt2)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt1, fmt2)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        rows = list(range(e)) + [None] + list(range(a.shape[0] - e, a.shape[0]))
    else:
        rows = range(a.shape[0])
    slices = ["..." if i is None else
              _tensor_str_with_formatter(a[i], indent + 1, summarize, fmt1, fmt2) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(a):
    """get_summarized_data: only the values that will be printed (they decide the format)."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:e], a[-e:])) if a.shape[0] > 2 * e else a
    if not e:
        return np.empty([0] * a.ndim, a.dtype)
    rows = list(range(e)) + list(range(a.shape[0] - e, a.shape[0])) if a.shape[0] > 2 * e \
        else range(a.shape[0])
    return np.stack([_summarized(a[i]) for i in rows])


def _tensor_str(a, dtype, indent):
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarized(a) if summarize else a
    if dtype.is_complex:
        fmt1, fmt2 = _Formatter(shown.real, True), _Formatter(shown.imag, True)
        return _tensor_str_with_formatter(a, indent, summarize, fmt1, fmt2)
    fmt = _Formatter(shown, dtype.is_floating_point)
    return _tensor_str_with_formatter(a, indent, summarize, fmt)


def _add_suffixes(tensor_str, suffixes, indent):
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t):
    """repr(t) as torch prints it (grad_fn is not modelled: reftrace tensors are all leaves)."""
    from ._tensor import Tensor
    prefix = "tensor(" if type(t) is Tensor or type(t).__name__ == "Parameter" \
        else f"{type(t).__name__}("
    indent = len(prefix)
    a = get_backend(t.device.type).to_host(t._array if not t._mbits else _resolved_array(t))
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device.type}:{t.device.index or 0}'")
    default = D.get_default_dtype()
    has_default_dtype = t.dtype in (default, D.default_complex_dtype(), D.int64, D.bool)
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if t.dtype is not default:  # no elements to infer int64 from: always shown
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        if not has_default_dtype:
            suffixes.append(f"dtype={t.dtype}")
        body = _tensor_str(a, t.dtype, indent)
    # a result of recorded ops shows its node (torch: type(grad_fn).__name__), a leaf its flag
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
