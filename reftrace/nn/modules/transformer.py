"""torch/nn/modules/transformer.py: Transformer, its encoder and decoder stacks and layers.

The forwards are torch's: the masks canonicalised to additive float masks, a causal mask
detected by comparing with ``triu(full(-inf), 1)`` when ``is_causal`` is None (a traced
``bool(...)``: torch's TracerWarning), and the encoder layer's fast path (one
``aten::_transformer_encoder_layer_fwd`` node) under torch's conditions: eval, batch_first,
batched input, packed attention weights with bias, relu/gelu activation, equal norm eps, even head
count, no hooks, and no gradient needed.

Nested tensors: where torch converts the input to a NestedTensor (``TransformerEncoder`` with
``enable_nested_tensor=True`` -- its default --, in eval mode without grad, given a left-aligned
``src_key_padding_mask``), so does reftrace: ``_nested_tensor_from_mask`` packs the real rows,
each layer's ``_transformer_encoder_layer_fwd`` runs on the packed batch, ``to_padded_tensor``
pads the result back with zeros (reftrace/_nested_tensor.py, ops/nested_ops.py,
ops/nested_transformer.py).
"""
import copy
import warnings

from ... import _factories
from ...ops import get_packet
from ...ops.nn_attention import _nested_tensor_from_mask_left_aligned
from .. import functional as F
from ..init import xavier_uniform_
from .activation import GELU, MultiheadAttention, ReLU
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    """-inf above the diagonal, 0 elsewhere: the additive causal mask."""
    return get_packet("triu")(_factories.full((sz, sz), float("-inf"), dtype=dtype, device=device),
                              diagonal=1)


def _get_seq_len(src, batch_first):
    src_size = src.size()
    if len(src_size) == 2:  # unbatched: S, E
        return src_size[0]
    return src_size[1 if batch_first else 0]


def _grad_blocks_fast_path(tensor_args):
    from ...autograd import is_grad_enabled
    return is_grad_enabled() and any(x.requires_grad for x in tensor_args)


class Transformer(Module):
    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, bias, **factory_kwargs)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                                    activation, layer_norm_eps, batch_first,
                                                    norm_first, bias, **factory_kwargs)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        is_batched = src.dim() == 3
        if not self.batch_first and src.size(1) != tgt.size(1) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        elif self.batch_first and src.size(0) != tgt.size(0) and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                xavier_uniform_(p)


class TransformerEncoder(Module):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

        enc_layer = "encoder_layer"
        why_not_sparsity_fast_path = ""
        if not isinstance(encoder_layer, TransformerEncoderLayer):
            why_not_sparsity_fast_path = f"{enc_layer} was not TransformerEncoderLayer"
        elif encoder_layer.norm_first:
            why_not_sparsity_fast_path = f"{enc_layer}.norm_first was True"
        elif not encoder_layer.self_attn.batch_first:
            why_not_sparsity_fast_path = (f"{enc_layer}.self_attn.batch_first was not True"
                                          "(use batch_first for better inference performance)")
        elif not encoder_layer.self_attn._qkv_same_embed_dim:
            why_not_sparsity_fast_path = f"{enc_layer}.self_attn._qkv_same_embed_dim was not True"
        elif encoder_layer.self_attn.in_proj_bias is None:
            why_not_sparsity_fast_path = f"{enc_layer}.self_attn was passed bias=False"
        elif not encoder_layer.activation_relu_or_gelu:
            why_not_sparsity_fast_path = f"{enc_layer}.activation_relu_or_gelu was not True"
        elif encoder_layer.norm1.eps != encoder_layer.norm2.eps:
            why_not_sparsity_fast_path = f"{enc_layer}.norm1.eps was not equal to {enc_layer}.norm2.eps"
        elif encoder_layer.self_attn.num_heads % 2 == 1:
            why_not_sparsity_fast_path = f"{enc_layer}.self_attn.num_heads is odd"
        if enable_nested_tensor and why_not_sparsity_fast_path:
            warnings.warn("enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not_sparsity_fast_path}", stacklevel=2)
            self.use_nested_tensor = False

    def _why_not_nested(self, src, mask, src_key_padding_mask, first_layer):
        """torch's reasons not to convert the input to a NestedTensor ('' = it would)."""
        from ... import backends
        if not backends.mha.get_fastpath_enabled():
            return "torch.backends.mha.get_fastpath_enabled() was not True"
        if not hasattr(self, "use_nested_tensor"):
            return "use_nested_tensor attribute not present"
        if not self.use_nested_tensor:
            return "self.use_nested_tensor (set in init) was not True"
        if first_layer.training:
            return "self.layers[0] was in training mode"
        if src.dim() != 3:
            return f"input not batched; expected src.dim() of 3 but got {src.dim()}"
        if src_key_padding_mask is None:
            return "src_key_padding_mask was None"
        if getattr(self, "mask_check", True) and not _nested_tensor_from_mask_left_aligned(
                src, src_key_padding_mask.logical_not()):
            return "mask_check enabled, and src and src_key_padding_mask was not left aligned"
        if src.is_nested:
            return "NestedTensor input is not supported"
        if mask is not None:
            return "src_key_padding_mask and mask were both supplied"
        sa = first_layer.self_attn
        tensor_args = (src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight,
                       sa.out_proj.bias, first_layer.norm1.weight, first_layer.norm1.bias,
                       first_layer.norm2.weight, first_layer.norm2.bias, first_layer.linear1.weight,
                       first_layer.linear1.bias, first_layer.linear2.weight, first_layer.linear2.bias)
        if src.device.type not in ("cpu", "cuda"):
            return "src device is neither one of ['cpu', 'cuda', 'xpu', 'privateuseone']"
        if _grad_blocks_fast_path(tensor_args):
            return ("grad is enabled and at least one of query or the input/output projection "
                    "weights or biases requires_grad")
        return ""

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = F._canonical_mask(
            mask=src_key_padding_mask, mask_name="src_key_padding_mask",
            other_type=F._none_or_dtype(mask), other_name="mask", target_type=src.dtype)
        mask = F._canonical_mask(mask=mask, mask_name="mask", other_type=None, other_name="",
                                 target_type=src.dtype, check_other=False)
        output = src
        convert_to_nested = False
        first_layer = self.layers[0]
        src_key_padding_mask_for_layers = src_key_padding_mask
        batch_first = first_layer.self_attn.batch_first
        if not self._why_not_nested(src, mask, src_key_padding_mask, first_layer):
            convert_to_nested = True
            output = get_packet("_nested_tensor_from_mask")(
                output, src_key_padding_mask.logical_not(), mask_check=False)
            src_key_padding_mask_for_layers = None
        seq_len = _get_seq_len(src, batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask_for_layers)
        if convert_to_nested:
            output = output.to_padded_tensor(0.0, src.size())
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and a LayerNorm (after
    each block, or before with norm_first)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        # what the fast path needs to know of the activation (1 relu, 2 gelu, 0 other)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def _why_not_fast_path(self, src, src_mask, src_key_padding_mask):
        from ... import backends
        if not backends.mha.get_fastpath_enabled():
            return "torch.backends.mha.get_fastpath_enabled() was not True"
        if src.dim() != 3:
            return f"input not batched; expected src.dim() of 3 but got {src.dim()}"
        if self.training:
            return "training is enabled"
        if not self.self_attn.batch_first:
            return "self_attn.batch_first was not True"
        if self.self_attn.in_proj_bias is None:
            return "self_attn was passed bias=False"
        if not self.self_attn._qkv_same_embed_dim:
            return "self_attn._qkv_same_embed_dim was not True"
        if not self.activation_relu_or_gelu:
            return "activation_relu_or_gelu was not True"
        if self.norm1.eps != self.norm2.eps:
            return "norm1.eps is not equal to norm2.eps"
        if src.is_nested and (src_key_padding_mask is not None or src_mask is not None):
            return ("neither src_key_padding_mask nor src_mask are not supported with NestedTensor "
                    "input")
        if self.self_attn.num_heads % 2 == 1:
            return "num_head is odd"
        if any(len(getattr(m, "_forward_hooks", {})) + len(getattr(m, "_forward_pre_hooks", {}))
               for m in self.modules()):
            return "forward pre-/hooks are attached to the module"
        if not all(x.device.type in ("cpu", "cuda") for x in self._fast_path_tensors(src)):
            return ("some Tensor argument's device is neither one of ['cpu', 'cuda', 'xpu', "
                    "'privateuseone']")
        if _grad_blocks_fast_path(self._fast_path_tensors(src)):
            return ("grad is enabled and at least one of query or the input/output projection "
                    "weights or biases requires_grad")
        return ""

    def _fast_path_tensors(self, src):
        sa = self.self_attn
        return (src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias,
                self.norm1.weight, self.norm1.bias, self.norm2.weight, self.norm2.bias,
                self.linear1.weight, self.linear1.bias, self.linear2.weight, self.linear2.bias)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        src_key_padding_mask = F._canonical_mask(
            mask=src_key_padding_mask, mask_name="src_key_padding_mask",
            other_type=F._none_or_dtype(src_mask), other_name="src_mask", target_type=src.dtype)
        src_mask = F._canonical_mask(mask=src_mask, mask_name="src_mask", other_type=None,
                                     other_name="", target_type=src.dtype, check_other=False)
        why_not = self._why_not_fast_path(src, src_mask, src_key_padding_mask)
        if why_not and src.is_nested:  # (torch would run the layers below on the nested tensor)
            raise NotImplementedError(
                "reftrace runs a nested tensor (TransformerEncoder's packed batch) only through "
                f"the encoder layer's fast path, which this layer does not take: {why_not}")
        if not why_not:
            merged_mask, mask_type = self.self_attn.merge_masks(src_mask, src_key_padding_mask, src)
            sa = self.self_attn
            return get_packet("_transformer_encoder_layer_fwd")(
                src, sa.embed_dim, sa.num_heads, sa.in_proj_weight, sa.in_proj_bias,
                sa.out_proj.weight, sa.out_proj.bias, self.activation_relu_or_gelu == 2,
                self.norm_first, self.norm1.eps, self.norm1.weight, self.norm1.bias,
                self.norm2.weight, self.norm2.bias, self.linear1.weight, self.linear1.bias,
                self.linear2.weight, self.linear2.bias, merged_mask, mask_type)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's memory, then a feed-forward block."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                            bias=bias, **factory_kwargs)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **factory_kwargs)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory_kwargs)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory_kwargs)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory_kwargs)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask,
                                    memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _get_clones(module, N):
    return ModuleList([copy.deepcopy(module) for i in range(N)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    elif activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` as given; when None and a mask is given, whether the mask equals the causal
    mask (a comparison that a trace records, then bakes through bool())."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.size(-2)
        causal_comparison = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        if mask.size() == causal_comparison.size():
            make_causal = bool((mask == causal_comparison).all())
        else:
            make_causal = False
    return make_causal
