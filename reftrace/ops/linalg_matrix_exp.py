"""torch.linalg.matrix_exp as ATen computes it (LinearAlgebra.cpp: linalg_matrix_exp, mexp,
mexp_impl, compute_T1 .. compute_T18, compute_T18_scale_square; Bader, Blanes & Casas 2019,
"Computing the Matrix Exponential with an Optimized Taylor Polynomial Approximation").

A single matrix gets the Taylor polynomial of degree 1, 2, 4, 8 or 12 whose theta bounds its
1-norm, else degree 18 with scaling and squaring; a batch of more than one matrix always takes
degree 18 with scaling and squaring (mexp_impl sets compute_highest_degree_approx). Everything runs in the input's
dtype with ATen's operation order: _compute_linear_combination accumulates
``out += input[j] * coeff[j]`` from zero, unfused (FunctionOfAMatrixUtilsKernel.cpp), the
constants are ATen's (cast to the real dtype as C++ does), and the products are matmuls in
that dtype (NumPy's BLAS and torch's may round a product's sums differently)."""
import numpy as np

# thetas per degree 1, 2, 4, 8, 12, 18 (mexp)
_THETAS = {
    np.dtype(np.float32): (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                           5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00),
    np.dtype(np.float64): (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                           4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00),
}

_B12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
         0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
         0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
         -0.00675951846863086359))

_B18 = ((0., -1.00365581030144618291e-01, -8.02924648241156932449e-03,
         -8.92138498045729985177e-04, 0.),
        (0., 3.97849749499645077844e-01, 1.36783778460411720168e+00,
         4.98289622525382669416e-01, -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02,
         -1.40086798182036094347e-05))


def _mm(a, b):
    """matmul as torch's CPU runs it for these sizes: a small product (ATen's
    baddbmm_cpu_kernel below 400 multiply-adds; MKL's small-matrix kernels agree up to 8) sums
    ``acc += a[i, k] * b[k, j]`` over k in order, unfused, in the dtype. Larger float32 ones
    MKL sums in order with fused multiply-adds; the rest is left to NumPy's BLAS."""
    n = max(a.shape[-2], a.shape[-1], b.shape[-1])
    if n <= 8 or a.dtype == np.float32:
        acc = np.zeros(np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1])),
                       dtype=a.dtype)
        for k in range(a.shape[-1]):
            if n <= 8:
                acc = acc + a[..., :, k:k + 1] * b[..., k:k + 1, :]
            else:
                acc = (acc.astype(np.float64) + a[..., :, k:k + 1].astype(np.float64) *
                       b[..., k:k + 1, :].astype(np.float64)).astype(np.float32)
        return acc
    return a @ b


def _real(dt):
    return np.dtype(np.float32) if dt in (np.complex64, np.float32) else np.dtype(np.float64)


def _lincomb(mats, coeffs, dt=None):
    """_compute_linear_combination for one output: 0 += mats[j] * coeff[j], in order (the
    coefficients converted to dt's real type; dt None: already of the matrices' type)."""
    r = _real(dt).type if dt is not None else (lambda c: c)
    out = np.zeros_like(mats[0])
    for m, c in zip(mats, coeffs):
        out = out + m * r(c)
    return out


def _powers(a, k, mm=None):
    """_fill_matrix_powers: the first k of I, A, A^2, A^3 (= A A^2), A^6 (= A^3 A^3)."""
    mm = mm or _mm
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
    ps = [eye, a]
    if k > 2:
        ps.append(mm(a, a))
    if k > 3:
        ps.append(mm(a, ps[2]))
    if k > 4:
        ps.append(mm(ps[3], ps[3]))
    return ps[:k]


def _t1(a):
    i, a1 = _powers(a, 2)
    return i + a1


def _t2(a):
    i, a1, a2 = _powers(a, 3)
    return (i + a1) + a2 / a.dtype.type(2)


def _t4(a):
    ps = _powers(a, 3)
    p = _mm(ps[2], _lincomb(ps, (1 / 2.0, 1 / 6.0, 1 / 24.0), a.dtype))
    return _lincomb(ps + [p], (1.0, 1.0, 0.0, 1.0), a.dtype)


def _t8_constants(r):
    # compute_T8's constexpr scalar_t constants: double arithmetic on the scalar_t values
    sqrt_177 = float(r(0.1330413469565007072504e+2))
    x3 = float(r(2. / 3.))
    return (r(x3 * ((1. + sqrt_177) / 88.)), r(x3 * ((1. + sqrt_177) / 352.)), r(x3),
            r((-271. + 29. * sqrt_177) / (315. * x3)), r((-11. + 11. * sqrt_177) / (1260. * x3)),
            r((-99. + 11. * sqrt_177) / (5040. * x3)), r((89. - sqrt_177) / (5040. * x3)),
            r((857. - 58. * sqrt_177) / 630.))


def _t8(a):
    x1, x2, x3, x4, x5, x6, x7, y2 = _t8_constants(_real(a.dtype).type)
    ps = _powers(a, 3)
    a4 = _mm(ps[2], _lincomb(ps[1:3], (x1, x2), a.dtype))
    ps.append(a4)
    a8 = _mm(_lincomb(ps[2:4], (x3, 1.0), a.dtype), _lincomb(ps[0:4], (x4, x5, x6, x7), a.dtype))
    return _lincomb(ps + [a8], (1.0, 1.0, y2, 0.0, 1.0), a.dtype)


def _t12(a):
    ps = _powers(a, 4)
    bs = [_lincomb(ps, row, a.dtype) for row in _B12]
    bs[2] = bs[2] + _mm(bs[3], bs[3])                       # A6
    bs[1] = bs[1] + bs[2]
    return bs[0] + _mm(bs[1], bs[2])


def _t18(a):
    ps = _powers(a, 5)
    bs = [_lincomb(ps, row, a.dtype) for row in _B18]
    bs[3] = bs[3] + _mm(bs[0], bs[4])                       # A9
    bs[2] = bs[2] + bs[3]
    return bs[1] + _mm(bs[2], bs[3])


def _norm1(a):
    """operator_1_norm: abs().sum(-2).max(-1), in the input's (real) dtype."""
    return np.max(np.sum(np.abs(a), axis=-2), axis=-1)


def _t18_scale_square(a, norm, theta):
    """s = ceil(log2(norm / theta)).clamp(min=0), a * 2^-s (exact), T18, then s squarings
    (torch batches the squarings of equal s; each matrix is still squared s times)."""
    r = norm.dtype.type
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = np.maximum(np.ceil(np.log2(norm / r(theta))), r(0))
    s = np.where(np.isfinite(s), s, 0).astype(np.int64)
    scaled = a * (2.0 ** -s).astype(a.dtype)[:, None, None]
    m = _t18(scaled)
    out = np.empty_like(m)
    for i in range(m.shape[0]):
        x = m[i]
        for _ in range(int(s[i])):
            x = _mm(x, x)
        out[i] = x
    return out


def mexp(a):
    """a (B, n, n), n >= 2, float32 / float64 / complex64 / complex128."""
    thetas = _THETAS[_real(a.dtype)]
    with np.errstate(all="ignore"):
        norm = _norm1(a)
        if a.shape[0] > 1:  # mexp_impl: a batch always takes degree 18 with scaling and squaring
            return _t18_scale_square(a, norm, thetas[5])
        res = np.full_like(a, np.nan)     # (torch leaves a NaN norm's matrix uninitialised)
        r = norm.dtype.type
        lower = r(-1)
        for fn, theta in zip((_t1, _t2, _t4, _t8, _t12), thetas):
            idx = np.nonzero((lower < norm) & (norm <= r(theta)))[0]
            if idx.size:
                res[idx] = fn(a[idx])
            lower = r(theta)
        idx = np.nonzero(norm >= r(thetas[4]))[0]
        if idx.size:
            res[idx] = _t18_scale_square(a[idx], norm[idx], thetas[5])
    return res


def linalg_matrix_exp_array(a):
    """linalg_matrix_exp on an array (..., n, n): n == 0 a copy, n == 1 exp, else mexp."""
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    if n == 1:
        with np.errstate(all="ignore"):
            return np.exp(a)
    flat = a.reshape((-1, n, n))
    return (mexp_half(flat) if a.dtype == np.float16 else mexp(flat)).reshape(a.shape)


# -- Half: mexp_impl<double> on a Half tensor ---------------------------------------------------------
# mexp sends Half to the double branch, whose coefficient blobs (from_blob of double arrays
# with the tensor's real dtype, Half) are read as Half: each coefficient tensor holds the first
# 2 * k bytes of the double array, reinterpreted as k halves. torch's result is that arithmetic
# (mostly zeros, NaN or garbage), reproduced here so the values match.

def _as_half_blob(values, k):
    import struct
    raw = struct.pack("<%dd" % len(values), *values)
    return np.frombuffer(raw[:2 * k], dtype="<f2").astype(np.float16)


def _h_mm(a, b):
    """baddbmm_cpu_kernel for Half: float accumulation in order, one rounding."""
    acc = np.zeros(np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1])),
                   dtype=np.float32)
    for k in range(a.shape[-1]):
        acc = acc + a[..., :, k:k + 1].astype(np.float32) * b[..., k:k + 1, :].astype(np.float32)
    return acc.astype(np.float16)


def _h_powers(a, k):
    return _powers(a, k, _h_mm)


def _h_sum0(ps):
    """As.sum(0) for Half: float accumulation, one rounding."""
    acc = np.zeros(ps[0].shape, np.float32)
    for p in ps:
        acc = acc + p.astype(np.float32)
    return acc.astype(np.float16)


def _h_t1(a):
    return _h_sum0(_h_powers(a, 2))


def _h_t2(a):
    ps = _h_powers(a, 3)
    ps[2] = ps[2] / np.float16(2)
    return _h_sum0(ps)


def _h_t4(a):
    ps = _h_powers(a, 3)
    p = _h_mm(ps[2], _lincomb(ps, _as_half_blob((1 / 2.0, 1 / 6.0, 1 / 24.0), 3)))
    return _lincomb(ps + [p], _as_half_blob((1.0, 1.0, 0.0, 1.0), 4))


def _h_t8(a):
    x1, x2, x3, x4, x5, x6, x7, y2 = (float(v) for v in _t8_constants(np.float64))
    ps = _h_powers(a, 3)
    a4 = _h_mm(ps[2], _lincomb(ps[1:3], _as_half_blob((x1, x2), 2)))
    ps.append(a4)
    a8 = _h_mm(_lincomb(ps[2:4], _as_half_blob((x3, 1.0), 2)),
               _lincomb(ps[0:4], _as_half_blob((x4, x5, x6, x7), 4)))
    return _lincomb(ps + [a8], _as_half_blob((1.0, 1.0, y2, 0.0, 1.0), 5))


def _h_table(b):
    n = len(b)
    return _as_half_blob([v for row in b for v in row], n * n).reshape(n, n)


def _h_t12(a):
    ps = _h_powers(a, 4)
    bs = [_lincomb(ps, row) for row in _h_table(_B12)]
    bs[2] = bs[2] + _h_mm(bs[3], bs[3])
    bs[1] = bs[1] + bs[2]
    return bs[0] + _h_mm(bs[1], bs[2])


def _h_t18(a):
    ps = _h_powers(a, 5)
    bs = [_lincomb(ps, row) for row in _h_table(_B18)]
    bs[3] = bs[3] + _h_mm(bs[0], bs[4])
    bs[2] = bs[2] + bs[3]
    return bs[1] + _h_mm(bs[2], bs[3])


def _h_t18_scale_square(a, norm, theta):
    with np.errstate(all="ignore"):
        q = (norm.astype(np.float32) / np.float32(theta)).astype(np.float16)
        s = np.maximum(np.ceil(np.log2(q.astype(np.float32)).astype(np.float16)), np.float16(0))
    s_int = np.where(np.isfinite(s), s, 0).astype(np.int64)
    scaled = a * np.power(np.float16(2), -s.astype(np.float32)).astype(np.float16)[:, None, None]
    m = _h_t18(scaled)
    out = np.empty_like(m)
    for i in range(m.shape[0]):
        x = m[i]
        for _ in range(int(s_int[i])):
            x = _h_mm(x, x)
        out[i] = x
    return out


def mexp_half(a):
    """a (B, n, n) float16, n >= 2."""
    thetas = _THETAS[np.dtype(np.float64)]
    with np.errstate(all="ignore"):
        norm = np.max(np.sum(np.abs(a).astype(np.float32), axis=-2).astype(np.float16), axis=-1)
        if a.shape[0] > 1:
            return _h_t18_scale_square(a, norm, thetas[5])
        res = np.full_like(a, np.nan)
        lower = np.float16(-1)
        for fn, theta in zip((_h_t1, _h_t2, _h_t4, _h_t8, _h_t12), thetas):
            idx = np.nonzero((lower < norm) & (norm <= np.float16(theta)))[0]
            if idx.size:
                res[idx] = fn(a[idx])
            lower = np.float16(theta)
        idx = np.nonzero(norm >= np.float16(thetas[4]))[0]
        if idx.size:
            res[idx] = _h_t18_scale_square(a[idx], norm[idx], thetas[5])
    return res
