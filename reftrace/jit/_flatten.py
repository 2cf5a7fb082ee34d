"""Flattening nested inputs and outputs, with torch's _jit_flatten / _jit_unflatten semantics
(torch/csrc/jit/python/python_arg_flatten.cpp).

``flatten(obj)`` walks tuples, lists and dicts (a dict as its (key, value) items) and returns the
tensors in order plus a descriptor whose ``structure`` string uses torch's alphabet: ``(`` ``)``
tuple, ``[`` ``]`` list, ``<`` ``>`` dict, ``v`` tensor, ``s`` string, ``n`` None, and
``b`` / ``l`` / ``d`` for bools, ints and floats, which become 0-dim tensors (so unflattening
returns them as tensors: lossy, as in torch). ``unflatten(vars, desc)`` rebuilds the structure.
"""
from .._tensor import Tensor, scalar_to_tensor


class IODescriptor:
    __slots__ = ("structure", "strings")

    def __init__(self):
        self.structure = []
        self.strings = []

    def __repr__(self):
        return f"IODescriptor({''.join(self.structure)!r})"


def flatten(obj):
    out, desc = [], IODescriptor()
    _flatten(obj, out, desc)
    desc.structure = "".join(desc.structure)
    return out, desc


def _flatten(obj, out, desc):
    s = desc.structure
    if isinstance(obj, tuple):
        s.append("(")
        for item in obj:
            _flatten(item, out, desc)
        s.append(")")
    elif isinstance(obj, list):
        s.append("[")
        for item in obj:
            _flatten(item, out, desc)
        s.append("]")
    elif isinstance(obj, dict):
        s.append("<")
        for item in obj.items():
            _flatten(item, out, desc)
        s.append(">")
    elif isinstance(obj, str):
        desc.strings.append(obj)
        s.append("s")
    elif isinstance(obj, Tensor):
        out.append(obj)
        s.append("v")
    elif obj is None:
        s.append("n")
    elif isinstance(obj, (bool, int, float)):
        out.append(scalar_to_tensor(obj))
        s.append("b" if isinstance(obj, bool) else "l" if isinstance(obj, int) else "d")
    else:
        raise RuntimeError(
            "Only tuples, lists and Variables are supported as JIT inputs/outputs. Dictionaries and "
            "strings are also accepted, but their usage is not recommended. Here, received an input "
            f"of unsupported type: {type(obj).__name__}")


_CLOSE = {"(": ")", "[": "]", "<": ">"}


def unflatten(values, desc):
    values, strings = iter(values), iter(desc.strings)
    stack = [[]]
    for ch in desc.structure:
        if ch in _CLOSE:
            stack.append([])
        elif ch in ")]>":
            items = stack.pop()
            stack[-1].append(tuple(items) if ch == ")" else items if ch == "]" else dict(items))
        elif ch == "s":
            stack[-1].append(next(strings))
        elif ch == "n":
            stack[-1].append(None)
        else:
            stack[-1].append(next(values))
    result = stack[0]
    return result[0] if len(result) == 1 else tuple(result)
