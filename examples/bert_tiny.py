"""A tiny BERT encoder: word, position and segment embeddings, nn.TransformerEncoderLayer blocks
with an attention mask, and the tanh pooler over the first token.

    python -m reftrace trace examples/bert_tiny.py

The layers are sequence-first on purpose: with batch_first=True and eval mode, torch's encoder
layer takes its fast path (aten::_transformer_encoder_layer_fwd) whenever no gradient is needed,
and the checker re-traces under no_grad, so a trace made with grad enabled would fail its check
(torch's TracingCheckError, which reftrace reproduces). Here every run takes the same path.
"""
import reftrace as torch
from reftrace import nn


class TinyBert(nn.Module):
    def __init__(self, vocab=100, dim=32, heads=2, layers=2, max_len=64):
        super().__init__()
        self.word = nn.Embedding(vocab, dim, padding_idx=0)
        self.position = nn.Embedding(max_len, dim)
        self.segment = nn.Embedding(2, dim)
        self.norm = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(dim, heads, dim_feedforward=4 * dim, dropout=0.1,
                                       activation="gelu", layer_norm_eps=1e-12)
            for _ in range(layers)])
        self.pooler = nn.Linear(dim, dim)

    def forward(self, input_ids, segment_ids, attention_mask):
        positions = torch.arange(input_ids.size(1)).unsqueeze(0)
        h = self.norm(self.word(input_ids) + self.position(positions) + self.segment(segment_ids))
        h = h.transpose(0, 1)  # (sequence, batch, dim)
        padding = attention_mask == 0
        for layer in self.layers:
            h = layer(h, src_key_padding_mask=padding)
        return torch.tanh(self.pooler(h[0]))


model = TinyBert().eval()
EXAMPLE_INPUTS = (torch.randint(1, 100, (2, 7)), torch.zeros(2, 7, dtype=torch.long),
                  torch.tensor([[1] * 7, [1] * 5 + [0] * 2]))
CHECK_INPUTS = [(torch.randint(1, 100, (3, 10)), torch.ones(3, 10, dtype=torch.long),
                 torch.ones(3, 10, dtype=torch.long))]
