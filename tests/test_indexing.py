"""Tensor indexing (x[...], x[...] = v) and the indexing ops, against torch 2.13.

Two things must match torch: the eager results (values, strides, aliasing, errors) and the
sequence of op calls an index expression makes, because the tracer records exactly those calls.
PATTERNS below is the reference table: each expression with the ops torch.jit.trace records for
it (torch 2.13, collected with torch.jit.trace(fn, inputs).graph; tensors print as T, a traced
int argument as Int, open slice ends as INT64_MAX). ``test_op_sequence`` runs each under a
recording stand-in tracer; ``test_table_is_torchs`` re-derives the table from torch when it is
installed; ``test_eager`` compares results with ``oracle.check``.

    expression               ops recorded while tracing (torch 2.13)
    x[0]                     select(T, 0, 0)
    x[-1]                    select(T, 0, -1)                       negative index kept
    x[0, 1]                  select(T, 0, 0); select(T, 0, 1)
    x[1:]                    slice(T, 0, 1, INT64_MAX, 1)
    x[:]                     slice(T, 0, 0, INT64_MAX, 1)           full slices are recorded
    x[:, 1:]                 slice(T, 0, 0, INT64_MAX, 1); slice(T, 1, 1, INT64_MAX, 1)
    x[::2]                   slice(T, 0, 0, INT64_MAX, 2)
    x[1:-1, ::3]             slice(T, 0, 1, -1, 1); slice(T, 1, 0, INT64_MAX, 3)
    x[-100:2]                slice(T, 0, -100, 2, 1)                bounds kept verbatim
    x[...]                   alias(T)
    x[()]                    alias(T)
    x[None]                  unsqueeze(T, 0)
    x[:, None]               slice(T, 0, 0, INT64_MAX, 1); unsqueeze(T, 1)
    x[..., None]             unsqueeze(T, 2)
    x[None, 0, None]         unsqueeze(T, 0); select(T, 1, 0); unsqueeze(T, 1)
    x[True]                  unsqueeze(T, 0); empty([1], 4, 0, cpu, None, None); fill_(T, 0.0); index(T, [T])
    x[False]                 unsqueeze(T, 0); empty([0], 4, 0, cpu, None, None); index(T, [T])
    x3[..., 1]               select(T, 2, 1)
    x3[0, ..., 1]            select(T, 0, 0); select(T, 1, 1)
    x3[:, 1, :]              slice(T, 0, ...); select(T, 1, 1); slice(T, 1, 0, INT64_MAX, 1)
    x[i]                     index(T, [T])
    x[:, i]                  slice(T, 0, 0, INT64_MAX, 1); index(T, [None, T])
    x[m]  (bool mask)        index(T, [T])
    x3[i, :, j]              slice(T, 1, 0, INT64_MAX, 1); index(T, [T, None, T])
    x[i, 1]                  select(T, 1, 1); index(T, [T])
    x[i, None]               unsqueeze(T, 1); index(T, [T])
    x[[0, 2]]                to(T, cpu, 4, False, False, None); index(T, [T])   a list is a constant tensor
    x[t0]  (0-dim long)      select(T, 0, Int)                      the index stays dynamic
    x[t0:]                   slice(T, 0, Int, INT64_MAX, 1)
    y = x.clone(); then
    y[0] = 5                 select(T, 0, 0); fill_(T, T)           the number: 0-dim constant of x's dtype
    y[0, 1] = 4              select(T, 0, 0); select(T, 0, 1); copy_(T, T, False)   0-dim dst: same shapes
    y[:, 1] = 4              slice(T, 0, ...); select(T, 1, 1); fill_(T, T)
    y[...] = 1               fill_(T, T)
    y[None] = 1, y[True] = 1 unsqueeze(T, 0); fill_(T, T)
    y[False] = 1             (nothing)
    y[0] = v(4)              select(T, 0, 0); copy_(T, T, False)
    y[0] = v(1, 4)           select(T, 0, 0); view(T, [4]); copy_(T, T, False)
    y[0] = v(1)              select(T, 0, 0); view(T, []); expand(T, [4], False); copy_(T, T, False)
    y[...] = v(4)            view(T, [4]); expand(T, [3, 4], False); copy_(T, T, False)
    y[i] = 1                 index_put_(T, [T], T, False)
    y[m] = v(1, 8)           view(T, [8]); index_put_(T, [T], T, False)
    y[:, i] = v(1, 3, 2)     slice(T, 0, ...); view(T, [3, 2]); index_put_(T, [None, T], T, False)
    y[t0] = 7                select(T, 0, Int); fill_(T, T)
"""
import warnings

import numpy as np
import pytest

import reftrace
from reftrace._dispatch import STATE, run_kernel
from oracle import check, requires_torch, sample, torch

INT64_MAX = 2 ** 63 - 1

# -- inputs ----------------------------------------------------------------------------------------
X = sample((3, 4))
INPUTS = {
    "x": X,
    "x3": sample((3, 3, 4), seed=1),
    "i": np.array([0, 2]),
    "j": np.array([1, 3]),
    "m": X > 0,                                   # a bool mask over x (8 True entries)
    "t0": np.array(1),
    "b0": np.array(True),
    "v4": sample((4,), seed=2),
    "v14": sample((1, 4), seed=3),
    "v1": sample((1,), seed=4),
    "v18": sample((1, 8), seed=5),
    "v132": sample((1, 3, 2), seed=6),
}
assert int(INPUTS["m"].sum()) == 8


def _set(index, value=None):
    """y = x.clone(); y[index] = value (the extra input when value is None); return y."""
    def fn(x, *v):
        y = x.clone()
        y[index] = v[0] if value is None else value
        return y
    return fn


S = slice(None)
FULL = "slice(T, 0, 0, INT64_MAX, 1)"
# (label, function of tensors, input names, ops recorded while tracing)
PATTERNS = [
    ("x[0]", lambda x: x[0], "x", "select(T, 0, 0)"),
    ("x[-1]", lambda x: x[-1], "x", "select(T, 0, -1)"),
    ("x[0, 1]", lambda x: x[0, 1], "x", "select(T, 0, 0); select(T, 0, 1)"),
    ("x[1:]", lambda x: x[1:], "x", "slice(T, 0, 1, INT64_MAX, 1)"),
    ("x[:]", lambda x: x[:], "x", FULL),
    ("x[:, 1:]", lambda x: x[:, 1:], "x", f"{FULL}; slice(T, 1, 1, INT64_MAX, 1)"),
    ("x[:, :]", lambda x: x[:, :], "x", f"{FULL}; slice(T, 1, 0, INT64_MAX, 1)"),
    ("x[::2]", lambda x: x[::2], "x", "slice(T, 0, 0, INT64_MAX, 2)"),
    ("x[1:-1, ::3]", lambda x: x[1:-1, ::3], "x", "slice(T, 0, 1, -1, 1); slice(T, 1, 0, INT64_MAX, 3)"),
    ("x[-100:2]", lambda x: x[-100:2], "x", "slice(T, 0, -100, 2, 1)"),
    ("x[1:100]", lambda x: x[1:100], "x", "slice(T, 0, 1, 100, 1)"),
    ("x[-2**63:]", lambda x: x[-2 ** 63:], "x", "slice(T, 0, -4611686018427387904, INT64_MAX, 1)"),
    ("x[:2**70]", lambda x: x[:2 ** 70], "x", FULL),
    ("x[...]", lambda x: x[...], "x", "alias(T)"),
    ("x[()]", lambda x: x[()], "x", "alias(T)"),
    ("x[None]", lambda x: x[None], "x", "unsqueeze(T, 0)"),
    ("x[:, None]", lambda x: x[:, None], "x", f"{FULL}; unsqueeze(T, 1)"),
    ("x[..., None]", lambda x: x[..., None], "x", "unsqueeze(T, 2)"),
    ("x[None, 0, None]", lambda x: x[None, 0, None], "x", "unsqueeze(T, 0); select(T, 1, 0); unsqueeze(T, 1)"),
    ("x[True]", lambda x: x[True], "x",
     "unsqueeze(T, 0); empty([1], 4, 0, cpu, None, None); fill_(T, 0.0); index(T, [T])"),
    ("x[False]", lambda x: x[False], "x", "unsqueeze(T, 0); empty([0], 4, 0, cpu, None, None); index(T, [T])"),
    ("x[True, 1]", lambda x: x[True, 1], "x",
     "unsqueeze(T, 0); empty([1], 4, 0, cpu, None, None); fill_(T, 0.0); select(T, 1, 1); index(T, [T])"),
    ("x3[..., 1]", lambda x: x[..., 1], "x3", "select(T, 2, 1)"),
    ("x3[0, ..., 1]", lambda x: x[0, ..., 1], "x3", "select(T, 0, 0); select(T, 1, 1)"),
    ("x3[:, 1, :]", lambda x: x[:, 1, :], "x3", f"{FULL}; select(T, 1, 1); slice(T, 1, 0, INT64_MAX, 1)"),
    ("x[(0,)]", lambda x: x[(0,)], "x", "select(T, 0, 0)"),
    ("x[i]", lambda x, i: x[i], "x i", "index(T, [T])"),
    ("x[:, i]", lambda x, i: x[:, i], "x i", f"{FULL}; index(T, [None, T])"),
    ("x[..., i]", lambda x, i: x[..., i], "x i", "index(T, [None, T])"),
    ("x[i, ...]", lambda x, i: x[i, ...], "x i", "index(T, [T])"),
    ("x[i, i]", lambda x, i: x[i, i], "x i", "index(T, [T, T])"),
    ("x[0:2, i]", lambda x, i: x[0:2, i], "x i", "slice(T, 0, 0, 2, 1); index(T, [None, T])"),
    ("x[None, i]", lambda x, i: x[None, i], "x i", "unsqueeze(T, 0); index(T, [None, T])"),
    ("x[i, None]", lambda x, i: x[i, None], "x i", "unsqueeze(T, 1); index(T, [T])"),
    ("x[i, 1]", lambda x, i: x[i, 1], "x i", "select(T, 1, 1); index(T, [T])"),
    ("x[1, i]", lambda x, i: x[1, i], "x i", "select(T, 0, 1); index(T, [T])"),
    ("x[m]", lambda x, m: x[m], "x m", "index(T, [T])"),
    ("x3[i, :, j]", lambda x, i, j: x[i, :, j], "x3 i j", "slice(T, 1, 0, INT64_MAX, 1); index(T, [T, None, T])"),
    ("x3[:, i, j]", lambda x, i, j: x[:, i, j], "x3 i j", f"{FULL}; index(T, [None, T, T])"),
    ("x[[0, 2]]", lambda x: x[[0, 2]], "x", "to(T, cpu, 4, False, False, None); index(T, [T])"),
    ("x[[0, 2], [1, 3]]", lambda x: x[[0, 2], [1, 3]], "x",
     "to(T, cpu, 4, False, False, None); to(T, cpu, 4, False, False, None); index(T, [T, T])"),
    ("x[[True, False, True]]", lambda x: x[[True, False, True]], "x", "to(T, cpu, 11, False, False, None); index(T, [T])"),
    ("x[range(2)]", lambda x: x[range(2)], "x", "to(T, cpu, 4, False, False, None); index(T, [T])"),
    ("x[t0]", lambda x, t: x[t], "x t0", "select(T, 0, Int)"),
    ("x[t0, 1]", lambda x, t: x[t, 1], "x t0", "select(T, 0, Int); select(T, 0, 1)"),
    ("x[b0]", lambda x, b: x[b], "x b0",
     "unsqueeze(T, 0); empty([1], 4, 0, cpu, None, None); fill_(T, 0.0); index(T, [T])"),
    ("x[t0:]", lambda x, t: x[t:], "x t0", "slice(T, 0, Int, INT64_MAX, 1)"),
    ("x[::t0]", lambda x, t: x[::t], "x t0", "slice(T, 0, 0, INT64_MAX, Int)"),
    # setitem
    ("y[0] = 5", _set(0, 5), "x", "clone(T, None); select(T, 0, 0); fill_(T, T)"),
    ("y[0] = 2.5", _set(0, 2.5), "x", "clone(T, None); select(T, 0, 0); fill_(T, T)"),
    ("y[0, 1] = 4", _set((0, 1), 4), "x", "clone(T, None); select(T, 0, 0); select(T, 0, 1); copy_(T, T, False)"),
    ("y[:, 1] = 4", _set((S, 1), 4), "x", f"clone(T, None); {FULL}; select(T, 1, 1); fill_(T, T)"),
    ("y[1:] = 0", _set(slice(1, None), 0), "x", "clone(T, None); slice(T, 0, 1, INT64_MAX, 1); fill_(T, T)"),
    ("y[...] = 1", _set(Ellipsis, 1), "x", "clone(T, None); fill_(T, T)"),
    ("y[None] = 1", _set(None, 1), "x", "clone(T, None); unsqueeze(T, 0); fill_(T, T)"),
    ("y[True] = 1", _set(True, 1), "x", "clone(T, None); unsqueeze(T, 0); fill_(T, T)"),
    ("y[False] = 1", _set(False, 1), "x", "clone(T, None)"),
    ("y[0] = v(4)", _set(0), "x v4", "clone(T, None); select(T, 0, 0); copy_(T, T, False)"),
    ("y[0] = v(1, 4)", _set(0), "x v14", "clone(T, None); select(T, 0, 0); view(T, [4]); copy_(T, T, False)"),
    ("y[0] = v(1)", _set(0), "x v1",
     "clone(T, None); select(T, 0, 0); view(T, []); expand(T, [4], False); copy_(T, T, False)"),
    ("y[0] = t0", _set(0), "x t0", "clone(T, None); select(T, 0, 0); fill_(T, T)"),
    ("y[...] = v(4)", _set(Ellipsis), "x v4",
     "clone(T, None); view(T, [4]); expand(T, [3, 4], False); copy_(T, T, False)"),
    ("y[:, 2] = x[:, 0]", lambda x: _set((S, 2), x[:, 0])(x), "x",
     f"{FULL}; select(T, 1, 0); clone(T, None); {FULL}; select(T, 1, 2); copy_(T, T, False)"),
    ("y[0, 1:3] = v(1, 2)", lambda x, v: _set((0, slice(1, 3)))(x, v[:, :2]), "x v14",
     "slice(T, 0, 0, INT64_MAX, 1); slice(T, 1, 0, 2, 1); clone(T, None); select(T, 0, 0); "
     "slice(T, 0, 1, 3, 1); view(T, [2]); copy_(T, T, False)"),
    ("y[i] = 1", _set(None), "x i", None),  # placeholder replaced below
    ("y[m] = 1.5", lambda x, m: _set(m, 1.5)(x), "x m", "clone(T, None); index_put_(T, [T], T, False)"),
    ("y[m] = v(1, 8)", lambda x, m, v: _set(m)(x, v), "x m v18",
     "clone(T, None); view(T, [8]); index_put_(T, [T], T, False)"),
    ("y[:, i] = v(1, 3, 2)", lambda x, i, v: _set((S, i))(x, v), "x i v132",
     f"clone(T, None); {FULL}; view(T, [3, 2]); index_put_(T, [None, T], T, False)"),
    ("y[i, 1:] = 2", lambda x, i: _set((i, slice(1, None)), 2)(x), "x i",
     "clone(T, None); slice(T, 1, 1, INT64_MAX, 1); index_put_(T, [T], T, False)"),
    ("y[[0, 2]] = 1", _set([0, 2], 1), "x",
     "clone(T, None); to(T, cpu, 4, False, False, None); index_put_(T, [T], T, False)"),
    ("y[t0] = 7", lambda x, t: _set(t, 7)(x), "x t0", "clone(T, None); select(T, 0, Int); fill_(T, T)"),
    ("x[0] = v(4) in place", lambda x, v: x.__setitem__(0, v) or x, "x v4", "select(T, 0, 0); copy_(T, T, False)"),
]
PATTERNS[[p[0] for p in PATTERNS].index("y[i] = 1")] = (
    "y[i] = 1", lambda x, i: _set(i, 1)(x), "x i", "clone(T, None); index_put_(T, [T], T, False)")


# -- a stand-in tracer that records op calls -------------------------------------------------------

def _fmt_arg(a):
    if isinstance(a, (list, tuple)):
        return "[" + ", ".join(_fmt_arg(e) for e in a) + "]"
    if isinstance(a, reftrace.Tensor) or (torch is not None and isinstance(a, torch.Tensor)):
        return "T"
    if isinstance(a, reftrace.dtype):
        return str(a.scalar_type)
    if isinstance(a, reftrace.device) or (torch is not None and isinstance(a, torch.device)):
        return str(a)
    if hasattr(a, "name") and hasattr(a, "value"):  # layout / memory format enums record as ints
        return str(a.value)
    if a == INT64_MAX and type(a) is int:
        return "INT64_MAX"
    return repr(a)


class Recorder:
    """Enough of a TracingState to see which ops an expression calls: each call is recorded as
    name(args) and run eagerly (a tensor given for an int argument is unboxed, shown as Int)."""

    def __init__(self):
        self.calls = []

    def record(self, op, args):
        shown, run = [], []
        for arg, a in zip(op.schema.arguments, args):
            base = arg.type.base
            if isinstance(a, reftrace.Tensor) and not arg.type.is_list and base != "Tensor":
                shown.append("Int")
                a = a._to_number()
            else:
                shown.append(_fmt_arg(a))
            run.append(a)
        self.calls.append(f"{op.name.split('::')[1]}({', '.join(shown)})")
        STATE.tracer = None  # kernels run untraced, as under torch's tracer
        try:
            return run_kernel(op, run)
        finally:
            STATE.tracer = self


def record(fn, *args):
    rec = Recorder()
    STATE.tracer = rec
    try:
        fn(*args)
    finally:
        STATE.tracer = None
    return "; ".join(rec.calls)


def _inputs(module, names):
    conv = reftrace.from_numpy if module is reftrace else torch.from_numpy
    return [conv(INPUTS[n].copy()) for n in names.split()]


@pytest.mark.parametrize("label,fn,names,expected", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_op_sequence(label, fn, names, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert record(fn, *_inputs(reftrace, names)) == expected


def torch_ops(fn, inputs):
    """The ops torch.jit.trace records for fn, in the table's notation."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = torch.jit.trace(fn, tuple(inputs), check_trace=False).graph

    def arg(v):
        node = v.node()
        if node.kind() == "prim::Constant" and v.type().kind() != "TensorType":
            return _fmt_arg(v.toIValue())
        if node.kind() == "prim::ListConstruct":
            return "[" + ", ".join(arg(e) for e in node.inputs()) + "]"
        if node.kind() == "aten::Int":
            return "Int"
        return "T"
    hidden = ("prim::Constant", "prim::ListConstruct", "aten::Int")
    return "; ".join(f"{n.kind().split('::')[1]}({', '.join(arg(v) for v in n.inputs())})"
                     for n in graph.nodes() if n.kind() not in hidden)


@requires_torch
@pytest.mark.parametrize("label,fn,names,expected", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_table_is_torchs(label, fn, names, expected):
    assert torch_ops(fn, _inputs(torch, names)) == expected


@pytest.mark.parametrize("label,fn,names,expected", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_eager(label, fn, names, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, *a: fn(*a), *[INPUTS[n] for n in names.split()])


# -- eager getitem: views, errors, odd index objects -------------------------------------------------

A = sample((3, 4))
Z = np.array(1.5, np.float32)


def test_getitem_views_and_strides():
    check(lambda m, x: x[1], A)
    check(lambda m, x: x[:, 1], A)
    check(lambda m, x: x.t()[1:, ::2], A)
    check(lambda m, x: x[..., ...], A)
    check(lambda m, x: x[5:2], A)
    check(lambda m, x: x[:, -10:], A)
    check(lambda m, x: x[0:2][..., 1:], A)
    check(lambda m, x: x[np.int64(1)], A)
    check(lambda m, x: x[True, None], A)
    check(lambda m, x: x[...], Z)
    check(lambda m, x: x[None], Z)
    check(lambda m, x: x[True], Z)
    check(lambda m, x: x[..., None], Z)
    check(lambda m, x: x[-2 ** 63:], A)
    check(lambda m, x: x[m.tensor(1):m.tensor(3), m.tensor(2)], A)       # 0-dim tensors as ints
    check(lambda m, x: x[::m.tensor(2), m.tensor(True)], A)
    check(_assign(lambda m: m.tensor(1), 5), A)
    check(_assign(lambda m: slice(m.tensor(1), None), 5), A)


def test_getitem_advanced():
    i = np.array([0, 2])
    check(lambda m, x, i: x.t()[i], A, i)
    check(lambda m, x, i: x.t()[:, i], A, i)
    check(lambda m, x, i: x[:, i.view(2, 1).expand(2, 3)], A, i)
    b = sample((2, 3, 4), seed=1)
    check(lambda m, x: x.permute(2, 0, 1)[:, :, m.tensor([0, 1])], b)     # keeps a permuted layout
    check(lambda m, x: x.permute(2, 0, 1)[:, m.tensor([[0], [1]]), m.tensor([[0, 1, 1]])], b)
    check(lambda m, x: x.permute(2, 0, 1)[m.tensor([0, 1]), :, m.tensor([1, 2])], b)
    check(lambda m, x: x[m.tensor([1, 2]), None], A)
    check(lambda m, x: x[None, m.tensor([1, 2])], A)
    check(lambda m, x: x.t()[x.t() > 0], A)
    check(lambda m, x: x.t()[m.tensor([True, False, True, True])], A)
    check(lambda m, x: x[m.tensor([1, 2], dtype=m.int32)], A)
    check(lambda m, x: x[m.tensor([1, 0, 1], dtype=m.uint8)], A)
    check(lambda m, x: x[[]], A)
    check(lambda m, x: x[[0.5, 1]], A)
    check(lambda m, x: x[[[0, 1], [1, 2]]], A)
    check(lambda m, x: x[[0, 1], ], A)
    check(lambda m, x: x[[S, [0, 1]]], A)
    check(lambda m, x: x[np.array([0, 1])], A)
    check(lambda m, x: x[np.array(1)], A)
    check(lambda m, x: m.zeros(0, 3)[m.tensor([], dtype=m.int64)])


def test_getitem_errors():
    check(lambda m, x: x[3], A)
    check(lambda m, x: x[-4], A)
    check(lambda m, x: x[0, 4], A)
    check(lambda m, x: x[None, 5], A)
    check(lambda m, x: x[0, 0, 0], A)
    check(lambda m, x: x[0], Z)
    check(lambda m, x: x[1], Z)
    check(lambda m, x: x[:], Z)
    check(lambda m, x: x[::-1], A)
    check(lambda m, x: x[::0], A)
    check(lambda m, x: x[1.5], A)
    check(lambda m, x: x[1.0:], A)
    check(lambda m, x: x["a"], A)
    check(lambda m, x: x[[0, 5]], A)
    check(lambda m, x: x[m.tensor([0, 5])], A)
    check(lambda m, x: x[:, m.tensor([-5])], A)
    check(lambda m, x: x[m.tensor([0]), m.tensor([7])], A)
    check(lambda m, x: x[m.tensor(5)], A)
    check(lambda m, x: x[m.tensor([0.5])], A)
    check(lambda m, x: x[m.tensor([1, 0], dtype=m.int8)], A)
    check(lambda m, x: x[m.tensor([[True, False]])], A)
    check(lambda m, x: x[m.ones(3, 4, 2, dtype=m.bool)], A)
    check(lambda m, x: x[m.tensor([0, 1]), m.tensor([0, 1, 2])], A)
    check(lambda m, x: m.zeros(0, 3)[m.tensor([0])])
    check(lambda m, x: x[[True]], A)


def test_getitem_warns_for_list_as_tuple():
    with pytest.warns(UserWarning, match="non-tuple sequence for multidimensional indexing"):
        reftrace.from_numpy(A)[[[0, 1], [1, 2]]]


# -- eager setitem ---------------------------------------------------------------------------------

def _assign(index, value):
    def fn(m, x, *rest):
        x[index(m, *rest) if callable(index) else index] = value(m, *rest) if callable(value) else value
        return x
    return fn


def test_setitem_values_and_casts():
    check(_assign(1, 7), A)
    check(_assign((S, 2), -1.5), A)
    check(_assign((0, 1), True), A)
    check(_assign(0, 2.7), sample((3,), "int64"))
    check(_assign(0, -2.7), sample((3,), "int64"))
    check(_assign(0, 2), sample((3,), "bool"))
    check(_assign(0, 300), sample((3,), "uint8"))
    check(_assign(0, 2 ** 40), sample((3,), "int32"))
    check(_assign(0, 1e300), A)
    check(_assign(0, 1 + 2j), A)
    check(_assign(0, "a"), A)
    check(_assign(0, [1.0, 2, 3, 4]), A)
    check(_assign(0, lambda m: m.ones(4, dtype=m.float64)), A)
    check(_assign(0, lambda m: m.ones(3)), A)
    check(_assign(0, lambda m: m.ones(2, 4)), A)
    check(_assign(S, lambda m: m.ones(1, 1, 3, 4)), A)
    check(_assign(5, 1), A)
    check(_assign((0, 0, 0), 1), A)
    check(_assign(..., 3), Z)
    check(_assign(None, 3), Z)


def test_setitem_through_views_reaches_base():
    def f(m, x):
        v = x.t()
        v[1:, 0] = 9
        v[0][...] = 4
        x[:, 1:3][1] = m.arange(2.0)
        return x, v
    check(f, A)
    check(lambda m, x: _assign((S, S, 1), 0)(m, x.permute(1, 0)[None]), A)


def test_setitem_advanced():
    check(_assign(lambda m: m.tensor([0, 0, 2]), 5), A)
    check(_assign(lambda m: m.tensor([0]), lambda m: m.ones(1, 4, dtype=m.float64)), A)
    check(_assign(lambda m: m.tensor([0]), lambda m: m.tensor(2.0, dtype=m.float64)), A)
    check(lambda m, x: _assign(x > 0.5, lambda m: m.tensor(2.0, dtype=m.float64))(m, x), A)
    check(lambda m, x: _assign(x > 0.5, lambda m: m.tensor([7.0], dtype=m.float64))(m, x), A)
    check(_assign(lambda m: m.tensor([0, 1]), lambda m: m.ones(1, 1, 4)), A)
    check(_assign(lambda m: (m.tensor([0, 2]), m.tensor([1, 3])), lambda m: m.tensor([5.0, 6.0])), A)
    check(_assign(lambda m: (S, m.tensor([0, 2])), lambda m: m.ones(3, 1)), A)
    check(_assign(lambda m: m.tensor([5]), 1), A)
    check(_assign(lambda m: m.tensor([0, 1]), lambda m: m.ones(3)), A)
    check(lambda m, x: _assign(lambda m: m.tensor([0, 2]), 1.0)(m, x.t()), A)


# -- the indexing ops ------------------------------------------------------------------------------

def test_index_op_and_index_put():
    idx = np.array([0, 2, 0])
    check(lambda m, x, i: m.index_put(x, (i,), m.tensor(1.0)), A, idx)
    check(lambda m, x, i: x.t().index_put((i,), m.tensor(1.0)), A, idx)
    check(lambda m, x, i: x.index_put_((i,), m.ones(4), accumulate=True), A, idx)
    check(lambda m, x, i: x.long().index_put_((i,), m.tensor(3)), A, idx)
    check(lambda m, x, i: x.index_put_((i,), m.ones(1, dtype=m.float64)), A, idx)
    check(lambda m, x, i: x.index_put_((i, i, i), m.ones(1)), A, idx)
    check(lambda m, x, i: m.index_put(x, [x > 0], m.tensor([1.0, 2.0])), A, idx)


def test_index_select_gather_scatter_masked_select():
    i = np.array([2, 0])
    check(lambda m, x, i: x.index_select(1, i), A, i)
    check(lambda m, x, i: m.index_select(x.t(), 0, i), A, i)
    check(lambda m, x: x.index_select(0, m.tensor(1)), A)
    check(lambda m, x: x.index_select(0, m.tensor([0])), Z)
    check(lambda m, x: x.index_select(0, m.tensor([[0]])), A)
    check(lambda m, x: x.index_select(0, m.tensor([0.0])), A)
    check(lambda m, x: x.index_select(0, m.tensor([5])), A)
    check(lambda m, x: x.index_select(0, m.tensor([-1])), A)
    g = np.array([[0, 1, 2], [1, 1, 0]])
    check(lambda m, x, g: x.gather(0, g), A, g)
    check(lambda m, x, g: m.gather(x.t(), 1, g), A, g)
    check(lambda m, x, g: x.gather(1, g.t()), A, g)
    check(lambda m, x: x.gather(1, m.tensor([[0]], dtype=m.int32)), A)
    check(lambda m, x: x.gather(0, m.tensor([0])), A)
    check(lambda m, x: x.gather(1, m.tensor([[5]])), A)
    check(lambda m, x: x.gather(1, m.tensor([[-1]])), A)
    check(lambda m, x: x.gather(1, m.tensor([[0.0]])), A)
    check(lambda m, x: x.gather(1, m.zeros(4, 2, dtype=m.long)), A)
    check(lambda m, x, g: x.scatter(0, g, 1.5), A, g)
    check(lambda m, x, g: x.t().scatter(1, g, m.arange(6.0).view(2, 3)), A, g)
    check(lambda m, x, g: x.scatter_(0, g, -1.0), A, g)
    check(lambda m, x, g: x.scatter_(0, g, m.ones(2, 3)), A, g)
    check(lambda m, x: x.scatter(1, m.tensor([[5]]), 1.0), A)
    check(lambda m, x: x.scatter(1, m.tensor([[0]]), m.ones(1, 1, dtype=m.float64)), A)
    check(lambda m, x: x.scatter(1, m.zeros(4, 1, dtype=m.long), 1.0), A)
    check(lambda m, x: x.scatter(1, m.zeros(2, 3, dtype=m.long), m.ones(2, 2)), A)
    check(lambda m, x: x.scatter(1, m.zeros(2, dtype=m.long), 1.0), A)
    check(lambda m, x: x.t().masked_select(x.t() > 0), A)
    check(lambda m, x: x.masked_select(m.tensor([True, False, True, True])), A)
    check(lambda m, x: m.ones(3, 1).masked_select(m.tensor([True, False])))
    check(lambda m, x: x.masked_select(m.ones(3, 4)), A)


# -- whole graphs: reftrace.jit.trace against torch.jit.trace ----------------------------------------

def _graph_text(graph):
    import re
    return "\n".join(re.sub(r" # .*$", "", line) for line in str(graph).strip().splitlines())


def _slices(i):
    def fn(x):
        return x[: x.size(0) - i, i: x.size(2), i:3], x[:, i:, x.size(2) - 5]
    return fn


def _setitem_dynamic(x, y):
    x[:, 2] = y + 1
    return x


def _slice_lhs(m):
    def fn(x):
        for i in range(3):
            x[i, :] = m.zeros(4)
        return x
    return fn


def _lhs_trivial(y, x):
    y[...] = x
    return y


def _put(target, indices, rhs):
    target[indices] = rhs
    return target


def _put_mask(m):
    def fn(ten, mask):
        ten[mask] = m.ones(6)
        return ten
    return fn


# (label, function of the module, inputs as functions of the module) -- programs of the seed
# tests in the A6 area of the tracer-tests catalog
GRAPHS = [
    *[(f"test_trace_slice[{i}]", lambda m, i=i: _slices(i), lambda m: (m.ones(7, 8, 9),)) for i in range(3)],
    ("test_trace_slice_full_dim", lambda m: (lambda x: x[0:5, 0] + 1.0), lambda m: (m.ones(5, 4),)),
    ("test_index_put_trace_with_view", lambda m: _put,
     lambda m: (m.ones(100), m.tensor([1, 2, 3, 4]), m.ones(1, 1, 1, 4))),
    ("test_index_put_trace_without_view", lambda m: _put,
     lambda m: (m.ones(100), m.tensor([1, 2, 3, 4]), m.ones(4))),
    ("test_trace_slice_setitem_dynamic_shape", lambda m: _setitem_dynamic,
     lambda m: (lambda x: (x, x[:, 0]))(m.ones(3, 4))),
    ("test_trace_checker_slice_lhs", _slice_lhs, lambda m: (m.ones(3, 4),)),
    ("test_lhs_index_trivial", lambda m: _lhs_trivial, lambda m: (m.ones(3, 4), m.ones(4))),
    ("test_tracing_slicing", lambda m: (lambda x: x[-5:-3]), lambda m: (m.zeros(10),)),
    ("test_tracing_indexing", lambda m: (lambda x: x[-2]), lambda m: (m.zeros(10),)),
    ("test_trace_index", lambda m: (lambda x, y: x[y]), lambda m: (m.ones(4, 4), m.tensor([0, 2]))),
    ("test_index_put", _put_mask,
     lambda m: (m.zeros(3, 4), m.tensor([[True, False, True, True], [False, True, False, True],
                                        [False, True, False, False]]))),
    ("test_trace_contiguous", lambda m: (lambda x: x[:, :, ::2].contiguous().view(12)),
     lambda m: (m.ones(2, 3, 4),)),
    ("traced sizes as index and bounds", lambda m: (lambda x: (x[x.size(0) - 1], x[1:x.size(0)], x[:, x.size(1) - 2:])),
     lambda m: (m.ones(3, 4),)),
    ("traced size in setitem", lambda m: (lambda x: _set((slice(1, x.size(0)), x.size(1) - 1), 7)(x)),
     lambda m: (m.ones(3, 4),)),
]


@requires_torch
@pytest.mark.parametrize("label,program,inputs", GRAPHS, ids=[g[0] for g in GRAPHS])
def test_catalog_graphs(label, program, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.jit.trace(program(torch), inputs(torch), check_trace=False).graph
        actual = reftrace.jit.trace(program(reftrace), inputs(reftrace), check_trace=False).graph
    assert _graph_text(actual) == _graph_text(expected)


@requires_torch
@pytest.mark.parametrize("label,fn,names,expected", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_pattern_graphs(label, fn, names, expected):
    """The same patterns through the real tracer: whole graphs, types and strides included."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.jit.trace(fn, tuple(_inputs(torch, names)), check_trace=False).graph
        traced = reftrace.jit.trace(fn, tuple(_inputs(reftrace, names)), check_trace=False)
    assert _graph_text(traced.graph) == _graph_text(want)
    # replaying the trace (views must alias there too, or setitem traces go wrong) gives eager's result
    replayed, eager = traced(*_inputs(reftrace, names)), fn(*_inputs(reftrace, names))
    for r, e in zip(replayed if isinstance(replayed, tuple) else (replayed,),
                    eager if isinstance(eager, tuple) else (eager,)):
        assert r.shape == e.shape and r.stride() == e.stride()
        np.testing.assert_array_equal(r.numpy(), e.numpy())


# -- random index expressions ------------------------------------------------------------------------

def _random_index(rng, shape):
    """A random index expression over ``shape``: ints, slices, None, one Ellipsis, bools, long and
    bool index tensors (as NumPy arrays; the test converts them), in torch's accepted ranges."""
    items, dim, used_ellipsis = [], 0, False
    while dim < len(shape) and rng.random() < 0.85:
        r, size = rng.random(), shape[dim]
        if r < 0.2 and size:
            items.append(int(rng.integers(-size, size)))
            dim += 1
        elif r < 0.55:
            start = None if rng.random() < 0.3 else int(rng.integers(-size - 2, size + 3))
            stop = None if rng.random() < 0.3 else int(rng.integers(-size - 2, size + 3))
            step = None if rng.random() < 0.5 else int(rng.integers(1, 4))
            items.append(slice(start, stop, step))
            dim += 1
        elif r < 0.62:
            items.append(None)
        elif r < 0.67 and not used_ellipsis:
            items.append(Ellipsis)
            used_ellipsis = True
            dim = max(dim, len(shape) - 1)
        elif r < 0.7:
            items.append(bool(rng.random() < 0.7))
        elif r < 0.88 and size:
            n = int(rng.integers(1, 4))
            items.append(rng.integers(-size, size, size=(n,)).astype(np.int64))
            dim += 1
        else:
            items.append(rng.random(size) < 0.5)
            dim += 1
    return tuple(items)


def _with_module(m, index):
    return tuple(m.from_numpy(i.copy()) if isinstance(i, np.ndarray) else i for i in index)


@pytest.mark.parametrize("seed", range(60))
def test_random_index_expressions(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, size=int(rng.integers(1, 5))))
    x = sample(shape, seed=seed)
    for _ in range(5):
        index = _random_index(rng, shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check(lambda m, x: x[_with_module(m, index)], x)
            check(lambda m, x: x.transpose(0, -1)[_with_module(m, index)], x)
            check(_assign(lambda m: _with_module(m, index), -7.0), x)
            check(_assign(lambda m: _with_module(m, index), lambda m: m.arange(1.0, 3.0)[-1]), x)

