"""Activations and softmax against torch 2.13: values, dtypes, layouts, in-place aliasing, errors.

Most of these ops live in torch's ``nn`` module (``torch._C._nn.gelu``); reftrace registers them
without a Python function, so the tests reach them through the op table on the reftrace side.
"""
import math

import numpy as np
import pytest

from oracle import check, requires_torch, sample, torch
from reftrace.ops import activation, get_packet

ALL_DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64"]


def nn(m, name):
    """torch._C._nn.<name> or the reftrace op of that name."""
    if m is torch:
        return getattr(torch._C._nn, name, None) or getattr(torch, name)
    return get_packet(name)


def fortran(m, a):
    return m.from_numpy(np.asfortranarray(a))


def special(dtype="float32"):
    """Values that exercise the branches: signs, zero, large magnitudes, inf, NaN."""
    return np.array([[-30, -5, -1.5, -0.25, 0], [0.25, 1.5, 5, 30, np.inf],
                     [-np.inf, np.nan, 1e-3, -1e-3, 20]], dtype)


CALLS = {
    "relu": lambda f, x: f(x),
    "relu6": lambda f, x: f(x),
    "hardtanh": lambda f, x: f(x, -0.5, 2),
    "threshold": lambda f, x: f(x, 0.5, -2),
    "leaky_relu": lambda f, x: f(x, 0.2),
    "elu": lambda f, x: f(x, 1.5, 2, 0.5),
    "gelu": lambda f, x: f(x),
    "gelu_tanh": lambda f, x: f(x, approximate="tanh"),
    "silu": lambda f, x: f(x),
    "softplus": lambda f, x: f(x, 2, 3),
}


def _op(name):
    return "gelu" if name == "gelu_tanh" else name


@pytest.mark.parametrize("dt", ALL_DTYPES)
@pytest.mark.parametrize("name", CALLS)
def test_activation_dtypes(name, dt):
    a = sample((3, 4), dt, low=-4, high=4)
    call = CALLS[name]
    check(lambda m, x: call(nn(m, _op(name)), x), a)
    if name != "softplus":  # torch has no softplus_
        check(lambda m, x: call(nn(m, _op(name) + "_"), x), a)  # in-place: returns and mutates x


@pytest.mark.parametrize("name", CALLS)
def test_activation_special_values_and_layouts(name):
    call = CALLS[name]
    f = lambda m: nn(m, _op(name))  # noqa: E731
    for dt in ("float32", "float64"):
        a = special(dt)
        if name == "gelu" and dt == "float32":
            # torch's vectorized float32 GELU gives NaN for +inf (its scalar tail gives inf)
            a[a == np.inf] = 7
        check(lambda m, x: call(f(m), x), a)
    check(lambda m: call(f(m), fortran(m, sample((3, 4, 2)))))          # keeps the input's layout
    if name != "softplus":
        check(lambda m: call(nn(m, _op(name) + "_"), fortran(m, sample((3, 4)))))
    check(lambda m, x: call(f(m), x), np.array(-1.5, np.float32))        # 0-dim
    check(lambda m, x: call(f(m), x), np.zeros((0, 3), np.float32))      # empty


def test_activation_float16_precision():
    # torch computes half in float32 and rounds once; so does reftrace
    a = np.linspace(-6, 6, 241).astype(np.float16)
    for name, call in CALLS.items():
        check(lambda m, x: call(nn(m, _op(name)), x), a)


def test_relu_methods_and_integer_limits():
    check(lambda m, x: (x.relu(), m.relu(x)), sample((2, 3), "int32"))
    check(lambda m, x: x.relu_(), sample((2, 3), "int8"))
    check(lambda m, x: m.relu_(x), sample((2, 3)))
    # integral inputs truncate the limits; uint8 rejects negative (truncated) limits
    check(lambda m, x: nn(m, "hardtanh")(x, -1.5, 2.5), sample((2, 5), "int64"))
    check(lambda m, x: nn(m, "hardtanh")(x, -0.5, 2.5), sample((2, 5), "uint8"))
    check(lambda m, x: nn(m, "hardtanh")(x, 2, 1), sample((2, 5)))  # min > max: all max
    check(lambda m, x: m.threshold(x, 1, 5.5), sample((2, 5), "int64"))
    check(lambda m, x: m.threshold(x, -1, 300), sample((2, 5), "uint8"))  # overflow error
    check(lambda m, x: m.threshold(x, -1, 255), sample((2, 5), "uint8"))
    check(lambda m, x: m.threshold_(x, 0.5, 9), sample((2, 5)))


def test_gelu_bad_approximate():
    check(lambda m, x: nn(m, "gelu")(x, approximate="foo"), sample((2,)))


@requires_torch
def test_erf_matches_torch_in_float64():
    x = np.concatenate([np.linspace(-8, 8, 40001), [0.0, -0.0, 1e-300, 1.0, 6.0, np.inf, -np.inf]])
    got = activation._erf(x)
    want = torch.erf(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=4e-16, atol=4e-16)
    assert np.isnan(activation._erf(np.array([np.nan]))[0])
    assert math.copysign(1, activation._erf(np.array([-0.0]))[0]) == -1


class GeneralPath(np.ndarray):
    """An ndarray subclass: gelu's float32/float64 fast path (plain ndarrays only) steps aside for
    it, so the general path computes the same call."""


def test_gelu_fast_path_matches_general_path():
    # awkward values (signed zeros, NaNs with payloads, infinities, erf's segment ends, overflow
    # to inf in float32) in several layouts: the fast paths give the general path's bits
    import reftrace
    rng = np.random.default_rng(0)
    odd = np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-310, 1e300, -1e300, 1.0, -1.0,
                    6.0, -6.0, 0.125, 5.9999, 3e38, -3e38])
    payload = np.array([0x7FF8000000001234, 0xFFF4000000000001], np.uint64).view(np.float64)
    a = np.concatenate([odd, payload, rng.standard_normal(308) * 3,
                        np.round(rng.standard_normal(57) * 8) / 8]).reshape(6, 2, 32)
    for dt in ("float32", "float64"):
        with np.errstate(all="ignore"):
            base = reftrace.from_numpy(a.astype(dt))
        for x in (base, base.transpose(0, 2), base[:, :, ::3], base.reshape(384)[:5]):
            general = x.detach()  # (the same memory and layout: a NaN's sign may follow them)
            general._array = x._array.view(GeneralPath)
            for approximate in ("none", "tanh"):
                ours, theirs = (activation.gelu.kernel(t, approximate) for t in (x, general))
                assert ours._array.tobytes() == np.asarray(theirs._array).tobytes()
                assert ours.stride() == theirs.stride()


# -- softmax --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ALL_DTYPES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_dtypes(name, dt):
    a = sample((3, 4), dt)
    check(lambda m, x: getattr(m, name)(x, 1), a)   # int input: lastdim kernel's error
    check(lambda m, x: getattr(x, name)(0), a)      # int input: the other kernel's error
    check(lambda m, x: getattr(x, name)(-1, dtype=m.float64), a)
    check(lambda m, x: getattr(m, "_" + name)(x, 0, False), a)
    check(lambda m, x: getattr(m, "_" + name)(x, 0, True), a)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_shapes(name):
    f = lambda x, *a, **k: getattr(x, name)(*a, **k)  # noqa: E731
    for dim in (0, 1, 2, -1, -3):
        check(lambda m, x: f(x, dim), sample((2, 3, 4)))
    check(lambda m, x: f(x, 3), sample((2, 3, 4)))
    check(lambda m, x: (f(x, 0), f(x, -1)), np.array(2.0, np.float32))
    check(lambda m, x: f(x, 1), np.array(2.0, np.float32))
    check(lambda m, x: f(x, 0), np.zeros((0, 3), np.float32))
    check(lambda m, x: f(x, 0), np.zeros((0, 3), np.int64))  # empty: no kernel, no dtype error
    check(lambda m, x: f(x, 1), special())
    check(lambda m, x: f(x, 0), np.array([[1000, -1000], [1001, -1001]], np.float32))
    check(lambda m: f(fortran(m, sample((3, 4, 5))), 1))  # results are contiguous
    check(lambda m, x: f(x, 0), np.linspace(-5, 5, 64).astype(np.float16))


@pytest.mark.parametrize("view", [lambda x: x.t(), lambda x: x[:, ::2], lambda x: x[::2].t()])
def test_activations_of_views(view):
    a = sample((4, 6), low=-4, high=4)
    for name, call in CALLS.items():
        check(lambda m, x: call(nn(m, _op(name)), view(x)), a)
        if name != "softplus":  # in place through a view: the base sees it
            check(lambda m, x: (call(nn(m, _op(name) + "_"), view(x)), x)[1], a)
    for name in ("softmax", "log_softmax"):
        check(lambda m, x: (getattr(view(x), name)(0), getattr(view(x), name)(1)), a)


def _nans(dt):
    """NaNs of both signs, quiet and signalling, with payloads (relu keeps their bits)."""
    info = np.finfo(dt)
    bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[info.bits // 8]
    exp, quiet, sign = ((1 << info.nexp) - 1) << info.nmant, 1 << (info.nmant - 1), 1 << (info.bits - 1)
    return np.array([exp | quiet | 5, exp | 3, sign | exp | quiet | 9, sign | exp | 1], bits).view(dt)


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int8", "int32", "int64", "uint8"])
@pytest.mark.parametrize("n", [16, 4095, 4096, 70000])
@pytest.mark.parametrize("probe", ["as found", "maximum refused"])
def test_relu_bits(dt, n, probe, monkeypatch):
    # relu of a contiguous tensor takes maximum(0, x) (small 1-d float32/float64, where the probe
    # _maximum_is_relu allows it), copy+putmask (small), a bit mask (from 4,096 elements) or
    # maximum (integers): the same bits as torch's, signed zeros and NaN payloads included
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    import reftrace
    from reftrace.ops import activation
    if probe == "maximum refused":  # what a machine whose maximum is not relu takes
        monkeypatch.setattr(activation, "_MAXIMUM_ZEROS", {reftrace.float32: None, reftrace.float64: None})
    a = sample((n,), dt, low=-100, high=100, seed=n)
    if a.dtype.kind == "f":
        a[:6] = np.array([-0.0, np.nan, -np.nan, 0.0, -np.inf, np.inf]).astype(dt)
        if dt != "float16":  # (torch's vectorized half loop widens to float: quiets sNaNs)
            a[6:10] = _nans(dt)
    for shape in [(n,)] + ([(2, n // 2)] if n % 2 == 0 else []):
        x = a.reshape(shape)
        ours = reftrace.from_numpy(x.copy()).relu()
        theirs = torch.from_numpy(x.copy()).relu()
        assert ours.numpy().tobytes() == theirs.numpy().tobytes()
        assert ours.stride() == theirs.stride() and str(ours.dtype) == str(theirs.dtype)
