"""The deep checker: where, exactly, does a trace stop agreeing with its Python function?

torch's checker (``_check.py``, kept torch-exact) compares the top-level tensors a trace returns
and diffs graph texts. The deep check (spec/specializations.md, rules SPZ-6..8) is opt-in:

    report = reftrace.jit.check(traced, new_inputs)     # a DeepCheckReport
    reftrace.jit.trace(f, x, check_inputs=[...], _deep_check=True)  # TracingCheckError on a mismatch

1. runs the trace and the Python function on clones of the inputs and compares every output
   leaf, through nested tuples, lists and dicts (path ``out[1]['a'][0]``): structure, dtype,
   shape, values (rtol, atol as the checker's);
2. on a mismatch, replays side by side: the trace's graph, and a fresh trace of the function on
   the same inputs (which recorded exactly what eager execution did with them), both through a
   recording ``Interpreter`` (submodule calls included, in execution order), and compares node
   by node: the first node whose kind or output differs is where the trace diverged, named with
   its graph line and source line.
"""
import warnings

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .interpreter import Interpreter
from .ir import format_node


class _Recorder(Interpreter):
    """Every node run, in order, with its result; and the node that raised, if one did."""

    def __init__(self, graph):
        super().__init__(graph)
        self.events = []
        self.failed = None

    def run_node(self, node, args):
        try:
            result = super().run_node(node, args)
        except Exception as e:
            if self.failed is None:
                self.failed = (node, e)
            raise
        self.events.append((node, result))
        return result


class Divergence:
    """The first node where the trace's replay and the eager run (its re-trace) part ways."""

    def __init__(self, index, traced_node, eager_node, reason):
        self.index = index              # position in the replay (nodes run, submodules included)
        self.traced_node = traced_node  # a Node of the trace's graph (or None: it had no more)
        self.eager_node = eager_node    # the re-trace's node there (or None)
        self.reason = reason

    @property
    def source(self):
        """'file:line' of the diverging node (the trace's, else the eager run's)."""
        for n in (self.traced_node, self.eager_node):
            if n is not None and n.source is not None:
                return f"{n.source[0]}:{n.source[1]}"
        return None

    def format(self):
        lines = [f"First diverging node (node {self.index} of the replay), at {self.source or 'an unknown line'}:"]
        for label, n in (("trace", self.traced_node), ("eager", self.eager_node)):
            lines.append(f"  {label}: " + (format_node(n, True, "").rstrip("\n") if n is not None else "(no node)"))
        lines.append(f"  why: {self.reason}")
        return "\n".join(lines)


class DeepCheckReport:
    """What ``reftrace.jit.check`` found: ``ok``, the ``mismatches`` ((path, message) per output
    leaf that differs), the ``divergence`` (first diverging node, or None) and the trace's
    ``specializations`` (what it baked in)."""

    def __init__(self, mismatches, divergence, specializations):
        self.mismatches = mismatches
        self.divergence = divergence
        self.specializations = specializations

    @property
    def ok(self):
        return not self.mismatches

    def format(self):
        if self.ok:
            return "Deep check passed: every output leaf of the trace matches the Python function."
        lines = ["Deep check failed: the trace's outputs differ from the Python function's."]
        for path, message in self.mismatches:
            lines.append(f"  {path}: {message.splitlines()[0]}")
        if self.divergence is not None:
            lines.append(self.divergence.format())
        if self.specializations:
            lines.append(self.specializations.format())
        return "\n".join(lines)

    __str__ = format

    def __bool__(self):
        return self.ok


# -- comparing outputs, leaf by leaf -------------------------------------------------------------

def _leaves(obj, path="out"):
    """(path, leaf) for every leaf of nested tuples, lists and dicts, in order."""
    if isinstance(obj, (tuple, list)):
        yield path, ("seq", type(obj).__name__, len(obj))
        for i, e in enumerate(obj):
            yield from _leaves(e, f"{path}[{i}]")
    elif isinstance(obj, dict):
        yield path, ("dict", sorted(map(repr, obj)))
        for k, e in obj.items():
            yield from _leaves(e, f"{path}[{k!r}]")
    else:
        yield path, obj


def _differ(a, b, rtol, atol):
    """Why two leaves differ, or None when they agree."""
    from ._check import assert_close, default_atol
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            return f"a {type(a).__name__} in the trace, a {type(b).__name__} in Python"
        try:
            assert_close(a.detach(), b.detach(), rtol=rtol,
                         atol=default_atol(a, b) if atol is None else atol, equal_nan=True)
        except AssertionError as e:
            return "; ".join(line for line in str(e).splitlines() if line)
        return None
    if isinstance(a, tuple) and a[:1] == ("seq",) and isinstance(b, tuple) and b[:1] == ("seq",):
        # a list where Python returned a tuple is how a trace returns it: only the length counts
        return None if a[2] == b[2] else f"{a[2]} elements in the trace, {b[2]} in Python"
    if a != b:
        return f"{_describe(a)} in the trace, {_describe(b)} in Python"
    return None


def _describe(leaf):
    if isinstance(leaf, tuple) and leaf[:1] == ("dict",):
        return "keys " + ", ".join(leaf[1])
    return repr(leaf)


def compare_outputs(traced_out, eager_out, rtol=1e-5, atol=None):
    """[(path, why)] for each leaf that differs, and for a difference in structure."""
    ta, ea = list(_leaves(traced_out)), list(_leaves(eager_out))
    out = []
    for (pa, a), (pb, b) in zip(ta, ea):
        if pa != pb:
            out.append((pa, f"the structure differs here (Python has {pb})"))
            break
        why = _differ(a, b, rtol, atol)
        if why is not None:
            out.append((pa, why))
    if len(ta) != len(ea) and not out:
        out.append(("out", f"{len(ta)} leaves in the trace, {len(ea)} in Python"))
    return out


# -- replaying side by side ------------------------------------------------------------------------

def _node_results_differ(a, b, rtol, atol):
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return _differ(a, b, rtol, atol)
    if isinstance(a, (int, float, bool, str)) or a is None:
        return None if a == b else f"{a!r} in the trace, {b!r} in eager"
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return f"{len(a)} elements in the trace, {len(b)} in eager"
        for x, y in zip(a, b):
            why = _node_results_differ(x, y, rtol, atol)
            if why is not None:
                return why
    return None  # modules, graphs, dicts ...: not data


def first_divergence(traced_graph, traced_args, eager_graph, eager_args, rtol=1e-5, atol=None):
    """Replay both graphs on their arguments; the first node whose kind or result differs."""
    from ._check import _clone_inputs
    runs = []
    for graph, args in ((traced_graph, traced_args), (eager_graph, eager_args)):
        rec = _Recorder(graph)
        try:
            with no_grad():
                rec.run(*_clone_inputs_keeping_modules(args, _clone_inputs))
        except Exception:  # noqa: BLE001 - the failing node is recorded; it is the answer below
            pass
        runs.append(rec)
    traced, eager = runs
    ta, ea = list(enumerate(traced.events)), list(enumerate(eager.events))
    kinds = [n.kind_ for n, _ in traced.events], [n.kind_ for n, _ in eager.events]
    if any(a != b for a, b in zip(*kinds)) or (len(kinds[0]) != len(kinds[1]) and traced.failed is None):
        # the runs took different paths: the constants each path inserts (its operands) are
        # not aligned, so the ops are compared, and the first op that differs is the answer
        ta = [e for e in ta if e[1][0].kind_ != "prim::Constant"]
        ea = [e for e in ea if e[1][0].kind_ != "prim::Constant"]
    for (i, (na, ra)), (_, (nb, rb)) in zip(ta, ea):
        if na.kind_ != nb.kind_:
            return Divergence(i, na, nb, f"eager ran {nb.kind_} where the trace runs {na.kind_}: "
                                         "Python took another path on these inputs")
        why = _node_results_differ(ra, rb, rtol, atol)
        if why is not None:
            baked = " (a value baked in when tracing)" if na.kind_ == "prim::Constant" else ""
            return Divergence(i, na, nb, f"its result differs{baked}: {why}")
    i = min(len(traced.events), len(eager.events))
    if len(ta) != len(ea) and traced.failed is None:
        na = ta[len(ea)][1][0] if len(ta) > len(ea) else None
        nb = ea[len(ta)][1][0] if len(ea) > len(ta) else None
        return Divergence(min(len(ta), len(ea)), na, nb,
                          "one run has more nodes: Python took another path on these inputs")
    if traced.failed is not None and eager.failed is None:
        node, e = traced.failed
        return Divergence(i, node, eager.events[i][0] if i < len(eager.events) else None,
                          f"it raises in the trace: {type(e).__name__}: {e}")
    return None


def _clone_inputs_keeping_modules(args, clone):
    return [a if not isinstance(a, (Tensor, tuple, list, dict)) else clone(a) for a in args]


# -- the entry point -------------------------------------------------------------------------------

def _normalize(inputs):
    if isinstance(inputs, Tensor):
        return (inputs,)
    if isinstance(inputs, list):
        return tuple(inputs)
    return inputs


def check(traced, inputs, rtol=1e-5, atol=None):
    """Deep-check ``traced`` (a traced function or module) against the Python function it was
    traced from, on ``inputs`` (a tensor or a tuple of arguments, as a check input): a
    DeepCheckReport. Random ops make any check fail, as they make torch's."""
    from ._check import _clone_inputs, _restore_rng, _save_rng
    from ._module_trace import TracedModule
    inputs = _normalize(inputs)
    if isinstance(traced, TracedModule):
        func, lead = traced.__dict__.get("_original_module"), (traced,)
    else:
        func, lead = getattr(traced, "_original", None), ()
    if func is None:
        raise TypeError("reftrace.jit.check needs a trace made by reftrace.jit.trace or trace_module "
                        f"(it knows the Python function it was made from); got {type(traced).__name__}")
    rng = _save_rng()
    try:
        with no_grad():
            try:
                traced_out = traced(*_clone_inputs(inputs))
            except Exception as e:  # noqa: BLE001 - a trace that fails on new inputs is a finding
                traced_out = _Raised(e)
            eager_out = func(*_clone_inputs(inputs))
        if isinstance(traced_out, _Raised):
            mismatches = [("out", f"the trace raised {type(traced_out.error).__name__}: "
                                  f"{str(traced_out.error).splitlines()[-1]}")]
        else:
            mismatches = compare_outputs(traced_out, eager_out, rtol, atol)
        divergence = None
        if mismatches:
            eager_graph, eager_lead = _retrace(traced, func, inputs)
            divergence = first_divergence(traced.graph, list(lead) + list(inputs), eager_graph,
                                          list(eager_lead) + list(inputs), rtol, atol)
    finally:
        _restore_rng(rng)
    return DeepCheckReport(mismatches, divergence, traced.specializations())


class _Raised:
    def __init__(self, error):
        self.error = error


def _retrace(traced, func, inputs):
    """A fresh trace of ``func`` on (clones of) ``inputs``: what eager did with them, as a graph."""
    from ._check import _clone_inputs
    from ._module_trace import CompilationUnit, TracedModule, trace_module
    from ._trace import trace
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(traced, TracedModule):
            again = trace_module(func, {"forward": _clone_inputs(inputs)}, check_trace=False,
                                 strict=False, _compilation_unit=CompilationUnit())
            return again.graph, (again,)
        again = trace(func, _clone_inputs(inputs), check_trace=False, strict=False)
        return again.graph, ()


def deep_check_or_raise(traced, check_inputs, rtol):
    """trace(..., _deep_check=True): a TracingCheckError for the first check input that fails."""
    from ._check import TracingCheckError
    for inputs in check_inputs:
        report = check(traced, inputs, rtol=rtol)
        if not report.ok:
            error = TracingCheckError(None, None, extra_msg=report.format())
            error.report, error.specializations = report, report.specializations
            raise error
