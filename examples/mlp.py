"""A two-layer perceptron: the smallest real model to trace.

    python -m reftrace trace examples/mlp.py

The trace records one aten::linear per layer (inlined from the submodules' forwards) and the
relu between them; the checker re-traces on a clone of the inputs and finds the same graph.
Written against `import reftrace as torch`: with `import torch` it is an ordinary torch program.
"""
import reftrace as torch
from reftrace import nn


class MLP(nn.Module):
    def __init__(self, n_in=16, n_hidden=32, n_out=10):
        super().__init__()
        self.hidden = nn.Linear(n_in, n_hidden)
        self.out = nn.Linear(n_hidden, n_out)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


# what `python -m reftrace trace examples/mlp.py` traces (NAME defaults to `model`) ...
model = MLP()
# ... and on what: a batch of 4 examples
EXAMPLE_INPUTS = torch.randn(4, 16)
