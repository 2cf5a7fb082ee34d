"""``graph.print_tabular()`` and ``graph.summary()``: a traced graph as a table and in numbers.

The table is torch.fx's ``Graph.print_tabular`` (opcode, name, target, args, kwargs, laid out as
the ``tabulate`` package's "simple" format that fx uses; reftrace formats it itself so that it
needs no package) with a ``shape`` column added. A TorchScript graph maps onto fx's opcodes:
graph inputs are ``placeholder``; ``prim::GetAttr`` is ``get_attr`` with the dotted attribute
path as target; ``prim::CallMethod`` is ``call_module``; every other node is ``call_function``
with its op as target; the return is ``output``. Constants are not rows: as in fx, their values
appear in the args of the nodes that use them.
"""
from collections import Counter

from ._dot import _all_nodes, short_type

HEADERS = ("opcode", "name", "target", "args", "kwargs", "shape")

# nodes whose outputs are sizes read from tensors: what makes a trace depend on input shapes
SIZE_KINDS = frozenset(("aten::size", "aten::sym_size", "aten::numel", "aten::dim", "aten::len",
                        "prim::shape", "aten::Int", "aten::Float", "aten::ScalarImplicit",
                        "prim::NumToTensor"))


def format_table(rows, headers):
    """``tabulate(rows, headers=headers)`` in its default "simple" format: every cell padded to
    its column's width, columns two spaces apart, a row of dashes under the headers, no
    trailing blanks."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows)]

    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(headers), line("-" * w for w in widths)] + [line(r) for r in rows])


def _args_text(items):
    """A tuple as fx prints node args: ``(x,)``, ``(conv1, x)``, ``()``."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _constant_text(node):
    if node.kind_ == "prim::Constant":
        if not node.attrs:
            return "None"
        kind, value = node.attrs["value"]
        if str(node.outputs_[0].type_) == "bool":  # stored as an int attribute, as ir.cpp does
            return str(bool(value))
        from .ir import _format_attr
        return _format_attr(kind, value)
    return "[" + ", ".join(_ref(v) for v in node.inputs_) + "]"


def _ref(value):
    from ._dot import _is_constant
    node = value.node_
    if node.kind_ != "prim::Param" and _is_constant(node):
        return _constant_text(node)
    return value.debugName()


def _attribute_paths(graph):
    """Value -> dotted path ('conv1', 'layer1.0.conv1') for module attributes read by GetAttr."""
    paths = {}
    for node in _all_nodes(graph.block):
        if node.kind_ == "prim::GetAttr":
            parent = paths.get(node.inputs_[0])
            name = node.attrs["name"][1]
            paths[node.outputs_[0]] = name if parent is None else f"{parent}.{name}"
    return paths


def table_rows(graph):
    from ._dot import _is_constant
    paths = _attribute_paths(graph)
    rows = [("placeholder", v.debugName(), v.debugName(), "()", "{}", short_type(v.type_))
            for v in graph.inputs()]
    for node in _all_nodes(graph.block):
        if _is_constant(node):
            continue
        name = ", ".join(o.debugName() for o in node.outputs_) or "_"
        shape = ", ".join(short_type(o.type_) for o in node.outputs_)
        if node.kind_ == "prim::GetAttr":
            rows.append(("get_attr", name, paths[node.outputs_[0]], "()", "{}", shape))
        elif node.kind_ == "prim::CallMethod":
            module = paths.get(node.inputs_[0], node.inputs_[0].debugName())
            method = node.attrs["name"][1]
            target = module if method == "forward" else f"{module}.{method}"
            rows.append(("call_module", name, target,
                         _args_text([_ref(v) for v in node.inputs_[1:]]), "{}", shape))
        else:
            rows.append(("call_function", name, node.kind_,
                         _args_text([_ref(v) for v in node.inputs_]), "{}", shape))
    rows.append(("output", "output", "output",
                 _args_text([_ref(v) for v in graph.outputs()]), "{}", ""))
    return rows


def tabular(graph):
    return format_table(table_rows(graph), HEADERS)


class GraphSummary:
    """Counts that say what a graph is: ops by kind, parameters, constants, size-dependent nodes."""

    def __init__(self, graph):
        from ._dot import _is_constant
        nodes = list(_all_nodes(graph.block))
        self.inputs = len(graph.inputs())
        self.outputs = len(graph.outputs())
        self.nodes = len(nodes)
        self.ops = Counter(n.kind_ for n in nodes if not _is_constant(n)
                           and n.kind_ not in ("prim::GetAttr",))
        self.constants = sum(n.kind_ == "prim::Constant" for n in nodes)
        self.tensor_constants = sum(n.kind_ == "prim::Constant" and bool(n.attrs)
                                    and n.attrs["value"][0] == "t" for n in nodes)
        self.parameters = sorted(set(_attribute_paths(graph).values()))
        self.size_dependent = [n for n in nodes if n.kind_ in SIZE_KINDS]

    def as_dict(self):
        return {"inputs": self.inputs, "outputs": self.outputs, "nodes": self.nodes,
                "ops": dict(sorted(self.ops.items(), key=lambda kv: (-kv[1], kv[0]))),
                "constants": self.constants, "tensor_constants": self.tensor_constants,
                "attributes": self.parameters,
                "size_dependent": [self._describe(n) for n in self.size_dependent]}

    def _describe(self, node, source_lines=True):
        where = f" ({node.source[0]}:{node.source[1]})" if source_lines and node.source else ""
        return f"%{node.outputs_[0].debugName()} = {node.kind_}{where}"

    def format(self, source_lines=True):
        d = self.as_dict()
        d["size_dependent"] = [self._describe(n, source_lines) for n in self.size_dependent]
        ops = sum(d["ops"].values())
        lines = [f"{d['nodes']} nodes: {ops} ops, {d['constants']} constants "
                 f"({d['tensor_constants']} tensor), {len(d['attributes'])} module attributes read; "
                 f"{d['inputs']} inputs, {d['outputs']} outputs",
                 "ops by kind:"]
        lines += [f"  {n:5d}  {kind}" for kind, n in d["ops"].items()]
        if d["size_dependent"]:
            lines.append(f"size-dependent nodes ({len(d['size_dependent'])}): the trace reads "
                         "these from its inputs' shapes")
            lines += ["  " + s for s in d["size_dependent"]]
        else:
            lines.append("size-dependent nodes: none (every shape in the trace is a constant)")
        return "\n".join(lines)

    def __str__(self):
        return self.format()
