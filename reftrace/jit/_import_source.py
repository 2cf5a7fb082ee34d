"""Archived TorchScript code back into class types and graphs
(torch/csrc/jit/serialization/import_source.cpp).

A TorchScript archive stores each class as Python-looking source, as the python printer wrote it
(``_python_print.py``):

    class Net(Module):
      __parameters__ = ["weight", ]
      __buffers__ = []
      weight : Tensor
      training : bool
      lin : __torch__.torch.nn.modules.linear.Linear
      def forward(self: __torch__.Net,
        x: Tensor) -> Tensor:
        lin = self.lin
        _0 = torch.add((lin).forward(x, ), CONSTANTS.c0)
        return _0

That text is *parsed* with Python's ``ast`` and each expression is resolved here: nothing in a file
is ever executed, imported or looked up by name outside the tables below. What is accepted is the
language traced programs print: calls of ops (``torch.add``, ``ops.prim.NumToTensor``) resolved
against reftrace's op table with TorchScript's overload rules, ``CONSTANTS.cN``, literals,
attribute and submodule access, method and function calls, tuple/list/dict literals, subscripts,
tuple unpacking, ``int()``/``float()``/``bool()``, ``annotate`` and ``uninitialized``. Scripted
control flow (``if``, loops: torch's prim::If / prim::Loop) and anything else is refused with a
``RuntimeError`` naming the construct and its line.

Each class's declarations give its type (attributes, ``__parameters__``, ``__buffers__``);
each method is checked at load and emitted on first use by ``_ir_emitter.FunctionEmitter``.
"""
import ast

from . import _types as T
from ._ir_emitter import FunctionEmitter, _dotted, _where, check_statements


_SIMPLE_TYPES = {"Tensor": T.TENSOR, "int": T.IntType, "float": T.FloatType, "bool": T.BoolType,
                 "str": T.StringType, "NoneType": T.NoneType, "Device": T.DeviceType,
                 "number": T.NumberType, "Generator": T.GeneratorType, "complex": T.ComplexType}

# -- the archive's classes ------------------------------------------------------------------------

class ClassInfo:
    """What a class declaration says besides its attributes' types."""

    def __init__(self):
        self.parameters = []   # __parameters__
        self.buffers = []      # __buffers__
        self.methods = {}      # name -> ast.FunctionDef, in source order


class SourceImporter:
    """SourceImporterImpl: every class and function of an archive's ``code/`` files, compiled on
    first use. ``code`` maps archive paths (``code/__torch__/foo.py``) to source text."""

    def __init__(self, code, constants):
        self.constants = tuple(constants)
        self.classes = {}      # qualified name -> (ast.ClassDef, its source file path)
        self.functions = {}    # qualified name -> ast.FunctionDef
        self.types = {}        # qualified name -> ClassType
        self.function_types = {}
        self.info = {}         # ClassType -> ClassInfo
        for path, text in code.items():
            qualifier = _qualifier(path)
            try:
                tree = ast.parse(text, filename=path)
            except SyntaxError as e:
                raise RuntimeError(f"{path}: archived code is not valid: {e.msg} at line {e.lineno}") from None
            for stmt in tree.body:
                if isinstance(stmt, ast.ClassDef):
                    self.classes[qualifier + "." + stmt.name] = (stmt, path)
                elif isinstance(stmt, ast.FunctionDef):
                    self.functions[qualifier + "." + stmt.name] = stmt
                elif not _is_import_stub(stmt):
                    raise RuntimeError(f"{path} {_where(stmt)}: unexpected {type(stmt).__name__} "
                                       "at the top level of archived code")

    # -- types -------------------------------------------------------------------------------
    def class_type(self, qualified):
        ty = self.types.get(qualified)
        if ty is not None:
            return ty
        entry = self.classes.get(qualified)
        if entry is None:
            raise RuntimeError(f"archived code refers to class {qualified}, which the archive does not define")
        cdef, path = entry
        ty = self.types[qualified] = T.ClassType(qualified)
        info = self.info[ty] = ClassInfo()
        for stmt in cdef.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in ("__parameters__", "__buffers__"):
                names = _string_list(stmt.value, path)
                (info.parameters if stmt.targets[0].id == "__parameters__" else info.buffers).extend(names)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is None:
                ty.attributes[stmt.target.id] = self.parse_type(stmt.annotation)
            elif isinstance(stmt, ast.FunctionDef):
                info.methods[stmt.name] = stmt
            elif _annotation_assign(stmt):
                # `__annotations__["0"] = T`: an attribute whose name is no identifier
                ty.attributes[stmt.targets[0].slice.value] = self.parse_type(stmt.value)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == "__annotations__":
                continue  # `__annotations__ = []` starts those
            else:
                raise RuntimeError(f"{path} {_where(stmt)}: class {cdef.name}: {type(stmt).__name__} "
                                   "is not part of the class declarations traced modules save")
        return ty

    def compile_methods(self, ty, on_emit=None):
        """The class's methods as ``ty.methods``: every name at once (its statements checked),
        each graph emitted when it is first used (``on_emit(name, graph)`` then)."""
        if not isinstance(ty.methods, LazyMethods):
            defs = self.info[ty].methods
            for fdef in defs.values():
                check_statements(fdef)
            ty.methods = LazyMethods(self, ty, defs, on_emit)
        return ty

    def function_type(self, qualified):
        ft = self.function_types.get(qualified)
        if ft is None:
            fdef = self.functions.get(qualified)
            if fdef is None:
                raise RuntimeError(f"archived code calls {qualified}, which the archive does not define")
            ft = self.function_types[qualified] = T.FunctionType(None, qualified)
            ft.callee = FunctionEmitter(self, fdef, None).emit()
        return ft

    def parse_type(self, expr):
        """An annotation (``Tensor``, ``Optional[bool]``, ``Tuple[Tensor, int]``,
        ``__torch__.foo.Bar``) as a TorchScript type."""
        if isinstance(expr, ast.Constant) and expr.value is None:
            return T.NoneType
        if isinstance(expr, ast.Name) and expr.id in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[expr.id]
        if isinstance(expr, ast.Subscript):
            head = _dotted(expr.value)
            args = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
            if head == "Tuple" and len(args) == 1 and isinstance(args[0], ast.Tuple) and not args[0].elts:
                return T.TupleType(())
            types = [self.parse_type(a) for a in args]
            if head == "List" and len(types) == 1:
                return T.ListType(types[0])
            if head == "Optional" and len(types) == 1:
                return T.OptionalType(types[0])
            if head == "Tuple":
                return T.TupleType(types)
            if head == "Dict" and len(types) == 2:
                return T.DictType(*types)
        name = _dotted(expr)
        if name is not None and name.startswith("__torch__."):
            return self.class_type(name)
        raise RuntimeError(f"unsupported type annotation {ast.unparse(expr)!r} ({_where(expr)})")


class LazyMethods(dict):
    """A loaded class's ``methods`` (name -> Graph, as ``ClassType.methods``): all names from the
    start, in source order; a graph is emitted on first use (a load emits none, so loading a large
    model costs its parsing, not its compilation)."""

    def __init__(self, importer, ty, defs, on_emit):
        super().__init__((name, None) for name in defs)
        self._importer, self._ty, self._defs, self._on_emit = importer, ty, defs, on_emit

    def __getitem__(self, name):
        graph = dict.__getitem__(self, name)
        if graph is None:
            graph = FunctionEmitter(self._importer, self._defs[name], self._ty).emit()
            dict.__setitem__(self, name, graph)
            if self._on_emit is not None:
                self._on_emit(name, graph)
        return graph

    def get(self, name, default=None):
        return self[name] if name in self else default

    def values(self):
        return [self[name] for name in self]

    def items(self):
        return [(name, self[name]) for name in self]


def _annotation_assign(stmt):
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return False
    t = stmt.targets[0]
    return isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and \
        t.value.id == "__annotations__" and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)


def _is_import_stub(stmt):
    """What older archives put before their classes: ``op_version_set = 1``, ``import __torch__``."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    return (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == "op_version_set" and isinstance(stmt.value, ast.Constant))


def _qualifier(path):
    """``m/code/__torch__/torch/nn/modules/linear.py`` -> ``__torch__.torch.nn.modules.linear``."""
    head, sep, tail = path.rpartition("code/")
    rel = tail if sep else path
    if rel.endswith(".py"):
        rel = rel[:-3]
    return rel.replace("/", ".")


def _string_list(expr, path):
    if isinstance(expr, ast.List) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                          for e in expr.elts):
        return [e.value for e in expr.elts]
    raise RuntimeError(f"{path} {_where(expr)}: __parameters__/__buffers__ must be a list of strings")
