"""einsum, _trilinear and bilinear (reftrace/ops/linear_einsum.py: ATen's Linear.cpp) against
torch 2.13: forward values bit for bit, views, strides and dtypes; the whole grad_fn graph (the
sumproduct_pair decomposition's nodes, TrilinearBackward0); first- and second-order gradients;
traced code; error texts."""
import numpy as np
import pytest

import reftrace
from autograd_oracle import compare_grads
from oracle import check, sample

torch = pytest.importorskip("torch")

EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(3, 2, 5), (3, 5, 4)]),
    ("ii->i", [(3, 3)]), ("ii", [(4, 4)]), ("ij->ji", [(2, 3)]), ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("i,i->", [(7,), (7,)]),
    ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 6)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("...ik,...j->ij", [(1, 2, 3), (3,)]), ("iji->j", [(2, 3, 2)]), ("abc,cd->dba", [(2, 3, 4), (4, 5)]),
    ("ij,kj->ki", [(2, 3), (5, 3)]), ("i,j,k->", [(2,), (3,), (4,)]), ("a,b", [(1,), (3,)]),
    ("ab,ab->", [(0, 3), (0, 3)]), ("ab,bc->ac", [(2, 0), (0, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 5, 8), (2, 2, 6, 8)]),
]
IDS = [e for e, _ in EQUATIONS]


def _graph(t):
    """The grad_fn names reachable from t, breadth first."""
    names, seen, queue = [], set(), [t.grad_fn]
    while queue:
        fn = queue.pop(0)
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        names.append(type(fn).__name__)
        queue.extend(f for f, _ in fn.next_functions)
    return names


def _arrays(shapes, dtype, seed=0):
    return [sample(s, dtype, seed=seed + i) for i, s in enumerate(shapes)]


def _exact(rt, th):
    assert str(rt.dtype) == str(th.dtype) and tuple(rt.shape) == tuple(th.shape)
    assert tuple(rt.stride()) == tuple(th.stride())
    assert np.array_equal(rt.numpy(), th.numpy(), equal_nan=True)


@pytest.mark.parametrize("eq,shapes", EQUATIONS, ids=IDS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32"])
def test_einsum_forward_is_torchs_bit_for_bit(eq, shapes, dtype):
    arrays = _arrays(shapes, dtype)
    _exact(reftrace.einsum(eq, *[reftrace.from_numpy(a.copy()) for a in arrays]),
           torch.einsum(eq, *[torch.from_numpy(a.copy()) for a in arrays]))


@pytest.mark.parametrize("eq,shapes", [("ij->ji", [(2, 3)]), ("ii->i", [(3, 3)]),
                                       ("bij->jbi", [(2, 3, 4)])])
def test_einsum_of_one_operand_without_contraction_is_a_view(eq, shapes):
    # (oracle.check compares which input's storage each output shares)
    check(lambda m, x: m.einsum(eq, x), *_arrays(shapes, "float32"))


def test_einsum_contraction_path():
    a, b, c = _arrays([(2, 3, 4), (2, 4, 5), (2, 5, 6)], "float32")
    for path in ([1, 2, 0, 1], [0, 2, 0, 1]):
        _exact(reftrace.ops.aten.einsum("ijk,ikl,ilm->ijm",
                                        [reftrace.from_numpy(x.copy()) for x in (a, b, c)], path=path),
               torch.ops.aten.einsum("ijk,ikl,ilm->ijm",
                                     [torch.from_numpy(x.copy()) for x in (a, b, c)], path=path))


@pytest.mark.parametrize("eq,shapes", EQUATIONS, ids=IDS)
def test_einsum_graph_and_gradients(eq, shapes):
    inputs = [torch.from_numpy(a).requires_grad_() for a in _arrays(shapes, "float64")]
    graphs = []

    def program(m, *xs):
        out = m.einsum(eq, *xs)
        graphs.append(_graph(out))
        return out
    compare_grads(program, inputs)
    assert graphs[1] == graphs[0]


@pytest.mark.parametrize("eq,n", [("ij,jk->ik", 3), ("ij,jk->ik", 1), ("i.j->", 1),
                                  ("i...j...->", 1), ("ij->ii", 1), ("ij->k", 1), ("i", 1),
                                  ("ij,jk->ik", 2), ("i j->i", 1), ("ii->i", 1), ("i1->i", 1),
                                  ("ij,j->i", 2), ("...ij,...j->i", 2)])
def test_einsum_errors(eq, n):
    shapes = {("ij,jk->ik", 2): [(2, 3), (4, 5)], ("ii->i", 1): [(2, 3)],
              ("ij,j->i", 2): [(2, 3), (2,)], ("...ij,...j->i", 2): [(4, 2, 3), (5, 3)]}
    args = _arrays(shapes.get((eq, n), [(2, 3)] * n), "float32")
    check(lambda m, *xs: m.einsum(eq, *xs), *args)


@pytest.mark.parametrize("d1,d2", [("bool", "float32"), ("float32", "bool"), ("bool", "bool"),
                                   ("int32", "int64"), ("float16", "float32")])
def test_bmm_dtype_errors_follow_its_kernel(d1, d2):
    # self's dtype is dispatched on first (Bool: not implemented), then mat2's is compared
    check(lambda m, a, b: m.bmm(a, b), sample((1, 2, 3), d1), sample((1, 3, 2), d2, seed=1))


@pytest.mark.parametrize("s1,s2", [((1, 2, 0), (1, 0, 2)), ((0, 2, 3), (0, 3, 2))])
def test_bmm_empty_returns_before_the_dtype_check(s1, s2):
    check(lambda m, a, b: m.bmm(a, b), sample(s1, "bool"), sample(s2, "float32", seed=1))


# -- bilinear, _trilinear ---------------------------------------------------------------------------

BILINEAR = [((4, 3), (4, 5), True), ((2, 4, 3), (2, 4, 5), True), ((3,), (5,), False),
            ((0, 3), (0, 5), True)]


@pytest.mark.parametrize("s1,s2,bias", BILINEAR)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bilinear_forward_is_torchs_bit_for_bit(s1, s2, bias, dtype):
    args = [sample(s1, dtype), sample(s2, dtype, seed=1), sample((6, 3, 5), dtype, seed=2)]
    args += [sample((6,), dtype, seed=3)] if bias else []
    _exact(reftrace.nn.functional.bilinear(*[reftrace.from_numpy(a.copy()) for a in args]),
           torch.nn.functional.bilinear(*[torch.from_numpy(a.copy()) for a in args]))


def _layouts(m, arrays):
    """Non-contiguous views of arrays: input1 read every other row, weight transposed in
    storage, input2 a transposed view (the layouts decide reshape's copies and BLAS's paths)."""
    a, b, w = arrays
    x1 = m.from_numpy(np.repeat(a, 2, axis=0)).narrow(0, 0, 2 * a.shape[0])[::2]
    wt = m.from_numpy(np.ascontiguousarray(w.transpose(2, 1, 0))).permute(2, 1, 0)
    x2 = m.from_numpy(np.ascontiguousarray(b.T)).t()
    return x1, x2, wt


STRIDED = [(4, 3, 5, 6), (32, 16, 16, 8), (7, 1, 9, 2), (3, 20, 20, 1)]


@pytest.mark.parametrize("n,i1,i2,o", STRIDED[::2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bilinear_of_strided_inputs_is_torchs_bit_for_bit(n, i1, i2, o, dtype):
    arrays = [sample((n, i1), dtype), sample((n, i2), dtype, seed=1), sample((o, i1, i2), dtype, seed=2)]
    _exact(reftrace.nn.functional.bilinear(*_layouts(reftrace, arrays)),
           torch.nn.functional.bilinear(*_layouts(torch, arrays)))


@pytest.mark.parametrize("n,i1,i2,o", STRIDED)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("strided", [False, True])
def test_trilinear_array_loop_gives_the_op_loops_bits(n, i1, i2, o, dtype, strided, monkeypatch):
    """_trilinear's loop on NumPy arrays (large and small bmm cases) gives the bits of the loop
    of tensor ops it stands for; its in-kernel add_s bump no version (torch's neither)."""
    from reftrace.ops import linear_einsum
    arrays = [sample((n, i1), dtype), sample((n, i2), dtype, seed=1), sample((o, i1, i2), dtype, seed=2)]
    x1, x2, w = (_layouts(reftrace, arrays) if strided
                 else [reftrace.from_numpy(a) for a in arrays])
    outs = [reftrace._trilinear(x1, w, x2, [1, 3], [0], [1, 2], [2, 3])]
    monkeypatch.setattr(linear_einsum, "_unrolled_on_arrays", lambda *args: False)
    outs.append(reftrace._trilinear(x1, w, x2, [1, 3], [0], [1, 2], [2, 3]))
    _exact(outs[0], outs[1])
    assert outs[0]._version == outs[1]._version == 0


def test_trilinear_with_every_input_expanded_at_unroll_dim():
    """unroll_dim of size 0 (every input lacks it): no slice, an empty result."""
    args = [sample((3, 4), "float64", seed=i) for i in range(3)]
    _exact(reftrace._trilinear(*[reftrace.from_numpy(a) for a in args], [1], [1], [1], [0, 2], 1),
           torch._trilinear(*[torch.from_numpy(a) for a in args], [1], [1], [1], [0, 2], 1))


@pytest.mark.parametrize("s1,s2,bias", BILINEAR)
def test_bilinear_graph_and_gradients(s1, s2, bias):
    args = [sample(s1, "float64"), sample(s2, "float64", seed=1), sample((6, 3, 5), "float64", seed=2)]
    args += [sample((6,), "float64", seed=3)] if bias else []
    inputs = [torch.from_numpy(a).requires_grad_() for a in args]
    graphs = []

    def program(m, *xs):
        out = m.nn.functional.bilinear(*xs)
        graphs.append(_graph(out))
        return out
    compare_grads(program, inputs)
    assert graphs[1] == graphs[0]


def test_trilinear_double_backward_graph():
    """Each gradient of _trilinear is a _trilinear (TrilinearBackward0 again); a gradient that
    the output's gradient alone determines has no edge to it (torch: (None, 0))."""
    args = [sample((4, 3), "float64"), sample((6, 3, 5), "float64", seed=1), sample((4, 5), "float64", seed=2)]
    names = []
    for m in (torch, reftrace):
        xs = [m.from_numpy(a.copy()).requires_grad_() for a in args]
        out = m._trilinear(xs[0], xs[1], xs[2], [1, 3], [0], [1, 2], [2, 3])
        grads = m.autograd.grad(out, xs, m.ones_like(out), create_graph=True)
        names.append([(_graph(g), [f is None for f, _ in g.grad_fn.next_functions]) for g in grads])
    assert names[1] == names[0]


def test_trilinear_saves_an_input_only_for_the_others_gradients():
    """wrap_opt_if: i1 is saved for i2's and i3's gradients only, so changing it in place after
    the call breaks only those."""
    outcomes = []
    for m in (torch, reftrace):
        row = []
        for which in (0, 1):
            xs = [m.ones(2, 3, dtype=m.float64), m.ones(5, 3, 4, dtype=m.float64), m.ones(2, 4, dtype=m.float64)]
            xs[which].requires_grad_()
            i1 = xs[0] * 1 if which == 0 else xs[0]
            out = m._trilinear(i1, xs[1], xs[2], [1, 3], [0], [1, 2], [2, 3])
            with m.no_grad():
                i1.add_(1)
            try:
                out.sum().backward()
                row.append("ok")
            except RuntimeError as e:
                row.append(str(e).split(";")[0][:60])
        outcomes.append(row)
    assert outcomes[1] == outcomes[0]


def test_bilinear_traces_as_one_op():
    args = [sample((4, 3)), sample((4, 5), seed=1), sample((6, 3, 5), seed=2), sample((6,), seed=3)]
    codes = []
    for m in (torch, reftrace):
        def fn(a, b, w, bias):
            return m.nn.functional.bilinear(a, b, w, bias)
        codes.append(m.jit.trace(fn, tuple(m.from_numpy(a.copy()) for a in args)).code)
    assert codes[1] == codes[0]


@pytest.mark.parametrize("case", range(6))
def test_bilinear_and_trilinear_errors(case):
    f32, f64 = "float32", "float64"
    a, b, w = sample((4, 3)), sample((4, 5), seed=1), sample((6, 3, 5), seed=2)
    calls = [
        (lambda m, a, b, w: m.nn.functional.bilinear(a, b, w), (a.astype(f64), b, w)),
        (lambda m, a, b, w: m.nn.functional.bilinear(a, b, w), (a[None], b, w)),
        (lambda m, a, b, w: m.nn.functional.bilinear(a, b, w), (a[:3], b, w)),
        (lambda m, a, b, w: m.nn.functional.bilinear(a, b, w), (a, b[:, :4], w)),
        (lambda m, a, b, w: m._trilinear(a, w, b, [1, 3, 3], [0], [1, 2], [2, 3]), (a, b, w)),
        (lambda m, a, b, w: m._trilinear(a, w, b, [1, 3], [0], [1, 2], [2, 3], 7), (a, b, w.astype(f32))),
    ]
    fn, args = calls[case]
    check(fn, *args)
