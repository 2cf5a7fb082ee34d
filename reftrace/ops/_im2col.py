"""im2col and col2im: the copies around a convolution's GEMM, over NumPy strided views.

``windows`` views every receptive field of an array at once (no copy); ``im2col`` copies them
into the (N, C, *kernel, *out) matrix a convolution multiplies by its weights, in two passes of
long runs; ``scatter_windows`` (col2im) sums such a matrix back into an image, as a transposed
convolution and ``F.fold`` do. The NumPy paths follow plans made once per geometry (shapes,
slices, strides): a model calls each layer with the same shapes every time.
"""
import numpy as np

from ._layout_cache import keep_plan


def windows(xp, a, kernel, stride, dilation):
    """All windows of the last len(kernel) dims of ``a``: shape (..., *out, *kernel), a view.

    out[i] = (L[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1 (the caller pads first).
    """
    n = len(kernel)
    lead, spatial = a.shape[:-n], a.shape[-n:]
    out = [(L - d * (k - 1) - 1) // s + 1 for L, k, s, d in zip(spatial, kernel, stride, dilation)]
    st = a.strides
    strides = st[:-n] + tuple(st[-n + i] * stride[i] for i in range(n)) \
        + tuple(st[-n + i] * dilation[i] for i in range(n))
    return strided_view(xp, a, tuple(lead) + tuple(out) + tuple(kernel), strides)


def strided_view(xp, a, shape, strides):
    """as_strided(a, shape, strides). A C-contiguous NumPy array is viewed straight through its
    buffer (np.ndarray), a few microseconds less than as_strided's wrapper: kernels on small
    models call this once per op."""
    if xp is np and a.flags.c_contiguous:
        return np.ndarray(shape, a.dtype, a, 0, strides)
    return xp.lib.stride_tricks.as_strided(a, shape, strides)


def constant_padded(xp, a, pad_pairs, fill=0):
    """``a`` with (before, after) ``fill`` elements around its last len(pad_pairs) dims
    (np.pad is several times slower for this simple case)."""
    n = len(pad_pairs)
    shape = a.shape[:-n] + tuple(L + b + e for L, (b, e) in zip(a.shape[-n:], pad_pairs))
    out = xp.full(shape, fill, dtype=a.dtype)
    out[(Ellipsis,) + tuple(slice(b, b + L) for L, (b, e) in zip(a.shape[-n:], pad_pairs))] = a
    return out


def im2col(a, plan):
    """The (N, C, *kernel, *out) matrix of every receptive field of NumPy array ``a`` (N, C,
    *spatial), zero padded, C-contiguous (``plan``: ``im2col_plan``'s for a's geometry). The same
    values, in the same layout, as copying the transposed ``windows`` of the padded input, built
    in two passes that move long runs instead of one copy whose inner loop is one output row (a
    few elements on a small map):

    1. ``shifted`` (N, C, kW, *padded leading spatial, out_W): for each kernel column kj the
       input's columns that offset reads, ``out_W`` per row (stride and dilation applied). With
       padding and a few kernel columns: zeros, then one slice assignment per kernel column;
       otherwise one copy of a strided view of the (padded) input.
    2. the windows over the leading spatial dims of ``shifted``: with stride 1 each window's
       positions are whole rows of ``shifted``, so the final copy moves runs of prod(out)."""
    shifted_shape, copies, padding, kernel_w, cols_shape, cols_strides = plan[:6]
    if copies is not None:
        shifted = np.zeros(shifted_shape, a.dtype)
        for dst, src in copies:
            shifted[dst] = a[src]
    else:
        if padding is not None:
            a = constant_padded(np, a, padding)
        st = a.strides
        (dw, sw) = kernel_w
        shifted = np.ascontiguousarray(strided_view(
            np, a, shifted_shape, st[:2] + (st[-1] * dw,) + st[2:-1] + (st[-1] * sw,)))
    if cols_strides is None:  # 1-d: ``shifted`` is the matrix itself
        return shifted
    return np.ascontiguousarray(np.ndarray(cols_shape, a.dtype, shifted, 0, cols_strides))


def im2col_plan(shape, itemsize, kernel, stride, pad_pairs, dilation):
    """im2col's shapes, slices and strides: (shifted's shape, the slice assignments or None,
    the padding or None, (dilation, stride) of the last dim, the matrix's shape and strides
    (None for a 1-d convolution), the output's spatial sizes)."""
    n = len(kernel)
    spatial = shape[2:]
    padded = [L + b + e for L, (b, e) in zip(spatial, pad_pairs)]
    out = tuple((P - d * (k - 1) - 1) // s + 1
                for P, k, s, d in zip(padded, kernel, stride, dilation))
    kw, sw, dw, (bw, _) = kernel[-1], stride[-1], dilation[-1], pad_pairs[-1]
    width, out_w = spatial[-1], out[-1]
    shifted_shape = shape[:2] + (kw,) + tuple(padded[:-1]) + (out_w,)
    padding = tuple(map(tuple, pad_pairs)) if any(map(any, pad_pairs)) else None
    copies = None
    if padding is not None and kw <= 4:
        rows = tuple(slice(b, b + L) for L, (b, _) in zip(spatial[:-1], pad_pairs[:-1]))
        copies = []
        for kj in range(kw):
            # output column o reads input column o * sw + kj * dw - bw, when inside the input
            first = kj * dw - bw
            lo = max(0, -(first // sw)) if first < 0 else 0
            hi = min(out_w, (width - 1 - first) // sw + 1) if width - 1 - first >= 0 else 0
            if hi > lo:
                src = slice(lo * sw + first, (hi - 1) * sw + first + 1, sw)
                copies.append(((slice(None), slice(None), kj) + rows + (slice(lo, hi),),
                               (Ellipsis, src)))
    if n == 1:
        return shifted_shape, copies, padding, (dw, sw), None, None, out
    st = [itemsize]  # shifted's C-contiguous strides, innermost first
    for size in reversed(shifted_shape[1:]):
        st.insert(0, st[0] * size)
    lead_st = st[3:-1]  # the padded leading spatial dims
    cols_shape = shape[:2] + tuple(kernel) + out
    cols_strides = (st[0], st[1]) + tuple(s * d for s, d in zip(lead_st, dilation[:-1])) \
        + (st[2],) + tuple(s * k for s, k in zip(lead_st, stride[:-1])) + (itemsize,)
    return shifted_shape, copies, padding, (dw, sw), cols_shape, cols_strides, out


def scatter_windows(xp, cols, full, stride, dilation, phases=False):
    """The adjoint of ``windows``: sum ``cols`` (..., *kernel, *positions) back into an array of
    spatial size ``full`` (col2im). One strided add per kernel offset (a loop over the kernel,
    never over elements): offset k of every window lands at k*dilation + position*stride.
    ``phases``: the result may be larger than ``full`` (zeros beyond), which lets NumPy arrays
    take ``_scatter_plan``'s fewer, larger adds when the kernel is a multiple of the stride."""
    if xp is np:
        kind, shape, steps, split, order, final = _scatter_plan(
            cols.shape, tuple(full), tuple(stride), tuple(dilation), phases)
        if kind == "tile":
            # each output receives one value: one transposing copy, value + 0 (the sum into zeros)
            out = np.empty(shape, cols.dtype)
            np.add(cols.transpose(order), cols.dtype.type(0), out=out)
            return out.reshape(final)
        out = np.zeros(shape, cols.dtype)
        source = cols if split is None else cols.reshape(split)
        for target, offset in steps:
            out[target] += source[offset]
        return out if order is None else out.transpose(order).reshape(final)
    n = len(full)
    lead = cols.shape[:-2 * n]
    kernel = cols.shape[-2 * n:-n]
    positions = cols.shape[-n:]
    out = xp.zeros(tuple(lead) + tuple(full), dtype=cols.dtype)
    for k in np.ndindex(*kernel):
        target = tuple(slice(k[i] * dilation[i], k[i] * dilation[i] + (positions[i] - 1) * stride[i] + 1,
                             stride[i]) for i in range(n))
        out[(Ellipsis,) + target] += cols[(Ellipsis,) + k + (slice(None),) * n]
    return out


def _scatter_plan(shape, full, stride, dilation, phases):
    """scatter_windows's steps for one geometry (made once: a model scatters the same shapes on
    every call): (kind, the output's shape, [(target index, source index)], the shape the
    source is read as (None: as it is), the transposition and shape that give the result).

    * "windows": one add per kernel offset, in the kernel's order, into zeros of size ``full``.
    * "phases" (dilation 1, each kernel size a multiple of its stride, a stride above 1):
      offset k = q * stride + phase of the window at position l lands at
      (l + q) * stride + phase, so the offsets sharing q reach distinct outputs and each q is
      one add of all the phases at once (into an output laid out phase-major, each phase's
      plane contiguous). The adds run in q's order, which is the offsets' order restricted to
      any one output: each output sums its contributions in the same order as "windows".
    * "tile" (kernel == stride, no excess): the windows tile the output, a single copy."""
    key = (shape, full, stride, dilation, phases)
    plan = _SCATTER_PLANS.get(key)
    if plan is not None:
        return plan
    n = len(full)
    m = len(shape) - 2 * n
    lead, kernel, positions = shape[:m], shape[m:m + n], shape[m + n:]
    keep = (slice(None),) * m
    interleave = tuple(range(m)) + tuple(v for i in range(n) for v in (m + n + i, m + i))
    if phases and all(d == 1 for d in dilation) and any(s > 1 for s in stride) \
            and all(k % s == 0 for k, s in zip(kernel, stride)):
        quotients = [k // s for k, s in zip(kernel, stride)]
        planes = [-(-f // s) for f, s in zip(full, stride)]
        final = lead + tuple(p * s for p, s in zip(planes, stride))
        if planes == list(positions) and all(q == 1 for q in quotients):
            plan = ("tile", lead + tuple(v for pair in zip(positions, kernel) for v in pair),
                    None, None, interleave, final)
        else:
            split = lead + tuple(v for pair in zip(quotients, stride) for v in pair) + positions
            steps = [(keep + (slice(None),) * n
                      + tuple(slice(qi, qi + L) for qi, L in zip(q, positions)),
                      keep + tuple(v for qi in q for v in (qi, slice(None))))
                     for q in np.ndindex(*quotients)]
            plan = ("phases", lead + tuple(stride) + tuple(planes), steps, split, interleave,
                    final)
    else:
        steps = [(keep + tuple(slice(k[i] * dilation[i], k[i] * dilation[i]
                                     + (positions[i] - 1) * stride[i] + 1, stride[i])
                               for i in range(n)),
                  keep + k)
                 for k in np.ndindex(*kernel)]
        plan = ("windows", lead + full, steps, None, None, None)
    return keep_plan(_SCATTER_PLANS, key, plan, 1024)


_SCATTER_PLANS = {}  # col2im geometry -> _scatter_plan's plan
