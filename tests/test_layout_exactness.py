"""Layout and rounding cases found by OpInfo's reference inputs (issue 12), against live torch:
empty and size-1 dims under TensorIterator's fast paths, kernels that write into
``empty_like(self)``, unique over a dim, linalg.solve's vector case, matrix_norm's keepdim view and
empty matrices, small bmm's in-order sums and addr's per-step rounding."""
import itertools
import warnings

import numpy as np
import pytest

import reftrace

try:
    import torch
except ImportError:  # pragma: no cover - the torch-free run
    torch = None

pytestmark = pytest.mark.skipif(torch is None, reason="torch 2.13 (the oracle) is not installed")

SHAPES = [(0,), (1,), (3,), (0, 3), (1, 3), (1, 0, 3), (0, 1, 3), (3, 0, 1, 0), (2, 1, 3), (1, 2, 1, 3)]


def _layouts():
    for shape in SHAPES:
        for perm in itertools.permutations(range(len(shape))):
            for step in (1, 2):
                yield shape, perm, step


def _make(lib, shape, perm, step, dtype):
    """A tensor of ``shape`` whose memory order is ``perm``, every ``step``-th element."""
    pshape = [shape[p] for p in perm]
    pshape[-1] *= step
    base = lib.arange(int(np.prod(pshape)), dtype=getattr(lib, dtype)).reshape(pshape)
    if step > 1:
        base = base[..., ::step]
    return base.permute(*[perm.index(i) for i in range(len(perm))])


CASES = {
    "neg": lambda L, t: t.neg(), "isinf": lambda L, t: t.isinf(), "isfinite": lambda L, t: t.isfinite(),
    "isnan_int": lambda L, t: t.int().isnan(),
    "isinf_int": lambda L, t: t.int().isinf(), "isfinite_int": lambda L, t: t.int().isfinite(),
    "nan_to_num": lambda L, t: t.nan_to_num(), "deg2rad": lambda L, t: t.deg2rad(),
    "deg2rad_int": lambda L, t: t.int().deg2rad(), "frexp": lambda L, t: t.frexp()[0],
    "mul_scalar": lambda L, t: t * 2.0, "rdiv": lambda L, t: 2.0 / t, "pow_scalar": lambda L, t: t ** 2.5,
    "add_self": lambda L, t: t + t, "contiguous": lambda L, t: t.contiguous(),
    "clamp": lambda L, t: t.clamp(0, 1), "empty_like": lambda L, t: L.empty_like(t),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pointwise_layouts(name):
    fn = CASES[name]
    bad = []
    for shape, perm, step in _layouts():
        got = []
        for lib in (torch, reftrace):
            r = fn(lib, _make(lib, shape, perm, step, "float32"))
            got.append((tuple(r.shape), r.stride()))
        if got[0] != got[1]:
            bad.append((shape, perm, step, got))
    assert not bad, bad[:3]


@pytest.mark.parametrize("rank", [4, 5])
def test_channels_last_contiguity_of_empty_tensors(rank):
    shapes = [(1, 2, 1, 3), (2, 0, 3, 1), (2, 3, 0, 4), (0, 0, 0, 0)] if rank == 4 else \
        [(2, 0, 3, 1, 2), (1, 2, 0, 3, 4)]
    for shape in shapes:
        res = []
        for lib in (torch, reftrace):
            fmt = lib.channels_last if rank == 4 else lib.channels_last_3d
            x = lib.empty(shape, memory_format=fmt)
            res.append((x.stride(), x.is_contiguous(memory_format=fmt), lib.empty_like(x).stride()))
        assert res[0] == res[1], shape


def test_unique_over_a_dim_is_a_moved_view():
    for shape, dim in [((2, 3), 0), ((2, 3), 1), ((2, 3), -1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 0, 4), 1)]:
        x = np.random.RandomState(0).randint(0, 2, shape).astype(np.float32)
        for fn in ("unique", "unique_consecutive"):
            t = getattr(torch, fn)(torch.from_numpy(x), dim=dim)
            r = getattr(reftrace, fn)(reftrace.from_numpy(x), dim=dim)
            assert (tuple(r.shape), r.stride()) == (tuple(t.shape), t.stride()), (fn, shape, dim)
            np.testing.assert_array_equal(r.numpy(), t.numpy())


def _outcome(fn):
    try:
        r = fn()
        return tuple(r.shape), r.stride()
    except Exception as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("a,b", [((3, 5, 5), (3, 5)), ((0, 5, 5), (0, 5)), ((5, 5), (5,)),
                                 ((2, 3, 5, 5), (3, 5)), ((3, 5, 5), (3, 5, 2)), ((2, 5, 5), (3, 5, 1))])
@pytest.mark.parametrize("left", [True, False])
def test_linalg_solve_layout_and_checks(a, b, left):
    rng = np.random.RandomState(0)
    A = (rng.randn(*a) + 5 * np.eye(a[-1])).astype(np.float32)
    B = rng.randn(*b).astype(np.float32)
    t = _outcome(lambda: torch.linalg.solve(torch.from_numpy(A), torch.from_numpy(B), left=left))
    r = _outcome(lambda: reftrace.linalg.solve(reftrace.from_numpy(A), reftrace.from_numpy(B), left=left))
    assert r == t


def _grad_fn_names(r):
    names, g = [], r.grad_fn
    while g is not None:
        names.append(type(g).__name__)
        g = g.next_functions[0][0] if g.next_functions else None
    return names


@pytest.mark.parametrize("shape,dim", [((2, 3, 2), (-1, 0)), ((2, 3, 2), (1, 2)), ((0, 0), (-2, -1)),
                                       ((2, 0, 0), (0, 1)), ((2, 0, 3), (1, 0)), ((3, 0), (0, 1))])
def test_matrix_norm_keepdim_views_and_empty_matrices(shape, dim):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) / 7 - 0.5
    for ord in (math_inf := float("inf"), -math_inf, 1, -1, 2, -2, "nuc", "fro"):
        for keepdim in (False, True):
            res = []
            for lib in (torch, reftrace):
                t = lib.tensor(x.tolist(), dtype=lib.float64).reshape(shape).requires_grad_()
                try:
                    r = lib.linalg.matrix_norm(t, ord, dim=dim, keepdim=keepdim)
                    res.append((tuple(r.shape), r.stride(), r.requires_grad, _grad_fn_names(r),
                                np.round(r.detach().numpy(), 10).tolist()))
                except Exception as e:
                    res.append((type(e).__name__, str(e)))
            assert res[0] == res[1], (ord, keepdim)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_small_bmm_and_addr_round_as_torch(dtype):
    rng = np.random.RandomState(0)
    for a, b in [((10,), (5, 5, 10, 5)), ((3, 4, 5), (3, 5, 6)), ((7,), (3, 7, 3))]:
        x, y = (rng.randn(*a) * 3).astype(dtype), (rng.randn(*b) * 3).astype(dtype)
        t = torch.matmul(torch.from_numpy(x), torch.from_numpy(y)).numpy()
        r = reftrace.matmul(reftrace.from_numpy(x), reftrace.from_numpy(y)).numpy()
        np.testing.assert_array_equal(r, t)
    for beta, alpha in ((1, 1), (0.6, 0.2), (0, 2)):
        s, v1, v2 = ((rng.randn(*sh) * 3).astype(dtype) for sh in ((5, 10), (5,), (10,)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = torch.addr(*map(torch.from_numpy, (s, v1, v2)), beta=beta, alpha=alpha).numpy()
            r = reftrace.addr(*map(reftrace.from_numpy, (s, v1, v2)), beta=beta, alpha=alpha).numpy()
        np.testing.assert_array_equal(r, t)


def test_clamp_with_scalar_limits_keeps_the_value_on_ties():
    """clamp with Scalar limits keeps the value on a tie with a limit, in torch's vector loop and
    its scalar tail: relu(-0.0) is -0.0 (NumPy's maximum gives +0.0); NaN propagates."""
    vals = [-0.0, 0.0, -1.0, float("nan"), 7.0, 6.0, -6.0] * 5  # 35: vector blocks and a tail
    cases = {
        "relu": lambda L, x: L.relu(x), "relu_": lambda L, x: x.clone().relu_(),
        "relu6": lambda L, x: L.nn.functional.relu6(x), "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
        "clamp_min": lambda L, x: x.clamp(min=0), "clamp": lambda L, x: x.clamp(-0.0, 6),
        "clamp_max": lambda L, x: x.clamp(max=0.0), "clamp_min_fn": lambda L, x: L.clamp_min(x, 0.0),
    }
    for name, fn in cases.items():
        res = [[str(v) for v in fn(L, L.tensor(vals)).tolist()] for L in (torch, reftrace)]
        assert res[0] == res[1], name


@pytest.mark.parametrize("kind,inp,w,kwargs", [
    ("conv2d", (0, 3, 4, 4), (5, 3, 2, 2), {}), ("conv2d", (2, 0, 4, 4), (4, 0, 2, 2), {"groups": 2}),
    ("conv2d", (0, 2, 4), (2, 0, 2, 2), {"padding": 1}), ("conv1d", (2, 0, 5), (3, 0, 2), {}),
    ("conv2d", (1, 0, 4, 4), (3, 0, 2, 2), {"stride": 2}), ("conv3d", (0, 2, 3, 3, 3), (4, 2, 2, 2, 2), {}),
    ("conv2d", (0, 3, 4, 4), (5, 3, 2, 2), {"padding": 1, "dilation": 2}),
    ("conv_transpose2d", (2, 0, 4, 4), (0, 5, 2, 2), {})])
def test_convolution_of_an_empty_input(kind, inp, w, kwargs):
    """ConvBackend::Empty: the output shape only; no input channels give no output channels
    (a known defect: reftrace crashed inside its kernel)."""
    res = []
    for L in (torch, reftrace):
        x = L.ones(inp, requires_grad=True)
        try:
            r = getattr(L.nn.functional, kind)(x, L.ones(w), **kwargs)
            r.sum().backward()
            res.append((tuple(r.shape), r.stride(), type(r.grad_fn).__name__, tuple(x.grad.shape)))
        except RuntimeError as e:
            res.append(str(e))
    assert res[0] == res[1]


def test_norm_nuc_is_matrix_norm():
    """torch.norm(p='nuc') calls linalg.matrix_norm (torch/functional.py): values and graph."""
    x = np.arange(24.0).reshape(2, 3, 4) / 7
    for kw in ({"p": "nuc", "dim": (0, 1)}, {"p": "nuc", "dim": [1, 2], "keepdim": True}):
        t = torch.norm(torch.from_numpy(x), **kw)
        r = reftrace.norm(reftrace.from_numpy(x), **kw)
        np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-12)
        assert (tuple(r.shape), r.stride()) == (tuple(t.shape), t.stride())
    graphs = [L.jit.trace(lambda v, L=L: L.norm(v, p="nuc", dim=(1, 2)), L.ones(2, 3, 4)).graph.str(False)
              for L in (torch, reftrace)]
    assert graphs[0] == graphs[1]
