"""reftrace's type promotion against torch 2.13's full table (torch-free).

tests/data/promotion_table.json was generated from torch by tests/gen_promotion_table.py; this
file only reads it, so the whole table is checked on machines without torch. One test per row
(a left-hand dtype) reports every mismatching column at once. result_type cells are checked
twice: through reftrace._promotion.result_type (a Python number both bare and wrapped, both
argument orders) and through a real op, ``x + y``.
"""
import json
import os

import pytest

import reftrace
from reftrace import _dtype as D
from reftrace._promotion import result_type
from reftrace._tensor import scalar_to_tensor

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "promotion_table.json")) as f:
    TABLE = json.load(f)

DTYPES = TABLE["dtypes"]
PYTHON_NUMBERS = {"bool": True, "int": 2, "float": 2.5, "complex": 1j}
# torch answers float16 x complex (0-dim or number) with complex32, a dtype reftrace does not
# have (NumPy cannot store it); reftrace answers complex64 there on purpose (spec PRO-7), so
# those entries are skipped
UNSUPPORTED = {"complex32"}


def test_table_covers_reftrace_dtypes():
    assert sorted(DTYPES) == sorted(d.name for d in D.ALL_DTYPES)
    assert TABLE["python_numbers"] == {k: repr(v) for k, v in PYTHON_NUMBERS.items()}


def _mismatches(row, compute):
    """Columns where reftrace's answer differs from torch's, as readable strings."""
    bad = []
    for col, want in row.items():
        if want in UNSUPPORTED:
            continue
        try:
            got = compute(col)
        except Exception as e:  # a crash is a mismatch too, reported with the others
            got = f"{type(e).__name__}: {e}"
        got = got.name if isinstance(got, D.dtype) else got
        if got != want:
            bad.append(f"{col}: reftrace {got}, torch {want}")
    return bad


@pytest.mark.parametrize("a", DTYPES)
def test_promote_types(a):
    bad = _mismatches(TABLE["promote_types"][a],
                      lambda b: reftrace.promote_types(D.BY_NAME[a], D.BY_NAME[b]))
    assert not bad, f"promote_types({a}, ...):\n" + "\n".join(bad)


@pytest.mark.parametrize("a", DTYPES)
def test_can_cast(a):
    bad = _mismatches(TABLE["can_cast"][a], lambda b: reftrace.can_cast(D.BY_NAME[a], D.BY_NAME[b]))
    assert not bad, f"can_cast({a}, ...):\n" + "\n".join(bad)


# -- result_type: the three buckets ---------------------------------------------------------------

def dim(d):
    return reftrace.tensor([0, 0], dtype=D.BY_NAME[d])


def zero(d):
    return reftrace.tensor(0, dtype=D.BY_NAME[d])


def operands(bucket, a, b):
    """The operand pairs that stand for one table cell (a Python number two ways: bare, wrapped)."""
    left, right = bucket.split(",")
    x = dim(a) if left == "dim" else zero(a)
    if right == "dim":
        return [(x, dim(b))]
    if right == "zero":
        return [(x, zero(b))]
    number = PYTHON_NUMBERS[b]
    return [(x, number), (x, scalar_to_tensor(number))]


def _result_type_all(bucket, a, b):
    """result_type over every representation of the cell, in both argument orders; all must agree."""
    answers = {result_type(*pair).name for p in operands(bucket, a, b) for pair in (p, p[::-1])}
    return answers.pop() if len(answers) == 1 else f"inconsistent {sorted(answers)}"


@pytest.fixture
def default_dtype(request):
    saved = reftrace.get_default_dtype()
    reftrace.set_default_dtype(D.BY_NAME[request.param])
    try:
        yield request.param
    finally:
        reftrace.set_default_dtype(saved)


CELLS = [(default.replace("default_", ""), bucket, a)
         for default, buckets in TABLE["result_type"].items()
         for bucket in buckets for a in DTYPES]


@pytest.mark.parametrize("default_dtype,bucket,a", CELLS, indirect=["default_dtype"],
                         ids=[f"{d}-{b}-{a}" for d, b, a in CELLS])
def test_result_type(default_dtype, bucket, a):
    row = TABLE["result_type"]["default_" + default_dtype][bucket][a]
    bad = _mismatches(row, lambda b: _result_type_all(bucket, a, b))
    assert not bad, f"result_type({bucket}) with {a} on the left, default {default_dtype}:\n" + "\n".join(bad)


@pytest.mark.parametrize("default_dtype,bucket,a", CELLS, indirect=["default_dtype"],
                         ids=[f"{d}-{b}-{a}" for d, b, a in CELLS])
def test_add_follows_the_table(default_dtype, bucket, a):
    # the same table through a real op: `x + y` must compute in, and return, the promoted dtype
    row = TABLE["result_type"]["default_" + default_dtype][bucket][a]

    def add_dtype(b):
        x, y = operands(bucket, a, b)[0]  # a Python number as the user writes it: x + 2.5
        return (x + y).dtype
    bad = _mismatches(row, add_dtype)
    assert not bad, f"({bucket}) {a} + ..., default {default_dtype}:\n" + "\n".join(bad)


def test_default_dtype_restored():
    # the fixture above must leave the process-wide default as it found it
    assert reftrace.get_default_dtype() is reftrace.float32
