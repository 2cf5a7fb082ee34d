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


# -- cauchy_, log_normal_, geometric_ -------------------------------------------------------------
# Draws are reftrace's own stream (reftrace/ops/random.py): compared with torch by dtype, shape,
# strides and errors; the distributions by their statistics.

@pytest.mark.parametrize("call", [
    lambda m, x: x.cauchy_(), lambda m, x: x.cauchy_(2.0, 0.5), lambda m, x: x.log_normal_(),
    lambda m, x: x.log_normal_(0.0, 0.25), lambda m, x: x.geometric_(0.3),
    lambda m, x: x.long().geometric_(0.5), lambda m, x: x.half().log_normal_(),
    lambda m, x: x.t().cauchy_(),
])
def test_samplers_fill_in_place(call):
    check(lambda m, x: call(m, x), sample((4, 5)), check_values=False)


def test_sampler_distributions():
    import reftrace
    reftrace.manual_seed(0)
    n = 200_000
    c = reftrace.empty(n, dtype=reftrace.float64).cauchy_(2.0, 0.5)._array
    assert abs(np.median(c) - 2.0) < 0.01 and abs(np.percentile(c, 75) - 2.5) < 0.02
    g = reftrace.empty(n, dtype=reftrace.int64).geometric_(0.25)._array
    assert g.min() == 1 and abs(g.mean() - 4.0) < 0.05  # trials until the first success
    ln = np.log(reftrace.empty(n, dtype=reftrace.float64).log_normal_(1.0, 0.5)._array)
    assert abs(ln.mean() - 1.0) < 0.01 and abs(ln.std() - 0.5) < 0.01


@pytest.mark.parametrize("bad", [
    lambda m: m.empty(3).cauchy_(0, 0), lambda m: m.empty(3).cauchy_(0, -1),
    lambda m: m.empty(3, dtype=m.long).cauchy_(), lambda m: m.empty(3, dtype=m.complex64).cauchy_(),
    lambda m: m.empty(3).log_normal_(1, 0), lambda m: m.empty(3).log_normal_(1, -2.5),
    lambda m: m.empty(3, dtype=m.long).log_normal_(),
    lambda m: m.empty(3).geometric_(0), lambda m: m.empty(3).geometric_(1), lambda m: m.empty(3).geometric_(1.5),
    lambda m: m.empty(3, dtype=m.bool).geometric_(0.5), lambda m: m.empty(3, dtype=m.complex64).geometric_(0.5),
])
def test_sampler_errors(bad):
    check(bad)


def test_samplers_are_nondeterministic_in_traces():
    _same_trace(lambda m, x: (x.cauchy_(), x.log_normal_(), x.geometric_(0.5)), np.zeros(3, np.float32))


# -- resize_, resize_as_ --------------------------------------------------------------------------

def _arange(m, n):
    return m.arange(float(n))


@pytest.mark.parametrize("call", [
    lambda m: _arange(m, 6).resize_(2, 3),
    lambda m: _arange(m, 6).resize_(2),
    lambda m: _arange(m, 6).resize_(0),
    lambda m: _arange(m, 6).resize_([]),
    lambda m: _arange(m, 6)[2:].resize_(2, 2),
    lambda m: _arange(m, 6).view(2, 3).t().resize_(3, 2),       # same sizes: strides kept
    lambda m: _arange(m, 6).view(2, 3).t().resize_(2, 3),
    lambda m: _arange(m, 24).view(2, 3, 4).resize_(2, 3, 2, 2, memory_format=m.channels_last),
    lambda m: _arange(m, 24).view(2, 3, 4).resize_(2, 3, 4, memory_format=m.contiguous_format),
    lambda m: _arange(m, 24).view(2, 3, 4).resize_as_(m.rand(2, 2, 2, 2).to(memory_format=m.channels_last)),
    lambda m: _arange(m, 24).view(2, 3, 4).resize_as_(m.rand(2, 2, 2, 2).to(memory_format=m.channels_last),
                                                     memory_format=m.preserve_format),
    lambda m: _arange(m, 24).view(2, 3, 4).resize_as_(m.rand(4, 2, 2).transpose(0, 2)),
    lambda m: m.resize_as_(_arange(m, 6), m.rand(3, 2).double()),
])
def test_resize_within_storage(call):
    check(lambda m: (lambda r: (r, r.storage_offset()))(call(m)))


def test_resize_grows_the_storage():
    def grow(m, view):
        x = _arange(m, 6)
        v = x[2:] if view else x
        v.resize_(3, 3)
        # the old elements stay; the grown ones are uninitialised (not compared)
        return (v.flatten()[:4 if view else 6], v.stride(), v.storage_offset(), x.flatten()[:6],
                v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
    check(grow, True)
    check(grow, False)


@pytest.mark.parametrize("bad", [
    lambda m: m.rand(3, requires_grad=True).resize_(2),
    lambda m: m.rand(3).resize_(-2),
    lambda m: m.rand(3).resize_(2, memory_format=m.preserve_format),
    lambda m: m.rand(3).resize_(2, memory_format=m.channels_last),
    lambda m: m.rand(3, requires_grad=True).resize_as_(m.rand(2)),
    lambda m: m.rand(3).resize_as_(m.rand(2), memory_format=m.channels_last),
])
def test_resize_errors(bad):
    check(bad)


def test_resize_in_a_trace():
    """Nothing recorded: a TracerWarning, and the resized tensor is a constant afterwards."""
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    import reftrace
    seen = []
    for m in (torch, reftrace):
        def f(x):
            y = x.clone().resize_(25, 5)
            return y * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            g = m.jit.trace(f, (m.ones(5, 5, 5),), check_trace=False).graph.str(False)
        msgs = [str(x.message) for x in w if x.category.__name__ == "TracerWarning"]
        seen.append((g.replace("<Tensor>", ""), msgs, [x.lineno for x in w if "resize_" in str(x.message)]))
    assert seen[0] == seen[1]
    assert "prim::Constant" in seen[0][0] and seen[0][1][0].startswith("resize_ can't be represented")


# -- trapezoid, trapz, cumulative_trapezoid (Integration.cpp's order of operations) ---------------

@pytest.mark.parametrize("dt", ["float32", "int64", "float64"])
def test_trapezoid_rules(dt):
    y, x = sample((3, 6), dt), np.sort(sample((6,), "float32", seed=4))
    for name in ("trapezoid", "trapz", "cumulative_trapezoid"):
        check(lambda m, y: getattr(m, name)(y), y)
        check(lambda m, y: getattr(m, name)(y, dx=0.5, dim=0), y)
        check(lambda m, y, x: getattr(m, name)(y, x), y, x)
        check(lambda m, y, x: getattr(m, name)(y, x[None, :].expand(3, 6), dim=1), y, x)
        check(lambda m, y, x: getattr(m, name)(y.t(), x[:3], dim=0), y, x)
    check(lambda m, y: (m.trapezoid(y[:, :0]), m.trapz(y[:, :0], dx=2.0)), y)


@pytest.mark.parametrize("bad", [
    lambda m: m.trapezoid(m.ones(3, dtype=m.bool)),
    lambda m: m.trapezoid(m.ones(3), m.ones(3, dtype=m.bool)),
    lambda m: m.trapezoid(m.ones(3), m.ones(4)),
    lambda m: m.cumulative_trapezoid(m.ones(3), m.ones(4)),
    lambda m: m.trapezoid(m.ones(3), dx=True),
    lambda m: m.cumulative_trapezoid(m.ones(3), dx=1j),
])
def test_trapezoid_errors(bad):
    check(bad)


def test_diff_of_order_zero_ignores_prepend_and_append():
    check(lambda m, x: m.diff(x, 0, 0, x[:1], x[:2]), sample((5, 5)))


# -- gather / take_along_dim edge cases --------------------------------------------------------

def test_gather_scatter_with_an_empty_index_skip_shape_checks():
    x = sample((5,))
    check(lambda m, x: m.gather(x, 0, m.zeros(2, 0, dtype=m.long)), x)
    check(lambda m, x: m.gather(x, 0, m.zeros(2, 0, 3, dtype=m.long)), x)
    check(lambda m, x: m.scatter(x, 0, m.zeros(2, 0, dtype=m.long), m.ones(2, 0)), x)
    check(lambda m, x: m.gather(x.view(1, 5), 0, m.zeros(0, dtype=m.long)), x)
    check(lambda m, x: m.gather(x, 0, m.zeros(2, 1, dtype=m.long)), x)  # non-empty: checked


def test_take_along_dim_wraps_indices_along_a_dim():
    y = sample((5, 5))
    check(lambda m, y: m.take_along_dim(y, m.tensor([[-1, -5, -6, 5, -10]]), 1), y)
    check(lambda m, y: m.take_along_dim(y, m.tensor([-1])), y)  # flattened: no wrapping
    check(lambda m, y: m.gather(y, 1, m.tensor([[-1]])), y)


@pytest.mark.parametrize("dt", ["uint8", "int8", "int64", "float32"])
def test_index_add_alpha_converted_to_the_dtype(dt):
    x, src = sample((4, 3), dt), sample((2, 3), dt, seed=5)
    check(lambda m, x, s: m.index_add(x, 0, m.tensor([0, 2]), s, alpha=-1), x, src)
    check(lambda m, x, s: x.index_add_(0, m.tensor([3, 3]), s, alpha=3), x, src)


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "int64", "uint8"])
def test_gcd_as_torch_computes_it(dt):
    info = np.iinfo(dt)
    v = np.array([x for x in (0, -1, 1, -55, 55, info.min + 1, info.max, info.min, 12, -18)
                  if info.min <= x <= info.max], dtype=dt)
    a, b = np.repeat(v, len(v)), np.tile(v, len(v))
    check(lambda m, a, b: m.gcd(a, b), a, b)  # abs(min) stays min: gcd(0, -128) is -128 in int8
    check(lambda m, a, b: a.gcd_(b), a, b)


# -- kthvalue: torch's quickselect decides which of equal values' indices comes back -----------

@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dt", ["int64", "float32", "int8"])
def test_kthvalue_ties_pick_torchs_index(seed, dt):
    a = sample((6, 40), dt, low=-3, high=3, seed=seed)
    if dt == "float32":
        a = np.round(a)  # ties
        a[1, ::7] = np.nan
    for k in (1, 2, 17, 40):
        check(lambda m, x: m.kthvalue(x, k), a)
        check(lambda m, x: x.t().kthvalue(k, 0, keepdim=True), a)


def test_einsum_sums_unlisted_ellipsis_dims():
    check(lambda m, a, b: m.einsum("...ik, ...j -> ij", a, b), sample((1, 2, 3)), sample((3,), seed=1))
    check(lambda m, a, b: m.einsum("...ik,...j->ij", a, b), sample((4, 2, 3)), sample((4, 3), seed=1))
    check(lambda m, a: m.einsum("i->", a), sample((3,), "int32"))   # one operand summed: int64


# -- tracing the functional fill fails as torch's does -------------------------------------------

@pytest.mark.parametrize("value", [2.0, True, 3, "tensor"])
def test_tracing_functional_fill_raises_torchs_internal_assert(value):
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")
    import reftrace
    from oracle import normalize_message
    errors = []
    for m in (torch, reftrace):
        v = m.tensor(2.0) if value == "tensor" else value
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError) as e:
                m.jit.trace(lambda x: m.fill(x, v), (m.rand(3),))
        errors.append(normalize_message(e.value))
    assert errors[1] == errors[0]
    check(lambda m, x: m.fill(x, value if value != "tensor" else m.tensor(2.0)), sample((3,)))


# -- gradient (ReduceOps.cpp: every overload, both edge orders) ---------------------------------

@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("dt", ["float32", "float64", "int64"])
def test_gradient(edge_order, dt):
    y = sample((4, 5), dt)
    c0, c1 = np.cumsum(sample((4,), low=0.5, seed=1)), np.cumsum(sample((5,), low=0.5, seed=2))
    e = edge_order
    check(lambda m, y: m.gradient(y, edge_order=e), y)
    check(lambda m, y: m.gradient(y, spacing=2.0, edge_order=e), y)
    check(lambda m, y: m.gradient(y, spacing=0.5, dim=1, edge_order=e), y)
    check(lambda m, y: m.gradient(y, spacing=3, dim=[1, 0], edge_order=e), y)
    check(lambda m, y: m.gradient(y, dim=[-1], edge_order=e), y)
    check(lambda m, y: m.gradient(y, spacing=[2.0, 0.5], edge_order=e), y)
    check(lambda m, y: m.gradient(y, spacing=[0.25], dim=0, edge_order=e), y)
    check(lambda m, y: m.gradient(y, spacing=[2, 3.0], dim=[0, 1], edge_order=e), y)
    check(lambda m, y, a, b: m.gradient(y, spacing=[a, b], edge_order=e), y, c0, c1)
    check(lambda m, y, b: m.gradient(y, spacing=[b], dim=1, edge_order=e), y, c1)
    check(lambda m, y, a: m.gradient(y.t(), spacing=[a], dim=[1], edge_order=e), y, c0)


@pytest.mark.parametrize("bad", [
    lambda m: m.gradient(m.rand(5), edge_order=3),
    lambda m: m.gradient(m.rand(1)),
    lambda m: m.gradient(m.rand(2), edge_order=2),
    lambda m: m.gradient(m.rand(5), spacing=[1.0, 2.0]),
    lambda m: m.gradient(m.rand(5, 3), spacing=[1.0, 2.0], dim=[0]),
    lambda m: m.gradient(m.rand(5, 3), dim=[0, 0]),
    lambda m: m.gradient(m.rand(5, 3), dim=[0, -2]),
    lambda m: m.gradient(m.ones(5, dtype=m.uint8)),
])
def test_gradient_errors(bad):
    check(bad)


def test_gradient_traces():
    _same_trace(lambda m, y: m.gradient(y, spacing=2.0, dim=1), sample((4, 5)))
    _same_trace(lambda m, y, c: m.gradient(y, spacing=[c], dim=[0]), sample((4, 5)), np.arange(4.0, dtype=np.float32))


# -- sort(stable=False), argsort, mode: which of equal values comes first is std::sort's ----------

@pytest.mark.parametrize("n", [5, 17, 100, 1000])
@pytest.mark.parametrize("dt", ["bool", "int64", "float32", "int8"])
def test_unstable_sort_ties_follow_std_sort(n, dt):
    a = sample((3, n), dt, low=0, high=3)
    if dt == "float32":
        a = np.round(a)
        a[0, ::5] = np.nan
    check(lambda m, x: m.sort(x), a)
    check(lambda m, x: x.sort(0, descending=True), a)
    check(lambda m, x: m.argsort(x, descending=True), a)
    check(lambda m, x: m.sort(x, stable=True, descending=True), a)
    check(lambda m, x: x.t().argsort(0), a)
    check(lambda m, x: m.mode(x), a)
    check(lambda m, x: x.t().mode(0, keepdim=True), a)


def test_long_1d_integer_sort_is_stable_radix():
    check(lambda m, x: m.sort(x), sample((40000,), "int64", low=0, high=50))
