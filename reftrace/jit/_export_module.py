"""Writing TorchScript archives (torch/csrc/jit/serialization/export_module.cpp's
ScriptModuleSerializer), for traced functions and traced modules.

1. **Types.** Starting from the root module's class, every class and function the code refers
   to is printed once (convertTypes: a breadth-first walk over the dependencies each printed
   class reveals: its attributes' classes, then the functions its methods call). A type goes into
   the file of its qualifier (``__torch__.torch.nn.modules.linear.Linear`` ->
   ``code/__torch__/torch/nn/modules/linear.py``), files in the order first used.
2. **Classes** print as torch's printNamedType does: ``__parameters__``, ``__buffers__``, each
   attribute's type (``name : T``, or ``__annotations__["0"] = T`` for a name that is not an
   identifier), then each method with ``self`` annotated. A traced function saved on its own is
   the ``forward`` of a ``PlaceholderModule`` class (torch's ScriptFunction.save).
3. **Constants** (tensors in the code) are one table shared by all files: constants.pkl.
4. **data.pkl** is the module object: each module an object of its class, with its attributes
   (parameters and buffers as tensors, ``training``, ``_is_full_backward_hook``, submodules).
5. **version** is 3, or more when an op with an upgrader is used (``aten::div`` -> 4).

torch also writes ``*.debug_pkl`` (source ranges of the Python that was traced) and, for
trace_module, ``traced_inputs.pkl`` (the example inputs); torch.jit.load reads neither, and
reftrace does not write them (spec/serialization.md SER-9).
"""
from typing import Any

from .. import serialization as _ser
from .._inline_container import ZipWriter, archive_name
from .._pickler import Pickler
from .._weights_only_unpickler import ArchivedObject
from . import _types as T
from ._python_print import PythonPrinter, annotation_str, is_valid_identifier, quoted_string

# torch._C._get_operator_version_map() of torch 2.13: full schema name -> the version at which
# the operator changed (python_print.cpp checkVersion raises the archive's version to it)
OPERATOR_VERSIONS = {
    "aten::div.Tensor": 4, "aten::div.Scalar": 4, "aten::div.Tensor_mode": 4,
    "aten::div.Scalar_mode": 4, "aten::div.out": 4, "aten::div.out_mode": 4,
    "aten::div_.Tensor": 4, "aten::div_.Scalar": 4, "aten::div_.Tensor_mode": 4,
    "aten::div_.Scalar_mode": 4, "aten::full": 5, "aten::full.out": 5,
    "aten::linspace": 8, "aten::linspace.out": 8, "aten::logspace": 9, "aten::logspace.out": 9,
    "aten::gelu": 10, "aten::gelu.out": 10,
}
MIN_PRODUCED_VERSION = 3  # kMinProducedFileFormatVersion
PLACEHOLDER = "__torch__.PlaceholderModule"


class _Class:
    """What printNamedType needs of one module class: its type, and which of its tensor
    attributes are parameters and which buffers (from a module of that class)."""

    def __init__(self, qualified_name, attributes, methods, parameters=(), buffers=(),
                 function_as_method=False):
        self.qualified_name = qualified_name
        self.attributes = attributes      # name -> Type
        self.methods = methods            # name -> Graph
        self.parameters = list(parameters)
        self.buffers = list(buffers)
        self.function_as_method = function_as_method  # PlaceholderModule.forward: no self input


def _class_of_module(module):
    ty = module._type
    return _Class(ty.qualified_name, ty.attributes, ty.methods, module._parameters, module._buffers)


class _Deps:
    """class_deps_: every type to print, once, in the order first referred to."""

    def __init__(self):
        self.items, self.seen = [], set()

    def add(self, qualified_name, item):
        if qualified_name not in self.seen:
            self.seen.add(qualified_name)
            self.items.append(item)


def _attribute_annotation(name, t):
    if name == "_is_full_backward_hook":
        return "Optional[bool]"
    return annotation_str(T.erase_shape(t))


class ScriptModuleSerializer:
    """One archive's printing session. ``classes`` maps each module class type of the saved
    module tree to its _Class (empty for a saved function)."""

    def __init__(self, classes):
        self.classes = classes
        self.constants = []
        self.files = {}          # qualifier -> PythonPrinter, in order of first use
        self.deps = _Deps()
        self.graphs = []

    def _printer(self, qualifier):
        p = self.files.get(qualifier)
        if p is None:
            # a called function's type carries its qualified name (set by TracedFunction)
            p = self.files[qualifier] = PythonPrinter(
                self.constants, lambda fn: self.deps.add(fn.qualified_name, fn))
        return p

    def convert_types(self, root):
        self.deps.add(root.qualified_name, root)
        i = 0
        while i < len(self.deps.items):  # printing may add more dependencies
            self._convert_named_type(self.deps.items[i])
            i += 1

    def _convert_named_type(self, item):
        if isinstance(item, _Class):
            qualifier, _, name = item.qualified_name.rpartition(".")
            self._print_class(self._printer(qualifier), item, name)
        else:  # a traced function called from the code
            qualifier, _, name = item.qualified_name.rpartition(".")
            self.graphs.append(item.callee)
            self._printer(qualifier).print_function(item.callee, name)

    def _print_class(self, p, cls, name):
        out = p.lines
        out.append(f"class {name}(Module):\n")
        out.append("  __parameters__ = [" + "".join(f'"{n}", ' for n in cls.parameters) + "]\n")
        out.append("  __buffers__ = [" + "".join(f'"{n}", ' for n in cls.buffers) + "]\n")
        for attr, t in cls.attributes.items():
            self._register_class_dependencies(t)
            ann = _attribute_annotation(attr, t)
            if is_valid_identifier(attr):
                out.append(f"  {attr} : {ann}\n")
            else:
                out.append(f"  __annotations__[{quoted_string(attr)}] = {ann}\n")
        for method_name, graph in cls.methods.items():
            self.graphs.append(graph)
            p.print_function(graph, method_name, is_method=not cls.function_as_method,
                             self_type=cls.qualified_name, level=1)

    def _register_class_dependencies(self, t):
        """registerClassDependencies: the class, then (depth first) the classes of its
        attributes: a ClassType's contained types are its attributes' types."""
        stack = [t]
        while stack:
            t = stack.pop()
            if isinstance(t, T.ClassType):
                self.deps.add(t.qualified_name, self.classes[t])
                stack.extend(reversed(list(t.attributes.values())))

    def code_files(self):
        """(path, text) of each code file: code/__torch__/a/b.py for qualifier __torch__.a.b."""
        for qualifier, p in self.files.items():
            yield "code/" + qualifier.replace(".", "/") + ".py", p.text()

    def version(self):
        v = MIN_PRODUCED_VERSION
        for g in self.graphs:
            for n in g.block:
                schema = n.op.schema if n.op is not None else None
                if schema is not None:
                    full = schema.name + ("." + schema.overload if schema.overload else "")
                    v = max(v, OPERATOR_VERSIONS.get(full, 0))
        return v


def _module_object(module):
    """data.pkl's object for a traced module: its class, with its attributes' values."""
    state = {}
    for name, t in module._type.attributes.items():
        if isinstance(t, T.ClassType):
            state[name] = _module_object(module._modules[name])
        elif name == "training":
            state[name] = bool(module.training)
        elif name == "_is_full_backward_hook":
            state[name] = None
        else:
            state[name] = getattr(module, name)
    return ArchivedObject(module._type.qualified_name, state)


def _submodule_classes(module, table):
    table[module._type] = _class_of_module(module)
    for sub in module._modules.values():
        _submodule_classes(sub, table)
    return table


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """torch.jit.save: write the traced function or traced module ``m`` to the path or binary
    file ``f`` as a TorchScript archive torch 2.13's torch.jit.load reads."""
    from .traced import TracedFunction
    from ._module_trace import TracedModule
    if isinstance(m, TracedFunction):
        # ScriptFunction.save: the function is the forward of a placeholder module
        classes = {}
        root = _Class(PLACEHOLDER, {"training": T.BoolType}, {"forward": m.graph},
                      function_as_method=True)
        data = ArchivedObject(PLACEHOLDER, {"training": True})
    elif isinstance(m, TracedModule):
        classes = _submodule_classes(m, {})
        root = classes[m._type]
        data = _module_object(m)
    else:
        raise TypeError(f"reftrace.jit.save saves traced functions and traced modules "
                        f"(what reftrace.jit.trace returns), not {type(m).__name__}")
    serializer = ScriptModuleSerializer(classes)
    serializer.convert_types(root)
    code = list(serializer.code_files())

    z = ZipWriter(archive_name(f))
    for name, content in (_extra_files or {}).items():
        z.write(f"extra/{name}", content.encode("utf-8") if isinstance(content, str) else content)
    data_storages = _ser.StorageTable()
    data_pkl = Pickler(data_storages.pid, parameters_as_tensors=True).dump(data)
    for key, raw in data_storages.storage_bytes():
        z.write(f"data/{key}", raw)
    z.write("data.pkl", data_pkl)
    for path, text in code:
        z.write(path, text.encode("utf-8"), compress=True)
    const_storages = _ser.StorageTable()
    constants_pkl = Pickler(const_storages.pid, parameters_as_tensors=True).dump(
        tuple(serializer.constants))
    for key, raw in const_storages.storage_bytes():
        z.write(f"constants/{key}", raw)
    z.write("constants.pkl", constants_pkl)
    version = serializer.version()
    # PyTorchStreamWriter::writeEndOfFile: from version 6 on the record is .data/version
    z.write(".data/version" if version >= 6 else "version", f"{version}\n".encode())
    z.write("byteorder", b"little")
    z.write(".data/serialization_id", _ser.serialization_id().encode())
    z.save(f)
