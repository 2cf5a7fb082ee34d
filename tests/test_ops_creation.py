"""Factories against torch: values, dtype inference, strides, requires_grad=, errors."""
import numpy as np
import pytest

from oracle import check, sample

FACTORY_CALLS = [
    lambda m: m.zeros(2, 3), lambda m: m.zeros((2, 3)), lambda m: m.zeros([2, 3]),
    lambda m: m.zeros(m.Size([2, 3])), lambda m: m.zeros(()), lambda m: m.zeros(5),
    lambda m: m.zeros(2, 0, 3), lambda m: m.zeros(2, dtype=m.int32), lambda m: m.zeros(2, dtype=float),
    lambda m: m.zeros(2, dtype=m.bool), lambda m: m.zeros(size=(2, 2)),
    lambda m: m.ones(2, 3), lambda m: m.ones((4,), dtype=m.complex64), lambda m: m.ones(3, dtype=m.uint8),
    lambda m: m.full((2, 3), 1.5), lambda m: m.full((2,), 2), lambda m: m.full((2,), True),
    lambda m: m.full((2,), 1 + 2j), lambda m: m.full((2,), 1.5, dtype=m.int64),
    lambda m: m.full((2,), -1, dtype=m.uint8), lambda m: m.full((3,), float("nan")),
    lambda m: m.full((2,), 1e309, dtype=m.float16), lambda m: m.full((2,), 1j, dtype=m.bool),
    lambda m: m.full([], 7), lambda m: m.full(size=(1, 2), fill_value=3.0),
    lambda m: m.eye(3), lambda m: m.eye(3, 4), lambda m: m.eye(4, 2, dtype=m.int64), lambda m: m.eye(0),
    lambda m: m.eye(n=2, m=3), lambda m: m.eye(2, dtype=m.bool),
    lambda m: m.scalar_tensor(3), lambda m: m.scalar_tensor(True), lambda m: m.scalar_tensor(2.5, dtype=m.float64),
    lambda m: m.scalar_tensor(7, dtype=m.int32),
    lambda m: m.empty(2, 3).shape, lambda m: m.empty(2, 3, dtype=m.int8).dtype,
    lambda m: m.empty(1, 2, 3, 4, memory_format=m.channels_last).stride(),
    lambda m: m.empty(0, 3).stride(), lambda m: m.empty_strided((2, 3), (1, 2)).stride(),
]

ERROR_CALLS = [
    lambda m: m.zeros(-1), lambda m: m.zeros(2, -3), lambda m: m.ones(-1), lambda m: m.full((-1,), 2),
    lambda m: m.empty(-2), lambda m: m.full((2,), 300, dtype=m.uint8), lambda m: m.full((2,), 300, dtype=m.int8),
    lambda m: m.full((2,), float("nan"), dtype=m.int64), lambda m: m.full((2,), 1e10, dtype=m.int32),
    lambda m: m.full((2,), 1e5, dtype=m.float16), lambda m: m.full((2,), 2 ** 63),
    lambda m: m.full((2,), 1j, dtype=m.int64), lambda m: m.full((2,), 1e300, dtype=m.float32),
    lambda m: m.zeros(2, dtype=m.long, requires_grad=True), lambda m: m.eye(-1), lambda m: m.eye(2, -1),
    lambda m: m.scalar_tensor(1 + 1j), lambda m: m.empty(2, 3, memory_format=m.channels_last),
    lambda m: m.empty(1, 2, 3, 4, memory_format=m.preserve_format),
]


@pytest.mark.parametrize("i", range(len(FACTORY_CALLS)))
def test_factories(i):
    check(FACTORY_CALLS[i], check_values=i < len(FACTORY_CALLS) - 5)


@pytest.mark.parametrize("i", range(len(ERROR_CALLS)))
def test_factory_errors(i):
    check(ERROR_CALLS[i])


def test_requires_grad_and_default_dtype():
    check(lambda m: m.zeros(2, requires_grad=True))
    check(lambda m: m.full((2,), 1.0, requires_grad=True) * 2)
    check(lambda m: m.arange(3.0, requires_grad=True))

    def under_double(m):
        old = m.get_default_dtype()
        m.set_default_dtype(m.float64)
        try:
            return [m.zeros(2), m.full((1,), 1.5), m.arange(1.0), m.linspace(0, 1, 3), m.eye(2),
                    m.full((1,), 1j), m.scalar_tensor(1)]
        finally:
            m.set_default_dtype(old)
    check(under_double)


ARANGE_CALLS = [
    (5,), (1, 5), (1, 5, 2), (0, 1, 0.25), (0, 1, 0.3), (-5, 5, 3), (10, 0, -3), (0, 1, 0.1),
    (True,), (5.0,), (0, 10, 3), (2 ** 53 + 1, 2 ** 53 + 4), (0, -1, -0.1), (1.5, 7), (0, 0),
    (-3.7, 2.2, 0.9),
]


@pytest.mark.parametrize("args", ARANGE_CALLS)
def test_arange(args):
    check(lambda m: m.arange(*args))


@pytest.mark.parametrize("args,dtype", [
    ((0.5, 5), "int64"), ((1, 2.5, 0.5), "int32"), ((0, 10, 3), "float16"), ((0.0, 10.0, 3.0), "uint8"),
    ((0, 5, 1.5), "int64"), ((0.5, 4.7, 1.1), "int64"), ((-0.5, 4.7, 1.5), "int64"), ((0, 1, 0.25), "float64"),
    ((0, 5, 0.5), "int64"), ((10,), "int8"), ((0, 2, 0.5), "complex64"), ((2,), "bool"),
])
def test_arange_dtype(args, dtype):
    check(lambda m: m.arange(*args, dtype=getattr(m, dtype)))


@pytest.mark.parametrize("args", [(0, 5, 0), (5, 0), (float("inf"),), (1e20,), (0, 5, -1.0),
                                  (0, 5, 1 + 1j), (float("nan"),)])
def test_arange_errors(args):
    check(lambda m: m.arange(*args))


def test_arange_keywords():
    check(lambda m: m.arange(end=4))
    check(lambda m: m.arange(start=1, end=4))
    check(lambda m: m.arange(1, 10, step=3))


LINSPACE_CALLS = [
    (0, 10, 5), (0, 1, 7), (-1, 1, 2), (0, 10, 1), (0, 10, 0), (3, -2, 6), (0, 1, 1000),
    (0, 1 + 1j, 3), (1.5, 2.5, 4),
]


@pytest.mark.parametrize("args", LINSPACE_CALLS)
def test_linspace(args):
    check(lambda m: m.linspace(*args))


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float64", "float16", "complex128"])
def test_linspace_dtype(dtype):
    check(lambda m: m.linspace(0, 10, 7, dtype=getattr(m, dtype)), atol=1e-3)
    check(lambda m: m.linspace(-3.5, 10, 4, dtype=getattr(m, dtype)), atol=1e-3)


def test_linspace_tensor_overloads_and_errors():
    check(lambda m: m.linspace(m.tensor(0.0), 1, 3))
    check(lambda m: m.linspace(0, m.tensor(2), 3))
    check(lambda m: m.linspace(m.tensor(0, dtype=m.int64), m.tensor(4.0), 5))
    check(lambda m: m.linspace(m.tensor([0.0]), 1, 3))
    check(lambda m: m.linspace(0, m.tensor([1.0]), 3))
    check(lambda m: m.linspace(m.tensor([0.0]), m.tensor(1.0), 3))
    check(lambda m: m.linspace(0, 10, -1))
    check(lambda m: m.linspace(0, 1, 3, dtype=m.bool))


LAYOUTS = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.transpose(0, 1),
    "sliced": lambda x: x[:, ::2],
    "sliced_t": lambda x: x[:, ::2].transpose(0, 1),
}


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like"])
@pytest.mark.parametrize("layout", ["contiguous"])
def test_like_contiguous(name, layout):
    vals = name != "empty_like"
    check(lambda m, x: getattr(m, name)(x), sample((3, 4)), check_values=vals)
    check(lambda m, x: getattr(m, name)(x, dtype=m.int32), sample((3, 4)), check_values=vals)
    check(lambda m, x: getattr(m, name)(x, requires_grad=True), sample((2,)), check_values=vals)
    check(lambda m, x: getattr(m, name)(x), sample((2, 3), "int64"), check_values=vals)
    check(lambda m, x: getattr(m, name)(x, memory_format=m.contiguous_format), sample((2, 3)),
          check_values=vals)


def test_full_like():
    check(lambda m, x: m.full_like(x, 7), sample((2, 3)))
    check(lambda m, x: m.full_like(x, 2.7), sample((2, 3), "int32"))
    check(lambda m, x: m.full_like(x, 300), sample((2, 3), "uint8"))
    check(lambda m, x: m.full_like(x, 1.5, dtype=m.float64), sample((2, 3), "int32"))


def test_like_preserves_layout():
    # needs transpose / slicing views from the shape and indexing families
    import reftrace
    if not hasattr(reftrace.Tensor, "transpose"):
        pytest.skip("transpose comes from the shape family")
    for layout in LAYOUTS.values():
        for name in ("zeros_like", "ones_like", "empty_like"):
            check(lambda m, x: getattr(m, name)(layout(x)).stride(), sample((4, 6)))


def test_new_methods():
    check(lambda m, x: x.new_zeros(2, 3), sample((4,), "float64"))
    check(lambda m, x: x.new_zeros((2, 3)), sample((4,), "int32"))
    check(lambda m, x: x.new_ones([2]), sample((4,), "int32"))
    check(lambda m, x: x.new_ones(2, dtype=m.float16), sample((4,), "int32"))
    check(lambda m, x: x.new_full((2,), 1.5), sample((4,), "int32"))
    check(lambda m, x: x.new_full((2, 2), 3), sample((4,)))
    check(lambda m, x: x.new_empty((2, 3), dtype=m.int8).shape, sample((4,)))
    check(lambda m, x: x.new_zeros(2, 3, requires_grad=True), sample((4,)))
    check(lambda m, x: x.new_zeros(-1), sample((4,)))
    check(lambda m, x: x.new_zeros(2, requires_grad=True), sample((4,), "int64"))


def test_new_tensor():
    check(lambda m, x: x.new_tensor([1.5, 2]), sample((4,), "int32"))
    check(lambda m, x: x.new_tensor([[1, 2], [3, 4]]), sample((4,), "float64"))
    check(lambda m, x: x.new_tensor(3, dtype=m.int8), sample((4,)))
    check(lambda m, x: x.new_tensor([1.0], requires_grad=True), sample((4,)))


# -- traced graphs: what torch.jit.trace records for these calls --------------------------------

def assert_trace_matches(src, spec):
    """Trace ``fn`` (defined by ``src`` against the name ``torch``) under both libraries and
    compare the graph text (source locations dropped)."""
    import warnings
    from oracle import torch
    import reftrace
    from tracer_cases import trace_case
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = trace_case(torch, "case", src, spec, {}).graph.str(False)
        got = trace_case(reftrace, "case", src, spec, {}).graph.str(False)
    assert got == expected


def _T(*shape, dtype="float32"):
    return ("tensor", shape, dtype)


TRACE_CASES = {
    "zeros": ("return torch.zeros(2, 3) + x", (_T(2, 3),)),
    "zeros_tuple_dtype": ("return torch.zeros((2, 3), dtype=torch.float64) + x", (_T(2, 3),)),
    "zeros_traced_size": ("return torch.zeros(x.size()) + x", (_T(2, 3),)),
    "zeros_shape0": ("return torch.zeros(x.shape[0], 4)", (_T(2, 3),)),
    "ones_device": ("return torch.ones(2, 3, dtype=torch.float64, device='cpu')", (_T(2, 3),)),
    "requires_grad": ("return torch.zeros(2, requires_grad=True)", (_T(2),)),
    "zeros_like": ("return torch.zeros_like(x)", (_T(2, 3),)),
    "full_like": ("return torch.full_like(x, 2.5, dtype=torch.float64)", (_T(2, 3),)),
    "empty_like": ("return torch.empty_like(x).zero_()", (_T(2, 3),)),
    "new_zeros": ("return x.new_zeros(2, 3)", (_T(2, 3),)),
    "new_full": ("return x.new_full((2, 3), 7)", (_T(2, 3),)),
    "new_tensor": ("return x.new_tensor([1, 2]) + x", (_T(2),)),
    "arange": ("return torch.arange(5) + x", (_T(5),)),
    "arange_start": ("return torch.arange(1, 5) + x", (_T(4),)),
    "arange_step": ("return torch.arange(0, 1, 0.25, dtype=torch.float64) + x", (_T(4),)),
    "arange_traced_size": ("return torch.arange(x.size(0)) + x", (_T(4),)),
    "eye": ("return torch.eye(3) + x", (_T(3),)),
    "eye_m": ("return torch.eye(3, 4) + x", (_T(4),)),
    "full": ("return torch.full((2, 3), 1.5) + x", (_T(3),)),
    "empty": ("return torch.empty(2, 3).zero_() + x", (_T(3),)),
    "linspace": ("return torch.linspace(0, 1, 5) + x", (_T(5),)),
    "scalar_tensor": ("return torch.scalar_tensor(3) + x", (_T(5),)),
}


@pytest.mark.parametrize("name", sorted(TRACE_CASES))
def test_traced_graph(name):
    body, spec = TRACE_CASES[name]
    args = ", ".join("xyzw"[i] for i in range(len(spec)))
    assert_trace_matches(f"def fn({args}):\n    {body}\n", spec)
