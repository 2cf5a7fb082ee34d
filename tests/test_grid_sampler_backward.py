"""grid_sampler_2d_backward / grid_sampler_3d_backward against torch 2.13, bit for bit: every
interpolation mode, padding mode and align_corners, in float64, float32 and half, with a
contiguous and a strided grid (the 2d kernel's vector chunks, hence grad_input's summation order,
follow the grid's layout); output_mask; the 2d forward kernel's bits; and the double backward
(FunctionsManual's grid_sampler_*_double_backward) to rounding."""
import itertools

import numpy as np
import pytest

import reftrace

torch = pytest.importorskip("torch")

DTYPES = [np.float64, np.float32, np.float16]
CASES_2D = list(itertools.product(range(3), range(3), (False, True)))
CASES_3D = list(itertools.product(range(2), range(3), (False, True)))


def _arrays(dims, dt, strided, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((2, 3, 5, 7) if dims == 2 else (2, 3, 4, 5, 6)).astype(dt)
    out = (4, 9) if dims == 2 else (3, 4, 5)
    if strided == "planes":   # (N, dims, *out) as (N, *out, dims): flat chunks, as contiguous
        g = np.moveaxis(rng.uniform(-1.6, 1.6, (2, dims) + out).astype(dt), 1, -1)
    elif strided == "rows":   # H and W transposed: the kernel walks the grid row by row
        g = rng.uniform(-1.6, 1.6, (2, out[1], out[0], dims)).astype(dt).transpose(0, 2, 1, 3)
    else:
        g = rng.uniform(-1.6, 1.6, (2,) + out + (dims,)).astype(dt)
    go = rng.standard_normal((2, 3) + out).astype(dt)
    return a, g, go


def _run(dims, a, g, go, mode, pad, align, mask):
    op_t = getattr(torch.ops.aten, f"grid_sampler_{dims}d_backward")
    ti, tg = op_t(torch.from_numpy(go), torch.from_numpy(a), torch.from_numpy(g), mode, pad,
                  align, mask)
    op_r = getattr(reftrace.ops.aten, f"grid_sampler_{dims}d_backward")
    ri, rg = op_r(reftrace.from_numpy(go.copy()), reftrace.from_numpy(a.copy()),
                  reftrace.from_numpy(g), mode, pad, align, mask)
    return (ti, tg), (ri, rg)


def _same_bits(r, t, what):
    assert (r is None) == (t is None), what
    if t is not None:
        want, got = t.numpy(), np.asarray(r.numpy())
        assert got.dtype == want.dtype and got.shape == want.shape, what
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=what)


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("strided", [None, "planes", "rows"])
@pytest.mark.parametrize("mode,pad,align", CASES_2D)
def test_grid_sampler_2d_backward_bits(mode, pad, align, strided, dt):
    a, g, go = _arrays(2, dt, strided, seed=mode * 7 + pad * 3 + align)
    (ti, tg), (ri, rg) = _run(2, a, g, go, mode, pad, align, [True, True])
    _same_bits(ri, ti, "grad_input")
    _same_bits(rg, tg, "grad_grid")


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("mode,pad,align", CASES_3D)
def test_grid_sampler_3d_backward_bits(mode, pad, align, dt):
    a, g, go = _arrays(3, dt, False, seed=mode * 7 + pad * 3 + align)
    (ti, tg), (ri, rg) = _run(3, a, g, go, mode, pad, align, [True, True])
    _same_bits(ri, ti, "grad_input")
    _same_bits(rg, tg, "grad_grid")


@pytest.mark.parametrize("dims", [2, 3])
def test_output_mask_skips_grad_input(dims):
    a, g, go = _arrays(dims, np.float64, False, seed=5)
    (ti, tg), (ri, rg) = _run(dims, a, g, go, 0, 0, False, [False, True])
    assert ti is None and ri is None
    _same_bits(rg, tg, "grad_grid")


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("mode", [0, 1])
def test_grid_sampler_2d_forward_bits(mode, dt):
    """The forward's bilinear and nearest kernels (bicubic differs from torch in a few last bits
    for float and double: not modelled)."""
    for pad, align in itertools.product(range(3), (False, True)):
        a, g, _ = _arrays(2, dt, False, seed=pad + 3 * align)
        want = torch.grid_sampler_2d(torch.from_numpy(a), torch.from_numpy(g), mode, pad, align)
        got = reftrace.grid_sampler_2d(reftrace.from_numpy(a), reftrace.from_numpy(g), mode, pad,
                                       align)
        _same_bits(got, want, f"padding {pad} align_corners {align}")


@pytest.mark.parametrize("dims,mode", [(2, 0), (2, 1), (2, 2), (3, 0), (3, 1)])
@pytest.mark.parametrize("pad", [0, 1, 2])
def test_double_backward(dims, mode, pad):
    a, g, go = _arrays(dims, np.float64, False, seed=11 + pad)
    rng = np.random.default_rng(3)
    u_in, u_grid = rng.standard_normal(a.shape), rng.standard_normal(g.shape)
    results = []
    for m in (torch, reftrace):
        x, grid = m.from_numpy(a.copy()).requires_grad_(), m.from_numpy(g.copy()).requires_grad_()
        y = getattr(m, f"grid_sampler_{dims}d")(x, grid, mode, pad, False)
        gi, gg = m.autograd.grad(y, (x, grid), m.from_numpy(go.copy()), create_graph=True)
        assert type(gi.grad_fn).__name__ == f"GridSampler{dims}DBackwardBackward0"
        s = (gi * m.from_numpy(u_in)).sum() + (gg * m.from_numpy(u_grid)).sum()
        results.append(m.autograd.grad(s, (x, grid), allow_unused=True))
    for t, r in zip(*results):
        assert (t is None) == (r is None)
        if t is not None:
            np.testing.assert_allclose(np.asarray(r.numpy()), t.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dims", [2, 3])
def test_backward_refuses_integers_as_torch(dims):
    shape, grid = ((1, 1, 2, 2), (1, 1, 1, 2)) if dims == 2 else ((1, 1, 2, 2, 2), (1, 1, 1, 1, 3))
    messages = []
    for m in (torch, reftrace):
        op = getattr(m.ops.aten, f"grid_sampler_{dims}d_backward")
        with pytest.raises(NotImplementedError) as e:
            op(m.zeros((1, 1) + grid[1:-1], dtype=m.int64), m.zeros(shape, dtype=m.int64),
               m.zeros(grid, dtype=m.int64), 0, 0, False, [True, True])
        messages.append(str(e.value))
    assert messages[0] == messages[1]
