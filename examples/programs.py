"""Programs for the conformance runner: `python -m reftrace.conformance examples/programs.py`.

Written against the name `torch`, which the runner binds (to real torch, then to reftrace): this
file never imports torch. Each `program_<name>()` returns (fn, example_inputs) or
(fn, example_inputs, trace_kwargs); the runner traces fn and calls the trace on the inputs under
both libraries and reports whether the graphs, outputs, warnings and errors agree.
"""
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (for type checkers only: the runner binds `torch`)
    import reftrace as torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.fc2 = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def program_mlp():
    return MLP().eval(), torch.randn(3, 4)


def program_promotion():
    # a Python float is a wrapped number: int * float gives the default dtype, not double
    def f(x, y):
        return x * 2.5 + y, (x / 2).sum(0)
    return f, (torch.arange(6).view(2, 3), torch.ones(3))


def program_sizes():
    # sizes are traced: the view's shape is read from x at run time
    def flatten(x):
        return x.view(x.size(0), -1)
    return flatten, torch.rand(2, 3, 4)


def program_item_warns():
    # .item() bakes a constant and warns: both libraries must say the same
    def f(x):
        return x * x.max().item()
    return f, torch.rand(3), {"check_trace": False}
