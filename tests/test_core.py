"""Torch-free tests of the core rules: schema parsing, binding, fresh strides, dtypes.

These run everywhere (no oracle needed); the oracle tests and spec/ check the same behaviour
against torch where it is installed.
"""
import numpy as np
import pytest

import reftrace
from reftrace import _dtype as D
from reftrace._schema import parse_schema
from reftrace._tensor import contiguous_strides, scalar_to_tensor
from reftrace.ops._registry import NoMatch, OpOverload, OpPacket


# -- schema parsing ---------------------------------------------------------------------------

def _args(schema):
    return [(a.name, str(a.type), a.default, a.has_default, a.kwarg_only, a.alias)
            for a in schema.arguments]


def test_schema_name_overload_and_namespace():
    s = parse_schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert (s.name, s.overload) == ("aten::add", "Tensor")
    assert s.text.startswith("aten::add.Tensor(")
    assert _args(s)[2] == ("alpha", "Scalar", 1, True, True, None)
    # the default overload has an empty name; an explicit namespace is kept
    s = parse_schema("aten::relu(Tensor self) -> Tensor")
    assert (s.name, s.overload) == ("aten::relu", "")


def test_schema_optional_int_list_and_kwarg_only_dtype():
    s = parse_schema("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                     "ScalarType? dtype=None) -> Tensor")
    assert _args(s) == [("self", "Tensor", None, False, False, None),
                        ("dim", "int[1]?", None, False, False, None),
                        ("keepdim", "bool", False, True, False, None),
                        ("dtype", "ScalarType?", None, True, True, None)]
    dim = s.arguments[1].type
    assert dim.is_list and dim.optional and dim.list_size == 1 and dim.is_int_list


def test_schema_fixed_size_list_default_repeats():
    # 'SymInt[2] stride=1' means [1, 1]
    s = parse_schema("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
                     "SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor")
    defaults = {a.name: a.default for a in s.arguments if a.has_default}
    assert defaults == {"bias": None, "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
                        "groups": 1}


def test_schema_defaults_of_every_kind():
    s = parse_schema("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True)"
                     " -> (Tensor values, Tensor indices)")
    assert [a.default for a in s.arguments[2:]] == [-1, True, True]
    assert parse_schema("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor"
                        ).arguments[1].default == 0.01
    gelu = parse_schema("gelu(Tensor self, *, str approximate='none') -> Tensor")
    assert gelu.arguments[1].default == "none" and gelu.arguments[1].kwarg_only
    # a kwarg-only optional without a default (div's rounding_mode) must still be given or None
    div = parse_schema("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor")
    assert not div.arguments[2].has_default and div.arguments[2].type.optional


def test_schema_named_tuple_returns():
    s = parse_schema("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
    assert [(r.name, str(r.type)) for r in s.returns] == [("values", "Tensor"), ("indices", "Tensor")]


def test_schema_alias_annotations_decide_inplace_view_out():
    inplace = parse_schema("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    assert inplace.is_inplace and not inplace.is_view and not inplace.is_out
    view = parse_schema("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
    assert view.is_view and not view.is_inplace
    out = parse_schema("sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, "
                       "ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)")
    assert out.is_out and not out.is_view
    assert out.arguments[-1].alias == "a!" and out.arguments[-1].kwarg_only


def test_schema_list_returns_and_wildcard_alias():
    # split's self may alias any of the outputs ('a -> *'); the outputs are a list of views
    s = parse_schema("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
    assert s.arguments[0].alias == "a -> *"
    assert str(s.returns[0].type) == "Tensor[]" and s.returns[0].alias == "a"
    assert s.is_view


def test_schema_optional_tensor_list():
    s = parse_schema("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor")
    t = s.arguments[1].type
    assert t.is_list and t.elem_optional and not t.optional and str(t) == "Tensor?[]"


def test_schema_factory_kwargs():
    s = parse_schema("empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
                     "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor")
    assert [a.name for a in s.arguments if a.kwarg_only] == [
        "dtype", "layout", "device", "pin_memory", "memory_format"]
    assert all(a.has_default and a.default is None for a in s.arguments[1:])


# -- binding ------------------------------------------------------------------------------------

def _overload(schema_text):
    """An unregistered overload whose kernel returns its arguments (the table stays untouched)."""
    return OpOverload(parse_schema(schema_text), lambda *args: args, False, ("function", "method"))


def _x():
    return reftrace.tensor([[1.0, 2.0], [3.0, 4.0]])


def test_bind_fills_every_default():
    ov = _overload("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                   "ScalarType? dtype=None) -> Tensor")
    x = _x()
    assert ov.bind((x, [0]), {}) == [x, [0], False, None]
    # a bare int for int[1]; keywords by name; 'input' is accepted for 'self'
    assert ov.bind((x, 1), {"keepdim": True}) == [x, [1], True, None]
    assert ov.bind((), {"input": x, "dim": [1], "dtype": reftrace.float64}) == [x, [1], False, reftrace.float64]


def test_bind_fixed_size_list_from_int():
    ov = _overload("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
                   "int[2] dilation=1, bool ceil_mode=False) -> Tensor")
    x = _x()
    assert ov.bind((x, 2), {}) == [x, [2, 2], [], [0, 0], [1, 1], False]
    assert ov.bind((x, (3, 1)), {"padding": 1}) == [x, [3, 1], [], [1, 1], [1, 1], False]


def test_bind_defaults_are_not_shared_between_calls():
    ov = _overload("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
                   "SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor")
    first = ov.bind((_x(), _x()), {})
    first[3].append(99)  # a kernel mutating its list must not change the schema's default
    assert ov.bind((_x(), _x()), {})[3] == [1, 1]


def test_bind_int_list_as_varargs():
    # x.view(2, 3) and x.view((2, 3)) bind the same
    ov = _overload("view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    x = _x()
    assert ov.bind((x, 4, 1), {}) == [x, [4, 1]]
    assert ov.bind((x, (4, 1)), {}) == [x, [4, 1]]
    assert ov.bind((x, 4), {}) == [x, [4]]


def test_bind_rejects_what_does_not_fit():
    ov = _overload("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)")
    x = _x()
    with pytest.raises(NoMatch):
        ov.bind((x, 0), {})            # a missing required argument
    with pytest.raises(NoMatch):
        ov.bind((x, 0, 1, 2), {})      # too many positionals
    with pytest.raises(NoMatch):
        ov.bind((x, 0), {"dim2": 1})   # an unknown keyword
    with pytest.raises(NoMatch):
        ov.bind((x, 0.5, 1), {})       # a float for an int


def test_numbers_as_tensors_only_for_torchs_list():
    # mul is in torch's should_allow_numbers_as_tensors: 2 becomes a wrapped 0-dim int64 tensor
    mul = _overload("mul.Tensor(Tensor self, Tensor other) -> Tensor")
    x = _x()
    bound = mul.bind((x, 2), {})
    other = bound[1]
    assert isinstance(other, reftrace.Tensor) and other._wrapped
    assert other.dim() == 0 and other.dtype is reftrace.int64 and other.item() == 2
    assert mul.bind((x, 2.5), {})[1].dtype is reftrace.float64
    # eq is not: a number never matches eq.Tensor, so the parser moves on to eq.Scalar
    eq = _overload("eq.Tensor(Tensor self, Tensor other) -> Tensor")
    with pytest.raises(NoMatch):
        eq.bind((x, 2), {})
    assert _overload("eq.Scalar(Tensor self, Scalar other) -> Tensor").bind((x, 2), {}) == [x, 2]


def test_overload_choice_follows_registration_order():
    # an unregistered packet: each kernel reports which overload ran
    def packet(name, *schemas):
        p = OpPacket("aten::" + name)
        for text in schemas:
            overload = text.split("(")[0].split(".")[1]
            p.overloads.append(OpOverload(parse_schema(text), lambda *a, o=overload: o, False, ("function",)))
        return p
    x = _x()
    eq = packet("eq", "eq.Tensor(Tensor self, Tensor other) -> Tensor",
                "eq.Scalar(Tensor self, Scalar other) -> Tensor")
    assert eq(x, x) == "Tensor" and eq(x, 2) == "Scalar"
    pow_ = packet("pow", "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
                  "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor")
    assert pow_(x, 2) == "Tensor_Scalar"          # x.pow(2): pow isn't in numbers-as-tensors
    mul = packet("mul", "mul.Tensor(Tensor self, Tensor other) -> Tensor",
                 "mul.Scalar(Tensor self, Scalar other) -> Tensor")
    assert mul(x, 2) == "Tensor"                  # x * 2 is mul.Tensor with a wrapped number
    with pytest.raises(TypeError, match=r"eq\(\) received an invalid combination of arguments"):
        eq(x, "a")


def test_scalar_to_tensor_is_a_wrapped_number():
    for value, dtype in ((True, reftrace.bool), (3, reftrace.int64), (1.5, reftrace.float64),
                         (1j, reftrace.complex128)):
        t = scalar_to_tensor(value)
        assert t._wrapped and t.shape == () and t.dtype is dtype


def test_multiple_named_returns_become_a_named_tuple():
    ov = OpOverload(parse_schema("max.dim(Tensor self, int dim, bool keepdim=False) -> "
                                 "(Tensor values, Tensor indices)"),
                    lambda self, dim, keepdim: (self, self), False, ("function",))
    x = _x()
    r = ov(x, 0)
    assert r._fields == ("values", "indices") and r.values is x


# -- strides of fresh tensors -------------------------------------------------------------------

@pytest.mark.parametrize("shape,strides", [
    ((), ()),
    ((5,), (1,)),
    ((2, 3, 4), (12, 4, 1)),
    ((2, 1, 3), (3, 3, 1)),     # size-1 dims get the product of the later sizes
    ((1, 1), (1, 1)),
    ((2, 0, 3), (3, 3, 1)),     # a size-0 dim counts as 1
    ((0,), (1,)),
])
def test_contiguous_strides(shape, strides):
    assert contiguous_strides(shape) == strides
    t = reftrace.tensor(np.zeros(shape, dtype=np.float32))
    assert t.stride() == strides and t.is_contiguous() and t.shape == shape


def test_from_numpy_keeps_numpys_layout_and_shares_memory():
    a = np.zeros((3, 4), dtype=np.float32)
    t = reftrace.from_numpy(a.T)
    assert t.stride() == (1, 4) and not t.is_contiguous()
    a[0, 1] = 7
    assert t.tolist()[1][0] == 7


def test_tensor_copies_and_is_contiguous():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = reftrace.tensor(a.T)
    a[0, 0] = 100
    assert t.stride() == (2, 1) and t.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert reftrace.tensor(3.5).shape == () and reftrace.tensor(3.5).stride() == ()


# -- dtypes ---------------------------------------------------------------------------------------

def test_dtype_aliases_are_the_same_objects():
    assert reftrace.float is reftrace.float32 and reftrace.double is reftrace.float64
    assert reftrace.half is reftrace.float16 and reftrace.long is reftrace.int64
    assert reftrace.int is reftrace.int32 and reftrace.short is reftrace.int16
    assert reftrace.cfloat is reftrace.complex64 and reftrace.cdouble is reftrace.complex128
    assert repr(reftrace.float) == "torch.float32"


def test_dtype_inference():
    assert reftrace.tensor([True]).dtype is reftrace.bool
    assert reftrace.tensor([1, 2]).dtype is reftrace.int64
    assert reftrace.tensor([1, 2.5]).dtype is reftrace.float32
    assert reftrace.tensor([1j]).dtype is reftrace.complex64
    assert reftrace.tensor(np.zeros(2, dtype=np.int16)).dtype is reftrace.int16


def test_default_dtype_get_set():
    assert reftrace.get_default_dtype() is reftrace.float32
    try:
        reftrace.set_default_dtype(reftrace.float64)
        assert reftrace.get_default_dtype() is reftrace.float64
        assert reftrace.tensor([1.5]).dtype is reftrace.float64
        assert reftrace.tensor([1j]).dtype is reftrace.complex128
        assert reftrace.tensor([1]).dtype is reftrace.int64
    finally:
        reftrace.set_default_dtype(reftrace.float32)
    assert reftrace.tensor([1.5]).dtype is reftrace.float32


def test_default_dtype_must_be_floating():
    with pytest.raises(TypeError, match="only floating-point types are supported as the default type"):
        reftrace.set_default_dtype(reftrace.int64)
    assert reftrace.get_default_dtype() is reftrace.float32


def test_inplace_cast_rule_message():
    from reftrace._promotion import check_inplace_cast
    check_inplace_cast(reftrace.int64, reftrace.float32)  # widening into a float is fine
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Int$"):
        check_inplace_cast(reftrace.float32, reftrace.int32)


def test_import_never_pulls_in_torch():
    import os
    import subprocess
    import sys
    code = "import sys, reftrace; print('torch' in sys.modules)"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=root)
    assert out.stdout.strip() == "False"
