"""``python -m reftrace trace --specializations / --deep-check``: the report of what the trace
baked in and the deep checker's verdict, as sections of the trace command's output
(spec/specializations.md). Kept apart from __main__.py, which only calls in here."""


def add_trace_options(parser):
    parser.add_argument("--specializations", action="store_true",
                        help="list every value the trace baked in from data or shape (len(x), "
                             "t.item(), a branch on a tensor ...), with its line and the fix")
    parser.add_argument("--deep-check", action="store_true",
                        help="compare every output leaf (nested tuples, lists, dicts) with the "
                             "Python function on each check input, and name the first graph node "
                             "where they differ")


def trace_sections(args, traced, error, check_inputs, out):
    """Print the requested sections; False when the deep check found a difference."""
    ok = True
    if getattr(args, "specializations", False):
        # when the checker failed, its error holds the report with what it detected
        report = getattr(error, "specializations", None)
        if report is None:
            report = traced.specializations()
        print("\nspecializations: " + _indented(report.format()), file=out)
    if getattr(args, "deep_check", False):
        import reftrace
        for i, inputs in enumerate(check_inputs, 1):
            report = reftrace.jit.check(traced, inputs)
            if not report.ok:
                print(f"\ndeep check: FAILED on check input {i}: " + _indented(report.format()), file=out)
                return False
        print(f"\ndeep check: ok (every output leaf matches Python on {len(check_inputs)} input set(s))",
              file=out)
    return ok


def _indented(text):
    first, *rest = text.splitlines()
    return "\n".join([first] + ["  " + line for line in rest])
