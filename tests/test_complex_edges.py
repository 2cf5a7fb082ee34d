"""Complex arithmetic at its edges against live torch 2.13: products whose rounding depends on
which of torch's CPU loops (vectorized blocks, the compiled scalar loop, its odd last element)
computes them, overflowing products, pow/square/ldexp of infinities and zeros, logcumsumexp,
renorm, and the layouts of isreal and conj_physical. Values are compared component by component
with no tolerance (view_as_real): the elements here are the ones where a last-bit rounding
difference is a large or a NaN one. Every expectation is torch's, computed in the test."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", exc_type=ImportError)

from oracle import check  # noqa: E402

EXACT = {"atol": 0, "rtol": 0}
CDTYPES = ("complex64", "complex128")


def edge_pairs(n, dtype, seed=0):
    """x, y with y close to conj(x) rotated (the imaginary part of x * y cancels: fused and
    rounded products differ there), every fifth pair overflowing (inf - inf vs a fused inf)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n) * 10.0 ** rng.integers(-2, 3, n)
    b = rng.standard_normal(n) * 10.0 ** rng.integers(-2, 3, n)
    x = (a + 1j * b).astype(dtype)
    y = (a * (1 + 1e-3 * rng.standard_normal(n)) - 1j * b).astype(dtype)
    big = 1e20 if dtype == "complex64" else 1e200
    x[::5] = big + big * 1j
    y[::5] = big - 3 * big * 1j
    x[2::7] = big * (1 + 1j)
    y[2::7] = big * (1 + 1j)
    return x, y


def parts(m, t):
    """The tensor's components, compared exactly (NaNs by position)."""
    return m.view_as_real(t.contiguous())


MUL_LAYOUTS = {
    "contiguous_13": (lambda x: x, (13,)),  # 8 in the vector block, 4 fused, the odd last rounded
    "contiguous_64": (lambda x: x, (64,)),
    "contiguous_5": (lambda x: x, (5,)),  # no block: basic_loop
    "strided": (lambda x: x[::2], (26,)),
    "strided_odd": (lambda x: x[::2], (25,)),
    "transposed": (lambda x: x.t(), (9, 5)),  # a 2-d loop of rows of 5
    "rows_odd": (lambda x: x[:, :7], (6, 9)),  # rows of 7: one block-less row each
    "rows_11": (lambda x: x[:, 1:12], (3, 12)),
    "column": (lambda x: x[:, 1], (12, 3)),
}


@pytest.mark.parametrize("layout", MUL_LAYOUTS)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_mul_rounds_as_torchs_loops(layout, dtype):
    view, shape = MUL_LAYOUTS[layout]
    n = int(np.prod(shape))
    x, y = edge_pairs(n, dtype)
    x, y = x.reshape(shape), y.reshape(shape)
    check(lambda m, x, y: parts(m, view(x) * view(y)), x, y, **EXACT)
    check(lambda m, x, y: parts(m, view(x) * y.reshape(-1)[:view(x).shape[-1]]), x, y, **EXACT)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_mul_broadcast_scalar_and_promoted(dtype):
    x, y = edge_pairs(60, dtype, seed=1)
    check(lambda m, x, y: parts(m, x.reshape(6, 10)[:, :1] * y.reshape(6, 10)), x, y, **EXACT)
    check(lambda m, x, y: parts(m, x.reshape(6, 10) * y.reshape(6, 10)[:1]), x, y, **EXACT)
    check(lambda m, x, y: parts(m, x.reshape(6, 10)[:, :9] * y[:1].reshape(())), x, y, **EXACT)
    for k in (7, 13, 21):
        check(lambda m, x: parts(m, x[:k] * complex(x[3])), x, **EXACT)
        check(lambda m, x: parts(m, x[:k:2] * complex(x[3])), x, **EXACT)
        check(lambda m, x, y: parts(m, x[:k] * y.real[:k]), x, y, **EXACT)
        check(lambda m, x, y: parts(m, x[:k] * y.real[:2 * k:2]), x, y, **EXACT)
    check(lambda m, x, y: parts(m, x[4] * y[4]), x, y, **EXACT)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_mul_sample_overflow_element(dtype):
    """The OpInfo sample that failed: a 2-strided operand with a cancelling imaginary part."""
    x = np.array([-501 - 1e20j] * 6, dtype)
    y = np.array([-501 + 1e20j] * 6, dtype)
    check(lambda m, x, y: parts(m, x[::2] * y[::2]), x, y, **EXACT)
    check(lambda m, x, y: parts(m, y[::2].__rmul__(x[::2])), x, y, **EXACT)


# -- layouts --------------------------------------------------------------------------------------

def test_isreal_and_conj_physical_keep_empty_strides():
    r = np.zeros((1, 2, 6), np.float32)
    c = np.zeros((2, 3, 1, 2), np.complex64)
    check(lambda m, x: m.isreal(x[:, :0, ::2]), r)
    check(lambda m, x: m.isreal(x[:, :, ::2]), r)
    check(lambda m, x: m.isreal(x.permute(2, 0, 1)), r)
    check(lambda m, x: m.isreal(x[:, :0]), c)
    check(lambda m, x: m.isreal(x.permute(3, 1, 0, 2)[:, :, :, :0]), c)
    check(lambda m, x: m.isreal(x.transpose(0, 1)), c)
    check(lambda m, x: m.conj_physical(x.reshape(-1)[:0:2]), c)
    check(lambda m, x: m.conj_physical(x.permute(3, 1, 0, 2)), c)
    check(lambda m, x: m.conj_physical(x[:, ::2]), c)
    check(lambda m, x: m.conj_physical(x.conj()[:, :0]), c)


# -- square and cube: pow_tensor_scalar_optimized_kernel's base * base (* base) --------------------

POW_LAYOUTS = {
    "contiguous_13": (lambda x: x, (13,)),
    "contiguous_7": (lambda x: x, (7,)),
    "strided_odd": (lambda x: x[::2], (25,)),
    "transposed": (lambda x: x.t(), (9, 5)),
    "rows_11": (lambda x: x[:, 1:12], (3, 12)),
    "expanded": (lambda x: x[:1].expand(11), (11,)),
}


@pytest.mark.parametrize("layout", POW_LAYOUTS)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_square_and_cube_round_as_torchs_loops(layout, dtype):
    view, shape = POW_LAYOUTS[layout]
    x, _ = edge_pairs(int(np.prod(shape)), dtype, seed=2)
    x = x.reshape(shape)
    check(lambda m, x: parts(m, view(x).square()), x, **EXACT)
    check(lambda m, x: parts(m, view(x) ** 2), x, **EXACT)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_cube_rounds_as_torchs_loops(dtype):
    """(An odd complex64 run's last element is left out: torch computes it with a mix of fused
    and rounded products that reftrace does not reproduce.)"""
    x, _ = edge_pairs(52, dtype, seed=3)
    check(lambda m, x: parts(m, x[::2] ** 3), x, **EXACT)
    check(lambda m, x: parts(m, x[:48] ** 3), x, **EXACT)
    check(lambda m, x: parts(m, x[:44] ** 3), x, **EXACT)


# -- pow: glibc's cpow, cexp(y * clog(x)) -------------------------------------------------------

def special_grid(dtype):
    """Every pair of complex numbers made of zeros (signed), ones, infinities, NaNs and others."""
    vals = [0.0, -0.0, 1.0, -2.0, 0.5, np.inf, -np.inf, np.nan, 3.0]
    comps = np.array([complex(r, i) for r in vals for i in vals])
    x, y = np.repeat(comps, len(comps)), np.tile(comps, len(comps))
    out = []
    for v in (x, y):
        a = np.empty(v.shape, dtype)
        a.real, a.imag = v.real, v.imag  # (complex(inf, 0) * 1 would NaN the imaginary part)
        out.append(a)
    return out


@pytest.mark.parametrize("dtype", CDTYPES)
def test_pow_special_values(dtype):
    x, y = special_grid(dtype)
    check(lambda m, x, y: parts(m, m.pow(x, y)), x, y, **EXACT)
    check(lambda m, x, y: parts(m, x[::2] ** y[::2]), x, y, **EXACT)
    check(lambda m, x, y: parts(m, m.float_power(x, y)), x, y, **EXACT)
    for e in (0j, 1.5, 2.5 - 1j, -3j):
        check(lambda m, x: parts(m, x ** e), x, **EXACT)
        check(lambda m, x: parts(m, e ** x), x, **EXACT)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_pow_random_values_bit_exact(dtype):
    rng = np.random.default_rng(4)
    n = 2000
    x = (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 5, n) + 1j * rng.standard_normal(n)).astype(dtype)
    y = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 3, n) + 1j * rng.standard_normal(n)).astype(dtype)
    y[::3] = np.round(y[::3].real * 3)  # integer exponents (np.power multiplies those out)
    check(lambda m, x, y: parts(m, x ** y), x, y, **EXACT)
    check(lambda m, x: parts(m, x ** (1.5 - 0.5j)), x, **EXACT)


# -- logcumsumexp: _log_add_exp_helper folded along the dimension -------------------------------------

@pytest.mark.parametrize("dtype", CDTYPES)
def test_logcumsumexp_complex_large_and_special(dtype):
    """Large real parts (exp's sum overflows, the log does not), infinities and NaNs. complex64
    accumulates in complex128 and is bit-exact; complex128 may differ in the last bit (NumPy's
    complex log1p, not c10's)."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((40, 6)) * 3000 + 1j * rng.standard_normal((40, 6)) * 5).astype(dtype)
    x[3, 2] = complex(np.inf, 1)
    x[7, 3] = complex(-np.inf, 0)
    x[9, 4] = complex(np.nan, 0)
    x[5, 5] = complex(np.inf, 0)
    x[6, 5] = complex(np.inf, 2)
    tol = EXACT if dtype == "complex64" else {}
    for dim in (0, 1, -1):
        check(lambda m, x: m.logcumsumexp(x, dim), x, **tol)
    check(lambda m, x: m.logcumsumexp(x.t(), 0), x, **tol)


def test_renorm_complex_uses_magnitudes():
    """The norm of a complex slice is of its magnitudes (reftrace's was of the real parts)."""
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((4, 3, 5)) + 1j * rng.standard_normal((4, 3, 5))).astype("complex64")
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 2.5), (3, -1, 0.5), (float("inf"), 2, 1.0)):
        check(lambda m, x: m.renorm(x, p, dim, maxnorm), x)
        check(lambda m, x: m.renorm(x, p, dim, 100.0), x)
    check(lambda m, x: m.renorm(x.to(m.complex128), 2, 0, 1.0), x)


# -- in place: the output is an input ----------------------------------------------------------------

INPLACE = {
    "strided_self": lambda m, x, y: x[:, ::2].mul_(y[:, ::2]),  # basic_loop fails GCC's overlap check
    "strided_self_other_contiguous": lambda m, x, y: x[:, ::2].mul_(y[:, :7]),
    "transposed_self": lambda m, x, y: x.t().mul_(y.t()),
    "self_other_transposed": lambda m, x, y: x.t().contiguous().mul_(y.t()),
    "rows_7": lambda m, x, y: x[:, :7].mul_(y[:, 1:8]),  # vectorized_loop's tail: as out of place
    "rows_11": lambda m, x, y: x[:, :11].mul_(y[:, 1:12]),
    "contiguous": lambda m, x, y: x.mul_(y),
    "imul": lambda m, x, y: x.__imul__(y),
    "flat_13": lambda m, x, y: x.reshape(-1)[:13].mul_(y.reshape(-1)[:13]),
    "scalar": lambda m, x, y: x[:, :7].mul_(2 - 1j),
    "scalar_strided": lambda m, x, y: x[:, ::2].mul_(2 - 1j),
    "broadcast": lambda m, x, y: x[:, :11].mul_(y[0, :11]),
    "square_": lambda m, x, y: x[:, :7].square_(),
    "square_strided": lambda m, x, y: x[:, ::2].square_(),
}


@pytest.mark.parametrize("case", INPLACE)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_inplace_mul_rounds_as_torchs_loops(case, dtype):
    x, y = edge_pairs(117, dtype, seed=9)
    fn = INPLACE[case]
    check(lambda m, x, y: parts(m, fn(m, x, y)), x.reshape(9, 13), y.reshape(9, 13), **EXACT)
