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


# -- cross ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "complex64"])
def test_cross(dt):
    a, b = sample((4, 3, 3), dt), sample((4, 3, 3), dt, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the dim=None deprecation: test_cross_warns_once)
        check(lambda m, x, y: m.cross(x, y), a, b)
        check(lambda m, x, y: x.cross(y, None), a, b)
    check(lambda m, x, y: m.cross(x, y, dim=2), a, b)
    check(lambda m, x, y: x.cross(y[:1], -2), a, b)  # broadcasts
    check(lambda m, x, y: m.linalg.cross(x.transpose(0, 2), y.transpose(0, 2), dim=0), a, b)


@pytest.mark.parametrize("bad", [
    lambda m: m.cross(m.rand(4, 2), m.rand(4, 2)),
    lambda m: m.cross(m.rand(4, 3), m.rand(3)),
    lambda m: m.cross(m.rand(3, 4), m.rand(3, 4), dim=1),
    lambda m: m.cross(m.rand(3, 3), m.rand(3, 3), dim=2),
])
def test_cross_errors(bad):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(bad)


_WARN_ONCE = """
import warnings, sys
import {m} as m
out = []
for dim in ("none", "none", "explicit None"):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.cross(m.ones(2, 3), m.ones(2, 3)) if dim == "none" else m.cross(m.ones(3), m.ones(3), None)
    out.append([(str(x.message).split(" (Triggered internally")[0], x.category.__name__, x.lineno) for x in w])
print(out)
"""


def test_cross_warns_once():
    """TORCH_WARN_ONCE: the deprecation once per process, at the caller's line."""
    import os
    import subprocess
    import sys
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    runs = [subprocess.run([sys.executable, "-c", _WARN_ONCE.format(m=m)], capture_output=True, text=True,
                           env=env, check=True).stdout for m in ("torch", "reftrace")]
    assert runs[0] == runs[1]
    assert "deprecated" in runs[0]


# -- unravel_index --------------------------------------------------------------------------------

def _same_trace(fn, *arrays):
    """fn(module, *tensors) traced by both libraries: the same graph (without source locations)."""
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    import reftrace
    graphs = []
    for m in (torch, reftrace):
        xs = tuple(m.from_numpy(a.copy()) for a in arrays)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graphs.append(m.jit.trace(lambda *x: fn(m, *x), xs, check_trace=False).graph.str(False))
    assert graphs[1] == graphs[0]


@pytest.mark.parametrize("shape", [(4, 5), 7, [2, 3, 4], (), (3, 0, 2)])
def test_unravel_index(shape):
    idx = np.array([[3, 7, 1], [19, 0, 4]])
    check(lambda m, i: m.unravel_index(i, shape), idx)
    check(lambda m, i: m.unravel_index(i[0, 0], shape), idx.astype(np.int32))
    check(lambda m, i: m.unravel_index(-i, shape), idx)


def test_unravel_index_trace():
    _same_trace(lambda m, i: m.unravel_index(i, (4, 5)), np.array([[3, 7, 1], [19, 0, 4]]))


@pytest.mark.parametrize("bad", [
    lambda m: m.unravel_index(m.tensor(1.0), (2, 3)),
    lambda m: m.unravel_index(m.tensor(True), (2, 3)),
    lambda m: m.unravel_index(m.tensor(1), (2, -3)),
    lambda m: m.unravel_index(m.tensor(1), 2.0),
    lambda m: m.unravel_index(m.tensor(1), (2, 3.0)),
])
def test_unravel_index_errors(bad):
    check(bad)
