"""matmul and friends against torch: every rank combination, layouts, dtypes, error texts."""
import numpy as np
import pytest

from oracle import check, sample

TOL = dict(atol=1e-4, rtol=1e-5)  # BLAS float32 summation order differs

SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
    ((2, 1, 3, 4), (5, 4, 2)), ((2, 1, 3, 4), (3, 4, 2)), ((1, 3), (3, 1)), ((0, 3), (3, 4)),
    ((2, 0), (0, 4)), ((2, 3), (0, 3, 4)), ((2, 3), (2, 3, 0)), ((4, 1, 2, 3), (3,)),
    ((3,), (2, 2, 3, 4)), ((1, 2, 3), (6, 3, 2)), ((3, 5, 0), (0, 4)), ((3, 5, 0), (0,)),
    # mismatches: each error comes from the op matmul dispatches to
    ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 5)), ((2, 3), (4, 5)), ((5, 2, 3), (4, 5)),
    ((5, 2, 3), (4,)), ((4,), (5, 2, 3)), ((5, 2, 3), (4, 3, 4)), ((2, 5, 2, 3), (4, 3, 4)),
    ((2, 3), (5, 4, 3)), ((), (3,)), ((2, 3), ()),
]


@pytest.mark.parametrize("a,b", SHAPES)
def test_matmul_shapes(a, b):
    check(lambda m, x, y: m.matmul(x, y), sample(a), sample(b, seed=1), **TOL)
    check(lambda m, x, y: x @ y, sample(a, "float64"), sample(b, "float64", seed=1))


LAYOUT_CASES = [
    lambda m, x, y: x.t() @ y,                                       # (3,2)^T @ (3,4)
    lambda m, x, y: x.t() @ y.t().t(),
    lambda m, x, y: x.reshape(2, 3, 1).transpose(0, 1).reshape(3, 2) @ x.reshape(2, 3),
    lambda m, x, y: m.matmul(x.reshape(1, 3, 2).transpose(1, 2), y[:2]),
    lambda m, x, y: m.matmul(x.reshape(1, 3, 2).transpose(0, 2), y[:1]),
    lambda m, x, y: m.matmul(y.reshape(3, 2, 2).transpose(0, 1), x[:, :2].t()),
    lambda m, x, y: m.matmul(y.reshape(3, 4, 1)[:, ::2], x[:1, :1]),
]


@pytest.mark.parametrize("i", range(len(LAYOUT_CASES)))
def test_matmul_strided_inputs(i):
    check(LAYOUT_CASES[i], sample((3, 2)), sample((3, 4), seed=1), **TOL)


def test_matmul_requires_grad_fold():
    check(lambda m, x, y: m.matmul(x, y.requires_grad_()), sample((5, 2, 3)), sample((3, 4), seed=1), **TOL)
    check(lambda m, x, y: m.matmul(x.requires_grad_(), y), sample((2, 3)), sample((5, 3, 4), seed=1), **TOL)
    check(lambda m, x, y: m.matmul(x.requires_grad_(), y), sample((2, 3)), sample((5, 4, 3), seed=1), **TOL)


@pytest.mark.parametrize("dt", ["float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                                "complex64", "complex128", "bool"])
def test_products_dtypes(dt):
    tol = dict(atol=1e-2, rtol=1e-2) if dt == "float16" else TOL
    a, b, v = sample((2, 3), dt), sample((3, 4), dt, seed=1), sample((3,), dt, seed=2)
    check(lambda m, x, y: x @ y, a, b, **tol)
    check(lambda m, x, y: m.mm(x, y), a, b, **tol)
    check(lambda m, x, y: x.mv(y), a, v, **tol)
    check(lambda m, x, y: x.dot(y), v, v, **tol)
    check(lambda m, x, y: m.bmm(x, y), sample((2, 2, 3), dt), sample((2, 3, 2), dt, seed=1), **tol)
    check(lambda m, x, y: x @ y, sample((2, 2, 3), dt), b, **tol)


def test_integer_overflow_wraps_like_torch():
    check(lambda m, x, y: x @ y, np.full((2, 3), 100, np.int8), np.full((3, 2), 100, np.int8))
    check(lambda m, x, y: x @ y, np.full((2, 3), 2 ** 62, np.int64), np.full((3, 2), 3, np.int64))


def test_dtype_mismatch_errors():
    f32, f64, i64 = sample((2, 3)), sample((3, 4), "float64"), sample((3, 4), "int64")
    check(lambda m, x, y: x @ y, f32, f64)
    check(lambda m, x, y: x.mm(y), f32, i64)
    check(lambda m, x, y: x.mm(y), sample((2, 3), "uint8"), sample((3, 2), "int8"))
    check(lambda m, x, y: x.mm(y), sample((2, 3), "float16"), sample((3, 2), "complex64"))
    check(lambda m, x, y: x.mm(y), sample((2, 3), "int16"), sample((3, 2), "complex128"))
    check(lambda m, x, y: x @ y, sample((5, 2, 3)), sample((3, 4), "float64"))
    check(lambda m, x, y: x @ y, sample((2, 3)), sample((5, 3, 4), "float64"))
    check(lambda m, x, y: x @ y, sample((3,)), sample((3, 4), "float64"))
    check(lambda m, x, y: x @ y, sample((5, 2, 3)), sample((3,), "float64"))
    check(lambda m, x, y: x @ y, sample((3,)), sample((3,), "float64"))
    check(lambda m, x, y: x.mv(y), sample((2, 3), "int64"), sample((3,)))
    check(lambda m, x, y: x.bmm(y), sample((5, 2, 3)), sample((5, 3, 2), "float64"))
    check(lambda m, x, y: x.mm(y), sample((2, 3)), sample((4, 5), "float64"))  # shape first


def test_rank_errors():
    check(lambda m, x, y: x.mm(y), sample((3,)), sample((3, 5)))
    check(lambda m, x, y: x.mm(y), sample((2, 3)), sample((3,)))
    check(lambda m, x, y: x.bmm(y), sample((2, 3)), sample((5, 3, 2)))
    check(lambda m, x, y: x.bmm(y), sample((5, 2, 3)), sample((3, 2)))
    check(lambda m, x, y: x.bmm(y), sample((5, 2, 3)), sample((4, 3, 2)))
    check(lambda m, x, y: x.mv(y), sample((2, 3)), sample((3, 1)))
    check(lambda m, x, y: x.mv(y), sample((3,)), sample((3,)))
    check(lambda m, x, y: x.dot(y), sample((3, 1)), sample((3, 1)))


def test_addmm():
    check(lambda m, s, a, b: m.addmm(s, a, b), sample((3,)), sample((2, 4)), sample((4, 3)), **TOL)
    check(lambda m, s, a, b: m.addmm(s, a, b), sample((2, 1)), sample((2, 4)), sample((4, 3)), **TOL)
    check(lambda m, s, a, b: m.addmm(s, a, b), sample((2, 3)), sample((2, 4)), sample((4, 3)), **TOL)
    check(lambda m, s, a, b: s.addmm(a, b, beta=0.5, alpha=2), sample((2, 3)), sample((2, 4)),
          sample((4, 3)), **TOL)
    check(lambda m, s, a, b: m.addmm(s, a, b, beta=0), np.full((2, 3), np.nan, np.float32),
          sample((2, 4)), sample((4, 3)), **TOL)
    check(lambda m, s, a, b: m.addmm(s, a, b, alpha=1.5), np.ones((2, 3), np.int64),
          np.ones((2, 4), np.int64), np.ones((4, 3), np.int64))
    check(lambda m, s, a, b: m.addmm(s, a, b, alpha=2, beta=3), sample((2, 3), "int64"),
          sample((2, 4), "int64"), sample((4, 3), "int64"))
    check(lambda m, s, a, b: m.addmm(s, a, b, beta=0.5), np.ones((2, 3), np.int64),
          np.ones((2, 4), np.int64), np.ones((4, 3), np.int64))
    check(lambda m, s, a, b: m.addmm(s, a, b), sample((2, 3)).T.copy(), sample((3, 4)), sample((4, 2)), **TOL)
    check(lambda m, s, a, b: m.addmm(s.requires_grad_(), a, b), sample((3,)), sample((2, 4)), sample((4, 3)), **TOL)


def test_addmm_errors():
    check(lambda m, s, a, b: m.addmm(s, a, b), sample((5,)), sample((2, 4)), sample((4, 3)))
    check(lambda m, s, a, b: m.addmm(s, a, b), sample((2, 3)), sample((2, 4)), sample((5, 3)))
    check(lambda m, s, a, b: m.addmm(s, a, b), sample((2, 3)), sample((4,)), sample((4, 3)))
    check(lambda m, s, a, b: m.addmm(s, a, b), sample((2, 3), "float64"), sample((2, 4)), sample((4, 3)))
    check(lambda m, s, a, b: m.addmm(s, a, b), sample((2, 3)), sample((2, 4), "float64"), sample((4, 3)))


def lin(m, *args):
    """F.linear (reftrace's nn.functional is another family's: fall back to the op itself)."""
    from reftrace.ops import get_packet
    try:
        return m.nn.functional.linear(*args)
    except AttributeError:
        return get_packet("linear")(*args)


LINEAR_CASES = [
    ((2, 3), (4, 3), (4,)), ((2, 3), (4, 3), None), ((3,), (4, 3), (4,)), ((3,), (3,), None),
    ((2, 7, 3), (4, 3), (4,)), ((2, 7, 3), (4, 3), None), ((2, 2, 7, 3), (4, 3), (4,)),
    ((2, 3), (4, 3), (2, 4)), ((2, 3), (4, 3), ()), ((2, 7, 0), (4, 0), (4,)), ((2, 7, 3), (0, 3), (0,)),
    ((2, 3), (4, 5), None), ((2, 3), (4, 3), (5,)), ((2, 7, 3), (4, 3), (5,)), ((2, 3), (2, 4, 3), None),
]


@pytest.mark.parametrize("x,w,b", LINEAR_CASES)
def test_linear(x, w, b):
    args = [sample(x), sample(w, seed=1)] + ([sample(b, seed=2)] if b is not None else [])
    check(lin, *args, **TOL)


def test_linear_transposed_input_and_dtype_errors():
    check(lambda m, x, w, b: lin(m, x.transpose(0, 1), w, b), sample((2, 7, 3)), sample((4, 3)),
          sample((4,)), **TOL)
    check(lambda m, x, w, b: lin(m, x, w, b), sample((2, 3)), sample((4, 3)), sample((4,), "float64"))
    check(lambda m, x, w, b: lin(m, x, w, b), sample((2, 5, 3)), sample((4, 3)), sample((4,), "float64"))
    check(lambda m, x, w, b: lin(m, x, w, b), sample((2, 5, 3)).transpose(1, 0, 2).copy(),
          sample((4, 3)), sample((4,), "float64"))
    check(lambda m, x, w, b: lin(m, x.transpose(0, 1), w, b), sample((2, 5, 3)), sample((4, 3)),
          sample((4,), "float64"))


def test_outer_ger_diag():
    check(lambda m, x, y: m.outer(x, y), sample((3,)), sample((4,), seed=1))
    check(lambda m, x, y: x.outer(y), sample((3,)), sample((4,), "float64", seed=1))
    check(lambda m, x, y: m.ger(x, y), sample((3,), "int64"), sample((4,), seed=1))
    check(lambda m, x, y: m.outer(x, y), sample((3, 1)), sample((4,), seed=1))
    check(lambda m, x, y: m.outer(x, y), sample((3,)), sample((4, 1), seed=1))
    for k in (0, 1, -2, 5, -5):
        check(lambda m, x: m.diag(x, k), sample((3,)))
        check(lambda m, x: x.diag(k), sample((3, 4), "int32"))
    check(lambda m, x: m.diag(x.t()), sample((3, 4)))
    check(lambda m, x: m.diag(x), sample((2, 3, 4)))
    check(lambda m, x: m.diag(x), sample(()))
    check(lambda m, x: m.diag(x, diagonal=1), sample((0,), "bool"))


def test_inverse():
    rng = np.random.default_rng(0)
    well = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
    batch = (rng.standard_normal((2, 4, 4)) + 4 * np.eye(4)).astype(np.float64)
    check(lambda m, x: m.inverse(x), well, **TOL)
    check(lambda m, x: x.inverse(), batch)
    check(lambda m, x: m.inverse(x.t()), well, **TOL)
    check(lambda m, x: m.inverse(x), well.astype(np.complex64), **TOL)
    check(lambda m, x: m.inverse(x), np.zeros((0, 3, 3), np.float32))
    check(lambda m, x: m.inverse(x), np.zeros((0, 0), np.float32))
    check(lambda m, x: m.inverse(x.requires_grad_()), well, **TOL)


@pytest.mark.parametrize("arr", [
    np.ones((3, 3), np.float32), np.zeros((3, 3), np.float32), np.array([[1.0, 2], [2, 4]], np.float32),
    np.array([[1.0, 1, 1], [1, 1, 1], [0, 0, 1]], np.float64), np.stack([np.eye(3), np.ones((3, 3))]),
    np.zeros((2, 3), np.float32), np.zeros((3,), np.float32), np.ones((3, 3), np.int64),
    np.ones((3, 3), np.float16), np.array([[0.0, 1], [1, 0]], np.float32),
])
def test_inverse_errors(arr):
    check(lambda m, x: m.inverse(x), arr)


def T(*shape, dtype="float32"):
    return ("tensor", shape, dtype)


TRACE_CASES = {
    "matmul": ("return x @ y, torch.matmul(x, y), x.mm(y)", (T(2, 3), T(3, 4))),
    "bmm_addmm": ("return x.bmm(y), torch.addmm(y[0, 0], x[0], y[0])", (T(2, 3, 3), T(2, 3, 3))),
    "dot_outer_diag": ("return x.dot(y), torch.outer(x, y), torch.diag(x, 1)", (T(3), T(3))),
    "mv": ("return x.mv(y)", (T(3, 3), T(3))),
    # torch.jit.trace's NormalizeOps pass renames aliases: inverse -> linalg_inv, ger -> outer
    "inverse": ("return x.inverse(), x + 1", (T(3, 3),)),
    "ger": ("return torch.ger(x, y), x + 1", (T(3), T(3))),
}


@pytest.mark.parametrize("name", sorted(TRACE_CASES))
def test_traced_graph(name):
    from test_ops_creation import assert_trace_matches
    body, spec = TRACE_CASES[name]
    args = ", ".join("xyzw"[i] for i in range(len(spec)))
    assert_trace_matches(f"def fn({args}):\n    {body}\n", spec)


@pytest.mark.parametrize("batch", [(2,), (3, 2), ()])
def test_bilinear(batch):
    a, b = sample(batch + (3,)), sample(batch + (4,), seed=1)
    w, c = sample((5, 3, 4), seed=2), sample((5,), seed=3)
    check(lambda m, a, b, w, c: m.nn.functional.bilinear(a, b, w, c), a, b, w, c, atol=1e-5)
    check(lambda m, a, b, w: m.nn.functional.bilinear(a, b, w), a, b, w, atol=1e-5)
