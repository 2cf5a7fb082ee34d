"""Program files: a user's programs, run under one library and described as an Outcome.

The convention (README.md, "The conformance runner"): a program file is Python written against
the name ``torch``, which the runner binds (to real torch, then to reftrace) before executing the
file, so the file never imports torch. Each function named ``program_<name>`` is one program: it
takes no arguments and returns ``(fn, example_inputs)`` or ``(fn, example_inputs, trace_kwargs)``,
where ``fn`` is a function or an ``nn.Module`` instance. For example::

    class MLP(torch.nn.Module):
        ...

    def program_mlp():
        return MLP(), torch.randn(3, 4)

    def program_sizes():
        return (lambda x: x.view(x.size(0), -1)), torch.rand(2, 3, 4), {"check_trace": False}

A file written for ``python -m reftrace trace`` (``import reftrace as torch``, a ``model`` with
``EXAMPLE_INPUTS``, or any ``NAME`` with ``NAME_inputs``) is accepted too: its imports of
``reftrace`` (and of ``torch``) are bound to the library under test, and each traceable name is
one program, traced as the command line traces it (``NAME_check_inputs`` / ``CHECK_INPUTS`` as
``check_inputs``).

The runner calls ``torch.jit.trace(fn, example_inputs, **trace_kwargs)`` and calls the result on
the example inputs. The two libraries draw different random numbers, so the reftrace run gets
the torch run's input values and module parameters and buffers (as they were before tracing):
outputs are then comparable. Random draws inside ``fn`` itself (dropout) stay different.
"""
import builtins
import importlib
import warnings

import numpy as np

from .canon import canonical_graph
from .compare import Outcome, error_message, warning_texts

PREFIX = "program_"


def load(path, lib):
    """Execute the file with ``torch`` bound to ``lib``; its programs, in definition order."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    namespace = {"torch": lib, "__name__": "__conformance__", "__file__": path,
                 "__builtins__": _binding_imports(lib)}
    exec(compile(source, path, "exec"), namespace)
    found = {name: fn for name, fn in namespace.items() if name.startswith(PREFIX) and callable(fn)}
    return found or command_line_programs(namespace, lib)


def _binding_imports(lib):
    """Builtins whose ``__import__`` gives ``lib`` for ``reftrace`` and ``torch`` (and their
    submodules): a file written with ``import reftrace as torch`` runs under either library."""
    real_import = builtins.__import__

    def bound_import(name, globals=None, locals=None, fromlist=(), level=0):
        root, _, rest = name.partition(".")
        if level == 0 and root in ("reftrace", "torch"):
            if not rest or not fromlist:  # `import reftrace.nn as nn` binds through attributes
                return lib
            return importlib.import_module(f"{lib.__name__}.{rest}")
        return real_import(name, globals, locals, fromlist, level)

    return dict(vars(builtins), __import__=bound_import)


def command_line_programs(namespace, lib):
    """The programs of a file written for ``python -m reftrace trace``: ``model`` with
    ``EXAMPLE_INPUTS`` and every ``NAME`` with ``NAME_inputs``, as (fn, inputs, trace kwargs)."""
    found = {}
    for name, value in namespace.items():
        if name.endswith("_inputs") and not name.endswith(("_check_inputs", "_kwarg_inputs")):
            target = name[:-len("_inputs")]
            if target in namespace:
                found[target] = (target, name, f"{target}_check_inputs")
        elif name.endswith("_kwarg_inputs") and name[:-len("_kwarg_inputs")] in namespace:
            target = name[:-len("_kwarg_inputs")]
            found.setdefault(target, (target, None, f"{target}_check_inputs"))
    if "model" in namespace and "EXAMPLE_INPUTS" in namespace and "model" not in found:
        found["model"] = ("model", "EXAMPLE_INPUTS", "CHECK_INPUTS")

    def program(target, inputs_name, check_name):
        def build():
            fn = namespace[target]
            if isinstance(fn, type) and issubclass(fn, lib.nn.Module):
                fn = fn()
            kwargs = {}
            if namespace.get(check_name) is not None:
                kwargs["check_inputs"] = list(namespace[check_name])
            if namespace.get(f"{target}_kwarg_inputs") is not None:
                kwargs["example_kwarg_inputs"] = namespace[f"{target}_kwarg_inputs"]
            return fn, None if inputs_name is None else namespace[inputs_name], kwargs
        return build

    return {name: program(*spec) for name, spec in found.items()}


def _normalize(inputs):
    """As torch.jit.trace reads example inputs: a tuple is the arguments, anything else one
    argument (a top-level list is the arguments too)."""
    if isinstance(inputs, tuple):
        return inputs
    if isinstance(inputs, list):
        return tuple(inputs)
    return (inputs,)


def _host(t):
    return np.array(t.detach().cpu().numpy() if hasattr(t, "cpu") else t.detach().numpy())


def _is_tensor(lib, v):
    return isinstance(v, lib.Tensor)


def snapshot(lib, value):
    """The values of every tensor in ``value`` (nested tuples, lists, dicts), as NumPy copies."""
    if _is_tensor(lib, value):
        return _host(value)
    if isinstance(value, (tuple, list)):
        return type(value)(snapshot(lib, v) for v in value)
    if isinstance(value, dict):
        return {k: snapshot(lib, v) for k, v in value.items()}
    return value


def transplant(lib, ours, values):
    """``ours`` with each tensor's values replaced by the matching array of ``values`` (dtype
    and requires_grad kept): the torch run's inputs, fed to the reftrace run."""
    if _is_tensor(lib, ours) and isinstance(values, np.ndarray):
        t = lib.tensor(values).to(ours.dtype)
        return t.requires_grad_(ours.requires_grad) if t.dtype.is_floating_point else t
    if isinstance(ours, (tuple, list)) and isinstance(values, (tuple, list)) and len(ours) == len(values):
        return type(ours)(transplant(lib, o, v) for o, v in zip(ours, values))
    if isinstance(ours, dict) and isinstance(values, dict) and ours.keys() == values.keys():
        return {k: transplant(lib, ours[k], values[k]) for k in ours}
    return ours


def _module_of(lib, fn):
    if isinstance(fn, lib.nn.Module):
        return fn
    owner = getattr(fn, "__self__", None)
    return owner if isinstance(owner, lib.nn.Module) else None


def module_state(lib, fn):
    module = _module_of(lib, fn)
    return None if module is None else {k: _host(v) for k, v in module.state_dict().items()}


def load_state(lib, fn, state):
    module = _module_of(lib, fn)
    if module is None or state is None:
        return
    ours = module.state_dict()
    with lib.no_grad():
        for name, values in state.items():
            if name in ours and tuple(ours[name].shape) == values.shape:
                ours[name].copy_(lib.tensor(values).to(ours[name].dtype))


def describe_outputs(lib, out):
    """(text, kinds, arrays) of whatever the traced call returned, tensors flattened in order."""
    flat = []

    def walk(v):
        if isinstance(v, (tuple, list)):
            for e in v:
                walk(e)
        elif isinstance(v, dict):
            for e in v.values():
                walk(e)
        else:
            flat.append(v)
    walk(out)
    lines, kinds, arrays = [], [], []
    for i, v in enumerate(flat):
        if _is_tensor(lib, v):
            a = _host(v)
            kind = f"{str(v.dtype)} {tuple(v.shape)}"
            arrays.append(a)
            lines.append(f"output {i}: {kind}\n" + np.array2string(a, precision=6, threshold=64))
        else:
            kind = repr(v)
            lines.append(f"output {i}: {kind}")
        kinds.append(kind)
    return "\n".join(lines) + "\n", kinds, arrays


def run(lib, program, inputs_from=None):
    """Run one program under ``lib``: build it, trace it, call the trace on its inputs.

    ``inputs_from``: the (inputs, module state) snapshot of another run to use instead of this
    run's own random values. Returns (Outcome, snapshot of this run's inputs and state).
    """
    outcome, taken = Outcome(), None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stage = "building the program"
        try:
            lib.manual_seed(0)
            made = program()
            fn, inputs = made[0], made[1]
            kwargs = made[2] if len(made) > 2 else {}
            taken = (snapshot(lib, inputs), module_state(lib, fn))
            if inputs_from is not None:
                inputs = transplant(lib, inputs, inputs_from[0])
                load_state(lib, fn, inputs_from[1])
            stage = "tracing"
            traced = lib.jit.trace(fn, inputs, **kwargs)
            outcome.graph = canonical_graph(str(traced.graph))
            stage = "calling the trace"
            keywords = kwargs.get("example_kwarg_inputs")
            out = traced(**keywords) if inputs is None and keywords else traced(*_normalize(inputs))
            outcome.outputs, outcome.kinds, outcome.arrays = describe_outputs(lib, out)
        except Exception as e:  # an error is part of the outcome: both libraries should agree
            outcome.error = f"{stage}: {error_message(e)}"
    outcome.warnings = warning_texts(caught)
    return outcome, taken
