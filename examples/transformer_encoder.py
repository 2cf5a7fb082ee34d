"""A sequence classifier on nn.TransformerEncoder: pre-norm layers, GELU, a padding mask.

    python -m reftrace trace examples/transformer_encoder.py

The layers are sequence-first (batch_first=False), so neither MultiheadAttention nor the
encoder layer takes torch's fast path: the trace is made of linear, baddbmm, softmax and
layer_norm nodes (F.multi_head_attention_forward), and it generalises to other batch sizes and
lengths. The boolean padding mask is converted to an additive float mask inside the trace.
"""
import reftrace as torch
from reftrace import nn


class Classifier(nn.Module):
    def __init__(self, vocab=30, dim=16, heads=4, layers=2, classes=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=32, dropout=0.0,
                                           activation="gelu", norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(dim),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens, padding):
        # tokens: (sequence, batch); padding: (batch, sequence), True where there is no token
        h = self.encoder(self.embed(tokens), src_key_padding_mask=padding)
        return self.head(h.mean(dim=0))


model = Classifier().eval()
EXAMPLE_INPUTS = (torch.randint(0, 30, (6, 2)), torch.tensor([[False] * 6, [False] * 4 + [True] * 2]))
CHECK_INPUTS = [(torch.randint(0, 30, (9, 3)), torch.zeros(3, 9, dtype=torch.bool))]
