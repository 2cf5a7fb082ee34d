"""logspace, unravel_index, cross, gradient, resize_ / resize_as_, hash_tensor and the random
samplers cauchy_ / geometric_ / log_normal_ against torch 2.13: values (where not random),
dtypes, strides, warnings and errors."""
import warnings

import numpy as np
import pytest

from oracle import check, sample, torch

# -- logspace -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int64", "int32", "uint8", "complex64"])
@pytest.mark.parametrize("args", [(0, 1, 5), (-3, 0, 7), (2, -2, 9), (0.5, 3.7, 11, 2.0), (1, 1, 1),
                                  (0, 3, 4, 3), (-1.3, 2.2, 0), (0, 10, 101, 1.1), (0, 2, 4)])
def test_logspace(dt, args):
    check(lambda m: m.logspace(*args, dtype=getattr(m, dt)), rtol=1e-3 if dt == "float16" else 1.3e-6)


def test_logspace_overloads_and_defaults():
    check(lambda m: m.logspace(0, 3, 4))
    check(lambda m: m.logspace(1 + 1j, 3, 4))
    check(lambda m: m.logspace(m.tensor(0), 3, 4))
    check(lambda m: m.logspace(0.5, m.tensor(3.0), 4, base=2))
    check(lambda m: m.logspace(m.tensor(0), m.tensor(3), 4, dtype=m.float64))


@pytest.mark.parametrize("bad", [
    lambda m: m.logspace(0, 1, -1),
    lambda m: m.logspace(0, 1, 5, base=2, dtype=m.bool),
    lambda m: m.logspace(m.tensor([0.0, 1]), 1, 5),
    lambda m: m.logspace(0, m.tensor([0.0, 1]), 5),
    lambda m: m.logspace(m.tensor(0.0), m.tensor([1.0]), 5),
])
def test_logspace_errors(bad):
    check(bad)


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_logspace_out_of_range_start(steps):
    check(lambda m: m.logspace(-1.3, 2.2, steps, dtype=m.uint8))
    check(lambda m: m.logspace(-300, 300.5, steps, dtype=m.uint8))
