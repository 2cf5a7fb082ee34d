"""The graph IR: Graph, Node, Value, and their printer (torch/csrc/jit/ir/ir.cpp).

A Graph is a doubly linked list of Nodes between two sentinels (its ``param`` node, whose
outputs are the graph inputs, and its ``return`` node, whose inputs are the graph outputs), as in
torch: inserting ``aten::Int`` right after a producer, or deleting dead nodes, is O(1).
Every walk (printing, interpreting, DCE) iterates; nothing recurses per node.

Values are numbered by a per-graph counter when created; a value prints as ``%name`` when it has
a debug name, else ``%<number>``. Naming follows Value::setDebugName: on a clash, the previous
owner of the name is renamed ``name.N``.
"""
import math

from . import _types as T


class Value:
    __slots__ = ("node_", "offset", "unique", "name", "type_")

    def __init__(self, node, offset, unique, type_):
        self.node_ = node
        self.offset = offset
        self.unique = unique
        self.name = None
        self.type_ = type_

    # the API torch's tests use
    def node(self):
        return self.node_

    def type(self):
        return self.type_

    def setType(self, t):
        self.type_ = t
        return self

    def debugName(self):
        return self.name if self.name is not None else str(self.unique)

    def hasDebugName(self):
        return self.name is not None

    def setDebugName(self, name):
        self.node_.graph.set_debug_name(self, name)
        return self

    def uses(self):
        return [n for n in self.node_.graph._all_nodes_with_return() if self in n.inputs_]

    def __repr__(self):
        return f"%{self.debugName()} : {self.type_}"


class Node:
    __slots__ = ("graph", "kind_", "op", "inputs_", "outputs_", "attrs", "source", "scope",
                 "prev", "next", "subgraph", "block", "blocks_")

    def __init__(self, graph, kind, op=None, inputs=(), scope=None):
        self.graph = graph
        self.kind_ = kind
        self.op = op              # the OpOverload for aten:: nodes (the Node knows its overload)
        self.inputs_ = list(inputs)
        self.outputs_ = []
        self.attrs = None         # {name: (kind_letter, value)} in insertion order
        self.source = None        # (filename, line) of the innermost user frame
        self.scope = scope        # 'scope: __module.a/__module.a.lin' (module tracing)
        self.prev = self.next = None
        self.subgraph = None      # a Graph (prim::CallFunction / CallMethod callee)
        self.block = None         # the Block this node is in
        self.blocks_ = ()         # sub-blocks (module tracing's prim::TracedModuleForward)

    # -- torch's Node API ------------------------------------------------------------------
    def kind(self):
        return self.kind_

    def inputs(self):
        return list(self.inputs_)

    def outputs(self):
        return list(self.outputs_)

    def input(self, i=None):
        return self.inputs_[0 if i is None else i]

    def output(self, i=None):
        if i is None and len(self.outputs_) != 1:
            raise RuntimeError(f"{self.kind_} has {len(self.outputs_)} outputs; use outputs()")
        return self.outputs_[0 if i is None else i]

    def hasAttribute(self, name):
        return bool(self.attrs) and name in self.attrs

    def hasAttributes(self):
        return bool(self.attrs)

    def attributeNames(self):
        return list(self.attrs or ())

    def _attr(self, name, kind):
        if not self.hasAttribute(name):
            raise RuntimeError(f"required keyword attribute '{name}' is undefined")
        k, v = self.attrs[name]
        return v

    def i(self, name):
        return self._attr(name, "i")

    def f(self, name):
        return self._attr(name, "f")

    def s(self, name):
        return self._attr(name, "s")

    def t(self, name):
        return self._attr(name, "t")

    def g(self, name):
        return self._attr(name, "g")

    def ival(self, name):
        return self._attr(name, "ival")

    def kindOf(self, name):
        return self.attrs[name][0]

    def set_attr(self, name, kind, value):
        if self.attrs is None:
            self.attrs = {}
        self.attrs[name] = (kind, value)
        return self

    def sourceRange(self):
        return "" if self.source is None else f"{self.source[0]}:{self.source[1]}:0"

    def scopeName(self):
        return str(self.scope or "")

    def empty_clone(self, graph):
        """A node of the same kind and class for ``graph``, with no inputs or outputs yet
        (subclasses carrying more, like prim::PythonOp's, copy it)."""
        return Node(graph, self.kind_, self.op)

    def add_output(self, type_):
        g, outs = self.graph, self.outputs_
        u = g._unique  # (Graph._next_unique, inlined: once per traced value)
        g._unique = u + 1
        v = Value(self, len(outs), u, type_)
        outs.append(v)
        return v

    def isNondeterministic(self):
        """Node::isNondeterministic: random ops, and dropout unless train is a constant False."""
        if self.op is None or not self.op.nondeterministic:
            return False
        if self.kind_ in ("aten::dropout", "aten::feature_dropout", "aten::alpha_dropout",
                          "aten::feature_alpha_dropout") and len(self.inputs_) >= 3:
            train = self.inputs_[2].node_
            if train.kind_ == "prim::Constant" and train.hasAttribute("value") and train.i("value") == 0:
                return False
        return True

    def __repr__(self):
        return format_node(self, True).rstrip("\n")

    __str__ = __repr__

    def blocks(self):
        return list(self.blocks_)

    def add_block(self):
        b = Block(self.graph, self)
        self.blocks_ = self.blocks_ + (b,)
        return b

    def erase_block(self, i):
        self.blocks_ = self.blocks_[:i] + self.blocks_[i + 1:]

    def replace_input(self, i, v):
        self.inputs_[i] = v

    def destroy(self):
        for o in self.outputs_:
            if o.name is not None:
                self.graph.set_debug_name(o, None)
        self.prev.next = self.next
        self.next.prev = self.prev
        self.prev = self.next = None


class Block:
    """A list of nodes between a param node (its inputs) and a return node (its outputs).
    A Graph has one; module tracing nests more under prim::TracedModuleForward nodes."""
    __slots__ = ("graph", "param", "ret", "owning_node")

    def __init__(self, graph, owning_node):
        self.graph = graph
        self.owning_node = owning_node
        self.param = Node(graph, "prim::Param")
        self.ret = Node(graph, "prim::Return")
        self.param.block = self.ret.block = self
        self.param.next, self.ret.prev = self.ret, self.param
        self.param.prev, self.ret.next = self.ret, self.param

    def inputs(self):
        return list(self.param.outputs_)

    def outputs(self):
        return list(self.ret.inputs_)

    def add_input(self, type_=None, name=None):
        v = self.param.add_output(type_ if type_ is not None else T.TENSOR)
        if name:
            self.graph.set_debug_name(v, name)
        return v

    def register_output(self, v):
        self.ret.inputs_.append(v)

    def erase_output(self, i):
        del self.ret.inputs_[i]

    def __iter__(self):
        n = self.param.next
        while n is not self.ret:
            nxt = n.next
            yield n
            n = nxt

    def nodes(self):
        return list(self)

    def append(self, node):
        return self.graph.insert_after(node, self.ret.prev)

    def owning_block(self):
        return None if self.owning_node is None else self.owning_node.block


class Scope:
    """A module scope (torch's Scope: a parent pointer and a name), printed as the path
    '__module.a/__module.a.lin'. Kept as a tree, not a string, so that a chain of modules
    thousands deep costs linear memory (a path string per level would be quadratic)."""
    __slots__ = ("parent", "name")

    def __init__(self, parent, name):
        self.parent, self.name = parent, name

    def __str__(self):
        names, s = [], self
        while s is not None:
            names.append(s.name)
            s = s.parent
        return "/".join(reversed(names))


class Graph:
    def __init__(self):
        self._unique = 0
        self.unique_names = {}       # debug name -> Value
        self.name_base_suffix = {}   # 'x' -> next suffix (Value::setDebugName)
        self.block = Block(self, None)
        self.insert_block = self.block  # where append() inserts (module scopes nest it)
        self.current_scope = None       # 'a/a.lin' style scope path of new nodes (module tracing)
        self._scope_stack = []
        self.param, self.ret = self.block.param, self.block.ret

    def _next_unique(self):
        u = self._unique
        self._unique += 1
        return u

    # -- construction ----------------------------------------------------------------------
    def add_input(self, type_, name=None):
        v = self.param.add_output(type_)
        if name:
            self.set_debug_name(v, name)
        return v

    def register_output(self, value):
        self.ret.inputs_.append(value)

    def create(self, kind, inputs=(), op=None):
        return Node(self, kind, op, inputs, self.current_scope)

    # -- module scopes (Graph::push_scope / pop_scope) ------------------------------------------
    def push_scope(self, name):
        """Open a prim::TracedModuleForward block: nodes recorded until pop_scope go into it."""
        self._scope_stack.append(self.current_scope)
        self.current_scope = Scope(self.current_scope, name)
        node = self.append(self.create("prim::TracedModuleForward"))
        node.set_attr("scope", "s", name)
        self.insert_block = node.add_block()

    def pop_scope(self):
        self.current_scope = self._scope_stack.pop()
        owner = self.insert_block.owning_node
        if owner is not None and owner.kind_ == "prim::TracedModuleForward":
            self.insert_block = owner.block

    def append(self, node):
        """Insert at the current insertion point: the end of the innermost open block."""
        ret = self.insert_block.ret  # (insert_after(node, ret.prev), inlined: once per node)
        where = ret.prev
        node.prev, node.next = where, ret
        ret.prev = where.next = node
        node.block = where.block
        return node

    def insert_after(self, node, where):
        node.prev, node.next = where, where.next
        where.next.prev = node
        where.next = node
        node.block = where.block
        return node

    def insert_before(self, node, where):
        return self.insert_after(node, where.prev)

    def set_debug_name(self, value, name):
        """Value::setDebugName, torch's clash rule included."""
        if name and name.isdigit():
            raise RuntimeError(f"Invalid name: '{name}'")
        names = self.unique_names
        if value.name is not None:
            names.pop(value.name, None)
            value.name = None
        if not name:
            return
        old = names.get(name)
        if old is not None and old is not value:
            suffix, base = 1, name
            head, dot, tail = name.rpartition(".")
            if dot and tail and tail.isdigit():
                suffix, base = int(tail), head
            if base in self.name_base_suffix:
                suffix = max(suffix, self.name_base_suffix[base] + 1)
            while True:
                replacement = f"{base}.{suffix}"
                suffix += 1
                if replacement not in names:
                    break
            self.name_base_suffix[base] = suffix
            # set_debug_name(old, replacement), inlined (a loop renames once per op): the
            # replacement is free and has a dot, so it is valid and clashes with nothing
            del names[name]
            names[replacement] = old
            old.name = replacement
        names[name] = value
        value.name = name

    # -- torch's Graph API -----------------------------------------------------------------
    def inputs(self):
        return list(self.param.outputs_)

    def outputs(self):
        return list(self.ret.inputs_)

    def nodes(self):
        return self.block.nodes()

    def __iter__(self):
        return iter(self.block)

    def _all_nodes_with_return(self):
        return self.nodes() + [self.ret]

    def return_node(self):
        return self.ret

    def param_node(self):
        return self.param

    def findNode(self, kind, recurse=True):
        for n in self:
            if n.kind_ == kind:
                return n
        return None

    def findAllNodes(self, kind, recurse=True):
        return [n for n in self if n.kind_ == kind]

    def str(self, print_source_locations=True):
        return format_graph(self, print_source_locations)

    def __str__(self):
        return format_graph(self, True)

    def __repr__(self):
        return format_graph(self, True)

    def copy(self):
        from ._graph_copy import copy_graph
        return copy_graph(self)

    # -- for readers (not torch's API): a picture, a table, a summary --------------------------
    def to_dot(self, name="graph", constants=False, source_lines=True):
        """Graphviz DOT text of this graph (_dot.py); reftrace.jit._dot.write_picture renders it."""
        from ._dot import to_dot
        return to_dot(self, name, constants, source_lines)

    def tabular(self):
        """The table print_tabular prints, as a string (_tabular.py)."""
        from ._tabular import tabular
        return tabular(self)

    def print_tabular(self):
        """torch.fx's Graph.print_tabular for a traced graph, with a shape column (_tabular.py)."""
        print(self.tabular())

    def summary(self):
        """Ops by kind, constants, module attributes, size-dependent nodes (_tabular.GraphSummary)."""
        from ._tabular import GraphSummary
        return GraphSummary(self)


# -- printing ---------------------------------------------------------------------------------

def format_float(v):
    """A float attribute as ir.cpp prints it: '2.', '-0.', '0.10000000000000001', '1e-05'."""
    if math.isfinite(v) and v == math.floor(v) and abs(v) < 1e10:
        return ("-" if math.copysign(1.0, v) < 0 else "") + f"{abs(int(v))}."
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "%.17g" % v


def _format_attr(kind, value):
    if kind == "i":
        return str(int(value))
    if kind == "f":
        return format_float(value)
    if kind == "c":  # a complex number as IValue prints it: 1.5-2.j (a real part -0. prints 0.)
        sign = "+" if value.imag >= 0 else "-"
        return f"{format_float(value.real + 0.0)}{sign}{format_float(abs(value.imag))}j"
    if kind == "s":
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if kind == "t":
        from ._constants import format_tensor_constant
        return format_tensor_constant(value)
    if kind == "g":
        return "<Graph>"
    if kind == "is":
        return "[" + ", ".join(str(i) for i in value) + "]"
    return str(value)


def format_node(node, print_source_locations=True, indent="  ", type_str=str):
    """One node as ir.cpp prints it; ``type_str`` formats value types (the checker erases them)."""
    parts = [indent]
    if node.blocks_:
        return _format_node_with_blocks(node, print_source_locations, indent)
    if node.outputs_:
        parts.append(", ".join(f"%{o.debugName()} : {type_str(o.type_)}" for o in node.outputs_))
        parts.append(" = ")
    python_op = node.kind_ == "prim::PythonOp" and hasattr(node, "scalars_text")
    # a PythonOp prints as ^Name[attributes](scalars)(inputs)
    parts.append("^" + node.name() if python_op else node.kind_)
    if node.attrs:
        parts.append("[" + ", ".join(f"{k}={_format_attr(kind, v)}" for k, (kind, v) in node.attrs.items()) + "]")
    if python_op:
        parts.append(node.scalars_text())
    parts.append("(" + ", ".join("%" + i.debugName() for i in node.inputs_) + ")")
    if node.scope:
        parts.append(", scope: " + str(node.scope))
    if print_source_locations and node.source is not None:
        parts.append(f" # {node.source[0]}:{node.source[1]}:0")
    parts.append("\n")
    return "".join(parts)


def _format_node_with_blocks(node, print_source_locations, indent):
    blocks = node.blocks_
    node.blocks_ = ()
    head = format_node(node, print_source_locations, indent)
    node.blocks_ = blocks
    lines = [head]
    for i, b in enumerate(blocks):
        ins = ", ".join(f"%{v.debugName()} : {v.type_}" for v in b.param.outputs_)
        lines.append(f"{indent}  block{i}({ins}):\n")
        for n in b:
            lines.append(format_node(n, print_source_locations, indent + "    "))
        lines.append(f"{indent}    -> (" + ", ".join("%" + v.debugName() for v in b.ret.inputs_) + ")\n")
    return "".join(lines)


def format_graph(graph, print_source_locations=True, type_str=str):
    ins = ",\n      ".join(f"%{v.debugName()} : {type_str(v.type_)}" for v in graph.param.outputs_)
    lines = [f"graph({ins}):\n"]
    for node in graph:
        lines.append(format_node(node, print_source_locations, "  ", type_str))
    lines.append("  return (" + ", ".join("%" + v.debugName() for v in graph.ret.inputs_) + ")\n")
    return "".join(lines)
