"""Pointwise ops (arithmetic, math, comparison, bitwise, logical) against torch 2.13.

Each test runs the same lambda under torch and reftrace (tests/oracle.py) and compares values,
dtype, shape, strides, aliasing and errors (type and message). Also checked against torch: every
registered schema string, the overload each call and each Python operator picks, the whole
traced graph of those calls (constants, types, value names), and that no NumPy warning leaks out
of a kernel.
"""
import warnings

import numpy as np
import pytest

import reftrace
from oracle import check, requires_torch, sample, torch

DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64", "complex64"]
FLOATS = ["float16", "float32", "float64"]
pytestmark = requires_torch  # every test compares with torch, the oracle


def tol(dtype):
    """float16 results may differ from torch's in the last bit (different rounding paths)."""
    return dict(atol=1e-2, rtol=1e-3) if "float16" in str(dtype) else {}


def nonzero(a):
    """a with its zeros replaced by ones (integer division by zero is tested separately)."""
    return np.asarray(np.where(a == 0, np.ones_like(a), a))


def special(dtype="float32"):
    """The float edge cases: signed zeros, halves (rounding), infinities, nan."""
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1.7, -3.3, np.inf, -np.inf,
                     np.nan, 7.0, -7.0, 100.0], dtype=dtype).reshape(4, 4)


# -- schemas and overload choice ------------------------------------------------------------------

MY_OPS = """sub rsub div div_ true_divide true_divide_ floor_divide floor_divide_ remainder remainder_
fmod fmod_ pow pow_ neg neg_ abs abs_ sign sign_ reciprocal reciprocal_ positive lerp lerp_ clamp
clamp_ clamp_min clamp_min_ clamp_max clamp_max_ maximum minimum where masked_fill masked_fill_
sub_ add add_ mul mul_ sqrt sqrt_ rsqrt rsqrt_ exp exp_ log log_ log2 log2_ log10 log10_ log1p
log1p_ expm1 expm1_ sin sin_ cos cos_ tan tan_ tanh tanh_ sigmoid sigmoid_ floor floor_ ceil ceil_
round round_ trunc trunc_ frac frac_ eq eq_ ne ne_ lt lt_ le le_ gt gt_ ge ge_ isnan isinf
isfinite bitwise_and bitwise_and_ bitwise_or bitwise_or_ bitwise_xor bitwise_xor_ bitwise_not
bitwise_not_ __lshift__ __rshift__ __ilshift__ __irshift__ bitwise_left_shift bitwise_left_shift_
bitwise_right_shift bitwise_right_shift_ __and__ __or__ __xor__ __iand__ __ior__ __ixor__
logical_and logical_and_ logical_or logical_or_ logical_xor logical_xor_ logical_not
logical_not_ subtract subtract_ multiply multiply_ divide divide_ negative negative_ absolute
absolute_ clip clip_ fix fix_ greater greater_ less less_ greater_equal greater_equal_ less_equal
less_equal_ not_equal not_equal_""".split()


def test_schemas_are_torchs_verbatim():
    for name in MY_OPS:
        packet = reftrace.ops.get_packet(name)
        for ov in packet.overloads:
            th = getattr(getattr(torch.ops.aten, name), ov.overload or "default")
            assert ov.schema.text == str(th._schema), ov.qualified


def _chosen(fn, *args):
    """The op overloads a reftrace call dispatches, in order (what a trace would record)."""
    from reftrace.ops import _registry
    from reftrace._dispatch import observed
    seen, real = [], _registry.dispatch

    def spy(op, bound):
        seen.append(op.qualified)
        return real(op, bound)
    _registry.dispatch = spy
    try:
        with observed():  # (the entry points' fast paths skip dispatch: every call reaches it)
            fn(*args)
    finally:
        _registry.dispatch = real
    return seen


def _traced(fn, *args):
    """The op overloads torch.jit.trace records for the same call."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = torch.jit.trace(fn, args).graph
    return [n.schema().split("(")[0] for n in graph.nodes() if n.kind() != "prim::Constant"]


# lambdas over (x float, i int64, b bool); the first tensor op of each is what matters
CALLS = [
    "x + 2", "2 + x", "x - 2", "2 - x", "x - x", "x * 2", "x / 2", "2 / x", "x // 2", "2 // x",
    "x // x", "x % 2", "2 % x", "x % x", "x ** 2", "2 ** x", "x ** x", "x ** 0.5", "i & 1", "1 & i",
    "i & i", "i | 1", "1 | i", "i ^ 1", "1 ^ i", "i << 1", "i >> 1", "1 << i", "1 >> i", "i << i",
    "-x", "~i", "abs(x)", "+x", "x == 2", "2 == x", "x < 2", "2 < x", "x != x", "x >= 2.5",
    "x.sub(2)", "x.sub(x, alpha=2)", "torch.rsub(x, 2)", "x.div(2, rounding_mode='floor')",
    "x.div(x, rounding_mode=None)", "x.floor_divide(2)", "x.remainder(2)", "torch.remainder(2, x)",
    "x.fmod(2)", "x.fmod(x)", "x.pow(2)", "x.pow(x)", "torch.pow(2, x)", "x.clamp(0, 1)",
    "x.clamp(min=0)", "x.clamp(x)", "x.clamp(max=x)", "x.clamp_min(0)", "x.clamp_min(x)",
    "x.clamp_max(1.5)", "x.clamp_max(x)", "torch.where(b, x, x)", "torch.where(b, x, 2.0)",
    "torch.where(b, 2.0, x)", "torch.where(b, 2.0, 3)", "x.where(b, 2.0)", "x.where(b, x)",
    "x.masked_fill(b, 2.0)", "x.masked_fill(b, torch.ones(()))", "x.lerp(x, 0.5)", "x.lerp(x, x)",
    "x.eq(2)", "x.eq(x)", "x.ne(2.5)", "x.maximum(x)", "torch.minimum(x, x)", "x.sign()",
    "x.round(decimals=2)", "x.round()", "x.sigmoid()", "torch.logical_and(x, x)", "x.logical_not()",
    "torch.isinf(x)", "x.isfinite()", "i.bitwise_and(3)", "torch.bitwise_or(1, i)",
    "i.bitwise_left_shift(1)", "torch.bitwise_right_shift(8, i)", "i.__and__(i)", "x.frac()",
    "x.reciprocal()", "x.neg()", "x.positive()", "x.sqrt()", "x.exp()",
    "torch.rsub(x, x * 2)", "x.true_divide(x)", "torch.true_divide(x, 2)",  # NormalizeOps renames
    "torch.where(x > 0)", "i + 2.5", "i / 2", "i // 2.5", "b + b", "i.float() ** 2",
    # aliases: recorded under their own name, renamed by NormalizeOps
    "torch.subtract(x, 2)", "x.multiply(x)", "x.divide(2, rounding_mode='floor')", "x.negative()",
    "x.absolute()", "x.clip(0, 1)", "x.clip(min=x)", "x.fix()", "x.greater(0)",
    "torch.less_equal(x, x)", "x.not_equal(2)", "torch.less(x, 1.5)", "x.greater_equal(x)",
    # a 0-dim tensor fits a Scalar parameter too: the Tensor overload must come first
    "x.sub(x[0, 0])", "x.pow(x[0, 0])", "x.eq(x[0, 0])", "x.clamp(x[0, 0])", "x.lerp(x, x[0, 0])",
    "x.masked_fill(b, x[0, 0])", "x.remainder(x[0, 0])", "i.bitwise_and(i[0, 0])",
    "torch.where(b, x[0, 0], x[0, 0])", "x.clamp_min(x[0, 0])", "i << i[0, 0]",
]

INPLACE_CALLS = ["x += 1", "x -= 1", "x *= 2", "x /= 2", "x //= 2", "x %= 2", "x **= 2", "i &= 1",
                 "i |= 1", "i ^= 1", "i <<= 1", "i >>= 1", "x.add_(1)", "x.sub_(x)", "x.div_(2)",
                 "x.pow_(2)", "x.clamp_(0, 1)", "x.clamp_min_(x)", "x.eq_(2)", "x.lt_(x)",
                 "x.sqrt_()", "x.round_(decimals=1)", "x.masked_fill_(b, 1)", "i.bitwise_not_()",
                 "x.logical_and_(x)", "x.neg_()", "x.abs_()", "x.sign_()", "i.__ilshift__(1)",
                 "i.bitwise_left_shift_(1)", "x.lerp_(x, 0.5)", "x.remainder_(2)", "x.fmod_(x)",
                 "x.eq_(i[0, 0])", "x.lerp_(x, i[0, 0])", "x.pow_(i[0, 0])", "x.clamp_(i[0, 0])",
                 "x.subtract_(1)", "x.absolute_()", "x.clip_(0, 1)", "x.fix_()", "x.less_(1)"]


# what torch's NormalizeOps pass (run on every traced graph) makes of the ops the binding calls
_NORMALIZED = {"aten::rsub.Tensor": "aten::sub.Tensor"}
_ALIASES = {"true_divide": "div", "subtract": "sub", "multiply": "mul", "divide": "div",
            "negative": "neg", "absolute": "abs", "clip": "clamp", "fix": "trunc", "greater": "gt",
            "less": "lt", "greater_equal": "ge", "less_equal": "le", "not_equal": "ne"}
for _alias, _target in list(_ALIASES.items()):
    _ALIASES[_alias + "_"] = _target + "_"


def _normalized(qualified):
    name, _, overload = qualified[len("aten::"):].partition(".")
    qualified = "aten::" + _ALIASES.get(name, name) + ("." + overload if overload else "")
    return _NORMALIZED.get(qualified, qualified)


def _fn(module, src):
    """def f(x, i, b): return <src>; an in-place src works on copies and returns them."""
    if src in INPLACE_CALLS:
        body = f"    x = x * 1\n    i = i * 1\n    {src}\n    return x, i\n"
    else:
        body = f"    return {src}\n"
    ns = {"torch": module, "__name__": "pointwise_calls"}
    exec(f"def f(x, i, b):\n{body}", ns)
    return ns["f"]


def _operands(module):
    x = module.tensor([[1.5, -2.0], [0.5, 3.0]])
    return x, module.tensor([[1, 2], [3, 4]]), module.tensor([[True, False], [False, True]])


@pytest.mark.parametrize("src", CALLS + INPLACE_CALLS)
def test_overload_chosen_is_torchs(src):
    def mine(names):  # the ops of this family (not torch.ones(()) and the like)
        return [n for n in names if n.split("::")[-1].split(".")[0] in MY_OPS]
    expected = mine(_traced(_fn(torch, src), *_operands(torch)))
    got = [_normalized(n) for n in mine(_chosen(_fn(reftrace, src), *_operands(reftrace)))]
    # torch's NormalizeOps pass renames rsub.Tensor -> sub (a tracer concern, not the binding's)
    assert got == expected


# -- binary ops across dtypes ---------------------------------------------------------------------

BINARY = {
    "add": lambda m, x, y: x + y,
    "add_alpha": lambda m, x, y: m.add(x, y, alpha=2),
    "sub": lambda m, x, y: x - y,
    "sub_alpha": lambda m, x, y: m.sub(x, y, alpha=3),
    "rsub": lambda m, x, y: m.rsub(x, y),
    "mul": lambda m, x, y: x * y,
    "div": lambda m, x, y: x / y,
    "div_trunc": lambda m, x, y: m.div(x, y, rounding_mode="trunc"),
    "div_floor": lambda m, x, y: m.div(x, y, rounding_mode="floor"),
    "true_divide": lambda m, x, y: m.true_divide(x, y),
    "floor_divide": lambda m, x, y: x // y,
    "remainder": lambda m, x, y: x % y,
    "fmod": lambda m, x, y: m.fmod(x, y),
    "pow": lambda m, x, y: x ** y,
    "maximum": lambda m, x, y: m.maximum(x, y),
    "minimum": lambda m, x, y: m.minimum(x, y),
    "eq": lambda m, x, y: x == y,
    "ne": lambda m, x, y: x != y,
    "lt": lambda m, x, y: x < y,
    "le": lambda m, x, y: m.le(x, y),
    "gt": lambda m, x, y: x > y,
    "ge": lambda m, x, y: x.ge(y),
    "and": lambda m, x, y: x & y,
    "or": lambda m, x, y: m.bitwise_or(x, y),
    "xor": lambda m, x, y: x.bitwise_xor(y),
    "lshift": lambda m, x, y: x << y,
    "rshift": lambda m, x, y: m.bitwise_right_shift(x, y),
    "logical_and": lambda m, x, y: m.logical_and(x, y),
    "logical_or": lambda m, x, y: x.logical_or(y),
    "logical_xor": lambda m, x, y: m.logical_xor(x, y),
    "clamp_min": lambda m, x, y: x.clamp_min(y),
    "clamp_max": lambda m, x, y: m.clamp_max(x, y),
}
_DIVIDES = {"div_trunc", "div_floor", "floor_divide", "remainder", "fmod"}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dt", DTYPES)
def test_binary_same_dtype(name, dt):
    a, b = sample((3, 4), dt), sample((3, 4), dt, seed=1)
    if name in _DIVIDES:
        b = nonzero(b)
    if name in ("lshift", "rshift") and dt != "bool":
        b = np.abs(b) % 8 if dt != "uint8" else b % 8
    if name == "pow" and dt[0] in "iu":
        b = np.abs(b)  # negative integer exponents: test_pow_integers
    check(BINARY[name], a, b, **tol(dt))


MIXED = [("int32", "float32"), ("uint8", "int8"), ("bool", "int64"), ("int64", "float16"),
         ("float32", "float64"), ("float16", "float32"), ("uint8", "bool"), ("float32", "complex64")]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dts", MIXED, ids=str)
def test_binary_mixed_dtypes_and_broadcast(name, dts):
    a, b = sample((3, 1, 4), dts[0]), nonzero(sample((2, 1), dts[1], seed=2))
    check(BINARY[name], a, b, **tol(dts))
    check(BINARY[name], b, a, **tol(dts))
    # a 0-dim tensor does not promote a dimensioned one within its category
    check(BINARY[name], a, np.asarray(nonzero(sample((), dts[1], seed=3))), **tol(dts))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_layout_and_zero_dim(name):
    a, b = sample((4, 3)), sample((3, 4), seed=1) + 4
    check(lambda m, x, y: BINARY[name](m, x.t(), y), a, b)
    check(lambda m, x, y: BINARY[name](m, x.t(), y.t()), a, sample((4, 3), seed=5) + 4)
    check(BINARY[name], sample(()), np.asarray(sample((), seed=1) + 4))
    check(BINARY[name], sample((2, 3)), sample((4, 3)))  # torch's broadcast error


NUMBERS = [2, -1, 2.5, True, 300, 1e300, 2 + 1j]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dt", ["bool", "uint8", "int32", "float16", "float32"])
def test_binary_with_python_numbers(name, dt):
    """Wrapped-number promotion: int32 + 2.5 is float32, uint8 + 300 wraps, float16 + 1e300 inf."""
    fn = BINARY[name]
    a = sample((2, 3), dt)
    for n in NUMBERS:
        if dt == "float16" and isinstance(n, complex):
            continue  # torch makes complex32 (ComplexHalf), which reftrace does not have
        check(lambda m, x: fn(m, x, n), a, **tol(dt))  # maximum(x, 2): the parser's TypeError
        check(lambda m, x: fn(m, x[0, 0], n), a, **tol(dt))  # 0-dim and number


REFLECTED = {
    "radd": lambda x, n: n + x, "rsub": lambda x, n: n - x, "rmul": lambda x, n: n * x,
    "rdiv": lambda x, n: n / x, "rfloordiv": lambda x, n: n // x, "rmod": lambda x, n: n % x,
    "rpow": lambda x, n: n ** x, "rand": lambda x, n: n & x, "ror": lambda x, n: n | x,
    "rxor": lambda x, n: n ^ x, "rlshift": lambda x, n: n << x, "rrshift": lambda x, n: n >> x,
    "req": lambda x, n: n == x, "rlt": lambda x, n: n < x,
}


@pytest.mark.parametrize("name", sorted(REFLECTED))
@pytest.mark.parametrize("dt", ["bool", "uint8", "int64", "float32", "float64"])
def test_reflected_operators(name, dt):
    a = nonzero(sample((2, 3), dt)) if dt != "bool" else np.ones((2, 3), bool)
    if name in ("rlshift", "rrshift"):
        a = np.abs(a) % 8
    for n in (3, -2, 2.5, True, 1):
        check(lambda m, x: REFLECTED[name](x, n), a, **tol(dt))


# -- integer division, pow ------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["uint8", "int8", "int32", "int64"])
def test_integer_division_semantics_and_zero(dt):
    a = np.array([7, -7, 7, -7, 0, 5], dtype=dt) if dt != "uint8" else np.array([7, 250, 9, 0], dt)
    b = np.array([2, 2, -2, -2, 3, 5], dtype=dt) if dt != "uint8" else np.array([2, 3, 4, 5], dt)
    for name in sorted(_DIVIDES):
        check(BINARY[name], a, b)
        check(BINARY[name], a, np.zeros_like(b))  # RuntimeError: ZeroDivisionError
        check(lambda m, x: BINARY[name](m, x, 0), a)
    check(lambda m, x: x % 2 ** 40, a)  # the number wraps to 0 in int32: ZeroDivisionError
    check(lambda m, x: x / 0, a)  # true division: inf


@pytest.mark.parametrize("dt", FLOATS)
def test_float_division_edges(dt):
    a, b = special(dt), special(dt).T.copy()
    for name in ("div", "div_trunc", "div_floor", "floor_divide", "remainder", "fmod"):
        check(BINARY[name], a, b, **tol(dt))
        check(lambda m, x: BINARY[name](m, x, 0.0), a, **tol(dt))
        check(lambda m, x: BINARY[name](m, x, -2), a, **tol(dt))
    # remainder keeps fmod's signed zero: -4 % 2 is -0.0 in torch (NumPy says +0.0)
    check(lambda m, x: 1 / (x % 2), a)  # 1 / -0.0 is -inf


def test_pow_integers():
    a = np.array([[1, -1, 2, -2, 0, 3]], dtype="int64")
    check(lambda m, x, y: x ** y, a, np.array([[-1, -3, -2, 3, -1, 40]]))  # 0 or ±1, wrap-around
    check(lambda m, x: x ** -1, a)  # Integers to negative integer powers are not allowed.
    check(lambda m, x: x ** -1.0, a)
    check(lambda m, x: x ** True, a)
    check(lambda m, x: x ** False, a)
    check(lambda m, x: x ** 0, a)
    check(lambda m, x: x.to(m.uint8) ** 9, np.array([2, 3, 255]))
    check(lambda m, x: x.to(m.int32) ** 2 ** 40, a)  # the exponent overflows int
    check(lambda m, x: 2 ** x, np.array([-2, 0, 3, 62]))
    check(lambda m, x: 1 ** x, np.array([-2.0, np.nan]))
    check(lambda m, x: 1.0 ** x, np.array([-2, 3]))
    check(lambda m, x: 2.5 ** x, np.array([-2, 3]))
    check(lambda m, x: True ** x, np.array([-2, 3]))
    check(lambda m, x, y: x ** y, np.array([True, False]), np.array([True, True]))


@pytest.mark.parametrize("dt", FLOATS + ["complex64", "complex128"])
@pytest.mark.parametrize("exponent", [0, 1, 2, 3, -1, -2, 0.5, -0.5, 1.5, -3.7, 2 + 0j, 1j])
def test_pow_scalar_fast_paths(dt, exponent):
    """pow's fast paths show at the edges: (-0.0) ** 0.5 is -0.0, (-inf) ** 0.5 is nan."""
    if dt == "float16" and isinstance(exponent, complex):
        return  # torch computes in complex32, which reftrace does not have
    a = special(dt) if dt[0] == "f" else sample((3, 3), dt)
    check(lambda m, x: x ** exponent, a, **tol(dt))
    check(lambda m, x: x.pow(exponent), a, **tol(dt))
    check(lambda m, x: exponent ** x, sample((3, 3), dt), **tol(dt))


def test_pow_tensor_exponent_and_scalar_tensor():
    a = sample((3, 3))
    check(lambda m, x: x ** x[0, 0], np.abs(a))
    check(lambda m, x: m.pow(x[0, 0], x), np.abs(a))
    check(lambda m, x: x.pow(m.tensor(2)), a)


# -- alpha, sub of bools --------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [2, -1, 2.5, True, False, 1 + 1j, 300, 2 ** 40, 1.0])
@pytest.mark.parametrize("dt", ["bool", "uint8", "int32", "float16", "float32", "complex64"])
def test_alpha(alpha, dt):
    a, b = sample((2, 3), dt), sample((2, 3), dt, seed=1)
    check(lambda m, x, y: m.add(x, y, alpha=alpha), a, b, **tol(dt))
    check(lambda m, x, y: m.sub(x, y, alpha=alpha), a, b, **tol(dt))
    check(lambda m, x, y: m.rsub(x, y, alpha=alpha), a, b, **tol(dt))
    check(lambda m, x: m.rsub(x, 2, alpha=alpha), a, **tol(dt))
    check(lambda m, x, y: x.sub_(y, alpha=alpha), a, b, **tol(dt))


def test_bool_subtraction_and_negation_errors():
    t, i = np.array([True, False]), np.array([1, 2])
    check(lambda m, x, y: x - y, t, t)
    check(lambda m, x, y: x - y, t, i)
    check(lambda m, x, y: y - x, t, i)
    check(lambda m, x: x - 1, t)
    check(lambda m, x: 1 - x, t)
    check(lambda m, x: x - True, i)
    check(lambda m, x: -x, t)
    check(lambda m, x: +x, t)
    check(lambda m, x: x.neg_(), t)


# -- unary ops ------------------------------------------------------------------------------------

UNARY = ["neg", "abs", "sign", "reciprocal", "positive", "sqrt", "rsqrt", "exp", "log", "log2",
         "log10", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sigmoid", "floor", "ceil",
         "round", "trunc", "frac", "isnan", "isinf", "isfinite", "bitwise_not", "logical_not"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dt", DTYPES + ["complex128"])
def test_unary(name, dt):
    a = special(dt) if dt in FLOATS else sample((4, 4), dt)
    check(lambda m, x: getattr(m, name)(x), a, **tol(dt))
    check(lambda m, x: getattr(x, name)(), a, **tol(dt))
    check(lambda m, x: getattr(m, name)(x.t()), a, **tol(dt))  # layout kept
    check(lambda m, x: getattr(m, name)(x[1, 2]), a, **tol(dt))  # 0-dim
    if name != "positive":
        check(lambda m, x: getattr(x, name + "_")(), a, **tol(dt))
        check(lambda m, x: getattr(x.t()[1:], name + "_")(), a, **tol(dt))  # through a view


def test_unary_operators():
    f, i = sample((2, 3)), sample((2, 3), "int32")
    check(lambda m, x: -x, f)
    check(lambda m, x: abs(x), f)
    check(lambda m, x: +x, f)
    check(lambda m, x: x.positive() is x, f)
    check(lambda m, x: ~x, i)
    check(lambda m, x: ~x, f)  # TypeError from the operator itself
    check(lambda m, x: ~x, np.array([True, False]))
    check(lambda m, x: m.abs_(x), np.array([1j]))


@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("dt", ["int64", "bool", "complex64"] + FLOATS)
def test_round_decimals(decimals, dt):
    a = (sample((3, 4), dt, low=-2000, high=2000) if dt[0] in "ic" else
         np.array([1.25, 2.35, 1234.5, -0.55, 1250, 15, 0.125, -2.5], dtype=dt))
    if dt == "bool":
        a = sample((3, 4), dt)
    check(lambda m, x: x.round(decimals=decimals), a, **tol(dt))
    check(lambda m, x: m.round(x, decimals=decimals), a, **tol(dt))
    check(lambda m, x: x.round_(decimals=decimals), a, **tol(dt))


def test_float_functions_of_integers_use_the_default_dtype():
    check(lambda m, x: x.sqrt(), np.array([4, 9], dtype="int16"))
    check(lambda m, x: x.sqrt_(), np.array([4, 9]))  # can't cast Float to Long
    old = reftrace.get_default_dtype()
    try:
        reftrace.set_default_dtype(reftrace.float64)
        torch.set_default_dtype(torch.float64)
        check(lambda m, x: (x.exp(), x / 2, x.reciprocal(), x + 2.5), np.array([1, 2]))
    finally:
        reftrace.set_default_dtype(old)
        torch.set_default_dtype(torch.float32)


# -- comparisons, bitwise, logical ----------------------------------------------------------------

def test_comparison_promotion_with_numbers():
    u = np.array([1, 255, 44], dtype="uint8")
    check(lambda m, x: x == -1, u)  # -1 is 255 in uint8
    check(lambda m, x: x == 300, u)  # 300 is 44 in uint8
    check(lambda m, x: x < 1.5, u)
    check(lambda m, x: x == 1e300, sample((3,)))
    check(lambda m, x: x == 1 + 0j, np.array([1, 2]))
    check(lambda m, x: x < 1, np.array([1j]))
    check(lambda m, x: x == None, sample((3,)))  # noqa: E711  (False, not elementwise)
    check(lambda m, x: x != "a", sample((3,)))


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparison_inplace(name):
    check(lambda m, x, y: getattr(x, name + "_")(y), sample((2, 3)), sample((2, 3), seed=1))
    check(lambda m, x: getattr(x, name + "_")(0), sample((2, 3), "int32"))
    check(lambda m, x: getattr(x, name + "_")(0.5), sample((2, 3), "int32"))
    check(lambda m, x, y: getattr(x, name + "_")(y), sample((2,)), sample((2, 2), seed=1))


@pytest.mark.parametrize("op", ["&", "|", "^", "<<", ">>"])
def test_bitwise_errors_and_inplace(op):
    fn = eval(f"lambda m, x, y: x {op} y")
    check(fn, sample((3,)), sample((3,), seed=1))
    check(fn, sample((3,), "int64"), sample((3,), "float32"))
    check(lambda m, x: fn(m, x, 1.5), sample((3,), "int64"))
    check(lambda m, x: fn(m, x, 1), np.array([True, False, True]))
    check(lambda m, x: fn(m, x, True), np.array([True, False, True]))
    name = {"&": "and", "|": "or", "^": "xor", "<<": "lshift", ">>": "rshift"}[op]
    iop = eval(f"lambda m, x, y: x.__i{name}__(y)")
    check(iop, sample((3,), "int32"), sample((3,), "int32", seed=1) % 4)
    check(lambda m, x: iop(m, x, 1.5), sample((3,), "int32"))  # cast error before dtype error
    check(lambda m, x, y: iop(m, x, y), sample((3,), "int32"), sample((3,), "float32"))


def test_shift_edges():
    a = np.array([1, -1, 64, -128, 5, -5], dtype="int8")
    for amounts in ([8, 70, 7, 1, -1, 100], [0, 1, 2, 3, 4, 5]):
        b = np.array(amounts, dtype="int8")
        check(lambda m, x, y: x << y, a, b)
        check(lambda m, x, y: x >> y, a, b)
    check(lambda m, x: x >> 9, np.array([200, 3], dtype="uint8"))
    check(lambda m, x: x << 9, np.array([200, 3], dtype="uint8"))
    check(lambda m, x: m.bitwise_left_shift(x, 1), sample((3,)))


def test_logical_ops_inplace_and_numbers():
    f, c = np.array([1.0, 0.0, np.nan]), np.array([1j, 0, 1])
    check(lambda m, x, y: m.logical_and(x, y), f, c)
    check(lambda m, x, y: x.logical_xor_(y), f, c.real.copy())
    check(lambda m, x: x.logical_not_(), np.array([1, 0, 3]))
    check(lambda m, x: m.logical_and(x, 2), f, check_message=False)  # TypeError (binding text)


def test_predicates_on_complex_and_ints():
    c = np.array([1j, np.nan, np.inf + 1j, 1 + 1j * np.nan], dtype="complex64")
    for name in ("isnan", "isinf", "isfinite"):
        check(lambda m, x: getattr(x, name)(), c)
        check(lambda m, x: getattr(x, name)(), sample((2, 3), "int32"))


# -- clamp, lerp, where, masked_fill --------------------------------------------------------------

CLAMPS = [(0, 1), (0.5, None), (None, -1), (3, 1), (-1, None), (300, None), (None, 2 ** 40),
          (np.nan, 2.0), (None, np.nan), (1e10, None), (0, 1 + 1j), (1j, None), (True, None),
          (None, None), (-256, None)]


@pytest.mark.parametrize("limits", CLAMPS, ids=str)
@pytest.mark.parametrize("dt", ["bool", "uint8", "int32", "float16", "float32", "complex64"])
def test_clamp_scalar(limits, dt):
    lo, hi = limits
    a = special(dt) if dt in FLOATS else sample((3, 4), dt)
    check(lambda m, x: x.clamp(lo, hi), a, **tol(dt))
    check(lambda m, x: m.clamp(x.t(), min=lo, max=hi), a, **tol(dt))
    check(lambda m, x: x.clamp_(lo, hi), a, **tol(dt))
    if lo is not None:
        check(lambda m, x: x.clamp_min(lo), a, **tol(dt))
        check(lambda m, x: x.clamp_min_(lo), a, **tol(dt))
    if hi is not None:
        check(lambda m, x: m.clamp_max(x, hi), a, **tol(dt))
        check(lambda m, x: m.clamp_max_(x, hi), a, **tol(dt))


@pytest.mark.parametrize("dts", [("float32", "float32"), ("int32", "float32"), ("int64", "int32"),
                                 ("bool", "bool"), ("float32", "float64"), ("complex64", "float32")],
                         ids=str)
def test_clamp_tensor(dts):
    a, lo, hi = sample((3, 4), dts[0]), sample((4,), dts[1], seed=1), sample((3, 1), dts[1], seed=2)
    check(lambda m, x, l, h: x.clamp(l, h), a, lo, hi)
    check(lambda m, x, l: x.clamp(min=l), a, lo)
    check(lambda m, x, h: m.clamp(x, max=h), a, hi)
    check(lambda m, x, l, h: x.clamp_(l, h), a, lo, hi)
    check(lambda m, x, l: x.clamp_min_(l), a, lo)
    check(lambda m, x, h: m.clamp_max_(x, h), a, hi)
    check(lambda m, x, l: x.clamp(None, None), a, lo)
    check(lambda m, x, l: x.clamp(0, l), a, lo, check_message=False)  # TypeError (binding text)
    check(lambda m, x, l: x.clamp(l, np.nan), a, lo, check_message=False)  # TypeError


@pytest.mark.filterwarnings("ignore:Casting complex values to real")  # y.double(), in both
@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "complex64", "int64"])
def test_lerp(dt):
    a, b = special(dt) if dt in FLOATS else sample((4, 4), dt), sample((4, 4), dt, seed=1)
    w = sample((4, 4), dt if dt != "int64" else "float32", low=-1, high=2, seed=2)
    for weight in (0.25, 0.5, 0.75, 2, -1, 1e10, 0.5 + 1j, 1e300):
        check(lambda m, x, y: x.lerp(y, weight), a, b, **tol(dt))
        check(lambda m, x, y: m.lerp(x, y.t(), weight), a, b, **tol(dt))
    check(lambda m, x, y, z: x.lerp(y, z), a, b, w, **tol(dt))
    check(lambda m, x, y, z: m.lerp(x, y[0], z[:, :1]), a, b, w, **tol(dt))
    check(lambda m, x, y, z: x.lerp_(y, z), a, b, w, **tol(dt))
    check(lambda m, x, y: x.lerp_(y, 0.3), a, b, **tol(dt))
    check(lambda m, x, y: x.lerp(y.double(), 0.5), a, b)
    check(lambda m, x, y, z: x.lerp(y, z.double()), a, b, w)
    check(lambda m, x, y, z: x.lerp(y, z[0, 0].double()), a, b, w)  # 0-dim: promotes
    check(lambda m, x, y, z: x.lerp(y, z[0, 0]), a, b, w)
    check(lambda m, x, y, z: x.lerp(y, z[0, 0].to(m.int64)), a, b, w)


CONDITIONS = [np.array([[True, False, True], [False, True, False]]), np.array([True, False, True]),
              np.array([[1, 0, 1]], dtype="uint8"), np.array([1, 0, 1]), np.array(True)]


@pytest.mark.parametrize("cond", CONDITIONS, ids=lambda c: f"{c.dtype}{list(c.shape)}")
@pytest.mark.parametrize("dts", [("float32", "float32"), ("int32", "float64"), ("uint8", "int8"),
                                 ("bool", "int64"), ("float16", "complex64")], ids=str)
def test_where(cond, dts):
    a, b = sample((2, 3), dts[0]), sample((3,), dts[1], seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the uint8 condition's deprecation warning
        check(lambda m, c, x, y: m.where(c, x, y), cond, a, b, **tol(dts))
        check(lambda m, c, x, y: x.where(c, y), cond, a, b, **tol(dts))
        check(lambda m, c, x, y: m.where(c, x.t().t(), y[:1]), cond, a, b, **tol(dts))
        for n in (2, 2.5, True, 300, -1, -256, 1e300, 70000.0, 1 + 1j, 2 ** 40):
            if dts[0] == "float16" and isinstance(n, complex):
                continue  # complex32 in torch
            check(lambda m, c, x: m.where(c, x, n), cond, a, **tol(dts))
            check(lambda m, c, x: m.where(c, n, x), cond, a, **tol(dts))
            check(lambda m, c, x: x.where(c, n), cond, a, **tol(dts))
            check(lambda m, c: m.where(c, n, 1), cond)


def test_where_layout_and_nonzero():
    c = np.array([[True, False, True], [False, True, False]])
    check(lambda m, c, x, y: m.where(c.t(), x.t(), y.t()), c, sample((2, 3)), sample((2, 3), seed=1))
    check(lambda m, c: m.where(c), c)
    check(lambda m, c: m.where(c[0, 0]), c)


def test_where_uint8_condition_warns():
    c = reftrace.from_numpy(np.array([1, 0], dtype="uint8"))
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        reftrace.where(c, reftrace.ones(2), reftrace.zeros(2))


MASKS = [np.array([[True, False, True], [False, True, False]]), np.array([True, False, True]),
         np.array([[1, 0, 1]], dtype="uint8"), np.array([1, 0, 1]), np.array([True, False]),
         np.array([[[True]], [[False]]])]


@pytest.mark.parametrize("mask", MASKS, ids=lambda c: f"{c.dtype}{list(c.shape)}")
@pytest.mark.parametrize("dt", ["bool", "uint8", "int8", "int32", "float16", "float32", "complex64"])
def test_masked_fill(mask, dt):
    a = sample((2, 3), dt)
    for value in (7, -1, 2.5, True, 300, -256, 1e10, 1 + 1j, float("nan"), float("inf")):
        check(lambda m, x, k: x.masked_fill(k, value), a, mask, **tol(dt))
        check(lambda m, x, k: m.masked_fill(x.t().t(), k, value), a, mask, **tol(dt))
        check(lambda m, x, k: x.masked_fill_(k, value), a, mask, **tol(dt))
    check(lambda m, x, k: x.masked_fill(k, m.tensor(5.5)), a, mask, **tol(dt))
    check(lambda m, x, k: x.masked_fill_(k, m.tensor(5, dtype=m.int64)), a, mask, **tol(dt))
    check(lambda m, x, k: x.masked_fill(k, m.tensor([5, 6])), a, mask, **tol(dt))


def test_masked_fill_through_view():
    check(lambda m, x, k: (x.t().masked_fill_(k, 0.0), x), sample((3, 2)), MASKS[0])
    check(lambda m, x, k: x.masked_fill(k, 1.0), sample((3, 2)).T, MASKS[0])


# -- in place through views, cast rule ------------------------------------------------------------

INPLACE = {
    "add_": lambda x, y: x.add_(y), "sub_": lambda x, y: x.sub_(y), "mul_": lambda x, y: x.mul_(y),
    "div_": lambda x, y: x.div_(y), "div_floor_": lambda x, y: x.div_(y, rounding_mode="floor"),
    "true_divide_": lambda x, y: x.true_divide_(y), "floor_divide_": lambda x, y: x.floor_divide_(y),
    "remainder_": lambda x, y: x.remainder_(y), "fmod_": lambda x, y: x.fmod_(y),
    "pow_": lambda x, y: x.pow_(y), "clamp_min_": lambda x, y: x.clamp_min_(y),
    "eq_": lambda x, y: x.eq_(y), "ge_": lambda x, y: x.ge_(y), "and_": lambda x, y: x.bitwise_and_(y),
    "iand": lambda x, y: x.__iand__(y), "lshift_": lambda x, y: x.bitwise_left_shift_(y),
    "irshift": lambda x, y: x.__irshift__(y), "logical_or_": lambda x, y: x.logical_or_(y),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
@pytest.mark.parametrize("dts", [("float32", "float32"), ("int64", "int64"), ("int32", "float32"),
                                 ("float32", "float64"), ("uint8", "int64"), ("bool", "bool"),
                                 ("float16", "float32")], ids=str)
def test_inplace_binary(name, dts):
    fn = INPLACE[name]
    a, b = sample((3, 4), dts[0]), nonzero(sample((3, 4), dts[1], seed=1)) % 4
    check(lambda m, x, y: fn(x, y), a, b, **tol(dts))
    check(lambda m, x, y: (fn(x.t()[1:], y.t()[1:]), x), a, b, **tol(dts))  # through a view
    check(lambda m, x, y: fn(x, y[0]), a, b, **tol(dts))  # broadcast other
    check(lambda m, x, y: fn(x[0], y), a, b, **tol(dts))  # output shape mismatch
    check(lambda m, x: fn(x, 2), a, **tol(dts))  # logical_or_(2): the parser's TypeError
    check(lambda m, x: fn(x, 1.5), a, **tol(dts))


def test_augmented_assignment_operators():
    def run(src, x):
        ns = {"x": x}
        exec(src, ns)
        return ns["x"]
    for op in ("+=", "-=", "*=", "/=", "//=", "%=", "**="):
        check(lambda m, x: run(f"x {op} 2", x), sample((2, 3)))
        check(lambda m, x: run(f"x {op} 2.5", x), sample((2, 3), "int32"))
    for op in ("&=", "|=", "^=", "<<=", ">>="):
        check(lambda m, x: run(f"x {op} 1", x), sample((2, 3), "int32"))


# -- no NumPy warnings leak -----------------------------------------------------------------------

def test_no_numpy_warnings_leak():
    f, i = reftrace.from_numpy(special()), reftrace.from_numpy(np.array([0, 1, 2]))
    big = reftrace.from_numpy(np.array([3e38], dtype="float32"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for expr in ("f / 0", "0 / f", "f // 0", "f % 0", "f.fmod(0)", "f.log()", "f.sqrt()",
                     "f.rsqrt()", "f.reciprocal()", "f ** -1", "f ** 0.5", "f.exp()", "f.sigmoid()",
                     "big * 10", "big + big", "big - (-big)", "f + 1e300", "f == 1e300",
                     "i / 0", "i.log2()", "f.log10()", "f.log1p()", "f.tan()", "f.lerp(f, 1e10)",
                     "f.round(decimals=300)", "f.where(f > 0, 1e300)", "f.clamp(-1e38, 1e38)",
                     "2 ** f", "f ** f", "f.expm1()", "f.remainder(f)", "f.half()", "f.frac()",
                     "f.add_(f.double() * 1e300)", "f.logical_and(f.double()[0] * 1e300)",
                     "f.clamp_min(f.double()[0] * 1e300)", "f.maximum(f.double()[0] * 1e300)"):
            try:
                eval(expr)
            except (RuntimeError, AttributeError):
                pass


@pytest.mark.parametrize("src", CALLS + INPLACE_CALLS)
def test_traced_graph_is_torchs(src):
    """The whole traced graph (constants, wrapped numbers, types, strides) equals torch's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.jit.trace(_fn(torch, src), _operands(torch)).graph.str(False)
        got = reftrace.jit.trace(_fn(reftrace, src), _operands(reftrace)).graph.str(False)
    assert got == expected


# value names come from the caller's frame: torch's Python-level operators (torch/_tensor.py)
# leave y unnamed, its C-level ones name it
NAMED = ["y // 2", "2 // y", "y ** 2", "2 ** y", "2 - y", "2 / y", "2 % y", "y % 2", "y + 2",
         "y - 2", "y / 2", "-y", "abs(y)", "y == 2", "y.pow(2)", "1 << j", "j << 1", "1 >> j",
         "j & 1", "1 & j", "y @ y"]


@pytest.mark.parametrize("expr", NAMED + [f"[y, y.__i{op}__(1)][1]" for op in
                                          ("add", "sub", "mul", "truediv", "floordiv", "mod",
                                           "pow")])
def test_traced_value_names_are_torchs(expr):
    def program(module):
        ns = {"__name__": "pointwise_names"}
        exec(f"def f(x, i):\n    y = x * 1\n    j = i * 1\n    return {expr}\n", ns)
        return ns["f"]
    args = lambda m: (m.tensor([[1.5, -2.0], [0.5, 3.0]]), m.tensor([[1, 2], [3, 4]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.jit.trace(program(torch), args(torch)).graph.str(False)
        got = reftrace.jit.trace(program(reftrace), args(reftrace)).graph.str(False)
    assert got == expected


OVERLAPS = ["x.add_(x[0])", "x.add_(x.t())", "x[0].add_(x[1])", "x[0].add_(x[0])", "x.add_(x)",
            "x[:, 0].add_(x[0])", "x.eq_(x[0, 0])", "x.clamp_(x[0], x[1])", "x.lerp_(x[0], 0.5)",
            "x.expand(3, 2, 2).sqrt_()", "x[:, :1].expand(2, 2).add_(1)", "x[:, :1].expand(2, 2).neg_()",
            "x.pow_(x)", "x.t().mul_(x.t())", "x.masked_fill_(x > 0, x[0, 0])", "x[0].sub_(x[:, 0])"]


@pytest.mark.parametrize("src", OVERLAPS)
def test_inplace_memory_overlap(src):
    """torch refuses in-place writes that read memory they also write (other than elementwise)."""
    check(eval(f"lambda m, x: ({src}, x)"), sample((2, 2)))


def test_requires_grad_propagates():
    ops = ["x // 2", "x % 2", "x.sign()", "x.floor()", "x.round(decimals=1)", "x.clamp(0, 1)",
           "m.where(x > 0, x, 0.0)", "x.masked_fill(x > 0, 1.0)", "x.lerp(x, 0.5)", "x.isnan()",
           "x ** 2", "2 ** x", "x.positive()", "x == 1", "x.maximum(x)", "x.sigmoid()", "-x"]
    for src in ops:
        check(eval(f"lambda m, x: (lambda x: {src})(x.requires_grad_())"), sample((2, 3)))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_empty_and_permuted(name):
    fn = BINARY[name]
    check(fn, sample((0, 3)), sample((1, 3), seed=1) + 4)
    check(fn, sample((0, 3)), sample((2, 1), seed=1) + 4)  # broadcast error with an empty dim
    a, b = sample((2, 3, 4)), sample((4, 2, 3), seed=1) + 4
    check(lambda m, x, y: fn(m, x.permute(2, 0, 1), y), a, b)
    check(lambda m, x, y: fn(m, x.permute(2, 0, 1), y.permute(1, 2, 0)), a, sample((3, 4, 2), seed=2) + 4)
    check(lambda m, x, y: fn(m, x[:, :, ::2], y[:, :, ::2].transpose(1, 2)), a, sample((2, 2, 6), seed=3) + 4)
    check(lambda m, x, y: fn(m, x.transpose(0, 2)[:1], y), a, sample((3, 1), seed=4) + 4)
    check(fn, sample((4, 2, 3)), sample((3, 4, 2)))  # torch names the rightmost bad dimension


@pytest.mark.parametrize("name", UNARY)
def test_unary_empty_and_permuted(name):
    check(lambda m, x: getattr(m, name)(x), sample((0, 3)))
    check(lambda m, x: getattr(m, name)(x.permute(2, 0, 1)), sample((2, 3, 4)))
    check(lambda m, x: getattr(m, name)(x[:, ::2]), sample((2, 3, 4)))


def test_integer_overflow_wraps():
    check(lambda m, x, y: (x + y, x * y, x - y, -x, abs(x), x ** 3),
          np.array([127, -128, 100], dtype="int8"), np.array([1, -1, 100], dtype="int8"))
    check(lambda m, x: (x + 300, x * 300, x - 1, x // 3), np.array([1, 255, 0], dtype="uint8"))
