"""Which elements torch's CPU pointwise loops compute with the vector op and which with the scalar
one (ATen/native/cpu/Loops.h, TensorIterator's reorder_dimensions/coalesce_dimensions).

``cpu_kernel_vec(iter, op, vop)`` runs each inner-loop row of the TensorIterator (its fastest
dimension after coalescing, ``n0`` elements) either through ``vectorized_loop`` -- when every
operand is unit-strided there, or one input is a broadcast scalar (stride 0) and the rest are --
or through ``basic_loop``. ``vectorized_loop`` applies ``vop`` to blocks of ``2 * Vec::size()``
elements from the row's start and hands the rest of the row to ``basic_loop``. Where the two
ops round differently (complex products: the vector one rounds each product, the compiled scalar
one fuses into FMAs), the result depends on this geometry, which ``LoopPlan`` reproduces.

(Tensors of 32768 elements or more are split between threads at element offsets that depend on
torch's thread count; the plan assumes one thread, as smaller tensors always are.)
"""
import math

import numpy as np

from .._tensor import contiguous_strides
from ._iter import preserve_strides


def operand_strides(t, compute_dtype):
    """t's element strides as the TensorIterator reads them: an input of another dtype is first
    copied to the computation dtype (``Tensor.to``: empty_like's layout); 0-dim ones stay 0-dim."""
    if t._array.ndim and t.dtype is not compute_dtype:
        s = preserve_strides(t)
        return t._array.shape, (s if s is not None else contiguous_strides(t._array.shape))
    return t._array.shape, t.stride()


class LoopPlan:
    """The inner-loop rows of a TensorIterator over ``shape``: ``n0`` (row length), ``vec``
    (whether rows run through vectorized_loop), ``scalar`` (vectorized, one input broadcast: its
    tail's basic_loop reads that input with stride 0), and each element's index in its row."""

    aliased = False  # (set for an in-place op: the output is its first input)

    def __init__(self, shape, out_strides, in_layouts):
        shape = tuple(shape)
        self.shape = shape
        ndim = len(shape)
        if out_strides is None:
            out_strides = contiguous_strides(shape)
        strides = [tuple(out_strides)]
        for ishape, istrides in in_layouts:  # broadcast dims read with stride 0
            off = ndim - len(ishape)
            st = [0] * ndim
            for i, (n, s) in enumerate(zip(ishape, istrides)):
                st[off + i] = 0 if n == 1 and shape[off + i] != 1 else s
            strides.append(st)
        # reorder_dimensions gave the fresh output dense strides in the loop's order, fastest
        # first; size-1 dimensions coalesce with anything, so only the others matter
        order = sorted((d for d in range(ndim) if shape[d] != 1), key=lambda d: out_strides[d])
        group = order[:1]
        for d in order[1:]:
            prev = group[-1]
            if any(st[prev] * shape[prev] != st[d] for st in strides):
                break
            group.append(d)
        self.group = group
        # (the whole iteration one row, in C order: the flattened operands' order)
        self.c_order = group == [d for d in range(ndim - 1, -1, -1) if shape[d] != 1]
        self.n0 = math.prod(shape[d] for d in group)
        inner = [st[group[0]] if group else 1 for st in strides]
        out, ins = inner[0], inner[1:]
        # is_contiguous<traits> or is_contiguous_scalar<traits, S> (one input broadcast)
        contiguous = out == 1 and all(s == 1 for s in ins)
        self.scalar = not contiguous and out == 1 and any(
            s == 0 and all(o == 1 for o in ins[:k] + ins[k + 1:]) for k, s in enumerate(ins))
        self.vec = contiguous or self.scalar  # (scalar: vectorized_loop's S > 0)

    def row_index(self):
        """Each element's index in its row (an int array broadcastable to ``shape``)."""
        j = np.zeros((1,) * len(self.shape), dtype=np.int64)
        mult = 1
        for d in self.group:
            ax = [1] * len(self.shape)
            ax[d] = self.shape[d]
            j = j + np.arange(self.shape[d], dtype=np.int64).reshape(ax) * mult
            mult *= self.shape[d]
        return j

    def body_end(self, block):
        """Where vectorized_loop's blocks of ``block`` elements end in each row (0: basic_loop)."""
        return self.n0 // block * block if self.vec else 0


def pointwise_plan(shape, out_strides, inputs, compute_dtype):
    """The LoopPlan of a pointwise op over tensors ``inputs`` computing in ``compute_dtype``."""
    shape = tuple(shape)
    if out_strides is None and all(t._stride is None and t._array.shape == shape
                                   and t.dtype is compute_dtype for t in inputs):
        return _contiguous_plan(shape)  # (the common case, without the walk)
    return LoopPlan(shape, out_strides, [operand_strides(t, compute_dtype) for t in inputs])


def _contiguous_plan(shape):
    """LoopPlan of contiguous operands and result of one shape: coalesced into one row."""
    plan = LoopPlan.__new__(LoopPlan)
    plan.shape = shape
    plan.group = [d for d in range(len(shape) - 1, -1, -1) if shape[d] != 1]
    plan.n0 = math.prod(shape)
    plan.vec, plan.scalar, plan.c_order = True, False, True
    return plan
