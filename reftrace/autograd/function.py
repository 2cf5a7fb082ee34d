"""torch.autograd.Function: user-defined ops with a hand-written backward
(torch/autograd/function.py, and the C++ half it stands on: python_function.cpp's
THPFunction_apply / process_outputs / _wrap_outputs, custom_function.cpp's set_history).

    class MyFn(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 2

    y = MyFn.apply(x)       # y.grad_fn is a MyFnBackward, which is also the ctx forward saw

What ``apply`` does, in torch's order:

1. note which arguments are tensors that require grad (``ctx.needs_input_grad``); the call
   is recorded for backward only when grad mode is on and one of them does;
2. while tracing, append the ``prim::PythonOp`` node (jit/_python_op.py);
3. run ``forward`` in no-grad mode (with ``setup_context`` after it, when the class defines one);
4. wrap the outputs: an output that is an unmodified input comes back as ``input.view_as(input)``
   (a new tensor, so it can carry the new grad_fn); an input marked dirty keeps its identity and
   its history is rebased onto this node; outputs marked non-differentiable (and integral ones)
   do not require grad;
5. while tracing, complete the node (outputs, ``inplace``, ``Subgraph``);
6. save ``ctx.save_for_backward``'s tensors, with their versions, for ``ctx.saved_tensors``.
"""
import functools
import inspect
import itertools
from collections import OrderedDict

from .. import _dispatch, _tensor  # (modules: they import this package while they load)
from ..utils import hooks
from .._frames import python_level
from .grad_mode import STATE as GRAD, no_grad
from ._derivatives import SavedVariable
from . import _variable_type as _vt  # the engine's history setters (gradient_edge ...)
from .graph import Node

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "once_differentiable"]

# Unique id for each class inheriting from Function (FunctionMeta), as torch numbers them
AUTOGRAD_FUNCTION_COUNTER = itertools.count()


class FunctionCtx:
    """What ``forward`` / ``setup_context`` use to prepare ``backward``."""

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        for tensor in tensors:
            if not (isinstance(tensor, _tensor.Tensor) or tensor is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should "
                    "save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class _HookMixin:
    @staticmethod
    def _register_hook(backward_hooks, hook):
        if backward_hooks is None:
            backward_hooks = OrderedDict()
        handle = hooks.RemovableHandle(backward_hooks)
        backward_hooks[handle.id] = hook
        return backward_hooks, handle


class _FunctionBase(Node):
    """torch._C._FunctionBase: the per-call state of a Function, which is both the ``ctx``
    forward and backward see and the node of the autograd graph (torch's PyNode): one edge per
    tensor argument, one gradient per output."""

    def __init__(self):
        super().__init__(())
        self.to_save = None
        self.dirty_tensors = None
        self.non_differentiable = None
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._saved = None          # SavedVariables of save_for_backward, once forward has run
        self._saved_freed = False
        self._is_tensor_input = ()  # per forward argument: was it a tensor
        self._input_meta = ()       # per tensor argument: (shape, dtype, device), for the engine
        self._output_meta = ()      # per output: (shape, dtype, device), or None for non-tensors
        self._n_out = 0

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward (unpacking checks their versions)."""
        if self._saved_freed:
            raise RuntimeError(_FREED)
        if self._saved is None:
            return ()
        return tuple(None if v is None else v.unpack() for v in self._saved)

    saved_variables = saved_tensors

    def release(self):
        """backward without retain_graph frees what was saved (release_variables)."""
        self._saved = None
        self._saved_freed = True

    def _engine_apply(self, grads):
        """PyNode::apply: the output gradients (zeros for missing ones, unless
        set_materialize_grads(False)) go to the user's backward; its result must hold one
        gradient per forward argument, None for non-tensors."""
        if self.materialize_grads:
            grads = [_zeros(meta) if g is None and meta is not None else g
                     for g, meta in zip(grads, self._output_meta)]
        result = self._get_user_fn()(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_inputs = len(self._is_tensor_input)
        if len(result) > n_inputs and all(r is None for r in result[n_inputs:]):
            result = result[:n_inputs]  # too many results are fine, when they are all None
        if len(result) != n_inputs:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {n_inputs}, got {len(result)})")
        out = []
        for i, (g, is_tensor) in enumerate(zip(result, self._is_tensor_input)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a Variable")
                continue
            if g is not None and not isinstance(g, _tensor.Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            out.append(g)
        return out


_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")


def _zeros(meta):
    import reftrace  # lazy: reftrace imports this package while it loads
    shape, dtype, device = meta
    return reftrace.zeros(list(shape), dtype=dtype, device=device)


class BackwardCFunction(_FunctionBase, FunctionCtx, _HookMixin):
    """The graph node of one Function call: ``MyFnBackward``. This class is used for internal
    autograd work. Do not use."""

    def _get_user_fn(self):
        backward_fn = self._forward_cls.backward
        vjp_fn = self._forward_cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                "You should only implement one of them.")
        return vjp_fn if vjp_fn is not Function.vjp else backward_fn

    def apply(self, *args):
        """``grad_fn.apply(*grad_outputs)``: the user's backward. The engine calls
        ``apply(grads, needed)`` with a list, which no user call passes (gradients are tensors):
        that call goes through PyNode's checks (``_engine_apply``)."""
        if args and type(args[0]) is list:
            return self._engine_apply(args[0])
        return self._get_user_fn()(self, *args)


class FunctionMeta(type):
    """Gives every Function subclass its node class, named ``<Name>Backward`` as torch does."""

    def __init__(cls, name, bases, attrs):
        backward_fn = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_fn._autograd_function_id = next(AUTOGRAD_FUNCTION_COUNTER)
        cls._backward_cls = backward_fn
        super().__init__(name, bases, attrs)


class _SingleLevelFunction(FunctionCtx, _HookMixin, metaclass=FunctionMeta):
    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")


class Function(_SingleLevelFunction):
    """Base class of custom autograd Functions: subclass it with static ``forward`` and
    ``backward`` and call ``MyFn.apply(...)``."""

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are "
            "all static, so you should invoke them on the class itself. Instantiating an "
            "autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    generate_vmap_rule = False

    @classmethod
    @python_level
    def apply(cls, *args, **kwargs):
        # @python_level: as in torch, this frame is the innermost Python frame of everything
        # the tracer records here (the PythonOp node, the view_as of a returned input): its
        # source location, and where names are looked up (it holds no tensor as a local)
        if _is_setup_context_defined(cls.setup_context):
            signature = inspect.signature(cls.forward)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        return _function_apply(cls, args, kwargs)


def _is_setup_context_defined(fn):
    return fn != _SingleLevelFunction.setup_context


class InplaceFunction(Function):
    """Kept for backward compatibility, as torch keeps it."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


# -- THPFunction_apply --------------------------------------------------------------------------

def _function_apply(cls, args, kwargs):
    ctx = cls._backward_cls()
    tensor_args = [a for a in args if isinstance(a, _tensor.Tensor)]
    ctx.needs_input_grad = tuple(isinstance(a, _tensor.Tensor) and a.requires_grad for a in args)
    ctx._is_tensor_input = tuple(isinstance(a, _tensor.Tensor) for a in args)
    is_executable = GRAD.enabled and any(t.requires_grad for t in tensor_args)
    if is_executable:
        ctx._next = tuple(_vt.gradient_edge(t) for t in tensor_args)
        ctx._input_meta = [_meta(t) for t in tensor_args]

    tracer = _dispatch.STATE.tracer
    node = None
    if tracer is not None:
        from ..jit._python_op import pre_record
        node = pre_record(tracer, cls, args)

    with no_grad():
        if _is_setup_context_defined(cls.setup_context):
            raw = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, raw)
        else:
            raw = cls.forward(ctx, *args, **kwargs)
    return _process_outputs(cls, ctx, args, raw, is_executable, node, tracer)


def _meta(t):
    return (t.shape_tuple, t.dtype, t.device)


def _process_outputs(cls, ctx, args, raw, is_executable, node, tracer):
    unpack_output = not isinstance(raw, tuple)
    outputs = list((raw,) if unpack_output else raw)
    dirty = {id(t) for t in (ctx.dirty_tensors or ()) if t is not None}
    non_diff = {id(t) for t in (ctx.non_differentiable or ()) if t is not None}
    input_ids = {id(a) for a in args if isinstance(a, _tensor.Tensor)}
    _check_dirty_are_outputs(ctx, outputs)
    for i, out in enumerate(outputs):
        if not isinstance(out, _tensor.Tensor):
            continue
        is_input = id(out) in input_ids
        is_modified = id(out) in dirty
        is_differentiable = is_executable and id(out) not in non_diff and \
            (out.dtype.is_floating_point or out.dtype.is_complex)
        outputs[i] = _set_history(ctx, out, i, len(outputs), is_input, is_modified,
                                  is_differentiable, is_executable)
    ctx._output_meta = tuple(_meta(o) if isinstance(o, _tensor.Tensor) else None for o in outputs)
    ctx._n_out = len(outputs)
    if node is not None:
        from ..jit._python_op import post_record
        post_record(tracer, node, cls, outputs, bool(ctx.dirty_tensors), unpack_output)
    if is_executable:
        _save_variables(ctx)
    elif ctx.to_save is not None:
        _check_saved(ctx.to_save)
    return outputs[0] if unpack_output else tuple(outputs)


def _check_dirty_are_outputs(ctx, outputs):
    if not ctx.dirty_tensors:
        return
    out_ids = {id(o) for o in outputs}
    if any(t is not None and id(t) not in out_ids for t in ctx.dirty_tensors):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            "output. The inputs that are modified inplace must all be outputs of the Function.")


def _view_as_self(t):
    # an unmodified input returned as an output comes back as a view of itself (a new tensor
    # that can carry the new history), made in no-grad mode as the forward was
    with no_grad():
        return t.view_as(t)


def _set_history(ctx, var, output_nr, num_outputs, is_input, is_modified, is_differentiable,
                 is_executable):
    """custom_function.cpp's set_history for one output; returns the tensor to hand back."""
    if not is_differentiable:
        if not var.requires_grad:
            return _view_as_self(var) if is_input and not is_modified else var
        # outputs that must not require grad: detached aliases of inputs, detached others
        if is_input:
            return var.detach()
        if var._base is None:
            var.detach_()
        return var
    if is_modified:
        if var.is_leaf and var.requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation.")
        if var._base is not None and num_outputs > 1:
            raise RuntimeError(
                "If your Function modifies inplace an input that is a view of another Tensor, "
                "your Function cannot return more than one Tensor. This is not supported by the "
                "current autograd engine. You should either make sure the input is not a view "
                "(using .clone() for example) or make your Function only return one Tensor "
                "(potentially splitting it into two Functions: one doing the inplace that "
                "returns a single Tensor and a second one that does the other operations). You "
                "can ask on the forum https://discuss.pytorch.org/ if you need help to do this "
                "change.")
        var.grad = None
        _rebase_history(var, ctx, output_nr)
        return var
    if is_input:
        var = _view_as_self(var)
    _set_gradient_edge(var, ctx, output_nr)
    return var


def _set_gradient_edge(var, ctx, output_nr):
    _vt._set_history(var, ctx, output_nr)
    if var._base is not None:
        # a view forward made (or the view_as of a returned input): its grad_fn is this node,
        # not one regenerated from its base, and modifying it in place is refused (torch's
        # CreationMeta::IN_CUSTOM_FUNCTION)
        var._view_meta = "custom_function"


def _rebase_history(var, ctx, output_nr):
    """A tensor forward modified in place now has this node as its history (through its
    base's CopySlices when it is a view, as an in-place op on a view does)."""
    if var._base is not None:
        _vt._set_inplace_history(var, ctx)
    else:
        _vt._set_history(var, ctx, output_nr)


def _check_saved(to_save):
    for i, t in enumerate(to_save):
        if not (t is None or isinstance(t, _tensor.Tensor)):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is of "
                            f"type {type(t).__name__}")


def _save_variables(ctx):
    """The tensors of save_for_backward, with their versions; an output of this very call is
    saved as one (an in-place change to it later names this node in the error)."""
    to_save = ctx.to_save
    if to_save is None:
        return
    _check_saved(to_save)
    ctx._saved = [None if t is None else SavedVariable(t, t._grad_fn is ctx, ctx) for t in to_save]
    ctx.to_save = None


# -- once_differentiable ------------------------------------------------------------------------

class Error(Node):
    """A node whose backward raises (torch's Error node): the history of @once_differentiable
    results."""
    __slots__ = ("msg",)

    def __init__(self, msg, next_edges):
        super().__init__(next_edges)
        self.msg = msg

    def apply(self, grads, needed=None):
        raise RuntimeError(self.msg)


class DelayedError:
    """torch.autograd._functions.DelayedError: calling it on tensors gives aliases of them whose
    grad_fn is an ``Error`` node raising ``msg``."""

    def __init__(self, msg, num_inputs):
        self.msg = msg.decode() if isinstance(msg, bytes) else msg
        self.num_inputs = num_inputs

    def __call__(self, *inputs):
        node = Error(self.msg, [_vt.gradient_edge(t) for t in inputs])
        node._n_out = len(inputs)
        outputs = []
        for i, t in enumerate(inputs):
            if t is None:
                outputs.append(None)
                continue
            out = t.detach()
            _vt._set_history(out, node, i)
            out._view_meta = True  # its grad_fn is this node (torch: tensor_data(), not a view)
            outputs.append(out)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def once_differentiable(fn):
    """Run a backward in no-grad mode; differentiating its result again raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)

        if not GRAD.enabled:
            return outputs

        # If any input requires grad, the outputs are made to require grad too, through a node
        # that raises during (double) backward.
        requires_grad = any(isinstance(arg, _tensor.Tensor) and arg.requires_grad for arg in args)
        if not requires_grad:
            return outputs

        outputs_ = outputs if isinstance(outputs, tuple) else (outputs,)
        err_fn = DelayedError(
            b"trying to differentiate twice a function that was marked with @once_differentiable",
            len(outputs_))

        def fake_requires_grad(var):
            if var is not None:
                var = var.detach()
                var.requires_grad = True
            return var

        return err_fn(*[fake_requires_grad(v) for v in outputs_])

    return wrapper
