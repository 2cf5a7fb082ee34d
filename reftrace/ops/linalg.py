"""Matrix products and friends: matmul, mm, bmm, mv, dot, addmm, linear, outer/ger, diag, inverse.

The products never promote: both operands must have the same dtype (each op with its own
message). The numbers come from one ``xp.matmul`` call (BLAS for floats, so float32 results
agree with torch's to rounding); the results are contiguous, as torch's CPU kernels make them.

``matmul`` follows LinearAlgebra.cpp's ``_matmul_impl`` case by case only to decide which
underlying op (dot, mv, mm, folded mm/mv, or broadcast bmm) torch would run, because that op's
checks produce the error text a user sees (``mat1 and mat2 shapes cannot be multiplied (10x3 and
4x5)`` names the folded shape).
"""
import math

import numpy as np

from .. import _dtype as D
from .._tensor import _fresh, _strided, _view_of, contiguous_strides, xp_of
from ._iter import broadcast_shapes, empty_strided_array
from ._pointwise_helpers import write_inplace
from ._registry import OVERLOADS, composite, derivatives, op
from .arithmetic import TYPE_META_NAMES, add, mul
from .backward import _unsafe_view
from .casts import checked_scalar


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError): a RuntimeError for singular inputs."""


LinAlgError = _LinAlgError

def _product(a, b, kernel_name):
    """a @ b in their (common) dtype; torch's CPU kernels have no bool instantiation."""
    if a.dtype is D.bool and (a._array.ndim == 0 or a._array.shape[-1] != 0):
        # (an empty inner dimension never reaches the kernel: the result is zero-filled)
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for 'Bool'")
    if kernel_name == "bmm" and a.dtype.category >= 2:
        small = _small_bmm(xp_of(a), a._array, b._array, a.dtype)
        if small is not None:
            return _fresh(small, a.dtype, a.device)
    xp = xp_of(a)
    out = xp.matmul(a._array, b._array)
    # (a 1-d @ 1-d product is a NumPy scalar; asarray is only needed then: ~0.1 us saved on 4x4)
    return _fresh(out if type(out) is np.ndarray else xp.asarray(out), a.dtype, a.device)


_OPMATH = {D.float16: D.float32}


def _small_bmm(xp, a, b, dtype):
    """bmm's small case (LinearAlgebra.cpp bmm_out_or_baddbmm_: contraction * rows * cols <
    400) runs baddbmm_cpu_kernel, a plain loop that sums the products over k in order in the
    op-math type (float for float16). BLAS sums in another order, which shows in the last bits
    when terms cancel, so the loop is reproduced: its products in one vectorised call, its sums
    one vectorised step per k. None: not small."""
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    n, k, p = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    if k * n * p >= 400 or k == 0:
        return None
    work = _OPMATH.get(dtype, dtype).np
    a2, b2 = a2.astype(work, copy=False), b2.astype(work, copy=False)
    if xp is np and not dtype.is_complex:
        # every product in one call, stored k-major (k, ..., n, p), then the loop's sums: each
        # addend a contiguous block of the loop's shape, so NumPy runs the same inner loops (the
        # same SIMD/scalar choice: even a NaN's sign, when two meet, comes out alike). A real
        # product is one rounding whichever loop computes it; a complex one is not (NumPy's
        # vector loops fuse its multiply-adds), hence the loop for complex
        nd = max(a2.ndim, b2.ndim)  # (batch dims aligned before k moves to the front)
        a2, b2 = a2[(None,) * (nd - a2.ndim)], b2[(None,) * (nd - b2.ndim)]
        rest = tuple(range(nd - 2))
        products = np.multiply(a2.transpose((nd - 1,) + rest + (nd - 2,))[..., None],
                               b2.transpose((nd - 2,) + rest + (nd - 1,))[..., None, :],
                               order="C")
        acc = products[0]
        for i in range(1, k):
            acc = acc + products[i]
    else:
        acc = a2[..., :, 0:1] * b2[..., 0:1, :]
        for i in range(1, k):
            acc = acc + a2[..., :, i:i + 1] * b2[..., i:i + 1, :]
    if b.ndim == 1:
        acc = acc[..., 0]
    if a.ndim == 1:
        acc = acc[..., 0, :] if b.ndim != 1 else acc[..., 0]
    return xp.ascontiguousarray(acc.astype(dtype.np, copy=False))


def _dims(shape):
    return "x".join(map(str, shape))


# -- the checks of each underlying op, on shapes (matmul checks folded shapes) -------------------

def _check_mm(shape1, shape2, dt1, dt2):
    if shape1[1] != shape2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims(shape1)} and "
                           f"{_dims(shape2)})")
    if dt1 is not dt2:
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                           f"{TYPE_META_NAMES[dt1]} != {TYPE_META_NAMES[dt2]}")


def _check_mv(mat_shape, vec_len, mat_dt, vec_dt):
    if mat_shape[1] != vec_len:
        raise RuntimeError(f"size mismatch, got input ({mat_shape[0]}), mat ({_dims(mat_shape)}), "
                           f"vec ({vec_len})")
    if mat_dt is not vec_dt:
        # mv's result takes vec's dtype, and addmv names (result, mat, vec)
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{vec_dt.ir_name}, {mat_dt.ir_name}, and {vec_dt.ir_name}")


def _check_bmm(shape1, shape2, dt1, dt2):
    if shape2[:2] != (shape1[0], shape1[2]):
        raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{shape1[0]}, {shape1[2]}] but got: [{shape2[0]}, {shape2[1]}].")
    if dt1 is not dt2:
        raise RuntimeError(f"expected scalar type {dt1.ir_name} but found {dt2.ir_name}")


# -- ops -------------------------------------------------------------------------------------

def _check_dot(self, tensor):
    """dot's and vdot's checks (vdot's messages say "dot" too)."""
    d1, d2 = self._array.ndim, tensor._array.ndim
    if d1 != 1 or d2 != 1:
        raise RuntimeError(f"1D tensors expected, but got {d1}D and {d2}D tensors")
    if self.dtype is not tensor.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{self.dtype.ir_name} and {tensor.dtype.ir_name}")
    n1, n2 = self._array.size, tensor._array.size
    if n1 != n2:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n1}] and src [{n2}] to "
                           f"have the same number of elements, but got {n1} and {n2} elements "
                           "respectively")


@op("dot(Tensor self, Tensor tensor) -> Tensor", variants=("function", "method"))
def dot(self, tensor):
    _check_dot(self, tensor)
    return _product(self, tensor, "dot")


derivatives(dot, {"self": "grad * tensor.conj()", "tensor": "grad * self.conj()"})


@op("vdot(Tensor self, Tensor other) -> Tensor", variants=("function", "method"))
def vdot(self, other):
    """dot with the first vector conjugated."""
    _check_dot(self, other)
    if self.dtype.is_complex:
        self = _fresh(xp_of(self).conj(self._array), self.dtype, self.device)
    return _product(self, other, "vdot")


derivatives(vdot, {"self": "grad.conj() * other", "other": "grad * self"})


@op("mv(Tensor self, Tensor vec) -> Tensor", variants=("function", "method"))
def mv(self, vec):
    if self._array.ndim != 2 or vec._array.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self._array.ndim}, "
                           f"{vec._array.ndim}")
    _check_mv(self._array.shape, vec._array.shape[0], self.dtype, vec.dtype)
    return _product(self, vec, "addmv_impl_cpu")


derivatives(mv, {"self": "grad.ger(vec.conj())", "vec": "self.conj().t().mv(grad)"})


@op("mm(Tensor self, Tensor mat2) -> Tensor", variants=("function", "method"))
def mm(self, mat2):
    if self._array.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._array.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_mm(self._array.shape, mat2._array.shape, self.dtype, mat2.dtype)
    return _product(self, mat2, "addmm_impl_cpu_")


derivatives(mm, {
    "self": "mm_mat1_backward(grad, mat2, self.shape, self.stride(), self.layout, 1)",
    "mat2": "mm_mat2_backward(grad, self, mat2.shape, mat2.stride(), mat2.layout, 1)"})


@op("bmm(Tensor self, Tensor mat2) -> Tensor", variants=("function", "method"))
def bmm(self, mat2):
    if self._array.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._array.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (b, n, k), p = self._array.shape, mat2._array.shape[2]
    if b * n * p == 0 or k == 0:
        # bmm_out_or_baddbmm_ returns an empty result, or zeros for an empty contraction, before
        # its kernel checks the dtypes; the result has batch2's dtype (the meta function's)
        _check_bmm(self._array.shape, mat2._array.shape, mat2.dtype, mat2.dtype)
        return _fresh(xp_of(mat2).zeros((b, n, p), mat2.dtype.np), mat2.dtype, mat2.device)
    if self.dtype is D.bool and mat2._array.shape[:2] == (b, k):
        # the kernel dispatches on self's dtype before it reads mat2's
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    _check_bmm(self._array.shape, mat2._array.shape, self.dtype, mat2.dtype)
    return _product(self, mat2, "bmm")


derivatives(bmm, {"self": "grad.bmm(mat2.transpose(1, 2).conj())",
                   "mat2": "self.transpose(1, 2).conj().bmm(grad)"})


def _should_fold(t1, t2):
    """LinearAlgebra.cpp should_fold: fold the larger operand's batch into mm/mv rows when that
    needs no copy (or when the smaller operand requires grad)."""
    d1, d2 = t1._array.ndim, t2._array.ndim
    big, small_dim = (t1, d2) if d1 >= d2 else (t2, d1)
    if not (big._array.ndim >= 3 and small_dim <= 2):
        return False
    if (t2 if d1 >= d2 else t1).requires_grad:
        return True
    if d1 == 2:
        return False
    if big._array.size == 0:
        return True
    shape, strides = list(big._array.shape), list(big.stride())
    if d1 < d2:  # the larger operand is used transposed (mT)
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _check_matmul(a, b):
    """Run the checks of the op torch's matmul would dispatch to (see the module docstring);
    returns the name of the CPU kernel it would run."""
    d1, d2 = a._array.ndim, b._array.ndim
    s1, s2 = a._array.shape, b._array.shape
    if _should_fold(a, b):
        if d1 >= d2:  # fold a's batch into rows: (B*n, m1) @ b
            rows, other, dts = (int(np.prod(s1[:-1])), s1[-1]), s2, (a.dtype, b.dtype)
        else:  # b.mT folded into rows, times a.t() (or the vector a)
            rows = (int(np.prod(s2[:-2])) * s2[-1], s2[-2])
            other, dts = s1[::-1], (b.dtype, a.dtype)
        if len(other) == 2:
            _check_mm(rows, other, *dts)
            return "addmm_impl_cpu_"
        _check_mv(rows, other[0], *dts)
        return "addmv_impl_cpu"
    n, m1 = (s1[-2] if d1 > 1 else 1), s1[-1]
    m2, p = (s2[-2], s2[-1]) if d2 > 1 else (s2[0], 1)
    batch = broadcast_shapes(s1[:-2], s2[:-2])
    count = int(np.prod(batch))
    _check_bmm((count, n, m1), (count, m2, p), a.dtype, b.dtype)
    return "bmm"


@op("matmul(Tensor self, Tensor other) -> Tensor", variants=("function", "method"))
def matmul(self, other):
    d1, d2 = self._array.ndim, other._array.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{d1}D and {d2}D")
    if d2 == 1 and d1 <= 2:
        return dot.kernel(self, other) if d1 == 1 else mv.kernel(self, other)
    if d2 == 2 and d1 <= 2:
        if d1 == 1:  # self.unsqueeze(0).mm(other).squeeze_(0)
            _check_mm((1,) + self._array.shape, other._array.shape, self.dtype, other.dtype)
            return _product(self, other, "addmm_impl_cpu_")
        return mm.kernel(self, other)
    s1, s2 = self._array.shape, other._array.shape
    if d1 >= 3 and d2 >= 3 and s1[:-2] == s2[:-2] and s1[-1] == s2[-2] \
            and self.dtype is other.dtype and self.dtype is not D.bool:
        # a bmm over equal batch dims (no fold, no broadcast) whose checks pass
        return _product(self, other, "bmm")
    kernel_name = _check_matmul(self, other)
    a = self._array
    if d2 == 2 and a.flags.c_contiguous:
        # one big GEMM over the folded rows, as torch does (NumPy would loop over the batch)
        rows = _fresh(_fold_rows(a), self.dtype, self.device)
        out = _product(rows, other, kernel_name)
        return _fresh(out._array.reshape(a.shape[:-1] + (other._array.shape[-1],)),
                      out.dtype, out.device)
    return _product(self, other, kernel_name)


@composite(matmul)
def _matmul_composite(self, other):
    """LinearAlgebra.cpp _matmul_impl: dot, mv, mm, a folded mm, or an expanded bmm."""
    d1, d2 = self.dim(), other.dim()
    if d1 == 0 or d2 == 0:
        return matmul.kernel(self, other)  # its error message
    if d1 == 1 and d2 == 1:
        return self.dot(other)
    if d1 == 2 and d2 == 1:
        return self.mv(other)
    if d1 == 1 and d2 == 2:
        return self.unsqueeze(0).mm(other).squeeze_(0)
    if d1 == 2 and d2 == 2:
        return self.mm(other)
    if (d1 >= 3 and d2 <= 2) or (d2 >= 3 and d1 <= 2):  # should_fold: a gradient is recorded
        transpose = d2 > d1
        t1 = other.mT if transpose else self
        t2 = (self.t() if d1 == 2 else self) if transpose else other
        sizes_1 = list(t1.shape_tuple)
        output_shape = sizes_1[:-1]
        folded = 1
        for s in output_shape:
            folded *= s
        if t2.dim() == 2:
            output_shape.append(t2.shape_tuple[1])
            output = _unsafe_view(t1.reshape([folded, sizes_1[-1]]).mm(t2), output_shape)
            return output.mT.contiguous() if transpose else output
        return _unsafe_view(t1.reshape([folded, sizes_1[-1]]).mv(t2), output_shape)
    s1, s2 = self.shape_tuple, other.shape_tuple
    n = s1[-2] if d1 > 1 else 1
    m1 = s1[-1]
    m2 = s2[-2] if d2 > 1 else s2[0]
    p = s2[-1] if d2 > 1 else 1
    output_shape = list(broadcast_shapes(s1[:max(d1 - 2, 0)], s2[:max(d2 - 2, 0)]))
    batch = 1
    for s in output_shape:
        batch *= s
    t1 = self.expand(output_shape + [n, m1]).reshape([batch, n, m1])
    t2 = other.expand(output_shape + [m2, p]).reshape([batch, m2, p])
    if d1 > 1:
        output_shape.append(n)
    if d2 > 1:
        output_shape.append(p)
    return _unsafe_view(t1.bmm(t2), output_shape)


def _fold_rows(a):
    """A (..., k) array as (rows, k) (explicit sizes: k may be 0): a view when it is
    C-contiguous, else NumPy's row-major copy (torch's reshape)."""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def _expand_error(target, shape, dim, size):
    return RuntimeError(
        f"The expanded size of the tensor ({target[dim]}) must match the existing size ({size}) "
        f"at non-singleton dimension {dim}.  Target sizes: [{', '.join(map(str, target))}].  "
        f"Tensor sizes: [{', '.join(map(str, shape))}]")


def _check_expand(shape, target):
    """Tensor.expand's check: ``shape`` must broadcast to exactly ``target``."""
    offset = len(target) - len(shape)
    for i, size in enumerate(shape):
        if size != 1 and size != target[offset + i]:
            raise _expand_error(target, shape, offset + i, size)


@op("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    variants=("function", "method"))
def addmm(self, mat1, mat2, beta, alpha):
    """beta * self + alpha * (mat1 @ mat2); beta == 0 ignores self (NaNs included), as BLAS."""
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m._array.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m._array.ndim}-D tensor")
    s1, s2 = mat1._array.shape, mat2._array.shape
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims(s1)} and "
                           f"{_dims(s2)})")
    for name, t in (("self", self), ("mat1", mat1)):
        if t.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{t.dtype.ir_name} and {mat2.dtype.ir_name}")
    _check_expand(self._array.shape, (s1[0], s2[1]))
    return scaled_product(mat1, mat2, "addmm_impl_cpu_", self, beta, alpha)


def scaled_product(a, b, kernel_name, self, beta, alpha):
    """``beta * self + alpha * (a @ b)``: addmm's and baddbmm's result. float16 products are
    not rounded before the epilogue: CPUBlas's reduced-float gemm and baddbmm_cpu_kernel keep the
    dot products in float (opmath) and round ``beta * c + alpha * dot`` once; summing the
    products in order in float32 reproduces them."""
    if a.dtype is not D.float16:
        return scaled_sum(_product(a, b, kernel_name), self, beta, alpha)
    a32, b32 = a._array.astype(np.float32), b._array.astype(np.float32)
    dot = np.zeros(np.broadcast_shapes(a32.shape[:-1] + (1,), b32.shape[:-2] + (1, b32.shape[-1])), np.float32)
    for i in range(a32.shape[-1]):
        dot = dot + a32[..., :, i:i + 1] * b32[..., i:i + 1, :]
    al, be = np.float32(checked_scalar(alpha, D.float32)), np.float32(checked_scalar(beta, D.float32))
    with np.errstate(all="ignore"):
        r = al * dot if be == 0 else self._array.astype(np.float32) * be + al * dot
    return _fresh(np.ascontiguousarray(np.broadcast_to(r, dot.shape).astype(np.float16)), D.float16, a.device)


def scaled_sum(out, self, beta, alpha):
    """``beta * self + alpha * out`` into ``out`` (a fresh product): addmm's and baddbmm's
    epilogue. The scalars are taken in the result's type: integer results truncate them
    (alpha=1.5 acts as 1); beta=0 ignores ``self`` (even its NaNs), as ATen does."""
    alpha, beta = checked_scalar(alpha, out.dtype), checked_scalar(beta, out.dtype)
    arr = out._array
    if alpha != 1:
        arr *= alpha
    if beta != 0:
        arr += self._array if beta == 1 else self._array * np.asarray(beta, arr.dtype)
    return out


derivatives(addmm, {
    "self": "maybe_multiply(grad, beta.conjugate())",
    "mat1": "mm_mat1_backward(grad, mat2, mat1.shape, mat1.stride(), mat1.layout, alpha)",
    "mat2": "mm_mat2_backward(grad, mat1, mat2.shape, mat2.stride(), mat2.layout, alpha)"})


@op("addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
    variants=("method",))
def addmm_(self, mat1, mat2, beta, alpha):
    # (what conv_tbc_backward's CompositeImplicit decomposition writes its gradients with)
    m, p = mat1._array.shape[0] if mat1._array.ndim == 2 else None, \
        mat2._array.shape[-1] if mat2._array.ndim == 2 else None
    if m is not None and p is not None and self.shape_tuple != (m, p):
        raise RuntimeError(f"Bad in-place call: input tensor size [{', '.join(map(str, self.shape_tuple))}] "
                           f"and output tensor size [{m}, {p}] should match")
    return write_inplace(self, addmm.kernel(self, mat1, mat2, beta, alpha))


derivatives(addmm_, addmm.derivatives)  # (the functional's entry)


def _t(w):
    """w.t() as a view (linear needs weight.t(); the shape family owns the public op)."""
    if w._array.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{w._array.ndim}D")
    return _view_of(w, w._array.T, w.stride()[::-1])


@op("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", variants=())
def linear(input, weight, bias):
    """torch's composite: addmm for 2-d (and contiguous 3-d) input with bias, else matmul then an
    in-place add of the bias (whose broadcast and cast rules then apply)."""
    a, wa = input._array, weight._array
    nd = a.ndim
    dtype = input.dtype
    if (nd == 2 or nd == 3) and wa.ndim == 2 and a.shape[-1] == wa.shape[1] \
            and weight.dtype is dtype and dtype is not D.bool:
        xp = np if input.device.type == "cpu" else xp_of(input)
        if bias is None:
            # matmul's mm, or its folded mm for contiguous 3-d input (torch-contiguous: a
            # weight stride on a size-1 dim would make torch's should_fold refuse)
            if nd == 2:
                return _fresh(xp.matmul(a, wa.T), dtype, input.device, True)
            if input._stride is None and a.flags.c_contiguous:
                res = xp.matmul(a.reshape(a.shape[0] * a.shape[1], a.shape[2]), wa.T)
                return _fresh(res.reshape(a.shape[:2] + wa.shape[:1]), dtype, input.device, True)
        elif bias.dtype is dtype and bias._array.ndim == 1 and bias._array.shape[0] == wa.shape[0]:
            # the addmm below with its checks known to pass: one GEMM over the rows, bias
            # added. A non-contiguous 3-d input takes torch's matmul path instead (its rows
            # copied into a contiguous matrix, one mm, then the bias added in place): the same
            # arithmetic, and NumPy's reshape makes the same row-major copy
            if nd == 2:
                res = xp.matmul(a, wa.T)
                res += bias._array
                return _fresh(res, dtype, input.device, True)
            res = xp.matmul(a.reshape(a.shape[0] * a.shape[1], a.shape[2]), wa.T)
            res += bias._array
            return _fresh(res.reshape(a.shape[:2] + wa.shape[:1]), dtype, input.device, True)
    wt = _t(weight)
    if bias is not None and (a.ndim == 2 or (a.ndim == 3 and input.is_contiguous())):
        rows = _fold_rows(a)  # a view: 3-d input is folded into rows
        out = addmm.kernel(bias, _view_of(input, rows, contiguous_strides(rows.shape)), wt, 1, 1)
        if a.ndim == 3:
            out = _fresh(out._array.reshape(a.shape[:-1] + wt._array.shape[-1:]), out.dtype,
                         out.device)
        return out
    out = matmul.kernel(input, wt)
    return out if bias is None else write_inplace(out, add.kernel(out, bias, 1))


@composite(linear)
def _linear_composite(input, weight, bias):
    """Linear.cpp linear: addmm for 2-d input with bias; contiguous input with a 1-d bias is
    flattened to 2-d around an addmm (_flatten_nd_linear); else matmul, then bias added in place."""
    input_dim = input.dim()
    if input_dim == 2 and bias is not None:
        return addmm(bias, input, weight.t())
    if bias is not None and input.is_contiguous() and (input_dim == 3 or bias.dim() == 1):
        sizes = list(input.shape_tuple)
        flattened = 1
        for s in sizes[:-1]:
            flattened *= s
        result = addmm(bias, input.reshape([flattened, sizes[-1]]), weight.t())
        return result.view(sizes[:-1] + [result.shape_tuple[1]])
    output = input.matmul(weight.t())
    if bias is not None:
        output.add_(bias)
    return output


@op("outer(Tensor self, Tensor vec2) -> Tensor", variants=("function", "method"))
def outer(self, vec2):
    for name, t in (("self", self), ("vec2", vec2)):
        if t._array.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t._array.ndim}-D")
    column = _view_of(self, self._array[:, None], (self.stride()[0], 1))
    return mul.kernel(column, vec2)  # self.reshape(-1, 1) * vec2: promotes like mul


@composite(outer)
def _outer_composite(self, vec2):
    if self.dim() != 1 or vec2.dim() != 1:
        return outer.kernel(self, vec2)  # its error message
    return self.reshape([-1, 1]) * vec2


@op("ger(Tensor self, Tensor vec2) -> Tensor", variants=("function", "method"))
def ger(self, vec2):
    return outer.kernel(self, vec2)


@composite(ger)
def _ger_composite(self, vec2):
    return self.outer(vec2)


@op("diag(Tensor self, int diagonal=0) -> Tensor", variants=("function", "method"))
def diag(self, diagonal):
    xp, a = xp_of(self), self._array
    if a.ndim == 1:
        return _fresh(xp.diag(a, diagonal), self.dtype, self.device)
    if a.ndim == 2:
        return _fresh(xp.diagonal(a, diagonal).copy(), self.dtype, self.device)  # never a view
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {a.ndim}D")


@composite(diag)
def _diag_composite(self, diagonal):
    # TensorShape.cpp diag: diag_embed of a vector, a copy of a matrix's diagonal
    ndim = self.dim()
    if ndim == 1:
        return OVERLOADS["aten::diag_embed"](self, diagonal)
    if ndim == 2:
        return OVERLOADS["aten::diagonal_copy"](self, diagonal)
    return diag.kernel(self, diagonal)  # its error


def _singular_pivot(matrix):
    """LAPACK getrf's ``info``: the 1-based index of the first exactly-zero pivot of an LU
    factorisation with partial pivoting (0: none)."""
    a = np.array(matrix, dtype=np.result_type(matrix.dtype, np.float32))
    n = a.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return 0


def _inverse_error(a, batched):
    """The message for the first singular matrix of the batch, as linalg.inv words it."""
    host = a.reshape((-1,) + a.shape[-2:])
    for index, matrix in enumerate(host):
        info = _singular_pivot(matrix)
        if info:
            prefix = f"(Batch element {index}): " if batched else ""
            return _LinAlgError(f"linalg.inv: {prefix}The diagonal element {info} is zero, the "
                                "inversion could not be completed because the input matrix is "
                                "singular.")
    return _LinAlgError("linalg.inv: the inversion could not be completed")


@op("inverse(Tensor self) -> Tensor", variants=("function", "method"))
def inverse(self):
    return linalg_inv.kernel(self)


@composite(inverse)
def _inverse_composite(self):
    return linalg_inv(self)


# torch.jit.trace's NormalizeOps pass rewrites aten::inverse nodes to aten::linalg_inv (and
# aten::ger to aten::outer), so traced graphs name this op too
@op("linalg_inv(Tensor A) -> Tensor", variants=())
def linalg_inv(self):
    a = self._array
    if a.ndim < 2:
        raise RuntimeError("linalg.inv: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError("linalg.inv: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if self.dtype.category <= 1:
        raise RuntimeError("linalg.inv: Expected a floating point or complex tensor as input. "
                           f"Got {self.dtype.ir_name}")
    if self.dtype is D.float16:
        raise RuntimeError("linalg.inv: Low precision dtypes not supported. Got Half")
    xp = xp_of(self)
    try:
        inv = xp.linalg.inv(a) if a.size else a.copy()
    except np.linalg.LinAlgError:
        raise _inverse_error(a, a.ndim > 2) from None
    # LAPACK's results are column-major matrices: strides (..., 1, n)
    n = a.shape[-1]
    strides = contiguous_strides(a.shape[:-2] + (n * n,))[:-1] + (1, max(n, 1))
    out = empty_strided_array(xp, a.shape, strides, a.dtype)
    out[...] = inv
    return _strided(out, self.dtype, self.device, strides)


# torch records linalg_inv_ex's node (LinalgInvExBackward0)
derivatives(linalg_inv, {"A": "-matmul(result.transpose(-2, -1).conj(), matmul(grad, result.transpose(-2, -1).conj()))"})
