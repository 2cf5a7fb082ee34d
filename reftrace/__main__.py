"""``python -m reftrace``: trace and check a program from the command line; run the conformance suite.

    python -m reftrace trace examples/mlp.py            # trace `model` on EXAMPLE_INPUTS, check it
    python -m reftrace trace examples/control_flow.py:loop
    python -m reftrace trace examples/mlp.py --save mlp.pt  # ... and save it (torch.jit.save's format)
    python -m reftrace run mlp.pt [--inputs x.npz]        # load an archive without torch (_cli_run.py)
    python -m reftrace conformance [PATHS]              # = python -m reftrace.conformance

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
import importlib.machinery
import importlib.util
import os
import sys
import traceback
import warnings

# the checker's own warnings (torch's words): either means the trace does not match Python
CHECKER_WARNINGS = ("Output nr ", "Trace had nondeterministic nodes")


class UsageError(Exception):
    pass


def load_file(path):
    """Import ``path`` as a module named after the file (its directory importable, as for a script)."""
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory, not a Python file")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    name = os.path.splitext(os.path.basename(path))[0]
    # any file name: the source loader is named, so that 'model.txt' loads too
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module


def resolve(module, path, name):
    """(what to trace, example inputs, check inputs or None), by the file convention."""
    import reftrace
    if not hasattr(module, name):
        found = [k for k, v in vars(module).items() if not k.startswith("_") and
                 (callable(v) or isinstance(v, reftrace.nn.Module)) and
                 getattr(v, "__module__", module.__name__) == module.__name__]
        raise UsageError(f"{path} defines no `{name}`; name one with {path}:NAME"
                         + (f" (candidates: {', '.join(found)})" if found else ""))
    target = getattr(module, name)
    if isinstance(target, type) and issubclass(target, reftrace.nn.Module):
        try:
            target = target()
        except TypeError as e:  # a constructor that needs arguments: say what to do
            raise UsageError(f"{path}:{name} is an nn.Module class that cannot be built without "
                             f"arguments ({e}); define an instance (e.g. `{name.lower()} = "
                             f"{name}(...)`) and trace {path}:{name.lower()}") from None
    elif not callable(target):
        raise UsageError(f"{path}:{name} is a {type(target).__name__}, not a function or nn.Module")
    for inputs_name in (f"{name}_inputs", "EXAMPLE_INPUTS"):
        if hasattr(module, inputs_name):
            inputs = getattr(module, inputs_name)
            break
    else:
        raise UsageError(f"{path} defines neither `{name}_inputs` nor `EXAMPLE_INPUTS` "
                         f"(the example inputs to trace `{name}` with)")
    check_name = f"{name}_check_inputs"
    check = getattr(module, check_name, None)
    if check is None and inputs_name == "EXAMPLE_INPUTS":
        check_name, check = "CHECK_INPUTS", getattr(module, "CHECK_INPUTS", None)
    if check is not None:
        if not isinstance(check, (list, tuple)):  # a number, a generator ...: not a list of inputs
            raise UsageError(f"{path}: {check_name} must be a list of argument tuples, "
                             f"not {type(check).__name__}")
        check = list(check)
    _check_torch_import(module, path)
    return target, inputs, check


def _check_torch_import(module, path):
    """A file written with `import torch` hands reftrace torch tensors, which the tracer cannot
    type; say what to change instead of 'Tracer cannot infer type of (tensor(1.), ...)'."""
    torch = sys.modules.get("torch")
    if torch is None or getattr(torch, "__name__", "") != "torch" or vars(module).get("torch") is not torch:
        return
    raise UsageError(f"{path} imports torch; python -m reftrace traces programs written against "
                     "reftrace: write `import reftrace as torch` instead of `import torch`")


def _clone(value):
    import reftrace
    if isinstance(value, reftrace.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    if isinstance(value, (tuple, list)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _describe(target):
    import reftrace
    if isinstance(target, reftrace.nn.Module):
        return f"{type(target).__name__}, an nn.Module"
    return "a function"


def _print_warnings(caught, out):
    """Each distinct warning once (the checker re-traces, so tracing warnings come twice), with
    where it was raised and how often."""
    counts = {}
    for w in caught:
        if not issubclass(w.category, DeprecationWarning):
            key = (w.category.__name__, str(w.message), w.filename, w.lineno)
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        print("\nwarnings: none", file=out)
        return
    print(f"\nwarnings ({len(counts)}):", file=out)
    for i, ((category, message, filename, lineno), n) in enumerate(counts.items(), 1):
        where = f"{os.path.relpath(filename)}:{lineno}" if filename else "?"
        times = f" ({n} times: the checker re-traces)" if n > 1 else ""
        print(f"  {i}. {category} at {where}{times}", file=out)
        for line in message.splitlines():
            print(f"       {line}".rstrip(), file=out)


def trace_command(args, out=sys.stdout):
    import reftrace
    from reftrace.jit import TracingCheckError
    path, _, name = args.target.rpartition(":") if ":" in args.target else (args.target, "", "")
    if not path or (name and not name.isidentifier()):  # 'C:\\x.py' or 'file.py' alone
        path, name = args.target, ""
    name = name or "model"
    reftrace.manual_seed(args.seed)
    module = load_file(path)
    target, inputs, check_inputs = resolve(module, path, name)
    check = not args.no_check
    print(f"tracing {path}:{name} ({_describe(target)}), "
          f"check_trace={check}" + (f", {len(check_inputs)} check input(s)" if check and check_inputs else ""),
          file=out)

    # the checker may raise before a trace exists: keep what we need to re-trace for the graph
    rng, example = reftrace.get_rng_state(), _clone(inputs)
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            traced = reftrace.jit.trace(target, inputs, check_trace=check, check_inputs=check_inputs)
        except TracingCheckError as e:
            error = e
        except Exception as e:  # the traceback shows where: the user's line or a reftrace bug
            print("\ntracing failed:\n" + "".join(traceback.format_exception(e)).rstrip(), file=out)
            _print_warnings(caught, out)
            return 1
    if error is not None:  # the graph of the example inputs, for the reader: trace once more
        reftrace.set_rng_state(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            traced = reftrace.jit.trace(target, example, check_trace=False)

    is_module = isinstance(target, reftrace.nn.Module)
    graph = traced.inlined_graph if is_module and not args.no_inline else traced.graph
    print("\ngraph" + (" (submodule calls inlined; --no-inline for traced.graph)" if graph is not traced.graph else "")
          + ":", file=out)
    print(graph.str(args.source_locations).rstrip("\n"), file=out)
    _print_warnings(caught, out)
    from ._cli_insight import trace_sections  # --specializations, --deep-check
    insight_ok = trace_sections(args, traced, error, check_inputs or [_clone(example)], out)

    if args.save:  # the trace of the example inputs, as torch.jit.save writes it
        reftrace.jit.save(traced, args.save)
        print(f"\nsaved: {args.save} (load it with torch.jit.load or python -m reftrace run)", file=out)

    mismatches = [w for w in caught if str(w.message).startswith(CHECKER_WARNINGS)]
    if not check:
        print("\ncheck: skipped (--no-check)", file=out)
        return 0
    if error is not None:
        print("\ncheck: FAILED: the trace does not generalise (TracingCheckError)", file=out)
        print("\n".join("  " + line for line in str(error).rstrip("\n").splitlines()), file=out)
        return 1
    if mismatches:
        print("\ncheck: MISMATCH: the trace's outputs differ from the Python function's "
              "(see the warnings above)", file=out)
        return 1
    runs = len(check_inputs) if check_inputs else 1
    print(f"\ncheck: ok (re-traced on {runs} input set(s): same graph, same outputs as Python)",
          file=out)
    return 0 if insight_ok else 1


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
    from ._cli_insight import add_trace_options
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
        print(f"python -m reftrace trace: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
