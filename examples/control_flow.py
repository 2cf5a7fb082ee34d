"""Data-dependent control flow: what a trace cannot capture, and the checker catches.

    python -m reftrace trace examples/control_flow.py        # the `if` on data (model)
    python -m reftrace trace examples/control_flow.py:loop   # a loop over a size

A trace records the ops one run executed. `model` branches on the data: the tracer warns
when the tensor becomes a Python bool, and records only the branch the example took. The
checker re-traces on CHECK_INPUTS, which take the other branch: the outputs differ ("Output nr 1.
of the traced function does not match ...") and so do the graphs (TracingCheckError).

`loop` runs `range(x.size(0))` times: the size becomes a Python int silently, so the loop is
unrolled for the example's size; a check input of another size unrolls differently.
Both exit with status 1: the trace would be wrong for other inputs.
"""
import reftrace as torch


def model(x):
    if x.sum() > 0:           # a tensor -> Python bool: the branch is baked into the trace
        return x * 2
    return -x


EXAMPLE_INPUTS = torch.ones(3)
CHECK_INPUTS = [(-torch.ones(3),)]   # takes the other branch


def loop(x):
    for _ in range(x.size(0)):  # unrolled: 3 iterations for the example, 4 for the check input
        x = torch.tanh(x)
    return x


loop_inputs = torch.randn(3, 2)
loop_check_inputs = [(torch.randn(4, 2),)]
