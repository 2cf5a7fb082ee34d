"""torch/backends/mha: whether MultiheadAttention and TransformerEncoderLayer may take their fast
path (one aten::_native_multi_head_attention / _transformer_encoder_layer_fwd node)."""
_is_fastpath_enabled = True


def get_fastpath_enabled():
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    global _is_fastpath_enabled
    _is_fastpath_enabled = bool(value)
