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
            raise AttributeError(f"'RecursiveScriptModule' object has no attribute 'forward'")
        return _Method(self, "forward")

    def __call__(self, *args, **kwargs):
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
        if isinstance(value, archived_object_type):
            module._modules[name] = build_module(importer, value, archived_object_type)
        elif name in params:
            module._parameters[name] = value
        elif name in buffers:
            module._buffers[name] = value
        else:
            object.__setattr__(module, name, value)  # training, _is_full_backward_hook, ...
    importer.compile_methods(ty)
    return module
