"""Which Python frames the tracer treats as "the caller" of an op.

torch's tracer takes source locations and value names from the innermost Python frame that
called into C++. For ops torch implements in Python (``Tensor.__floordiv__``, ``__rsub__``,
``torch.norm``, ``Tensor.split`` ... in torch/_tensor.py and torch/functional.py) that frame is
torch's own function, whose locals are ``self`` and ``other``: so ``n // 2`` leaves ``n``
unnamed. reftrace's equivalents are marked with ``@python_level`` so the tracer stops at their
frames too; every other reftrace frame is machinery and is skipped.
"""
PYTHON_LEVEL_CODES = set()


def python_level(fn):
    """Mark a function that mirrors one torch implements in Python."""
    PYTHON_LEVEL_CODES.add(fn.__code__)
    return fn
