"""linalg.matrix_exp against torch 2.13 bit for bit (atol = rtol = 0) for float32 / float64:
the port of LinearAlgebra.cpp's mexp (reftrace/ops/linalg_matrix_exp.py) takes the same
Taylor degree per 1-norm (a batch always degree 18), ATen's constants and operation order,
and small matmuls summed in order as ATen's baddbmm_cpu_kernel does."""
import pytest

from oracle import check, sample

EXACT = dict(atol=0, rtol=0)


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("scale", [1e-9, 1e-5, 1e-2, 0.1, 0.3, 0.5, 1.0, 2.0, 5.0, 20.0])
@pytest.mark.parametrize("shape", [(5, 5), (3, 3), (4, 5, 5), (2, 3, 2, 2)])
def test_matrix_exp_bits(dt, scale, shape):
    a = sample(shape, dt, low=-1, high=1) * (scale / shape[-1])
    check(lambda m, x: m.linalg.matrix_exp(x), a.astype(dt), **EXACT)
    check(lambda m, x: m.matrix_exp(x), a.astype(dt), **EXACT)


@pytest.mark.parametrize("shape", [(1, 1), (3, 1, 1)])
def test_matrix_exp_trivial_sizes(shape):
    check(lambda m, x: m.linalg.matrix_exp(x), sample(shape, "float64"), **EXACT)


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
def test_matrix_exp_complex_close(dt):
    check(lambda m, x: m.linalg.matrix_exp(x), sample((3, 4, 4), dt, low=-1, high=1))


@pytest.mark.parametrize("scale", [0.0, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 2.0, 27.0])
@pytest.mark.parametrize("shape", [(5, 5), (2, 2), (4, 5, 5)])
def test_matrix_exp_half_as_torch(scale, shape):
    # torch's Half path reads mexp_impl<double>'s double coefficients as Half bytes: its
    # (meaningless) values, NaN included, are what reftrace reproduces
    a = (sample(shape, "float32", low=-1, high=1) * (scale / shape[-1])).astype("float16")
    check(lambda m, x: m.matrix_exp(x), a, **EXACT)
