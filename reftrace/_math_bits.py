"""torch's math bits: the conjugate bit (``x.conj()``) and the negative bit (``x.conj().imag``).

A tensor with a bit set is a view whose stored values are read transformed: ``x.conj()`` shares
``x``'s memory and reads as its conjugate; ``is_conj()`` says so. torch implements this with the
Conjugate and Negative dispatch keys (aten/src/ATen/ConjugateFallback.cpp, MathBitsFallback.h);
reftrace does the same in its one funnel (``_dispatch.run_kernel``), which calls ``resolve_args``
before a kernel runs:

- ops that only look at metadata or make views (schemas returning an alias ``Tensor(a)``) and the
  math-bit ops themselves (``_conj``, ``resolve_conj``, ``real``, ...) see the tensor as it is;
  a view made of a tensor with a bit keeps the bit (``_tensor._view_of``). If such an op copies
  instead (``reshape`` of a non-viewable layout, ``contiguous``), its copy holds the stored
  values, so the bits are applied to it afterwards (``apply_to_copy``);
- every other op reads a materialised copy (torch's fallback: ``resolve_conj`` of the input);
- a written argument (``y.add_(1)``, ``out=``) has its storage transformed in place, the op runs
  on it without the bit, and the storage is transformed back (torch's fallback does the same).

``LIVE`` turns on at the first tensor with a bit: until then the funnel pays one list read.
"""
from . import _dtype as D
from . import _tensor as _T  # (a module reference: _tensor imports the funnel, which imports this)

CONJ, NEG = 1, 2
LIVE = [False]


def set_bits(t, bits):
    """Give ``t`` the math bits ``bits`` (a view's: its own values are not touched)."""
    if bits:
        t.__dict__["_mbits"] = bits
        if not LIVE[0]:
            from ._dispatch import math_bits_live
            math_bits_live()  # (sets LIVE, and turns the funnel's fast paths off)
    else:
        t.__dict__.pop("_mbits", None)
    return t


def _transform(xp, a, bits, out=None):
    if bits & NEG:
        a = xp.negative(a, out=out)
    if bits & CONJ:
        a = xp.conjugate(a, out=out)
    return a


def resolved_array(t):
    """The values ``t`` reads as (a new array when a bit is set)."""
    bits = t._mbits
    return _transform(_T.xp_of(t), t._array, bits) if bits else t._array


def materialize(t, carry_grad=True):
    """A tensor holding ``t``'s values with no bit: torch's resolve_conj/resolve_neg (a clone in
    ``t``'s layout), carrying ``t``'s place in the autograd graph."""
    from .ops import OVERLOADS
    plain = _T._init(_T._new(_T.Tensor), t._array, t.dtype, t.device, t._stride, None)
    c = OVERLOADS["aten::clone"].kernel(plain, None)
    _transform(_T.xp_of(c), c._array, t._mbits, out=c._array)
    if carry_grad and t.requires_grad:
        from .autograd._variable_type import grad_accumulator, grad_fn_of
        import weakref
        c.requires_grad = True
        fn = grad_fn_of(t)
        if fn is not None:
            c._grad_fn, c._output_nr = fn, t._output_nr
        else:
            c._grad_acc = weakref.ref(grad_accumulator(t))
    return c


def apply_to_copy(result, inputs):
    """A bit-preserving op that copied (not a view, not an input): its values are the stored
    ones, so the input's bits are applied to them."""
    if type(result) is not _T.Tensor or result._mbits:
        return
    for t in inputs:
        if result is t:
            return
        root = t._base if t._base is not None else t
        if result._base is root:
            return
    bits = inputs[0]._mbits
    if bits and result.dtype is not D.bool:  # (a copy cast to another dtype: transform, then cast)
        _transform(_T.xp_of(result), result._array, bits, out=result._array)


def has_bits(a):
    if type(a) is list:
        return any(e is not None and e._mbits for e in a)
    return a is not None and a._mbits


def run_with_bits(op, args, kernel_call):
    """Run ``kernel_call(op, args)`` as torch's math-bit fallback does (see the module docstring)."""
    flagged = [i for i in op.tensor_slots if has_bits(args[i])]
    if not flagged:
        return kernel_call(op, args)
    if op.bits_aware:
        result = kernel_call(op, args)
        if op.bits_aware == "view" and type(result) is _T.Tensor:
            apply_to_copy(result, [args[i] for i in flagged if type(args[i]) is _T.Tensor])
        return result
    args = list(args)
    written = []
    for i in flagged:
        t = args[i]
        if type(t) is list:  # Tensor[]: each flagged element read resolved
            args[i] = [materialize(e) if e is not None and e._mbits else e for e in t]
            continue
        if not t._mbits:  # (the same tensor twice: already resolved in place above)
            continue
        if op.writes[i]:
            bits = t._mbits
            _transform(_T.xp_of(t), t._array, bits, out=t._array)
            set_bits(t, 0)
            written.append((t, bits))
        else:
            args[i] = materialize(t)
    try:
        return kernel_call(op, args)
    finally:
        for t, bits in written:
            _transform(_T.xp_of(t), t._array, bits, out=t._array)
            set_bits(t, bits)
