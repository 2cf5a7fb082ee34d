"""Every traced program of the suite (tests/tracer_cases.py, module_cases.py, code_cases.py) and
of examples/, built under one library, for save/load round trips (tests/test_jit_load.py, tests/gen_load_golden.py).

``programs(lib)`` yields ``(name, traced, inputs)``: the program traced by ``lib`` (torch or
reftrace) and its example inputs as NumPy arrays (nested as the arguments are), so that the same
values can be given to a module loaded by either library (``to_lib``).
"""
import os
import re
import warnings

import numpy as np

import code_cases as CC
import module_cases as MC
import tracer_cases as TC

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")

# example files written against `import reftrace as torch`, with the names they trace
EXAMPLE_FILES = {"mlp.py": ["model"], "lenet.py": ["model"], "attention.py": ["model"],
                 "control_flow.py": ["model", "loop"]}


# programs reftrace cannot load: the out= overload of add is not in reftrace's op table (the
# loader names it: "no overload of aten::add matches the arguments (Tensor, Tensor, out=Tensor)")
UNLOADABLE = {"out_argument"}
# programs whose outputs are random (dropout in training mode): compared by code and graph only
RANDOM = {"code_dropout_train", "code_module_train_mode_layers"}


def to_numpy(v):
    if hasattr(v, "detach"):
        return np.array(v.detach().numpy())
    if isinstance(v, (tuple, list)):
        return type(v)(to_numpy(e) for e in v)
    if isinstance(v, dict):
        return {k: to_numpy(e) for k, e in v.items()}
    return v


def to_lib(lib, v):
    """NumPy arrays (nested) -> tensors of ``lib``; fresh tensors on every call."""
    if isinstance(v, np.ndarray):
        return lib.from_numpy(v.copy())
    if isinstance(v, (tuple, list)):
        return type(v)(to_lib(lib, e) for e in v)
    if isinstance(v, dict):
        return {k: to_lib(lib, e) for k, e in v.items()}
    return v


def _example_namespace(lib, filename):
    """Run an example file with its `reftrace` imports pointing at ``lib``."""
    with open(os.path.join(EXAMPLES, filename), encoding="utf-8") as f:
        source = f.read()
    if lib.__name__ == "torch":
        source = source.replace("import reftrace.nn.functional as F", "import torch.nn.functional as F")
        source = source.replace("import reftrace as torch", "import torch")
        source = source.replace("from reftrace import nn", "from torch import nn")
    namespace = {"__name__": "example_" + filename[:-3]}
    lib.manual_seed(0)
    exec(compile(source, os.path.join(EXAMPLES, filename), "exec"), namespace)
    return namespace


def _normalize(inputs):
    return inputs if isinstance(inputs, tuple) else (inputs,)


def programs(lib):
    """(name, traced program, example inputs as NumPy) for every program."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (src, spec, kw) in TC.CASES.items():
            inputs = TC.make_inputs(lib, spec)
            yield name, TC.load_fn(lib, src, name), inputs, kw
        for name in MC.CASES:
            module, inputs = MC.load_module(lib, name)
            yield "module_" + name, module, inputs, MC.CASES[name][2]
        for name, (src, spec, kw) in CC.FUNCTION_CASES.items():
            if name not in UNLOADABLE:
                yield "code_" + name, TC.load_fn(lib, src, name), TC.make_inputs(lib, spec), kw
        for name, (src, spec, kw) in CC.MODULE_CASES.items():
            namespace = {"torch": lib, "__name__": "code_case_" + name}
            exec(compile(MC.COMMON + src, f"<code case {name}>", "exec"), namespace)
            yield "code_module_" + name, namespace["make"](), TC.make_inputs(lib, spec), kw
        for filename, names in EXAMPLE_FILES.items():
            namespace = _example_namespace(lib, filename)
            for target in names:
                inputs = namespace.get(f"{target}_inputs", namespace.get("EXAMPLE_INPUTS"))
                yield f"example_{filename[:-3]}_{target}", namespace[target], _normalize(inputs), {}
        from reftrace.conformance.programs import load
        lib.manual_seed(0)
        for name, make in load(os.path.join(EXAMPLES, "programs.py"), lib).items():
            made = make()
            fn, inputs, kw = made if len(made) == 3 else (made[0], made[1], {})
            kw = {k: v for k, v in kw.items() if k != "check_trace"}
            yield "programs_" + name, fn, _normalize(inputs), kw


def names():
    import reftrace
    return [name for name, _, _, _ in programs(reftrace)]


def traced_programs(lib):
    """(name, traced, inputs as NumPy): each program traced by ``lib`` (the checker off), its
    inputs snapshotted before the trace runs (in-place programs change them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn, inputs, kw in programs(lib):
            arrays = to_numpy(inputs)
            traced = lib.jit.trace(fn, inputs, check_trace=False, **kw)
            yield name, traced, arrays


# -- comparing what loaded programs print and compute --------------------------------------------

_NUMBER = re.compile(r"%(\d+)(?![\w.])")


def canonical(text):
    """Graph text with unnamed values renumbered in order of appearance."""
    seen = {}
    return _NUMBER.sub(lambda m: "%" + seen.setdefault(m.group(1), str(len(seen))), text)


def flat(v):
    if isinstance(v, (tuple, list)):
        return [x for e in v for x in flat(e)]
    if isinstance(v, dict):
        return [x for k in v for x in flat(v[k])]
    return [v]


def assert_same_outputs(expected, got):
    """``expected``: tensors of either library or arrays; ``got``: reftrace tensors."""
    expected, got = flat(expected), flat(got)
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        e = np.asarray(to_numpy(e))
        g = np.asarray(g.detach().numpy())
        assert e.dtype == g.dtype and e.shape == g.shape, (e.dtype, g.dtype, e.shape, g.shape)
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)
