"""reftrace/ops/_layout_cache.py: the view kernels and TensorIterator's layout rules remember
their answers per layout, so a layout's second call (a hit) must give what its first (a miss)
gave, and what torch gives; errors and unkeepable arguments are never remembered."""
import numpy as np
import pytest

import reftrace
from reftrace.ops._layout_cache import remembered

torch = pytest.importorskip("torch")


def test_remembered_keeps_plain_answers_only():
    calls = []

    @remembered
    def f(shape, dim):
        calls.append((shape, dim))
        if dim < 0:
            raise RuntimeError(f"bad dim {dim}")
        return shape[dim]

    assert f((2, 3), 1) == f((2, 3), 1) == 3 and len(calls) == 1  # the second is a hit
    for _ in range(2):  # a raising call raises again, with its message: it was not kept
        with pytest.raises(RuntimeError, match="bad dim -1"):
            f((2, 3), -1)
    assert len(calls) == 3
    f([2, 3], 0), f((2, 3), np.int64(0))  # unhashable, not an int: computed ...
    f([2, 3], 0), f((2, 3), np.int64(0))  # ... each time
    assert len(calls) == 7
    assert list(f.cache) == [((2, 3), 1)]


def _layouts(m):
    base = m.tensor(np.arange(120.0).reshape(2, 3, 4, 5))
    return {"contiguous": base, "transposed": base.transpose(1, 3), "sliced": base[:, ::2, 1:],
            "expanded": base[:, :1].expand(2, 3, 4, 5), "permuted": base.permute(2, 0, 3, 1)}


OPS = {
    "view": lambda x: x.unsqueeze(0).view(x.shape[0], 1, *x.shape[1:]),
    "view merging": lambda x: x.contiguous().transpose(0, 1).view(x.shape[1], -1)
    if x.shape[0] == 1 else x.view(-1) if x.is_contiguous() else x[:1].view(x.shape[1:]),
    "reshape": lambda x: x.reshape(x.shape[0], -1),
    "unflatten": lambda x: x.unflatten(0, (1, -1)),
    "transpose": lambda x: x.transpose(-1, 1),
    "permute": lambda x: x.permute(3, 1, -2, 0),
    "expand": lambda x: x.unsqueeze(1).expand(-1, 3, -1, -1, -1),
    "squeeze.dim": lambda x: x[:, :1].squeeze(1),
    "unsqueeze": lambda x: x.unsqueeze(-2),
    "t": lambda x: x[0, 0].t(),
    "broadcast add": lambda x: x + x[:1, :, :1],
    "broadcast mul": lambda x: x[:, :1] * x,
    # split remembers its views' indices and strides; a same-shape binary op with a strided
    # operand remembers torch's output layout (and writes the ufunc's result straight into it)
    "split": lambda x: x.split(2, 1)[-1],
    "split last": lambda x: x.split(3, -1)[-1],
    "same-shape add": lambda x: x + x.contiguous(),
    "same-shape sub": lambda x: x.contiguous() - x.transpose(0, 1).transpose(0, 1),
    "same-shape mul": lambda x: x * x,
    "same-shape div float32": lambda x: x.float() / (x.float().contiguous() + 1),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded", "permuted"])
@pytest.mark.parametrize("op", list(OPS))
def test_second_call_matches_first_and_torch(layout, op):
    x, tx = _layouts(reftrace)[layout], _layouts(torch)[layout]
    want = OPS[op](tx)
    for _ in range(2):  # a miss, then a hit
        got = OPS[op](x)
        assert tuple(got.shape) == tuple(want.shape)
        assert got.stride() == want.stride()
        assert got._is_view() == want._is_view()
        np.testing.assert_array_equal(got.numpy(), want.numpy())
