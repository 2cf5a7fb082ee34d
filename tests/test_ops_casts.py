"""to / type / float() ..., clone, detach, copy_, fill_, zero_ against torch (aliasing included)."""
import warnings

import numpy as np
import pytest

from oracle import check, sample

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]
SPECIAL = np.array([1.5, -1.5, 300.0, -300.0, float("nan"), float("inf"), -float("inf"), 1e20, -0.0,
                    2.5, -2.5, 255.9, 127.5, 1e10], np.float32)


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_to_dtype_all_pairs(src, dst):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real warns (checked below)
        check(lambda m, x: x.to(getattr(m, dst)), sample((2, 3), src))


@pytest.mark.parametrize("dst", ["int64", "int32", "int16", "int8", "uint8", "bool", "float16"])
@pytest.mark.parametrize("src", ["float32", "float64"])
def test_out_of_range_float_casts(src, dst):
    check(lambda m, x: x.to(getattr(m, dst)), SPECIAL.astype(src))


def test_int_wraparound_casts():
    big = np.array([2 ** 40 + 5, -(2 ** 31) - 7, 300, -1, 65535], np.int64)
    for dst in ["int32", "int16", "int8", "uint8", "float16", "float32", "bool"]:
        check(lambda m, x: x.to(getattr(m, dst)), big)


def test_to_aliases_when_nothing_changes():
    x = sample((2, 3))
    check(lambda m, x: x.to(m.float32), x)  # the oracle checks that the result aliases input 0
    check(lambda m, x: x.to("cpu"), x)
    check(lambda m, x: x.to(x), x)
    check(lambda m, x: x.to(), x)
    check(lambda m, x: x.to(None), x)
    check(lambda m, x: x.to(copy=True), x)
    check(lambda m, x: x.to("cpu", copy=True), x)
    check(lambda m, x: x.to(m.float32, copy=True), x)
    check(lambda m, x: x.float(), x)
    check(lambda m, x: x.cpu(), x)
    check(lambda m, x: x.type_as(x), x)
    check(lambda m, x: [x.to(m.float32) is x, x.float() is x, x.to() is x, x.to(copy=True) is x], x)


def test_to_forms():
    check(lambda m, x, y: x.to(y), sample((2, 3)), sample((1,), "int32"))
    check(lambda m, x: x.to(device="cpu", dtype=m.float64), sample((2, 3)))
    check(lambda m, x: x.to(dtype=m.int8), sample((2, 3)))
    check(lambda m, x: x.to("cpu", m.float64), sample((2, 3)))
    check(lambda m, x: x.to(m.device("cpu"), m.int64, False, True), sample((2, 3)))
    check(lambda m, x: x.to(m.float64, non_blocking=True), sample((2, 3)))
    check(lambda m, x: x.to(float), sample((2, 3)))
    check(lambda m, x: x.to(int), sample((2, 3)))
    check(lambda m, x: x.to(bool), sample((2, 3)))
    check(lambda m, x: x.to("cuda"), sample((2, 3)))
    check(lambda m, x: x.cuda(), sample((2, 3)))
    check(lambda m, x: x.to(m.float64, m.float32), sample((2, 3)))  # torch's parser message


def test_to_keeps_requires_grad_rule():
    check(lambda m, x: x.requires_grad_().to(m.float64), sample((2,)))
    check(lambda m, x: x.requires_grad_().to(m.int64), sample((2,)))
    check(lambda m, x: x.requires_grad_().float(), sample((2,)))


@pytest.mark.parametrize("name", ["float", "double", "half", "long", "int", "short", "char", "byte",
                                  "bool", "cfloat", "cdouble"])
def test_cast_methods(name):
    check(lambda m, x: getattr(x, name)(), sample((2, 3), "float64"))
    check(lambda m, x: getattr(x, name)(), sample((3,), "int32"))


def test_type():
    for dt in DTYPES:
        check(lambda m, x: x.type(), sample((2,), dt))
    check(lambda m, x: x.type(m.int32), sample((2, 3)))
    check(lambda m, x: x.type("torch.IntTensor"), sample((2, 3)))
    check(lambda m, x: x.type("torch.DoubleTensor"), sample((2, 3), "int64"))
    check(lambda m, x: x.type("torch.FloatTensor"), sample((2, 3)))
    check(lambda m, x: x.type("foo"), sample((2, 3)))
    check(lambda m, x: x.type(5), sample((2, 3)))
    check(lambda m, x: x.type(int), sample((2, 3)))


def test_complex_to_real_warns_once_like_torch():
    import reftrace
    from reftrace.ops import casts
    casts._complex_warned[0] = False
    x = reftrace.from_numpy(np.array([1 + 2j], np.complex64))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = x.to(reftrace.float32)
        x.to(reftrace.float64)
    assert y._array.tolist() == [1.0]
    assert [str(r.message) for r in w] == ["Casting complex values to real discards the imaginary part"]


LAYOUTS = {
    "contiguous": lambda x: x,
    "t": lambda x: x.t(),
    "sliced_t": lambda x: x[:, ::2].t(),
    "expanded": lambda x: x[None].expand(2, 4, 6),
    "size1_t": lambda x: x[:1].t(),
    "nchw_perm": lambda x: x.reshape(1, 2, 3, 4).permute(0, 2, 3, 1),
    "nchw_perm_sliced": lambda x: x.reshape(2, 3, 2, 2)[:, :, ::2].permute(0, 2, 3, 1),
}


def _needs_views():
    import reftrace
    for name in ("t", "expand", "permute", "reshape"):
        if not hasattr(reftrace.Tensor, name):
            pytest.skip(f"{name} comes from the shape family")
    try:
        import reftrace._indexing  # noqa: F401
    except ImportError:
        pytest.skip("indexing comes from another family")


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_clone_and_copies_preserve_layout(layout):
    _needs_views()
    f = LAYOUTS[layout]
    x = sample((4, 6))
    check(lambda m, x: f(x).clone(), x)
    check(lambda m, x: f(x).clone(memory_format=m.contiguous_format), x)
    check(lambda m, x: f(x).to(m.float64), x)
    check(lambda m, x: f(x).to(m.int32), x)
    check(lambda m, x: m.zeros_like(f(x)), x)
    check(lambda m, x: m.full_like(f(x), 2, dtype=m.int8), x)
    check(lambda m, x: m.empty_like(f(x)).stride(), x)
    check(lambda m, x: f(x).to(memory_format=m.contiguous_format), x)


def test_channels_last():
    _needs_views()
    check(lambda m, x: x.reshape(2, 3, 2, 2).to(memory_format=m.channels_last), sample((4, 6)))
    check(lambda m, x: x.reshape(2, 3, 2, 2).clone(memory_format=m.channels_last), sample((4, 6)))
    check(lambda m, x: x.clone(memory_format=m.channels_last), sample((4, 6)))
    check(lambda m, x: x.reshape(1, 2, 3, 4).permute(0, 2, 3, 1)
          .to(memory_format=m.channels_last), sample((4, 6)))


def test_clone_basic():
    check(lambda m, x: x.clone(), sample((2, 3)))
    check(lambda m, x: m.clone(x), sample((2, 3), "int64"))
    check(lambda m, x: x.requires_grad_().clone(), sample((2, 3)))
    check(lambda m, x: x.clone(), sample((), "float64"))


def test_detach():
    check(lambda m, x: x.detach(), sample((2, 3)))
    check(lambda m, x: x.requires_grad_().detach(), sample((2, 3)))
    check(lambda m, x: m.detach(x.requires_grad_()), sample((2, 3)))
    check(lambda m, x: x.requires_grad_().detach_(), sample((2, 3)))
    check(lambda m, x: x.detach().detach_(), sample((2, 3)))
    check(lambda m, x: m.detach_(x), sample((2, 3)))


def test_detach_of_a_view_is_refused():
    _needs_views()
    check(lambda m, x: x[:1].detach_(), sample((2, 3)))
    check(lambda m, x: x.t().detach_(), sample((2, 3)))


def test_copy_():
    check(lambda m, x, y: x.copy_(y), sample((2, 3)), sample((2, 3), "float64", seed=1))
    check(lambda m, x, y: x.copy_(y), sample((2, 3), "int32"), sample((2, 3), seed=1))
    check(lambda m, x, y: x.copy_(y), sample((2, 3)), sample((3,), seed=1))
    check(lambda m, x, y: x.copy_(y), sample((2, 3)), sample((), seed=1))
    check(lambda m, x, y: x.copy_(y), sample((2, 3), "bool"), sample((2, 3), seed=1))
    check(lambda m, x, y: x.copy_(y), sample((3,)), sample((2,), seed=1))
    check(lambda m, x, y: x.copy_(y), sample((3,)), sample((2, 3), seed=1))
    check(lambda m, x: x.copy_(2.5), sample((3,)))
    check(lambda m, x: x.copy_(7), sample((3,), "int64"))
    check(lambda m, x, y: x.copy_(y, non_blocking=True), sample((3,)), sample((3,), seed=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, x, y: x.copy_(y), sample((2,)), sample((2,), "complex64", seed=1))


def test_copy_through_views():
    _needs_views()
    check(lambda m, x, y: (x.t().copy_(y), x)[1], sample((2, 3)), sample((3, 2), seed=1))
    check(lambda m, x, y: (x[:, 1].copy_(y), x)[1], sample((2, 3)), sample((2,), "int64", seed=1))
    check(lambda m, x: x.copy_(x.t()), sample((3, 3)))  # partial overlap: refused
    check(lambda m, x: x.copy_(x), sample((3, 3)))
    check(lambda m, x: x[1:].copy_(x[:-1]), sample((4,)))
    check(lambda m, x: (x[:2].copy_(x[2:]), x)[1], sample((4,)))


def test_fill_and_zero():
    check(lambda m, x: x.fill_(2), sample((2, 3)))
    check(lambda m, x: x.fill_(2.7), sample((2, 3), "int64"))
    check(lambda m, x: x.fill_(-1), sample((3,), "uint8"))
    check(lambda m, x: x.fill_(2), sample((3,), "bool"))
    check(lambda m, x: x.fill_(1 + 2j), sample((3,), "complex64"))
    check(lambda m, x: x.fill_(float("nan")), sample((3,)))
    check(lambda m, x: m.fill_(x, 3), sample((3,)))
    check(lambda m, x: x.fill_(m.tensor(2.5)), sample((3,), "int64"))
    check(lambda m, x: x.fill_(m.tensor(2.5)), sample((3,)))
    check(lambda m, x: x.zero_(), sample((2, 3)))
    check(lambda m, x: m.zero_(x), sample((2, 3), "int32"))


@pytest.mark.parametrize("call", [
    lambda m, x: x.fill_(300), lambda m, x: x.fill_(float("nan")), lambda m, x: x.fill_(1e300),
    lambda m, x: x.fill_(1 + 1j), lambda m, x: x.fill_(m.ones(2)), lambda m, x: x.fill_(-256),
])
@pytest.mark.parametrize("dtype", ["uint8", "int64", "float32"])
def test_fill_errors(call, dtype):
    check(call, sample((3,), dtype))


def test_fill_through_view():
    _needs_views()
    check(lambda m, x: (x[:, 1].fill_(9), x)[1], sample((2, 3)))
    check(lambda m, x: (x.t()[0].zero_(), x)[1], sample((2, 3)))


def T(*shape, dtype="float32"):
    return ("tensor", shape, dtype)


TRACE_CASES = {
    "to_dtype": ("return x.to(torch.float64)", (T(2, 3),)),
    "to_device_alias": ("return x.to('cpu') + 1", (T(2, 3),)),
    "to_other": ("return x.to(y)", (T(2, 3), T(1, dtype="float64"))),
    "to_device_dtype": ("return x.to(device='cpu', dtype=torch.float64)", (T(2, 3),)),
    "to_dtype_kw": ("return x.to(dtype=torch.int32)", (T(2, 3),)),
    "to_copy": ("return x.to(copy=True)", (T(2, 3),)),
    "to_nothing": ("return x.to() + 1", (T(2, 3),)),
    "float_alias": ("return x.float() + 1", (T(2, 3),)),
    "long": ("return x.long()", (T(2, 3),)),
    "cpu": ("return x.cpu() + 1", (T(2, 3),)),
    "type_dtype": ("return x.type(torch.float64)", (T(2, 3),)),
    "type_str": ("return x.type('torch.DoubleTensor')", (T(2, 3),)),
    "type_as": ("return x.type_as(y)", (T(2, 3), T(2, dtype="float64"))),
    "clone": ("return x.clone()", (T(2, 3),)),
    "clone_format": ("return x.clone(memory_format=torch.contiguous_format)", (T(2, 3),)),
    "detach": ("return x.detach()", (T(2, 3),)),
    "fill_scalar": ("return x.clone().fill_(2)", (T(2, 3),)),
    "fill_tensor": ("return x.clone().fill_(y)", (T(2, 3), T())),
    "copy_": ("return x.clone().copy_(y)", (T(2, 3), T(3, dtype="float64"))),
    "zero_": ("return x.clone().zero_()", (T(2, 3),)),
}


@pytest.mark.parametrize("name", sorted(TRACE_CASES))
def test_traced_graph(name):
    from test_ops_creation import assert_trace_matches
    body, spec = TRACE_CASES[name]
    args = ", ".join("xyzw"[i] for i in range(len(spec)))
    assert_trace_matches(f"def fn({args}):\n    {body}\n", spec)
