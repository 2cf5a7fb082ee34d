"""repr(tensor) must be torch's string, character for character (torch/_tensor_str.py)."""
import math

import numpy as np
import pytest

from oracle import check, sample

F = float("inf")
NAN = float("nan")

ARRAYS = [
    np.array(1.5, np.float32), np.array(3, np.int64), np.array(True), np.array(-0.0, np.float32),
    np.array([1.0, 2.0, 3.0], np.float32), np.array([1, 2, 3], np.int32),
    np.array([1, -2, 300], np.int64), np.array([True, False]), np.array([1, 2], np.uint8),
    np.array([0.1, 2.5, -3.25], np.float32), np.array([0.1, 2.5], np.float64),
    np.array([1e-5, 1.0], np.float32), np.array([1e9, 1.0], np.float32),
    np.array([1.0, 1001.0], np.float32), np.array([1.0, 999.0], np.float32),
    np.array([NAN, F, -F, 0.0], np.float32), np.array([NAN, 1.0], np.float32),
    np.array([NAN, 1.5, -F], np.float64), np.array([0.0, -0.0], np.float32),
    np.array([100000.0, -2.0], np.float32), np.array([123456789.0], np.float64),
    np.array([1e-4, 1e-3], np.float32), np.array([1.5, 2.25], np.float16),
    np.array([1 + 2j, -3.5 - 0.5j], np.complex64), np.array([1 + 2j, 3 - 4j], np.complex128),
    np.array(2 - 1j, np.complex64), np.array([1e-6 + 1j], np.complex64),
    np.array([NAN + 1j, 1 - 0j], np.complex64),
    np.zeros((0,), np.float32), np.zeros((0, 3), np.float32), np.zeros((0,), np.int64),
    np.zeros((2, 0, 3), np.int32), np.zeros((0,), np.float64), np.zeros((0,), bool),
    np.arange(100, dtype=np.float32) / 7, np.arange(30, dtype=np.int64) * 1000,
    sample((3, 4)), sample((2, 3, 4)), sample((2, 2, 2, 2), "int64"), sample((4, 5), "float64"),
    sample((5, 3), "complex64"), sample((3, 3), "bool"), sample((40, 40)), sample((1001,)),
    np.arange(2000, dtype=np.int64).reshape(2, 10, 100), sample((10, 10, 11), "float64"),
    np.arange(1200, dtype=np.float32).reshape(30, 40) * 1e6,
]


@pytest.mark.parametrize("i", range(len(ARRAYS)))
def test_repr_matches_torch(i):
    check(lambda m, x: repr(x), ARRAYS[i])


def test_repr_str_and_views():
    pytest.importorskip("reftrace._indexing", reason="indexing and t() come from other op families")
    if not hasattr(__import__("reftrace").Tensor, "t"):
        pytest.skip("t() comes from the shape family")
    check(lambda m, x: str(x.t()), sample((3, 4)))
    check(lambda m, x: repr(x[1]), sample((3, 4), "int32"))


def test_repr_requires_grad_and_factories():
    check(lambda m: repr(m.zeros(2, 3, requires_grad=True)))
    check(lambda m: repr(m.ones(3, dtype=m.float64, requires_grad=True)))
    check(lambda m: repr(m.arange(10)))
    check(lambda m: repr(m.linspace(0, 1, 7)))
    check(lambda m: repr(m.eye(3, dtype=m.int8)))
    check(lambda m: repr(m.full((2, 50), 1.5, requires_grad=True)))  # suffix wraps to a new line


def test_repr_of_a_recorded_result_names_its_node():
    # torch shows grad_fn=<Node> instead of requires_grad=True for a non-leaf
    def body(m):
        x = m.tensor([0.3, -1.2], requires_grad=True)
        out = [x * 2, x[0], x.view(2, 1), m.special.ndtr(x), (x * 2).detach(), x.sum() + 1]
        y = m.full((2, 40), 1.5, requires_grad=True) * 2   # the suffix wraps to a new line
        return "\n".join(repr(t) for t in out + [y])
    check(body)


def test_repr_of_return_types_is_structseqs():
    # torch.return_types.* are PyStructSequences: "torch.return_types.max(\nvalues=...,\n...)"
    def body(m):
        x = m.tensor([[1.0, 5.0], [3.0, 2.0]])
        out = [x.max(0), m.sort(x, 1), m.linalg.slogdet(x), m.aminmax(x), x.mode(1)]
        r = out[0]
        return ("\n".join(repr(t) + "|" + str(t) for t in out),
                type(r).__name__, r.n_fields, tuple(r), r.values is r[0], type(r) is type(x.max(1)))
    check(body)


def test_repr_default_dtype_follows_set_default_dtype():
    def body(m):
        old = m.get_default_dtype()
        m.set_default_dtype(m.float64)
        try:
            return [repr(m.zeros(2)), repr(m.zeros(2, dtype=m.float32)),
                    repr(m.zeros(2, dtype=m.complex128)), repr(m.zeros(0))]
        finally:
            m.set_default_dtype(old)
    check(body)


@pytest.mark.parametrize("opts", [dict(precision=2), dict(threshold=5), dict(edgeitems=1, threshold=5),
                                  dict(linewidth=30), dict(sci_mode=True), dict(sci_mode=False),
                                  dict(profile="short"), dict(profile="full"), dict(edgeitems=0, threshold=3)])
def test_printoptions(opts):
    from reftrace import _tensor_str

    def body(m, x, y):
        setter = m.set_printoptions if hasattr(m, "set_printoptions") else _tensor_str.set_printoptions
        setter(**opts)
        try:
            return [repr(x), repr(y)]
        finally:
            setter(profile="default")
            setter(sci_mode=None)
    check(body, sample((20, 30)) * 100, np.arange(12, dtype=np.int64).reshape(3, 4))
