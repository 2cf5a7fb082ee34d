"""torch.nn.functional: torch's signatures, and the same ATen calls torch's Python code makes.

Each function below mirrors its namesake in torch/nn/functional.py (or, for builtins such as
conv2d, the C++ function the binding reaches): the ATen op it calls, with the arguments it
passes, is exactly what a trace records. Some lowering facts worth knowing:

- ``conv1d/conv2d`` record ``aten::_convolution`` (13 inputs) or, with a string padding,
  ``aten::_convolution_mode``; unbatched inputs are wrapped in ``unsqueeze(0)`` / ``squeeze(0)``
  (C++ builtins in torch: see reftrace/ops/nn_bindings.py).
- ``max_pool2d(x, 2)`` passes ``stride=[]`` when stride is None; ``return_indices=True``
  switches to ``max_pool2d_with_indices``.
- ``interpolate`` calls the ``.vec`` upsample overloads with either a size or scale factors.
- losses pass ``reduction`` as an int (none=0, mean=1, sum=2).
- ``normalize`` is four ops: linalg_vector_norm, clamp_min, expand_as, div.

Where torch's Python code reads ``input.size()`` (batch_norm's and group_norm's batch checks,
adaptive_avg_pool2d, embedding, mse_loss), this code reads it too, the same way: while tracing
those reads record ``aten::size`` nodes; dead ones are removed afterwards, but they have taken
value numbers, so the printed graph numbers its values exactly as torch's does.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence, overload

from .. import _creation, _dtype
from .._dispatch import STATE as _DISPATCH

from .._tensor import Tensor
from ..ops import PACKETS, get_packet
from ..ops.nn_bindings import avg_pool2d, conv1d, conv2d  # noqa: F401  (torch's C++ builtins)

if TYPE_CHECKING:  # the annotations are torch's (torch/nn/functional.pyi), in torch's names
    from .._dtype import dtype as DType
    from ..types import _int, _size
    from .common_types import (_ratio_any_t, _size_1_t, _size_2_opt_t, _size_2_t, _size_3_opt_t,
                               _size_3_t, _size_any_t)
from ..ops.nn_bindings import (avg_pool1d, avg_pool3d, conv3d, conv_transpose1d,  # noqa: F401
                               conv_transpose2d, conv_transpose3d)


def _tracing():
    """torch._C._get_tracing_state() is not None"""
    return _DISPATCH.tracer is not None


def _aten(name):
    return get_packet(name)


def _builtin(name):
    """A function that is one ATen op in torch (torch._C._nn.gelu ...): the op's packet itself,
    with the schema's signature and no Python frame (see reftrace/ops/nn_bindings.py)."""
    packet = PACKETS.get("aten::" + name)
    if packet is not None:
        return packet

    def missing(*args, **kwargs):
        raise NotImplementedError(f"reftrace: aten::{name} is not registered")
    return missing


# -- activations -----------------------------------------------------------------------------------

def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _aten("relu_")(input) if inplace else _aten("relu")(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _aten("relu6_")(input) if inplace else _aten("relu6")(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _aten("silu_")(input) if inplace else _aten("silu")(input)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _aten("elu_")(input, alpha) if inplace else _aten("elu")(input, alpha)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    name = "leaky_relu_" if inplace else "leaky_relu"
    return _aten(name)(input, negative_slope)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    # torch: _VF.threshold_ / _VF.threshold
    return _aten("threshold_" if inplace else "threshold")(input, threshold, value)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _aten("hardtanh_" if inplace else "hardtanh")(input, min_val, max_val)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Any) -> Tensor:
    return input.tanh()


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: DType | None = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: DType | None = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


# -- linear and convolution ------------------------------------------------------------------------

# conv1d, conv2d and avg_pool2d are torch's C++ builtins too: imported from ops/nn_bindings.py
if TYPE_CHECKING:  # (the op's schema signature: reftrace/_variable_functions.pyi)
    from .._variable_functions import (linear, bilinear, gelu, softplus, one_hot)
else:
    linear = _builtin("linear")
    bilinear = _builtin("bilinear")
    gelu = _builtin("gelu")
    softplus = _builtin("softplus")
    one_hot = _builtin("one_hot")


# -- pooling ---------------------------------------------------------------------------------------

@overload
def max_pool1d(
    input: Tensor,
    kernel_size: _int | _size,
    stride: _int | _size | None = None,
    padding: _int | _size = 0,
    dilation: _int | _size = 1,
    ceil_mode: bool = False,
    return_indices: Literal[False] = False,
) -> Tensor: ...
@overload
def max_pool1d(
    input: Tensor,
    kernel_size: _int | _size,
    stride: _int | _size | None,
    padding: _int | _size,
    dilation: _int | _size,
    ceil_mode: bool,
    return_indices: Literal[True],
    /,
) -> tuple[Tensor, Tensor]: ...
@overload
def max_pool1d(
    input: Tensor,
    kernel_size: _int | _size,
    stride: _int | _size | None = None,
    padding: _int | _size = 0,
    dilation: _int | _size = 1,
    ceil_mode: bool = False,
    *,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    stride = [] if stride is None else stride
    name = "max_pool1d_with_indices" if return_indices else "max_pool1d"
    return _aten(name)(input, kernel_size, stride, padding, dilation, ceil_mode)


@overload
def max_pool2d(
    input: Tensor,
    kernel_size: _int | _size,
    stride: _int | _size | None = None,
    padding: _int | _size = 0,
    dilation: _int | _size = 1,
    ceil_mode: bool = False,
    return_indices: Literal[False] = False,
) -> Tensor: ...
@overload
def max_pool2d(
    input: Tensor,
    kernel_size: _int | _size,
    stride: _int | _size | None,
    padding: _int | _size,
    dilation: _int | _size,
    ceil_mode: bool,
    return_indices: Literal[True],
    /,
) -> tuple[Tensor, Tensor]: ...
@overload
def max_pool2d(
    input: Tensor,
    kernel_size: _int | _size,
    stride: _int | _size | None = None,
    padding: _int | _size = 0,
    dilation: _int | _size = 1,
    ceil_mode: bool = False,
    *,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    stride = [] if stride is None else stride
    name = "max_pool2d_with_indices" if return_indices else "max_pool2d"
    return _aten(name)(input, kernel_size, stride, padding, dilation, ceil_mode)


def _list_with_default(out_size, defaults):
    """torch.nn.modules.utils._list_with_default: a None entry keeps the input's size."""
    if isinstance(out_size, numbers.Integral):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def adaptive_avg_pool2d(input: Tensor, output_size: _size_2_opt_t) -> Tensor:
    return _aten("adaptive_avg_pool2d")(input, _list_with_default(output_size, input.size()))


# -- normalisation and dropout ---------------------------------------------------------------------

def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _aten("batch_norm")(input, weight, bias, running_mean, running_var, training, momentum,
                               eps, True)


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    if isinstance(normalized_shape, numbers.Integral):  # torch's binding rejects a bare int here
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    return _aten("layer_norm")(input, normalized_shape, weight, bias, eps, True)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups]
                       + list(input.size()[2:]))
    return _aten("group_norm")(input, num_groups, weight, bias, eps, True)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    return _aten("dropout_" if inplace else "dropout")(input, p, training)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide channel-wise "
            "dropout on inputs with 2 spatial dimensions, a channel dimension, and an optional batch "
            "dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
            "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
            "dim. This behavior will change in a future release to interpret the input as one "
            "without a batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
            "dropout behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _aten("feature_dropout_" if inplace else "feature_dropout")(input, p, training)


# -- embedding, one_hot, padding, resampling -------------------------------------------------------

def _no_grad_embedding_renorm_(weight, input, max_norm, norm_type):
    _aten("embedding_renorm_")(weight.detach(), input, max_norm, norm_type)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    return _aten("embedding")(weight, input, padding_idx, scale_grad_by_freq, sparse)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    if isinstance(value, bool):  # torch's binding takes a bool for the float (recorded as 1.)
        value = float(value)
    return _aten("pad")(input, pad, mode, value)


def _is_integer(x):
    return isinstance(x, numbers.Integral) or (isinstance(x, Tensor) and not x.is_floating_point())


def _upsample_overload(name, nd, output_size, scale_factors):
    """The .vec overload, which torch's binding calls. One nuance decides printed code: a node's
    schema is the FIRST overload its inputs match (Node::maybeSchema), and a 1d op given a size
    (input, int[], [bool,] None) matches the plain overload too (``scales=None`` is its last
    argument), whose default then drops the None from ``.code``. Recording that overload
    records the same node, so the printer sees torch's schema."""
    if nd == 3 and scale_factors is None:
        return _aten(name).default
    return _aten(name).vec


def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input "
                    f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                    "(o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = size
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = scale_factor
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        if _tracing():
            # as torch: a float tensor per size while tracing (so the scale is not baked in),
            # floor(size(x, i).float() * tensor(scale)), then taken for a SymInt (aten::Int)
            output_size = [_aten("floor")((input.size(i + 2).float() * _creation.tensor(
                scale_factors[i], dtype=_dtype.float32)).float()) for i in range(dim)]
        else:
            output_size = [math.floor(input.shape_tuple[i + 2] * scale_factors[i])
                           for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    nd = input.dim()
    if mode in ("nearest", "nearest-exact") and nd in (3, 4, 5):
        name = f"upsample_nearest{nd - 2}d" if mode == "nearest" else f"_upsample_nearest_exact{nd - 2}d"
        return _upsample_overload(name, nd, output_size, scale_factors)(input, output_size,
                                                                         scale_factors)
    if mode == "area" and nd in (3, 4, 5):
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 3](input,
                                                                                      output_size)
    linear = {(3, "linear"): "upsample_linear1d", (4, "bilinear"): "upsample_bilinear2d",
              (5, "trilinear"): "upsample_trilinear3d", (4, "bicubic"): "upsample_bicubic2d"}
    if (nd, mode) in linear:
        name = linear[nd, mode]
        if antialias:
            name = f"_{name}_aa"
        return _upsample_overload(name, nd, output_size, scale_factors)(
            input, output_size, align_corners, scale_factors)
    if nd == 4 and mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        raise NotImplementedError("reftrace: interpolate(mode='lanczos') is not implemented")
    wrong = {(3, "bilinear"): "Got 3D input, but bilinear mode needs 4D input",
             (3, "trilinear"): "Got 3D input, but trilinear mode needs 5D input",
             (4, "linear"): "Got 4D input, but linear mode needs 3D input",
             (4, "trilinear"): "Got 4D input, but trilinear mode needs 5D input",
             (5, "linear"): "Got 5D input, but linear mode needs 3D input",
             (5, "bilinear"): "Got 5D input, but bilinear mode needs 4D input"}
    if (nd, mode) in wrong:
        raise NotImplementedError(wrong[nd, mode])
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: "
        f"nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})")


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    # Tensor.norm (torch.functional.norm) lowers to linalg_vector_norm(input, p, [dim], keepdim)
    if out is None:
        denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
        return input / denom
    # torch clamps in place on this branch, and a trace records it so (clamp_min_, div.out)
    denom = input.norm(p, dim, keepdim=True).clamp_min_(eps).expand_as(input)
    return _aten("div")(input, denom, out=out)


# -- losses ----------------------------------------------------------------------------------------

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction):
    """torch.nn._reduction.get_enum."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.")
        return 1
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _legacy_reduction(size_average, reduce):
    """torch.nn._reduction.legacy_get_string (the deprecated size_average / reduce flags)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
                  "instead.")
    return ret


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _aten("nll_loss_nd")(input, target, weight, _reduction_enum(reduction), ignore_index)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _aten("cross_entropy_loss")(input, target, weight, _reduction_enum(reduction),
                                       ignore_index, label_smoothing)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """torch 2.13's reference path: linear, reshape to (*batch, C, *out_features), cross_entropy.

    With ``options`` (outside tracing, on the chunked path's conditions) torch's chunked custom
    op computes it instead, in batch chunks with its own autograd node
    (reftrace/nn/modules/linear_cross_entropy.py; spec/nn-layers.md, NNL-11)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, "
                           f"got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, "
                           f"got {tuple(linear_bias.shape)}")
    if len(out_features) > 0 and len(num_batches) == 0:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    target_contains_probabilities = tuple(target.shape) == logits_shape
    if target_contains_probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    tracing = _DISPATCH.tracer is not None
    chunked = (reduction in {"mean", "sum", "none"} and label_smoothing == 0.0
               and target.dtype is _dtype.int64 and not out_features)
    if options is not None and (not chunked or tracing):
        shape = tuple(linear_bias.shape) if linear_bias is not None else None
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs "
            "reduction in {'mean','sum','none'}, label_smoothing == 0, target.dtype"
            " == int64, out_features == (). Got "
            f"reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={target.dtype}, out_features={out_features}"
            f", tracing={tracing}, linear_bias.shape={shape}.", stacklevel=2)
    elif options is not None:
        return _linear_cross_entropy_chunked(input, linear_weight, target, linear_bias, weight,
                                             reduction, ignore_index, options)
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes),
                                               in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias)
    logits = logits.reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


def _linear_cross_entropy_chunked(input, linear_weight, target, linear_bias, weight, reduction,
                                  ignore_index, options):
    """torch's chunked branch of F.linear_cross_entropy: unbatched input becomes a batch of
    one, the options are resolved for this call, and one of the two chunked ops runs."""
    from ..autograd.grad_mode import is_grad_enabled
    from .modules import linear_cross_entropy as lce  # lazy, as torch's (circular import)
    has_batches = input.dim() == 2
    if not has_batches:
        input = input.unsqueeze(0)
        target = target.unsqueeze(0)
    options = options._adjust(num_batches=input.shape[0], in_features=input.shape[-1],
                              num_classes=linear_weight.shape[0], dtype=input.dtype,
                              device=input.device)
    if reduction == "none":
        result = lce._linear_cross_entropy_batch_chunked_no_reduction(
            input, linear_weight, target, linear_bias, weight, ignore_index,
            options.batch_chunk_size, options.acc_policy, options.acc_dtype)
    else:
        grad_enabled = is_grad_enabled()
        result = lce._linear_cross_entropy_batch_chunked(
            input, linear_weight, target, linear_bias, weight, reduction, ignore_index, 0.0,
            options.batch_chunk_size, options.acc_policy, options.acc_dtype,
            options.allow_retain_graph, input.requires_grad and grad_enabled,
            linear_weight.requires_grad and grad_enabled,
            linear_bias is not None and linear_bias.requires_grad and grad_enabled)[0]
    return result if has_batches else result.squeeze(0)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor, target_lengths: Tensor,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    # one recorded op, aten::ctc_loss (int[] or Tensor lengths: the overload torch picks)
    return _aten("ctc_loss")(log_probs, targets, input_lengths, target_lengths, blank,
                             _reduction_enum(reduction), zero_infinity)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.", stacklevel=2)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    expanded_input, expanded_target = _aten("broadcast_tensors")([input, target])
    if weight is None:
        return _aten("mse_loss")(expanded_input, expanded_target, _reduction_enum(reduction))
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = _aten("pow")(expanded_input - expanded_target, 2) * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _aten("sum")(weighted)
    if reduction == "mean":
        return _aten("sum")(weighted) / _aten("sum")(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


# -- nn-layers: convolution-like data movement (torch's C++ builtins, one ATen op each) ------------

if TYPE_CHECKING:  # (the op's schema signature: reftrace/_variable_functions.pyi)
    from .._variable_functions import (pixel_shuffle, pixel_unshuffle, channel_shuffle,
                                      native_channel_shuffle)
else:
    pixel_shuffle = _builtin("pixel_shuffle")
    pixel_unshuffle = _builtin("pixel_unshuffle")
    channel_shuffle = _builtin("channel_shuffle")
    native_channel_shuffle = _builtin("native_channel_shuffle")


def _pair(x):
    from .modules.utils import _pair as pair
    return pair(x)


def unfold(input: Tensor, kernel_size: _size_any_t, dilation: _size_any_t = 1,
           padding: _size_any_t = 0, stride: _size_any_t = 1) -> Tensor:
    return _aten("im2col")(input, _pair(kernel_size), _pair(dilation), _pair(padding),
                           _pair(stride))


def fold(input: Tensor, output_size: _size_any_t, kernel_size: _size_any_t,
         dilation: _size_any_t = 1, padding: _size_any_t = 0, stride: _size_any_t = 1) -> Tensor:
    return _aten("col2im")(input, _pair(output_size), _pair(kernel_size), _pair(dilation),
                           _pair(padding), _pair(stride))



# -- nn-layers: pooling in 1d/2d/3d ----------------------------------------------------------------

if TYPE_CHECKING:  # (the op's schema signature: reftrace/_variable_functions.pyi)
    from .._variable_functions import (adaptive_avg_pool1d)
else:
    adaptive_avg_pool1d = _builtin("adaptive_avg_pool1d")


@overload
def max_pool3d(
    input: Tensor,
    kernel_size: _int | _size,
    stride: _int | _size | None = None,
    padding: _int | _size = 0,
    dilation: _int | _size = 1,
    ceil_mode: bool = False,
    return_indices: Literal[False] = False,
) -> Tensor: ...
@overload
def max_pool3d(
    input: Tensor,
    kernel_size: _int | _size,
    stride: _int | _size | None,
    padding: _int | _size,
    dilation: _int | _size,
    ceil_mode: bool,
    return_indices: Literal[True],
    /,
) -> tuple[Tensor, Tensor]: ...
@overload
def max_pool3d(
    input: Tensor,
    kernel_size: _int | _size,
    stride: _int | _size | None = None,
    padding: _int | _size = 0,
    dilation: _int | _size = 1,
    ceil_mode: bool = False,
    *,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    stride = [] if stride is None else stride
    name = "max_pool3d_with_indices" if return_indices else "max_pool3d"
    return _aten(name)(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: _size, stride: _size | None = None,
                            padding: _int | _size = 0, dilation: _int | _size = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size: _size, stride: _size | None = None,
                            padding: _int | _size = 0, dilation: _int | _size = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input: Tensor, kernel_size: _size, stride: _size | None = None,
                            padding: _int | _size = 0, dilation: _int | _size = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_avg_pool3d(input: Tensor, output_size: _size_3_opt_t) -> Tensor:
    return _aten("adaptive_avg_pool3d")(input, _list_with_default(output_size, input.size()))


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: _size,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    return _aten("adaptive_max_pool1d")(input, output_size)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: _size_2_opt_t,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    output_size = _list_with_default(output_size, input.size())
    return _aten("adaptive_max_pool2d")(input, output_size)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: _size_3_opt_t,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    output_size = _list_with_default(output_size, input.size())
    return _aten("adaptive_max_pool3d")(input, output_size)


@overload
def adaptive_max_pool1d(
    input: Tensor,
    output_size: _int | _size,
    return_indices: Literal[False] = False,
) -> Tensor: ...
@overload
def adaptive_max_pool1d(
    input: Tensor,
    output_size: _int | _size,
    return_indices: Literal[True],
    /,
) -> tuple[Tensor, Tensor]: ...
@overload
def adaptive_max_pool1d(
    input: Tensor,
    output_size: _int | _size,
    *,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...
def adaptive_max_pool1d(input, output_size, return_indices=False):
    if return_indices:
        return adaptive_max_pool1d_with_indices(input, output_size)
    return _aten("adaptive_max_pool1d")(input, output_size)[0]


@overload
def adaptive_max_pool2d(
    input: Tensor,
    output_size: _int | _size,
    return_indices: Literal[False] = False,
) -> Tensor: ...
@overload
def adaptive_max_pool2d(
    input: Tensor,
    output_size: _int | _size,
    return_indices: Literal[True],
    /,
) -> tuple[Tensor, Tensor]: ...
@overload
def adaptive_max_pool2d(
    input: Tensor,
    output_size: _int | _size,
    *,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...
def adaptive_max_pool2d(input, output_size, return_indices=False):
    if return_indices:
        return adaptive_max_pool2d_with_indices(input, output_size)
    return adaptive_max_pool2d_with_indices(input, output_size)[0]


@overload
def adaptive_max_pool3d(
    input: Tensor,
    output_size: _int | _size,
    return_indices: Literal[False] = False,
) -> Tensor: ...
@overload
def adaptive_max_pool3d(
    input: Tensor,
    output_size: _int | _size,
    return_indices: Literal[True],
    /,
) -> tuple[Tensor, Tensor]: ...
@overload
def adaptive_max_pool3d(
    input: Tensor,
    output_size: _int | _size,
    *,
    return_indices: Literal[True],
) -> tuple[Tensor, Tensor]: ...
def adaptive_max_pool3d(input, output_size, return_indices=False):
    if return_indices:
        return adaptive_max_pool3d_with_indices(input, output_size)
    return adaptive_max_pool3d_with_indices(input, output_size)[0]


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, n):
    """lp_pool1d/2d/3d: (sum x^p)^(1/p) through avg_pool times the window size, as torch."""
    max_pool = (max_pool1d, max_pool2d, max_pool3d)[n - 1]
    avg_pool = (avg_pool1d, avg_pool2d, avg_pool3d)[n - 1]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    window = kernel_size
    if n > 1:
        from .modules.utils import _ntuple
        window = 1
        for k in _ntuple(n)(kernel_size):
            window *= k
    return (_aten("sign")(out) * relu(_aten("abs")(out))).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: _size_1_t,
              stride: _size | None | int = None, ceil_mode: bool = False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: _size_2_t,
              stride: _size | None | int = None, ceil_mode: bool = False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: _size_3_t,
              stride: _size | None | int = None, ceil_mode: bool = False) -> Tensor:
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def _check_value(cond, message):
    """torch._check_value: a traced size makes ``cond`` a tensor, which torch refuses."""
    if not isinstance(cond, bool):
        raise RuntimeError(f"cond must be a bool, but got {type(cond)}. For tensor conditions, use "
                           "torch._check_tensor_all() to assert that all elements are true.")
    if not cond:
        raise ValueError(message)


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    input_size = input.size()
    default_size = []
    for d in range(len(kernel_size)):
        default_size.append((input_size[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d]
                            - 2 * padding[d])
    if output_size is None:
        ret = default_size
    else:
        if len(output_size) == len(kernel_size) + 2:
            output_size = output_size[2:]
        if len(output_size) != len(kernel_size):
            raise ValueError("output_size should be a sequence containing "
                             f"{len(kernel_size)} or {len(kernel_size) + 2} elements, but it has a "
                             f"length of '{len(output_size)}'")
        for d in range(len(kernel_size)):
            min_size = default_size[d] - stride[d]
            max_size = default_size[d] + stride[d]
            if not (min_size < output_size[d] < max_size):
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                                 f'{min_size} and {max_size})')
        ret = output_size
    for d in range(len(kernel_size)):
        _check_value(ret[d] >= 0, "max_unpooling: output_size must contain non-negative spatial "
                     f"dimensions, but got output_size[{d}]={ret[d]}")
    return ret


def _unpool_args(n, kernel_size, stride, padding):
    from .modules.utils import _ntuple
    tup = _ntuple(n)
    kernel_size = tup(kernel_size)
    return kernel_size, (tup(stride) if stride is not None else kernel_size), tup(padding)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: _size, stride: _size | None = None,
                 padding: _int | _size = 0, output_size: _size | None = None) -> Tensor:
    kernel_size, _stride, padding = _unpool_args(1, kernel_size, stride, padding)
    output_size = _unpool_output_size(input, kernel_size, _stride, padding, output_size)
    output_size = list(output_size) + [1] if isinstance(output_size, list) else output_size + (1,)
    return _aten("max_unpool2d")(input.unsqueeze(-1), indices.unsqueeze(-1),
                                 output_size).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: _size, stride: _size | None = None,
                 padding: _int | _size = 0, output_size: _size | None = None) -> Tensor:
    kernel_size, _stride, padding = _unpool_args(2, kernel_size, stride, padding)
    output_size = _unpool_output_size(input, kernel_size, _stride, padding, output_size)
    return _aten("max_unpool2d")(input, indices, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: _size, stride: _size | None = None,
                 padding: _int | _size = 0, output_size: _size | None = None) -> Tensor:
    kernel_size, _stride, padding = _unpool_args(3, kernel_size, stride, padding)
    output_size = _unpool_output_size(input, kernel_size, _stride, padding, output_size)
    return _aten("max_unpool3d")(input, indices, output_size, _stride, padding)


# -- nn-layers: the deprecated upsample functionals --------------------------------------------------

def upsample(input: Any, size: Any | None = None, scale_factor: Any | None = None,
             mode: str = "nearest", align_corners: Any | None = None) -> Tensor:
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Any, size: Any | None = None,
                     scale_factor: Any | None = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Any, size: Any | None = None,
                      scale_factor: Any | None = None) -> Tensor:
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- nn-layers: activations --------------------------------------------------------------------------

if TYPE_CHECKING:  # (the op's schema signature: reftrace/_variable_functions.pyi)
    from .._variable_functions import (prelu, log_sigmoid as logsigmoid, hardshrink, softshrink,
                                      elu_, leaky_relu_, hardtanh_, threshold_, relu_, celu_,
                                      selu_, rrelu_)
else:
    prelu = _builtin("prelu")
    logsigmoid = _builtin("log_sigmoid")
    hardshrink = _builtin("hardshrink")
    softshrink = _builtin("softshrink")
    elu_ = _builtin("elu_")
    leaky_relu_ = _builtin("leaky_relu_")
    hardtanh_ = _builtin("hardtanh_")
    threshold_ = _builtin("threshold_")
    relu_ = _builtin("relu_")
    celu_ = _builtin("celu_")
    selu_ = _builtin("selu_")
    rrelu_ = _builtin("rrelu_")


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _aten("hardswish_" if inplace else "hardswish")(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _aten("hardsigmoid_" if inplace else "hardsigmoid")(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _aten("mish_" if inplace else "mish")(input)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _aten("selu_" if inplace else "selu")(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _aten("celu_" if inplace else "celu")(input, alpha)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    return _aten("glu")(input, dim)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    return _aten("rrelu_" if inplace else "rrelu")(input, lower, upper, training)


def tanhshrink(input: Any) -> Tensor:
    return input - input.tanh()


def softsign(input: Any) -> Tensor:
    return input / (input.abs() + 1)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: DType | None = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    if dtype is None:
        return (-input).softmax(dim)
    return (-input).softmax(dim, dtype=dtype)


# -- nn-layers: normalisation ------------------------------------------------------------------------

def _verify_spatial_size(size):
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _aten("instance_norm")(input, weight, bias, running_mean, running_var, use_input_stats,
                                  momentum, eps, True)


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    return _aten("rms_norm")(input, normalized_shape, weight, eps)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got "
                         f"{dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


# -- nn-layers: dropout ------------------------------------------------------------------------------

def _channel_dropout(input, p, training, inplace, batched):
    """dropout1d / dropout3d: feature_dropout on a batch (an unbatched input unsqueezed)."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _aten("feature_dropout_" if inplace else "feature_dropout")(input, p, training)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
            "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout(input, p, training, inplace, inp_dim == 3)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide channel-wise "
            "dropout on inputs with 3 spatial dimensions, a channel dimension, and an optional batch "
            "dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, inp_dim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    _check_p(p)
    return _aten("alpha_dropout_" if inplace else "alpha_dropout")(input, p, training)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    _check_p(p)
    return _aten("feature_alpha_dropout_" if inplace else "feature_alpha_dropout")(input, p,
                                                                                  training)


# -- nn-layers: distances ----------------------------------------------------------------------------

if TYPE_CHECKING:  # (the op's schema signature: reftrace/_variable_functions.pyi)
    from .._variable_functions import (pairwise_distance, cosine_similarity, pdist)
else:
    pairwise_distance = _builtin("pairwise_distance")
    cosine_similarity = _builtin("cosine_similarity")
    pdist = _builtin("pdist")


# -- nn-layers: losses -------------------------------------------------------------------------------

def _loss_enum(size_average, reduce, reduction):
    """_Reduction.legacy_get_enum / get_enum."""
    if size_average is not None or reduce is not None:
        return _reduction_enum(_legacy_reduction(size_average, reduce))
    return _reduction_enum(reduction)


def _warn_target_size(input, target):
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", stacklevel=3)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    reduction_enum = _loss_enum(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        from ..ops._iter import broadcast_shapes
        weight = weight.expand(broadcast_shapes(target.shape_tuple, weight.shape_tuple))
    return _aten("binary_cross_entropy")(input, target, weight, reduction_enum)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    reduction_enum = _loss_enum(size_average, reduce, reduction)
    if not (target.size() == input.size()):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    return _aten("binary_cross_entropy_with_logits")(input, target, weight, pos_weight,
                                                      reduction_enum)


def _weighted_elementwise(loss, weight, input, reduction):
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _aten("sum")(weighted)
    if reduction == "mean":
        return weighted
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    expanded_input, expanded_target = _aten("broadcast_tensors")([input, target])
    if weight is not None:
        weighted = _weighted_elementwise(_aten("abs")(expanded_input - expanded_target), weight,
                                         input, reduction)
        if reduction == "mean":
            return _aten("sum")(weighted) / _aten("sum")(weight)
        return weighted
    return _aten("l1_loss")(expanded_input, expanded_target, _reduction_enum(reduction))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    expanded_input, expanded_target = _aten("broadcast_tensors")([input, target])
    if beta == 0.0:
        return _aten("l1_loss")(expanded_input, expanded_target, _reduction_enum(reduction))
    return _aten("smooth_l1_loss")(expanded_input, expanded_target, _reduction_enum(reduction),
                                   beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    _warn_target_size(input, target)
    expanded_input, expanded_target = _aten("broadcast_tensors")([input, target])
    if weight is None:
        return _aten("huber_loss")(expanded_input, expanded_target, _reduction_enum(reduction),
                                   delta)
    unweighted = _aten("huber_loss")(expanded_input, expanded_target, _reduction_enum("none"),
                                     delta)
    weighted = _weighted_elementwise(unweighted, weight, input, reduction)
    return weighted.mean() if reduction == "mean" else weighted


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,
           reduce: bool | None = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.", stacklevel=2)
        reduction_enum = _reduction_enum("sum" if reduction == "batchmean" else reduction)
    reduced = _aten("kl_div")(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _aten("poisson_nll_loss")(input, target, log_input, full, eps,
                                     _reduction_enum(reduction))


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float,
                      full: bool | None = False, eps: float | None = 1e-6,
                      reduction: str | None = "mean") -> Tensor:
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _aten("ones_like")(input)
    elif _aten("any")(var < 0):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = _aten("unsqueeze")(var, -1)
        elif input.ndim == var.ndim and sum(y for x, y in zip(input.size(), var.size())
                                            if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    from ..autograd import no_grad
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (_aten("log")(var) + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    reduction_enum = _loss_enum(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _aten("margin_ranking_loss")(input1, input2, target, margin, reduction_enum)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    return _aten("hinge_embedding_loss")(input, target, margin,
                                         _loss_enum(size_average, reduce, reduction))


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    return _aten("soft_margin_loss")(input, target, _loss_enum(size_average, reduce, reduction))


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    C = input.size(class_dim)
    loss = loss.sum(dim=class_dim) / C
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    reduction_enum = _loss_enum(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _aten("multi_margin_loss")(input, target, p, margin, weight, reduction_enum)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    return _aten("multilabel_margin_loss")(input, target,
                                           _loss_enum(size_average, reduce, reduction))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    return _aten("cosine_embedding_loss")(input1, input2, target, margin,
                                          _loss_enum(size_average, reduce, reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    reduction_enum = _loss_enum(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _aten("triplet_margin_loss")(anchor, positive, negative, margin, p, eps, swap,
                                        reduction_enum)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    if distance_function is None:
        distance_function = _aten("pairwise_distance")
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _aten("minimum")(dist_neg, distance_function(positive, negative))
    loss = _aten("clamp_min")(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return _aten("sum")(loss)
    if reduction == "mean":
        return _aten("mean")(loss)
    return loss


# -- nn-layers: sampling -----------------------------------------------------------------------------

def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_aten("empty_like")(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = gumbels.softmax(dim)
    if hard:
        index = y_soft.max(dim, keepdim=True)[1]
        y_hard = _aten("zeros_like")(logits).scatter_(dim, index, 1.0)
        return y_hard - y_soft.detach() + y_soft
    return y_soft


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: Any | None = None) -> Tensor:
    if mode not in _GRID_MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in _GRID_PADDING:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired. See the documentation of grid_sample for details.",
                      stacklevel=2)
        align_corners = False
    return _aten("grid_sampler")(input, grid, _GRID_MODES[mode], _GRID_PADDING[padding_mode],
                                 align_corners)


def affine_grid(theta: Tensor, size: list[int], align_corners: Any | None = None) -> Tensor:
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                      "old behavior is desired. See the documentation of grid_sample for details.",
                      stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
                                  f"transforms, respectively. Got size {size}.")
    if align_corners and min(spatial_size) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an issue for standard upsampling with "
                      "scale factors, but may cause issues when upsampling to target sizes of 1. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _aten("affine_grid_generator")(theta, size, align_corners)


# -- nn-layers: fractional max pooling ---------------------------------------------------------------

def _fractional_max_pool(n, input, kernel_size, output_size, output_ratio, _random_samples):
    from .modules.utils import _ntuple
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if n == 2 and len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                             "Int or tuple of Ints.")
        ratio = _ntuple(n)(output_ratio)
        output_size = [int(input.size(-n + i) * ratio[i]) for i in range(n)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == n + 1 else input.size(0)
        _random_samples = _aten("rand")(n_batch, input.size(-n - 1), n, dtype=input.dtype,
                                        device=input.device)
    return _aten(name)(input, kernel_size, output_size, _random_samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: _size,
                                       output_size: _size | None = None,
                                       output_ratio: _ratio_any_t | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: _size,
                                       output_size: _size | None = None,
                                       output_ratio: _ratio_any_t | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


@overload
def fractional_max_pool2d(
    input: Tensor,
    kernel_size: _int | _size,
    output_size: _int | _size | None = None,
    output_ratio: _ratio_any_t | None = None,
    return_indices: Literal[False] = False,
    _random_samples: Tensor | None = None,
) -> Tensor: ...
@overload
def fractional_max_pool2d(
    input: Tensor,
    kernel_size: _int | _size,
    output_size: _int | _size | None,
    output_ratio: _ratio_any_t | None,
    return_indices: Literal[True],
    /,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]: ...
@overload
def fractional_max_pool2d(
    input: Tensor,
    kernel_size: _int | _size,
    output_size: _int | _size | None = None,
    output_ratio: _ratio_any_t | None = None,
    *,
    return_indices: Literal[True],
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]: ...
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


@overload
def fractional_max_pool3d(
    input: Tensor,
    kernel_size: _int | _size,
    output_size: _int | _size | None = None,
    output_ratio: _ratio_any_t | None = None,
    return_indices: Literal[False] = False,
    _random_samples: Tensor | None = None,
) -> Tensor: ...
@overload
def fractional_max_pool3d(
    input: Tensor,
    kernel_size: _int | _size,
    output_size: _int | _size | None,
    output_ratio: _ratio_any_t | None,
    return_indices: Literal[True],
    /,
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]: ...
@overload
def fractional_max_pool3d(
    input: Tensor,
    kernel_size: _int | _size,
    output_size: _int | _size | None = None,
    output_ratio: _ratio_any_t | None = None,
    *,
    return_indices: Literal[True],
    _random_samples: Tensor | None = None,
) -> tuple[Tensor, Tensor]: ...
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]

if TYPE_CHECKING:  # (the op's schema signature: reftrace/_variable_functions.pyi)
    from .._variable_functions import (conv_tbc)
else:
    conv_tbc = _builtin("conv_tbc")
# == sequence and attention (torch/nn/functional.py: scaled_dot_product_attention,
# multi_head_attention_forward and its helpers, embedding_bag) ====================================

import math as _math  # noqa: E402

from .._dispatch import STATE as _TRACING  # noqa: E402
from .._dtype import bool as _bool_dtype, int64 as _long_dtype  # noqa: E402
from .. import _factories  # noqa: E402

if TYPE_CHECKING:  # (the op's schema signature: reftrace/_variable_functions.pyi)
    from .._variable_functions import (scaled_dot_product_attention)
else:
    scaled_dot_product_attention = _builtin("scaled_dot_product_attention")


def _is_tracing():
    return _TRACING.tracer is not None


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected with the packed (3E, E) weight: one linear when q is k is v (then
    unflatten/unsqueeze/transpose/squeeze/contiguous splits it, as torch does), two when k is v."""
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        if b is None:
            b_q = b_kv = None
        else:
            b_q, b_kv = b.split([E, E * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return (q_proj, kv_proj[0], kv_proj[1])
    w_q, w_k, w_v = w.chunk(3)
    if b is None:
        b_q = b_k = b_v = None
    else:
        b_q, b_k, b_v = b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, w, shape in (("query", w_q, (Eq, Eq)), ("key", w_k, (Eq, Ek)), ("value", w_v, (Eq, Ev))):
        if w.shape != shape:
            raise AssertionError(f"expecting {name} weights shape of {shape}, but got {w.shape}")
    for name, b_ in (("query", b_q), ("key", b_k), ("value", b_v)):
        if b_ is not None and b_.shape != (Eq,):
            raise AssertionError(f"expecting {name} bias shape of {(Eq,)}, but got {b_.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched (3-D query) or not (2-D); the masks' ranks checked."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but "
                                 f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` "
                                 f"or 2-D but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or "
                                 f"3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but "
                                 f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` "
                                 f"or 1-D but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, "
                                     f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected_shape = (num_heads, query.shape[0], key.shape[0])
                if attn_mask.shape != expected_shape:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected_shape} but got "
                                         f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask becomes the additive float mask (0 / -inf) in ``target_type``."""
    if mask is not None:
        _mask_dtype = mask.dtype
        _mask_is_float = mask.is_floating_point()
        if _mask_dtype is not _bool_dtype and not _mask_is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None and _mask_dtype != other_type:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                          "same type for both instead.", stacklevel=2)
        if not _mask_is_float:
            mask = _factories.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _check_key_padding_mask(key_padding_mask, src_len, bsz):
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor,
                                 embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Tensor | None, in_proj_bias: Tensor | None,
                                 bias_k: Tensor | None, bias_v: Tensor | None, add_zero_attn: bool,
                                 dropout_p: float, out_proj_weight: Tensor,
                                 out_proj_bias: Tensor | None, training: bool = True,
                                 key_padding_mask: Tensor | None = None, need_weights: bool = True,
                                 attn_mask: Tensor | None = None,
                                 use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None,
                                 k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None,
                                 static_k: Tensor | None = None, static_v: Tensor | None = None,
                                 average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """torch's slow path of MultiheadAttention, line for line (sequence-first layout): with
    need_weights, baddbmm/bmm + softmax + bmm; without, scaled_dot_product_attention."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len, _, _ = key.shape
    key_padding_mask = _canonical_mask(mask=key_padding_mask, mask_name="key_padding_mask",
                                       other_type=_none_or_dtype(attn_mask), other_name="attn_mask",
                                       target_type=query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to create "
                           "this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # the mask is dropped: scaled_dot_product_attention is told is_causal instead
        attn_mask = None
    else:
        attn_mask = _canonical_mask(mask=attn_mask, mask_name="attn_mask", other_type=None,
                                    other_name="", target_type=query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got "
                             f"{embed_dim}")
    if isinstance(embed_dim, Tensor):  # a traced size
        head_dim = embed_dim.div(num_heads, rounding_mode="trunc")
    else:
        head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        if in_proj_bias is None:
            b_q = b_k = b_v = None
        else:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight,
                                 b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            correct_2d_size = (tgt_len, src_len)
            if attn_mask.shape != correct_2d_size:
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                                   f"be {correct_2d_size}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            correct_3d_size = (bsz * num_heads, tgt_len, src_len)
            if attn_mask.shape != correct_3d_size:
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                                   f"be {correct_3d_size}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _aten("cat")([k, bias_k.repeat(1, bsz, 1)])
        v = _aten("cat")([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    else:
        if bias_k is not None:
            raise AssertionError("bias_k is set but bias_v is None")
        if bias_v is not None:
            raise AssertionError("bias_v is set but bias_k is None")

    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got "
                                 f"{static_k.size(0)}")
        if static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got {static_k.size(2)}")
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got "
                                 f"{static_v.size(0)}")
        if static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got {static_v.size(2)}")
        v = static_v

    if add_zero_attn:
        zero_attn_shape = (bsz * num_heads, 1, head_dim)
        k = _aten("cat")([k, _factories.zeros(zero_attn_shape, dtype=k.dtype, device=k.device)], dim=1)
        v = _aten("cat")([v, _factories.zeros(zero_attn_shape, dtype=v.dtype, device=v.device)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))

    src_len = k.size(1)
    if key_padding_mask is not None:
        if not _is_tracing():
            _check_key_padding_mask(key_padding_mask, src_len, bsz)
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len)
                            .expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len))
        if attn_mask is None:
            attn_mask = key_padding_mask
        else:
            attn_mask = attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        _B, _Nt, E = q.shape
        q_scaled = q * _math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            attn_output_weights = _aten("baddbmm")(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            attn_output_weights = _aten("bmm")(q_scaled, k.transpose(-2, -1))
        del q_scaled, k
        attn_output_weights = softmax(attn_output_weights, dim=-1)
        if dropout_p > 0.0:
            attn_output_weights = dropout(attn_output_weights, p=dropout_p)
        attn_output = _aten("bmm")(attn_output_weights, v)
        del v
        attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
        attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
        attn_output_weights = attn_output_weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            attn_output_weights = attn_output_weights.mean(dim=1)
        if not is_batched:
            attn_output = attn_output.squeeze(1)
            attn_output_weights = attn_output_weights.squeeze(0)
        return attn_output, attn_output_weights
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    attn_output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    del q, k, v
    attn_output = attn_output.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias)
    attn_output = attn_output.view(tgt_len, bsz, attn_output.size(1))
    if not is_batched:
        attn_output = attn_output.squeeze(1)
    return attn_output, None


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embeddings: one aten::embedding_bag (its padding_idx
    overload: torch passes all nine arguments); a 2-D input is B bags of equal length, whose
    offsets are an aten::arange over traced sizes."""
    if weight.dtype is _long_dtype and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not "
                         f"None, then it must have the same shape as the input ({input.shape})")
    if not weight.dim() == 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a "
                             "mini-batch of fixed length sequences. However, found offsets of type "
                             f"{type(offsets)}".replace("reftrace._tensor.Tensor", "torch.Tensor"))
        offsets = _factories.arange(0, input.numel(), input.size(1), dtype=input.dtype,
                                    device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode == "sum":
        mode_enum = 0
    elif mode == "mean":
        mode_enum = 1
    elif mode == "max":
        mode_enum = 2
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    else:
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported "
            f"for mode='sum' (got mode='{mode}'). Please open a feature request on GitHub.")
    ret, _, _, _ = _aten("embedding_bag")(weight, input, offsets, scale_grad_by_freq, mode_enum,
                                          sparse, per_sample_weights, include_last_offset,
                                          padding_idx)
    return ret
