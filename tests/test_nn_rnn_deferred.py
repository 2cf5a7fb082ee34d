"""In a trace, aten::gru/lstm/rnn_* record their decomposition's autograd graph when it is first
read (reftrace/autograd/_deferred.py). Whatever reads it (a hook keeping the outputs, grad_fn
inside the traced forward, backward after the trace, an input modified in place meanwhile), the
graph, its node order and the gradients must be those of recording at the call: compared with
the same trace with deferral off. Torch-free (the recorded graph itself is compared with torch in
tests/test_nn_rnn.py and tests/test_nn_rnn_grad.py)."""
import warnings

import numpy as np
import pytest

import reftrace
from reftrace.autograd import _deferred


def _graph(roots):
    """The graph under ``roots`` canonically: per node (in first-visit order) its name, its
    edges as (node index, input nr), and the nodes' order by sequence number."""
    index, rows, order, stack = {}, [], [], list(reversed(roots))
    while stack:
        n = stack.pop()
        if n is None or id(n) in index:
            continue
        index[id(n)] = len(rows)
        rows.append(n)
        stack.extend(e[0] for e in reversed(n.next_functions))
    for n in rows:
        order.append(sorted(rows, key=lambda m: m._seq).index(n))
    return ([(n.name(), [(index.get(id(m)), k) for m, k in n.next_functions]) for n in rows],
            order)


class Model(reftrace.nn.Module):
    def __init__(self, rnn, grad_fn_inside=False, modify_after=False, use_output=False):
        super().__init__()
        self.embed = reftrace.nn.Linear(3, 4)
        self.rnn = rnn
        self.out = reftrace.nn.Linear((rnn.proj_size or rnn.hidden_size) * (2 if rnn.bidirectional else 1),
                                       2)
        self.grad_fn_inside, self.modify_after, self.kept = grad_fn_inside, modify_after, None
        self.use_output = use_output

    def forward(self, x, h):
        e = self.embed(x)
        y, state = self.rnn(e, h)
        if self.grad_fn_inside:
            assert y.grad_fn.name().endswith(("Backward0", "Backward1"))  # (read: recorded now)
        if self.modify_after:
            e.add_(1)  # an input of the rnn, modified after it ran
        if self.use_output:  # the output modified in place, a hook on a view of it
            y.mul_(2)
            y[0].register_hook(lambda g: g * 3)
        self.kept = (y, state)
        return self.out(y)


CASES = [
    ("GRU", {"num_layers": 2}),
    ("GRU", {"bidirectional": True}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2}),
    ("LSTM", {"batch_first": True}),
    ("LSTM", {"batch_first": True, "num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True}),
    ("RNN", {"batch_first": True, "bidirectional": True}),
]


def _run(module, kwargs, dtype, defer, later=None, **model_kwargs):
    reftrace.manual_seed(0)
    rnn = getattr(reftrace.nn, module)(4, 3, **kwargs)
    m = Model(rnn, **model_kwargs).to(dtype)
    d = 2 if rnn.bidirectional else 1
    x = reftrace.randn(5, 2, 3, dtype=dtype)
    if rnn.batch_first:
        x = x.transpose(0, 1).contiguous()
    h = reftrace.randn(rnn.num_layers * d, 2, rnn.proj_size or 3, dtype=dtype)
    if module == "LSTM":
        h = (h, reftrace.randn(rnn.num_layers * d, 2, 3, dtype=dtype))
    allowed = _deferred.allowed
    if not defer:
        _deferred.allowed = lambda: False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = reftrace.jit.trace(m, (x, h), check_trace=False)
    finally:
        _deferred.allowed = allowed
    y, state = m.kept
    if later == "data":  # the parameters changed after the trace, before the graph is read
        for p in m.rnn.parameters():
            p.data.mul_(0.5)
    elif later == "inplace":
        with reftrace.no_grad():
            for p in m.rnn.parameters():
                p.add_(1)
    states = list(state) if isinstance(state, tuple) else [state]
    graph = _graph([y.grad_fn] + [s.grad_fn for s in states])
    loss = y.sum() + sum((s * s).sum() for s in states)
    try:
        loss.backward()
        grads = [p.grad.numpy().copy() for p in m.parameters() if p.grad is not None]
    except RuntimeError as e:
        grads = str(e)
    return traced.code, graph, grads, [t.detach().numpy().copy() for t in [y] + states]


@pytest.mark.parametrize("dtype", [reftrace.float32, reftrace.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("module, kwargs", CASES)
@pytest.mark.parametrize("reader", ["after", "inside", "modified", "output", "data", "inplace"])
def test_deferred_graph_is_the_recorded_one(module, kwargs, dtype, reader):
    model_kwargs = {"inside": {"grad_fn_inside": True}, "modified": {"modify_after": True},
                    "output": {"use_output": True},
                    "data": {"later": "data"}, "inplace": {"later": "inplace"}}.get(reader, {})
    deferred = _run(module, kwargs, dtype, True, **model_kwargs)
    eager = _run(module, kwargs, dtype, False, **model_kwargs)
    assert deferred[0] == eager[0]
    assert deferred[1] == eager[1]
    if isinstance(eager[2], str):
        assert deferred[2] == eager[2] and "modified by an inplace operation" in eager[2]
    else:
        assert len(deferred[2]) == len(eager[2]) > 0
        for a, b in zip(deferred[2], eager[2]):
            assert a.tobytes() == b.tobytes()
    for a, b in zip(deferred[3], eager[3]):
        assert a.tobytes() == b.tobytes()


class Tagger(reftrace.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = reftrace.nn.LSTM(3, 4, batch_first=True, bidirectional=True)

    def forward(self, x):  # (log_softmax saves its output: the graph is a reference cycle)
        return reftrace.log_softmax(self.lstm(x)[0], -1)


@pytest.mark.parametrize("make, inputs", [
    (lambda: reftrace.nn.GRU(3, 4, num_layers=2), (reftrace.randn(5, 2, 3), reftrace.zeros(2, 2, 4))),
    (Tagger, (reftrace.randn(2, 5, 3),))])
def test_a_graph_nobody_reads_is_never_recorded(monkeypatch, make, inputs):
    made = []
    real = _deferred._Pending.materialize
    monkeypatch.setattr(_deferred._Pending, "materialize", lambda self: made.append(self) or real(self))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reftrace.jit.trace(make(), inputs, check_trace=False)
    assert made == []
