"""``python -m reftrace run ARCHIVE.pt``: load a TorchScript archive (written by torch.jit.save or
reftrace.jit.save) without torch, and show it or run it.

    python -m reftrace run model.pt                          # the loaded module, code and graph
    python -m reftrace run model.pt --inputs inputs.npz      # run forward, print the outputs
    python -m reftrace run model.pt --inputs x.pt --out y.pt # ... and save them (torch.save format)

Inputs are data, never code: an ``.npz`` file (``numpy.savez(f, x, y)``: the arrays in order,
one per argument), or a ``.pt`` file written by ``torch.save`` / ``reftrace.save`` of a tensor or
a tuple/list of arguments (read with the weights-only reader).
Exit status 0: loaded (and ran); 1: the archive could not be loaded or the run failed; 2: usage.
"""
import sys
import traceback


def add_parser(sub):
    r = sub.add_parser(
        "run", help="load a TorchScript archive without torch; print it or run it on inputs",
        description="Load ARCHIVE (torch.jit.save or reftrace.jit.save of a traced function or "
                    "module) with reftrace.jit.load. Without --inputs, print the loaded module, "
                    "its code and its graph; with --inputs, run forward and print the outputs.")
    r.add_argument("archive", metavar="ARCHIVE.pt")
    r.add_argument("--inputs", metavar="FILE",
                   help="the arguments: FILE.npz (numpy.savez of one array per argument) or "
                        "FILE.pt (torch.save of a tensor or a tuple of arguments)")
    r.add_argument("--out", metavar="OUT.pt", help="save the outputs there (torch.save format)")
    r.add_argument("--inlined", action="store_true",
                   help="print the inlined graph (submodule calls replaced by their bodies)")
    return r


def read_inputs(path):
    """The arguments stored in ``path`` (a tuple)."""
    import numpy as np
    import reftrace
    if path.endswith(".npz"):
        with np.load(path, allow_pickle=False) as arrays:
            names = sorted(arrays.files, key=lambda n: int(n.rsplit("_", 1)[-1]) if n.startswith("arr_") else -1)
            return tuple(reftrace.from_numpy(np.array(arrays[n])) for n in names)
    value = reftrace.load(path)
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,)


def _describe(value, indent="  "):
    import reftrace
    if isinstance(value, reftrace.Tensor):
        return (f"{indent}Tensor {tuple(value.shape)} {value.dtype}\n" +
                "\n".join(indent + "  " + line for line in repr(value).splitlines()))
    if isinstance(value, (tuple, list)):
        return "\n".join(_describe(v, indent) for v in value)
    if isinstance(value, dict):
        return "\n".join(f"{indent}{k!r}:\n" + _describe(v, indent + "  ") for k, v in value.items())
    return f"{indent}{value!r}"


def run_command(args, out=sys.stdout):
    import reftrace
    try:
        module = reftrace.jit.load(args.archive)
    except (RuntimeError, OSError) as e:
        print(f"loading {args.archive} failed: {e}", file=out)
        return 1
    print(f"loaded {args.archive}: {module.original_name} ({module._type.qualified_name})", file=out)
    if args.inputs is None:
        print("\n" + repr(module), file=out)
        print("\ncode:\n" + module.code.rstrip("\n"), file=out)
        graph = module.inlined_graph if args.inlined else module.graph
        print("\ngraph" + (" (inlined)" if args.inlined else "") + ":", file=out)
        print(graph.str(False).rstrip("\n"), file=out)
        return 0
    try:
        inputs = read_inputs(args.inputs)
    except (RuntimeError, OSError, ValueError) as e:
        print(f"reading inputs from {args.inputs} failed: {e}", file=out)
        return 1
    try:
        outputs = module(*inputs)
    except Exception as e:  # the traceback shows where: the loaded graph's generated code
        print("\nrunning forward failed:\n" + "".join(traceback.format_exception(e)).rstrip(), file=out)
        return 1
    print(f"\nforward on {len(inputs)} argument(s) from {args.inputs}:", file=out)
    print(_describe(outputs), file=out)
    if args.out:
        reftrace.save(outputs, args.out)
        print(f"\noutputs saved to {args.out}", file=out)
    return 0
