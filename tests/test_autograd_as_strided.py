"""as_strided's gradient (FunctionsManual's as_strided_backward) against torch: output views whose
elements share memory (stft's overlapping frames, unfold-like windows) accumulate their
gradients, an input whose geometry overlaps itself splits them, size-0/size-1/stride-0 output
dims, storage offsets, and the second-order gradient."""
import numpy as np
import pytest

import reftrace

torch = pytest.importorskip("torch")

CASES = [
    # (input shape, as_strided size, stride, offset)
    ((10,), (4, 4), (2, 1), 0),            # overlapping windows, hop 2
    ((10,), (3, 5), (1, 1), 1),            # heavy overlap and an offset
    ((2, 12), (2, 4, 6), (12, 2, 1), 0),   # batched frames as stft makes them
    ((1, 9), (1, 3, 3), (9, 3, 1), 0),     # size-1 dims (dropped before the scatter)
    ((6,), (3, 2), (0, 1), 2),             # a stride-0 (expanded) output dim: summed
    ((6,), (2, 0), (1, 1), 0),             # an empty output: zeros
    ((3, 4), (4, 3), (1, 4), 0),           # a transpose: no overlap, plain copy
]


def _run(mod, case, weights, create_graph=False):
    shape, size, stride, offset = case
    x = mod.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape) / 7 + 0.5,
                   requires_grad=True)
    y = x.as_strided(size, stride, offset)
    w = mod.tensor(weights)
    (g,) = mod.autograd.grad((y * w * y).sum(), [x], create_graph=create_graph)
    if not create_graph:
        return g.detach().numpy(), None
    (gg,) = mod.autograd.grad((g * g).sum(), [x])
    return g.detach().numpy(), gg.numpy()


@pytest.mark.parametrize("case", CASES, ids=[str(c[1:]) for c in CASES])
def test_as_strided_gradient_matches_torch(case):
    weights = np.linspace(-1.0, 2.0, int(np.prod(case[1]))).reshape(case[1])
    # an empty view's gradient is a plain zeros tensor (no graph to differentiate again)
    for create_graph in ((False, True) if weights.size else (False,)):
        got = _run(reftrace, case, weights, create_graph)
        want = _run(torch, case, weights, create_graph)
        for g, w in zip(got, want):
            if w is not None:
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_overlapping_input_geometry_splits_the_gradient():
    # the input of as_strided is an expanded view: each element is seen 3 times
    def run(mod):
        x = mod.tensor([1.0, 2.0, 3.0], dtype=mod.float64, requires_grad=True)
        e = x.unsqueeze(0).expand(3, 3)
        y = e.as_strided((2, 2), (1, 1), 0)
        y.backward(mod.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=mod.float64))
        return x.grad.numpy(), type(y.grad_fn).__name__
    got, want = run(reftrace), run(torch)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
