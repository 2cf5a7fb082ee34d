"""reshape's recorded node follows TensorShape.cpp's reshape_symint: a contiguous input is viewed
(ViewBackward0), a non-contiguous one that computeStride can still view is aliased
(_reshape_alias: ReshapeAliasBackward0), anything else is a contiguous copy
(UnsafeViewBackward0). Checked against torch with the strides and the gradient."""
import numpy as np
import pytest

import reftrace

torch = pytest.importorskip("torch")

CASES = {
    "contiguous": lambda x: x.reshape(4, 3),
    "transposed, same dims": lambda x: x.t().reshape(4, 3),
    "transposed, split": lambda x: x.t().reshape(2, 2, 3),
    "transposed, merged (copy)": lambda x: x.t().reshape(12),
    "sliced": lambda x: x[:, :2].reshape(3, 2, 1),
    "expanded (copy)": lambda x: x[:1].expand(2, 4).reshape(8),
    "flatten of a transpose": lambda x: x.t().flatten(),
    "new leading 1": lambda x: x.t().reshape(1, 4, 3),
    "-1": lambda x: x[:, 1:3].reshape(-1, 2),
}


def _run(m, case):
    x = m.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    y = CASES[case](x)
    w = m.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
    (y * w).sum().backward()
    return type(y.grad_fn).__name__, tuple(y.shape), y.stride(), x.grad.numpy().tolist()


@pytest.mark.parametrize("case", list(CASES))
def test_reshape_node_matches_torch(case):
    assert _run(reftrace, case) == _run(torch, case)
