"""Deferred history: a composite op's autograd graph recorded when first read, not when it ran.

torch's tracer records aten::gru / lstm / rnn_* as one trace node, then runs the op below the
Tracer key, where (CompositeImplicitAutograd) the decomposition records its autograd graph: ten
or so nodes per time step, when the module's parameters require grad (torch 2.13, probed: the
traced call's outputs have grad_fn StackBackward0 over the steps' nodes). jit.trace then drops
those outputs: nothing reads that graph, and in reftrace recording it is most of the trace's time.

So while a trace runs, such an op computes its values with the fused kernel (the same bits as
the decomposition) and gives each output a ``Deferred`` node. The first read of anything of a
Deferred node (``grad_fn.name()``, ``next_functions``, a hook, the engine's backward) runs the
decomposition on the original inputs and turns each Deferred node, in place, into the node the
decomposition gave that output: the same object, so edges later ops recorded to it stay valid;
the nodes made get sequence numbers between those of the nodes recorded before and after the op
(the engine's order). The decomposition runs as at the call, whenever that is read: grad mode
on, untraced, and each input as it was (an input modified in place, or its history or .data
changed since, has its state restored meanwhile; its saved copies then fail torch's version
check at backward, as they would have).
"""
import threading
import weakref

from . import graph as _graph
from ._derivatives import FormulaNode, SavedVariable
from .grad_mode import inference_mode


class _Tracing(threading.local):
    running = 0  # this thread's traces (create_method_from_trace): deferral is allowed inside one


_TRACING = _Tracing()


def tracing_started():
    _TRACING.running += 1


def tracing_ended():
    _TRACING.running -= 1


def allowed():
    return _TRACING.running > 0


class _Pending:
    """One deferred call: the decomposition to run, its tensor inputs as they were, the outputs
    (weakly) and their Deferred nodes (weakly), the sequence number reserved for the call."""
    __slots__ = ("decompose", "inputs", "outputs", "nodes", "seq", "done")

    def materialize(self):
        if self.done:
            return
        self.done = True
        from .._dispatch import STATE
        tracer, STATE.tracer = STATE.tracer, None  # (the trace holds one node for the call)
        changed = [(t, then, now) for t, then, now in
                   ((t, then, _state(t)) for t, then in self.inputs) if now != then]
        try:
            for t, then, _ in changed:
                _set_state(t, then)
            first = next(_graph._SEQ)
            with inference_mode(False):  # (grad mode on)
                results = self.decompose()
            last = next(_graph._SEQ)
        finally:
            for t, _, now in changed:
                _set_state(t, now)
            STATE.tracer = tracer
        reals = [r._grad_fn for r in results]
        if len(set(map(id, reals))) != len(reals):
            raise AssertionError("reftrace: deferred outputs share a node")
        made = _renumber(reals, first, last, self.seq)
        nodes = [ref() for ref in self.nodes]
        swap = {id(real): node for real, node in zip(reals, nodes) if node is not None}
        for n in made:  # (an output's node may be an edge of another: mkldnn_rnn_layer's hy)
            _redirect(n, swap)
        for node, real_node, real, output in zip(nodes, reals, results, self.outputs):
            if node is not None:
                _become(node, real_node, output(), real)


# what an in-place op, a .data or requires_grad_ change may alter in a tensor
_ATTRS = ("_array", "_stride", "dtype", "requires_grad", "_grad_fn", "_output_nr", "_view_meta",
          "_base", "_vc")


class _State(tuple):
    """A tensor's _ATTRS (compared by identity), its version, a copy of its values."""
    def __ne__(self, other):
        return any(a is not b for a, b in zip(self[0], other[0])) or self[1] != other[1] \
            or not _same_values(self[2], other[2])


def _same_values(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _state(t):
    return _State((tuple(getattr(t, a) for a in _ATTRS), t._vc[0], t._array.copy()))


def _set_state(t, state):
    attrs, version, values = state
    for name, value in zip(_ATTRS, attrs):
        setattr(t, name, value)
    t._vc[0] = version
    if not _same_values(t._array, values):
        t._array[...] = values


def _renumber(roots, first, last, seq):
    """The nodes the decomposition made (sequence numbers first..last) renumbered into
    (seq - 1, seq): after every node recorded before the call, before every node after it."""
    scale = 1.0 / (last - first + 1)
    seen, made, stack = set(), [], [n for n in roots if n is not None]
    while stack:
        n = stack.pop()
        if id(n) in seen or not (first <= n._seq < last):
            continue
        seen.add(id(n))
        made.append(n)
        n._seq = seq - 1 + (n._seq - first + 1) * scale
        stack.extend(e[0] for e in n._next if e[0] is not None)
    return made


def _saved_variables(n):
    for v in ((n._saved or {}).values() if isinstance(n, FormulaNode) else ()):
        for s in (v if type(v) is list else [v]):
            if type(s) is SavedVariable:
                yield s


def _redirect(n, swap):
    """Edges, saving nodes and saved tensors' grad_fn of node ``n`` that name a node the
    decomposition gave an output: the Deferred node standing for it instead."""
    n._next = tuple((swap.get(id(m), m), nr) for m, nr in n._next)
    for s in _saved_variables(n):
        if id(s.saving_node) in swap:
            s.saving_node = swap[id(s.saving_node)]
        if s.tensor is not None and id(s.tensor._grad_fn) in swap:
            s.tensor._grad_fn = swap[id(s.tensor._grad_fn)]


def _slots(cls):
    for c in cls.__mro__:
        for name in c.__dict__.get("__slots__", ()):
            if name != "__weakref__":
                yield name


def _become(node, real_node, output, real_output):
    """Turn the Deferred ``node`` into ``real_node`` (its state and class, _redirect'ed); its
    saved copy of its own output is the output the caller holds."""
    for name in _slots(type(real_node)):
        try:
            value = object.__getattribute__(real_node, name)
        except AttributeError:
            continue
        object.__setattr__(node, name, value)
    object.__setattr__(node, "__class__", type(real_node))
    for s in _saved_variables(node):
        if output is not None and s.tensor is real_output:
            s.tensor = output
    if real_output._output_nr != 0 or real_output._vc[0] != 0:  # (the deferred output's)
        raise AssertionError("reftrace: a deferred output differs from its decomposition's")


class Deferred(FormulaNode):
    """A node not recorded yet (see the module's docstring): any attribute read records it."""
    __slots__ = ()

    def __getattribute__(self, name):
        object.__getattribute__(self, "_saved").materialize()
        return object.__getattribute__(self, name)

    def __repr__(self):
        object.__getattribute__(self, "_saved").materialize()
        return repr(self)

    def __call__(self, *grads):
        object.__getattribute__(self, "_saved").materialize()
        return self(*grads)


def defer(kernel, decompose, args, tensors):
    """Run ``kernel(*args)`` (the fused op) and give its outputs Deferred nodes standing for
    ``decompose()``'s graph; ``tensors``: the tensor inputs (restored if modified meanwhile)."""
    try:
        outputs = kernel(*args)
    except Exception:  # (bad arguments: the decomposition raises torch's error)
        return decompose()
    pending = _Pending()
    pending.decompose = decompose
    bases = [t._base for t in tensors if t._base is not None]  # (a view's history is its base's)
    pending.inputs = [(t, _state(t)) for t in tensors + bases]
    pending.seq = next(_graph._SEQ)
    pending.done = False
    pending.outputs, pending.nodes = [], []
    for out in outputs:
        node = Deferred.__new__(Deferred)
        object.__setattr__(node, "_saved", pending)
        out._grad_fn = node
        out._output_nr = 0
        out.requires_grad = True
        pending.outputs.append(weakref.ref(out))
        pending.nodes.append(weakref.ref(node))
    return outputs
