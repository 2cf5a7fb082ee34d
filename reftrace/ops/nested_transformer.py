"""_transformer_encoder_layer_fwd on a nested tensor: transformer.cpp
transformer_encoder_layer_forward with ``use_nested_tensor``, attention.cpp
native_multi_head_attention_cpu on nested input, and the NestedTensorTransformerFunctions.cpp
helpers they call. TransformerEncoder runs every layer this way on its packed batch
(reftrace/_nested_tensor.py); the op's dense path is in nn_attention.py.

torch's arithmetic, step by step, on the packed rows ``R = sum(len_i)`` of the buffer:

- projections and the feed-forward block are one GEMM over all R rows (``NestedTensor_matmul``:
  ``mm(buffer, qkv_weight.t())``; ``NestedTensor_times_Tensor_plus_Tensor_addmm``:
  ``addmm(bias, buffer, w.t())``, the first feed-forward one followed by relu/gelu in place, as
  ``_addmm_activation``); the layer norms run over the R rows; residuals add buffers;
- attention works on the batch padded to the longest sequence T (``to_padded_tensor(0)``): q, k, v
  are ``(qkv + bias)``, q then times ``1 / sqrt(head_dim)`` computed in the dtype, heads split to
  (B, H, T, head_dim) (transform_bias_rescale_qkv); scores are one bmm over B * H; the softmax
  runs per sequence over its ``[H, len_i, len_i]`` block, every other entry 0
  (NestedTensor_softmax_dropout); the context is one bmm over B * H with those zeros; its
  first len_i rows per sequence, heads merged, are packed back (``_nested_from_padded`` with the
  0213 transform) for the output projection.

The steps call reftrace's own kernels (mm, addmm, bmm, softmax, layer_norm, gelu, relu) on the
same shapes torch's calls have, so the result is exact wherever those kernels are (spec SEQ-8).
"""
import numpy as np

from .._nested_tensor import wrap_buffer
from .._tensor import _fresh
from .activation import _softmax, gelu, relu
from .linalg import _t, addmm, bmm, mm
from .nested_ops import pack_rows, pad_rows


def transformer_encoder_layer_nested(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                     proj_bias, use_gelu, norm_first, eps, norm_weight_1,
                                     norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1,
                                     ffn_bias_1, ffn_weight_2, ffn_bias_2, mask, mask_type):
    """The encoder layer on the nested ``src``: a nested result with src's nested sizes."""
    buffer, sizes = src._buffer, src._nested_sizes
    if buffer.size == 0:  # (every sequence empty: torch returns src's buffer, rewrapped)
        return wrap_buffer(buffer, sizes, src.dtype, src.device)
    _check_attention_args(src, embed_dim, num_heads, qkv_weight, qkv_bias, mask)
    # (imported here: importing nn_norm at the top would register its family before the ones
    # sorted ahead of it, reordering the op table and the stubs generated from it)
    from .nn_norm import layer_norm
    d = int(sizes[0, 1])
    src_rows = _fresh(buffer.reshape(-1, d), src.dtype, src.device)

    def norm(x, weight, bias):  # NestedTensor_layer_norm: LayerNormKernel over the R rows
        if weight is None or bias is None:
            raise RuntimeError("NestedTensor layer_norm requires weight and bias")
        return layer_norm.kernel(x, [d], weight, bias, eps, True)

    x = norm(src_rows, norm_weight_1, norm_bias_1) if norm_first else src_rows
    x = _self_attention(x, sizes[:, 0], embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                        proj_bias)
    x._array += src_rows._array  # (NestedTensor_add_NestedTensor_in_place)
    if not norm_first:
        x = norm(x, norm_weight_1, norm_bias_1)
    residual = x
    if norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    h = addmm.kernel(ffn_bias_1, x, _t(ffn_weight_1), 1, 1)
    h = gelu.kernel(h, "none") if use_gelu else relu.kernel(h)  # (_addmm_activation)
    x = addmm.kernel(ffn_bias_2, h, _t(ffn_weight_2), 1, 1)
    x._array += residual._array
    if not norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    return wrap_buffer(x._array.reshape(-1), sizes, src.dtype, src.device)


def _check_attention_args(src, embed_dim, num_heads, qkv_weight, qkv_bias, mask):
    """native_multi_head_attention_cpu's checks that apply to a nested query."""
    if mask is not None:
        raise RuntimeError("NestedTensor with mask is not supported yet")
    if qkv_weight.dim() != 2:
        raise RuntimeError(f"expected 2-D `qkv_weight`, got {qkv_weight.dim()}-D tensor")
    if qkv_weight.shape_tuple[0] != 3 * embed_dim:
        raise RuntimeError("expected `qkv_weight` first dim to be 3x embed_dim")
    if qkv_weight.shape_tuple[1] != embed_dim:
        raise RuntimeError("expected `qkv_weight` second dim to be embed_Dim")
    if qkv_bias.dim() != 1:
        raise RuntimeError(f"expected 1-D `qkv_bias`, got {qkv_bias.dim()}-D tensor")
    if qkv_bias.shape_tuple[0] != 3 * embed_dim:
        raise RuntimeError("expected `qkv_bias` first dim and first dim of query to be equal")
    if embed_dim % num_heads:
        raise RuntimeError("`embed_dim` must divide evenly by `num_heads`")
    if src._nested_sizes[0, 1] != embed_dim:  # (Matmul's check of the buffer's last dim)
        raise RuntimeError(
            "Shape mismatch for NestedTensor Matmul: Expected input's (a nested tensor) "
            f"'last_dim' to equal 'weight.size(0),' but got: last_dim = {src._nested_sizes[0, 1]}"
            f", and weight.size(0) = {embed_dim}")


def _self_attention(x, lengths, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                    proj_bias):
    """native_multi_head_attention_cpu(x, x, x, ...)[0] on the packed rows ``x`` (R, D) of
    sequences of ``lengths``: the packed (R, D) result."""
    dt, dev = x.dtype, x.device
    B, T, D, H = len(lengths), int(lengths.max()), embed_dim, num_heads
    dh = D // H
    qkv = mm.kernel(x, _t(qkv_weight))._array  # (R, 3D)
    # transform_bias_rescale_qkv: the padded batch (rows past a sequence's end are 0 + bias)
    padded = pad_rows(qkv, lengths, np.zeros((B, T, 3 * D), dt.np))
    padded += qkv_bias._array
    scale = dt.np.type(1.0 / float(np.sqrt(dt.np.type(dh))))  # 1.0 / std::sqrt(scalar_t(dh))
    padded[..., :D] *= scale
    heads = padded.reshape(B, T, 3, H, dh).transpose(2, 0, 3, 1, 4).reshape(3, B * H, T, dh)
    q, k, v = (_fresh(np.ascontiguousarray(a), dt, dev) for a in heads)
    scores = bmm.kernel(q, _fresh(k._array.transpose(0, 2, 1), dt, dev))._array.reshape(B, H, T, T)
    weights = np.zeros_like(scores)  # NestedTensor_softmax_dropout: per sequence, zeros elsewhere
    for i, n in enumerate(lengths):
        if n:
            block = _fresh(scores[i, :, :n, :n], dt, dev)
            weights[i, :, :n, :n] = _softmax.kernel(block, -1, False)._array
    ctx = bmm.kernel(_fresh(weights.reshape(B * H, T, T), dt, dev), v)._array
    # _nested_from_padded(ctx, sizes, transform_0213=True): (B, T, H * dh), then the real rows
    merged = ctx.reshape(B, H, T, dh).transpose(0, 2, 1, 3).reshape(B, T, D)
    rows = _fresh(pack_rows(merged, lengths), dt, dev)
    return addmm.kernel(proj_bias, rows, _t(proj_weight), 1, 1)
