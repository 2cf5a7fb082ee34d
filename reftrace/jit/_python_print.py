"""``.code``: a graph printed as TorchScript-flavoured Python, as torch 2.13 prints it
(a port of the parts of torch/csrc/jit/serialization/python_print.cpp that traced graphs reach).

    def fn(x: Tensor,
        y: Tensor) -> Tensor:
      _0 = torch.add(torch.mul(x, CONSTANTS.c0), y)
      return _0

How torch decides what the text looks like, in the order the printer works:

1. **Signature.** The function's schema comes from its graph (defaultSchemaFor): an input is
   called by its debug name without the ``.N`` suffix, or ``argument_<i>``; types lose their shape
   information (``Tensor``, ``Tuple[Tensor, Tensor]``). A method's ``self`` has no annotation.
   Parameters after the first go on their own line, indented four spaces.
2. **Which values become expressions.** A backward scan (scan_block) marks a node *inline* when its
   only output is used once, is unnamed (or is returned directly), and sits exactly where a
   left-to-right reparse of the using expression would evaluate it. Constants are always inline.
3. **Names.** Every other value is assigned to a name: its debug name made a legal, unused
   identifier (``x.1`` -> ``x``, then ``x0``, ``x1`` ...; keywords and ``ops``, ``aten``, ``_`` ...
   are reserved), or ``_0``, ``_1`` ... when it has none.
4. **Calls.** ``aten::foo`` prints as ``torch.foo(...)``, other namespaces as ``ops.prim.foo``;
   trailing arguments equal to their schema default are left out (CalculateNecessaryArgs; only
   constants can equal a default, so a list argument and everything before it always print);
   keyword-only arguments print as ``name=value``. A few kinds have their own syntax (``int(x)``,
   ``d["a"]``, ``[a, b]``, ``(a, b)``, ``self.lin``, ``(lin).forward(x, )``).
5. **Long lines.** An inline expression of 38 characters or more (40 counting the indent) is
   split out into ``_N = ...`` together with the inline arguments evaluated before it, so that
   evaluation order is kept ([reordering of inlines] in python_print.cpp).
6. **Tensors** in constants print as ``CONSTANTS.c<i>``, indexing a table that de-duplicates
   equal tensors of the same dtype and device; ``code_with_constants`` returns that table.

Traced graphs have no control flow, so prim::If / prim::Loop (and blocks) are not handled.
Everything here iterates; the only recursion is over types, which are shallow.
"""
import math

import numpy as np

from reftrace_backends import get_backend

from . import _types as T
from .ir import format_float

# python_print.cpp's reserved_names: identifiers the printed code itself uses, and Python keywords
RESERVED_NAMES = frozenset("""
    _ as aten attribute CONSTANTS fork getattr inf nan infj nanj ops __torch__
    and assert async await break class continue def del elif else except False finally for from
    global if import in is lambda None nonlocal not or pass raise return True try with while yield
    uninitialized unchecked_cast
""".split())

# an inline expression this long (plus the indent) is printed as its own statement
LONG_LINE = 40

# Schema enum defaults ("memory_format=contiguous_format") compare to graph constants as the ints
# torch's schema parser turns them into.
_ENUM_DEFAULTS = {"contiguous_format": 0, "preserve_format": 1, "channels_last": 2,
                  "channels_last_3d": 3, "strided": 0, "Mean": 1, "long": 4}


# -- types ---------------------------------------------------------------------------------------

_ANNOTATIONS = {"int": "int", "float": "float", "bool": "bool", "str": "str",
                "NoneType": "NoneType", "Device": "Device", "Scalar": "number",
                "Generator": "Generator", "complex": "complex"}


def annotation_str(t):
    """Type::annotation_str: how a type is written in Python source (``List[Tensor]``)."""
    if isinstance(t, T.TensorType):
        return "Tensor"
    if isinstance(t, T.ListType):
        return f"List[{annotation_str(t.elem)}]"
    if isinstance(t, T.OptionalType):
        return f"Optional[{annotation_str(t.elem)}]"
    if isinstance(t, T.TupleType):
        inner = ", ".join(annotation_str(e) for e in t.elems)
        return f"Tuple[{inner or '()'}]"
    if isinstance(t, T.DictType):
        return f"Dict[{annotation_str(t.key)}, {annotation_str(t.value)}]"
    if isinstance(t, T.ClassType):
        return t.qualified_name
    return _ANNOTATIONS.get(str(t), str(t))


def _element_type_can_be_inferred(t):
    """elementTypeCanBeInferredFromMembers: ``[a, b]`` reparses as List[Tensor], never as
    List[Optional[Tensor]], so lists of optionals (and of Scalars) need ``annotate``."""
    return not isinstance(t, T.OptionalType) and t is not T.NumberType


# -- names ---------------------------------------------------------------------------------------

def _ident_char(c, first):
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or c == "_" or (not first and "0" <= c <= "9")


def is_valid_identifier(name):
    """ASCII letters, digits and '_', not starting with a digit (python_print.cpp's test)."""
    return bool(name) and all(_ident_char(c, i == 0) for i, c in enumerate(name))


def make_valid_identifier(name):
    """Every other byte becomes '_' (torch works on UTF-8 bytes: ``é`` -> ``__``); a leading
    digit, or an empty name, gets a '_' prefix."""
    raw = name.encode("utf-8").decode("latin-1")  # one character per byte
    prefix = "_" if not raw or "0" <= raw[0] <= "9" else ""
    return prefix + "".join(c if _ident_char(c, False) else "_" for c in raw)


def debug_name_base(value):
    """Value::debugNameBase: the debug name without a ``.N`` uniquing suffix."""
    name = value.debugName()
    head, dot, tail = name.rpartition(".")
    return head if dot and tail and tail.isdigit() else name


# -- constants -----------------------------------------------------------------------------------

def quoted_string(s):
    """c10::printQuotedString: C-style escapes, octal for other unprintable bytes."""
    escapes = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\a": "\\a", "\b": "\\b", "\f": "\\f",
               "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    out = []
    for c in s:
        if c in escapes:
            out.append(escapes[c])
        elif 0x1f < ord(c) < 0x7f:
            out.append(c)
        else:
            out.append("\\%03o" % ord(c))
    return '"' + "".join(out) + '"'


def _host(t):
    return np.asarray(get_backend(t.device.type).to_host(t._array))


def _same_tensor(a, b):
    """getOrAddConstant's test: same device type and dtype (type_equal), then torch.equal
    (same shape, equal elements; NaN is never equal)."""
    return (a.device.type == b.device.type and a.dtype == b.dtype
            and tuple(a.shape_tuple) == tuple(b.shape_tuple)
            and bool(np.array_equal(_host(a), _host(b))))


def constant_value(node):
    """toIValue of a prim::Constant's output, as a Python value tagged with the IValue kind:
    ('None', None), ('Bool', True), ('Int', 3), ('Double', 0.5), ('String', 'cpu'),
    ('Device', 'cpu'), ('Tensor', t), ('Complex', z)."""
    out = node.outputs_[0]
    t = out.type_
    if not node.hasAttribute("value"):
        return ("None", None)
    kind, v = node.attrs["value"]
    if kind == "t":
        return ("Tensor", v)
    if t is T.BoolType:
        return ("Bool", bool(v))
    if t is T.DeviceType:
        return ("Device", v)
    if kind == "s":
        return ("String", v)
    if kind == "f":
        return ("Double", float(v))
    if kind == "c":
        return ("Complex", complex(v))
    return ("Int", int(v))


def _default_ivalue(arg):
    """A schema argument's default as a tagged IValue, comparable with constant_value."""
    v = arg.default
    if v is None:
        return ("None", None)
    if isinstance(v, bool):
        return ("Bool", v)
    if isinstance(v, int):
        # the schema parser stores a default as its declared type: `float p=2` is the double 2.
        return ("Double", float(v)) if arg.type.base == "float" and not arg.type.is_list \
            else ("Int", v)
    if isinstance(v, float):
        return ("Double", v)
    if isinstance(v, str):
        if arg.type.base in ("MemoryFormat", "Layout", "ScalarType", "int") and v in _ENUM_DEFAULTS:
            return ("Int", _ENUM_DEFAULTS[v])
        return ("String", v)
    if isinstance(v, list):
        return ("List", v)
    return ("Other", v)


def _complex_repr(z):
    """IValue's repr of a complex number: ``1.5-2.j``, ``0.10000000000000001+1.j`` (each part as a
    double prints, the sign between them, no spaces). A real part of -0. prints as ``0.``: torch's
    Python-to-Scalar conversion has already dropped that sign."""
    sign = "+" if z.imag >= 0 else "-"
    return f"{format_float(z.real + 0.0)}{sign}{format_float(abs(z.imag))}j"


# -- the printer ---------------------------------------------------------------------------------

class PythonPrinter:
    """One printing session (torch's PythonPrint): a constant table shared by every function
    printed with it, and per-function name and expression tables."""

    def __init__(self, constants=None, register_dependency=None):
        # CONSTANTS.c<i> -> tensor (or non-ASCII string); an archive shares one table among
        # the printers of all its files
        self.constants = [] if constants is None else constants
        self.next_id = {}          # genName's suffix counters; torch keeps them across functions
        self.lines = []
        # registerDependency: told of each called function's type as it is printed (an archive
        # prints those functions too)
        self.register_dependency = register_dependency or (lambda function_type: None)

    def text(self):
        return "".join(self.lines)

    def constant_map(self):
        return {f"c{i}": v for i, v in enumerate(self.constants)}

    # -- entry points --------------------------------------------------------------------------
    def print_function(self, graph, name, is_method=False, self_type=None, level=0):
        """printFunction / printMethod: the ``def`` line, then the body one level in.

        In an archive a method's ``self`` is annotated with its class (``self_type``), and a
        traced function saved on its own becomes the method of a placeholder class: then
        ``is_method`` is False and ``self_type`` names that class, whose ``self`` the graph
        does not have."""
        self._begin(graph)
        params = []
        first = 0
        if self_type is not None and not is_method:
            params.append(f"{self._gen_name('self')}: {self_type}")
            first = 1  # the placeholder's self is input 0: unnamed inputs count from 1
        names = graph.__dict__.get("argument_names")  # a loaded function's schema names them
        for i, v in enumerate(graph.param.outputs_, first):
            if names is not None:
                arg_name = self._gen_name(names[i - first])
            else:
                arg_name = self._gen_name(debug_name_base(v) if v.hasDebugName() else f"argument_{i}")
            if i == first and is_method:
                # self: in .code its type is implied by the class; archives annotate it
                params.append(arg_name if self_type is None else f"{arg_name}: {self_type}")
            else:
                params.append(f"{arg_name}: {annotation_str(T.erase_shape(v.type_))}")
            self.ident[v] = arg_name
        # a traced graph has one output (several are packed into a tuple)
        ret_type = annotation_str(T.erase_shape(graph.ret.inputs_[0].type_))
        self.level = level
        self.lines.append("  " * level + f"def {name}(" + ",\n    ".join(params)
                          + f") -> {ret_type}:\n")
        self._print_body(graph)

    # -- per-function state --------------------------------------------------------------------
    def _begin(self, graph):
        self.used_names = set()    # each function may reuse local names
        self.ident = {}            # value -> the name it was assigned to
        self.expr = {}             # value -> its inline expression text
        self.inline = set()        # nodes whose output is printed inline at its use
        self.split_visited = {}    # user node -> highest input offset already split
        self.level = 0
        self.uses = _uses(graph)

    def _gen_name(self, candidate):
        """genNameImpl: append the next counter until the name is unused and not reserved."""
        name = candidate
        while name in self.used_names or name in RESERVED_NAMES:
            n = self.next_id.get(name, 0)
            self.next_id[name] = n + 1
            name = candidate + str(n)
        self.used_names.add(name)
        return name

    def _assign_unique_names(self, values):
        for v in values:
            base = make_valid_identifier(debug_name_base(v)) if v.hasDebugName() else "_"
            self.ident[v] = self._gen_name(base)

    def use_of(self, v):
        """How value ``v`` is written where it is used: its name once assigned, else its
        expression (torch: ident_refs_ take precedence over expr_table_)."""
        name = self.ident.get(v)
        return name if name is not None else self.expr[v]

    # -- 2. which nodes are inline --------------------------------------------------------------
    def _can_inline(self, v):
        node = v.node_
        if len(node.outputs_) != 1:
            return False
        uses = self.uses.get(v, ())
        if len(uses) != 1:
            return False
        user = uses[0][0]
        # a named value was a variable in the source: keep it, unless it is just returned
        if v.hasDebugName() and user.kind_ != "prim::Return":
            return False
        if node.blocks_:
            return False
        if user.kind_ == "prim::Loop" and uses[0][1] >= 2:
            return False
        if user.kind_ in ("prim::fork", "prim::rpc_async", "prim::rpc_sync", "prim::rpc_remote"):
            return False
        return node.kind_ != "prim::isinstance"

    def _scan_block(self, block):
        """scanBlock: the return node, then every node from last to first."""
        self._scan_node(block.ret)
        n = block.ret.prev
        while n is not block.param:
            self._scan_node(n)
            n = n.prev

    def _scan_node(self, start):
        """scanNode without recursion. Inputs are visited right to left while a *block point*
        walks back over the emitted (non-constant) nodes: an input made by exactly the node at
        the block point would be evaluated right there by a reparse, so it may be inlined, and
        its own inputs are scanned next (a frame on the stack)."""
        if start in self.inline:
            return
        block_point = _previous_non_constant(start)
        stack = [[start, len(start.inputs_) - 1]]
        while stack:
            frame = stack[-1]
            node, i = frame
            if i < 0:
                stack.pop()
                if stack:  # a nested scan finished: that node is an inline expression
                    self.inline.add(node)
                continue
            frame[1] = i - 1
            producer = node.inputs_[i].node_
            if producer is block_point and self._can_inline(node.inputs_[i]):
                block_point = _previous_non_constant(producer)
                stack.append([producer, len(producer.inputs_) - 1])
            elif producer.kind_ == "prim::Constant":
                self.inline.add(producer)  # constants are always written where they are used

    # -- printing ----------------------------------------------------------------------------
    def _print_body(self, graph):
        block = graph.block
        constants = _constants_in_use_order(block)
        self._scan_block(block)
        self.level += 1
        for c in constants:  # most just become inline text; long ones get a line
            self._print_node(c)
        for n in block:
            if n.kind_ != "prim::Constant":
                self._print_node(n)
        self._print_return(block.ret)
        self.level -= 1

    def _indent(self):
        return "  " * self.level

    def _is_long(self, s):
        return len(s) + self.level * 2 >= LONG_LINE

    def _print_return(self, ret):
        if ret.inputs_:
            self.lines.append(self._indent() + "return " + self._value_list(ret.inputs_) + "\n")

    def _print_node(self, node):
        kind = node.kind_
        if node.blocks_ or kind in ("prim::If", "prim::Loop"):
            raise NotImplementedError(f"printing {kind} (control flow never occurs in traces)")
        if kind in ("prim::TupleUnpack", "prim::ListUnpack"):
            # `a, b, = t`: the trailing comma makes even a single target an unpack
            self._assign_unique_names(node.outputs_)
            targets = self._value_list(node.outputs_) + ", = " if node.outputs_ else ""
            self.lines.append(self._indent() + targets + self.use_of(node.inputs_[0]) + "\n")
            return
        rhs = self._rhs(node)
        if node not in self.inline or (kind == "prim::Constant" and self._is_long(rhs)):
            self._print_output_definition(node, rhs)
        else:
            out = node.outputs_[0]
            self.expr[out] = rhs
            if self._is_long(rhs):
                self._split_long_inlines(out)

    def _print_output_definition(self, node, rhs):
        self._assign_unique_names(node.outputs_)
        lhs = self._value_list(node.outputs_) + " = " if node.outputs_ else ""
        self.lines.append(self._indent() + lhs + rhs + "\n")

    # -- 5. long lines --------------------------------------------------------------------------
    def _split_long_inlines(self, v):
        """Give the long expression ``v`` its own statement, and with it every inline argument
        that the reparsed code would evaluate before it (the inputs to its left in its user,
        in its user's user, ...), in evaluation order, so no side effect is reordered."""
        to_split = []
        user, offset = self.uses[v][0]
        while True:
            seen = self.split_visited.get(user)
            stop = seen + 1 if seen is not None else 0
            for i in range(offset, stop - 1, -1):
                arg = user.inputs_[i]
                if arg.node_.kind_ != "prim::Constant" and arg.node_ in self.inline:
                    to_split.append(arg)
            self.split_visited[user] = offset
            if seen is not None or user not in self.inline:
                break
            # the user is itself inline: continue left of it in its own user (-1: the use
            # being printed right now cannot be split)
            user, offset = self.uses[user.outputs_[0]][0]
            offset -= 1
        for arg in reversed(to_split):
            self._print_output_definition(arg.node_, self.use_of(arg))

    # -- 4. right-hand sides --------------------------------------------------------------------
    def _value_list(self, values):
        return ", ".join(self.use_of(v) for v in values)

    def _rhs(self, node):
        kind = node.kind_
        special = _RHS.get(kind)
        if special is not None:
            return special(self, node)
        return self._call(node)

    def _call(self, node):
        """The general case: ``torch.name(args)`` with defaults elided, kwarg-only named."""
        head = op_name(node.kind_)
        schema = node.op.schema if node.op is not None else None
        if schema is None or len(node.inputs_) != len(schema.arguments):
            # prim::NumToTensor, aten::size ...: no schema here, and none with defaults in torch
            return head + "(" + self._value_list(node.inputs_) + ")"
        args = schema.arguments
        necessary, n_out = _necessary_args(args, node.inputs_)
        parts = []
        for i in range(necessary):
            prefix = args[i].name + "=" if args[i].kwarg_only else ""
            parts.append(prefix + self.use_of(node.inputs_[i]))
        for i in range(len(args) - n_out, len(args)):  # out= arguments, always by name
            parts.append(args[i].name + "=" + self.use_of(node.inputs_[i]))
        return head + "(" + ", ".join(parts) + ")"

    def _constant(self, node):
        out_type = node.outputs_[0].type_
        if type(out_type).__name__ == "FunctionType":  # the callee of a prim::CallFunction
            self.register_dependency(out_type)
            return _function_constant(node, out_type)
        kind, v = constant_value(node)
        if kind == "None":
            return "None"
        if kind == "Tensor" or (kind == "String" and not v.isascii()):
            return f"CONSTANTS.c{self._constant_index(kind, v)}"
        if kind == "Bool":
            return "True" if v else "False"
        if kind == "Int":
            return str(v)
        if kind == "Double":
            return format_float(v)
        if kind == "String":
            return quoted_string(v)
        if kind == "Device":
            return f"torch.device({quoted_string(v)})"
        return _complex_repr(v)

    def _constant_index(self, kind, v):
        if kind == "Tensor":
            for i, c in enumerate(self.constants):
                if not isinstance(c, str) and _same_tensor(c, v):
                    return i
        self.constants.append(v)
        return len(self.constants) - 1

    def _list_construct(self, node):
        out_type = node.outputs_[0].type_
        items = "[" + self._value_list(node.inputs_) + "]"
        if not node.inputs_:
            return f"annotate({annotation_str(out_type)}, [])"
        if not _element_type_can_be_inferred(out_type.elem):
            return f"annotate({annotation_str(out_type)}, {items})"
        return items

    def _dict_construct(self, node):
        out_type = node.outputs_[0].type_
        ins = node.inputs_
        items = "{" + ", ".join(f"{self.use_of(ins[i])}: {self.use_of(ins[i + 1])}"
                                for i in range(0, len(ins), 2)) + "}"
        if not ins or not _element_type_can_be_inferred(out_type.key) \
                or not _element_type_can_be_inferred(out_type.value):
            return f"annotate({annotation_str(out_type)}, {items})"
        return items

    def _tuple_construct(self, node):
        ins = node.inputs_
        return "(" + self._value_list(ins) + (",)" if len(ins) == 1 else ")")

    def _get_attr(self, node):
        obj, field = self.use_of(node.inputs_[0]), node.s("name")
        if is_valid_identifier(field):
            return f"{obj}.{field}"
        return f"getattr({obj}, {quoted_string(field)})"

    def _call_method(self, node):
        # every argument is followed by ", ": `(a).forward(x, )`
        args = "".join(self.use_of(v) + ", " for v in node.inputs_[1:])
        return f"({self.use_of(node.inputs_[0])}).{node.s('name')}({args})"

    def _call_function(self, node):
        args = "".join(self.use_of(v) + ", " for v in node.inputs_[1:])
        return f"{self.use_of(node.inputs_[0])}({args})"

    def _python_op(self, node):
        """``^MyFn(3.5, None)(x)``: the class name, the scalars, the tensor arguments."""
        return f"^{node.name()}{node.scalars_text()}({self._value_list(node.inputs_)})"

    def _getitem(self, node):
        """printValueIndex: ``d["a"]``, or ``(expr)[i]`` when the container is an expression."""
        container = self.use_of(node.inputs_[0])
        if not is_valid_identifier(container):
            container = f"({container})"
        return f"{container}[{self.use_of(node.inputs_[1])}]"

    def _implicit(self, node):
        out = annotation_str(node.outputs_[0].type_)
        return f"annotate({out}, {self.use_of(node.inputs_[0])})"

    def _tuple_index(self, node):
        return f"({self.use_of(node.inputs_[0])})[{self.use_of(node.inputs_[1])}]"


def _function_constant(node, function_type):
    """A called traced function prints as its qualified name: ``__torch__.inner(x, )``.
    torch qualifies it by the Python module that defined it (``__torch__.my.mod.inner``); the
    graph here only knows the short name unless the type carries ``qualified_name``, so functions
    are taken to come from ``__main__``."""
    qualified = getattr(function_type, "qualified_name", None)
    if qualified is None:
        qualified = "__torch__." + function_name(node.s("name"))
    return qualified


def _builtin(fn_name):
    return lambda printer, node: f"{fn_name}({printer._value_list(node.inputs_)})"


# node kinds with their own syntax (printRHS's switch)
_RHS = {
    "prim::Constant": PythonPrinter._constant,
    "aten::ScalarImplicit": PythonPrinter._implicit,
    "aten::FloatImplicit": PythonPrinter._implicit,
    "aten::IntImplicit": PythonPrinter._implicit,
    "aten::Int": _builtin("int"),
    "aten::Float": _builtin("float"),
    "aten::Bool": _builtin("bool"),
    "aten::str": _builtin("str"),
    "prim::Print": _builtin("print"),
    "aten::sorted": _builtin("sorted"),
    "aten::__getitem__": PythonPrinter._getitem,
    "prim::TupleConstruct": PythonPrinter._tuple_construct,
    "prim::TupleIndex": PythonPrinter._tuple_index,
    "prim::ListConstruct": PythonPrinter._list_construct,
    "prim::DictConstruct": PythonPrinter._dict_construct,
    "prim::GetAttr": PythonPrinter._get_attr,
    "prim::CallMethod": PythonPrinter._call_method,
    "prim::CallFunction": PythonPrinter._call_function,
    "prim::PythonOp": PythonPrinter._python_op,
}


# -- helpers over the graph ------------------------------------------------------------------------

# printOpName's overrides; other aten ops are torch.<name>, other namespaces ops.<ns>.<name>
_OP_NAME_OVERRIDES = {"aten::backward": "torch.autograd.backward", "aten::grad": "torch.autograd.grad"}


def op_name(kind):
    if kind in _OP_NAME_OVERRIDES:
        return _OP_NAME_OVERRIDES[kind]
    ns, name = kind.split("::", 1)
    return f"torch.{name}" if ns == "aten" else f"ops.{ns}.{name}"


def _uses(graph):
    """value -> [(user node, input offset)], the return node included, in node order."""
    uses = {}
    for n in list(graph.block) + [graph.ret]:
        for i, v in enumerate(n.inputs_):
            uses.setdefault(v, []).append((n, i))
    return uses


def _previous_non_constant(n):
    n = n.prev
    while n.kind_ == "prim::Constant":
        n = n.prev
    return n


def _constants_in_use_order(block):
    """buildConstantList: constants in the order nodes (then the return) first use them."""
    seen, out = set(), []
    for n in list(block) + [block.ret]:
        for v in n.inputs_:
            c = v.node_
            if c.kind_ == "prim::Constant" and c not in seen:
                seen.add(c)
                out.append(c)
    return out


def _necessary_args(args, inputs):
    """CalculateNecessaryArgs(schema args, inputs, allow_trailing_out_args=true):
    (how many leading arguments to print, how many trailing out= arguments).

    Scanning from the last non-out argument backwards, an argument may be left out while it has a
    default and its input is a constant equal to that default. IValue equality is typed: the
    default ``alpha=1`` (an int) is not equal to a constant ``1.`` (a double)."""
    n_out = 0
    while n_out < len(args) and args[len(args) - 1 - n_out].is_write and \
            args[len(args) - 1 - n_out].kwarg_only:
        n_out += 1
    i = len(args) - n_out - 1
    while i >= 0:
        arg = args[i]
        if not arg.has_default:
            return i + 1, n_out
        producer = inputs[i].node_
        if producer.kind_ != "prim::Constant":
            return i + 1, n_out
        if not _ivalues_equal(_default_ivalue(arg), constant_value(producer)):
            return i + 1, n_out
        i -= 1
    return 0, n_out


def _ivalues_equal(a, b):
    (ka, va), (kb, vb) = a, b
    if ka != kb:
        return False
    if ka == "Tensor":
        return False  # schemas have no tensor defaults
    if ka == "Double" and math.isnan(va):
        return False
    return va == vb


# -- what the traced objects call ------------------------------------------------------------------

def function_name(name):
    """torch._jit_internal._qualified_name names a lambda ``_lambda``."""
    return "_lambda" if name == "<lambda>" else name


def graph_code(graph, name, is_method=False):
    """(code text, {"c0": constant, ...}) for one function or method graph."""
    printer = PythonPrinter()
    printer.print_function(graph, name, is_method)
    return printer.text(), printer.constant_map()


class ConstMap:
    """torch.jit._script.ConstMap: ``code_with_constants[1].c0`` is the tensor behind CONSTANTS.c0."""

    def __init__(self, const_mapping):
        self.const_mapping = const_mapping

    def __getattr__(self, attr):
        try:
            return self.__dict__["const_mapping"][attr]
        except KeyError:
            raise AttributeError(attr) from None
