"""Size arithmetic in generated code: ``b * self.heads`` and ``d // self.heads`` as Python ints.

Python arithmetic on traced sizes records 0-dim tensor arithmetic (torch's tracer turns the
size into a tensor so the graph can follow it):

    %7 : int = aten::size(%x, %2)
    %bsz : Long() = prim::NumToTensor(%7)
    %9 : Long() = aten::mul(%bsz, %c0)          # %c0: the 0-dim int64 constant 4
    %10 : int = aten::Int(%9)

Run as written, each arithmetic node is a kernel call on 0-dim tensors (a few microseconds: as
much as a small matmul), and attention layers have a dozen of them. When every use of such a
value is another node of this arithmetic or a read back as a number (aten::Int, aten::Float,
aten::ScalarImplicit), nothing can observe the tensor, and the generated code computes the
number directly: ``_10 = wrap_int64(_7 * 4)``. The result is the kernel's: int64 arithmetic
wraps as the kernel's does, truncating and flooring division round as torch's integer
division does, and a division by zero raises the kernel's error.

Which values fold: a prim::NumToTensor of an int; the result of add/sub/mul (Tensor
overloads, an int ``alpha``), floor_divide, or div with rounding_mode "trunc" or "floor", whose
operands are folded values or 0-dim int64 tensor constants (read once, when the code is
generated: a graph's constants are fixed). Then, repeatedly, a value with a use other than those
stops folding, and so does what was computed from it.
"""
from .._tensor import Tensor

_INT64 = 1 << 63
_ARITHMETIC = {"aten::add.Tensor", "aten::sub.Tensor", "aten::mul.Tensor", "aten::floor_divide",
               "aten::div.Tensor_mode"}
READS = ("aten::Int", "aten::Float", "aten::ScalarImplicit")


def wrap_int64(v):
    """``v`` as int64 arithmetic leaves it (two's complement wrap-around)."""
    if -_INT64 <= v < _INT64:
        return v
    return (v + _INT64) % (2 * _INT64) - _INT64


def int_div(a, b, floor):
    """int64 division of a 0-dim tensor kernel: floor (floor_divide, rounding_mode="floor") or
    truncating (rounding_mode="trunc"); by zero, the kernel's RuntimeError."""
    if b == 0:
        raise RuntimeError("ZeroDivisionError")
    q = a // b
    if not floor and q < 0 and q * b != a:
        q += 1  # towards zero
    return wrap_int64(q)


def int_constant(v):
    """The number a prim::Constant output holds, if it is a 0-dim int64 CPU tensor; else None."""
    n = v.node_
    if n.kind_ != "prim::Constant" or not n.attrs or n.attrs.get("value", ("",))[0] != "t":
        return None
    t = n.attrs["value"][1]
    if not isinstance(t, Tensor) or t.dtype.name != "int64" or t._array.ndim != 0 \
            or t.device.type != "cpu" or t._mbits or t.requires_grad:
        return None
    return int(t._to_number())


def _literal(v):
    n = v.node_
    if n.kind_ == "prim::Constant" and n.attrs and n.attrs.get("value", ("",))[0] != "t":
        return n.attrs["value"][1]
    return None


def _candidate(n, folded):
    """Whether node ``n`` computes integer arithmetic over ``folded`` values and constants."""
    if n.kind_ == "prim::NumToTensor":
        return str(n.inputs_[0].type_) == "int"
    if n.op is None or n.op.qualified not in _ARITHMETIC:
        return False
    a, b = n.inputs_[0], n.inputs_[1]
    if not all(v in folded or int_constant(v) is not None for v in (a, b)):
        return False
    if n.op.qualified == "aten::div.Tensor_mode":
        return _literal(n.inputs_[2]) in ("trunc", "floor")
    if n.op.qualified in ("aten::add.Tensor", "aten::sub.Tensor"):
        return type(_literal(n.inputs_[2])) is int
    return True


def folded_values(nodes, returned):
    """The values of ``nodes`` that the generated code keeps as Python ints."""
    folded = set()
    for n in nodes:  # (in order: an operand is made before its uses)
        if _candidate(n, folded):
            folded.add(n.outputs_[0])
    changed = True
    while changed:  # a value used as a tensor stops folding, and so does what is made from it
        changed = False
        for n in nodes:
            if n.kind_ in READS:
                continue
            computes = bool(n.outputs_) and n.outputs_[0] in folded and n.kind_ != "prim::NumToTensor"
            if computes and not all(v in folded or int_constant(v) is not None for v in n.inputs_[:2]):
                folded.discard(n.outputs_[0])
                computes, changed = False, True
            if not computes:
                for v in n.inputs_:
                    if v in folded:
                        folded.discard(v)
                        changed = True
        for v in returned:
            if v in folded:
                folded.discard(v)
                changed = True
    return folded


def expression(n, operand):
    """The right-hand side computing folded node ``n``; ``operand(v)`` is an operand's text."""
    a, b = operand(n.inputs_[0]), operand(n.inputs_[1])
    kind = n.op.qualified
    if kind == "aten::mul.Tensor":
        return f"wrap_int64({a} * {b})"
    if kind in ("aten::add.Tensor", "aten::sub.Tensor"):
        alpha = _literal(n.inputs_[2])
        term = b if alpha == 1 else f"{alpha} * {b}"
        return f"wrap_int64({a} {'+' if kind == 'aten::add.Tensor' else '-'} {term})"
    floor = kind == "aten::floor_divide" or _literal(n.inputs_[2]) == "floor"
    return f"int_div({a}, {b}, {floor})"
