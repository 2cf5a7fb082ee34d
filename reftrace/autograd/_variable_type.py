"""Recording autograd history for an op call (torch's generated VariableType.cpp), and the
Tensor-side autograd API (grad_fn, retain_grad, register_hook, .grad accumulation).

The funnel (``reftrace/_dispatch.py run_kernel``) calls ``record`` only when grad mode is on and
some tensor argument requires grad, so tensors that never require grad pay nothing here. For such
a call torch's VariableType:

1. refuses an in-place op on a leaf that requires grad (or on a view of one);
2. saves what the backward formulas read (``_derivatives.Compiled``);
3. runs the kernel;
4. makes the grad_fn node, with one edge per differentiable input, and sets it as the history of
   each differentiable output (for an in-place op: of ``self``; when ``self`` is a view, the base's
   history is rebased onto a ``CopySlices`` node, and the view's own grad_fn becomes an
   ``AsStridedBackward0`` of the new base history, as torch does).
"""
import warnings
import weakref

from .grad_mode import STATE, set_grad_enabled
from .graph import AccumulateGrad, node_class, Node, NoDerivativeNode
from ._derivatives import SavedVariable, TensorMeta, compiled, make_not_implemented


_TENSOR = []  # reftrace.Tensor, once importable (this module loads before _tensor)


def _is_tensor(v):
    if not _TENSOR:
        from .._tensor import Tensor
        _TENSOR.append(Tensor)
    return type(v) is _TENSOR[0] or isinstance(v, _TENSOR[0])


def _differentiable_dtype(t):
    d = t.dtype
    return d.is_floating_point or d.is_complex


# -- edges ------------------------------------------------------------------------------------------

def grad_accumulator(t):
    """The leaf's AccumulateGrad node (one per leaf while it is alive, as torch caches it)."""
    ref = t._grad_acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._grad_acc = weakref.ref(acc)
    return acc


def gradient_edge(t):
    """(node, output_nr) the gradient of ``t`` flows into; (None, 0) if it does not require grad."""
    if t is None or not t.requires_grad:
        return (None, 0)
    fn = grad_fn_of(t)
    if fn is not None:
        return (fn, t._output_nr)
    return (grad_accumulator(t), 0)


def grad_fn_of(t):
    fn = t._grad_fn
    if fn is not None and t._view_meta is not None:
        fn = _refresh_view_grad_fn(t)
    return fn


# -- recording --------------------------------------------------------------------------------------

def check_inplace(t):
    """torch's check_inplace: an in-place op on a leaf that requires grad (or a view of one), or
    on a view made under no_grad."""
    if t._view_meta == "no_grad":
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You "
            "can clarify your code by moving both the view and the inplace either both inside the "
            "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
            "want the inplace to be tracked).")
    if type(t._view_meta) is MultiOutputView:
        raise MultiOutputView.error(t, "is being")
    if t._view_meta == "custom_function":
        raise RuntimeError(
            f"Output {t._output_nr} of {_short_name(t._grad_fn)} is a view and is being modified "
            "inplace. This view was created inside a custom Function (or because an input was "
            "returned as-is) and the autograd logic to handle view+inplace would override the "
            "custom backward associated with the custom Function, leading to incorrect gradients. "
            "This behavior is forbidden. You can fix this by cloning the output of the custom "
            "Function.")
    base = t._base
    if base is not None and t._view_meta is not False:
        if base.requires_grad and base._grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.")
    elif t.requires_grad and t._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


class MultiOutputView:
    """The view meta of an output of a view op that returns several (split, unbind, chunk):
    torch's CreationMeta::MULTI_OUTPUT_NODE. Such a view may not be modified in place, nor be
    used once its base was (its grad_fn cannot be regenerated)."""
    __slots__ = ("base", "base_fn")

    def __init__(self, base):
        self.base = base
        self.base_fn = base._grad_fn

    @staticmethod
    def error(t, modified):
        return RuntimeError(
            f"Output {t._output_nr} of {_short_name(t._grad_fn)} is a view and {modified} "
            "modified inplace. This view is the output of a function that returns multiple views. "
            "Such functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one.")


def _short_name(node):
    """A node's name as torch's view errors print it: ``Id`` for ``IdBackward``."""
    import re
    return re.sub(r"Backward\d*$", "", node.name())


_NOT_RUN = object()


def attach_history(op, args, result):
    """Record ``op``'s history on a ``result`` already computed (by a kernel run under no_grad,
    as torch's tracer sees convolution: spec NN-18)."""
    return record(op, args, result)


def record(op, args, precomputed=_NOT_RUN):
    """Run ``op`` on ``args`` (some tensor requires grad, grad mode on) and record its history."""
    if op.composite is not None and precomputed is _NOT_RUN:
        return op.composite(*args)  # CompositeImplicitAutograd: the ops it calls record themselves
    inplace = op.is_inplace
    if inplace:
        check_inplace(args[0])
    if op.derivatives is None:
        return record_without_formula(op, args)
    c = compiled(op)
    edges, metas = [], []
    slices = c.static_slices
    if slices is None:
        slices = {}
    active = set()  # the inputs that need a gradient
    for i, name, is_list in c.inputs:
        a = args[i]
        if not is_list:
            if a is None:
                edges.append((None, 0))
                metas.append(None)
                continue
            if a.requires_grad:
                if a._view_meta is None:  # (gradient_edge, inlined for a tensor not a view)
                    fn = a._grad_fn
                    e = (fn, a._output_nr) if fn is not None else (grad_accumulator(a), 0)
                else:
                    e = gradient_edge(a)
                active.add(name)
            else:
                e = (None, 0)
            edges.append(e)
            metas.append((a._array.shape, a.dtype, a.device))
            continue
        slices[name] = (len(edges), len(a), True)
        for t in a:
            if t is None:
                edges.append((None, 0))
                metas.append(None)
                continue
            e = gradient_edge(t) if t.requires_grad else (None, 0)
            if e[0] is not None:
                active.add(name)
            edges.append(e)
            metas.append((t._array.shape, t.dtype, t.device))
    if not active:
        return op.kernel(*args) if precomputed is _NOT_RUN else precomputed
    # every input needs a gradient (the common case): each saved value is read by some formula
    users = c.users if len(active) < len(c.inputs) or c.unused_saves else None
    saved = {}
    for i, name, how in c.saved:
        v = args[i]
        if users is not None and users[name].isdisjoint(active):
            saved[name] = None  # not saved (read only through wrap_opt_if: nullopt)
            continue
        if v is None:
            saved[name] = None
        elif how == "tensor":
            if inplace and i == 0:  # torch's original_self: a copy of self as it was (recorded,
                v = v.clone()             # so a double backward reaches self's history)
            saved[name] = SavedVariable(v)
        elif how == "meta":
            saved[name] = TensorMeta(v)
        elif how == "list":
            saved[name] = [SavedVariable(t) if t is not None else None for t in v]
        elif how == "metalist":
            saved[name] = [TensorMeta(t) if t is not None else None for t in v]
        else:
            saved[name] = list(v) if type(v) is list else v
    result = op.kernel(*args) if precomputed is _NOT_RUN else precomputed
    node = c.cls()
    node._c = c
    node._next = tuple(edges)
    node._slices = slices
    node._input_meta = metas
    outs = _outputs(op, result)
    node._n_out = len(outs)
    if inplace:
        _set_inplace_history(args[0], node)
    else:
        od = c.out_diff
        for k, out in enumerate(outs):
            # (output_differentiability, _differentiable_dtype and _set_history, inlined)
            if out is None or not _is_tensor(out):
                continue
            if od is not None and not (od[k] if k < len(od) else od[-1]):
                continue
            d = out.dtype
            if not (d.is_floating_point or d.is_complex) or _is_an_argument(out, args):
                continue
            out._grad_fn = node
            out._output_nr = k
            out.requires_grad = True
            if op.is_view and out._base is not None:
                # valid while the base's history stays: an in-place op through the base or
                # another of its views makes it AsStridedBackward0 of the new history (torch
                # notices by the version counter, VariableHooks::grad_fn). The outputs of an op
                # that returns several views may not be refreshed (nor modified in place).
                out._view_meta = (MultiOutputView(out._base) if type(result) in (list, tuple)
                                  else (out._base, out._base._grad_fn, node))
    for k, name in c.saved_outputs:
        if users is not None and users[name].isdisjoint(active):
            continue
        out = outs[k] if not (len(c.outputs) == 1 and type(result) in (list, tuple)) else result
        if type(out) in (list, tuple):
            saved[name] = [SavedVariable(o, True, node) for o in out]
        else:
            saved[name] = SavedVariable(out, True, node)
    node._saved = saved
    return result


def _is_an_argument(out, args):
    for a in args:
        if out is a:
            return True
    return False


def _outputs(op, result):
    if type(result) in (tuple, list):
        return list(result)
    return [result]


def _set_history(t, node, output_nr):
    t._grad_fn = node
    t._output_nr = output_nr
    t.requires_grad = True


def record_without_formula(op, args):
    """An op torch differentiates but reftrace has no formula for yet: the results require grad
    and carry a node that says so when backward reaches it."""
    result = op.kernel(*args)
    cls = make_not_implemented(op)
    # torch's NotImplemented (autogradNotImplementedFallback) has edges to the tensors that
    # require grad only; a node named after a yaml entry has one per differentiable input
    requiring_only = issubclass(cls, NoDerivativeNode)
    edges = []
    for i in op.tensor_slots:
        a = args[i]
        for t in (a if type(a) is list else (a,)):
            if not requiring_only or (t is not None and t.requires_grad):
                edges.append(gradient_edge(t))
    node = cls(edges)
    node._op_name = op.name.split("::")[1]
    if op.is_inplace:
        _set_inplace_history(args[0], node)
        return result
    for k, out in enumerate(_outputs(op, result)):
        if _is_tensor(out) and _differentiable_dtype(out) and not any(out is a for a in args):
            _set_history(out, node, k)
    return result


# -- in-place on views: CopySlices ------------------------------------------------------------------

def _set_inplace_history(t, node):
    base = t._base
    if base is None or t._view_meta is False:
        _set_history(t, node, 0)
        return
    # torch's rebase_history for a view: the base's new history is CopySlices(base's old history,
    # this view's geometry, the in-place op's node); the view reads its grad_fn off the base
    copy = CopySlices(gradient_edge(base), base, t, node)
    base._grad_fn = copy
    base._output_nr = 0
    base.requires_grad = True
    t.requires_grad = True
    t._grad_fn = copy  # replaced by an AsStridedBackward0 of the base on first read
    t._output_nr = 0
    t._view_meta = (base, copy, None)


def _refresh_view_grad_fn(t):
    """A view whose base's history changed since: its grad_fn is AsStridedBackward0 of the base
    (torch regenerates it lazily the same way, VariableHooks::grad_fn)."""
    meta = t._view_meta
    if type(meta) is MultiOutputView:
        if meta.base._grad_fn is not meta.base_fn:
            raise MultiOutputView.error(t, "its base or another view of its base has been")
        return t._grad_fn
    if type(meta) is not tuple:
        # a view made by a differentiable op (or under no_grad, or by a custom Function): its
        # own node is its history
        return t._grad_fn
    base, base_fn, view_fn = meta
    if base._grad_fn is base_fn and view_fn is not None:
        return view_fn
    if t._view_fn is not None:
        # torch replays the view ops from the base (with grad on) and takes the result's grad_fn
        with set_grad_enabled(True):
            node = grad_fn_of(t._view_fn(base))
        t._grad_fn = node
        t._output_nr = 0
        t._view_meta = (base, base._grad_fn, node)
        return node
    from ..ops import OVERLOADS
    op = OVERLOADS["aten::as_strided"]
    c = compiled(op)
    node = c.cls()
    node._c = c
    node._next = (gradient_edge(base),)
    node._slices = {"self": (0, 1, False)}
    node._input_meta = [(base.shape_tuple, base.dtype, base.device)]
    node._saved = _saved_for(c, [base, list(t.shape_tuple), list(t.stride()), t.storage_offset()])
    t._grad_fn = node
    t._output_nr = 0
    t._view_meta = (base, base._grad_fn, node)
    return node


def _saved_for(c, args):
    saved = {}
    for i, name, how in c.saved:
        v = args[i]
        saved[name] = TensorMeta(v) if how == "meta" else SavedVariable(v) if how == "tensor" else v
    return saved


class CopySlices(Node):
    """The base's grad_fn after an in-place op through one of its views (torch's CopySlices):
    the gradient of the base, with the view's region replaced by what the in-place op's node
    gives for it."""
    __slots__ = ("_shape", "_stride", "_offset", "_view_fn", "_fn", "_base_meta")

    def __init__(self, base_edge, base, view, fn):
        # edges: the base's old history, then the in-place op's other inputs
        super().__init__((base_edge,) + tuple(fn._next[1:]))
        self._shape = list(view.shape_tuple)
        self._stride = list(view.stride())
        self._offset = view.storage_offset()
        self._view_fn = view._view_fn  # (a view as_strided cannot redo: view_as_real, _conj ...)
        self._fn = fn
        self._base_meta = (base.shape_tuple, base.stride(), base.dtype, base.device)
        self._seq = fn._seq

    @property
    def _input_meta(self):
        shape, _, dtype, device = self._base_meta
        return [(shape, dtype, device)] + list(getattr(self._fn, "_input_meta", [None] * len(self._fn._next))[1:])

    def apply(self, grads, needed=None):
        import reftrace
        grad = grads[0]
        out = [None] * len(self._next)
        if grad is None:
            return out
        shape, stride, _, _ = self._base_meta
        result = reftrace.empty_strided(list(shape), list(stride), dtype=grad.dtype, device=grad.device)
        result.copy_(grad)
        if self._view_fn is not None:
            grad_slice = self._view_fn(result)
        else:
            grad_slice = result.as_strided(self._shape, self._stride, self._offset)
        res = self._fn.apply([grad_slice.clone()], None)
        for i in range(1, len(res)):
            out[i] = res[i]
        if res and res[0] is not None:
            grad_slice.copy_(res[0])
        else:
            grad_slice.zero_()
        out[0] = result
        return out

    def release(self):
        self._fn.release()


# -- Tensor's autograd methods ----------------------------------------------------------------------

def warn_non_leaf_grad():
    warnings.warn(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
        "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
        "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
        "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
        "instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
        "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)",
        UserWarning, stacklevel=3)


def check_grad_assignment(t, value):
    if value is None:
        return
    if not _is_tensor(value):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(value).__name__}")
    if value.dtype != t.dtype:
        raise RuntimeError("assigned grad has data of a different type")
    if value.device != t.device:
        raise RuntimeError("assigned grad has data located on a different device")
    if value.shape_tuple != t.shape_tuple:
        raise RuntimeError("assigned grad has data of a different size")


def retain_grad(t):
    if not t.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t._grad_fn is None or t._retains_grad:
        return  # a leaf retains its grad anyway
    t._retains_grad = True
    fn = grad_fn_of(t)
    ref = weakref.ref(t)

    def hook(grad):
        var = ref()
        if var is None or grad is None:
            return
        if var._grad is None:
            var._grad = grad.clone() if not grad.requires_grad else grad
        else:
            var._grad = var._grad + grad
    if fn._retains_grad_hooks is None:
        fn._retains_grad_hooks = {}
    fn._retains_grad_hooks[t._output_nr] = hook


def register_hook(t, hook):
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = grad_fn_of(t)
    if fn is not None:
        return fn._register_tensor_hook(t._output_nr, hook)
    from .graph import _Hooks
    if t._hooks is None:
        t._hooks = _Hooks()
    return t._hooks.add(hook)


_CLONE = []


def _clone_kernel(t):
    """clone's kernel (its op is not importable when this module loads)."""
    if not _CLONE:
        from ..ops.casts import clone
        _CLONE.append(clone.kernel)
    return _CLONE[0](t, None)


def accumulate_grad(var, grad):
    """AccumulateGrad::apply: the leaf's hooks, then ``.grad = grad`` or ``.grad += grad``."""
    if grad is None:
        return
    hooks = var._hooks
    if hooks:
        for h in list(hooks.values()):
            r = h(grad)
            if r is not None:
                grad = r
    old = var._grad
    if old is None:
        if not STATE.enabled and grad.requires_grad:
            grad = grad.detach()
        # torch steals the incoming buffer when nothing else holds it, else copies it in the
        # leaf's layout (the gradient layout contract): a view (sum's expand) is copied here
        if grad._base is not None or grad.stride() != var.stride():
            grad = grad.clone() if grad.requires_grad else _clone_kernel(grad)
        var._grad = grad
    elif STATE.enabled:
        var._grad = old + grad  # create_graph: out of place, so the new grad has history
    else:
        old.add_(grad)
