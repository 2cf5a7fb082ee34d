"""The program-file convention of ``reftrace trace FILE[:NAME]`` (described in ``__main__.py``):
load the file, find what to trace and its example, keyword and check inputs."""
import importlib.machinery
import importlib.util
import os
import sys


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
    except ModuleNotFoundError as e:  # a torch program on a machine without torch
        if e.name == "torch" or (e.name or "").startswith("torch."):
            raise UsageError(f"{path} imports {e.name}, which is not installed: reftrace traces "
                             "programs written against reftrace; write `import reftrace as "
                             "torch` instead of `import torch`") from None
        raise
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
    kwarg_inputs = getattr(module, f"{name}_kwarg_inputs", None)
    if kwarg_inputs is not None and not isinstance(kwarg_inputs, dict):
        raise UsageError(f"{path}: {name}_kwarg_inputs must be a dict of keyword arguments, "
                         f"not {type(kwarg_inputs).__name__}")
    for inputs_name in (f"{name}_inputs", "EXAMPLE_INPUTS"):
        if hasattr(module, inputs_name):
            inputs = getattr(module, inputs_name)
            break
    else:
        if kwarg_inputs is None:
            raise UsageError(f"{path} defines neither `{name}_inputs` nor `EXAMPLE_INPUTS` "
                             f"(the example inputs to trace `{name}` with), nor "
                             f"`{name}_kwarg_inputs` (keyword inputs)")
        inputs, inputs_name = None, f"{name}_kwarg_inputs"
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
    return target, inputs, check, kwarg_inputs


def _from_torch(value):
    """Whether ``value`` is real torch, one of its modules, or a class (or an instance of a class)
    defined by it or derived from one (``class Net(torch.nn.Module)``). A class counts only if
    torch's module really holds it: reftrace's own ``FloatTensor`` says ``__module__ = "torch"``."""
    if type(value).__name__ == "module":
        return value.__name__ == "torch" or value.__name__.startswith("torch.")
    owner = value if isinstance(value, type) else type(value)
    for cls in getattr(owner, "__mro__", ()):
        where = getattr(cls, "__module__", "") or ""
        if (where == "torch" or where.startswith("torch.")) and \
                getattr(sys.modules.get(where), cls.__name__, None) is cls:
            return True
    return False


def _check_torch_import(module, path):
    """A file written with `import torch` (or `from torch import nn`) builds torch objects, which
    reftrace's tracer never sees: a module made of torch layers records nothing, torch tensors
    cannot be typed. Say what to change instead of failing deep inside the tracer."""
    if "torch" not in sys.modules:
        return
    used = sorted(k for k, v in vars(module).items() if not k.startswith("__") and _from_torch(v))
    if used:
        raise UsageError(f"{path} imports torch ({', '.join(used)} come from torch, not reftrace): "
                         "reftrace traces programs written against reftrace; write `import "
                         "reftrace as torch` instead of `import torch`")
