"""More reductions and products (ATen/native/ReduceOps.cpp, Sorting.cpp, LinearAlgebra.cpp):
nansum, nanmean, aminmax, std_mean / var_mean, msort, kthvalue, median, nanmedian, mode,
logcumsumexp, diff, dist, equal, inner, tensordot, addmv, addr, addbmm, trapezoid /
trapz, cumulative_trapezoid, renorm."""
import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, _wrap_dim
from ._decomposed import decomposed
from ._registry import composite, derivatives, get_packet, op
from ._fma import fma
from ._std_sort import std_sort_order
from .casts import checked_scalar
from .linalg import _check_expand, _product, scaled_product, scaled_sum
from .reduction import _axes, _result, _values_and_indices, _variance, _zero_dim_pair
from .shape import _fmt

_FM = ("function", "method")


def _P(name):
    return get_packet(name)


# -- nansum, nanmean --------------------------------------------------------------------------------

@op("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", variants=_FM)
def nansum(self, dim, keepdim, dtype):
    if self.dtype.is_complex:
        raise RuntimeError("nansum does not support complex inputs")
    out = dtype or (D.int64 if self.dtype.category <= 1 else self.dtype)
    a = self._array
    if a.dtype.kind == "f":
        a = np.where(np.isnan(a), 0, a)
    acc = np.float32 if out is D.float16 else out.np
    return _result(np.add.reduce(a, axis=_axes(self, dim), dtype=acc, keepdims=keepdim), out, self.device)


derivatives(nansum, {"self": "nansum_backward(grad.to(self.dtype), self, dim, keepdim)"})


@decomposed("nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
            variants=_FM)
def nanmean(self, dim, keepdim, dtype):
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{self.dtype.ir_name}")
    factor = self.isnan().logical_not_().sum(dim, keepdim)
    return nansum(self, dim, keepdim, dtype=dtype).div(factor)


# -- aminmax, std_mean / var_mean ---------------------------------------------------------------------

@op("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)", variants=_FM)
def aminmax(self, dim, keepdim):
    a = self._array
    if dim is None:
        if a.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        lo, hi = np.min(a), np.max(a)
        if keepdim:
            lo, hi = np.reshape(lo, (1,) * a.ndim), np.reshape(hi, (1,) * a.ndim)
    else:
        axis = _wrap_dim(dim, a.ndim)
        if a.ndim and a.shape[axis] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {axis} to have non-zero size.")
        if a.ndim == 0:
            lo = hi = a.copy()
        else:
            lo, hi = np.min(a, axis=axis, keepdims=keepdim), np.max(a, axis=axis, keepdims=keepdim)
    return _result(lo, self.dtype, self.device), _result(hi, self.dtype, self.device)


derivatives(aminmax, {"self": "aminmax_backward(self, dim, keepdim, grads[0], grads[1], min, max)"})


def _mean_of(self, dim, keepdim):
    dt = self.dtype
    axes = _axes(self, dim)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.mean(self._array.astype(np.complex128 if dt.is_complex else np.float64), axis=axes,
                    keepdims=keepdim)
    return _result(m, dt, self.device)


def _moments(name, take_sqrt):
    def correction_kernel(self, dim, correction, keepdim):
        return _variance(self, dim, correction, keepdim, take_sqrt), _mean_of(self, dim, keepdim)
    corr = op(f"{name}.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
              "bool keepdim=False) -> (Tensor, Tensor)")(correction_kernel)
    formula = ("std_mean_backward(grads[0], grads[1], self, result0, dim, correction, keepdim)" if take_sqrt
               else "var_mean_backward(grads[0], grads[1], self, dim, correction, keepdim)")
    derivatives(corr, {"self": formula})
    # torch's parser order: .dim (dim required), .correction, plain; .dim and plain are composite
    by_dim = op(f"{name}.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)")(
        lambda self, dim, unbiased, keepdim: correction_kernel(self, dim, int(unbiased), keepdim))
    composite(by_dim)(lambda self, dim, unbiased, keepdim: corr(self, dim, correction=int(unbiased), keepdim=keepdim))
    plain = op(f"{name}(Tensor self, bool unbiased=True) -> (Tensor, Tensor)")(
        lambda self, unbiased: correction_kernel(self, None, int(unbiased), False))
    composite(plain)(lambda self, unbiased: corr(self, None, correction=int(unbiased)))
    return by_dim, corr, plain


std_mean_dim, std_mean_correction, std_mean = _moments("std_mean", True)
var_mean_dim, var_mean_correction, var_mean = _moments("var_mean", False)


# -- sorting selections ---------------------------------------------------------------------------------

@decomposed("msort(Tensor self) -> Tensor", variants=_FM)
def msort(self):
    return _P("sort")(self, 0, False)[0]


def _select_along(self, dim, keepdim, pick, name):
    """values/indices of ``pick(sorted row)`` along dim: pick gets the stable sort order."""
    a = self._array
    if a.ndim == 0:
        return _zero_dim_pair(self)
    axis = _wrap_dim(dim, a.ndim)
    if a.shape[axis] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
    moved = np.moveaxis(a, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    vals, idxs = zip(*[pick(r) for r in rows]) if rows.shape[0] else ((), ())
    shape = moved.shape[:-1]
    v = np.array(vals, dtype=a.dtype).reshape(shape)
    i = np.array(idxs, dtype=np.int64).reshape(shape)
    if keepdim:
        v, i = np.expand_dims(v, axis), np.expand_dims(i, axis)
    return _values_and_indices(self, v, i)


def _quick_select(row, k):
    """SortingUtils.h quick_select_template over (values, indices): the k-th smallest lands at k
    (nan as the largest), and among equal values the index is the one torch's partitioning leaves
    there (median-of-three pivot, Hoare partition)."""
    arr = row.tolist()
    idx = list(range(len(arr)))
    is_float = row.dtype.kind in "fc"

    def gt_or_nan(x, y):
        if is_float and x != x:
            return y == y
        return x > y

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]
    lo, hi = 0, len(arr) - 1
    while True:
        if hi <= lo:
            break
        if hi == lo + 1:
            if gt_or_nan(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        mid = lo + (hi - lo) // 2
        swap(mid, lo + 1)
        if gt_or_nan(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt_or_nan(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt_or_nan(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt_or_nan(piv, arr[i]):
                i += 1
            j -= 1
            while gt_or_nan(arr[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return np.array(arr, dtype=row.dtype), idx


@op("kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    variants=_FM)
def kthvalue(self, k, dim, keepdim):
    size = self._array.shape[_wrap_dim(dim, self._array.ndim)] if self._array.ndim else 1
    if not 1 <= k <= size:
        raise IndexError(f"kthvalue(): selected number k out of range for dimension {_wrap_dim(dim, max(self._array.ndim, 1))}")

    def pick(r):
        values, indices = _quick_select(r, k - 1)
        return values[k - 1], indices[k - 1]
    if self._array.ndim == 0:
        return _zero_dim_pair(self)
    return _select_along(self, dim, keepdim, pick, "kthvalue")


_VALUE_SELECTING = {"self": "value_selecting_reduction_backward_symint(grad, dim, indices, self.shape, keepdim)"}
derivatives(kthvalue, _VALUE_SELECTING, output_differentiability=[True, False])


def _median_pick(ignore_nan):
    def pick(r):
        order = np.argsort(r, kind="stable")
        if r.dtype.kind in "fc":
            nans = int(np.isnan(r).sum())
            if nans and not ignore_nan:
                first = int(np.flatnonzero(np.isnan(r))[0])
                return r[first], first
            n = r.shape[0] - nans if ignore_nan else r.shape[0]
        else:
            n = r.shape[0]
        if n == 0:
            return r[order[0]], order[0]
        j = order[(n - 1) // 2]
        return r[j], j
    return pick


def _median_all(self, ignore_nan):
    a = self._array.reshape(-1)
    if a.size == 0:
        return _fresh(np.asarray(np.nan, dtype=self.dtype.np) if self.dtype.is_floating_point
                      else np.asarray(0, dtype=self.dtype.np), self.dtype, self.device)
    v, _ = _median_pick(ignore_nan)(a)
    return _fresh(np.asarray(v, dtype=self.dtype.np), self.dtype, self.device)


median = op("median(Tensor self) -> Tensor", variants=_FM)(lambda self: _median_all(self, False))
derivatives(median, {"self": "evenly_distribute_backward(grad, self, result)"})
median_dim = op("median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                variants=_FM)(lambda self, dim, keepdim: _select_along(self, dim, keepdim, _median_pick(False), "median"))
derivatives(median_dim, _VALUE_SELECTING, output_differentiability=[True, False])
nanmedian = op("nanmedian(Tensor self) -> Tensor", variants=_FM)(lambda self: _median_all(self, True))
derivatives(nanmedian, {"self": "evenly_distribute_backward(grad, self, result)"})
nanmedian_dim = op("nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                   variants=_FM)(lambda self, dim, keepdim: _select_along(self, dim, keepdim, _median_pick(True), "nanmedian"))
derivatives(nanmedian_dim, _VALUE_SELECTING, output_differentiability=[True, False])


def _mode_pick(r):
    """TensorCompare.cpp's mode kernel: (value, index) pairs std::sort-ed by value; the first run
    of the largest count wins, and its index is the run's last pair's."""
    keys = r.tolist()
    order = std_sort_order(keys, lambda x, y: x < y) if len(set(keys)) < len(keys) else \
        sorted(range(len(keys)), key=keys.__getitem__)
    best, best_freq, freq = order[0], 0, 0
    for i, j in enumerate(order):
        freq += 1
        if i == len(order) - 1 or keys[j] != keys[order[i + 1]]:
            if freq > best_freq:
                best, best_freq = j, freq
            freq = 0
    return r[best], best


@op("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)", variants=_FM)
def mode(self, dim, keepdim):
    return _select_along(self, dim, keepdim, _mode_pick, "mode")


derivatives(mode, _VALUE_SELECTING, output_differentiability=[True, False])


# -- logcumsumexp -------------------------------------------------------------------------------------

@op("logcumsumexp(Tensor self, int dim) -> Tensor", variants=_FM)
def logcumsumexp(self, dim):
    a = self._array
    dt = self.dtype if (self.dtype.is_floating_point or self.dtype.is_complex) else D.get_default_dtype()
    if a.ndim == 0:
        return _fresh(a.astype(dt.np), dt, self.device)
    axis = _wrap_dim(dim, a.ndim)
    wide = np.float64 if not dt.is_complex else np.complex128
    with np.errstate(all="ignore"):
        r = np.logaddexp.accumulate(a.astype(wide), axis=axis) if not dt.is_complex else \
            _logcumsumexp_complex(a.astype(wide), axis)
    return _fresh(r.astype(dt.np), dt, self.device)


def _logcumsumexp_complex(a, axis):
    """logcumsumexp_cpu_kernel for complex: ``cum = _log_add_exp_helper(x, cum)`` along the
    dimension from ``-inf``, in the accumulate type (complex128), never exp's sum (which
    overflows where the log of it does not)."""
    from .binary_ops import _logaddexp_arrays
    a = np.moveaxis(a, axis, 0)
    out = np.empty_like(a)
    cum = np.full(a.shape[1:], complex(-np.inf, 0), a.dtype)
    for i in range(a.shape[0]):
        cum = out[i] = _logaddexp_arrays(a[i], cum)
    return np.moveaxis(out, 0, axis)


derivatives(logcumsumexp, {"self": "logcumsumexp_backward(grad, self, result, dim)"})


# -- diff, dist, equal ------------------------------------------------------------------------------

@decomposed("diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor",
            variants=_FM)
def diff(self, n, dim, prepend, append):
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    x = self
    if n == 0:  # a copy, prepend and append unused (torch: empty_like + copy_)
        return _P("empty_like")(self).copy_(self)
    if prepend is not None or append is not None:
        parts = ([prepend] if prepend is not None else []) + [self] + ([append] if append is not None else [])
        x = _P("cat")(parts, dim)
    for _ in range(n):
        length = x.shape[_wrap_dim(dim, x.dim())]
        out_len = max(length - 1, 0)
        hi, lo = x.narrow(dim, 1, out_len), x.narrow(dim, 0, out_len)
        x = _P("logical_xor")(hi, lo) if x.dtype == D.bool else hi - lo
        if out_len == 0:
            break
    return x


@op("dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", variants=_FM)
def dist(self, other, p):
    diff_ = _P("sub")(self, other)
    return _P("linalg_vector_norm")(diff_, p)


derivatives(dist, {"self": "norm_backward(grad, self - other, p, result)",
                   "other": "-norm_backward(grad, self - other, p, result)"})


@op("equal(Tensor self, Tensor other) -> bool", variants=_FM, differentiable=False)
def equal(self, other):
    if self.device != other.device:
        raise RuntimeError("Expected all tensors to be on the same device")
    if self._array.shape != other._array.shape:
        return False
    if self.dtype != other.dtype:
        from .._promotion import result_type
        dt = result_type(self, other)
        return bool(np.array_equal(self._array.astype(dt.np), other._array.astype(dt.np)))
    return bool(np.array_equal(self._array, other._array))


# -- products ---------------------------------------------------------------------------------------

@decomposed("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor")
def tensordot(self, other, dims_self, dims_other):
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if self.dtype != other.dtype:
        raise RuntimeError(f"both inputs should have same dtype, but got {self.dtype.ir_name} and "
                           f"{other.dtype.ir_name}")
    ds = [_wrap_dim(d, self.dim()) for d in dims_self]
    do = [_wrap_dim(d, other.dim()) for d in dims_other]
    csize = 1
    for a, b in zip(ds, do):
        s1, s2 = self.shape[a], other.shape[b]
        if s2 == 1:  # a broadcast dimension is summed right away
            self = self.sum([a], True, dtype=self.dtype)
        elif s1 == 1:
            other = other.sum([b], True, dtype=other.dtype)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {a} "
                               f"and second has size {s2} in dim {b}")
        else:
            csize *= s1
    free1 = [i for i in range(self.dim()) if i not in ds]
    free2 = [i for i in range(other.dim()) if i not in do]
    size1 = int(np.prod([self.shape[i] for i in free1])) if free1 else 1
    size2 = int(np.prod([other.shape[i] for i in free2])) if free2 else 1
    out_shape = [self.shape[i] for i in free1] + [other.shape[i] for i in free2]
    t1 = self.permute(free1 + ds).reshape([size1, csize])
    t2 = other.permute(do + free2).reshape([csize, size2])
    return _P("mm")(t1, t2).reshape(out_shape)


@decomposed("inner(Tensor self, Tensor other) -> Tensor", variants=_FM)
def inner(self, other):
    if self.dim() == 0 or other.dim() == 0:
        return self * other
    if self.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{_fmt(self.shape)} and {_fmt(other.shape)}")
    return tensordot.kernel(self, other, [-1], [-1])


# vdot lives beside dot in linalg.py (they share dot's checks and messages)


@op("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor", variants=_FM)
def addmv(self, mat, vec, beta, alpha):
    if mat.dim() != 2 or vec.dim() != 1 or self.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.dim()}, {mat.dim()}, {vec.dim()}")
    if mat.shape[1] != vec.shape[0] or (self.dim() == 1 and self.shape[0] not in (1, mat.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({self.shape[0] if self.dim() else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    for name, t in (("self", self), ("mat", mat)):
        if t.dtype is not vec.dtype:
            raise RuntimeError(f"{name} and vec must have the same dtype, but got "
                               f"{t.dtype.ir_name} and {vec.dtype.ir_name}")
    return scaled_sum(_product(mat, vec, "addmv_impl_cpu"), self, beta, alpha)


derivatives(addmv, {"self": "maybe_multiply(grad, beta.conjugate())",
                    "mat": "maybe_multiply(grad.ger(vec.conj()), alpha.conjugate())",
                    "vec": "maybe_multiply(mat.t().conj().mv(grad), alpha.conjugate())"})


@op("addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", variants=_FM)
def addr(self, vec1, vec2, beta, alpha):
    if vec1.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.dim()}-D")
    if vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    from .._promotion import result_type
    dt = result_type(self, vec1, vec2)
    shape = (vec1.shape[0], vec2.shape[0])
    _check_expand(self._array.shape, shape)
    v1, v2 = vec1._array.astype(dt.np), vec2._array.astype(dt.np)
    if dt == D.bool:
        r = (bool(alpha) & np.multiply.outer(v1, v2)) | (bool(beta) & np.broadcast_to(self._array, shape))
        return _fresh(np.ascontiguousarray(r), dt, self.device)
    # addr_kernel: beta * self + alpha * vec1 * vec2, each operation rounded in the result
    # type (NumPy's float16 arithmetic rounds each step as c10::Half's does); beta == 0
    # ignores self, NaNs included. torch's AVX2 build fuses the float32 ``beta * self + ...``
    # into one fma (measured: every element agrees; float64's vector lanes and tail fuse
    # differently and stay within a last bit of the plain expression).
    al, be = (dt.np.type(checked_scalar(v, dt)) for v in (alpha, beta))
    with np.errstate(all="ignore"):
        r = (al * v1)[:, None] * v2[None, :]
        if be != 0:
            s = self._array.astype(dt.np)
            r = fma(be, s, r) if dt is D.float32 else be * s + r
    return _fresh(np.ascontiguousarray(np.broadcast_to(r, shape)), dt, self.device)


derivatives(addr, {"self": "maybe_multiply(grad, beta.conjugate())",
                   "vec1": "maybe_multiply(grad.mv(vec2.conj()), alpha.conjugate())",
                   "vec2": "maybe_multiply(grad.t().mv(vec1.conj()), alpha.conjugate())"})


@op("addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", variants=_FM)
def addbmm(self, batch1, batch2, beta, alpha):
    if batch1.dim() != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    shape = (batch1.shape[1], batch2.shape[2])
    _check_expand(self._array.shape, shape)
    if batch1.dtype is D.float16 and batch1.shape[0]:
        # addbmm_impl_: one addmm_ per batch into the result, each rounded to float16
        out, dev = _fresh(np.broadcast_to(self._array, shape), D.float16, self.device), self.device
        for b in range(batch1.shape[0]):
            out = scaled_product(_fresh(batch1._array[b], D.float16, dev), _fresh(batch2._array[b], D.float16, dev),
                                 "addmm_impl_cpu_", out, beta if b == 0 else 1, alpha)
        return out
    prod = _product(batch1, batch2, "addbmm_impl_cpu_")
    acc = np.float32 if batch1.dtype == D.float16 else None
    summed = prod._array.sum(axis=0, dtype=acc).astype(batch1.dtype.np) if prod._array.shape[0] else \
        np.zeros(shape, dtype=batch1.dtype.np)
    return scaled_sum(_fresh(np.ascontiguousarray(summed), batch1.dtype, self.device), self, beta, alpha)


_ADDBMM_EXPAND = "grad.unsqueeze(0).expand([batch1.shape[0], batch1.shape[1], batch2.shape[2]])"
derivatives(addbmm, {"self": "maybe_multiply(grad, beta.conjugate())",
                     "batch1": f"maybe_multiply({_ADDBMM_EXPAND}.bmm(batch2.transpose(1, 2).conj()), alpha.conjugate())",
                     "batch2": f"maybe_multiply(batch1.transpose(1, 2).conj().bmm({_ADDBMM_EXPAND}), alpha.conjugate())"})


# -- trapezoid rules -----------------------------------------------------------------------------------

@decomposed("trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor")
def trapezoid_x(y, x, dim):
    return _trapezoid_x(y, x, dim)


@decomposed("trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor")
def trapezoid_dx(y, dx, dim):
    return _trapezoid_dx(y, dx, dim)


@decomposed("trapz.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor")
def trapz_x(y, x, dim):
    return _trapezoid_x(y, x, dim)


@decomposed("trapz.dx(Tensor y, *, float dx=1, int dim=-1) -> Tensor")
def trapz_dx(y, dx, dim):
    return _trapezoid_dx(y, dx, dim)


# ATen/native/Integration.cpp, in its order of operations

def _div_scalar(t, v):
    """C++'s ``t / 2.``: aten::div.Scalar (DivBackward1)."""
    return _P("div").Scalar(t, v)

def _zeros_like_except(y, dim):
    sizes = list(y.shape)
    del sizes[_wrap_dim(dim, y.dim())]
    return _P("zeros")(sizes, dtype=y.dtype, device=y.device)


def _x_differences(y, x, dim, name):
    """x viewed against y (a 1-D x along dim, a shorter x padded in front), differenced along dim."""
    if y.dtype is D.bool or x.dtype is D.bool:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[dim] = x.shape[0]
        x = x.view(sizes)
    elif x.dim() < y.dim():
        x = x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    return x.slice(dim, 1) - x.slice(dim, 0, -1)


def _check_dx(y, dx, name):
    if y.dtype is D.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _trapezoid_x(y, x, dim):
    dim = _wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:  # no samples: 0, as NumPy
        return _zeros_like_except(y, dim)
    dx = _x_differences(y, x, dim, "trapezoid")
    return _div_scalar((dx * (y.slice(dim, 1) + y.slice(dim, 0, -1))).sum(dim), 2.)


def _trapezoid_dx(y, dx, dim):
    if y.shape[_wrap_dim(dim, y.dim())] == 0:
        return _zeros_like_except(y, dim)
    dx = _check_dx(y, dx, "trapezoid")
    # a constant dx: dx * (sum of y - (first + last) / 2)
    return (y.sum(dim) - (y.select(dim, 0) + y.select(dim, -1)) * 0.5) * dx


@decomposed("cumulative_trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor")
def cumulative_trapezoid_x(y, x, dim):
    dim = _wrap_dim(dim, y.dim())
    dx = _x_differences(y, x, dim, "cumulative_trapezoid")
    return _div_scalar((dx * (y.slice(dim, 0, -1) + y.slice(dim, 1))).cumsum(dim), 2.)


@decomposed("cumulative_trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor")
def cumulative_trapezoid_dx(y, dx, dim):
    dx = _check_dx(y, dx, "cumulative_trapezoid")
    return (dx / 2. * (y.slice(dim, 0, -1) + y.slice(dim, 1))).cumsum(dim)


# -- renorm -------------------------------------------------------------------------------------------

@op("renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor", variants=_FM)
def renorm(self, p, dim, maxnorm):
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    a = self._array
    d = _wrap_dim(dim, a.ndim)
    axes = tuple(i for i in range(a.ndim) if i != d)
    # (a complex tensor's norm is of its magnitudes, in the real dtype: the factor is computed
    # there, then cast to the complex dtype for the product)
    real = np.abs(a) if a.dtype.kind == "c" else a
    wide = real.astype(np.float64 if real.dtype != np.float64 else real.dtype)
    norms = (np.sum(np.abs(wide) ** p, axis=axes, keepdims=True) ** (1.0 / p)) if p != float("inf") else \
        np.max(np.abs(wide), axis=axes, keepdims=True)
    norms = norms.astype(real.dtype).astype(np.float64)
    factor = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0).astype(real.dtype).astype(a.dtype)
    return _fresh(np.ascontiguousarray(a * factor), self.dtype, self.device)


derivatives(renorm, {"self": "renorm_backward(grad, self, p, dim, maxnorm)"})

