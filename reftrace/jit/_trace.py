"""reftrace.jit.trace: torch/jit/_trace.py and tracer.cpp's trace(), for functions.

    traced = reftrace.jit.trace(fn, example_inputs)
    print(traced.graph)       # TorchScript IR text, as torch 2.13 prints it
    traced(new_inputs)        # runs the graph (reftrace.jit.interpreter)

The protocol: type the example inputs (errors as torch's), open a TracingState, add one graph
input per argument (unpacking tuples, lists and dicts as torch does), run the function with the
state active, turn what it returned into graph outputs (strict-mode container rules), then run
the clean-up passes. The state is restored on every exit path.
"""
from __future__ import annotations

import inspect
import threading
import types
import warnings
from typing import TYPE_CHECKING, Any, Callable, Optional, Union, overload

from .._dispatch import STATE
from .._tensor import Tensor
from . import _types as T
from ._gc import collector_paused
from ._io_types import STRICT_TRACER_MSG, input_types
from .passes import dead_code_elimination, lower_simple_tuples, normalize_ops
from .tracer import TracingState

if TYPE_CHECKING:
    from ..nn import Module
    from ._module_trace import TracedModule
    from .traced import TracedFunction


# Module -> its qualified scope name ('__module.a.lin') while trace_module runs; read by
# Module._slow_forward to open a scope per submodule call (torch.jit._trace._trace_module_map).
# torch keeps it in a process global, so trace_module in two threads mixes their scopes (defect
# D14); here it is per thread, like the tracing state itself.
_MODULE_MAP = threading.local()


def trace_module_map():
    return getattr(_MODULE_MAP, "map", None)


def set_trace_module_map(module_map):
    _MODULE_MAP.map = module_map


def is_tracing() -> bool:
    return STATE.tracer is not None


def _argument_names(fn):
    """get_callable_argument_names: positional-or-keyword parameter names."""
    if type(fn) is types.FunctionType and not hasattr(fn, "__wrapped__") \
            and not hasattr(fn, "__signature__"):
        # a plain function: what inspect.signature reads, without building a Signature
        code = fn.__code__
        return list(code.co_varnames[code.co_posonlyargcount:code.co_argcount])
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [n for n, p in sig.parameters.items() if p.kind == p.POSITIONAL_OR_KEYWORD]


def _add_input(state, value_in, typ, value):
    """tracer.cpp addInput: bind an example input (recursively) to a graph Value."""
    g = state.graph
    if isinstance(typ, T.TensorType):
        t = value_in
        if state.has_value(t):
            # the same tensor twice (or aliasing a parameter): it gets its own input via a view
            t = t.view(t.shape_tuple)
        # setValue: an incomplete type (a list or dict element's plain Tensor) is completed
        # from the tensor itself
        value.setType(typ if typ.scalar_type is not None else T.TensorType.of(t))
        state.set_value(t, value)
        return t
    if isinstance(typ, T.TupleType):
        unpack = g.append(g.create("prim::TupleUnpack", [value]))
        outs = [unpack.add_output(et) for et in typ.elems]
        return tuple(_add_input(state, v, et, o) for v, et, o in zip(value_in, typ.elems, outs))
    if isinstance(typ, T.ListType):
        unpack = g.append(g.create("prim::ListUnpack", [value]))
        outs = [unpack.add_output(typ.elem) for _ in value_in]
        return [_add_input(state, v, typ.elem, o) for v, o in zip(value_in, outs)]
    if isinstance(typ, T.DictType):
        result = {}
        for k, v in value_in.items():
            key = _key_constant(state, k)
            node = g.append(g.create("aten::__getitem__", [value, key]))
            node.source = state._location()
            out = node.add_output(typ.value)
            result[k] = _add_input(state, v, typ.value, out)
        return result
    raise RuntimeError("Only tensors or (possibly nested) dict or tuples of them are supported as "
                       f"inputs to traced functions. Got {typ}")


def _key_constant(state, k):
    """A dict input's key, as addInput inserts it: a constant of the key's own type (a tensor key
    stays the tensor, so the trace looks it up by identity as torch's IValue dict does)."""
    if isinstance(k, str):
        return state.constant(k, T.StringType, None, "s")
    if isinstance(k, Tensor):
        return state.constant(k, T.TensorType.of(k), None, "t")
    if isinstance(k, (int, float, complex)):
        return state.scalar_constant(k, None)
    return state.constant(str(k), T.DeviceType, None, "s")  # a device


def _get_output(state, out, i):
    """TracingState::getOutput: one returned Python value -> a graph Value."""
    g = state.graph
    if isinstance(out, Tensor):
        if not state.has_value(out):
            raise RuntimeError(
                f"output {i} ({out!r}) of traced region did not have observable data dependence "
                "with trace inputs; this probably indicates your program cannot be understood by "
                "the tracer.")
        return out._tv[1]
    if isinstance(out, list) and all(isinstance(o, Tensor) for o in out):
        if state.strict:
            state._warn("Encountering a list at the output of the tracer" + STRICT_TRACER_MSG,
                        "output list")
        values = [_get_output(state, o, i) for o in out]
        return g.append(g.create("prim::ListConstruct", values)).add_output(T.TENSOR_LIST)
    if isinstance(out, tuple):
        values = [_get_output(state, o, i) for o in out]
        node = g.append(g.create("prim::TupleConstruct", values))
        return node.add_output(T.TupleType(v.type_ for v in values))
    if isinstance(out, dict):
        if state.strict:
            raise RuntimeError("Encountering a dict at the output of the tracer" + STRICT_TRACER_MSG)
        return _dict_output(state, out, i)
    raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors can be "
                       "output from traced functions")


def _dict_output(state, out, i):
    keys = list(out)
    key_ok = all(isinstance(k, str) for k in keys) or all(isinstance(k, Tensor) for k in keys)
    vals = list(out.values())
    val_ok = all(isinstance(v, Tensor) for v in vals) or \
        all(isinstance(v, tuple) and all(isinstance(e, Tensor) for e in v) for v in vals)
    if not (keys and key_ok and val_ok):
        raise RuntimeError(
            f"output {i} ({_ivalue_repr(out)}) of traced region cannot be understood by the tracer, "
            "only outputs matching dict[Union[str, Tensor], Union[Tensor, Tuple[Tensor, ...]]] "
            "can be a dictionary output of a traced function")
    g = state.graph
    loc = state._location()
    ins = []
    for k, v in out.items():
        ins.append(state.constant(k, T.StringType, loc, "s") if isinstance(k, str) else state.value_of(k))
        ins.append(_get_output(state, v, i))
    key_t = T.StringType if isinstance(keys[0], str) else T.TENSOR
    val_t = T.TENSOR if isinstance(vals[0], Tensor) else T.TupleType(T.TENSOR for _ in vals[0])
    return g.append(g.create("prim::DictConstruct", ins)).add_output(T.DictType(key_t, val_t))


def _ivalue_repr(v):
    """How C++ prints an IValue in tracer messages: {key: value}, (a, b), tensors as at::print."""
    from .tracer import _cpp_tensor_text
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_ivalue_repr(k)}: {_ivalue_repr(e)}" for k, e in v.items()) + "}"
    if isinstance(v, (tuple, list)):
        inner = ", ".join(_ivalue_repr(e) for e in v)
        return f"({inner})" if isinstance(v, tuple) else f"[{inner}]"
    if isinstance(v, Tensor):
        return _cpp_tensor_text(v)
    return str(v)


def trace_graph(fn, example_inputs, *, strict=True, force_outplace=False, argument_names=None,
                kwargs=None, frames_up=0):
    """Run ``fn`` on the example inputs under a fresh TracingState; return (state, outputs)."""
    if STATE.tracer is not None:
        raise RuntimeError("Tracing can't be nested")
    types = input_types(example_inputs)
    state = TracingState(force_outplace=force_outplace, strict=strict, frames_up=frames_up)
    names = argument_names if argument_names is not None else []
    if len(names) < len(example_inputs):
        names = []  # tracer.cpp uses the names only when there is one for every input
    STATE.tracer = state
    try:
        inputs = []
        for i, (v, t) in enumerate(zip(example_inputs, types)):
            value = state.graph.add_input(t, names[i] if i < len(names) else None)
            inputs.append(_add_input(state, v, t, value))
        out = fn(*inputs, **(kwargs or {}))
        if out is None:
            raise RuntimeError("The traced function didn't return any values! Side-effects are not "
                               "captured in traces, so it would be a no-op.")
        if isinstance(out, tuple) and hasattr(out, "_fields"):
            out = tuple(out)  # namedtuples come back as plain tuples
        state.graph.register_output(_get_output(state, out, 1))
        if state.alias_error is not None:
            raise RuntimeError(state.alias_error)
    finally:
        STATE.tracer = None
        state.finish()
    lower_simple_tuples(state.graph)
    dead_code_elimination(state.graph)
    normalize_ops(state.graph)
    state.graph._specializations = state.specializations  # traced.specializations()
    return state, out


def _normalize_inputs(example_inputs):
    """A single tensor (or dict) becomes a 1-tuple; a top-level list means positional args."""
    if isinstance(example_inputs, (Tensor, dict)):
        return (example_inputs,)
    if not isinstance(example_inputs, tuple):
        return tuple(example_inputs)
    return example_inputs


def _function_names(func):
    """torch._jit_internal._qualified_name for a function: (name, '__torch__.<module>.<name>');
    a lambda is called ``_lambda``. What has no ``__name__`` (a functools.partial, a number)
    is refused with torch's message."""
    name = getattr(func, "__name__", None)
    if not name:
        raise RuntimeError("Could not get name of python class object")
    if name == "<lambda>":
        name = "_lambda"
    module = getattr(func, "__module__", None)
    if module is None:
        raise RuntimeError(f"Could not get qualified name for class '{name}': __module__ can't be None.")
    prefix = "__torch__" if module == "__main__" else "__torch__." + module
    return name, prefix + "." + name


def check_strict(strict, binding, returns):
    """pybind11's bool conversion of ``strict``: None and anything with __bool__ (numbers)
    convert; a str, list ... does not, and torch's binding call fails with a TypeError."""
    if strict is None or hasattr(type(strict), "__bool__"):
        return
    raise TypeError(f"{binding}(): incompatible function arguments. The following argument types "
                    f"are supported:\n    1. (..., strict: bool, force_outplace: bool, ...) -> "
                    f"{returns}\n\nInvoked with: ..., strict={strict!r}, ...")


def _check_keywords(func, kwargs):
    """What calling ``func(**kwargs)`` raises for an unknown or a missing argument, before
    tracing starts (torch calls the function with the keywords and Python raises)."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return
    params = sig.parameters
    varkw = any(p.kind == p.VAR_KEYWORD for p in params.values())
    qual = getattr(func, "__qualname__", getattr(func, "__name__", "function"))
    for k in kwargs:
        if not varkw and (k not in params or params[k].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                                  inspect.Parameter.VAR_POSITIONAL)):
            raise TypeError(f"{qual}() got an unexpected keyword argument '{k}'")
    for kind, label in ((inspect.Parameter.POSITIONAL_OR_KEYWORD, "positional"),
                        (inspect.Parameter.KEYWORD_ONLY, "keyword-only")):
        missing = [f"'{n}'" for n, p in params.items()
                   if p.kind == kind and p.default is p.empty and n not in kwargs]
        if missing:  # Python's wording: 'x' / 'x' and 'y' / 'x', 'y', and 'z'
            names = missing[0] if len(missing) == 1 else \
                " and ".join(missing) if len(missing) == 2 else ", ".join(missing[:-1]) + ", and " + missing[-1]
            raise TypeError(f"{qual}() missing {len(missing)} required {label} "
                            f"argument{'s' if len(missing) > 1 else ''}: {names}")


def _wrap_check_inputs(check_inputs):
    return None if check_inputs is None else [{"forward": c} for c in check_inputs]


@overload
def trace(func: Module, example_inputs: Any = None, optimize: Optional[bool] = None,
          check_trace: bool = True, check_inputs: Optional[list[Any]] = None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class: Any = None, _compilation_unit: Any = None,
          example_kwarg_inputs: Optional[dict[str, Any]] = None,
          _store_inputs: bool = True) -> TracedModule: ...
@overload
def trace(func: Callable[..., Any], example_inputs: Any = None, optimize: Optional[bool] = None,
          check_trace: bool = True, check_inputs: Optional[list[Any]] = None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class: Any = None, _compilation_unit: Any = None,
          example_kwarg_inputs: Optional[dict[str, Any]] = None,
          _store_inputs: bool = True) -> Union[TracedFunction, TracedModule]: ...
# (a module's bound forward traces into a module too: hence the union for callables)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True, _deep_check=False):
    """torch.jit.trace for a Python function: a TracedFunction that runs the recorded graph.
    ``_deep_check=True`` (reftrace's, with check_trace) first deep-checks every check input
    (_deep_check.py: every output leaf, the first diverging node)."""
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    from ._module_trace import TracedModule, trace_module, _module_base
    Module = _module_base()
    if isinstance(func, TracedModule):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. "
                      "Returning the object as is.", stacklevel=2)
        return func
    bound_to = getattr(func, "__self__", None)
    if isinstance(func, Module) or (isinstance(bound_to, Module) and func.__name__ == "forward"):
        module = func if isinstance(func, Module) else bound_to
        if example_inputs is None:
            if not isinstance(example_kwarg_inputs, dict):
                raise RuntimeError("example_kwarg_inputs should be a dict")
            example_inputs = example_kwarg_inputs
        return trace_module(module, {"forward": example_inputs}, None, check_trace,
                            _wrap_check_inputs(check_inputs), check_tolerance, strict,
                            _force_outplace, _module_class,
                            example_inputs_is_kwarg=isinstance(example_kwarg_inputs, dict),
                            _deep_check=_deep_check)
    if example_kwarg_inputs is None:
        # torch: tuple(example_inputs), so None and other non-iterables fail as tuple() does
        example_inputs = _normalize_inputs(example_inputs)
    if isinstance(bound_to, Module):
        raise AttributeError("trace doesn't support compiling individual module's functions.\n"
                             "Please use trace_module")
    name, qualified = _function_names(func)
    check_strict(strict, "_create_function_from_trace", "torch._C.ScriptFunction")
    call, arg_names = func, _argument_names(func)
    if example_kwarg_inputs is not None and not isinstance(example_kwarg_inputs, dict):
        # torch then hands example_inputs, untouched, to a binding that wants a tuple
        if not isinstance(example_inputs, tuple):
            raise TypeError("_create_function_from_trace(): incompatible function arguments. The "
                            "following argument types are supported:\n    1. (name: str, func: "
                            "collections.abc.Callable, input_tuple: tuple, ...) -> "
                            f"torch._C.ScriptFunction\n\nInvoked with: ..., {example_inputs!r}, ...")
        example_kwarg_inputs = None
    if example_kwarg_inputs is not None:
        names = _argument_names(func)
        _check_keywords(func, example_kwarg_inputs)
        keys = [n for n in names if n in example_kwarg_inputs]
        example_inputs = tuple(example_kwarg_inputs[n] for n in keys)
        arg_names = keys

        def call(*args):  # the function is called with keywords, as torch calls it
            return func(**dict(zip(keys, args)))
    inputs = example_inputs if isinstance(example_inputs, tuple) else _normalize_inputs(example_inputs)
    with collector_paused():
        state, _ = trace_graph(call, inputs, strict=strict, force_outplace=_force_outplace,
                               argument_names=arg_names)
        from .traced import TracedFunction
        traced = TracedFunction(state.graph, name, func, qualified)
        if check_trace:
            from ._check import check_trace as _check
            kwarg = isinstance(example_kwarg_inputs, dict)
            default = [example_kwarg_inputs if kwarg else inputs]
            if _deep_check and not kwarg:
                from ._deep_check import deep_check_or_raise
                deep_check_or_raise(traced, default if check_inputs is None else check_inputs, check_tolerance)
            _check(traced, func, default if check_inputs is None else check_inputs, check_tolerance,
                   strict, _force_outplace, kwarg)
    return traced


def _unique_state(module):
    """_unique_state_dict(keep_vars=True): parameters and buffers, each tensor once."""
    seen, out = set(), []
    for _, t in list(module.named_parameters()) + list(module.named_buffers()):
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def _get_trace_graph(f, args=(), kwargs=None, strict=True, _force_outplace=False,
                     return_inputs=False, _return_inputs_states=False):
    """torch.jit._get_trace_graph (ONNXTracedModule): trace ``f`` on flattened tensor inputs, a
    module's unique parameters and buffers appended as further inputs; returns (graph, outputs)
    and, with return_inputs, clones of the inputs. Values are named from one frame further out
    (torch's default name lookup, frames_up=1)."""
    from ._flatten import flatten, unflatten
    from ._module_trace import _module_base
    kwargs = kwargs or {}
    if not isinstance(args, tuple):
        args = (args,)
    in_vars, in_desc = flatten(args)
    state = _unique_state(f) if isinstance(f, _module_base()) else []
    outs, ret_inputs = [], []

    def wrapper(*all_args):
        in_args = list(all_args[:len(in_vars)])
        # (no loop variable here: this frame is where names are looked up, frames_up=1, and a
        # local bound to an input would name it)
        if not all(isinstance(a, Tensor) for a in in_args):
            raise RuntimeError("Expected Tensor argument")
        trace_inputs = unflatten(in_args, in_desc)
        if return_inputs:
            ret_inputs.append(tuple(a.clone() for a in all_args))
        outs.append(f(*trace_inputs, **kwargs))
        out_vars, _ = flatten(outs)
        return out_vars[0] if len(out_vars) == 1 else tuple(out_vars)

    traced_state, _ = trace_graph(wrapper, tuple(in_vars) + tuple(state), strict=strict,
                                  force_outplace=_force_outplace, argument_names=[], frames_up=1)
    if return_inputs:
        return traced_state.graph, outs[0], ret_inputs[0]
    return traced_state.graph, outs[0]
