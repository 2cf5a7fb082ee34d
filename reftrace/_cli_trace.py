"""``reftrace trace FILE[:NAME]``: trace, check, and report as text or as one JSON document.

The work (load the file, trace with the options torch.jit.trace takes, re-trace for the graph
when the checker refused it) is done once into a ``TraceReport``; ``render_text`` and
``render_json`` only print it, so both formats say the same thing. The file convention and the
exit status are described in ``__main__.py``.
"""
import json
import os
import sys
import traceback
import warnings

# the checker's own warnings (torch's words): either means the trace does not match Python
CHECKER_WARNINGS = ("Output nr ", "Trace had nondeterministic nodes")


class TraceReport:
    """What one ``trace`` run found: the trace (or None), its warnings, its error, its verdict."""

    def __init__(self, target, path, name):
        self.target, self.path, self.name = target, path, name
        self.traced = None
        self.warnings = []       # [(category, message, filename, lineno, count)]
        self.error = None        # an exception that stopped tracing (not the checker's)
        self.check_error = None  # the checker's TracingCheckError
        self.check = True
        self.check_inputs = None
        self.check_runs = 1
        self.mismatch = False
        self.saved = None
        self.example = None      # a clone of the example inputs (the deep check runs on them)
        self.insight_ok = True   # False when --deep-check found a difference

    @property
    def is_module(self):
        import reftrace
        return isinstance(self.target, reftrace.nn.Module)

    @property
    def verdict(self):
        """ok | failed (the checker: graphs differ) | mismatch (outputs differ) | skipped | error"""
        if self.error is not None:
            return "error"
        if not self.check:
            return "skipped"
        if self.check_error is not None:
            return "failed"
        return "mismatch" if self.mismatch else "ok"

    @property
    def exit_code(self):
        return 0 if self.verdict in ("ok", "skipped") and self.insight_ok else 1


def _clone(value):
    import reftrace
    if isinstance(value, reftrace.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (tuple, list)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _distinct_warnings(caught):
    """Each distinct warning once (the checker re-traces, so tracing warnings come twice)."""
    counts = {}
    for w in caught:
        if not issubclass(w.category, DeprecationWarning):
            key = (w.category.__name__, str(w.message), w.filename, w.lineno)
            counts[key] = counts.get(key, 0) + 1
    return [key + (n,) for key, n in counts.items()]


def run_trace(args):
    """Load ``args.target`` and trace it as the options say; a TraceReport (UsageError raised)."""
    import reftrace
    from reftrace.jit import TracingCheckError
    from ._cli_program import load_file, resolve
    path, _, name = args.target.rpartition(":") if ":" in args.target else (args.target, "", "")
    if not path or (name and not name.isidentifier()):  # 'C:\\x.py' or 'file.py' alone
        path, name = args.target, ""
    name = name or "model"
    reftrace.manual_seed(args.seed)
    module = load_file(path)
    target, inputs, check_inputs, kwarg_inputs = resolve(module, path, name)
    report = TraceReport(target, path, name)
    report.check = not args.no_check
    report.check_inputs = check_inputs
    report.check_runs = len(check_inputs) if check_inputs else 1
    options = dict(check_trace=report.check, check_inputs=check_inputs, strict=not args.no_strict,
                   _force_outplace=args.force_outplace, example_kwarg_inputs=kwarg_inputs)
    if args.check_tolerance is not None:
        options["check_tolerance"] = args.check_tolerance

    # the checker may raise before a trace exists: keep what we need to re-trace for the graph
    rng, example, example_kwargs = reftrace.get_rng_state(), _clone(inputs), _clone(kwarg_inputs)
    report.example = _clone(inputs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            report.traced = reftrace.jit.trace(target, inputs, **options)
        except TracingCheckError as e:
            report.check_error = e
        except Exception as e:  # the traceback shows where: the user's line or a reftrace bug
            report.error = e
    report.warnings = _distinct_warnings(caught)
    report.mismatch = any(str(w.message).startswith(CHECKER_WARNINGS) for w in caught)
    if report.check_error is not None:  # the graph of the example inputs, for the reader
        reftrace.set_rng_state(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report.traced = reftrace.jit.trace(target, example, **dict(
                options, check_trace=False, check_inputs=None, example_kwarg_inputs=example_kwargs))
    if report.traced is not None and args.save:
        reftrace.jit.save(report.traced, args.save)
        report.saved = args.save
    return report


def _shown_graph(report, args):
    traced = report.traced
    return traced.inlined_graph if report.is_module and not args.no_inline else traced.graph


# -- text -------------------------------------------------------------------------------------

def _print_warnings(report, out):
    if not report.warnings:
        print("\nwarnings: none", file=out)
        return
    print(f"\nwarnings ({len(report.warnings)}):", file=out)
    for i, (category, message, filename, lineno, n) in enumerate(report.warnings, 1):
        where = f"{os.path.relpath(filename)}:{lineno}" if filename else "?"
        times = f" ({n} times: the checker re-traces)" if n > 1 else ""
        print(f"  {i}. {category} at {where}{times}", file=out)
        for line in message.splitlines():
            print(f"       {line}".rstrip(), file=out)


def render_text(report, args, out):
    what = f"{type(report.target).__name__}, an nn.Module" if report.is_module else "a function"
    runs = f", {report.check_runs} check input(s)" if report.check and report.check_inputs else ""
    print(f"tracing {report.path}:{report.name} ({what}), check_trace={report.check}{runs}", file=out)
    if report.error is not None:
        print("\ntracing failed:\n" + "".join(traceback.format_exception(report.error)).rstrip(),
              file=out)
        _print_warnings(report, out)
        return
    graph = _shown_graph(report, args)
    inlined = graph is not report.traced.graph
    print("\ngraph" + (" (submodule calls inlined; --no-inline for traced.graph)" if inlined else "")
          + ":", file=out)
    print(graph.str(args.source_locations).rstrip("\n"), file=out)
    if args.tabular:
        print("\ntable:", file=out)
        print(graph.tabular(), file=out)
    if args.summary:
        print("\nsummary:", file=out)
        print(graph.summary().format(), file=out)
    _print_warnings(report, out)
    from ._cli_insight import trace_sections  # --specializations, --deep-check
    report.insight_ok = trace_sections(args, report.traced, report.check_error,
                                       report.check_inputs or [report.example], out)
    if report.saved:
        print(f"\nsaved: {report.saved} (load it with torch.jit.load or python -m reftrace run)",
              file=out)
    verdict = report.verdict
    if verdict == "skipped":
        print("\ncheck: skipped (--no-check)", file=out)
    elif verdict == "failed":
        print("\ncheck: FAILED: the trace does not generalise (TracingCheckError)", file=out)
        print("\n".join("  " + line for line in str(report.check_error).rstrip("\n").splitlines()),
              file=out)
    elif verdict == "mismatch":
        print("\ncheck: MISMATCH: the trace's outputs differ from the Python function's "
              "(see the warnings above)", file=out)
    else:
        print(f"\ncheck: ok (re-traced on {report.check_runs} input set(s): same graph, same "
              "outputs as Python)", file=out)


# -- JSON -------------------------------------------------------------------------------------

def json_document(report, args):
    """Everything a script needs, in one JSON-serialisable dict (the keys are stable)."""
    doc = {"reftrace": _version(), "target": f"{report.path}:{report.name}",
           "kind": "module" if report.is_module else "function", "check_trace": report.check,
           "verdict": report.verdict, "exit_code": report.exit_code,
           "graph": None, "inlined_graph": None, "code": None, "summary": None,
           "warnings": [{"category": c, "message": m, "file": f, "line": line, "count": n}
                        for c, m, f, line, n in report.warnings],
           "error": None, "check_error": None, "saved": report.saved}
    if report.error is not None:
        e = report.error
        doc["error"] = {"type": type(e).__name__, "message": str(e),
                        "traceback": "".join(traceback.format_exception(e))}
    if report.check_error is not None:
        doc["check_error"] = str(report.check_error)
    if report.traced is not None:
        traced = report.traced
        doc["graph"] = traced.graph.str(args.source_locations)
        doc["inlined_graph"] = traced.inlined_graph.str(args.source_locations) if report.is_module else None
        doc["code"] = traced.code
        doc["summary"] = _shown_graph(report, args).summary().as_dict()
    if getattr(args, "specializations", False):  # the records of spec/specializations.md
        found = getattr(report.check_error, "specializations", None)
        if found is None and report.traced is not None:
            found = report.traced.specializations()
        doc["specializations"] = [dict(kind=s.kind, file=s.file, line=s.line, value=repr(s.value),
                                       message=s.message, fix=s.fix, origin=s.origin)
                                  for s in found or ()]
    return doc


def render_json(report, args, out):
    json.dump(json_document(report, args), out, indent=2)
    out.write("\n")


def usage_error_document(message):
    return {"reftrace": _version(), "verdict": "usage-error", "exit_code": 2, "error":
            {"type": "UsageError", "message": message, "traceback": ""}}


def _version():
    from . import __version__
    return __version__


def trace_command(args, out=None):
    out = out or sys.stdout
    report = run_trace(args)
    problem = None
    if args.draw and report.traced is not None:
        from .jit._dot import DrawError, write_picture
        try:
            write_picture(_shown_graph(report, args), args.draw)
        except DrawError as e:  # the trace is still reported; the exit status says what failed
            problem = str(e)
    (render_json if args.format == "json" else render_text)(report, args, out)
    if problem:
        print(f"reftrace trace: --draw: {problem}", file=sys.stderr)
        return 1
    return report.exit_code
