"""FixupTraceScopeBlocks for module traces (torch/csrc/jit/passes/fixup_trace_scope_blocks.cpp).

While a module is traced, each submodule call is recorded inside a ``prim::TracedModuleForward``
block, and every parameter, buffer and submodule is a ``prim::TracedAttr`` value. This pass turns
that into what torch users see:

1. ConvertTracedAttrReferences: each block gets a ``self`` input; attribute uses become
   ``prim::GetAttr`` chains at the top of the innermost block that can reach them (so they
   appear in reverse order of first use); TracedAttr nodes go.
2. MakeDefsDominateUses: values used outside the block that made them become block outputs.
3. convertReturnsToTuples: a block with several outputs returns one tuple.
4. lambdaLiftBlocksAndConvertToGraph: each block becomes a Graph; the outer values it uses
   become graph inputs (the call's inputs).
5. createMethodCalls: each such graph becomes a method of the submodule's class (``forward``,
   ``forward1`` ...) and the block a ``prim::CallMethod``.

The order in which every value is created follows torch's code, because that order is what
the printed numbers show.
"""
from . import _types as T
from ._graph_copy import clone_block, copy_graph, copy_metadata, renumbered as renumbered_in_place
from .ir import Graph

ELIGIBLE = ("prim::TracedModuleForward",)


# -- 1. ConvertTracedAttrReferences -----------------------------------------------------------

def _normalize_attr_name(field):
    return "_" + field if field.isdigit() else field


def insert_get_attr(graph, obj, field, before):
    """Graph::insertGetAttr: %field = prim::GetAttr[name="field"](%obj), named after the field."""
    node = graph.create("prim::GetAttr", [obj])
    node.scope = None
    node.set_attr("name", "s", field)
    graph.insert_before(node, before)
    out = node.add_output(obj.type_.attribute_type(field))
    graph.set_debug_name(out, _normalize_attr_name(field))
    return out


def convert_traced_attr_references(graph):
    attr_map = {n.s("scope"): n.output() for n in graph.block if n.kind_ == "prim::TracedAttr"}
    _add_self_arg(graph.block, attr_map)
    _convert_refs(graph, graph.block, "__module", graph.inputs()[0])
    for v in attr_map.values():
        v.node_.destroy()


def _add_self_arg(block, attr_map):
    for n in block:
        if n.kind_ == "prim::TracedModuleForward":
            owner = attr_map[n.s("scope")]
            n.inputs_.append(owner)
            n.blocks_[0].add_input(owner.type_, "self")
            _add_self_arg(n.blocks_[0], attr_map)


def _convert_refs(graph, block, prefix, self_value):
    unresolved, local_remaps = [], {}
    n_prefix = len(prefix)
    for n in block:
        if n.kind_ == "prim::TracedModuleForward":
            sub = n.blocks_[0]
            n.inputs_.extend(_convert_refs(graph, sub, n.s("scope"), sub.param.outputs_[0]))
        elif n.blocks_:
            for sub in n.blocks_:
                n.inputs_.extend(_convert_refs(graph, sub, prefix, self_value))
        for i, inp in enumerate(n.inputs_):
            if inp in local_remaps:
                n.inputs_[i] = local_remaps[inp]
                continue
            if inp.node_.kind_ != "prim::TracedAttr":
                continue
            first = block.param.next  # WithInsertPoint(b->param_node()->next())
            scope = inp.node_.s("scope")
            # under this block's module: its own scope, or one of its atoms further down (a
            # string test: splitting every scope of a deep chain into atoms would hold O(depth)
            # strings on each of the O(depth) levels of this recursion)
            if scope.startswith(prefix) and (len(scope) == n_prefix or scope[n_prefix] == "."):
                v = self_value
                for atom in (scope[n_prefix + 1:].split(".") if len(scope) > n_prefix else ()):
                    v = insert_get_attr(graph, v, atom, first)
            else:
                v = copy_metadata(block.add_input(inp.type_), inp)
                unresolved.append(inp)
            n.inputs_[i] = v
            local_remaps[inp] = v
    return unresolved


# -- 2. MakeDefsDominateUses ------------------------------------------------------------------

def _parent(block):
    return block.owning_node.block if block.owning_node is not None else None


def _depth(block, depths):
    """How deeply ``block`` nests (memoised: outer blocks are met first, so walks are short)."""
    chain = []
    while block is not None and id(block) not in depths:
        chain.append(block)
        block = _parent(block)
    d = depths[id(block)] if block is not None else -1
    for b in reversed(chain):
        d += 1
        depths[id(b)] = d
    return d


def _common_block(a, b, depths):
    """The innermost block enclosing both: the deeper one climbs first, then both together
    (a few steps for a use one level down, however deep the nest is)."""
    da, db = _depth(a, depths), _depth(b, depths)
    while da > db:
        a, da = _parent(a), da - 1
    while db > da:
        b, db = _parent(b), db - 1
    while a is not b:
        a, b = _parent(a), _parent(b)
    return a


def make_defs_dominate_uses(block, remap=None, depths=None):
    remap = {} if remap is None else remap
    depths = {} if depths is None else depths

    def process(n):
        for i, inp in enumerate(n.inputs_):
            if inp in remap:
                n.inputs_[i] = remap[inp]
                inp_remapped = remap[inp]
            else:
                inp_remapped = inp
            if inp_remapped.node_.block is not block:
                common = _common_block(n.block, inp_remapped.node_.block, depths)
                v, b = inp_remapped, inp_remapped.node_.block
                while b is not common:
                    b.register_output(v)
                    v = b.owning_node.add_output(v.type_)
                    b = b.owning_node.block
                remap[inp] = v
                n.inputs_[i] = v
        if n.kind_ in ELIGIBLE:
            make_defs_dominate_uses(n.blocks_[0], remap, depths)

    process(block.param)
    for n in block:
        process(n)
    process(block.ret)


# -- 3. convertReturnsToTuples ----------------------------------------------------------------

def convert_returns_to_tuples(block):
    g = block.graph
    for n in block:
        if n.kind_ != "prim::TracedModuleForward":
            continue
        sub = n.blocks_[0]
        convert_returns_to_tuples(sub)
        outs = sub.ret.inputs_
        if len(outs) > 1:
            tup = g.create("prim::TupleConstruct", list(outs))
            tup.scope = g.current_scope
            g.insert_before(tup, sub.ret)
            tup.add_output(T.TupleType(v.type_ for v in outs))
            sub.ret.inputs_ = [tup.outputs_[0]]
            tup_out = n.add_output(T.TupleType(o.type_ for o in n.outputs_))
            unpack = g.create("prim::TupleUnpack", [tup_out])
            g.insert_after(unpack, n)
            for o in n.outputs_[:-1]:
                unpack.add_output(o.type_)
            from .passes import replace_uses
            replace_uses(g, dict(zip(n.outputs_[:-1], unpack.outputs_)), recurse=True)
            n.outputs_ = [tup_out]
            tup_out.offset = 0
        elif not outs:
            none = g.create("prim::Constant")
            g.insert_before(none, sub.ret)
            sub.register_output(none.add_output(T.NoneType))
            n.add_output(T.NoneType)


# -- 4. lambdaLiftBlocksAndConvertToGraph -----------------------------------------------------

def lambda_lift_blocks(block, renumbered=None):
    """Bottom-up: each level's block is cloned into a Graph; a lifted inner level inside it is a
    Subgraph attribute, which Block::cloneFrom deep-copies, so torch renumbers every inner graph
    once per enclosing level: O(depth^2) work for a chain of modules (defect D15). Copying an
    already renumbered graph numbers it identically, and the block being cloned is dropped
    afterwards, so a graph renumbered once (kept in ``renumbered``) is moved, not copied again:
    the same graphs as torch's, in linear time and memory."""
    renumbered = set() if renumbered is None else renumbered

    def copy_subgraph(g):
        if id(g) in renumbered:
            return g
        # g is dropped after: its inner graphs move, and g itself is renumbered in place
        # where that gives what the copy would
        new = renumbered_in_place(g) or copy_graph(g, copy_subgraph)
        renumbered.add(id(new))
        return new

    for n in block:
        if n.kind_ not in ELIGIBLE:
            continue
        lambda_lift_blocks(n.blocks_[0], renumbered)
        graph = Graph()
        remaps = {}

        def outer(v, graph=graph, remaps=remaps, n=n):
            if v not in remaps:
                remaps[v] = copy_metadata(graph.block.add_input(v.type_), v)
                n.inputs_.append(v)
            return remaps[v]

        clone_block(graph.block, n.blocks_[0], outer, copy_subgraph)
        n.subgraph = graph
        n.erase_block(0)


# -- 5. createMethodCalls ---------------------------------------------------------------------

def create_method_calls(graph):
    returned = {}  # each block's output -> its call's output, replaced in one walk at the end
    for n in list(graph.block):
        if n.kind_ != "prim::TracedModuleForward":
            continue
        callee_type = n.inputs_[0].type_
        create_method_calls(n.subgraph)
        name = callee_type.add_method("forward", n.subgraph)
        call = graph.create("prim::CallMethod", list(n.inputs_))
        call.scope = None
        call.set_attr("name", "s", name)
        graph.insert_before(call, n)
        ret_type = T.erase_shape(n.subgraph.ret.inputs_[0].type_)
        returned[n.outputs_[0]] = call.add_output(ret_type)
        n.destroy()
    if returned:
        from .passes import replace_uses
        replace_uses(graph, returned)


def fixup_trace_scope_blocks(graph, self_module):
    """The module branch of FixupTraceScopeBlocks (clean-up passes are run by the caller)."""
    convert_traced_attr_references(graph)
    make_defs_dominate_uses(graph.block)
    convert_returns_to_tuples(graph.block)
    lambda_lift_blocks(graph.block)
    create_method_calls(graph)
