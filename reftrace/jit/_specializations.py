"""The specialisation report: every value a trace baked in that came from data or shape.

A trace records ops; whatever the Python program computed from a tensor's *value* or *shape* as a
Python number is recorded as a constant, and the trace then holds only for inputs that give the
same number (spec/specializations.md). The tracer notes each such point as it happens
(``TracingState.note``): the TracerWarning sites torch has (``len(x)``, ``t.item()``,
``float(t)``, ``bool(t)``, iteration, ``torch.tensor(...)``), the bakes torch makes silently
(a traced size taken by ``__index__``: ``range(x.size(0))``; an int argument torch's C++
bindings read as a plain int), and the checker adds what it detected (graphs that differ on a
re-trace). ``traced.specializations()`` returns them in recording order.

Noting costs nothing outside a trace: the hooks sit on the tracer, which eager ops never reach.
"""
from dataclasses import dataclass

# what to do instead, per kind (the report's "fix" column)
FIXES = {
    "len": "use x.size(0) instead of len(x): a traced size is recorded (aten::size) and follows "
           "the input",
    "size": "pass the size on to tensor ops as it is (x.size(d), x.shape[d]) instead of turning "
            "it into a Python int: ops record it with aten::size",
    "number": "keep the value a tensor (use the 0-dim tensor in tensor ops) instead of "
              "t.item()",
    "int": "keep the value a tensor (t.long(), tensor ops) instead of int(t)",
    "float": "keep the value a tensor (t.double(), tensor ops) instead of float(t)",
    "bool": "a condition on tensor data: the branch taken is baked in; compute both sides and "
            "select with torch.where(cond, a, b), or use torch.jit.script for control flow",
    "list": "keep the computation in tensor ops instead of t.tolist()",
    "numpy": "keep the computation in tensor ops instead of t.numpy()",
    "iterate": "iterating over a tensor unrolls the loop size(0) times: use batched tensor ops",
    "index": "a traced size used as a Python int (range(n), a list index, a slice of a list) is "
             "baked: pass x.size(d) to tensor ops instead, or loop over a fixed count",
    "constant": "create the tensor outside the traced function and pass it as an input (or "
                "register it as a buffer), or build it from traced values with tensor ops",
    "kernel size": "pass the size as a list (F.max_pool1d(x, [x.size(2)])): torch reads a single "
                   "traced size given for an int[] argument as a plain int",
    "int argument": "torch's C++ function reads this argument as a plain int, so a traced size "
                    "there is always baked: use a constant, or torch.jit.script",
    "in-place": "do not modify a tensor in place while other views of its data are alive, or "
                "trace without _force_outplace",
    "resize": "resize_ / resize_as_ cannot be traced: use view or reshape, or create the tensor "
              "in its final shape",
    "output list": "return a tuple instead of a list, or trace with strict=False",
    "branch": "the check input's trace recorded different ops: control flow depends on tensor "
              "data or shape; select with torch.where, or use torch.jit.script",
    "constant value": "a tensor constant differs between traces: it was computed from the input "
                      "in Python; keep that computation in tensor ops",
    "output mismatch": "the trace's output differs from the Python function's on the check "
                       "input: see the other entries, or call .eval() for nondeterministic layers",
}


@dataclass(frozen=True)
class Specialization:
    """One baked value: what kind of bake, where (file, line), the value, what torch said (its
    TracerWarning, word for word; what happened, for a silent bake), what to do instead, and
    the traced size it came from when it came from one ('x.size(0)')."""
    kind: str
    file: str
    line: int
    value: object
    message: str
    fix: str
    origin: str = None

    @property
    def location(self):
        return f"{self.file}:{self.line}" if self.file else "(the checker)"

    def format(self):
        value = "" if self.value is None else f" = {_short(self.value)}"
        if self.origin:
            value += f" (from {self.origin})"
        return (f"{self.location}: {self.kind}{value}\n"
                f"    {self.message.splitlines()[0] if self.message else ''}\n"
                f"    fix: {self.fix}")


class SpecializationReport(list):
    """The list of Specialization records; ``str()`` / ``format()`` prints it for a reader."""

    def format(self):
        if not self:
            return "No values baked in: the trace recorded every value it used from its inputs."
        head = f"{len(self)} value{'s' if len(self) != 1 else ''} baked into the trace:"
        return "\n".join([head] + [r.format() for r in self])

    __str__ = format

    def kinds(self):
        return [r.kind for r in self]


def _short(v, limit=60):
    text = repr(v)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def report_of(graph):
    """The records a traced graph carries (set by the trace that made it)."""
    return SpecializationReport(graph.__dict__.get("_specializations", ()))


def size_origin(value, limit=64):
    """How a 0-dim tensor's Value came from a traced size: 'x.size(0)', 'x.numel()', or
    'arithmetic on x.size(0)' when arithmetic sits between; None when no size is involved.
    Walks back through the producers (a few dozen nodes at most)."""
    seen, stack, direct = set(), [value], True
    while stack and len(seen) < limit:
        v = stack.pop()
        node = v.node_
        if node in seen or node is None:
            continue
        seen.add(node)
        if node.kind_ in ("aten::size", "aten::numel"):
            name = node.inputs_[0].debugName()
            src = "%" + name if name.isdigit() else name
            if node.kind_ == "aten::numel":
                text = f"{src}.numel()"
            else:
                dim = (node.inputs_[1].node_.attrs or {}).get("value", (None, "?"))[1]
                text = f"{src}.size({dim})"
            return text if direct else "arithmetic on " + text
        if node.kind_ != "prim::NumToTensor":
            direct = False
        stack.extend(node.inputs_)
    return None


# -- what the checker detects (_check.py calls these) ---------------------------------------------

def _first_differing_constant(mod_nodes, check_nodes):
    """The first tensor constant whose value differs (one printed as value=<Tensor> in both)."""
    from ._check import assert_close
    for (n_mod, s_mod), (n_check, s_check) in zip(mod_nodes, check_nodes):
        if n_mod.kind_ != n_check.kind_:
            return None
        if n_mod.kind_ == "prim::Constant" and n_mod.hasAttribute("value") and \
                n_check.hasAttribute("value") and n_mod.kindOf("value") == n_check.kindOf("value") == "t":
            try:
                assert_close(n_mod.t("value"), n_check.t("value"), equal_nan=True)
            except AssertionError:
                return (n_mod, s_mod), (n_check, s_check)
    return None


def note_divergence(error, traced_graph, check_graph):
    """The checker's detection (_check.py): the report rides on its error (the trace is never
    returned): the trace's records, then the first node the re-trace recorded differently."""
    from ._check import _comparable, _first_diverging
    report = report_of(traced_graph)
    _, mod_nodes = _comparable(traced_graph)
    _, check_nodes = _comparable(check_graph)
    diverging = _first_diverging(mod_nodes, check_nodes) or _first_differing_constant(mod_nodes, check_nodes)
    if diverging is not None:
        (n_mod, s_mod), (n_check, s_check) = diverging
        # only constants' values differ: a value computed in Python; else other ops ran: a branch
        same_ops = [n.kind_ for n, _ in mod_nodes] == [n.kind_ for n, _ in check_nodes]
        kind = "constant value" if same_ops else "branch"
        if not same_ops:  # name the first op that differs: the constants of each path are operands
            ops = _first_diverging(*([(n, s) for n, s in nodes if n.kind_ != "prim::Constant"]
                                     for nodes in (mod_nodes, check_nodes)))
            if ops is not None:
                (n_mod, s_mod), (n_check, s_check) = ops
        file, line = n_mod.source or n_check.source or ("", 0)
        report.append(Specialization(
            kind, file, line, None,
            f"the trace recorded `{s_mod.strip().split(' # ')[0]}` where the check input's trace "
            f"recorded `{s_check.strip().split(' # ')[0]}`"
            + (f" (at {n_check.sourceRange()})" if n_check.sourceRange() else ""), FIXES[kind]))
    error.specializations = report
    return error


def note_mismatch(graph, message):
    """A checker warning (outputs differ on a check input), kept with the trace's records."""
    records = graph.__dict__.setdefault("_specializations", [])
    records.append(Specialization("output mismatch", "", 0, None, message, FIXES["output mismatch"]))
