"""float16 (and float32) kernels whose rounding depends on how torch's CPU loop runs them,
compared bit for bit with torch 2.13 (atol = rtol = 0).

add / sub with alpha: the vectorized op computes fmadd in float and rounds once, the scalar op
(the tail of a row, non-contiguous rows) rounds alpha * other to Half first
(reftrace/ops/_cpu_loops.py says which elements take which path)."""
import pytest

from oracle import check, sample

EXACT = dict(atol=0, rtol=0)

LAYOUTS = {
    "contiguous": lambda m, a, b: (a, b),
    "transposed": lambda m, a, b: (a.t(), b.t()),
    "mixed": lambda m, a, b: (a, b.t()),
    "row": lambda m, a, b: (a, b[:1]),
    "scalar": lambda m, a, b: (a, b[0, 0]),
    "strided": lambda m, a, b: (a[:, ::2], b[:, ::2]),
}


@pytest.mark.parametrize("dt", ["float16", "float32"])
@pytest.mark.parametrize("shape", [(5, 5), (3, 70), (33, 40), (1, 1000)])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("alpha", [-3.125, 0.7, 2])
@pytest.mark.parametrize("name", ["add", "sub"])
def test_axpy_rounding(dt, shape, layout, alpha, name):
    if layout in ("transposed", "mixed") and shape[0] != shape[1]:
        shape = (shape[1], shape[1]) if shape[1] < 100 else (40, 40)

    def fn(m, a, b):
        x, y = LAYOUTS[layout](m, a, b)
        return getattr(m, name)(x, y, alpha=alpha)
    # float32 with other a broadcast scalar: GCC's auto-vectorized row tail rounds the hoisted
    # alpha * other (not modelled, an ulp apart), so that case keeps the default tolerance
    tol = {} if (dt == "float32" and layout == "scalar") else EXACT
    check(fn, sample(shape, dt), sample(shape, dt, seed=1), **tol)


@pytest.mark.parametrize("alpha", [-3.125, 0.7])
def test_axpy_half_inplace(alpha):
    check(lambda m, a, b: a.add_(b, alpha=alpha), sample((7, 9), "float16"), sample((7, 9), "float16", seed=1),
          **EXACT)


# -- grid_sampler_3d: GridSampler.cpp's scalar kernel, every operation in the input's dtype ----------

@pytest.mark.parametrize("dt", ["float16", "float32", "float64"])
@pytest.mark.parametrize("interp", [0, 1])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_3d_bits(dt, interp, padding, align_corners):
    a = sample((2, 3, 4, 5, 6), dt)
    g = sample((2, 3, 4, 5, 3), dt, low=-1.3, high=1.3, seed=1)
    check(lambda m, x, y: m.grid_sampler_3d(x, y, interp, padding, align_corners), a, g, **EXACT)


# -- grid_sampler_2d, float16: GridSamplerKernel.cpp's Vectorized<Half> kernel, every operation
#    rounded to half -------------------------------------------------------------------------------

@pytest.mark.parametrize("interp", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sampler_2d_half_bits(interp, padding, align_corners):
    a = sample((2, 3, 5, 7), "float16")
    g = sample((2, 4, 6, 2), "float16", low=-1.3, high=1.3, seed=1)
    check(lambda m, x, y: m.grid_sampler_2d(x, y, interp, padding, align_corners), a, g, **EXACT)
    check(lambda m, x, y: m.nn.functional.grid_sample(
        x, y, mode=["bilinear", "nearest", "bicubic"][interp],
        padding_mode=["zeros", "border", "reflection"][padding], align_corners=align_corners),
        a, g, **EXACT)


# -- antialiased upsampling of uint8: Pillow-SIMD's fixed-point convolution ---------------------------

@pytest.mark.parametrize("name", ["_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa"])
@pytest.mark.parametrize("channels", [3, 5])
@pytest.mark.parametrize("size,align_corners,scales", [
    ((3, 3), False, ()), ((5, 5), False, ()), ((17, 9), False, ()), ((3, 3), True, ()),
    ((4, 20), True, ()), ((30, 41), False, ()), ((3, 3), False, (1.7, 0.9)), ((10, 7), False, (0.6, 0.3))])
def test_upsample_aa_uint8_bits(name, channels, size, align_corners, scales):
    x = sample((2, channels, 10, 20), "uint8", high=255)
    check(lambda m, a: getattr(m.ops.aten, name)(a, list(size), align_corners, *scales), x)
    check(lambda m, a: getattr(m.ops.aten, name)(a.contiguous(memory_format=m.channels_last),
                                                 list(size), align_corners, *scales), x)


@pytest.mark.parametrize("dt", ["int8", "int64", "bool"])
def test_upsample_aa_other_integers_refused(dt):
    check(lambda m, a: m.ops.aten._upsample_bilinear2d_aa(a, [2, 2], False), sample((1, 3, 4, 4), dt))
