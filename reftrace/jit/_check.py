"""The trace checker: torch/jit/_trace.py's _check_trace, for traced functions.

For each check input: re-trace the function on cloned inputs; run the trace and the Python
function on clones and compare their top-level tensor outputs (assert_close on doubles,
rtol=check_tolerance); warn per mismatch ("Output nr K. ...", preceded once by the
nondeterministic-nodes warning); when they match, compare against the re-trace too. Then diff
the canonicalised, shape-erased graphs and compare tensor-valued constants: any difference is a
TracingCheckError. Messages are torch 2.13's.

One deliberate difference (spec rule CHK-8): the random generator state is saved before the
checker runs and restored after it, so the caller sees the draws it would have seen without
checking. torch leaves the generator advanced.
"""
import difflib
import re
import warnings

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import _types as T
from .ir import format_graph, format_node
from ._specializations import note_divergence, note_mismatch
from .tracer import TracerWarning


def indent(s):
    return "\n".join("\t" + line for line in s.splitlines())


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n"
            self.message += indent(graph_diff_error) + "\n"
        if tensor_compare_error is not None:
            self.message += ("ERROR: Tensor-valued Constant nodes differed in value across "
                             "invocations. This often indicates that the tracer has encountered "
                             "untraceable code.\n")
            self.message += indent(tensor_compare_error) + "\n"
        super().__init__(self.message)


# -- canonical form: _jit_pass_canonicalize, _jit_pass_inline, _jit_pass_erase_shape_information --

_MANGLE = re.compile(r"___torch_mangle_[0-9]+\.")


def _erased(t):
    if type(t) is T.TensorType:
        return "Tensor"  # (str(T.TENSOR): most values, without the regex)
    return _MANGLE.sub("", str(T.erase_shape(t)))


def _comparable(graph):
    """What torch diffs: a canonical copy (every value renumbered in order, names kept), method
    calls inlined (module traces), shapes erased, class-type mangles stripped. Returns the text
    and (node, node text without indentation) pairs for the node diff."""
    from ._graph_copy import copy_graph
    from .inliner import inline
    g = copy_graph(graph)
    inline(g)
    text = format_graph(g, True, _erased)
    return text, [(n, format_node(n, True, "", _erased)) for n in g]


def _certainly_same(traced_graph, check_graph):
    """True when the two graphs' comparable texts are certainly equal and their tensor constants
    certainly compare equal, shown without building the inlined copies: inlining, peephole and
    constant pooling are deterministic functions of what the uninlined texts print, of the full
    types of tensor constants (pooling keys on them) and of their values. So equal texts of each
    graph and of each pair of callees reached by prim::CallMethod / CallFunction (the calls
    ``inline`` replaces), equal constant types and bytewise-equal constant values give equal
    comparable texts and passing constant comparisons. False means "not shown": the full
    comparison runs."""
    stack, seen = [(traced_graph, check_graph)], set()
    while stack:
        a, b = stack.pop()
        if (id(a), id(b)) in seen:
            continue
        seen.add((id(a), id(b)))
        if format_graph(a, True, _erased) != format_graph(b, True, _erased):
            return False
        for na, nb in zip(a, b):  # equal texts: the same nodes in the same order
            kind = na.kind_
            if kind == "prim::Constant":
                if na.attrs and na.attrs.get("value", ("",))[0] == "t" and not _same_constant(na, nb):
                    return False
            elif kind == "prim::CallMethod":
                stack.append((na.inputs_[0].type_.methods[na.s("name")],
                              nb.inputs_[0].type_.methods[nb.s("name")]))
            elif kind == "prim::CallFunction":
                stack.append((na.inputs_[0].type_.callee, nb.inputs_[0].type_.callee))
    return True


def _same_constant(na, nb):
    ta, tb = na.attrs["value"][1], nb.attrs["value"][1]
    if str(na.outputs_[0].type_) != str(nb.outputs_[0].type_) or ta.dtype is not tb.dtype:
        return False
    a, b = _host(ta), _host(tb)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _graph_diagnostics(traced_graph, check_graph):
    if _certainly_same(traced_graph, check_graph):
        return None, None
    mod_str, mod_nodes = _comparable(traced_graph)
    check_str, check_nodes = _comparable(check_graph)
    graph_diff_errors = None
    if mod_str != check_str:
        diff = difflib.ndiff(mod_str.splitlines(True), check_str.splitlines(True))
        graph_diff_errors = "Graph diff:\n" + indent("".join(diff)) + "\n"
        diverging = _first_diverging(mod_nodes, check_nodes)
        if diverging is not None:
            (n_mod, s_mod), (n_check, s_check) = diverging
            graph_diff_errors += "First diverging operator:\n"
            node_diff = difflib.ndiff(s_mod.splitlines(True), s_check.splitlines(True))
            printout = "Node diff:\n" + indent("".join(node_diff)) + "\n"
            if n_mod.sourceRange():
                printout += "Trace source location:\n" + indent(n_mod.sourceRange()) + "\n"
            if n_check.sourceRange():
                printout += "Check source location:\n" + indent(n_check.sourceRange()) + "\n"
            graph_diff_errors += printout
    tensor_errors = None
    for (n_mod, s_mod), (n_check, _) in zip(mod_nodes, check_nodes):
        if n_mod.kind_ != n_check.kind_:
            break
        if n_mod.kind_ == "prim::Constant" and n_mod.hasAttribute("value") and n_check.hasAttribute("value"):
            if n_mod.kindOf("value") != "t" or n_check.kindOf("value") != "t":
                continue
            try:
                assert_close(n_mod.t("value"), n_check.t("value"), equal_nan=True)
            except AssertionError as e:
                tensor_errors = "Node:\n" + indent(s_mod.rstrip("\n")) + "\n"
                if n_mod.sourceRange():
                    tensor_errors += "Source Location:\n" + indent(n_mod.sourceRange()) + "\n"
                tensor_errors += "Comparison exception: " + indent(str(e))
                break
    return graph_diff_errors, tensor_errors


def _first_diverging(mod_nodes, check_nodes):
    """The first pair of ((node, text), (node, text)) whose texts differ, or None."""
    for pair in zip(mod_nodes, check_nodes):
        if pair[0][1] != pair[1][1]:
            return pair
    return None


# -- assert_close (torch.testing), the part the checker uses ------------------------------------

_DEFAULT_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
                       "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def default_atol(*tensors):
    return max(_DEFAULT_TOLERANCES.get(t.dtype.name, (0.0, 0.0))[1] for t in tensors)


def _host(t):
    from reftrace_backends import get_backend
    return np.asarray(get_backend(t.device.type).to_host(t._array))


def assert_close(actual, expected, rtol=None, atol=None, equal_nan=False):
    """torch.testing.assert_close for two tensors, with its message for value mismatches."""
    if actual.shape_tuple != expected.shape_tuple:
        raise AssertionError(f"The values for attribute 'shape' do not match: "
                             f"torch.Size({list(actual.shape_tuple)}) != torch.Size({list(expected.shape_tuple)}).")
    if actual.dtype is not expected.dtype:
        raise AssertionError(f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
    if rtol is None:
        rtol = max(_DEFAULT_TOLERANCES.get(t.dtype.name, (0.0, 0.0))[0] for t in (actual, expected))
    if atol is None:
        atol = default_atol(actual, expected)
    a, e = _host(actual), _host(expected)
    if type(rtol) in (int, float) and type(atol) in (int, float) and rtol >= 0 and atol >= 0 \
            and bool((a == e).all()):
        return  # equal values are close (isclose's inf == inf included; a NaN takes the long way)
    a, e = a.astype(np.float64 if not actual.dtype.is_complex else np.complex128), \
        e.astype(np.float64 if not expected.dtype.is_complex else np.complex128)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    kind = "Scalars" if a.ndim == 0 else "Tensor-likes"
    total = a.size
    bad = int((~close).sum())
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        abs_diff = np.abs(a - e)
        rel_diff = abs_diff / np.abs(e)
    abs_diff = np.where(close, 0, abs_diff)
    rel_diff = np.where(close, 0, rel_diff)
    msg = f"{kind} are not close!\n\n"
    if a.ndim == 0:
        msg += (f"Expected {e.item()} but got {a.item()}.\n"
                f"Absolute difference: {abs_diff.item()} (up to {atol} allowed)\n"
                f"Relative difference: {rel_diff.item()} (up to {rtol} allowed)")
    else:
        ia = np.unravel_index(int(np.nanargmax(abs_diff)), a.shape)
        ir = np.unravel_index(int(np.nanargmax(rel_diff)), a.shape)
        msg += (f"Mismatched elements: {bad} / {total} ({bad / total * 100:.1f}%)\n"
                f"Greatest absolute difference: {abs_diff[ia]} at index {tuple(int(i) for i in ia)} (up to {atol} allowed)\n"
                f"Greatest relative difference: {rel_diff[ir]} at index {tuple(int(i) for i in ir)} (up to {rtol} allowed)")
    raise AssertionError(msg)


# -- the protocol ----------------------------------------------------------------------------------

def _clone_inputs(inputs):
    def clone(v):
        if isinstance(v, Tensor):
            c = v.detach().clone()
            c.requires_grad_(v.requires_grad)
            return c
        if isinstance(v, tuple):
            return tuple(clone(e) for e in v)
        if isinstance(v, list):
            return [clone(e) for e in v]
        if isinstance(v, dict):
            return {k: clone(e) for k, e in v.items()}
        if v is None:
            return v
        # torch.autograd.function._nested_map's refusal
        raise ValueError(f"Auto nesting doesn't know how to process an input object of type "
                         f"{_typename(v)}. Accepted types: tensors, or lists/tuples of them")
    return clone(inputs)


def _typename(v):
    """torch.typename for a non-tensor: the class's qualified name ('int', 'collections.OrderedDict')."""
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def check_trace(traced, func, check_inputs, check_tolerance, strict, force_outplace,
                example_inputs_is_kwarg=False):
    from ._trace import trace, _normalize_inputs
    rng_state = _save_rng()
    try:
        with no_grad():
            for inputs in check_inputs:
                if example_inputs_is_kwarg:  # keyword example inputs: re-traced and called with **
                    check_mod = trace(func, check_trace=False, strict=strict, _force_outplace=force_outplace,
                                      example_kwarg_inputs=_clone_inputs(inputs))
                    _check_one(traced, func, check_mod, inputs, check_tolerance, kwargs=True)
                    continue
                if isinstance(inputs, Tensor):
                    inputs = (inputs,)
                copied = _clone_inputs(inputs)  # torch clones first: a number fails here
                inputs = _normalize_inputs(inputs)
                check_mod = trace(func, copied, check_trace=False, strict=strict,
                                  _force_outplace=force_outplace)
                _check_one(traced, func, check_mod, inputs, check_tolerance)
    finally:
        _restore_rng(rng_state)


def _save_rng():
    try:
        from ..random import get_rng_state
    except ImportError:
        return None
    return get_rng_state()


def _restore_rng(state):
    if state is not None:
        from ..random import set_rng_state
        set_rng_state(state)


def check_module_trace(check_inputs, mod, module, method_name, check_tolerance, strict,
                       force_outplace, module_class, example_inputs_is_kwarg=False):
    """_check_trace for trace_module: each check input is a {method_name: inputs} dict."""
    from ._module_trace import CompilationUnit, trace_module
    from ._trace import _normalize_inputs
    rng_state = _save_rng()
    try:
        with no_grad():
            for inputs in check_inputs:
                copied = {name: _clone_inputs(data) for name, data in inputs.items()}
                check_mod = trace_module(mod, copied, check_trace=False, strict=strict,
                                         _force_outplace=force_outplace, _module_class=module_class,
                                         _compilation_unit=CompilationUnit(),
                                         example_inputs_is_kwarg=example_inputs_is_kwarg)
                func = mod if method_name == "forward" else getattr(mod, method_name)
                args = inputs[method_name]
                traced, check = module._get_method(method_name), check_mod._get_method(method_name)
                if example_inputs_is_kwarg:  # keyword example inputs: everything is called with **
                    _check_one(traced, func, check, args, check_tolerance, kwargs=True)
                else:
                    _check_one(traced, func, check, _normalize_inputs(args), check_tolerance)
    finally:
        _restore_rng(rng_state)


def _check_one(traced, func, check_mod, inputs, tol, kwargs=False):
    def run(mod, what):
        # a trace runs once here: through the interpreter, whose results the generated code
        # reproduces bit for bit (codegen.py), without compiling code for one call (the trace
        # compiles on its first call by the user; the re-trace is dropped)
        call = mod.run_interpreted if isinstance(mod, _traced_kinds()) else mod
        try:
            outs = call(**_clone_inputs(inputs)) if kwargs else call(*_clone_inputs(inputs))
        except Exception as e:
            diag = _graph_diagnostics(traced.graph, check_mod.graph)
            raise note_divergence(TracingCheckError(
                *diag, extra_msg=f"encountered an exception while running the {what} with test "
                f"inputs.\nException:\n{indent(str(e))}"), traced.graph, check_mod.graph) from e
        outs = outs if isinstance(outs, tuple) else (outs,)
        return [o for o in outs if isinstance(o, Tensor)]

    warned = [False]

    def warn_nondeterministic():
        if warned[0]:
            return
        warned[0] = True
        nodes = [n for n in traced.graph if n.isNondeterministic()]
        if nodes:
            msg = "Trace had nondeterministic nodes. Did you forget call .eval() on your model? Nodes:\n"
            msg += "\n".join([indent(format_node(n, True, "").rstrip("\n")) for n in nodes][:20])
            msg += ("\nThis may cause errors in trace checking. To disable trace checking, pass "
                    "check_trace=False to torch.jit.trace()")
            warnings.warn(msg, category=TracerWarning, stacklevel=5)

    def compare(original, reference, what):
        ok = True
        for i, (orig, ref) in enumerate(zip(original, reference)):
            try:
                o = orig.to(dtype=_cdouble()) if orig.dtype.is_complex or ref.dtype.is_complex else orig.double()
                r = ref.to(dtype=_cdouble()) if orig.dtype.is_complex or ref.dtype.is_complex else ref.double()
                atol = default_atol(orig, ref)
                _check_rtol(tol, o, r, atol)
                assert_close(o, r, rtol=tol, atol=atol, equal_nan=True)
            except AssertionError as e:
                warn_nondeterministic()
                message = (f"Output nr {i + 1}. of the traced function does not match the "
                           f"corresponding output of the {what}. Detailed error:\n{e}")
                warnings.warn(message, category=TracerWarning, stacklevel=4)
                note_mismatch(traced.graph, message)
                ok = False
        return ok

    traced_outs = run(traced, "trace")
    fn_outs = run(func, "Python function")
    if compare(traced_outs, fn_outs, "Python function"):
        compare(traced_outs, run(check_mod, "repeated trace"), "repeated trace")
    diag = _graph_diagnostics(traced.graph, check_mod.graph)
    if any(d is not None for d in diag):
        raise note_divergence(TracingCheckError(*diag), traced.graph, check_mod.graph)


def _traced_kinds():
    from ._module_trace import _Method
    from .traced import TracedFunction
    return (_Method, TracedFunction)


def _check_rtol(rtol, actual, expected, atol):
    """torch.isclose's checks of rtol (check_tolerance), raised as assert_close raises an
    unexpected exception: a RuntimeError 'Comparing <pair> resulted in the unexpected exception
    above', caused by isclose's own error."""
    if rtol is None:  # assert_close's own check, raised as it is
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got no rtol.")
    if isinstance(rtol, (int, float)) and not isinstance(rtol, bool):
        if rtol >= 0:  # False for nan, as in isclose's TORCH_CHECK
            return
        cause = RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    else:
        cause = TypeError(f"isclose(): argument 'rtol' must be float, not {type(rtol).__name__}")
    fields = [("id", "()"), ("actual", repr(actual)), ("expected", repr(expected)), ("rtol", rtol),
              ("atol", atol), ("equal_nan", True), ("check_device", True), ("check_dtype", True),
              ("check_layout", True), ("check_stride", False)]
    pair = "TensorLikePair(\n" + "".join(f"    {k}={v},\n" for k, v in fields) + ")"
    raise RuntimeError(
        f"Comparing\n\n{pair}\n\nresulted in the unexpected exception above. If you are a user and "
        "see this message during normal operation please file an issue at "
        "https://github.com/pytorch/pytorch/issues. If you are a developer and working on the "
        "comparison functions, please except the previous error and raise an expressive "
        "`ErrorMeta` instead.") from cause


def _cdouble():
    from .. import _dtype
    return _dtype.complex128
