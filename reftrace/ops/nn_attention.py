"""Attention: scaled_dot_product_attention, MultiheadAttention's fast path
(_native_multi_head_attention), the encoder layer's (_transformer_encoder_layer_fwd), baddbmm.

What torch 2.13 records and computes (probed):
- ``F.scaled_dot_product_attention`` records one ``aten::scaled_dot_product_attention(q, k, v,
  attn_mask, dropout_p, is_causal, scale, enable_gqa)``. A bool mask marks the positions that TAKE
  PART (True = attend); a float mask is added to the scores; ``is_causal`` with a mask is an
  error. Rows with no position left give zeros (torch's safe softmax), not NaN.
  Layout: on CPU torch picks its flash kernel for 4-D inputs with equal head dims, no dropout and
  unit last strides (``_fused_sdp_choice`` = 1): the result then has the QUERY's strides;
  otherwise the math kernel's contiguous result.
- ``_native_multi_head_attention`` (MHA's fast path) projects q, k, v with the packed weight,
  scales q by 1/sqrt(head_dim), applies the mask as a BOOL mask (a float mask is converted:
  nonzero = masked out, so -inf and 5.0 both mask), softmaxes with fully masked rows giving
  zeros, and returns (out, weights): weights are averaged over heads when asked, and the second
  result is an undefined tensor (None) when need_weights is False.
"""
import functools
import math

import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _fresh, _init, _new, _strided, contiguous_strides, xp_of
from .._device import strided
from ._registry import derivatives, get_packet, op
from .linalg import _check_bmm, scaled_product
from .nn_misc import _dropout
from ._layout_cache import keep_plan


# -- baddbmm ---------------------------------------------------------------------------------------

@op("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    variants=("function", "method"))
def baddbmm(self, batch1, batch2, beta, alpha):
    """beta * self + alpha * (batch1 @ batch2), self broadcast to the product's shape."""
    for name, m in (("batch1", batch1), ("batch2", batch2)):
        if m._array.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    _check_bmm(batch1._array.shape, batch2._array.shape, batch1.dtype, batch2.dtype)
    if self.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {self.dtype.ir_name}, "
                           f"batch1: {batch1.dtype.ir_name}, batch2: {batch2.dtype.ir_name}")
    target = (batch1._array.shape[0], batch1._array.shape[1], batch2._array.shape[2])
    try:
        np.broadcast_shapes(self._array.shape, target)
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({target[-1]}) must match the existing "
                           f"size ({self._array.shape[-1]}) at non-singleton dimension "
                           f"{len(self._array.shape) - 1}.  Target sizes: {list(target)}.  Tensor "
                           f"sizes: {list(self._array.shape)}") from None
    return scaled_product(batch1, batch2, "bmm", self, beta, alpha)


derivatives(baddbmm, {
    "self": "maybe_multiply(grad, beta.conjugate())",
    "batch1": "maybe_multiply(grad.bmm(batch2.transpose(1, 2).conj()), alpha.conjugate())",
    "batch2": "maybe_multiply(batch1.transpose(1, 2).conj().bmm(grad), alpha.conjugate())"})


# -- scaled_dot_product_attention ------------------------------------------------------------------

def _safe_softmax(scores, xp):
    """softmax over the last dim; a row that is all -inf gives zeros (torch's _safe_softmax)."""
    if xp is np:  # the same steps as below through the ufuncs themselves (ndarray.max, .sum
        # and .all are Python wrappers of these reductions) and in place
        m = np.maximum.reduce(scores, axis=-1, keepdims=True)
        if np.isfinite(m).all():
            e = np.subtract(scores, m)
            np.exp(e, out=e)
            e /= np.add.reduce(e, axis=-1, keepdims=True)
            return e
    m = scores.max(-1, keepdims=True)
    finite = xp.isfinite(m)
    if finite.all():  # the common case: every row has a position to attend to
        e = xp.exp(scores - m)
        e /= e.sum(-1, keepdims=True)
        return e
    e = xp.exp(scores - xp.where(finite, m, 0))
    s = e.sum(-1, keepdims=True)
    return xp.where(finite, e / xp.where(s == 0, 1, s), 0).astype(scores.dtype, copy=False)


@functools.lru_cache(maxsize=64)
def _causal_mask(L, S):
    """tril of ones (L, S) as bools, made once per shape (read-only: it is shared)."""
    mask = np.tri(L, S, dtype=bool)
    mask.flags.writeable = False
    return mask


@functools.lru_cache(maxsize=64)
def _causal_masked_out(L, S):
    """The positions _causal_mask leaves out (read-only, shared by the kernel's plans)."""
    mask = ~_causal_mask(L, S)
    mask.flags.writeable = False
    return mask


def _sdpa_uses_flash(query, key, value, attn_mask, dropout_p, enable_gqa=False):
    """torch's CPU choice of its flash kernel (sdp_utils_cpp.cpp use_flash_attention_cpp): it
    decides the result's layout and, with grad, the graph (nn_sdpa_backends.py)."""
    q, k, v = query._array, key._array, value._array
    if not (q.ndim == 4 and k.ndim == 4 and v.ndim == 4 and dropout_p == 0.0):
        return False
    if not q.shape[0] == k.shape[0] == v.shape[0]:
        return False
    if enable_gqa:  # (check_grouped_query_attention: kv heads equal and dividing q's)
        if k.shape[1] != v.shape[1] or q.shape[1] % k.shape[1]:
            return False
    elif not q.shape[1] == k.shape[1] == v.shape[1]:
        return False
    if attn_mask is not None and not _mask_fits_flash(attn_mask, q.shape, k.shape):
        return False
    return (q.shape[-1] == k.shape[-1] == v.shape[-1] and q.shape[2] != 0 and k.shape[2] != 0
            and query.stride()[-1] == 1 and key.stride()[-1] == 1 and value.stride()[-1] == 1
            and query.dtype in (D.float32, D.float64, D.float16))  # (and bfloat16: NumPy has none)


def _mask_fits_flash(mask, q_shape, k_shape):
    """sdp_utils_cpp.h check_attn_mask_shape: no grad; (L, S) or (B, H, L, S), each size equal or 1."""
    if mask.requires_grad:
        return False
    shape = mask._array.shape
    fits = (lambda d, n: d == n or d == 1)
    if len(shape) < 2 or not (fits(shape[-2], q_shape[2]) and fits(shape[-1], k_shape[2])):
        return False
    return len(shape) == 2 or (len(shape) == 4 and fits(shape[0], q_shape[0])
                               and fits(shape[1], q_shape[1]))


@op("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
    "float dropout_p=0., bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor")
def scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                 enable_gqa):
    if dropout_p == 0.0 and not enable_gqa:
        plan = _sdpa_plan(query, key, value, attn_mask, is_causal, scale)
        if plan is not None:
            return _sdpa_planned(plan, query, key, value, attn_mask)
    if is_causal and attn_mask is not None and not _sdpa_uses_flash(query, key, value, attn_mask,
                                                                     dropout_p, enable_gqa):
        # (only the math kernel refuses; torch's flash kernel applies both)
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    check_sdpa_dtypes(query, key, value)
    xp = xp_of(query)
    q, k, v = query._array, key._array, value._array
    if enable_gqa and q.ndim >= 3 and not q.shape[-3] == k.shape[-3] == v.shape[-3]:
        rep_k, rep_v = gqa_repeats(q.shape[-3], k.shape[-3], v.shape[-3])
        k, v = xp.repeat(k, rep_k, axis=-3), xp.repeat(v, rep_v, axis=-3)
    if q.shape[-1] != k.shape[-1]:
        n = int(np.prod(q.shape[:-2]))
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {q.shape[-1]}] but got: [{n}, {k.shape[-1]}].")
    L, S = q.shape[-2], k.shape[-2]
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    dt = query.dtype.np
    scores = q @ xp.swapaxes(k, -1, -2)
    scores *= dt.type(factor)
    if is_causal:
        mask = _causal_mask(L, S) if xp is np else xp.tri(L, S, dtype=bool)
        scores = xp.where(mask, scores, dt.type(-np.inf))
    if attn_mask is not None:
        m = attn_mask._array
        if attn_mask.dtype is D.bool:
            scores = xp.where(m, scores, dt.type(-np.inf))
        else:
            scores = scores + m.astype(dt, copy=False)
    weights = _safe_softmax(scores.astype(dt, copy=False), xp)
    if dropout_p > 0.0:
        weights = _dropout(_fresh(weights, query.dtype, query.device), dropout_p, True, False,
                           False)._array
    out = (weights @ v).astype(dt, copy=False)
    if query._stride is not None and _sdpa_uses_flash(query, key, value, attn_mask, dropout_p,
                                                       enable_gqa):
        return _laid_out(out, query, xp)  # (a contiguous query gives a contiguous result anyway)
    return _fresh(out, query.dtype, query.device)


# -- the kernel's fast path: a plan per call signature ---------------------------------------------
# A model calls attention with the same shapes, layouts and flags every time: what the general
# path above derives from them (the checks, the scale, the causal mask, flash's output layout) is
# derived once into a plan. The arithmetic is the general path's, step for step (the same matmul
# calls on the same arrays, the same ufuncs), done in place on the fresh scores array; the product
# with v is written straight into the flash layout's memory (BLAS writes each element alike
# whatever the output's row stride).

_PLANS = {}  # call signature -> plan tuple, or False: not covered (the general path runs)
_FAST_DTYPES = (D.float32, D.float64)


def _sdpa_plan(query, key, value, attn_mask, is_causal, scale):
    """The plan for this call's signature (made on first sight), or None: the general path."""
    if scale is not None and scale == 0.0:
        return None  # (0.0 and -0.0 are one key)
    if attn_mask is None:
        sig = (query.dtype, key.dtype, value.dtype, query._array.shape, key._array.shape,
               value._array.shape, query._stride, key._stride, value._stride, is_causal, scale,
               query.device)
    else:
        sig = (query.dtype, key.dtype, value.dtype, query._array.shape, key._array.shape,
               value._array.shape, query._stride, key._stride, value._stride, is_causal, scale,
               query.device, attn_mask.dtype, attn_mask._array.shape, attn_mask.requires_grad)
    plan = _PLANS.get(sig)
    if plan is None:
        # (a model has a few; causal plans hold an (L, S) mask)
        plan = keep_plan(_PLANS, sig,
                         _make_sdpa_plan(query, key, value, attn_mask, is_causal, scale), 64)
    return plan or None


def _make_sdpa_plan(query, key, value, attn_mask, is_causal, scale):
    """(scale and -inf as the dtype's scalars, the masked-out causal positions or None, the
    mask's kind, the row maxima's (rows, S, shape) or None, the flash layout's (memory shape,
    permutation, torch strides) or None); False when the call is not the common case: CPU,
    float32/float64, equal batch dims, non-empty, a mask that fits the scores' shape."""
    q, k, v = query._array, key._array, value._array
    dtype = query.dtype
    if not (dtype in _FAST_DTYPES and key.dtype is dtype and value.dtype is dtype
            and query.device.type == "cpu" and q.ndim >= 2 and q.ndim == k.ndim == v.ndim
            and q.shape[:-2] == k.shape[:-2] == v.shape[:-2] and q.shape[-1] == k.shape[-1]
            and k.shape[-2] == v.shape[-2] and q.size and k.size and v.size):
        return False
    L, S = q.shape[-2], k.shape[-2]
    scores_shape = q.shape[:-1] + (S,)
    mask_kind = None
    if attn_mask is not None:
        if is_causal:  # (an error, or flash applying both: the general path)
            return False
        m = attn_mask._array
        if m.ndim > len(scores_shape) or any(
                d != 1 and d != n for d, n in zip(m.shape[::-1], scores_shape[::-1])):
            return False  # (the general path broadcasts the scores to the mask's shape)
        if attn_mask.dtype is D.bool:
            mask_kind = "bool"
        elif attn_mask.dtype.is_floating_point and not attn_mask.dtype.is_complex:
            mask_kind = "float" if attn_mask.dtype is dtype else "cast"
        else:
            return False
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    masked_out = _causal_masked_out(L, S) if is_causal else None
    # NumPy reduces short rows slowly (~50 ns a row); a transposed copy reduced across rows is
    # faster while rows are short. The maximum is exact whichever the order (a zero maximum's
    # sign may differ, which no x - max then changes after exp)
    rows = (math.prod(scores_shape[:-1]), S, scores_shape[:-1] + (1,)) if S <= 32 else None
    layout = None
    if query._stride is not None and _sdpa_uses_flash(query, key, value, attn_mask, 0.0):
        out_shape = q.shape[:-1] + v.shape[-1:]
        order = sorted(range(q.ndim), key=lambda d: -query.stride()[d])  # (_laid_out's)
        strides = [0] * q.ndim
        step = 1
        for d in reversed(order):
            strides[d] = step
            step *= out_shape[d]
        strides = tuple(strides)
        layout = (tuple(out_shape[d] for d in order), tuple(order.index(d) for d in range(q.ndim)),
                  None if strides == contiguous_strides(out_shape) else strides)
    neg_inf = np.array(-np.inf, dtype.np)
    neg_inf.flags.writeable = False
    return dtype.np.type(factor), neg_inf, masked_out, mask_kind, rows, layout


def _sdpa_planned(plan, query, key, value, attn_mask):
    """The general path's arithmetic for a planned call."""
    factor, neg_inf, masked_out, mask_kind, rows, layout = plan
    scores = np.matmul(query._array, key._array.swapaxes(-1, -2))
    scores *= factor
    if masked_out is not None:
        np.copyto(scores, neg_inf, where=masked_out)
    elif mask_kind is not None:
        m = attn_mask._array
        if mask_kind == "bool":
            scores = np.where(m, scores, neg_inf)
        else:
            scores += m if mask_kind == "float" else m.astype(neg_inf.dtype)
    # _safe_softmax, in place
    if rows is None:
        m = np.maximum.reduce(scores, axis=-1, keepdims=True)
        flat = m.reshape(-1)
    else:
        n, S, shape = rows
        flat = np.maximum.reduce(scores.reshape(n, S).T.copy(), axis=0)
        m = flat.reshape(shape)
    if math.isfinite(np.dot(flat, flat)):  # every row's max finite (an inf or NaN gives a
        # non-finite sum of squares; an overflow only sends this call down the general path)
        scores -= m
        np.exp(scores, out=scores)
        scores /= np.add.reduce(scores, axis=-1, keepdims=True)
    else:
        scores = _safe_softmax(scores, np)
    if layout is None:
        return _fresh(np.matmul(scores, value._array), query.dtype, query.device)
    memory_shape, inverse, strides = layout
    out = np.empty(memory_shape, neg_inf.dtype).transpose(inverse)
    np.matmul(scores, value._array, out=out)
    return _init(_new(Tensor), out, query.dtype, query.device, strides)


def check_sdpa_dtypes(query, key, value):
    """attention.cpp validate_sdpa_input's dtype checks (the kernel's and the autograd path's)."""
    for name, t in (("Key", key), ("Value", value)):
        if t.dtype is not query.dtype:
            raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                               f"query.dtype: {query.dtype.ir_name} key.dtype: {key.dtype.ir_name} "
                               f"and value.dtype: {value.dtype.ir_name} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected a floating point query, got "
                           f"{query.dtype.ir_name}")


def gqa_repeats(q_heads, k_heads, v_heads):
    """attention.cpp pre_process_group_query_attention_input: how many query heads each key and
    each value head serves (repeat_interleave along dim -3)."""
    if q_heads % k_heads or q_heads % v_heads:  # (torch's message ends so)
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    return q_heads // k_heads, q_heads // v_heads


def _laid_out(out, query, xp):
    """``out`` stored in the query's dimension order (as an empty_like(query) result would be):
    the flash kernel's output layout."""
    order = sorted(range(out.ndim), key=lambda d: -query.stride()[d])
    return _in_memory_order(out, order, query.dtype, query.device, xp)


def _in_memory_order(out, order, dtype, device, xp):
    """A tensor of ``out``'s values whose memory holds its dimensions in ``order`` (outermost
    first): a kernel that writes (B, L, H, E) and returns the (B, H, L, E) view."""
    data = xp.ascontiguousarray(out.transpose(order))  # memory in that order
    inverse = [order.index(d) for d in range(out.ndim)]
    result = data.transpose(inverse)
    strides = [0] * out.ndim
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= out.shape[d]
    return _strided(result, dtype, device, strides)


# No derivatives.yaml entry: scaled_dot_product_attention is CompositeImplicitAutograd; torch
# differentiates the backend it dispatches to (nn_sdpa_backends.py).


# -- MultiheadAttention's fast path ----------------------------------------------------------------

def _masked_softmax(scores, mask, xp):
    """softmax over the last dim with ``mask`` (True = masked out); fully masked rows are 0."""
    dt = scores.dtype
    scores = xp.where(mask, dt.type(-np.inf), scores)
    return _safe_softmax(scores, xp)


def _native_mha(q_in, k_in, v_in, num_head, qkv_w, qkv_b, proj_w, proj_b, mask, mask_type,
                need_weights, average, xp):
    """attention.cpp native_multi_head_attention_cpu on arrays: (B, T, D) in, (B, T, D) out."""
    B, T, D = q_in.shape
    dh = D // num_head
    dt = q_in.dtype
    q = q_in @ qkv_w[:D].T + qkv_b[:D]
    k = k_in @ qkv_w[D:2 * D].T + qkv_b[D:2 * D]
    v = v_in @ qkv_w[2 * D:].T + qkv_b[2 * D:]
    heads = (lambda a: a.reshape(B, a.shape[1], num_head, dh).transpose(0, 2, 1, 3))
    q, k, v = heads(q) * dt.type(1.0 / math.sqrt(dh)), heads(k), heads(v)
    scores = q @ k.transpose(0, 1, 3, 2)
    if mask is not None:
        m = mask if mask.dtype == np.bool_ else mask != 0  # a float mask: nonzero = masked
        if mask_type == 1 or (mask_type is None and m.ndim == 2):  # key padding (B, S)
            m = m[:, None, None, :]
        weights = _masked_softmax(scores, m, xp)
    else:
        weights = _safe_softmax(scores, xp)
    ctx = (weights @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    out = (ctx @ proj_w.T + proj_b).astype(dt, copy=False)
    if not need_weights:
        return out, None
    if average:
        weights = weights.sum(1) / dt.type(num_head)
    return out, weights.astype(dt, copy=False)


@op("_native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, "
    "int num_head, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, "
    "Tensor? mask=None, bool need_weights=True, bool average_attn_weights=True, "
    "int? mask_type=None) -> (Tensor, Tensor)")
def _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
                                 proj_weight, proj_bias, mask, need_weights, average_attn_weights,
                                 mask_type):
    if query._array.ndim != 3:
        raise RuntimeError(f"expected 3-D `query`, got {query._array.ndim}-D tensor")
    if query._array.shape[2] != embed_dim:
        raise RuntimeError(f"passed-in embed_dim {embed_dim} didn't match last dim of query "
                           f"{query._array.shape[2]}")
    if embed_dim % num_head != 0:
        raise RuntimeError("embed_dim must be divisible by num_head")
    if mask is not None and mask_type == 1 and mask._array.shape != query._array.shape[:2]:
        raise RuntimeError("For mask_type == 1 mask shape should be (B, L)")
    xp = xp_of(query)
    out, weights = _native_mha(query._array, key._array, value._array, num_head,
                               qkv_weight._array, qkv_bias._array, proj_weight._array,
                               proj_bias._array, None if mask is None else mask._array, mask_type,
                               need_weights, average_attn_weights, xp)
    return (_fresh(out, query.dtype, query.device),
            None if weights is None else _fresh(weights, query.dtype, query.device))
# (no derivatives.yaml entry: torch's autograd reports NotImplemented for it; MHA takes this path
# only when no gradient is needed)


# -- TransformerEncoderLayer's fast path -----------------------------------------------------------

@op("_transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads, Tensor qkv_weight, "
    "Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, bool use_gelu, bool norm_first, "
    "float eps, Tensor norm_weight_1, Tensor norm_bias_1, Tensor norm_weight_2, Tensor norm_bias_2, "
    "Tensor ffn_weight_1, Tensor ffn_bias_1, Tensor ffn_weight_2, Tensor ffn_bias_2, "
    "Tensor? mask=None, int? mask_type=None) -> Tensor")
def _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                                   proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1,
                                   norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1,
                                   ffn_weight_2, ffn_bias_2, mask, mask_type):
    """transformer.cpp transformer_encoder_layer_forward: attention (the MHA fast path, without
    weights) + residual, then the feed-forward block + residual, each with its layer norm before
    (norm_first) or after. A nested ``src`` (TransformerEncoder's packed batch) takes the
    nested path of nested_transformer.py."""
    if src.is_nested:
        from .nested_transformer import transformer_encoder_layer_nested
        return transformer_encoder_layer_nested(
            src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu,
            norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1,
            ffn_bias_1, ffn_weight_2, ffn_bias_2, mask, mask_type)
    from .activation import gelu, relu
    from .linalg import linear
    from .nn_norm import layer_norm

    def norm(x, w, b):
        return layer_norm.kernel(x, [embed_dim], w, b, eps, True)

    x = norm(src, norm_weight_1, norm_bias_1) if norm_first else src
    x = _native_multi_head_attention.kernel(x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias,
                                            proj_weight, proj_bias, mask, False, True, mask_type)[0]
    x = _fresh(x._array + src._array, src.dtype, src.device)
    if not norm_first:
        x = norm(x, norm_weight_1, norm_bias_1)
    residual = x
    if norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    h = linear.kernel(x, ffn_weight_1, ffn_bias_1)
    h = gelu.kernel(h, "none") if use_gelu else relu.kernel(h)
    x = linear.kernel(h, ffn_weight_2, ffn_bias_2)
    x = _fresh(x._array + residual._array, src.dtype, src.device)
    if not norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    return x
# (no derivatives.yaml entry: inference only, as in torch; the layer takes it only without grad)


def _nested_tensor_from_mask_left_aligned(t, mask):
    """torch._nested_tensor_from_mask_left_aligned: whether each row of ``mask`` (True = a real
    token) is a run of Trues then Falses. torch's tracer does not record this function but the
    ops its C++ kernel calls (DCE'd afterwards, yet numbered): they are called here the same way,
    from this internal frame (so they take no names from it)."""
    if mask.dtype is not D.bool:
        raise RuntimeError(f"Expected mask to be of type bool, but got {mask.dtype} instead.")
    if mask.dim() != 2:
        raise RuntimeError("Padding mask should be 2D")
    if t.dim() != 3:
        raise RuntimeError("Input should be a 3D tensor, N * L * D")
    N, L = t.shape_tuple[:2]
    if mask.shape_tuple != (N, L):
        raise RuntimeError("Mask size should match input size")
    aten = get_packet
    pad = aten("zeros")([N, 1], dtype=D.bool, layout=strided, device=mask.device, pin_memory=None)
    nums = aten("to").dtype(aten("cat")([mask, pad], 1), D.int32, False, False, None)
    nums = aten("argmin")(nums, 1, False)
    sizes = aten("select")(aten("cumsum")(mask, 1, dtype=None), 1, L - 1)
    nums = aten("to").dtype_layout(nums, dtype=D.int64, layout=strided, device=mask.device,
                                   pin_memory=None, non_blocking=False, copy=False,
                                   memory_format=None)
    return bool((sizes._array == nums._array).all())
