"""Ops reached mostly through Python-level functions (F.elu(inplace=True), F.pad modes, softmax's
internals ...), called here directly by their ATen names, so every registered op is checked
against the oracle on its own: torch.ops.aten.<name> vs reftrace's op table."""
import numpy as np
import pytest

import reftrace
from oracle import check, sample


def aten(m, name):
    """The op ``name`` of library m: torch.ops.aten.<name>, or reftrace's packet."""
    if m is reftrace:
        return reftrace.ops.get_packet(name)
    return getattr(m.ops.aten, name)


CASES = {
    "_softmax": (lambda m, x: aten(m, "_softmax")(x, 1, False), [(3, 4)]),
    "_log_softmax": (lambda m, x: aten(m, "_log_softmax")(x, 0, False), [(3, 4)]),
    "_to_copy": (lambda m, x: aten(m, "_to_copy")(x, dtype=m.float64), [(3, 4)]),
    "elu_": (lambda m, x: aten(m, "elu_")(x, 1.0, 1, 1), [(3, 4)]),
    "gelu_": (lambda m, x: aten(m, "gelu_")(x, approximate="tanh"), [(3, 4)]),
    "hardtanh_": (lambda m, x: aten(m, "hardtanh_")(x, -0.5, 0.5), [(3, 4)]),
    "leaky_relu_": (lambda m, x: aten(m, "leaky_relu_")(x, 0.2), [(3, 4)]),
    "relu6_": (lambda m, x: aten(m, "relu6_")(x), [(3, 4)]),
    "silu_": (lambda m, x: aten(m, "silu_")(x), [(3, 4)]),
    "lift_fresh": (lambda m, x: aten(m, "lift_fresh")(x), [(3, 4)]),
    "reflection_pad1d": (lambda m, x: aten(m, "reflection_pad1d")(x, [2, 1]), [(2, 3, 5)]),
    "reflection_pad3d": (lambda m, x: aten(m, "reflection_pad3d")(x, [1, 1, 1, 0, 0, 1]), [(1, 2, 3, 3, 3)]),
    "replication_pad2d": (lambda m, x: aten(m, "replication_pad2d")(x, [1, 2, 0, 1]), [(1, 2, 3, 4)]),
    "replication_pad3d": (lambda m, x: aten(m, "replication_pad3d")(x, [1, 0, 0, 1, 1, 1]), [(1, 1, 2, 3, 3)]),
    "embedding_renorm_": (lambda m, w, i: (aten(m, "embedding_renorm_")(w, i, 1.0, 2.0), w)[1],
                          [(5, 3), np.array([0, 2, 2], dtype=np.int64)]),
    "nll_loss2d": (lambda m, x, t: aten(m, "nll_loss2d")(x, t, None, 1, -100),
                   [(2, 3, 4, 4), np.array([[[0, 1, 2, 1]] * 4] * 2, dtype=np.int64)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_directly(name):
    fn, specs = CASES[name]
    args = [s if isinstance(s, np.ndarray) else sample(s) for s in specs]
    check(fn, *args, atol=1e-5)


def test_isclose_allclose():
    a, b = sample((3, 4)), sample((3, 4), seed=1)
    check(lambda m, a, b: (m.isclose(a, a + 1e-9), m.allclose(a, b), a.allclose(a + 1e-7)), a, b)
    nan = np.array([1.0, np.nan], dtype=np.float32)
    check(lambda m, x: (m.isclose(x, x), m.isclose(x, x, equal_nan=True)), nan)
    check(lambda m, a: m.isclose(a, a.double()), a)  # torch refuses mixed dtypes
    check(lambda m, x: m.isclose(x, x + 1), sample((3,), "int64"))


def test_data_setter_rebinds_storage():
    def fn(m, x, y):
        old = x.data
        x.data = y
        return x, x.data_ptr() == y.data_ptr(), tuple(old.shape)
    check(fn, sample((3,)), sample((2, 2), seed=1))
