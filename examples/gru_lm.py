"""A GRU language model that carries its hidden state: tokens and h0 in, logits and h_n out.

    python -m reftrace trace examples/gru_lm.py

With an initial state given, aten::gru takes it directly (no zeros are built); the decoder is
tied to the embedding matrix, so the same parameter feeds aten::embedding and aten::linear.
"""
import reftrace as torch
from reftrace import nn


class GRULanguageModel(nn.Module):
    def __init__(self, vocab=40, dim=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.gru = nn.GRU(dim, dim, num_layers=layers, dropout=0.1)
        self.decoder = nn.Linear(dim, vocab)
        self.decoder.weight = self.embed.weight  # weight tying

    def forward(self, tokens, hidden):
        output, hidden = self.gru(self.embed(tokens), hidden)
        return self.decoder(output), hidden


model = GRULanguageModel().eval()
# (sequence, batch) token ids and (layers, batch, dim) initial state
EXAMPLE_INPUTS = (torch.randint(0, 40, (6, 3)), torch.zeros(2, 3, 32))
CHECK_INPUTS = [(torch.randint(0, 40, (9, 5)), torch.randn(2, 5, 32))]
