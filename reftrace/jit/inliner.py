"""Inlining method calls, for ``inlined_graph`` (torch/csrc/jit/passes/inliner.cpp).

``module.inlined_graph`` is a copy of the forward graph in which every ``prim::CallMethod`` is
replaced by the callee's body. As in torch, the body inserted is the callee's *optimized* graph:
a copy, itself inlined, with constants pooled (deduplicated and hoisted to the top, which is why
inlined submodule constants appear in reverse order). torch's preoptimizeGraph also runs peephole
and immutable-constant propagation; traced graphs give those nothing to do in the programs reftrace
covers (spec MOD rules say where that is assumed).
"""
from ._graph_copy import copy_graph, create_clone
from .passes import replace_uses


def inlined_copy(graph):
    g = copy_graph(graph)
    inline(g)
    return g


def _optimized(graph):
    """GraphFunction::optimized_graph: computed once per method graph, then reused."""
    opt = graph.__dict__.get("_optimized")
    if opt is None:
        opt = copy_graph(graph)
        inline(opt)            # preoptimizeGraph: Inline, PeepholeOptimize, ConstantPooling
        peephole(opt)
        constant_pooling(opt)
        graph.__dict__["_optimized"] = opt
    return opt


def inline(graph):
    # every call's outputs -> the inlined body's, replaced in one walk at the end; a later call
    # reading an earlier call's output reads the body's value through it meanwhile
    replaced = {}
    for node in list(graph):
        if node.kind_ == "prim::CallMethod":
            callee, args = node.inputs_[0].type_.methods[node.s("name")], node.inputs_
        elif node.kind_ == "prim::CallFunction":
            callee, args = node.inputs_[0].type_.callee, node.inputs_[1:]
        else:
            continue
        args = [replaced.get(a, a) for a in args]
        callee = _optimized(callee)
        value_map = dict(zip(callee.param.outputs_, args))
        for n in callee:
            new = create_clone(graph, n, value_map.__getitem__)
            graph.insert_before(new, node)
            for o, no in zip(n.outputs_, new.outputs_):
                value_map[o] = no
        new_outputs = [value_map[v] for v in callee.ret.inputs_]
        for old, new in zip(node.outputs_, new_outputs):
            if old.name is not None:
                graph.set_debug_name(new, old.name)
        replaced.update(zip(node.outputs_, new_outputs))
        node.destroy()
    if replaced:
        replace_uses(graph, replaced)


def peephole(graph):
    """The PeepholeOptimize rules that can fire on traced graphs (shape peepholes off):
    aten::Int/aten::Float/aten::ScalarImplicit of prim::NumToTensor(x) is x; x.t().t() is x. Dead code then goes."""
    from .passes import dead_code_elimination
    changed = False
    for n in list(graph):
        src = n.inputs_[0].node_ if n.inputs_ else None
        if n.kind_ in ("aten::Int", "aten::Float", "aten::ScalarImplicit") \
                and src.kind_ == "prim::NumToTensor" \
                and (n.kind_ == "aten::ScalarImplicit" or str(src.inputs_[0].type_) == str(n.outputs_[0].type_)):
            replace_uses(graph, {n.outputs_[0]: src.inputs_[0]})
            changed = True
        elif n.kind_ == "aten::t" and src.kind_ == "aten::t":
            replace_uses(graph, {n.outputs_[0]: src.inputs_[0]})
            changed = True
    if changed:
        dead_code_elimination(graph)


def _constant_key(node, written):
    if not node.attrs:
        return ("None",)
    kind, value = node.attrs["value"]
    if kind == "t":
        # equal tensors merge only where that cannot change aliasing (AliasDb's
        # safeToChangeAliasingRelationship): no op writes them and the graph does not return them
        if node.outputs_[0] in written:
            return None
        # torch's EqualNode compares tensor attributes with Tensor.equal (and HashNode hashes
        # the output type, strides included): -0. equals 0., a NaN equals nothing
        a = value._array
        if a.dtype.kind not in "biu":
            if bool((a != a).any()):
                return None
            a = a + a.dtype.type(0)  # -0. + 0. is 0.: equal values, equal bytes
        return (kind, str(a.dtype), a.shape, a.tobytes(), str(node.outputs_[0].type_))
    return (kind, repr(value), str(node.outputs_[0].type_))


def _written_or_escaping(graph):
    """Values some node may write in place, or that the graph returns."""
    out = set(graph.ret.inputs_)
    for n in graph:
        if n.op is not None and n.op.is_inplace:
            out.update(n.inputs_)
        elif n.kind_ in ("prim::ListConstruct", "prim::TupleConstruct") or n.op is None \
                and n.kind_ != "prim::Constant":
            out.update(v for v in n.inputs_ if v.node_.kind_ == "prim::Constant")
    return out


def constant_pooling(graph):
    """ConstantPooling: equal immutable constants merge; each kept one moves to the top."""
    seen, merged = {}, {}
    written = _written_or_escaping(graph)
    for node in list(graph):
        if node.kind_ != "prim::Constant":
            continue
        key = _constant_key(node, written)
        if key is not None and key in seen:
            merged[node.outputs_[0]] = seen[key].outputs_[0]  # (nothing here reads inputs)
            node.destroy()
            continue
        if key is not None:
            seen[key] = node
        first = graph.param.next
        if node is not first:
            node.prev.next, node.next.prev = node.next, node.prev
            graph.insert_before(node, first)
    if merged:
        replace_uses(graph, merged)
