"""``python -m reftrace``: trace and check a program from the command line; run the conformance suite.

    python -m reftrace trace examples/mlp.py            # trace `model` on EXAMPLE_INPUTS, check it
    python -m reftrace trace examples/control_flow.py:loop
    python -m reftrace trace examples/mlp.py --save mlp.pt  # ... and save it (torch.jit.save's format)
    python -m reftrace run mlp.pt [--inputs x.npz]        # load an archive without torch (_cli_run.py)
    python -m reftrace conformance [PATHS]              # = python -m reftrace.conformance
    python -m reftrace trace examples/mlp.py --format json --draw mlp.dot --summary

``reftrace`` (the console script setup.cfg installs) is the same command.

The file convention for ``trace FILE[:NAME]`` (README.md, "The command line"): the file is
ordinary Python written against ``import reftrace as torch``. ``NAME`` (default ``model``) is a
function, an ``nn.Module`` instance, or an ``nn.Module`` class (instantiated with no arguments).
Its example inputs are ``NAME_inputs`` if the file defines it, else ``EXAMPLE_INPUTS``: a tensor
or a tuple of arguments, as ``torch.jit.trace`` takes them. Optional check inputs (a list of
argument tuples) are ``NAME_check_inputs`` or ``CHECK_INPUTS``.

Exit status: 0 when the trace is clean (the checker passed), 1 when tracing failed or the checker
found a problem (TracingCheckError, or outputs that do not match), 2 for a usage error.
"""
import argparse
import sys

from ._cli_program import UsageError  # the file convention lives there


def trace_command(args, out=sys.stdout):
    from ._cli_trace import trace_command as run
    return run(args, out)


def version():
    """The installed distribution's version (the package's own when run from a checkout)."""
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version
        return dist_version("reftrace")
    except (ImportError, PackageNotFoundError):
        from reftrace import __version__
        return __version__


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m reftrace",
        description="reftrace: a torch-free reference implementation of torch.jit.trace "
                    "(PyTorch 2.13). Trace and check a program, or compare reftrace with torch.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  python -m reftrace trace examples/mlp.py              trace and check an MLP\n"
               "  python -m reftrace trace examples/control_flow.py     the checker catches a branch\n"
               "  python -m reftrace trace --help                       the file convention\n"
               "  python -m reftrace trace examples/mlp.py --save m.pt  ... and save the trace\n"
               "  python -m reftrace run m.pt                           load it without torch\n"
               "  python -m reftrace conformance                        spec/ under torch and reftrace\n"
               "  python -m reftrace conformance examples/programs.py   your programs, diffed")
    parser.add_argument("--version", action="version",
                        version=f"reftrace {version()} (the tracer of PyTorch 2.13)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = sub.add_parser(
        "trace", help="trace a function or nn.Module from a file, check it, print the graph",
        description="Trace NAME from FILE with checking on (torch.jit.trace's check_trace=True) "
                    "and print the graph, the warnings and the checker's verdict.",
        epilog="FILE is Python written against `import reftrace as torch`. NAME (default: model) "
               "is a function, an nn.Module instance or an nn.Module class. Example inputs: "
               "NAME_inputs, else EXAMPLE_INPUTS (a tensor or a tuple of arguments). Check "
               "inputs (optional, a list of argument tuples): NAME_check_inputs, else "
               "CHECK_INPUTS. Exit status 0: clean trace; 1: tracing or checking failed; "
               "2: usage error. Example: python -m reftrace trace examples/mlp.py")
    t.add_argument("target", metavar="FILE[:NAME]")
    t.add_argument("--no-check", action="store_true", help="trace with check_trace=False")
    t.add_argument("--no-inline", action="store_true",
                   help="for a module, print traced.graph (with prim::CallMethod) instead of "
                        "the inlined graph")
    t.add_argument("--source-locations", action="store_true",
                   help="print each node's source location (# file:line:col)")
    t.add_argument("--seed", type=int, default=0,
                   help="random seed set before FILE is loaded (default 0)")
    t.add_argument("--save", metavar="OUT.pt",
                   help="save the trace as a TorchScript archive (torch.jit.load reads it)")
    # what torch.jit.trace takes that the file convention cannot say
    t.add_argument("--no-strict", action="store_true",
                   help="trace with strict=False (mutable outputs such as lists and dicts allowed)")
    t.add_argument("--force-outplace", action="store_true",
                   help="trace with _force_outplace=True (in-place ops recorded out of place)")
    t.add_argument("--check-tolerance", type=float, metavar="TOL",
                   help="the checker's tolerance (torch.jit.trace's check_tolerance, default 1e-5)")
    t.add_argument("--format", choices=("text", "json"), default="text",
                   help="json: one JSON document (graph, inlined graph, code, warnings, errors, "
                        "summary, verdict) on stdout, for scripts")
    t.add_argument("--draw", metavar="OUT.dot|OUT.svg|OUT.png",
                   help="draw the graph with Graphviz (.dot is written directly; .svg and .png "
                        "run Graphviz's `dot`)")
    t.add_argument("--tabular", action="store_true",
                   help="also print the graph as a table (torch.fx's print_tabular, with shapes)")
    t.add_argument("--summary", action="store_true",
                   help="also print a summary: ops by kind, parameters, constants, size-dependent nodes")
    from ._cli_insight import add_trace_options  # --specializations, --deep-check
    add_trace_options(t)
    from ._cli_run import add_parser as add_run_parser
    add_run_parser(sub)

    c = sub.add_parser("conformance", add_help=False,
                       help="run programs under torch and reftrace and diff them "
                            "(python -m reftrace conformance --help)")
    c.add_argument("rest", nargs=argparse.REMAINDER)

    sub.add_parser("coverage", add_help=False,
                   help="which torch names reftrace implements (python -m reftrace coverage --help)")
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["conformance"]:  # everything after it is the runner's own command line
        from reftrace.conformance.runner import main as conformance_main
        return conformance_main(argv[1:], prog="python -m reftrace conformance")
    if argv[:1] == ["coverage"]:  # reftrace/_coverage.py has its own options
        from reftrace._coverage import main as coverage_main
        return coverage_main(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "run":
        from ._cli_run import run_command
        return run_command(args)
    try:
        return trace_command(args)
    except UsageError as e:
        if args.format == "json":  # a script reading stdout still gets a document
            import json
            from ._cli_trace import usage_error_document
            print(json.dumps(usage_error_document(str(e)), indent=2))
        print(f"python -m reftrace trace: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
