"""A part-of-speech tagger: embeddings, a two-layer bidirectional LSTM, a linear tag scorer.

    python -m reftrace trace examples/lstm_tagger.py

The LSTM is one aten::lstm node taking the module's flat weights (weight_ih_l0, weight_hh_l0,
bias_ih_l0, bias_hh_l0, then the _reverse ones, then layer 1); its zero initial states are
built from the traced batch size, so the checker's longer, smaller batch (CHECK_INPUTS) runs
through the same graph.
"""
import reftrace as torch
from reftrace import nn


class Tagger(nn.Module):
    def __init__(self, vocab=50, dim=16, hidden=24, tags=7):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, tokens):
        states, _ = self.lstm(self.embed(tokens))
        return torch.log_softmax(self.out(states), dim=-1)


model = Tagger().eval()
EXAMPLE_INPUTS = torch.randint(1, 50, (4, 7))
CHECK_INPUTS = [(torch.randint(1, 50, (2, 11)),)]
