"""Copying graphs and blocks exactly as ir.cpp does (Block::cloneFrom, Graph::createClone).

The order in which values are created decides their numbers, so it is torch's: a cloned node's
outputs are made before its inputs are mapped, a block's inputs before its nodes, and a node's
Subgraph attribute is deep-copied (a submodule graph nested in another is a renumbered copy).
"""


def copy_metadata(dst, src):
    """Value::copyMetadata: the type, and the debug name if there is one."""
    dst.type_ = src.type_
    if src.name is not None:
        dst.node_.graph.set_debug_name(dst, src.name)
    return dst


def create_clone(graph, node, value_map, copy_subgraph=None):
    """Graph::createClone: a copy of ``node`` for ``graph`` (not inserted), inputs via value_map.
    ``copy_subgraph`` replaces the deep copy of a Subgraph attribute (see lambda lifting)."""
    new = node.empty_clone(graph)
    for o in node.outputs_:
        copy_metadata(new.add_output(o.type_), o)
    if node.attrs:
        # (kind, value) pairs are shared (tuples), graph attributes deep-copied
        new.attrs = {k: kv if kv[0] != "g" else ("g", kv[1].copy()) for k, kv in node.attrs.items()}
    new.source, new.scope = node.source, node.scope
    if node.subgraph is not None:
        new.subgraph = (copy_subgraph or copy_graph)(node.subgraph)
    new.inputs_ = [value_map(i) for i in node.inputs_]
    for b in node.blocks_:
        clone_block(new.add_block(), b, value_map, copy_subgraph)
    return new


def clone_block(dst, src, value_map, copy_subgraph=None):
    """Block::cloneFrom: values defined in ``src`` map to their copies, others via value_map."""
    local = {}

    def env(v):
        mapped = local.get(v)
        return mapped if mapped is not None else value_map(v)

    for v in src.param.outputs_:
        local[v] = copy_metadata(dst.add_input(v.type_), v)
    for n in src:
        new = create_clone(dst.graph, n, env, copy_subgraph)
        dst.append(new)
        for o, no in zip(n.outputs_, new.outputs_):
            local[o] = no
    for v in src.ret.inputs_:
        dst.register_output(env(v))


def copy_graph(graph, copy_subgraph=None):
    """Graph::copy: a new graph with the same nodes, renumbered in order."""
    from .ir import Graph

    def outside(v):
        raise RuntimeError(f"Graph::copy() encountered a use of a value {v.debugName()} not in scope")

    new = Graph()
    clone_block(new.block, graph.block, outside, copy_subgraph)
    return new


def renumbered(graph):
    """What ``copy_graph(graph)`` returns, made by renumbering ``graph`` itself, for a graph
    that is dropped after the copy (lambda lifting's inner graphs). A copy numbers values in
    the order it creates them: the inputs, then each node's outputs (a node's blocks after its
    outputs); it copies names one by one into a fresh graph, where names already unique never
    clash, so they stay. Graphs holding a graph attribute (deep-copied, hence renumbered, by a
    copy) or blocks are copied as before."""
    order = list(graph.param.outputs_)
    for n in graph:
        if n.blocks_ or (n.attrs and any(kind == "g" for kind, _ in n.attrs.values())):
            return None
        order.extend(n.outputs_)
    names = {}
    for i, v in enumerate(order):
        v.unique = i
        if v.name is not None:
            names[v.name] = v
    graph._unique = len(order)
    graph.unique_names = names
    graph.name_base_suffix = {}
    return graph
