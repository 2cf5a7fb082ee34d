"""hash_tensor and its uint64 result against torch: the bits each dtype contributes, dims and
keepdim, empty inputs, errors; uint64's barebones promotion; the traced graph."""
import numpy as np
import pytest

from oracle import check, sample

DTYPES = ["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": [0, 2]}, {"dim": -1, "keepdim": True},
                                {"dim": [], "keepdim": True}, {"dim": [2, 0, 1]}])
def test_hash_tensor_values(dt, kw):
    check(lambda m, x: m.hash_tensor(x, **kw), sample((3, 4, 5), dt, low=-100, high=100))


@pytest.mark.parametrize("dt", ["float64", "float32", "float16"])
def test_hash_tensor_special_floats(dt):
    x = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-5, 65504], dt)
    check(lambda m, x: m.hash_tensor(x), x)
    check(lambda m, x: m.hash_tensor(x[:, None], dim=0), x)


def test_hash_tensor_layouts_and_method():
    x = sample((3, 4, 5), "float32")
    check(lambda m, x: m.hash_tensor(x.mT, dim=1, keepdim=True), x)
    check(lambda m, x: x[:, ::2].hash_tensor(0), x)
    check(lambda m, x: m.hash_tensor(x[0, 0, 0]), x)
    check(lambda m, x: m.hash_tensor(x[0, 0, 0], dim=[-1]), x)


@pytest.mark.parametrize("fn", [
    lambda m: m.hash_tensor(m.zeros(0)),
    lambda m: m.hash_tensor(m.zeros(2, 0), dim=1),
    lambda m: m.hash_tensor(m.zeros(2, 0), dim=0),
    lambda m: m.hash_tensor(m.zeros(2, 0), dim=0, keepdim=True),
    lambda m: m.hash_tensor(m.zeros(2, 0, dtype=m.complex64), dim=0),
    lambda m: m.hash_tensor(m.zeros(2, 0), dim=0, mode=3),
    lambda m: m.hash_tensor(m.ones(2), mode=1),
    lambda m: m.hash_tensor(m.ones(2), dim=5),
    lambda m: m.hash_tensor(m.ones(2), dim=[0, 0]),
    lambda m: m.hash_tensor(m.tensor(5.), dim=1),
    lambda m: m.hash_tensor(m.ones(2, dtype=m.complex64)),
    lambda m: m.hash_tensor(m.ones(2, requires_grad=True)).requires_grad,
])
def test_hash_tensor_edges(fn):
    check(lambda m: fn(m))


@pytest.mark.parametrize("other", ["bool", "uint8", "int64", "float16", "float64", "complex64",
                                   "uint64"])
def test_uint64_promotion(other):
    check(lambda m: (m.promote_types(m.uint64, getattr(m, other)),
                     m.promote_types(getattr(m, other), m.uint64)))


def test_uint64_tensor_basics():
    def fn(m):
        h = m.hash_tensor(m.tensor([1., 2., 3.]))
        return (h.item(), h.tolist(), h.to(m.int64), h.float(), h == h, m.result_type(h, 1),
                h.dtype.is_signed, h.dtype.itemsize, m.zeros(2, dtype=m.uint64), repr(h))
    check(fn)


def test_hash_tensor_traced_graph():
    torch = pytest.importorskip("torch")
    import reftrace

    def graph(m):
        return str(m.jit.trace(lambda x: m.hash_tensor(x, dim=[0], keepdim=True) == 0,
                               m.ones(3, 2)).graph)
    assert graph(reftrace).replace("reftrace", "torch") == graph(torch)


@pytest.mark.parametrize("dt", ["uint64", "int64", "float32"])
def test_hash_tensor_out(dt):
    """hash_tensor.out refuses an out tensor that is not uint64 (its meta function's check)."""
    def fn(m, x):
        out = m.empty(0, dtype=getattr(m, dt))
        r = m.hash_tensor(x, dim=1, out=out)
        return r, out, r is out
    check(fn, sample((3, 4), "float32"))
    check(lambda m: m.hash_tensor(m.zeros(0), out=m.empty(0, dtype=getattr(m, dt))))
