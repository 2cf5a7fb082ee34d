"""Complex arithmetic as torch's CPU kernels compute it (c10/util/complex.h, vec256/512_complex_*.h).

torch multiplies complex numbers with the textbook formula ``(a + bi)(c + di) = (ac - bd) +
(ad + bc)i``, in two ways (measured on the AVX2 build, torch.backends.cpu.get_cpu_capability()):
- the Vectorized<c10::complex<T>> operator* (vectorized_loop's blocks) rounds each product:
  ``cmul``;
- c10::complex's scalar operator*, compiled with FMA contraction (basic_loop, and the rows' tails
  after the blocks), fuses: ``fma(a, c, -bd)``, ``fma(a, d, bc)`` -- NumPy's complex multiply
  exactly, infinities and NaNs included. For complex64 the compiler vectorizes basic_loop two
  elements at a time; a row's odd last element goes through scalar code that rounds each product.
Which one an element gets is the loop geometry's (_cpu_loops.LoopPlan): ``mul_on``.
The add/sub kernels compute ``self + alpha * other`` for every alpha, 1 included; NumPy's
``a + b`` never multiplies by 1 + 0i (so ``inf * 0`` never makes a NaN). These helpers take the
place of ``np.multiply`` / ``np.add`` on complex arrays; real arrays go straight to NumPy.
"""
import numpy as np


def _xp(a):
    if isinstance(a, (np.ndarray, np.generic)):
        return np
    from reftrace_backends import get_backend
    return get_backend("cuda").xp


def cmul(x, y):
    """x * y, elementwise, torch's formula (both complex arrays of one dtype, or broadcastable)."""
    xr, xi, yr, yi = x.real, x.imag, y.real, y.imag
    re = xr * yr
    re -= xi * yi
    im = xr * yi
    im += xi * yr
    out = _xp(x).empty(re.shape, dtype=np.result_type(x.dtype, y.dtype))
    out.real, out.imag = re, im
    return out


# 2 * Vectorized<c10::complex<T>>::size() under AVX2 (256-bit registers): vectorized_loop's block
_BLOCK = {np.dtype(np.complex64): 8, np.dtype(np.complex128): 4}


def mul_on(x, y, plan):
    """x * y (complex arrays of one dtype) as cpu_kernel_vec's mul computes it over ``plan``."""
    if _xp(x) is not np:  # (another device's kernels: the textbook formula)
        return cmul(x, y)
    return on_loops(plan, np.result_type(x.dtype, y.dtype), (x, y), cmul, np.multiply, binary_tail)


def _cube_rounded(x):
    return cmul(cmul(x, x), x)


def _cube_fused(x):
    return np.multiply(np.multiply(x, x), x)


def power_on(x, exponent, plan):
    """x ** 2 or x ** 3 as pow_tensor_scalar_optimized_kernel computes it over ``plan``
    (``base * base (* base)``: the vector product, or the compiled scalar one)."""
    if _xp(x) is not np:
        return _cube_rounded(x) if exponent == 3 else cmul(x, x)
    if exponent == 2:
        return on_loops(plan, x.dtype, (x,), lambda v: cmul(v, v), lambda v: np.multiply(v, v),
                        lambda t, p: ())
    # (the odd last element of a complex64 basic_loop run of the cube gets yet another mix of
    # fused and rounded products, not reproduced: a last-bit difference at most, for finite ones)
    return on_loops(plan, x.dtype, (x,), _cube_rounded, _cube_fused, lambda t, p: ())


def on_loops(plan, dtype, arrays, vector, scalar, tail):
    """``vector(*arrays)`` (the vector op) where vectorized_loop's blocks compute the elements,
    ``scalar(*arrays)`` (the compiled scalar loop: fused products, NumPy's) elsewhere, except at
    the complex64 row positions ``tail(t, plan)`` of the ``t`` elements after the blocks,
    where the compiled loop rounds each product. (Callers run under arithmetic's ``quiet``: no
    floating-point warnings.)"""
    start, n0 = plan.body_end(_BLOCK[np.dtype(dtype)]), plan.n0
    rounded = tail(n0 - start, plan) if dtype == np.complex64 else ()
    if start == n0 or len(rounded) == n0:
        return vector(*arrays)
    if start == 0 and not rounded:
        return scalar(*arrays)
    if plan.c_order:  # one row, in memory order: fix the flattened result's few odd ones
        flat = [(a if a.shape == plan.shape else np.broadcast_to(a, plan.shape)).reshape(-1)
                for a in arrays]
        if start:  # blocks, then the tail's scalar results but at ``rounded``
            out = np.ascontiguousarray(vector(*arrays))
            res = out.reshape(-1)
            tail_vals = scalar(*(f[start:] for f in flat))
            if rounded:
                tail_vals[list(rounded)] = res[[start + k for k in rounded]]
            res[start:] = tail_vals
        else:  # basic_loop's scalar results but at ``rounded``
            out = np.ascontiguousarray(scalar(*arrays))
            res = out.reshape(-1)
            idx = list(rounded)
            res[idx] = vector(*(f[idx] for f in flat))
        return out
    j = plan.row_index()
    mask = j < start
    for k in rounded:
        mask = mask | (j == start + k)
    return np.where(mask, vector(*arrays), scalar(*arrays))


def binary_tail(t, plan):
    """The positions, among the ``t`` elements of a complex64 row that basic_loop computes, that
    the compiled scalar loop of mul computes with rounded products (measured): GCC vectorized it
    two elements at a time, the odd last one alone; with a stride-0 input (vectorized_loop's tail
    with a scalar) four at a time from the second element, and not at all below five. In place
    (the output is an input), a row basic_loop runs with runtime strides fails GCC's overlap
    check: all of it is the plain scalar loop."""
    if plan.aliased and not plan.vec:
        return tuple(range(t))
    if plan.scalar:
        return tuple(range(t)) if t <= 4 else (0,) + tuple(range(5, t))
    return (t - 1,) if t % 2 else ()


def axpy(x, y, alpha):
    """x + alpha * y as torch's complex add kernel computes it (alpha a complex scalar)."""
    xp = _xp(y)
    return xp.add(x, cmul(xp.asarray(alpha, dtype=y.dtype), y))


def c99_mul(x, y):
    """x * y as C's ``_Complex`` product (libgcc's __mulsc3/__muldc3): the textbook formula,
    each product rounded, then C99 Annex G's recovery where both parts came out NaN but an
    operand or a product is infinite (the infinite operand boxed to +-1 or 0, NaN partners to
    0, the products scaled by infinity)."""
    xp = _xp(x)
    x, y = xp.broadcast_arrays(xp.asarray(x), xp.asarray(y))
    a, b, c, d = x.real, x.imag, y.real, y.imag
    ac, bd, ad, bc = a * c, b * d, a * d, b * c
    out = xp.empty(ac.shape, dtype=xp.result_type(x.dtype, y.dtype))
    out.real, out.imag = ac - bd, ad + bc
    bad = xp.isnan(out.real) & xp.isnan(out.imag)
    if not bad.any():
        return out
    a, b, c, d = (v[bad] for v in (a, b, c, d))
    ac, bd, ad, bc = (v[bad] for v in (ac, bd, ad, bc))
    inf_x = xp.isinf(a) | xp.isinf(b)
    inf_y = xp.isinf(c) | xp.isinf(d)

    def box(u):  # copysign(isinf(u) ? 1 : 0, u)
        return xp.copysign(xp.isinf(u).astype(u.dtype), u)

    def zero_nan(u, where):  # a NaN partner of an infinite operand becomes a signed 0
        return xp.where(where & xp.isnan(u), xp.copysign(u.dtype.type(0), u), u)

    a, b = xp.where(inf_x, box(a), a), xp.where(inf_x, box(b), b)
    c, d = zero_nan(c, inf_x), zero_nan(d, inf_x)
    c, d = xp.where(inf_y, box(c), c), xp.where(inf_y, box(d), d)
    a, b = zero_nan(a, inf_y), zero_nan(b, inf_y)
    inf_p = ~(inf_x | inf_y) & (xp.isinf(ac) | xp.isinf(bd) | xp.isinf(ad) | xp.isinf(bc))
    a, b, c, d = (zero_nan(v, inf_p) for v in (a, b, c, d))
    recalc = inf_x | inf_y | inf_p
    inf = a.dtype.type(xp.inf)
    re = xp.where(recalc, inf * (a * c - b * d), out.real[bad])
    im = xp.where(recalc, inf * (a * d + b * c), out.imag[bad])
    out.real[bad], out.imag[bad] = re, im
    return out


def cpow(x, y):
    """x ** y for complex x, y as torch's CPU kernels compute it: std::pow of std::complex, which
    is glibc's cpow, ``cexp(y * clog(x))`` (NumPy's complex log and exp are those functions;
    np.power differs: it multiplies out integer exponents and makes 0 ** 0 one)."""
    xp = _xp(x)
    with np.errstate(all="ignore"):
        return xp.exp(c99_mul(y, xp.log(x)))
