"""What ``reftrace.jit.load`` returns: torch's RecursiveScriptModule (torch/jit/_script.py).

A loaded module is built from an archive's object tree and its compiled classes
(``_import_source.py``): each module has its class type (``__torch__.Net``, with one graph per
method), its parameters and buffers (in the order the class declares them), its submodules and
its other attributes. It behaves as a traced module does (``TracedModule`` is the shared base):
calling it runs the forward graph through the generated code; ``.graph``, ``.code``,
``.inlined_graph``, ``state_dict()``, ``named_parameters()``, ``eval()``/``train()`` work as in
torch. Every loaded module whose class has ``forward`` is callable, the submodules too.
"""
from ._module_trace import TracedModule, _Method


class RecursiveScriptModule(TracedModule):
    """A module loaded from a TorchScript archive."""

    def __init__(self, class_type):
        # TracedModule.__init__ copies a live module; a loaded one is filled from the archive
        from ..nn import Module
        Module.__init__(self)
        self.__dict__["_type"] = class_type
        self.__dict__["_name"] = class_type.qualified_name.rsplit(".", 1)[-1]

    @property
    def original_name(self):
        return self._name

    def _get_name(self):
        return "RecursiveScriptModule"

    @property
    def forward(self):
        if "forward" not in self._type.methods:
            raise AttributeError("'RecursiveScriptModule' object has no attribute 'forward'")
        return _Method(self, "forward")

    def __call__(self, *args, **kwargs):
        if "forward" not in self._type.methods:  # nn.Module's _forward_unimplemented
            raise NotImplementedError(
                'Module [RecursiveScriptModule] is missing the required "forward" function')
        return self.forward(*args, **kwargs)


def build_module(importer, obj, archived_object_type):
    """The module for one archived object (its submodules first built the same way)."""
    ty = importer.class_type(obj.qualified_name)
    module = RecursiveScriptModule(ty)
    state = obj.state if isinstance(obj.state, dict) else {}
    info = importer.info[ty]
    params, buffers = set(info.parameters), set(info.buffers)
    for name in ty.attributes:
        if name not in state:
            raise RuntimeError(f"archive is inconsistent: the state of {ty} lacks its attribute '{name}'")
    for name, value in state.items():
        _check_attribute(ty, name, value, archived_object_type)
        if isinstance(value, archived_object_type):
            module._modules[name] = build_module(importer, value, archived_object_type)
        elif name in params:
            module._parameters[name] = value
        elif name in buffers:
            module._buffers[name] = value
        else:
            object.__setattr__(module, name, value)  # training, _is_full_backward_hook, ...
    importer.compile_methods(ty, _attach_executor)
    return module


def _attach_executor(name, graph):
    graph.__dict__["_compiled"] = ExecutorCode(graph, name)


def _check_attribute(ty, name, value, archived_object_type):
    """The state of an untrusted file agrees with what its class declares."""
    from ._types import ClassType, OptionalType, TensorType
    from .._tensor import Tensor
    declared = ty.attributes.get(name)
    if declared is None:
        raise RuntimeError(f"archive is inconsistent: {ty} declares no attribute '{name}'")
    if isinstance(declared, OptionalType):
        if value is None:
            return
        declared = declared.elem
    if isinstance(declared, TensorType):
        ok = isinstance(value, Tensor)
    elif isinstance(declared, ClassType):
        ok = isinstance(value, archived_object_type) and value.qualified_name == declared.qualified_name
    else:
        ok = {"bool": bool, "int": int, "float": float, "str": str, "NoneType": type(None)}.get(
            str(declared), object) is type(value) or (str(declared) == "float" and type(value) is int)
    if not ok:
        raise RuntimeError(f"archive is inconsistent: attribute '{name}' of {ty} is declared "
                           f"{declared} but holds a {type(value).__name__}")


class ExecutorCode:
    """What calling a loaded method runs: the generated code (codegen.py) of a copy of its graph
    in which every 0-dim CPU tensor constant is a wrapped number. torch's graph executor runs
    such constants as wrapped numbers (``x_int32 * CONSTANTS.c0`` with ``c0 = 2.5`` is Float, as in
    the trace), while the constant itself, as ``code_with_constants`` shows it, stays a plain
    Double tensor (spec LOAD-5). Built on the first call, so loading pays nothing for it."""

    def __init__(self, graph, name):
        self.graph, self.name, self._code = graph, name, None

    def _built(self):
        if self._code is None:
            from ._graph_copy import copy_graph
            from .codegen import CompiledGraph
            run = copy_graph(self.graph)
            for node in run:
                if node.kind_ == "prim::Uninitialized":
                    raise RuntimeError(
                        f"{self.name}: cannot run uninitialized({node.outputs_[0].type_}): it stands "
                        "for a value that scripted control flow defines, which traces never have")
                if node.kind_ == "prim::Constant" and node.attrs and node.attrs.get("value", ("",))[0] == "t":
                    t = node.attrs["value"][1]
                    if t._array.ndim == 0 and t.device.type == "cpu":
                        wrapped = t.detach()  # a view: the same storage, its own flags
                        wrapped._wrapped = True
                        node.attrs["value"] = ("t", wrapped)
            self._code = CompiledGraph(run, self.name)
        return self._code

    def __call__(self, *args):
        return self._built()(*args)

    def run_nested_fast(self, *args):  # a call from generated code (codegen._call_method)
        return self._built().run_nested_fast(*args)

    def run_nested_grad(self, *args):
        return self._built().run_nested_grad(*args)

    def __getattr__(self, name):  # .source of the generated code
        if name.startswith("_"):  # (copy and pickle probe a fresh instance for these)
            raise AttributeError(name)
        return getattr(self._built(), name)

    def __deepcopy__(self, memo):
        import copy
        return ExecutorCode(copy.deepcopy(self.graph, memo), self.name)
