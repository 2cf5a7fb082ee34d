"""The nodes of the autograd graph (torch/csrc/autograd/function.h, torch/autograd/graph.py).

A Node is what ``y.grad_fn`` returns: ``next_functions`` are its edges, one per differentiable
input, each ``(node, output_nr)`` or ``(None, 0)`` for an input that does not require grad. Its
class name is torch's (``AddBackward0``): one Python class per name, made on first use, so
``type(y.grad_fn).__name__`` and ``y.grad_fn.name()`` read as in torch.

Leaves get an ``AccumulateGrad`` node (``.variable`` is the leaf), which the engine runs last on
each path to add the incoming gradient to ``leaf.grad``.
"""
import itertools
import weakref

_SEQ = itertools.count()  # torch's sequence_nr: later nodes run first among the ready ones


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: ``handle.remove()`` unregisters the hook."""

    def __init__(self, hooks, key):
        self._hooks_ref = weakref.ref(hooks)
        self.id = key

    def remove(self):
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_HOOK_IDS = itertools.count()


class _Hooks(dict):
    """An ordered hook table a RemovableHandle can point at weakly."""
    __slots__ = ("__weakref__",)

    def add(self, fn):
        key = next(_HOOK_IDS)
        self[key] = fn
        return RemovableHandle(self, key)


class Node:
    """A backward function: ``apply(grads)`` maps output gradients to input gradients."""
    __slots__ = ("_next", "_seq", "_n_out", "_pre_hooks", "_tensor_pre_hooks",
                 "_retains_grad_hooks", "_post_hooks", "metadata", "__weakref__")
    # per input (shape, dtype, device) the engine checks gradients against; None: no check.
    # Nodes that record it (FormulaNode, a custom Function's node) shadow this default
    _input_meta = None

    def __init__(self, next_edges=()):
        self._next = tuple(next_edges)
        self._n_out = 1  # how many outputs (gradients the node receives)
        self._seq = next(_SEQ)
        self._pre_hooks = None          # register_prehook: fn(grad_outputs)
        self._tensor_pre_hooks = None   # Tensor.register_hook on a non-leaf: {output_nr: _Hooks}
        self._retains_grad_hooks = None  # retain_grad(): {output_nr: fn}
        self._post_hooks = None         # register_hook: fn(grad_inputs, grad_outputs)
        self.metadata = {}

    # -- torch.autograd.graph.Node's interface ----------------------------------------------------
    def name(self):
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple((n, nr) if n is not None else (None, 0) for n, nr in self._next)

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) after the node ran; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = _Hooks()
        return self._post_hooks.add(fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) before the node runs; may return new grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = _Hooks()
        return self._pre_hooks.add(fn)

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        return self._tensor_pre_hooks.setdefault(output_nr, _Hooks()).add(fn)

    def __call__(self, *grads):
        return self.apply(list(grads))

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # -- what subclasses provide --------------------------------------------------------------------
    def apply(self, grads, needed=None):
        """Gradients for ``self._next`` (None where not needed) from the output gradients."""
        raise NotImplementedError

    def release(self):
        """Free what was saved for backward (called when the graph is not retained)."""


class AccumulateGrad(Node):
    """The sink of a leaf: adds the incoming gradient to ``variable.grad``."""
    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(())
        self.variable = variable
        self._seq = float("inf")  # torch: UINT64_MAX, so it runs as soon as it is ready

    def apply(self, grads, needed=None):
        _accumulate_grad(self.variable, grads[0])
        return []


class GraphRoot(Node):
    """The engine's start node when several roots are given: passes the root gradients on."""
    __slots__ = ("_grads",)

    def __init__(self, edges, grads):
        super().__init__(edges)
        self._grads = grads

    def apply(self, grads, needed=None):
        return list(self._grads)


class NotImplementedNode(Node):
    """The grad_fn of an op whose derivative reftrace does not have yet: backward through it says
    so, in torch's words for a not-implemented derivative."""
    __slots__ = ("_op_name",)

    def apply(self, grads, needed=None):
        raise RuntimeError(f"the derivative for '{self._op_name}' is not implemented.")


class NoDerivativeNode(NotImplementedNode):
    """The grad_fn of an op torch's derivatives.yaml has no entry for (and that is no composite):
    torch's generated code gives it a ``NotImplemented`` node, which raises when reached
    (_scaled_dot_product_flash_attention_for_cpu_backward under a double backward)."""
    __slots__ = ()

    def apply(self, grads, needed=None):
        raise RuntimeError(f"derivative for aten::{self._op_name} is not implemented")


_CLASSES = {}


def node_class(name, base):
    """The Node subclass called ``name`` (one per name, as torch has one C++ class per name)."""
    # keyed by base too: an op whose formula cannot run yet and one that has it may share a
    # torch name (EmbeddingBagBackward0), and their nodes hold different state
    cls = _CLASSES.get((name, base))
    if cls is None:
        cls = _CLASSES[(name, base)] = type(name, (base,), {"__slots__": ()})
    return cls


from ._variable_type import accumulate_grad as _accumulate_grad  # noqa: E402  (it imports Node)
