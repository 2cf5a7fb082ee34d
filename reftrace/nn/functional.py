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
import numbers
import warnings

from .._tensor import Tensor
from ..ops import PACKETS, get_packet
from ..ops.nn_bindings import avg_pool2d, conv1d, conv2d  # noqa: F401  (torch's C++ builtins)


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

def relu(input, inplace=False):
    return _aten("relu_")(input) if inplace else _aten("relu")(input)


def relu6(input, inplace=False):
    return _aten("relu6_")(input) if inplace else _aten("relu6")(input)


def silu(input, inplace=False):
    return _aten("silu_")(input) if inplace else _aten("silu")(input)


def elu(input, alpha=1.0, inplace=False):
    return _aten("elu_")(input, alpha) if inplace else _aten("elu")(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    name = "leaky_relu_" if inplace else "leaky_relu"
    return _aten(name)(input, negative_slope)


def threshold(input, threshold, value, inplace=False):
    # torch: _VF.threshold_ / _VF.threshold
    return _aten("threshold_" if inplace else "threshold")(input, threshold, value)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _aten("hardtanh_" if inplace else "hardtanh")(input, min_val, max_val)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


# -- linear and convolution ------------------------------------------------------------------------

# conv1d, conv2d and avg_pool2d are torch's C++ builtins too: imported from ops/nn_bindings.py
linear = _builtin("linear")
bilinear = _builtin("bilinear")
gelu = _builtin("gelu")
softplus = _builtin("softplus")
one_hot = _builtin("one_hot")


# -- pooling ---------------------------------------------------------------------------------------

def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    stride = [] if stride is None else stride
    name = "max_pool1d_with_indices" if return_indices else "max_pool1d"
    return _aten(name)(input, kernel_size, stride, padding, dilation, ceil_mode)


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


def adaptive_avg_pool2d(input, output_size):
    return _aten("adaptive_avg_pool2d")(input, _list_with_default(output_size, input.size()))


# -- normalisation and dropout ---------------------------------------------------------------------

def _verify_batch_size(size):
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _aten("batch_norm")(input, weight, bias, running_mean, running_var, training, momentum,
                               eps, True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, numbers.Integral):  # torch's binding rejects a bare int here
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    return _aten("layer_norm")(input, normalized_shape, weight, bias, eps, True)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups]
                       + list(input.size()[2:]))
    return _aten("group_norm")(input, num_groups, weight, bias, eps, True)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return _aten("dropout_" if inplace else "dropout")(input, p, training)


def dropout2d(input, p=0.5, training=True, inplace=False):
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


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
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


def pad(input, pad, mode="constant", value=None):
    return _aten("pad")(input, pad, mode, value)


def _is_integer(x):
    return isinstance(x, numbers.Integral) or (isinstance(x, Tensor) and not x.is_floating_point())


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    spatial = list(input.shape_tuple[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input "
                    f"with spatial dimensions of {spatial} and output size of {size}. Please provide "
                    "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                    "format.")
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
                    f"input with spatial dimensions of {spatial} and scale_factor of shape "
                    f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = scale_factor
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        # NOTE a known difference: while tracing, torch computes these sizes as tensors,
        # floor(size(x, i).float() * tensor(scale)), and a float 0-dim tensor is then accepted for
        # the SymInt[] size (recorded as aten::Int); the op table's binder takes only integral
        # 0-dim tensors, so reftrace reads the sizes untraced: they are constants of the trace.
        output_size = [int(input.shape_tuple[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias:
        raise NotImplementedError("reftrace: interpolate(antialias=True) is not implemented")
    if mode == "nearest" and dim in (1, 2):
        return _aten(f"upsample_nearest{dim}d").vec(input, output_size, scale_factors)
    if mode == "area" and dim == 2:
        return adaptive_avg_pool2d(input, output_size)
    if mode == "bilinear" and dim == 2:
        return _aten("upsample_bilinear2d").vec(input, output_size, align_corners, scale_factors)
    if mode == "bilinear" and dim == 1:
        raise NotImplementedError("Got 3D input, but bilinear mode needs 4D input")
    raise NotImplementedError(f"reftrace: interpolate(mode={mode!r}) on {input.dim()}D input is not "
                              "implemented (nearest 3D/4D, bilinear 4D and area 4D are)")


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is not None:
        raise NotImplementedError("reftrace: normalize(out=...) is not implemented")
    # Tensor.norm (torch.functional.norm) lowers to linalg_vector_norm(input, p, [dim], keepdim)
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


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


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _aten("nll_loss_nd")(input, target, weight, _reduction_enum(reduction), ignore_index)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _aten("cross_entropy_loss")(input, target, weight, _reduction_enum(reduction),
                                       ignore_index, label_smoothing)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
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


# == sequence and attention (torch/nn/functional.py: scaled_dot_product_attention,
# multi_head_attention_forward and its helpers, embedding_bag) ====================================

import math as _math  # noqa: E402

from .._dispatch import STATE as _TRACING  # noqa: E402
from .._dtype import bool as _bool_dtype, int64 as _long_dtype  # noqa: E402
from .. import _factories  # noqa: E402

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


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                 out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
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


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
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
