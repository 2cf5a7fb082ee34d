"""``graph.to_dot()``: a traced graph as a Graphviz picture (no tracer of torch's draws one).

One box per node (its op, its output's name and type, the source line it came from), one edge
per use of a value; module scopes (the ``scope:`` of an inlined module trace) become nested
clusters; graph inputs, parameters (``prim::GetAttr``) and the return are shaped and coloured
apart from ops. Constants are left out by default: a ResNet's graph is two-thirds
``prim::Constant`` and ``prim::ListConstruct`` of constants, which say nothing in a picture
(``constants=True`` draws them). The text is deterministic: the same graph gives the same file.
"""
import os
import shutil
import subprocess

from ._types import TensorType

INPUT = 'shape=ellipse, style=filled, fillcolor="#d8e8ff"'
PARAMETER = 'shape=note, style=filled, fillcolor="#fff3c4"'
OUTPUT = 'shape=doubleoctagon, style=filled, fillcolor="#e0f0d8"'
OP = 'shape=box, style="rounded"'
CONSTANT = 'shape=plaintext, fontcolor="#777777"'


class DrawError(Exception):
    """A picture could not be written (no Graphviz, an unknown extension, dot failed)."""


def short_type(t):
    """A value's type without strides and flags: ``Float(2, 6, 28, 28)``."""
    if isinstance(t, TensorType) and t.sizes and t.scalar_type is not None:
        return f"{t.scalar_type.ir_name}({', '.join(str(s) for s in t.sizes)})"
    return str(t)


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _is_constant(node):
    """prim::Constant, and lists/tuples built only of constants (kernel sizes, strides)."""
    if node.kind_ == "prim::Constant":
        return True
    return (node.kind_ in ("prim::ListConstruct", "prim::TupleConstruct")
            and all(_is_constant(v.node_) for v in node.inputs_))


def _all_nodes(block):
    for node in block:
        yield node
        for b in node.blocks_:
            yield from _all_nodes(b)


def _label(node, source_lines=True):
    lines = [node.kind_ + (f"[{node.attrs['name'][1]}]" if node.attrs and "name" in node.attrs
                           and node.kind_ in ("prim::GetAttr", "prim::CallMethod") else "")]
    lines += [f"%{o.debugName()} : {short_type(o.type_)}" for o in node.outputs_]
    if source_lines and node.source is not None:
        lines.append(f"{os.path.basename(node.source[0])}:{node.source[1]}")
    return "\n".join(lines)


def to_dot(graph, name="graph", constants=False, source_lines=True):
    """The DOT text of ``graph`` (see the module docstring)."""
    ids = {}  # Node -> its DOT id, in program order
    for v in graph.inputs():
        ids[v] = f"in{len(ids)}"
    nodes = [n for n in _all_nodes(graph.block) if constants or not _is_constant(n)]
    for n in nodes:
        ids[n] = f"n{len(ids)}"

    # clusters: the scope path of each node, nested by its '/'-separated parts
    tree = {"nodes": [], "children": {}}
    for n in nodes:
        where = tree
        for part in (str(n.scope).split("/") if n.scope else []):
            where = where["children"].setdefault(part, {"nodes": [], "children": {}})
        where["nodes"].append(n)

    out = [f"digraph {_quote(name)} {{", '  rankdir=TB;',
           '  node [fontname="Helvetica", fontsize=10];', '  edge [fontname="Helvetica", fontsize=9];']
    for v in graph.inputs():
        out.append(f"  {ids[v]} [label={_quote('%' + v.debugName() + chr(10) + short_type(v.type_))}, {INPUT}];")
    counter = [0]

    def emit(level, indent):
        for n in level["nodes"]:
            style = (PARAMETER if n.kind_ == "prim::GetAttr" else
                     CONSTANT if _is_constant(n) else OP)
            out.append(f"{indent}{ids[n]} [label={_quote(_label(n, source_lines))}, {style}];")
        for part, child in level["children"].items():
            out.append(f"{indent}subgraph cluster_{counter[0]} {{")
            counter[0] += 1
            out.append(f"{indent}  label={_quote(part)}; style=dashed; color=\"#999999\";")
            emit(child, indent + "  ")
            out.append(f"{indent}}}")
    emit(tree, "  ")
    out.append(f"  out [label=\"return\", {OUTPUT}];")

    def source_of(value):
        return ids.get(value) if value.node_.kind_ == "prim::Param" else ids.get(value.node_)

    for n in nodes + [graph.return_node()]:
        target = "out" if n is graph.return_node() else ids[n]
        for v in n.inputs_:
            src = source_of(v)
            if src is not None:
                out.append(f"  {src} -> {target};")
    out.append("}")
    return "\n".join(out) + "\n"


def write_picture(graph, path, constants=False):
    """Write ``graph`` to ``path``: DOT text for ``.dot``, Graphviz's rendering for ``.svg``/``.png``."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".dot", ".gv", ".svg", ".png"):
        raise DrawError(f"cannot draw to {path!r}: the file name must end in .dot, .svg or .png")
    text = to_dot(graph, constants=constants)
    if ext in (".dot", ".gv"):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return
    dot = shutil.which("dot")
    if dot is None:
        raise DrawError(f"drawing {path} needs Graphviz's `dot` program, which is not on PATH: "
                        "install Graphviz (apt install graphviz, brew install graphviz or conda "
                        "install graphviz), or write a .dot file and render it elsewhere")
    result = subprocess.run([dot, f"-T{ext[1:]}", "-o", path], input=text.encode(),
                            capture_output=True)
    if result.returncode != 0:
        raise DrawError(f"Graphviz's dot failed on {path} (exit {result.returncode}): "
                        + result.stderr.decode(errors="replace").strip())
