"""In-place ops through views as_strided cannot redo (view_as_real, real/imag, conj, _neg_view):
torch replays the view ops from the base (ViewInfo::chain's view_func) in CopySlices and when it
regenerates the view's grad_fn; reftrace/autograd/_view_func.py. Expected values: live torch."""
import numpy as np
import pytest

import reftrace

torch = pytest.importorskip("torch")


def _z(m):
    return m.tensor(np.arange(12.).reshape(3, 4) * (1 + 0.5j) - 2j, requires_grad=True)


PROGRAMS = {
    "real of diagonal": lambda m, b: m.real(b.diagonal()).mul_(0.5),
    "imag of a column": lambda m, b: m.imag(b[:, 1]).mul_(3),
    "imag of a conj view": lambda m, b: m.imag(b.conj()[1:]).mul_(-2),
    "conj view": lambda m, b: b.conj()[0, 2:].mul_(1j + 2),
    "view_as_real then select": lambda m, b: m.view_as_real(b)[..., 1].mul_(2),
    "view_as_real of a slice": lambda m, b: m.view_as_real(b[1:, ::2]).mul_(b.real[1:, ::2, None].clone()),
    "view_as_complex of view_as_real": lambda m, b: m.view_as_complex(m.view_as_real(b.T)).mul_(2 - 1j),
}


def _run(m, name):
    a = _z(m)
    b = a * (2 - 1j)
    view = PROGRAMS[name](m, b)
    names = (type(b.grad_fn).__name__, type(view.grad_fn).__name__)
    w = m.tensor(np.linspace(-1, 1, 12).reshape(3, 4) * (0.5 + 1j))
    (g,) = m.autograd.grad(m.real((b * b * w).sum()), a, create_graph=True)
    (gg,) = m.autograd.grad(m.real((g * w).sum()), a)
    return names, g.detach().numpy(), gg.numpy()


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_inplace_through_metadata_views_matches_torch(name):
    got, want = _run(reftrace, name), _run(torch, name)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])


def test_as_strided_of_a_real_view_reads_the_real_storage():
    for fn in (lambda m, x: m.view_as_real(x).as_strided([2], [3], 1),
               lambda m, x: m.view_as_real(x[1]).as_strided([3], [2], 1),
               lambda m, x: x.imag.as_strided([2, 2], [8, 2], 3)):
        want = fn(torch, torch.tensor(np.arange(12.).reshape(3, 4) * (1 + 0.5j)))
        got = fn(reftrace, reftrace.tensor(np.arange(12.).reshape(3, 4) * (1 + 0.5j)))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert got.stride() == want.stride() and got.storage_offset() == want.storage_offset()


def _sibling(m):
    a = m.tensor(np.arange(12.).reshape(3, 4), requires_grad=True)
    b = a * 2
    d = b.diagonal()   # made before the in-place op through another view of b
    b[:, 1].mul_(3)
    c = b.T            # made after it
    (g,) = m.autograd.grad((d * d).sum() + c[0].sum(), a)
    return type(d.grad_fn).__name__, type(c.grad_fn).__name__, g.numpy()


def test_a_view_made_before_an_inplace_op_on_its_base_sees_the_new_history():
    """torch regenerates such a view's grad_fn as AsStridedBackward0 of the base's new history
    (its gradient then includes the in-place op), where reftrace kept the stale one."""
    got, want = _sibling(reftrace), _sibling(torch)
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])


def _multi_output_errors(m):
    out = []
    for where in ("view", "base"):
        a = m.tensor(np.arange(12.).reshape(3, 4), requires_grad=True)
        b = a * 2
        p, q = b.unbind(1)[:2] if where == "view" else b.split(2)
        try:
            if where == "view":
                p.mul_(2)
            else:
                b.mul_(3)
                p.grad_fn
            out.append(None)
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_outputs_of_a_multi_view_op_are_not_modified_in_place():
    """torch's CreationMeta::MULTI_OUTPUT_NODE: an in-place op on such a view, or reading its
    grad_fn after its base changed, raises (reftrace gave wrong gradients instead)."""
    assert _multi_output_errors(reftrace) == _multi_output_errors(torch)
