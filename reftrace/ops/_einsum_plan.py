"""The dtype that torch's einsum (ATen/native/Linear.cpp: einsum, sumproduct_pair) produces.

torch does not promote einsum's operands up front: it sums an operand's dims that no other
operand shares with `sum` (integers and bool become int64), multiplies pairs whose contraction
needs no bmm with `mul` (type promotion), and hands the rest to `bmm`, which refuses mixed
dtypes. This walks the same contraction order over shapes and dtypes only (NumPy computes the
values), so the result dtype and the mixed-dtype errors match."""
from .. import _dtype as D

_ELL = "..."


def _sum_dtype(dt):
    return D.int64 if dt.category <= 1 else dt  # at::sum's default dtype for integral / bool


def _parse(equation, shapes):
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    ops = []
    for o in lhs.split(","):
        labels, rest = [], o
        while rest:
            if rest.startswith(_ELL):
                labels.append(_ELL)
                rest = rest[3:]
            else:
                labels.append(rest[0])
                rest = rest[1:]
        ops.append(labels)
    return ops, (rhs if arrow else None)


def _subscript(c):  # torch orders labels A-Z then a-z
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def einsum_result_dtype(equation, tensors, path=None):
    try:
        return _walk(equation, tensors, path)
    except (IndexError, KeyError, ValueError):
        return None  # a malformed equation / shape: einsum's own checks report it


def _walk(equation, tensors, path):
    """Result dtype of torch.einsum(equation, *tensors, path=path); raises bmm's RuntimeError
    for the mixed dtypes torch rejects. Returns None when the equation is one torch rejects
    earlier (the caller's own checks report those)."""
    shapes = [tuple(t.shape) for t in tensors]
    try:
        op_labels, rhs = _parse(equation, shapes)
    except Exception:
        return None
    if len(op_labels) != len(tensors):
        return None
    counts, ell_num_dim = {}, 0
    for labels, shape in zip(op_labels, shapes):
        n = len([l for l in labels if l != _ELL])
        if _ELL in labels:
            ell_num_dim = max(ell_num_dim, len(shape) - n)
        for l in labels:
            if l != _ELL:
                counts[l] = counts.get(l, 0) + 1
    perm, idx, ell_index, ell_in_out = {}, 0, 0, False
    if rhs is None:
        idx, ell_in_out = ell_num_dim, True
        for l in sorted(counts, key=_subscript):
            if counts[l] == 1:
                perm[l] = idx
                idx += 1
    else:
        rest = rhs
        while rest:
            if rest.startswith(_ELL):
                ell_index, idx, ell_in_out = idx, idx + ell_num_dim, True
                rest = rest[3:]
                continue
            if rest[0] not in counts or rest[0] in perm:
                return None
            perm[rest[0]] = idx
            idx += 1
            rest = rest[1:]
    out_num_dim = idx
    if not ell_in_out:
        ell_index, idx = idx, idx + ell_num_dim
    for l in sorted(counts, key=_subscript):
        if l not in perm:
            perm[l] = idx
            idx += 1
    perm_index = idx
    dim_counts = [0] * perm_index
    ops = []
    for labels, shape, tensor in zip(op_labels, shapes, tensors):
        full = [1] * perm_index
        seen = set()
        dim = 0
        for l in labels:
            if l == _ELL:
                nd = len(shape) - (len(labels) - 1)
                for j in range(ell_num_dim - nd, ell_num_dim):
                    if shape[dim] != 1:
                        dim_counts[ell_index + j] += 1
                    full[ell_index + j] = shape[dim]
                    dim += 1
            elif l not in seen:  # a repeated label is a diagonal: no new dim
                seen.add(l)
                if shape[dim] != 1:
                    dim_counts[perm[l]] += 1
                full[perm[l]] = shape[dim]
                dim += 1
            else:
                dim += 1
        ops.append([tensor.dtype, full])
    path = list(path) if path is not None else None
    k = 0
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = sorted(path[k:k + 2])
            k += 2
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims = []
        for d in range(out_num_dim, perm_index):
            sa, sb = a[1][d] != 1, b[1][d] != 1
            if sa and sb:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if sa:
                    a = _summed(a, [d])
                    dim_counts[d] = 0
                elif sb:
                    b = _summed(b, [d])
                    dim_counts[d] = 0
        r = _sumproduct_pair(a, b, sum_dims)
        if path is not None:
            ops.append(r)
        else:
            ops.insert(0, r)
    dt = ops[0][0]
    if perm_index - out_num_dim > 0 and len(tensors) == 1:
        dt = _sum_dtype(dt)
    return dt


def _summed(x, dims):
    shape = list(x[1])
    for d in dims:
        shape[d] = 1
    return [_sum_dtype(x[0]), shape]


def _sumproduct_pair(left, right, sum_dims):
    from .._promotion import promote_types
    shape = [max(p, q) for p, q in zip(left[1], right[1])]
    if not sum_dims:
        return [promote_types(left[0], right[0]), shape]
    lo, ro = [], []
    for i, (p, q) in enumerate(zip(left[1], right[1])):
        sl, sr = p != 1, q != 1
        if i in sum_dims:
            if sl and not sr:
                left = _summed(left, [i])
            elif sr and not sl:
                right = _summed(right, [i])
        elif sl and not sr:
            lo.append(i)
        elif sr and not sl:
            ro.append(i)
    if lo and ro and ro[-1] < lo[0]:
        left, right = right, left
    if left[0] == D.bool:  # bmm's CPU kernel dispatches on self's dtype before comparing
        raise NotImplementedError('"bmm" not implemented for \'Bool\'')
    if left[0] != right[0]:
        raise RuntimeError(f"expected scalar type {left[0].ir_name} but found {right[0].ir_name}")
    for d in sum_dims:
        shape[d] = 1
    return [left[0], shape]
