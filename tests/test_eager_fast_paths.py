"""The eager fast paths of the entry points (x + y, x * 1.5, x.relu(), x.sum(), x.view(4, -1),
x[3]: reftrace/_operators.py, _install.py, _indexing.py) call the kernel directly when
``_dispatch.PLAIN`` says nothing traces, no math bit exists and nothing observes the funnel,
and no argument requires grad. They must give what the full path (``dispatch``) gives, which
is torch's: values to the bit, dtypes, strides, views, grad_fns, errors, traced graphs.
"""
import threading

import numpy as np
import pytest

import reftrace
from reftrace import _dispatch

torch = pytest.importorskip("torch")

# expressions over x (16 elements, or 4x4 where a 2-d tensor is needed) and y (same shape)
EXPRS = ["x + y", "x * y", "x + 2", "x * 1.5", "2 + x", "x - y", "x / y", "x.relu()", "x.sum()",
         "x.view(4, -1)", "x.view(2, 2, 4)", "x[3]", "x[-16]", "m.permute(1, 0)", "m[1]",
         "m.t().relu()", "m.t() + m", "m.t().view(16)"]
DTYPES = ["float32", "float64", "int64"]
# the kernel, not the funnel: an ulp off torch on main too (fast and full paths agree)
KERNEL_DIFFERS = {("x.sum()", "float64")}


def _inputs(m, dtype):
    a = np.random.default_rng(0).standard_normal(16) * 4
    arr = a.astype(dtype)
    b = (a[::-1] + 0.5).astype(dtype)
    x = m.from_numpy(arr.copy())
    y = m.from_numpy(b.copy())
    return {"x": x, "y": y, "m": m.from_numpy(arr.copy()).view(4, 4)}


def _run(m, expr, dtype):
    env = _inputs(m, dtype)
    try:
        return eval(expr, {}, env), env
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return e, env


def _describe(r, env):
    if isinstance(r, Exception):
        return type(r).__name__, str(r)
    shares = any(r.data_ptr() == t.data_ptr() for t in env.values()) if r.numel() else None
    return (str(r.dtype), tuple(r.shape), r.stride(), r.numpy().tobytes(), shares)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("expr", EXPRS)
def test_fast_path_is_torchs_and_the_full_paths(expr, dtype):
    fast = _describe(*_run(reftrace, expr, dtype))
    with _dispatch.observed():  # every call through dispatch
        full = _describe(*_run(reftrace, expr, dtype))
    th = _describe(*_run(torch, expr, dtype))
    assert fast == full
    if (expr, dtype) in KERNEL_DIFFERS:
        return
    if isinstance(th[1], str) and th[0] != fast[0]:  # (an error in one: report it)
        pytest.fail(f"torch: {th}, reftrace: {fast}")
    assert fast == th


def test_plain_is_on_in_plain_eager_mode():
    # (other tests may have made a conjugate view, which turns it off for good)
    if not _dispatch.MATH_BITS_LIVE[0]:
        assert _dispatch.PLAIN[0] is True
    with _dispatch.observed():
        assert _dispatch.PLAIN[0] is False
        with _dispatch.observed():
            assert _dispatch.PLAIN[0] is False
        assert _dispatch.PLAIN[0] is False
    assert _dispatch.PLAIN[0] is (not _dispatch.MATH_BITS_LIVE[0])


GRAD_EXPRS = ["x + y", "x * 2", "x.relu()", "x.sum()", "x.view(4, -1)", "x[3]", "y + x"]


@pytest.mark.parametrize("expr", GRAD_EXPRS)
@pytest.mark.parametrize("grad_mode", [True, False])
def test_inputs_requiring_grad_record_grad_fns(expr, grad_mode):
    seen = []
    for m in (torch, reftrace):
        env = _inputs(m, "float32")
        env["x"].requires_grad_()
        with m.set_grad_enabled(grad_mode):
            r = eval(expr, {}, env)
        seen.append((r.requires_grad, type(r.grad_fn).__name__ if r.grad_fn is not None else None))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("expr", ["x + y", "x * 1.5", "x.relu()", "x.sum()", "x.view(4, -1)",
                                  "x[3]"])
def test_traced_calls_are_recorded(expr):
    graphs = []
    for m in (torch, reftrace):
        env = _inputs(m, "float32")
        fn = eval(f"lambda x, y: {expr}")
        traced = m.jit.trace(fn, (env["x"], env["y"]))
        graphs.append([n.kind() for n in traced.graph.nodes() if n.kind() != "prim::Constant"])
    assert graphs[1] == graphs[0]


def test_another_threads_trace_turns_the_fast_paths_off():
    started, finish = threading.Event(), threading.Event()

    class Recorder:  # a stand-in tracer: what a thread's active TracingState is to the funnel
        def __init__(self):
            self.ops = []

        def record(self, op, args):
            self.ops.append(op.qualified)
            return _dispatch.run_kernel(op, args)

    rec = Recorder()
    results = {}

    def tracing_thread():
        x = reftrace.ones(4)
        _dispatch.STATE.tracer = rec
        try:
            started.set()
            finish.wait(10)
            results["traced"] = x + x  # (read after: tolist() asks the tracer to warn)
        finally:
            _dispatch.STATE.tracer = None

    t = threading.Thread(target=tracing_thread)
    t.start()
    try:
        assert started.wait(10)
        assert _dispatch.PLAIN[0] is False  # another thread traces
        x = reftrace.ones(4)
        assert (x + x).tolist() == [2.0] * 4  # this thread's calls run eagerly, unrecorded
        assert rec.ops == []
    finally:
        finish.set()
        t.join(10)
    assert rec.ops == ["aten::add.Tensor"] and results["traced"].tolist() == [2.0] * 4
    assert _dispatch.PLAIN[0] is (not _dispatch.MATH_BITS_LIVE[0])


def test_math_bits_in_an_operand():
    for m in (torch, reftrace):
        z = m.tensor([1 + 2j, 3 - 1j])
        r = z.conj() + z.conj()
        assert r.tolist() == [(2 - 4j), (6 + 2j)]
        assert (z.conj() * 2).tolist() == [(2 - 4j), (6 + 2j)]
    assert _dispatch.PLAIN[0] is False  # a conjugate view exists: the full path from now on
