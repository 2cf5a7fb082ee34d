"""einsum, _trilinear and bilinear, as ATen/native/Linear.cpp computes them: every contraction
goes through ``sumproduct_pair`` (permute, reshape, bmm, view, permute).

einsum and bilinear are CompositeImplicitAutograd in torch: the decomposition is both their
kernel and their autograd graph (``einsum('ij,jk->ik')``'s grad_fn is the ViewBackward0 /
PermuteBackward0 / BmmBackward0 chain of the ops below), so they are ``@decomposed``. _trilinear
has a derivatives.yaml entry of its own (TrilinearBackward0): its kernel runs the same ops with
no gradient recorded. Running torch's op sequence also gives torch's dtypes (an operand's own
dims are summed with ``sum``: integers become int64; products without a contraction use ``mul``,
which promotes; ``bmm`` refuses mixed dtypes), views (``einsum('ij->ji', x)`` is a permute of
x) and the bmm small-case arithmetic (reftrace's bmm reproduces torch's kernels).
"""
import numpy as np

from .. import _dtype as D
from .._tensor import _array_strides
from ..autograd.grad_mode import no_grad
from ._decomposed import decomposed
from ._registry import derivatives, op
from .arithmetic import TYPE_META_NAMES, mul
from .linalg import _small_bmm, bmm
from .shape import _strides_for_view, dim_list_to_bitset

_LETTERS = 26
_TOTAL_LABELS = 2 * _LETTERS
_ELLIPSIS = _TOTAL_LABELS  # the label code of "..."


def sumproduct_pair(left, right, sum_dims, keepdim=True):
    """``(left * right).sum(sum_dims)`` by permutation and bmm (the operands are pre-unsqueezed
    to the same number of dims, sizes 1 broadcasting)."""
    if left.dim() != right.dim():
        raise RuntimeError("number of dimensions must match")
    if not sum_dims:
        return mul(left, right)
    plan = _PairPlan(left.shape_tuple, right.shape_tuple, sum_dims)
    for d in plan.left_sums:  # a summed dim only one operand has: summed right away
        left = left.sum(d, True)
    for d in plan.right_sums:
        right = right.sum(d, True)
    if plan.swap:
        left, right = right, left
    left = left.permute(plan.lperm).reshape(plan.lshape)
    right = right.permute(plan.rperm).reshape(plan.rshape)
    result = bmm(left, right).view(plan.out_size).permute(plan.operm)
    if not keepdim:
        summed = set(sum_dims)
        result = result.view([s for i, s in enumerate(result.shape) if i not in summed])
    return result


class _PairPlan:
    """sumproduct_pair's bookkeeping, on sizes alone: which dims each operand sums on its own,
    and the pipeline permute inputs -> reshape inputs -> bmm -> view output -> permute output."""
    __slots__ = ("left_sums", "right_sums", "swap", "lperm", "rperm", "lshape", "rshape",
                 "out_size", "operm")

    def __init__(self, lsizes, rsizes, sum_dims):
        summed = set(sum_dims)
        self.left_sums, self.right_sums = [], []
        # the output dims, in three lists: lro in left, right and output; lo: left and output
        # only; ro: right and output only
        lro, lo, ro = [], [], []
        lro_size = lo_size = ro_size = sum_size = 1
        for i, (ls, rs) in enumerate(zip(lsizes, rsizes)):
            sl, sr = ls != 1, rs != 1
            if i in summed:
                if sl and sr:
                    if ls != rs:
                        raise RuntimeError("non-broadcast dimensions must match")
                    sum_size *= ls
                elif sl:
                    self.left_sums.append(i)
                elif sr:
                    self.right_sums.append(i)
            elif sl and sr:
                if ls != rs:
                    raise RuntimeError("non-broadcast dimensions must match")
                lro.append(i)
                lro_size *= ls
            elif sl:
                lo.append(i)
                lo_size *= ls
            else:
                ro.append(i)
                ro_size *= rs
        # the output is "lro, lo, 1-for-summed-dims, ro", unless every dim of right's comes
        # before left's in the output: then the operands swap, so that bmm writes the output's order
        self.swap = bool(lo and ro and ro[-1] < lo[0])
        if self.swap:
            lsizes, rsizes, lo, ro, lo_size, ro_size = rsizes, lsizes, ro, lo, ro_size, lo_size
        self.out_size = ([lsizes[d] for d in lro] + [lsizes[d] for d in lo] + [1] * len(sum_dims)
                         + [rsizes[d] for d in ro])
        self.lperm = lro + lo + list(sum_dims) + ro
        self.rperm = lro + list(sum_dims) + ro + lo
        self.operm = [-1] * len(self.out_size)
        for i, d in enumerate(self.lperm):
            self.operm[d] = i
        self.lshape, self.rshape = [lro_size, lo_size, sum_size], [lro_size, sum_size, ro_size]


# -- einsum -----------------------------------------------------------------------------------------

def _subscript(label):  # [A-Za-z] -> [0, 52): A-Z first
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(s):
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def _is_alpha(c):
    return c.isascii() and c.isalpha()


def _ellipsis_at(s, i):
    """s[i] is a '.': is it the start of a '...'?"""
    return i + 2 < len(s) and s[i + 1] == "." and s[i + 2] == "."


def _parse_operands(lhs, num_ops):
    op_labels = [[] for _ in range(num_ops)]
    ell_in_input, curr_op, i = False, 0, 0
    while i < len(lhs):
        label = lhs[i]
        if label == " ":
            pass
        elif label == ".":
            if ell_in_input:
                raise RuntimeError(f"einsum(): found '.' for operand {curr_op} for which an "
                                   "ellipsis was already found")
            if not _ellipsis_at(lhs, i):
                raise RuntimeError(f"einsum(): found '.' for operand {curr_op} that is not part "
                                   "of any ellipsis")
            i += 2
            op_labels[curr_op].append(_ELLIPSIS)
            ell_in_input = True
        elif label == ",":
            curr_op += 1
            if curr_op >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                                   "equation")
            ell_in_input = False
        else:
            if not _is_alpha(label):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            op_labels[curr_op].append(_subscript(label))
        i += 1
    if curr_op != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def _parse_output(rhs, lhs_len, label_count, label_perm_index, ell_num_dim):
    """The explicit output's labels get perm indices in order; returns (perm_index, ell_index,
    ell_in_output)."""
    perm_index, ell_index, ell_in_output, i = 0, 0, False, 0
    while i < len(rhs):
        label = rhs[i]
        if label == " ":
            pass
        elif label == ".":
            if ell_in_output:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
            if not _ellipsis_at(rhs, i):
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            i += 2
            ell_index = perm_index
            perm_index += ell_num_dim
            ell_in_output = True
        else:
            if not _is_alpha(label):
                raise RuntimeError(f"einsum(): invalid subscript given at index {lhs_len + 2 + i} "
                                   "in the equation string, subscripts must be in [a-zA-Z]")
            index = _subscript(label)
            if not (label_count[index] > 0 and label_perm_index[index] == -1):
                raise RuntimeError(
                    f"einsum(): output subscript {label}"
                    + (" appears more than once in the output" if label_perm_index[index] > -1
                       else " does not appear in the equation for any input operand"))
            label_perm_index[index] = perm_index
            perm_index += 1
        i += 1
    return perm_index, ell_index, ell_in_output


@decomposed("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor")
def einsum(equation, tensors, path):
    """Linear.cpp einsum: parse the equation, take diagonals of repeated labels, unsqueeze and
    permute every operand to the order (output dims, contracted dims), then contract the operands
    pairwise (left to right, or in ``path``'s order) with sumproduct_pair."""
    operands = tensors
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    if path is not None:
        path_size = 1 if num_ops == 1 else (num_ops - 1) * 2
        if len(path) != path_size:
            raise RuntimeError("einsum(): expected contraction path given in path parameter to "
                               f"have size {path_size} but got {len(path)}")
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_operands(lhs, num_ops)

    label_count = [0] * _TOTAL_LABELS
    ell_num_dim = 0  # the most dims any ellipsis covers
    for i, (operand, labels) in enumerate(zip(operands, op_labels)):
        ndims = operand.dim()
        nlabels = len(labels)
        has_ellipsis = _ELLIPSIS in labels
        for label in labels:
            if label == _ELLIPSIS:
                nlabels -= 1
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[label] += 1
        if not (nlabels <= ndims if has_ellipsis else nlabels == ndims):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlabels}"
                + (") is more than the number of dimensions (" if has_ellipsis
                   else ") does not match the number of dimensions (")
                + f"{ndims}) for operand {i}" + ("" if has_ellipsis else " and no ellipsis was given"))

    # every operand is aligned to the shape (output dims, contracted dims): each label's index
    label_perm_index = [-1] * _TOTAL_LABELS
    if arrow < 0:
        # the implicit output: the ellipsis dims, then the labels seen once, in [A-Za-z] order
        perm_index, ell_index, ell_in_output = ell_num_dim, 0, True
        for label in range(_TOTAL_LABELS):
            if label_count[label] == 1:
                label_perm_index[label] = perm_index
                perm_index += 1
    else:
        perm_index, ell_index, ell_in_output = _parse_output(
            equation[arrow + 2:], len(lhs), label_count, label_perm_index, ell_num_dim)
    out_num_dim = perm_index
    if not ell_in_output:  # the ellipsis dims are contracted
        ell_index = perm_index
        perm_index += ell_num_dim
    for label in range(_TOTAL_LABELS):
        if label_count[label] > 0 and label_perm_index[label] == -1:
            label_perm_index[label] = perm_index
            perm_index += 1

    ops, dim_counts = _aligned_operands(operands, op_labels, label_perm_index, ell_num_dim,
                                        ell_index, perm_index)
    ops = _contract(ops, dim_counts, out_num_dim, perm_index, path)

    if perm_index - out_num_dim > 0:
        # the contracted dims: already size 1 when there were operands to contract
        if num_ops > 1:
            return ops[0].view(list(ops[0].shape[:out_num_dim]))
        return ops[0].sum(list(range(out_num_dim, perm_index)))
    return ops[0]


def _aligned_operands(operands, op_labels, label_perm_index, ell_num_dim, ell_index, perm_index):
    """Check the sizes, take the diagonals of repeated labels, unsqueeze the missing dims and
    permute each operand to the aligned order; count, per aligned dim, the operands where its
    size is not 1 (a dim is contracted once a single operand has it left)."""
    label_size = [1] * _TOTAL_LABELS
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, (op, labels) in enumerate(zip(operands, op_labels)):
        permutation = [-1] * perm_index
        dim = 0
        for s in labels:
            if s == _ELLIPSIS:
                ndim = operands[i].dim() - (len(labels) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    if op.size(dim) != 1:
                        if not (ell_sizes[j] == 1 or ell_sizes[j] == op.size(dim)):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has "
                                f"size {op.size(dim)} which does not broadcast with previously "
                                f"seen ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = op.size(dim)
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[label_perm_index[s]] == -1:
                if op.size(dim) != 1:
                    if not (label_size[s] == 1 or label_size[s] == op.size(dim)):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {op.size(dim)} for operand "
                            f"{i} which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = op.size(dim)
                    dim_counts[label_perm_index[s]] += 1
                permutation[label_perm_index[s]] = dim
                dim += 1
            else:  # a repeated label: its diagonal
                prev_dim = permutation[label_perm_index[s]]
                if op.size(dim) != op.size(prev_dim):
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the "
                        f"sizes don't match, {op.size(dim)} != {op.size(prev_dim)}")
                op = op.diagonal(0, prev_dim, dim).movedim(-1, prev_dim)
        for k, val in enumerate(permutation):  # the labels this operand lacks
            if val == -1:
                op = op.unsqueeze(dim)
                permutation[k] = dim
                dim += 1
        ops.append(op.permute(permutation))
    return ops, dim_counts


def _contract(ops, dim_counts, out_num_dim, perm_index, path):
    """Contract the aligned operands pairwise; a contracted dim is summed as soon as only one
    operand (or the pair being multiplied) has it."""
    it = iter(path or ())
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = next(it), next(it)
            if j < i:
                i, j = j, i
            if not (i != j and i >= 0 and j < len(ops)):
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}) "
                                   + ("cannot contract an operand with itself" if i == j
                                      else "operand index is out of bounds"))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_dims_to_sum, b_dims_to_sum = [], [], []
        for dim in range(out_num_dim, perm_index):
            sa, sb = a.size(dim) != 1, b.size(dim) != 1
            if sa and sb:
                if a.size(dim) != b.size(dim):
                    raise RuntimeError("non-broadcast dimensions must match")
                dim_counts[dim] -= 1
                if dim_counts[dim] == 1:
                    sum_dims.append(dim)
                    dim_counts[dim] = 0
            elif dim_counts[dim] == 1:
                if sa:
                    a_dims_to_sum.append(dim)
                    dim_counts[dim] = 0
                elif sb:
                    b_dims_to_sum.append(dim)
                    dim_counts[dim] = 0
        if a_dims_to_sum:  # several dims at once: one sum call
            a = a.sum(a_dims_to_sum, True)
        if b_dims_to_sum:
            b = b.sum(b_dims_to_sum, True)
        r = sumproduct_pair(a, b, sum_dims, True)
        if path is not None:
            ops.append(r)
        else:
            ops.insert(0, r)
    return ops


# -- _trilinear, bilinear ---------------------------------------------------------------------------

@op("_trilinear(Tensor i1, Tensor i2, Tensor i3, int[] expand1, int[] expand2, int[] expand3, "
    "int[] sumdim, int unroll_dim=1) -> Tensor")
def _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim):
    """``(i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3)).sum(sumdim)``,
    one slice of ``unroll_dim`` at a time (two sumproduct_pairs per slice, added into a zeros
    tensor of i1's dtype). bilinear's forward and its backward are both this op. Its
    derivative is its own entry (TrilinearBackward0): the ops below record nothing."""
    total_dim = i1.dim() + len(expand1)
    if not 0 <= unroll_dim < total_dim:
        raise RuntimeError(f"unroll_dim must be in [0,{total_dim - 1}]")
    expand1, expand2, expand3, sumdim = (dim_list_to_bitset(d, total_dim)
                                         for d in (expand1, expand2, expand3, sumdim))
    with no_grad():
        output_size, sum_dims_12, sum_dims_23 = [], [], []
        unroll_size = -1
        for i in range(total_dim):
            s = 0
            if i in expand1:
                i1 = i1.unsqueeze(i)
            else:
                s = i1.size(i)
            if i in expand2:
                i2 = i2.unsqueeze(i)
            else:
                s = i2.size(i)
            if i in expand3:
                i3 = i3.unsqueeze(i)
                if i in sumdim and i != unroll_dim:
                    sum_dims_12.append(i)
            else:
                s = i3.size(i)
                if i in sumdim and i != unroll_dim:
                    sum_dims_23.append(i)
            output_size.append(1 if i in sumdim else s)
            if i == unroll_dim:
                unroll_size = s
        slicemul1, slicemul2, slicemul3 = (0 if unroll_dim in e else 1
                                           for e in (expand1, expand2, expand3))
        output = i1.new_zeros(output_size)
        # (an empty output means an empty operand: nothing to add)
        if (i1.numel() != 0 and i2.numel() != 0 and i3.numel() != 0
                and not _unrolled_on_arrays(output, (i1, i2, i3), (slicemul1, slicemul2, slicemul3),
                                            sum_dims_12, sum_dims_23, unroll_dim, unroll_size,
                                            unroll_dim in sumdim)):
            for k in range(unroll_size):
                buf = sumproduct_pair(i1.narrow(unroll_dim, k * slicemul1, 1),
                                      i2.narrow(unroll_dim, k * slicemul2, 1), sum_dims_12)
                buf = sumproduct_pair(buf, i3.narrow(unroll_dim, k * slicemul3, 1), sum_dims_23)
                if unroll_dim in sumdim:
                    output.add_(buf)
                else:
                    output.narrow(unroll_dim, k, 1).add_(buf)
        for i in range(output.dim() - 1, -1, -1):
            if i in sumdim:
                output.squeeze_(i)
    # torch's kernel runs its add_s below the ADInplaceOrView key: they bump no version
    output._version = 0
    return output


# The loop above on NumPy arrays: the same ops, minus a dispatcher round-trip per op (~20 per
# slice made F.bilinear 20x slower than one einsum). Each step makes the array the tensor op makes
# (unsqueeze/narrow/permute index NumPy views, reshape views or copies as shape._viewed decides
# from the torch strides, which are tracked beside each array: None where contiguous), so bmm
# (linalg._small_bmm or np.matmul, whose BLAS/no-BLAS choice reads the array strides) gets the
# same operands and gives the same bits. The cases this does not model run the loop above:
# dtypes other than float32/float64 (complex add_ multiplies by alpha, float16 rounds in
# float32), math bits, products without a contraction (mul's output layout), dims that one
# operand sums on its own, an add_ that would broadcast, a view NumPy refuses.
_ARRAY_DTYPES = (D.float32, D.float64)


class _NotModelled(Exception):
    pass


def _unrolled_on_arrays(output, inputs, slicemuls, sum_dims_12, sum_dims_23, unroll_dim,
                        unroll_size, unroll_summed):
    """_trilinear's loop on arrays, into output; False (output untouched) where not modelled."""
    i1, i2, i3 = inputs
    if (i1.dtype not in _ARRAY_DTYPES or any(t.dtype is not i1.dtype or t._mbits
                                             or type(t._array) is not np.ndarray for t in inputs)
            or not sum_dims_12 or not sum_dims_23 or unroll_size == 0  # (all expand unroll_dim)
            # (a slice past a broadcast size-1 dim: narrow's error, raised by the loop above)
            or any(m and t.size(unroll_dim) < unroll_size for t, m in zip(inputs, slicemuls))):
        return False
    plan_12 = _PairPlan(_narrowed(i1.shape_tuple, unroll_dim),
                        _narrowed(i2.shape_tuple, unroll_dim), sum_dims_12)
    if plan_12.left_sums or plan_12.right_sums:
        return False
    out = output._array
    arrays = [(t._array, t._stride) for t in inputs]
    try:
        slices = [[_narrow_array(a, s, unroll_dim, k * m) for (a, s), m in zip(arrays, slicemuls)]
                  for k in range(unroll_size)]
        bufs = _pairs_on_arrays([(s1, s2) for s1, s2, _ in slices], plan_12)
        plan_23 = _PairPlan(bufs[0][0].shape, slices[0][2][0].shape, sum_dims_23)
        if plan_23.left_sums or plan_23.right_sums:
            raise _NotModelled
        bufs = _pairs_on_arrays([(buf, s3) for buf, (_, _, s3) in zip(bufs, slices)], plan_23)
        for k, (buf, _) in enumerate(bufs):  # in k's order: the sum over unroll_dim
            target = out if unroll_summed else _narrow_array(out, None, unroll_dim, k)[0]
            if target.shape != buf.shape:
                raise _NotModelled
            np.add(target, buf, out=target)  # add_'s float kernel: x + y, one rounding
    except _NotModelled:
        out[...] = 0
        return False
    return True


def _narrowed(shape, dim):
    return shape[:dim] + (1,) + shape[dim + 1:]


def _view_strides(array, strides):
    """The torch strides of a view: None where contiguous (as _tensor._view_of keeps them)."""
    strides = tuple(strides)
    return None if strides == _array_strides(array.shape) else strides


def _narrow_array(a, strides, dim, start):
    """narrow(dim, start, 1) (shape.slice_view)."""
    view = a[(slice(None),) * dim + (slice(start, start + 1),)]
    return view, _view_strides(view, strides or _array_strides(a.shape))


def _permute_array(a, strides, dims):
    strides = strides or _array_strides(a.shape)
    view = a.transpose(dims)
    return view, _view_strides(view, [strides[d] for d in dims])


def _reshape_array(a, strides, shape):
    """reshape (shape.reshape_to / _viewed): a view where torch's computeStride gives one, else a
    contiguous copy."""
    shape = tuple(shape)
    if strides is None:
        return a.reshape(shape), None
    new_strides = _strides_for_view(a.shape, strides, shape)
    if new_strides is None:
        return a.copy(order="C").reshape(shape), None
    try:
        view = a.reshape(shape, copy=False)
    except ValueError:  # (_viewed then restrides the base: not modelled)
        raise _NotModelled from None
    return view, _view_strides(view, new_strides)


def _pairs_on_arrays(pairs, plan):
    """sumproduct_pair(left, right, sum_dims) of each (left, right) pair: (array, torch strides)
    pairs of one float dtype, the same shapes in every pair, no dims summed on their own."""
    operands = []
    for left, right in pairs:
        if plan.swap:
            left, right = right, left
        operands.append((_reshape_array(*_permute_array(*left, plan.lperm), plan.lshape)[0],
                         _reshape_array(*_permute_array(*right, plan.rperm), plan.rshape)[0]))
    # bmm's kernel (linalg._product): the small-case loop, else one np.matmul; a fresh result.
    # The small-case loop is elementwise over the batch (each element adds its products in k's
    # order, one rounding per NumPy op), so one call on the pairs stacked along the batch gives
    # each pair its own bits; the contiguous pieces np.split cuts are fresh results' layouts.
    a, b = operands[0]
    dtype = D.BY_NUMPY[a.dtype]
    first = _small_bmm(np, a, b, dtype)
    if first is None:
        products = [np.matmul(a, b) for a, b in operands]
    else:
        products = [first]
        if len(operands) > 1:
            rest = _small_bmm(np, np.concatenate([a for a, _ in operands[1:]]),
                              np.concatenate([b for _, b in operands[1:]]), dtype)
            products += np.split(rest, len(operands) - 1)
    return [_permute_array(p.reshape(plan.out_size), None, plan.operm) for p in products]


derivatives(_trilinear, {
    "i1, i2, i3": "_trilinear_backward(grad, "
                  "wrap_opt_if(i1, grad_input_mask[1] or grad_input_mask[2]), "
                  "wrap_opt_if(i2, grad_input_mask[0] or grad_input_mask[2]), "
                  "wrap_opt_if(i3, grad_input_mask[0] or grad_input_mask[1]), "
                  "expand1, expand2, expand3, sumdim, grad_input_mask)"})


def _check_bilinear(input1, input2, weight, bias):
    named = [("input1", input1), ("input2", input2), ("weight", weight)]
    if bias is not None:
        named.append(("bias", bias))
    if any(t.dtype is not input1.dtype for _, t in named):
        raise RuntimeError("All tensors must have the same dtype, got " + ", ".join(
            f"{n}: {TYPE_META_NAMES[t.dtype]}" for n, t in named))
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.size(i) != input2.size(i):
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.size(i)} and {input2.size(i)}")
    if input1.size(input1.dim() - 1) != weight.size(1):
        raise RuntimeError("bilinear(): input1 size does not match weight size: got "
                           f"{input1.size(input1.dim() - 1)} but expected {weight.size(1)}")
    if input2.size(input2.dim() - 1) != weight.size(2):
        raise RuntimeError("bilinear(): input2 size does not match weight size: got "
                           f"{input2.size(input2.dim() - 1)} but expected {weight.size(2)}")
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError("bilinear(): bias size does not match weight size: got "
                           f"{bias.size(0)} but expected {weight.size(0)}")


@decomposed("bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor")
def bilinear(input1, input2, weight, bias):
    """y[..., k] = input1[..., i] * weight[k, i, j] * input2[..., j] (+ bias[k]): the inputs
    flattened to rows, one _trilinear, reshaped back (grad_fn: AddBackward0 on ViewBackward0 on
    TrilinearBackward0)."""
    _check_bilinear(input1, input2, weight, bias)
    output_size = list(input1.shape[:-1]) + [weight.size(0)]
    input1_flattened = input1.reshape([-1, input1.size(-1)])
    input2_flattened = input2.reshape([-1, input2.size(-1)])
    output = _trilinear(input1_flattened, weight, input2_flattened, [1, 3], [0], [1, 2],
                        [2, 3]).reshape(output_size)
    if bias is not None:
        output = output + bias
    return output
