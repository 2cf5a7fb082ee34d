"""Generate tests/data/promotion_table.json from torch 2.13 (the oracle).

    python tests/gen_promotion_table.py

For every pair of the eleven dtypes reftrace supports it records torch.promote_types,
torch.can_cast, and torch.result_type for each combination of the three promotion buckets:
tensors with dimensions ("dim"), 0-dim tensors ("zero") and Python numbers ("python": bool,
int, float, complex). result_type is recorded under both default dtypes float32 and float64,
since wrapped floats and complex numbers follow the default. The table is checked in so that
tests/test_promotion.py checks reftrace against torch on machines without torch.

result_type is symmetric, so only one order of each bucket pair is stored. Where torch answers
with a dtype reftrace does not have (float16 meeting a complex 0-dim tensor or number gives
complex32), the table says so and the test skips the entry.
"""
import json
import os

import torch

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128"]
# one value per Python number type: what matters is the type, not the value
PYTHON_NUMBERS = {"bool": True, "int": 2, "float": 2.5, "complex": 1j}

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "promotion_table.json")


def name(dtype):
    return str(dtype).replace("torch.", "")


def dim(d):
    return torch.zeros(2, dtype=getattr(torch, d))


def zero(d):
    return torch.zeros((), dtype=getattr(torch, d))


def result_types():
    """result_type for every bucket combination under the current default dtype."""
    table = {"dim,dim": {}, "dim,zero": {}, "zero,zero": {}, "dim,python": {}, "zero,python": {}}
    for a in DTYPES:
        table["dim,dim"][a] = {b: name(torch.result_type(dim(a), dim(b))) for b in DTYPES}
        table["dim,zero"][a] = {b: name(torch.result_type(dim(a), zero(b))) for b in DTYPES}
        table["zero,zero"][a] = {b: name(torch.result_type(zero(a), zero(b))) for b in DTYPES}
        table["dim,python"][a] = {k: name(torch.result_type(dim(a), v)) for k, v in PYTHON_NUMBERS.items()}
        table["zero,python"][a] = {k: name(torch.result_type(zero(a), v)) for k, v in PYTHON_NUMBERS.items()}
    return table


def main():
    dt = {d: getattr(torch, d) for d in DTYPES}
    table = {
        "generated_by": "tests/gen_promotion_table.py",
        "torch_version": torch.__version__,
        "dtypes": DTYPES,
        "python_numbers": {k: repr(v) for k, v in PYTHON_NUMBERS.items()},
        "promote_types": {a: {b: name(torch.promote_types(dt[a], dt[b])) for b in DTYPES} for a in DTYPES},
        "can_cast": {a: {b: torch.can_cast(dt[a], dt[b]) for b in DTYPES} for a in DTYPES},
        "result_type": {},
    }
    saved = torch.get_default_dtype()
    try:
        for default in (torch.float32, torch.float64):
            torch.set_default_dtype(default)
            table["result_type"]["default_" + name(default)] = result_types()
    finally:
        torch.set_default_dtype(saved)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
