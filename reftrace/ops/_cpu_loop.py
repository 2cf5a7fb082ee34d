"""Which elements torch's CPU pointwise loop (ATen/native/cpu/Loops.h: cpu_kernel_vec,
VectorizedLoop2d, vectorized_loop) hands to the vectorized op and which to the scalar op.

The two can round differently: for Half, Vectorized<Half> computes in float and rounds once,
while the scalar op does c10::Half arithmetic, rounding after every operation. torch runs the
vectorized op on an inner row only when every operand is contiguous along it (or exactly one
input is a broadcast scalar, stride 0), and then only on whole blocks of 2 * Vec::size()
elements from the row's start; the rest of the row goes to the scalar op. The inner row is
TensorIterator's dim 0 after reorder_dimensions and coalesce_dimensions (TensorIterator.cpp),
which this module reproduces from the operands' shapes and strides.

Vec::size() is the AVX2 build's (torch's default CPU capability on x86): 32 bytes per vector.
A large iteration (numel >= at::internal::GRAIN_SIZE, 32768) is split over threads, moving the
row starts; that is not modelled (reftrace is single-threaded)."""
import numpy as np

VECTOR_BYTES = 32  # AVX2: Vectorized<T>::size() == 32 / sizeof(T)


def _reorder(shape, strides):
    """TensorIterator::reorder_dimensions over the inputs (a new output does not vote): the
    permutation fastest-first, as perm_."""
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0, d1):
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            c = should_swap(perm[dim0], perm[dim1])
            if c > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif c < 0:
                break
    return perm


def vectorized_mask(shape, input_strides, itemsize):
    """(mask, S): mask, a bool array of ``shape``, is True where torch's loop computes the
    element with the vectorized op; S says how the inner rows run: 0 all operands contiguous,
    i > 0 input i (1-based) is a broadcast scalar, None the scalar op throughout (basic_loop).
    ``input_strides``: each input's strides (in elements) broadcast to ``shape`` (0 on broadcast
    dims); the output is a new tensor laid out by TensorIterator."""
    shape = tuple(int(s) for s in shape)
    ndim = len(shape)
    mask = np.zeros(shape, dtype=bool)
    if mask.size == 0 or ndim == 0:  # (0-d: a row of one element, shorter than a block)
        return mask, None
    perm = _reorder(shape, input_strides)
    pshape = [shape[d] for d in perm]
    out = []
    acc = 1
    for s in pshape:  # the new output: contiguous in the permuted order
        out.append(acc)
        acc *= s
    ops = [out] + [[st[d] for d in perm] for st in input_strides]
    # coalesce_dimensions, only as far as dim 0 (the inner row) is concerned
    size0, strides0, m = pshape[0], [o[0] for o in ops], 1
    for d in range(1, ndim):
        if size0 != 1 and pshape[d] != 1 and any(size0 * s0 != o[d] for s0, o in zip(strides0, ops)):
            break
        if size0 == 1:
            strides0 = [o[d] for o in ops]
        size0 *= pshape[d]
        m = d + 1
    out_s, in_s = strides0[0], strides0[1:]
    contiguous = out_s == 1 and all(s == 1 for s in in_s)
    scalar_one = out_s == 1 and sum(s == 0 for s in in_s) == 1 and all(s in (0, 1) for s in in_s)
    if not (contiguous or scalar_one):
        return mask, None
    S = 0 if contiguous else 1 + [s == 0 for s in in_s].index(True)
    block = 2 * (VECTOR_BYTES // itemsize)
    limit = (size0 // block) * block
    if limit == 0:
        return mask, S
    # position of each element along the inner row: the row's dims are perm[0..m-1]
    pos = np.zeros(shape, dtype=np.int64)
    step = 1
    for d in perm[:m]:
        ix = np.arange(shape[d], dtype=np.int64).reshape([-1 if k == d else 1 for k in range(ndim)])
        pos = pos + ix * step
        step *= shape[d]
    return pos < limit, S


def broadcast_strides(t, shape):
    """t's strides (elements) broadcast to ``shape``: 0 on new and size-1-expanded dims."""
    tshape, tstrides = tuple(t.shape), tuple(t.stride())
    lead = len(shape) - len(tshape)
    return [0 if i < lead or tshape[i - lead] != shape[i] else tstrides[i - lead]
            for i in range(len(shape))]
