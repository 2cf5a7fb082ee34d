"""One archived function's body into a graph (torch/csrc/jit/frontend/ir_emitter.cpp, with
schema_matching.cpp's tryMatchSchema, for the language traced programs print).

``FunctionEmitter`` walks a ``def``'s statements (``ast``, never executed) and emits nodes:

* calls of ops (``torch.add(x, y, alpha=2)``, ``ops.prim.NumToTensor(n)``) are matched against the
  overloads of the op table in order, first without and then with implicit conversions (a Tensor
  where an int is wanted becomes ``aten::IntImplicit``, ...); missing arguments with defaults
  become constants; an op with several results gives a sugared tuple that unpacking reads;
* ``self.lin`` is ``prim::GetAttr`` (named after the field), ``(lin).forward(x, )``
  ``prim::CallMethod``, ``__torch__.f(x, )`` ``prim::CallFunction``; literals and ``CONSTANTS.cN``
  are ``prim::Constant``; tuple/list/dict literals, subscripts, ``int()``, ``annotate`` ... have
  their own nodes; anything else, control flow first, is refused with a ``RuntimeError``.

How values are named follows the emitter, so ``.graph`` reads like torch's loaded graph: a
variable assigned a value without a name gives it that name (``meaningfulName``: not ``_0``), and
each later read of the variable is a ``prim::Load`` whose output takes the name, renaming the
earlier owner ``x.1``, ``x.2`` ... (Value::setDebugName); the loads vanish in SSA conversion,
leaving the definition named ``x.1``. Number literals are put at the front of the graph as they
are first written (materializeConstant); at the end unused constants go and equal ones are merged
and hoisted (ConstantPooling), so the constants' order is torch's.
"""
import ast
import math

from .. import _dtype as D
from ..ops._registry import PACKETS
from . import _types as T
from ._python_print import _default_ivalue
from ._schema_matching import is_subtype, return_type as _return_type, same_type as _same, schema_type
from .ir import Graph, Value


# builtins that traced code prints and reftrace's op table does not hold (the interpreter and the
# generated code run them by kind): name -> [(kind, parameter types, return type)]
_BUILTINS = {
    "torch.size": [("aten::size", (T.TENSOR, T.IntType), T.IntType)],
    "torch.numel": [("aten::numel", (T.TENSOR,), T.IntType)],
    "ops.prim.NumToTensor": [("prim::NumToTensor", (T.IntType,), T.TENSOR),
                             ("prim::NumToTensor", (T.NumberType,), T.TENSOR)],
    "int": [("aten::Int", (T.TENSOR,), T.IntType)],
    "float": [("aten::Float", (T.TENSOR,), T.FloatType)],
    "bool": [("aten::Bool", (T.TENSOR,), T.BoolType)],
}

# calls with their own syntax (emitApplySpecialForm): FunctionEmitter.call_<name>
_SPECIAL_FORMS = frozenset({"annotate", "uninitialized", "getattr"})

# annotate(T, tensor): the implicit conversion tryConvertToType inserts
_IMPLICIT = {"number": ("aten::ScalarImplicit", T.NumberType),
             "int": ("aten::IntImplicit", T.IntType), "float": ("aten::FloatImplicit", T.FloatType)}


# the statements a traced program's code never has
_REFUSED = {ast.If: "an if statement (prim::If)", ast.For: "a for loop (prim::Loop)",
            ast.While: "a while loop (prim::Loop)", ast.With: "a with statement",
            ast.Raise: "raise (prim::RaiseException)", ast.Assert: "assert", ast.Try: "try",
            ast.Delete: "del", ast.AugAssign: "an augmented assignment"}
_STATEMENTS = (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr, ast.Pass)


def refuse_statement(fdef, stmt):
    what = _REFUSED.get(type(stmt), type(stmt).__name__)
    raise RuntimeError(f"{fdef.name} ({_where(stmt)}): {what} is scripted control flow or code not "
                       "produced by tracing; reftrace loads traced programs only")


def check_statements(fdef):
    """Refuse, before anything is emitted, a function whose body has a statement traced code
    never has (the emitter refuses the same when it reaches it)."""
    for stmt in fdef.body:
        if not isinstance(stmt, _STATEMENTS):
            refuse_statement(fdef, stmt)


def meaningful_name(name):
    """ir_emitter.cpp meaningfulName: the names the printer makes up (``_0``, ``_1``) are not
    kept as debug names; every other name is (``_foo`` included)."""
    if not name or name[0] == "$":
        return False
    if name[0] != "_":
        return True
    return any(not c.isdigit() for c in name[1:])


def _where(node):
    return f"line {getattr(node, 'lineno', '?')}"


def _dotted(expr):
    """``torch.nn.functional`` -> 'torch.nn.functional'; None when ``expr`` is not a dotted name."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


class _Sugared:
    """A value that is not (yet) a graph value: several outputs of one op, unpacked where used."""
    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values


class FunctionEmitter:
    """to_ir for one ``def``: statements in order, each expression resolved to graph nodes."""

    def __init__(self, importer, fdef, self_type):
        self.importer = importer
        self.fdef = fdef
        self.self_type = self_type
        self.graph = Graph()
        self.env = {}           # variable -> Value (or _Sugared)
        self.loads = []         # the prim::Load outputs' names (gone after SSA conversion)
        self.literals = {}      # number literal -> its hoisted constant (materializeConstant)

    def fail(self, node, what):
        raise RuntimeError(f"{self.fdef.name} ({_where(node)}): {what}")

    # -- entry --------------------------------------------------------------------------------
    def emit(self):
        fdef, g = self.fdef, self.graph
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
            self.fail(fdef, "archived functions take plain positional parameters")
        for i, arg in enumerate(a.args):
            if i == 0 and self.self_type is not None:
                typ = self.self_type
            elif arg.annotation is None:
                typ = T.TENSOR  # an unannotated parameter is a Tensor in TorchScript
            else:
                typ = self.importer.parse_type(arg.annotation)
            v = g.add_input(typ)
            if meaningful_name(arg.arg):
                g.set_debug_name(v, arg.arg)
            self.env[arg.arg] = v
        # the schema's argument names, which the printer uses (debug names may be absent: `_0`)
        g.__dict__["argument_names"] = [arg.arg for arg in a.args]
        self.return_type = self.importer.parse_type(fdef.returns) if fdef.returns is not None else None
        returned = False
        for stmt in fdef.body:
            if returned:
                self.fail(stmt, "statements after return")
            returned = self.statement(stmt)
        if not returned:
            g.register_output(self.constant(None, fdef))
        actual = g.ret.inputs_[0].type_
        if self.return_type is not None and not is_subtype(actual, self.return_type):
            self.fail(fdef, f"Return value was annotated as having type {self.return_type} but is "
                            f"actually of type {actual}")
        for v in self.loads:  # ConvertToSSA erases the loads; their names go with them
            g.set_debug_name(v, None)
        self._hoist_constants()
        return g

    def _hoist_constants(self):
        """ConstantPooling: walking the graph in order, a constant equal to one already seen is
        replaced by it; every other one is moved to the front (so their order reverses)."""
        from .passes import replace_uses
        g = self.graph
        # constant propagation ends with dead code elimination: literals folded into another
        # constant (the parts of `1.5-2.j`) go before pooling
        used = {v for n in list(g) + [g.ret] for v in n.inputs_}
        for node in list(g):
            if node.kind_ == "prim::Constant" and node.outputs_[0] not in used:
                node.destroy()
        seen, mapping = {}, {}
        for node in list(g):
            if node.kind_ != "prim::Constant":
                continue
            key = _constant_key(node)
            if key in seen:
                mapping[node.outputs_[0]] = seen[key]
                node.destroy()
                continue
            seen[key] = node.outputs_[0]
            node.prev.next, node.next.prev = node.next, node.prev
            g.insert_after(node, g.param)
        if mapping:
            replace_uses(g, mapping)

    # -- statements ------------------------------------------------------------------------------
    def statement(self, stmt):
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1:
                self.fail(stmt, "chained assignment is not part of archived code")
            self.assign(stmt.targets[0], self.expr(stmt.value), stmt)
            return False
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
            self.assign(stmt.target, self.expr(stmt.value), stmt)
            return False
        if isinstance(stmt, ast.Return):
            v = self.materialize(self.expr(stmt.value)) if stmt.value is not None else self.constant(None, stmt)
            self.graph.register_output(v)
            return True
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                return False  # a docstring
            self.expr(stmt.value)
            return False
        if isinstance(stmt, ast.Pass):
            return False
        refuse_statement(self.fdef, stmt)

    def assign(self, target, value, stmt):
        if isinstance(target, ast.Name):
            if isinstance(value, _Sugared):
                value = self.materialize(value)
            self.set_var(target.id, value)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            names = target.elts
            if not all(isinstance(n, ast.Name) for n in names):
                self.fail(stmt, "only names can be unpacked into")
            values = self.unpack(value, len(names), stmt)
            for n, v in zip(names, values):
                self.set_var(n.id, v)
            return
        self.fail(stmt, f"cannot assign to {ast.unparse(target)}")

    def set_var(self, name, value):
        """Environment::setVar: an unnamed value takes a meaningful variable name."""
        if not value.hasDebugName() and meaningful_name(name):
            self.graph.set_debug_name(value, name)
        self.env[name] = value

    def unpack(self, value, n, where):
        if isinstance(value, _Sugared):
            values = value.values
        elif value.node_.kind_ == "prim::TupleConstruct":
            values = list(value.node_.inputs_)  # createTupleUnpack of a literal: no node
        else:
            t = value.type_
            if isinstance(t, T.TupleType):
                node = self.append("prim::TupleUnpack", [value])
                for e in t.elems:
                    node.add_output(e)
            elif isinstance(t, T.ListType):
                node = self.append("prim::ListUnpack", [value])
                for _ in range(n):
                    node.add_output(t.elem)
            else:
                self.fail(where, f"cannot unpack a value of type {t}")
            values = node.outputs_
        if len(values) != n:
            self.fail(where, f"expected {n} values to unpack but got {len(values)}")
        return list(values)

    # -- graph building -----------------------------------------------------------------------
    def append(self, kind, inputs, op=None):
        return self.graph.append(self.graph.create(kind, inputs, op))

    def constant(self, value, where, type_=None):
        """prim::Constant for a Python value (int, float, bool, None, str, list, tensor), at the
        insertion point; equal constants are merged at the end (ConstantPooling)."""
        node = self.append("prim::Constant", [])
        if isinstance(value, bool):
            node.set_attr("value", "i", value)  # prints as 0/1; runs as a bool
            return node.add_output(T.BoolType)
        if isinstance(value, int):
            node.set_attr("value", "i", value)
            return node.add_output(T.IntType)
        if isinstance(value, float):
            node.set_attr("value", "f", value)
            return node.add_output(T.FloatType)
        if isinstance(value, complex):
            node.set_attr("value", "c", value)
            return node.add_output(T.ComplexType)
        if value is None:
            return node.add_output(T.NoneType)
        if isinstance(value, str):
            node.set_attr("value", "s", value)
            return node.add_output(type_ or T.StringType)
        if isinstance(value, list):
            node.set_attr("value", "ival", value)
            return node.add_output(type_)
        node.set_attr("value", "t", value)  # a tensor from CONSTANTS
        return node.add_output(T.TENSOR)

    def literal(self, value, where):
        """A number written in the source: materializeConstant puts it at the very front of the
        graph, once per value (ints and floats apart), so later literals end up first."""
        key = (type(value), value, math.copysign(1, value) if isinstance(value, float) else 0,
               repr(value) if isinstance(value, complex) else 0)
        v = self.literals.get(key)
        if v is None:
            v = self.literals[key] = self.constant(value, where)
            node = v.node_
            node.prev.next, node.next.prev = node.next, node.prev
            self.graph.insert_after(node, self.graph.param)
        return v

    def materialize(self, value):
        if isinstance(value, _Sugared):
            return self.tuple_construct(value.values)
        return value

    def tuple_construct(self, values):
        node = self.append("prim::TupleConstruct", values)
        return node.add_output(T.TupleType([v.type_ for v in values]))

    # -- expressions --------------------------------------------------------------------------
    def expr(self, e):
        method = _EXPRESSIONS.get(type(e))
        if method is None:
            self.fail(e, f"{type(e).__name__} expressions ({ast.unparse(e)!r}) are not part of traced code")
        return method(self, e)

    def expr_Name(self, e):
        name = e.id
        if name in self.env:
            return self.load(name)
        if name in ("inf", "nan"):
            return self.constant(float(name), e)
        self.fail(e, f"undefined name {name!r}")

    def load(self, name):
        """prim::Load: its output takes the variable's name (renaming the definition x.1 ...)."""
        v = self.env[name]
        if meaningful_name(name) and isinstance(v, Value):
            dummy = Value(None, 0, -1, v.type_)
            self.graph.set_debug_name(dummy, name)
            self.loads.append(dummy)
        return v

    def expr_Constant(self, e):
        v = e.value
        if type(v) in (int, float):
            return self.literal(v, e)
        if isinstance(v, (bool, str)) or v is None:
            return self.constant(v, e)
        self.fail(e, f"unsupported literal {v!r}")

    def expr_UnaryOp(self, e):
        # the emitter folds a negated number literal into one constant
        if isinstance(e.op, ast.USub):
            inner = e.operand
            if isinstance(inner, ast.Constant) and type(inner.value) in (int, float):
                return self.literal(-inner.value, e)  # the parser folds '-' into the literal
            if isinstance(inner, ast.Name) and inner.id == "inf" and "inf" not in self.env:
                return self.constant(-math.inf, e)
        self.fail(e, f"the operator in {ast.unparse(e)!r} is not part of traced code")

    def expr_BinOp(self, e):
        """A complex literal, as the printer writes it (``1.5-2.j``): the emitter materializes
        both literals and constant propagation folds the arithmetic into one constant, in place."""
        real = _real_literal(e.left)
        right = e.right
        if isinstance(e.op, (ast.Add, ast.Sub)) and real is not None and \
                isinstance(right, ast.Constant) and type(right.value) is complex:
            self.literal(real, e)
            self.literal(right.value, e)
            value = real + right.value if isinstance(e.op, ast.Add) else real - right.value
            return self.constant(complex(value), e)
        self.fail(e, f"the arithmetic in {ast.unparse(e)!r} is not part of traced code")

    def expr_Tuple(self, e):
        return self.tuple_construct([self.materialize(self.expr(x)) for x in e.elts])

    def expr_List(self, e, annotated=None):
        values = [self.materialize(self.expr(x)) for x in e.elts]
        if annotated is not None:
            elem = annotated.elem
            values = [self.convert(v, elem, True, e) for v in values]
        elif not values:
            self.fail(e, "an empty list needs annotate(List[T], [])")
        else:
            elem = values[0].type_
            if not all(_same(v.type_, elem) for v in values):
                self.fail(e, "a list literal's elements must have one type; use annotate(List[T], [...])")
            if isinstance(elem, T.TensorType):
                elem = T.TENSOR
        node = self.append("prim::ListConstruct", values)
        return node.add_output(T.ListType(elem))

    def expr_Dict(self, e, annotated=None):
        values = []
        for k, v in zip(e.keys, e.values):
            if k is None:
                self.fail(e, "dict unpacking (**) is not part of traced code")
            values += [self.materialize(self.expr(k)), self.materialize(self.expr(v))]
        if annotated is not None:
            key_t, val_t = annotated.key, annotated.value
        elif not values:
            self.fail(e, "an empty dict needs annotate(Dict[K, V], {})")
        else:
            key_t, val_t = values[0].type_, values[1].type_
            val_t = T.TENSOR if isinstance(val_t, T.TensorType) else val_t
        node = self.append("prim::DictConstruct", values)
        return node.add_output(T.DictType(key_t, val_t))

    def expr_Attribute(self, e):
        name = _dotted(e)
        if name is not None and name.split(".", 1)[0] not in self.env:
            if name.startswith("CONSTANTS.c") and name[len("CONSTANTS.c"):].isdigit():
                i = int(name[len("CONSTANTS.c"):])
                if i >= len(self.importer.constants):
                    self.fail(e, f"{name}: the archive has {len(self.importer.constants)} constant(s)")
                return self.constant(self.importer.constants[i], e)
            self.fail(e, f"unknown name {name!r}")
        obj = self.materialize(self.expr(e.value))
        return self.get_attr(obj, e.attr, e)

    def get_attr(self, obj, field, where):
        t = obj.type_
        if not isinstance(t, T.ClassType) or field not in t.attributes:
            self.fail(where, f"{t} has no attribute {field!r}")
        node = self.append("prim::GetAttr", [obj])
        node.set_attr("name", "s", field)
        out = node.add_output(t.attributes[field])
        # Graph::createGetAttr names the output after the field (normalizeAttrName: "3" -> "_3")
        self.graph.set_debug_name(out, "_" + field if field.isdigit() else field)
        return out

    def expr_Subscript(self, e):
        container = self.materialize(self.expr(e.value))
        key = self.materialize(self.expr(e.slice))
        t = container.type_
        if isinstance(t, T.TupleType):
            if key.node_.kind_ != "prim::Constant" or key.type_ is not T.IntType:
                self.fail(e, "a tuple can only be indexed by an integer literal")
            i = key.node_.i("value")
            if not -len(t.elems) <= i < len(t.elems):
                self.fail(e, f"tuple index {i} out of range")
            if container.node_.kind_ == "prim::TupleConstruct":  # LowerSimpleTuples
                return container.node_.inputs_[i]
            node = self.append("prim::TupleIndex", [container, key])
            return node.add_output(t.elems[i])
        if isinstance(t, T.ListType) and key.type_ is T.IntType:
            node = self.append("aten::__getitem__", [container, key])
            return node.add_output(t.elem)
        if isinstance(t, T.DictType) and is_subtype(key.type_, t.key):
            node = self.append("aten::__getitem__", [container, key])
            return node.add_output(t.value)
        self.fail(e, f"cannot index a value of type {t} with {key.type_}")

    def expr_Call(self, e):
        func = e.func
        if isinstance(func, ast.Name) and func.id not in self.env and func.id in _SPECIAL_FORMS:
            return getattr(self, "call_" + func.id)(e)
        name = _dotted(func)
        if name is not None and name.split(".", 1)[0] not in self.env:
            if name.startswith("__torch__."):
                return self.call_function(name, e)
            return self.call_op(name, e)
        if isinstance(func, ast.Attribute):  # (module).method(args, )
            obj = self.materialize(self.expr(func.value))
            return self.call_method(obj, func.attr, e)
        self.fail(e, f"cannot call {ast.unparse(func)!r}")

    def _positional(self, e):
        if any(isinstance(a, ast.Starred) for a in e.args):
            self.fail(e, "*args calls are not part of traced code")
        args = [self.materialize(self.expr(a)) for a in e.args]
        kwargs = {}
        for kw in e.keywords:
            if kw.arg is None:
                self.fail(e, "**kwargs calls are not part of traced code")
            kwargs[kw.arg] = self.materialize(self.expr(kw.value))
        return args, kwargs

    def call_method(self, obj, name, e):
        t = obj.type_
        if not isinstance(t, T.ClassType):
            self.fail(e, f"method call .{name}() on a value of type {t}: traced code calls only "
                         "module methods")
        info = self.importer.info.get(t)
        fdef = info.methods.get(name) if info is not None else None
        if fdef is None:
            self.fail(e, f"{t} has no method {name!r}")
        args, kwargs = self._positional(e)
        if kwargs:
            self.fail(e, "keyword arguments to a method call are not part of traced code")
        params = self._signature(fdef, skip_self=True)
        args = self._check_call_args(name, params, args, e)
        node = self.append("prim::CallMethod", [obj] + args)
        node.set_attr("name", "s", name)
        return self._call_outputs(node, fdef)

    def call_function(self, qualified, e):
        ft = self.importer.function_type(qualified)
        fdef = self.importer.functions[qualified]
        args, kwargs = self._positional(e)
        if kwargs:
            self.fail(e, "keyword arguments to a function call are not part of traced code")
        args = self._check_call_args(qualified, self._signature(fdef, skip_self=False), args, e)
        fn = self.append("prim::Constant", [])
        fn.set_attr("name", "s", qualified.rsplit(".", 1)[1])
        fn_value = fn.add_output(ft)
        node = self.append("prim::CallFunction", [fn_value] + args)
        return self._call_outputs(node, fdef)

    def _signature(self, fdef, skip_self):
        args = fdef.args.args[1:] if skip_self else fdef.args.args
        return [T.TENSOR if a.annotation is None else self.importer.parse_type(a.annotation) for a in args]

    def _check_call_args(self, name, params, args, e):
        if len(args) != len(params):
            self.fail(e, f"{name}() expected {len(params)} argument(s) but got {len(args)}")
        out = []
        for p, a in zip(params, args):
            v = self.convert(a, p, True, e)
            if not is_subtype(v.type_, p):
                self.fail(e, f"{name}() expected a value of type {p} but got {a.type_}")
            out.append(v)
        return out

    def _call_outputs(self, node, fdef):
        ret = self.importer.parse_type(fdef.returns) if fdef.returns is not None else T.TENSOR
        return node.add_output(ret)

    # -- builtins with their own syntax ---------------------------------------------------------------
    def call_annotate(self, e):
        if len(e.args) != 2 or e.keywords:
            self.fail(e, "annotate takes a type and a value")
        typ = self.importer.parse_type(e.args[0])
        value = e.args[1]
        if isinstance(value, ast.List) and isinstance(typ, T.ListType):
            return self.expr_List(value, annotated=typ)
        if isinstance(value, ast.Dict) and isinstance(typ, T.DictType):
            return self.expr_Dict(value, annotated=typ)
        v = self.materialize(self.expr(value))
        if isinstance(v.type_, T.TensorType) and ast.unparse(e.args[0]) in _IMPLICIT:
            kind, out = _IMPLICIT[ast.unparse(e.args[0])]
            return self.append(kind, [v]).add_output(out)
        if not is_subtype(v.type_, typ):
            self.fail(e, f"annotate: a value of type {v.type_} is not a {typ}")
        return v

    def call_uninitialized(self, e):
        if len(e.args) != 1:
            self.fail(e, "uninitialized takes a type")
        return self.append("prim::Uninitialized", []).add_output(self.importer.parse_type(e.args[0]))

    def call_getattr(self, e):
        if len(e.args) != 2 or not isinstance(e.args[1], ast.Constant) or not isinstance(e.args[1].value, str):
            self.fail(e, "getattr takes a module and a string literal")
        return self.get_attr(self.materialize(self.expr(e.args[0])), e.args[1].value, e)

    # -- op calls: TorchScript's overload resolution ------------------------------------------------
    def call_op(self, name, e):
        if name == "torch.device":
            return self._device(e)
        args, kwargs = self._positional(e)
        builtins = _BUILTINS.get(name)
        if builtins is not None and not kwargs:
            for kind, params, ret in builtins:
                if len(params) == len(args):
                    for allow in (False, True):
                        conv = [self.convert(a, p, allow, e, dry=True) for a, p in zip(args, params)]
                        if all(c is not None for c in conv):
                            conv = [self.convert(a, p, allow, e) for a, p in zip(args, params)]
                            return self.append(kind, conv).add_output(ret)
        packet = _packet(name)
        if packet is None:
            self.fail(e, f"unknown operator {name!r}: reftrace's op table has no "
                         f"{_aten_name(name) or name}")
        for allow in (False, True):
            for ov in packet.overloads:
                bound = self.match_schema(ov, args, kwargs, allow, e, dry=True)
                if bound is not None:
                    bound = self.match_schema(ov, args, kwargs, allow, e)
                    node = self.append(ov.name, bound, ov)
                    outs = [node.add_output(_return_type(r)) for r in ov.schema.returns]
                    if len(outs) == 1:
                        return outs[0]
                    return _Sugared(outs) if outs else self.constant(None, e)
        got = ", ".join([str(a.type_) for a in args] + [f"{k}={v.type_}" for k, v in kwargs.items()])
        schemas = "\n  ".join(ov.schema.text for ov in packet.overloads)
        self.fail(e, f"no overload of {packet.name} matches the arguments ({got}); reftrace knows:\n  {schemas}")

    def _device(self, e):
        if len(e.args) != 1 or e.keywords or not isinstance(e.args[0], ast.Constant) \
                or not isinstance(e.args[0].value, str):
            self.fail(e, "torch.device takes a string literal in archived code")
        # aten::device(str) on a constant is folded by constant propagation
        return self.constant(e.args[0].value, e, T.DeviceType)

    def match_schema(self, ov, args, kwargs, allow, e, dry=False):
        """tryMatchSchema: positional then keyword arguments, defaults inserted as constants.
        Returns the input values, or None when the schema does not fit (``dry``: build nothing)."""
        params = ov.schema.arguments
        wanted = _wanted_types(ov)
        n_pos = ov.n_positional
        if len(args) > n_pos:
            return None
        for k in kwargs:
            if k not in ov.names or ov.names[k] < len(args) and k != "input":
                return None
        out = []
        for i, p in enumerate(params):
            if i < len(args):
                v = args[i]
            elif p.name in kwargs:
                v = kwargs[p.name]
            elif i == 0 and "input" in kwargs:
                v = kwargs["input"]
            elif p.has_default:
                if dry:
                    out.append(True)
                    continue
                out.append(self._default(p, e))
                continue
            else:
                return None
            want = wanted[i]
            if p.type.is_list and p.type.list_size is not None and v.type_ is T.IntType:
                # a single int for int[N] (broadcasting list): N copies in a list
                if dry:
                    out.append(True)
                    continue
                node = self.append("prim::ListConstruct", [v] * p.type.list_size)
                out.append(node.add_output(T.INT_LIST))
                continue
            c = self.convert(v, want, allow, e, dry=dry)
            if c is None:
                return None
            out.append(c)
        return out

    def _default(self, p, e):
        kind, value = _default_ivalue(p)
        if kind == "List":
            return self.constant(list(value), e, schema_type(p.type))
        if kind == "Other":
            self.fail(e, f"default {p.default!r} of {p.name} cannot be inserted")
        if p.type.base == "ScalarType" and isinstance(value, str):
            value = D.BY_NAME[value].scalar_type
        return self.constant(value, e)

    def convert(self, v, want, allow, e, dry=False):
        """tryConvertToType then the subtype test: the value to pass, or None when it does not fit."""
        t = v.type_
        if isinstance(want, T.OptionalType) and t is not T.NoneType and not isinstance(t, T.OptionalType):
            return self.convert(v, want.elem, allow, e, dry)
        if allow:
            kind = None
            if isinstance(t, T.TensorType):
                kind = _TENSOR_TO_NUMBER.get(id(want))
            elif t is T.NumberType:
                kind = _NUMBER_TO.get(id(want))
            elif t is T.BoolType:
                kind = _BOOL_TO.get(id(want))
            if kind is not None:
                if dry:
                    return True
                out = want if want is not T.NumberType or kind == "aten::ScalarImplicit" else T.IntType
                return self.append(kind, [v]).add_output(out)
        if is_subtype(t, want):
            return True if dry else v
        return None


# tryConvertToType's implicit conversions, by the wanted type (its identity: types are singletons)
_TENSOR_TO_NUMBER = {id(T.FloatType): "aten::FloatImplicit", id(T.IntType): "aten::IntImplicit",
                     id(T.NumberType): "aten::ScalarImplicit"}
_NUMBER_TO = {id(T.FloatType): "aten::Float", id(T.IntType): "aten::Int"}
_BOOL_TO = {id(T.FloatType): "aten::Float", id(T.IntType): "aten::Int", id(T.NumberType): "aten::Int"}

# FunctionEmitter.expr's dispatch: ast node class -> FunctionEmitter.expr_<Class>
_EXPRESSIONS = {getattr(ast, name[len("expr_"):]): fn for name, fn in vars(FunctionEmitter).items()
                if name.startswith("expr_")}

_WANTED = {}


def _wanted_types(ov):
    """The TorchScript type each schema argument wants (None: a type reftrace cannot match)."""
    types = _WANTED.get(ov)
    if types is None:
        types = []
        for a in ov.schema.arguments:
            try:
                types.append(schema_type(a.type))
            except RuntimeError:
                types.append(T.GeneratorType)  # matched by nothing traced code passes
        types = _WANTED[ov] = tuple(types)
    return types


def _real_literal(e):
    """The value of an int or float literal (``-1.5`` included), else None."""
    sign = 1
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        sign, e = -1, e.operand
    if isinstance(e, ast.Constant) and type(e.value) in (int, float):
        return sign * e.value
    return None


def _constant_key(node):
    """HashNode/EqualNode for constants: same type, same value (a tensor: the same object, the
    archive's constant table having already merged equal tensors)."""
    out = node.outputs_[0]
    if not node.attrs:
        return (str(out.type_),)
    kind, value = next(iter(node.attrs.values()))
    name = next(iter(node.attrs))
    if kind == "t":
        return ("t", id(value))
    if kind == "f":
        return ("f", "nan" if math.isnan(value) else (value, math.copysign(1, value)))
    if kind == "ival":
        return ("ival", str(out.type_), repr(value))
    return (kind, name, str(out.type_), value)


def _aten_name(name):
    if name.startswith("torch."):
        return "aten::" + name[len("torch."):]
    if name.startswith("ops."):
        parts = name.split(".")
        if len(parts) == 3:
            return parts[1] + "::" + parts[2]
    return None


def _packet(name):
    kind = _aten_name(name)
    return PACKETS.get(kind) if kind is not None and kind.count(".") == 0 else None
