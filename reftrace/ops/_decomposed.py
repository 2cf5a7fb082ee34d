"""Ops torch implements as CompositeImplicitAutograd, registered by their decomposition.

    @decomposed("hstack(Tensor[] tensors) -> Tensor")
    def hstack(tensors): ...

The one function is both the kernel and the autograd decomposition (``composite``): it calls
reftrace ops as torch's C++ calls ATen ops. Its inner calls are never recorded in a trace (the
tracer is suspended while a kernel runs, as torch's is below a composite op's tracer kernel), so
the graph shows the op itself; with a gradient recorded, the grad_fn chain is the inner ops', as
torch's (``hstack`` -> ``CatBackward0``).
"""
from ._registry import composite, op


def decomposed(schema, *, variants=("function",)):
    def register(fn):
        ov = op(schema, variants=variants)(fn)
        composite(ov)(fn)
        return ov
    return register
