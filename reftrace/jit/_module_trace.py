"""Tracing modules: torch.jit.trace_module and the TracedModule it returns (torch/jit/_trace.py).

A traced module is a copy of the module's hierarchy where each module has its own class type
(``__torch__.Net``; a second class of the same name is mangled ``___torch_mangle_N``), shares
the original's parameters and buffers, and has one graph per traced method. Tracing a method:

1. the graph's first input is ``self``; every attribute of every module becomes a
   ``prim::TracedAttr`` value (tracer.cpp gatherParametersAndBuffers), so parameters map to
   values before the function runs;
2. the function runs; each submodule call opens a scope block (Module._slow_forward);
3. FixupTraceScopeBlocks (_scope_blocks.py) turns blocks into methods and ``prim::CallMethod``,
   attributes into ``prim::GetAttr``; clean-up passes run on every method graph.
"""
import warnings
from typing import TYPE_CHECKING, Any

from .._dispatch import STATE
from ..autograd import _deferred
from . import _types as T
from ._gc import collector_paused
from ._io_types import input_types
from ._scope_blocks import fixup_trace_scope_blocks
from .passes import dead_code_elimination, lower_simple_tuples, normalize_ops
from .tracer import TracingState

MANGLE_PREFIX = "___torch_mangle_"


class CompilationUnit:
    """Where class types live; a name used twice is mangled (NameMangler::mangle)."""

    def __init__(self):
        self.names = set()
        self.mangle_index = 0

    def _mangle(self, name):
        atoms = name.split(".")
        for i, atom in enumerate(atoms):
            pos = atom.find(MANGLE_PREFIX)
            if pos >= 0:
                self.mangle_index = max(self.mangle_index, int(atom[pos + len(MANGLE_PREFIX):]) + 1)
                atoms[i] = atom[:pos] + MANGLE_PREFIX + str(self.mangle_index)
                self.mangle_index += 1
                return ".".join(atoms)
        atoms.insert(len(atoms) - 1, MANGLE_PREFIX + str(self.mangle_index))
        self.mangle_index += 1
        return ".".join(atoms)

    def unique_name(self, name):
        """``name``, or a mangled name never handed out before. Only requested names are kept:
        a mangled one is new by construction (mangle_index only grows), so remembering it would
        grow the process-wide unit by every checked trace for good (torch keeps them all)."""
        if name not in self.names:
            self.names.add(name)
            return name
        while name in self.names:
            name = self._mangle(name)
        return name


PYTHON_CU = CompilationUnit()  # torch.jit._state._python_cu: shared by the whole process


def qualified_class_name(cls):
    """torch._jit_internal._qualified_name for a module class. reftrace's own layers live where
    torch's do (reftrace/nn/modules/linear.py ~ torch/nn/modules/linear.py) and are named as
    torch's (__torch__.torch.nn.modules.linear.Linear), so graphs read the same."""
    module = cls.__module__
    if module == "reftrace" or module.startswith("reftrace."):
        module = "torch" + module[len("reftrace"):]
    module = "__torch__" if module == "__main__" else "__torch__." + module
    return module + "." + cls.__name__


def _module_base():
    from ..nn import Module
    return Module


def make_module(mod, module_class, compilation_unit):
    if isinstance(mod, TracedModule):
        return mod
    return (module_class or TopLevelTracedModule)(mod, _compilation_unit=compilation_unit)


if TYPE_CHECKING:
    from ..nn import Module as _ModuleBase
    from .ir import Graph
else:
    _ModuleBase = _module_base()  # (nn imports jit: the base class is looked up late)


class TracedModule(_ModuleBase):
    """A module's traced copy: shares parameters and buffers; forward runs the traced graph."""

    def __init__(self, orig, id_set=None, _compilation_unit=None):
        super().__init__()
        seen = set()

        def check_unique(t):
            if id(t) in seen:
                raise ValueError("TracedModules don't support parameter sharing between modules")
            seen.add(id(t))

        self.training = orig.training
        for name, param in orig._parameters.items():
            if param is not None:
                self._parameters[name] = param
                check_unique(param)
        for name, buf in orig._buffers.items():
            if buf is not None:
                self._buffers[name] = buf
                check_unique(buf)
        if orig._backward_hooks:
            raise ValueError("Modules that have backward hooks assigned can't be compiled: " + str(orig))
        for name, sub in orig._modules.items():
            if sub is not None:
                self._modules[name] = make_module(sub, TracedModule, None)
        cu = _compilation_unit if _compilation_unit is not None else PYTHON_CU
        ty = T.ClassType(cu.unique_name(qualified_class_name(type(orig))))
        # the class's attributes in torch's order (what gatherParametersAndBuffers walks)
        for name in self._parameters:
            ty.attributes[name] = T.TENSOR
        for name in self._buffers:
            ty.attributes[name] = T.TENSOR
        ty.attributes["training"] = T.BoolType
        ty.attributes["_is_full_backward_hook"] = T.NoneType
        for name, sub in self._modules.items():
            ty.attributes[name] = sub._type
        self.__dict__["_type"] = ty
        self.__dict__["_name"] = type(orig).__name__

    def _get_name(self):
        return self._name

    def extra_repr(self):
        return f"original_name={self._name}"

    def forward(self, *args, **kwargs):
        raise RuntimeError("Trace submodules cannot be called.")

    # -- what torch's ScriptModule offers for traced modules ---------------------------------
    @property
    def graph(self) -> "Graph":
        return self._method_graph("forward")

    @property
    def inlined_graph(self) -> "Graph":
        from .inliner import inlined_copy
        return inlined_copy(self.graph)

    @property
    def code(self) -> str:
        """forward's code, as torch's ``traced.code`` prints it."""
        return _Method(self, "forward").code

    @property
    def code_with_constants(self) -> tuple[str, Any]:
        """(forward's code, a ConstMap whose ``c0`` ... are the tensors behind CONSTANTS.c0 ...)."""
        from ._python_print import ConstMap
        code, constants = _Method(self, "forward").code_with_constants
        return code, ConstMap(constants)

    def save(self, f: Any, _extra_files: Any = None) -> None:
        """ScriptModule.save: a TorchScript archive torch.jit.load reads (jit/_export_module.py)."""
        from ._export_module import save
        save(self, f, _extra_files)

    def specializations(self, method="forward"):
        """What the trace of ``method`` baked in from data or shape (spec/specializations.md)."""
        from ._specializations import report_of
        return report_of(self._method_graph(method))

    def _method_graph(self, name):
        try:
            return self._type.methods[name]
        except KeyError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'") from None

    def _has_method(self, name):
        return name in self._type.methods

    def _method_names(self):
        return list(self._type.methods)

    def __delattr__(self, name):
        if name in self._parameters or name in self._buffers or name in self._modules \
                or name in self._type.methods:
            raise RuntimeError("cannot delete methods or parameters of a script module")
        super().__delattr__(name)

    @property
    def _c(self):
        return self  # torch's tests reach methods through `module._c`

    def _get_method(self, name):
        return _Method(self, name)

    def __getattr__(self, name):
        methods = self.__dict__.get("_type")
        if methods is not None and name in methods.methods and name != "forward":
            return _Method(self, name)
        try:
            return super().__getattr__(name)
        except AttributeError:
            # torch forwards attribute access to the underlying RecursiveScriptModule
            raise AttributeError(f"'RecursiveScriptModule' object has no attribute '{name}'") from None


class TopLevelTracedModule(TracedModule):
    """The module trace() returns: calling it runs the traced forward graph."""

    @property
    def forward(self):
        return _Method(self, "forward")  # torch's ScriptMethod: callable, with .graph and .code


class _Method:
    """A traced method bound to its module (torch's ScriptMethod)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    @property
    def graph(self):
        return self.module._method_graph(self.name)

    @property
    def inlined_graph(self):
        from .inliner import inlined_copy
        return inlined_copy(self.graph)

    @property
    def code(self):
        return self.code_with_constants[0]

    @property
    def code_with_constants(self):
        """(code, {"c0": tensor, ...}), as torch's ScriptMethod.code_with_constants."""
        from ._python_print import graph_code
        return graph_code(self.graph, self.name, is_method=True)

    def __call__(self, *args, **kwargs):
        from ._call_args import bind, interpreter_failure
        args = bind(self.graph, self.name, (self.module,) + args, kwargs, skip=1)[1:]
        tracer = STATE.tracer
        if tracer is not None:
            if id(self.module) not in tracer.module_values:
                # script_init.cpp: a traced module's method runs inside a trace only as a call of
                # one of the traced module's own submodules
                raise RuntimeError(
                    f"Tried to trace <{self.module._type.qualified_name} object at "
                    f"{hex(id(self.module))}> but it is not part of the active trace. Modules that are "
                    "called during a trace must be registered as submodules of the thing being traced.")
            return tracer.call_traced(self.graph, args, self.name, self.module)  # prim::CallMethod
        # generated code (codegen.py): the interpreter's results without its per-node cost.
        # Its cache on the graph is read first: an import statement here costs ~2 us a call.
        graph = self.graph
        run = graph.__dict__.get("_compiled")
        if run is None:
            from .codegen import compiled
            run = compiled(graph, self.name)
        try:
            return run(self.module, *args)
        except Exception as e:  # noqa: BLE001 - every op failure is reported as torch reports it
            raise interpreter_failure(e) from e

    def specializations(self):
        return self.module.specializations(self.name)

    def run_interpreted(self, *args, **kwargs):
        """Run the method (and the submodule methods it calls) through the interpreter."""
        from ._call_args import bind, interpreter_failure
        from .interpreter import run_graph
        args = bind(self.graph, self.name, (self.module,) + args, kwargs, skip=1)
        try:
            return run_graph(self.graph, args)
        except Exception as e:  # noqa: BLE001
            raise interpreter_failure(e) from e


# -- tracing one method -------------------------------------------------------------------------

def _gather_parameters_and_buffers(state, self_value, module, prefix):
    """One prim::TracedAttr per attribute of each module, recursively (tracer.cpp)."""
    from ._trace import _add_input
    g = state.graph
    state.module_values[id(module)] = self_value
    for name, attr_type in module._type.attributes.items():
        qualname = prefix + "." + name
        node = g.append(g.create("prim::TracedAttr"))
        node.set_attr("scope", "s", qualname)
        value = getattr(module, name)
        if isinstance(attr_type, T.TensorType):
            out = node.add_output(T.TensorType.of(value))
            _add_input(state, value, T.TensorType.of(value), out)
        else:
            out = node.add_output(attr_type)
            if isinstance(attr_type, T.ClassType):
                _gather_parameters_and_buffers(state, out, value, qualname)


def _all_modules(module):
    """Every module of the tree, children before parents (post-order), without recursion: a
    chain thousands of modules deep is walked in linear time."""
    out, stack = [], [(module, False)]
    while stack:
        m, expanded = stack.pop()
        if expanded:
            out.append(m)
            continue
        stack.append((m, True))
        stack.extend((c, False) for c in reversed(list(m._modules.values())))
    return out


def create_method_from_trace(module, method_name, func, example_inputs, strict, force_outplace,
                             argument_names):
    """_create_method_from_trace: trace ``func`` into ``module``'s method ``method_name``."""
    from ._trace import _add_input, _get_output
    if STATE.tracer is not None:
        raise RuntimeError("Tracing can't be nested")
    types = input_types(example_inputs)
    state = TracingState(force_outplace=force_outplace, strict=strict)
    g = state.graph
    STATE.tracer = state
    _deferred.tracing_started()
    try:
        self_value = g.add_input(module._type, "self")
        _gather_parameters_and_buffers(state, self_value, module, "__module")
        named = len(argument_names) >= len(example_inputs)
        inputs = []
        for i, (v, t) in enumerate(zip(example_inputs, types)):
            value = g.add_input(t, argument_names[i] if named else None)
            inputs.append(_add_input(state, v, t, value))
        out = func(*inputs)
        if out is None:
            raise RuntimeError("The traced function didn't return any values! Side-effects are not "
                               "captured in traces, so it would be a no-op.")
        if isinstance(out, tuple) and hasattr(out, "_fields"):
            out = tuple(out)
        g.register_output(_get_output(state, out, 1))
    finally:
        STATE.tracer = None
        state.finish()
        _deferred.tracing_ended()
    fixup_trace_scope_blocks(g, module)
    for m in _all_modules(module):
        for graph in m._type.methods.values():
            lower_simple_tuples(graph)
            dead_code_elimination(graph)
    lower_simple_tuples(g)
    dead_code_elimination(g)
    normalize_ops(g)
    g._specializations = state.specializations  # traced.specializations()
    module._type.methods[method_name] = g
    return g


def _argument_names(fn):
    from ._trace import _argument_names as names
    return names(fn)


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True,
                 _deep_check=False):
    """torch.jit.trace_module: trace the named methods of a module into one TracedModule.
    ``_deep_check=True`` (reftrace's) deep-checks forward first (_deep_check.py)."""
    from . import _trace
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    if not isinstance(mod, _module_base()):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    _trace.check_strict(strict, "_create_method_from_trace", "None")
    old_map = _trace.trace_module_map()
    try:
        module_map = {}

        def register_submods(m, prefix):
            for name, child in m.named_children():
                qualname = prefix + "." + name
                module_map[child] = qualname
                register_submods(child, qualname)

        module_map["__module"] = mod
        _trace.set_trace_module_map(module_map)
        register_submods(mod, "__module")
        module = make_module(mod, _module_class, _compilation_unit)
        module.__dict__["_original_module"] = mod  # what reftrace.jit.check compares against
        with collector_paused():  # (no helper function here: the checker's warnings count frames)
            for method_name, example_inputs in inputs.items():
                if method_name == "forward":
                    func = mod  # Module.__call__: hooks run inside the trace
                    argument_names = _argument_names(getattr(mod, method_name))
                else:
                    func = getattr(mod, method_name)
                    argument_names = _argument_names(func)
                if isinstance(example_inputs, dict) and example_inputs_is_kwarg:
                    argument_names = list(example_inputs)
                    example_inputs = tuple(example_inputs.values())
                else:
                    example_inputs = _trace._normalize_inputs(example_inputs)
                create_method_from_trace(module, method_name, func, example_inputs, strict,
                                         _force_outplace, argument_names)
                if check_trace and _deep_check and method_name == "forward" and not example_inputs_is_kwarg:
                    from ._deep_check import deep_check_or_raise
                    deep_check_or_raise(module, [c["forward"] for c in (check_inputs or [inputs])
                                                 if "forward" in c], check_tolerance)
                if check_trace:
                    from ._check import check_module_trace
                    check_module_trace(check_inputs if check_inputs is not None else [inputs], mod,
                                       module, method_name, check_tolerance, strict, _force_outplace,
                                       _module_class, example_inputs_is_kwarg)
    finally:
        _trace.set_trace_module_map(old_map)
    return module
