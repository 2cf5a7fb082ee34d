"""The nn functions torch implements in C++ behind its Python bindings: ``torch.conv2d``,
``torch._C._nn.avg_pool2d`` ... (``torch.nn.functional`` re-exports them).

They live here, not in ``reftrace/nn/``, for one reason: in torch they have no Python frame, so a
trace names values after the CALLER's variables and attributes source lines to the caller. The
tracer treats frames under ``reftrace/nn/`` as user code (as torch's own torch/nn/functional.py
Python frames are), and frames elsewhere in reftrace as internal: defining the builtins here keeps
their frames invisible, exactly as in torch. Nothing here is registered in the op table.
"""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Optional, Sequence, Union

from ._registry import OVERLOADS, get_packet
from .._tensor import Tensor
from ..autograd._variable_type import attach_history
from ..autograd.grad_mode import STATE as GRAD, no_grad


def _int_list(v, n):
    # an int for a SymInt[n] parameter is repeated n times (what the binding records); a 0-dim
    # tensor there (a traced size) is one int too, read without being traced (spec SIZ-6)
    if isinstance(v, Tensor) and v.dim() == 0:
        return [v] * n
    return [v] * n if isinstance(v, numbers.Integral) else list(v)


def _baked(values):
    """The C++ conv functions hand _convolution plain ints: a traced size inside a stride,
    padding or output_padding list (ConvTranspose's output_size arithmetic) is read, silently,
    and recorded as a constant (the arithmetic that made it is then dead code)."""
    from .._dispatch import STATE
    tracer = STATE.tracer
    return [(tracer.note_baked_int(v) if tracer is not None else int(v._to_number()))
            if hasattr(v, "_to_number") else v for v in values]


def _conv(name, n, input, weight, bias, stride, padding, dilation, groups, transposed=False,
          output_padding=0):
    """at::conv{n}d / at::conv_transpose{n}d: batchify, then at::convolution, which records
    _convolution(_mode) (conv{n}d, conv_transpose{n}d and convolution themselves are on the
    tracer's do-not-record list)."""
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, "
                           f"but got input of size: [{', '.join(map(str, input.shape_tuple))}]")
    batched = input.dim() == n + 2
    x = input if batched else input.unsqueeze(0)
    stride, dilation = _baked(_int_list(stride, n)), _baked(_int_list(dilation, n))
    if not isinstance(padding, str):
        padding, output_padding = _baked(_int_list(padding, n)), _baked(_int_list(output_padding, n))
    conv = _complex_convolution if input.dtype.is_complex else _convolution
    out = conv(x, weight, bias, stride, padding, dilation, groups, transposed, output_padding)
    return out if batched else out.squeeze(0)


def _convolution(x, weight, bias, stride, padding, dilation, groups, transposed, output_padding):
    """at::convolution (or at::_convolution_mode for a padding string) of a real input."""
    if isinstance(padding, str):
        out = get_packet("_convolution_mode")(x, weight, bias, stride, padding, dilation, groups)
    else:
        # torch traces _convolution inside convolution's autograd kernel, i.e. before autograd
        # marks the result: the recorded type says requires_grad=0 (spec NN-18). Then autograd
        # marks it, as here.
        with no_grad():
            out = get_packet("_convolution")(x, weight, bias, stride, padding, dilation, transposed,
                                             output_padding, groups, False, False, True, True)
        if GRAD.enabled and any(t is not None and t.requires_grad for t in (x, weight, bias)):
            # then autograd records the call (ConvolutionBackward0) on the result
            attach_history(get_packet("convolution").overloads[0],
                           [x, weight, bias, stride, padding, dilation, transposed,
                            output_padding, groups], out)
    return out


def _complex_to_real(t):
    r = get_packet("view_as_real")(t)
    return r.select(r.dim() - 1, 0), r.select(r.dim() - 1, 1)


def _complex_convolution(x, weight, bias, *params):
    """Convolution.cpp complex_convolution(_mode): a complex convolution is three real ones
    (Gauss's trick), with torch's rounding and graph (AddBackward0 over ConvolutionBackward0s):
    a = conv(xr, wr, br), b = conv(xi, wi), c = conv(xr + xi, wr + wi, br + bi);
    conv(x, w, bias) = a - b + i (c - a - b)."""
    _check_input_same_type_as_parameters(x, weight, bias)
    i_r, i_i = _complex_to_real(x.resolve_conj())
    w_r, w_i = _complex_to_real(weight.resolve_conj())
    # (a C++ call's arguments are evaluated right to left, as GCC does: the sums in that order)
    if bias is None:
        a = _convolution(i_r, w_r, None, *params)
        b = _convolution(i_i, w_i, None, *params)
        w_sum = w_r + w_i
        c = _convolution(i_r + i_i, w_sum, None, *params)
    else:
        b_r, b_i = _complex_to_real(bias.resolve_conj())
        a = _convolution(i_r, w_r, b_r, *params)
        b = _convolution(i_i, w_i, None, *params)
        b_sum = b_r + b_i
        w_sum = w_r + w_i
        c = _convolution(i_r + i_i, w_sum, b_sum, *params)
    # a - b + i * (c - a - b): the right operand first; C++'s `i * t` is t.mul(Scalar)
    # (aten::mul.Scalar, MulBackward1)
    imag = OVERLOADS["aten::mul.Scalar"](c - a - b, 1j)
    return (a - b) + imag


# the C++ type names torch's bias check prints (caffe2::TypeMeta names)
_TYPE_META_NAMES = {"ComplexDouble": "c10::complex<double>", "ComplexFloat": "c10::complex<float>",
                    "Double": "double", "Float": "float", "Half": "c10::Half",
                    "BFloat16": "c10::BFloat16", "Long": "long int", "Int": "int",
                    "Short": "short int", "Char": "signed char", "Byte": "unsigned char",
                    "Bool": "bool"}


def _check_input_same_type_as_parameters(x, weight, bias):
    # (the words torch 2.13 prints: a complex tensor as CPU<Type>Type, a real one by its legacy
    # name; the bias check by the C++ element type names)
    def name(t):
        ir = t.dtype.ir_name
        return f"CPU{ir}Type" if t.dtype.is_complex else f"torch.{ir}Tensor"
    if weight.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({name(x)}) and weight type ({name(weight)}) should be "
                           "the same")
    if bias is not None and bias.dtype is not x.dtype:
        meta = [_TYPE_META_NAMES.get(t.dtype.ir_name, t.dtype.ir_name) for t in (x, bias)]
        raise RuntimeError(f"Input type ({meta[0]}) and bias type ({meta[1]}) should be the same")


def conv1d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
           stride: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int], str] = 0,
           dilation: Union[int, Sequence[int]] = 1, groups: int = 1) -> Tensor:
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
           stride: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int], str] = 0,
           dilation: Union[int, Sequence[int]] = 1, groups: int = 1) -> Tensor:
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
           stride: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int], str] = 0,
           dilation: Union[int, Sequence[int]] = 1, groups: int = 1) -> Tensor:
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     stride: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int]] = 0,
                     output_padding: Union[int, Sequence[int]] = 0, groups: int = 1,
                     dilation: Union[int, Sequence[int]] = 1) -> Tensor:
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation, groups,
                 True, output_padding)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     stride: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int]] = 0,
                     output_padding: Union[int, Sequence[int]] = 0, groups: int = 1,
                     dilation: Union[int, Sequence[int]] = 1) -> Tensor:
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation, groups,
                 True, output_padding)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                     stride: Union[int, Sequence[int]] = 1, padding: Union[int, Sequence[int]] = 0,
                     output_padding: Union[int, Sequence[int]] = 0, groups: int = 1,
                     dilation: Union[int, Sequence[int]] = 1) -> Tensor:
    return _conv("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation, groups,
                 True, output_padding)


def avg_pool2d(input: Tensor, kernel_size: Union[int, Sequence[int]],
               stride: Union[int, Sequence[int], None] = None, padding: Union[int, Sequence[int]] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None) -> Tensor:
    # the binding's signature says stride=None where the schema says stride=[]
    return get_packet("avg_pool2d")(input, kernel_size, [] if stride is None else stride, padding,
                                    ceil_mode, count_include_pad, divisor_override)


def avg_pool1d(input: Tensor, kernel_size: Union[int, Sequence[int]],
               stride: Union[int, Sequence[int], None] = None, padding: Union[int, Sequence[int]] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    return get_packet("avg_pool1d")(input, kernel_size, [] if stride is None else stride, padding,
                                    ceil_mode, count_include_pad)


def avg_pool3d(input: Tensor, kernel_size: Union[int, Sequence[int]],
               stride: Union[int, Sequence[int], None] = None, padding: Union[int, Sequence[int]] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None) -> Tensor:
    return get_packet("avg_pool3d")(input, kernel_size, [] if stride is None else stride, padding,
                                    ceil_mode, count_include_pad, divisor_override)
