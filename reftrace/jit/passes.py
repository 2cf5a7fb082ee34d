"""Graph clean-up passes run at the end of every trace (FixupTraceScopeBlocks' runCleanupPasses).

dead_code_elimination is alias-aware, as torch's EliminateDeadCode: a node is kept when one of
its outputs is used by a kept node or returned, or when it writes into data that is still
observable: a graph input, a returned value, or anything used later (through views: an
``add_`` on ``x.view(-1)`` keeps both the view and the write).
"""
from . import _types as T



def _writes(node):
    op = node.op
    if op is not None:
        return op.is_inplace
    return False


def _is_view(node):
    op = node.op
    return op is not None and (op.is_view or op.is_inplace)


_PARTS_OF_INPUT = ("prim::ListUnpack", "prim::TupleUnpack", "aten::__getitem__")


def alias_roots(graph, live_roots=None):
    """Value -> the value whose data it shares (views and in-place outputs alias their input).
    With ``live_roots`` (a set), also adds to it, in the same walk, the data torch's alias
    analysis treats as observable beyond the graph (see dead_code_elimination)."""
    root = {}
    for v in graph.param.outputs_:
        root[v] = v
    for n in graph:
        kind, ins, op = n.kind_, n.inputs_, n.op
        if op is not None and (op.is_view or op.is_inplace) and ins:  # _is_view(n), inlined
            r = root.get(ins[0], ins[0])
            for o in n.outputs_:
                root[o] = r
        elif kind in _PARTS_OF_INPUT and ins:
            # the elements of a container share its root: an element of a list input is part of
            # that input (writes to it are observable), an element of a view list a view
            r = root.get(ins[0], ins[0])
            for o in n.outputs_:
                root[o] = r
        else:
            for o in n.outputs_:
                root[o] = o
        if live_roots is None:
            continue
        if kind == "prim::GetAttr":  # module state
            live_roots.add(n.outputs_[0])
        elif kind == "prim::ListUnpack" and ins and _is_view(ins[0].node_):
            # torch's alias analysis puts the elements of a list an op returns (chunk, split,
            # unbind) in the wildcard set: a write to data they share is never dead (defect D17)
            live_roots.update(root.get(o, o) for o in n.outputs_)
        elif kind == "prim::PythonOp":
            # torch's alias analysis treats a prim::PythonOp conservatively (its inputs and
            # outputs may alias anything): a later write into one of its inputs stays
            live_roots.update(root.get(i, i) for i in ins)
    return root


# Node::hasSideEffects: never removed, whatever uses their outputs
SIDE_EFFECTS = frozenset({"prim::CallMethod", "prim::CallFunction", "prim::PythonOp",
                          "prim::Print", "prim::RaiseException", "prim::SetAttr"})


def dead_code_elimination(graph):
    # data that is observable after the graph runs: inputs, outputs and module state (and
    # what they alias), collected with the aliases in one walk
    live_roots = set(graph.param.outputs_)
    root = alias_roots(graph, live_roots)
    live_values = set(graph.ret.inputs_)
    live_roots.update(root.get(v, v) for v in graph.ret.inputs_)
    node, param = graph.ret.prev, graph.param
    while node is not param:
        prev = node.prev
        live = node.kind_ in SIDE_EFFECTS
        if not live:
            for o in node.outputs_:
                if o in live_values:
                    live = True
                    break
            else:
                if node.inputs_ and _writes(node):
                    live = root.get(node.inputs_[0], node.inputs_[0]) in live_roots
        if live:
            for i in node.inputs_:
                live_values.add(i)
                live_roots.add(root.get(i, i))
        else:
            node.destroy()
        node = prev


def lower_simple_tuples(graph):
    """TupleUnpack(TupleConstruct(a, b)) -> a, b (LowerSimpleTuples)."""
    for n in list(graph):
        if n.kind_ == "prim::TupleUnpack" and n.inputs_[0].node_.kind_ == "prim::TupleConstruct":
            src = n.inputs_[0].node_.inputs_
            replace_uses(graph, dict(zip(n.outputs_, src)))
            n.destroy()


def replace_uses(graph, mapping, recurse=False):
    """Value::replaceAllUsesWith for several values (into nested blocks when recurse)."""
    blocks = [graph.block]
    keys = mapping.keys()
    while blocks:
        b = blocks.pop()
        for n in list(b) + [b.ret]:
            if not keys.isdisjoint(n.inputs_):
                n.inputs_ = [mapping.get(i, i) for i in n.inputs_]
            if recurse and n.blocks_:
                blocks.extend(n.blocks_)


# normalize_ops.cpp getOperatorAliasMap, as torch 2.13 applies it (det, inverse and matrix_power
# are normalised to their linalg_ forms in 2.13; checked against the installed wheel).
OPERATOR_ALIASES = {
    "absolute": "abs", "absolute_": "abs_", "clip": "clamp", "clip_": "clamp_",
    "det": "linalg_det", "inverse": "linalg_inv", "matrix_power": "linalg_matrix_power",
    "ger": "outer", "arccos": "acos", "arccos_": "acos_", "arcsin": "asin", "arcsin_": "asin_",
    "arctan": "atan", "arctan_": "atan_", "arccosh": "acosh", "arccosh_": "acosh_",
    "arcsinh": "asinh", "arcsinh_": "asinh_", "arctanh": "atanh", "arctanh_": "atanh_",
    "fix": "trunc", "fix_": "trunc_", "negative": "neg", "negative_": "neg_",
    "subtract": "sub", "subtract_": "sub_", "greater_equal": "ge", "greater_equal_": "ge_",
    "greater": "gt", "greater_": "gt_", "less_equal": "le", "less_equal_": "le_",
    "less": "lt", "less_": "lt_", "not_equal": "ne", "not_equal_": "ne_",
    "divide": "div", "divide_": "div_", "multiply": "mul", "multiply_": "mul_",
    "true_divide": "div", "true_divide_": "div_", "row_stack": "vstack",
    "swapdims": "transpose", "swapdims_": "transpose_", "swapaxes": "transpose",
    "swapaxes_": "transpose_", "moveaxis": "movedim", "degrees": "rad2deg",
    "degrees_": "rad2deg_", "radians": "deg2rad", "radians_": "deg2rad_",
    # torch.special's spellings of torch ops (checked by tracing each under torch 2.13)
    "special_i0": "i0", "special_psi": "digamma", "special_digamma": "digamma",
    "special_gammaln": "lgamma", "special_polygamma": "polygamma", "special_erfinv": "erfinv",
    "special_multigammaln": "mvlgamma", "special_gammainc": "igamma",
    "special_gammaincc": "igammac", "orgqr": "linalg_householder_product",
    "matrix_exp": "linalg_matrix_exp",
}


# aliases whose first argument is not a tensor (special_polygamma(int n, Tensor self)), renamed too
_FIRST_ARG_NOT_TENSOR = frozenset({"aten::special_polygamma"})


# the kinds normalize_ops may rewrite
_NORMALIZED_KINDS = frozenset(["aten::rsub"] + ["aten::" + name for name in OPERATOR_ALIASES])


def normalize_ops(graph):
    """NormalizeOps: op aliases become their normal form, and rsub(x, y) of two tensors becomes
    sub(y, x). Like torch, the node is replaced by a new one whose outputs are new values (new
    numbers; debug names move over)."""
    for n in list(graph):
        if n.kind_ not in _NORMALIZED_KINDS or not n.inputs_:
            continue  # (most nodes: one set lookup)
        if n.kind_ == "aten::rsub" and n.op is not None and n.op.overload == "Tensor":
            from ..ops import OVERLOADS
            new = _replace_with_new_symbol(graph, n, "aten::sub", OVERLOADS.get("aten::sub.Tensor", n.op))
            new.inputs_[0], new.inputs_[1] = new.inputs_[1], new.inputs_[0]
            continue
        target = OPERATOR_ALIASES.get(n.kind_[6:])
        if target is None or not (isinstance(n.inputs_[0].type_, (T.TensorType, T.ListType)) or
                                  n.kind_ in _FIRST_ARG_NOT_TENSOR):
            continue
        _replace_with_new_symbol(graph, n, "aten::" + target, n.op)  # same kernel: aliases


def _replace_with_new_symbol(graph, n, kind, op):
    """Node::replaceWithNewSymbol: a new node of ``kind`` with n's inputs, new outputs."""
    new = graph.create(kind, n.inputs_, op)
    new.source, new.scope = n.source, n.scope
    graph.insert_after(new, n)
    mapping = {}
    for o in n.outputs_:
        v = new.add_output(o.type_)
        if o.name is not None:
            name = o.name
            graph.set_debug_name(o, None)
            graph.set_debug_name(v, name)
        mapping[o] = v
    replace_uses(graph, mapping)
    n.destroy()
    return new
