"""Which classes of torch.nn.modules.__all__ and functions of torch.nn.functional reftrace has.

    python tests/test_nn_coverage.py        # counts, and what is missing with the reason

Every name is either present in reftrace.nn / reftrace.nn.functional or listed in MISSING with
the reason; the test fails on a name that is neither (a new torch name, or one removed by
accident), and on a MISSING entry that has since been implemented (so the list stays true).
"""
import inspect
import sys

import pytest

import reftrace.nn
import reftrace.nn.functional

MISSING = {
    # classes
    # functions
    "grouped_mm": "out of scope: CUDA/float8 only (issue 11)",
    "scaled_mm": "out of scope: CUDA/float8 only (issue 11)",
    "scaled_grouped_mm": "out of scope: CUDA/float8 only (issue 11)",
}
# names torch.nn.functional exposes that are not part of its API (imports, typing helpers)
NOT_API = {"Optional", "Callable", "boolean_dispatch", "handle_torch_function",
           "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "assert_int_or_pair"}


def torch_names():
    import torch.nn.functional as F
    import torch.nn.modules as M
    functions = sorted(n for n in dir(F) if not n.startswith("_") and n not in NOT_API
                       and callable(getattr(F, n)) and not inspect.isclass(getattr(F, n))
                       and not inspect.ismodule(getattr(F, n)))
    return sorted(M.__all__), functions


def coverage(nn, functional):
    classes, functions = torch_names()
    have_c = [n for n in classes if hasattr(nn, n)]
    have_f = [n for n in functions if hasattr(functional, n)]
    return classes, functions, have_c, have_f


def test_every_name_is_present_or_explained():
    from oracle import torch
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    classes, functions, have_c, have_f = coverage(reftrace.nn, reftrace.nn.functional)
    unexplained = [n for n in classes + functions
                   if n not in have_c + have_f and n not in MISSING]
    assert unexplained == []
    stale = [n for n in MISSING if n in have_c + have_f]
    assert stale == [], "implemented now: remove from MISSING"


if __name__ == "__main__":
    classes, functions, have_c, have_f = coverage(reftrace.nn, reftrace.nn.functional)
    print(f"torch.nn.modules.__all__: {len(have_c)} of {len(classes)} classes")
    print(f"torch.nn.functional:      {len(have_f)} of {len(functions)} functions")
    for n in classes + functions:
        if n not in have_c + have_f:
            print(f"  missing {n}: {MISSING.get(n, 'UNEXPLAINED')}", file=sys.stdout)
