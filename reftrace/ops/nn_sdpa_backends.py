"""scaled_dot_product_attention as autograd sees it: the CPU backend torch picks and its graph.

``scaled_dot_product_attention`` is CompositeImplicitAutograd (attention.cpp): with inputs that
require grad, torch's autograd records whichever backend ``_fused_sdp_choice`` picks on CPU
(sdp_utils_cpp.cpp, ``_sdpa_uses_flash`` in nn_attention.py):

- the flash kernel ``_scaled_dot_product_flash_attention_for_cpu`` (its own node,
  ScaledDotProductFlashAttentionForCpuBackward0; its backward op has no derivative, so a double
  backward through it raises, as in torch);
- otherwise the math path ``_scaled_dot_product_attention_math``, composite too: its ops record
  themselves (MulBackward0, the matmuls' UnsafeViewBackward0 / BmmBackward0, AddBackward0 for a
  mask, SafeSoftmaxBackward0, dropout's MulBackward0).

A bool mask is first converted to an additive one (0 where True, -inf where False). The eager
kernel without grad (nn_attention.py) is not involved: it stays as fast as it was.
"""
import math

import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, xp_of
from ._registry import composite, derivatives, get_packet, op
from .nn_attention import (_in_memory_order, _laid_out, _safe_softmax, _sdpa_uses_flash,
                           check_sdpa_dtypes, gqa_repeats, scaled_dot_product_attention)


@composite(scaled_dot_product_attention)
def _sdpa_autograd(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    check_sdpa_dtypes(query, key, value)
    use_flash = _sdpa_uses_flash(query, key, value, attn_mask, dropout_p, enable_gqa)
    attn_mask = _convert_boolean_attn_mask(attn_mask, query.dtype)
    if use_flash:
        return _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal,
                                                           attn_mask=attn_mask, scale=scale)[0]
    return _scaled_dot_product_attention_math(query, key, value, attn_mask, dropout_p, is_causal,
                                              scale, enable_gqa)


def _convert_boolean_attn_mask(mask, dtype):
    """attention.cpp convert_boolean_attn_mask: True (attend) -> 0, False -> -inf; a float mask
    is kept (not differentiable here: a bool has no gradient)."""
    if mask is None or mask.dtype is not D.bool:
        return mask
    xp = xp_of(mask)
    t = dtype.np.type
    return _fresh(xp.where(mask._array, t(0.0), t(-np.inf)), dtype, mask.device)


# -- the math path ---------------------------------------------------------------------------------

def _scaled_dot_product_attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                       enable_gqa):
    """attention.cpp _scaled_dot_product_attention_math (its first result), as recorded ops:
    q and k^T are each scaled by sqrt(scale) before the matmul; half precision runs in float."""
    origin = query.dtype
    if origin is D.float16:  # (and bfloat16, which NumPy lacks)
        query, key, value = (t.to(D.float32) for t in (query, key, value))
    negative = scale is not None and scale < 0.0
    factor = math.sqrt(abs(scale) if scale is not None else 1.0 / math.sqrt(query.shape[-1]))
    q = query * (0.0 - factor if negative else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                               "when is_causal=True")
        L, S = q.shape[-2], key.shape[-2]
        causal = _fresh(np.tri(L, S, dtype=bool), D.bool, query.device)
        attn_mask = _convert_boolean_attn_mask(causal, q.dtype)
    key, value = _pre_process_group_query_attention_input(q, key, value, enable_gqa)
    matmul = get_packet("matmul")
    attn = matmul(q, key.transpose(-2, -1) * factor)
    if attn_mask is not None:
        attn = attn + attn_mask
    attn = get_packet("_safe_softmax")(attn, -1)
    if dropout_p > 0.0:
        attn = get_packet("dropout")(attn, dropout_p, True)
    out = matmul(attn, value)
    return out.to(origin) if out.dtype is not origin else out


def _pre_process_group_query_attention_input(query, key, value, enable_gqa):
    """attention.cpp: with enable_gqa, each key/value head serves several query heads."""
    if not enable_gqa or query.dim() < 3:
        return key, value
    q_heads, k_heads, v_heads = query.shape[-3], key.shape[-3], value.shape[-3]
    if q_heads == k_heads and q_heads == v_heads:
        return key, value
    rep_k, rep_v = gqa_repeats(q_heads, k_heads, v_heads)
    return key.repeat_interleave(rep_k, -3), value.repeat_interleave(rep_v, -3)


# -- the flash kernel (FlashAttentionKernel.cpp) ---------------------------------------------------

def _flash_scores(q, k, attn_mask, is_causal, scale, xp):
    """q @ k^T * scale with the causal (top-left) and additive masks: (B, H, L, S), k's heads
    repeated for grouped-query attention."""
    dt = q.dtype
    if k.shape[1] != q.shape[1]:
        k = xp.repeat(k, q.shape[1] // k.shape[1], axis=1)
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ xp.swapaxes(k, -1, -2)
    scores *= dt.type(factor)
    if is_causal:
        scores = xp.where(xp.tri(q.shape[2], k.shape[2], dtype=bool), scores, dt.type(-np.inf))
    if attn_mask is not None:
        scores = scores + attn_mask._array.astype(dt, copy=False)
    return scores.astype(dt, copy=False), dt.type(factor)


@op("_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, "
    "float dropout_p=0., bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) "
    "-> (Tensor output, Tensor logsumexp)")
def _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal, attn_mask,
                                                scale):
    """The output (in the query's layout) and each row's log-sum-exp of the scores (B, H, L),
    stored (B, L, H) as the kernel writes it."""
    if dropout_p > 0.0:
        raise RuntimeError("scaled_dot_product_attention_flash_attention: Currently do not "
                           "support dropout > 0")
    xp = xp_of(query)
    q, k, v = _accumulated(query, key, value)
    scores, _ = _flash_scores(q, k, attn_mask, is_causal, scale, xp)
    if v.shape[1] != q.shape[1]:
        v = xp.repeat(v, q.shape[1] // v.shape[1], axis=1)
    out = (_safe_softmax(scores, xp) @ v).astype(query.dtype.np, copy=False)
    m = scores.max(-1, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        lse = (xp.log(xp.exp(scores - m).sum(-1, keepdims=True)) + m)[..., 0]
    return (_laid_out(out, query, xp),
            _in_memory_order(lse, (0, 2, 1), D.from_numpy_dtype(lse.dtype), query.device, xp))


def _accumulated(*tensors):
    """The kernel's arrays in its accumulation type: float for half."""
    return [t._array.astype(np.float32) if t.dtype is D.float16 else t._array for t in tensors]


derivatives(_scaled_dot_product_flash_attention_for_cpu, {
    "query, key, value": "_scaled_dot_product_flash_attention_for_cpu_backward(grad, query, key, "
                         "value, output, logsumexp, dropout_p, is_causal, attn_mask=attn_mask, "
                         "scale=scale)"},
    output_differentiability=[True, False])


@op("_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, "
    "Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, "
    "Tensor? attn_mask=None, float? scale=None) -> (Tensor grad_query, Tensor grad_key, "
    "Tensor grad_value)")
def _scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out,
                                                         logsumexp, dropout_p, is_causal,
                                                         attn_mask, scale):
    """Attention's backward from the saved log-sum-exp: P = exp(scores - lse), dV = P^T dO,
    dS = P * (dO V^T - rowsum(dO * O)), dQ = dS K * scale, dK = dS^T Q * scale (summed over a
    group's query heads). No derivative of its own (torch has none either)."""
    xp = xp_of(query)
    q, k, v, g, o = _accumulated(query, key, value, grad_out, out)
    scores, factor = _flash_scores(q, k, attn_mask, is_causal, scale, xp)
    lse = logsumexp._array[..., None]
    with np.errstate(invalid="ignore"):
        p = xp.where(xp.isfinite(lse), xp.exp(scores - lse), q.dtype.type(0))
    rep = q.shape[1] // k.shape[1]
    if rep > 1:
        k, v = xp.repeat(k, rep, axis=1), xp.repeat(v, rep, axis=1)
    grad_v = xp.swapaxes(p, -1, -2) @ g
    ds = p * (g @ xp.swapaxes(v, -1, -2) - (g * o).sum(-1, keepdims=True))
    grad_q = (ds @ k) * factor
    grad_k = (xp.swapaxes(ds, -1, -2) @ q) * factor
    if rep > 1:  # a key/value head's gradient sums those of the query heads it served
        B, H, S, E = grad_k.shape
        grad_k = grad_k.reshape(B, H // rep, rep, S, E).sum(2)
        grad_v = grad_v.reshape(B, H // rep, rep, S, grad_v.shape[-1]).sum(2)
    # (the kernel writes each gradient (B, seq, H, E) in memory)
    return tuple(_in_memory_order(a.astype(query.dtype.np, copy=False), (0, 2, 1, 3), query.dtype,
                                  query.device, xp) for a in (grad_q, grad_k, grad_v))
