"""Composites of torch.linalg ported op for op from LinearAlgebra.cpp: their recorded gradient
graphs (node names), strides and error messages are torch's. matrix_power: n = 0 is a contiguous
clone overwritten with the identity (CopyBackwards), n = -1 is linalg_inv itself; multi_dot: the
result is viewed back (ViewBackward0), three matrices multiply left first on a cost tie, checks
come in torch's order with its TypeMeta names; vecdot of two 1-D tensors is vdot."""
import numpy as np
import pytest

import reftrace

torch = pytest.importorskip("torch")


def _node(y):
    return type(y.grad_fn).__name__ if y.grad_fn is not None else None


def _matrix_power(m, n, transposed):
    x = (m.arange(8.0, dtype=m.float64).reshape(2, 2, 2) / 10 + m.eye(2, dtype=m.float64)).requires_grad_()
    xi = x.transpose(-1, -2) if transposed else x
    y = m.linalg.matrix_power(xi, n)
    y.sum().backward()
    return _node(y), y.stride(), m.linalg.matrix_power(xi.detach(), n).stride(), \
        np.round(x.grad.numpy(), 10).tolist()


@pytest.mark.parametrize("n", [0, 1, -1, 2, 3, -3, 5, 6])
@pytest.mark.parametrize("transposed", [False, True])
def test_matrix_power_matches_torch(n, transposed):
    assert _matrix_power(reftrace, n, transposed) == _matrix_power(torch, n, transposed)


def _multi_dot(m):
    out = []
    ones = lambda *s, dt=None: m.ones(*s, dtype=dt or m.float32)  # noqa: E731
    for args in [(ones(3), ones(4, 5)), (ones(3, 4), ones(5)),
                 (ones(2, 3), ones(3, 4), ones(5, 6, dt=m.float64)),
                 (ones(2, 3), ones(4, 4, dt=m.float64), ones(4)), (ones(2, 2, 2), ones(2))]:
        try:
            m.linalg.multi_dot(list(args))
        except RuntimeError as e:
            out.append(str(e))
    x = [m.ones(2, 2, requires_grad=True) for _ in range(3)]
    for ts in [[x[0], x[1]], [x[0], x[1], x[2]], [x[0][0], x[1], x[2][:, 0]],
               [x[0], x[1], x[2], x[0]], [x[0][0], x[1][0]]]:
        y = m.linalg.multi_dot(ts)
        out.append((_node(y), [type(f[0]).__name__ for f in y.grad_fn.next_functions],
                    tuple(y.shape)))
    # a cost tie of three matrices: (a b) c
    a, b, c = (m.ones(*s, requires_grad=True) for s in ((2, 3), (3, 2), (2, 3)))
    inner = m.linalg.multi_dot([a, b, c]).grad_fn.next_functions[0][0]
    out.append([type(f[0]).__name__ for f in inner.next_functions])
    return out


def test_multi_dot_matches_torch():
    assert _multi_dot(reftrace) == _multi_dot(torch)


def test_vecdot_of_vectors_is_vdot():
    def run(m):
        x, y = m.arange(3.0, requires_grad=True), m.ones(3)
        z = m.linalg.vecdot(x, y)
        return _node(z), _node(m.linalg.vecdot(x[None], y[None])), z.item()
    assert run(reftrace) == run(torch)
