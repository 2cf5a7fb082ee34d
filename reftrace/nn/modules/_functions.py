"""autograd.Functions nn uses internally (torch/nn/modules/_functions.py)."""
from ...autograd.function import Function


class BackwardHookFunction(Function):
    """The identity, as a graph node a module's full backward hooks can attach to."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *args):
        return args
