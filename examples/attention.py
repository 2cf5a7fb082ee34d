"""A pre-norm self-attention block: layer norm, multi-head attention, a residual connection.

    python -m reftrace trace examples/attention.py

The head split reads the batch and sequence length from the input with x.size(), so the
graph records aten::size nodes rather than constants; the checker runs a longer sequence
(CHECK_INPUTS) through the trace and through Python and finds the same outputs.
"""
import math

import reftrace as torch
from reftrace import nn


class SelfAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = 1 / math.sqrt(self.head_dim)  # a Python float: a constant in the trace
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.size(0), x.size(1), x.size(2)
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        # (b, t, d) -> (b, heads, t, head_dim)
        q, k, v = [y.view(b, t, self.heads, self.head_dim).transpose(1, 2) for y in (q, k, v)]
        scores = q @ k.transpose(-2, -1) * self.scale
        y = torch.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).reshape(b, t, d)
        return x + self.proj(y)


model = SelfAttention().eval()
EXAMPLE_INPUTS = torch.randn(2, 5, 32)
CHECK_INPUTS = [(torch.randn(2, 7, 32),)]
