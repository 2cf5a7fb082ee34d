"""reftrace.jit.load: TorchScript archives written by torch 2.13 (live, and golden files checked
in so torch-free CI loads real torch files) and by reftrace.jit.save.

For every traced program of tests/tracer_cases.py, module_cases.py, code_cases.py and examples/
(tests/load_programs.py): torch traces and saves it; the module torch.jit.load gives and the one
reftrace.jit.load gives must print the same ``.code``, the same ``.graph`` and ``.inlined_graph``
(value numbers aside: torch numbers every value its compiler ever made, spec LOAD-3), and compute
the same outputs (to 1e-6, same dtype and shape) on the same inputs.
"""
import io
import json
import os
import re

import numpy as np
import pytest

import reftrace
import load_programs as LP
from module_cases import strip_mangles
from oracle import requires_torch

try:
    import torch
except ImportError:  # pragma: no cover - torch-free CI
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN_DIR = os.path.join(HERE, "data", "archives", "load")
NAMES = LP.names()

canonical, flat, assert_same_outputs = LP.canonical, LP.flat, LP.assert_same_outputs


_TORCH_ARCHIVES = {}


def torch_archive(name):
    """(archive bytes written by torch.jit.save, example inputs as NumPy) of one program."""
    if not _TORCH_ARCHIVES:
        for n, traced, arrays in LP.traced_programs(torch):
            buf = io.BytesIO()
            torch.jit.save(traced, buf)
            _TORCH_ARCHIVES[n] = (buf.getvalue(), arrays)
    return _TORCH_ARCHIVES[name]


def scripted_modules(module, prefix=""):
    """(qualified name, module) for the module and every submodule whose class has forward."""
    yield prefix, module
    for name, child in module.named_children():
        yield from scripted_modules(child, prefix + name + ".")


# -- torch's archives, live ----------------------------------------------------------------------

@requires_torch
@pytest.mark.parametrize("name", NAMES)
def test_torch_archive_loads_as_torch_loads_it(name):
    data, arrays = torch_archive(name)
    theirs = torch.jit.load(io.BytesIO(data))
    ours = reftrace.jit.load(io.BytesIO(data))
    for (qual, t_mod), (_, r_mod) in zip(scripted_modules(theirs), scripted_modules(ours)):
        assert r_mod._method_names() == t_mod._c._method_names(), qual
        for method in r_mod._method_names():
            t_method, r_method = t_mod._c._get_method(method), r_mod._get_method(method)
            assert r_method.code == t_method.code, (qual, method)
            assert canonical(r_method.graph.str(False)) == canonical(t_method.graph.str(False)), (qual, method)
    assert canonical(ours.inlined_graph.str(False)) == canonical(theirs.inlined_graph.str(False))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if name not in LP.RANDOM:
        assert_same_outputs(theirs(*LP.to_lib(torch, arrays)), ours(*LP.to_lib(reftrace, arrays)))


ARCHIVES = os.path.join(HERE, "data", "archives")


@requires_torch
@pytest.mark.parametrize("name", sorted(f[:-3] for f in os.listdir(ARCHIVES)
                                        if f.endswith(".pt") and f != "torch_save.pt"))
def test_torch_golden_archives_of_ser_archive_load_as_torch_loads_them(name):
    """tests/data/archives/*.pt (tests/gen_archive_golden.py: torch 2.13 traced each program in a
    fresh process): trace_module with several methods, traced functions calling traced functions
    (defined in __main__ and in another module) ... Loading registers nothing process-wide, so
    unlike tracing them here this leaves later tests' class names alone."""
    path = os.path.join(ARCHIVES, name + ".pt")
    theirs, ours = torch.jit.load(path), reftrace.jit.load(path)
    for (qual, t_mod), (_, r_mod) in zip(scripted_modules(theirs), scripted_modules(ours)):
        assert r_mod._method_names() == t_mod._c._method_names(), qual
        for method in r_mod._method_names():
            t_method, r_method = t_mod._c._get_method(method), r_mod._get_method(method)
            assert r_method.code == t_method.code, (qual, method)
            assert canonical(r_method.graph.str(False)) == canonical(t_method.graph.str(False)), (qual, method)
    assert canonical(ours.inlined_graph.str(False)) == canonical(theirs.inlined_graph.str(False))


@requires_torch
def test_parameters_buffers_and_training_as_torch_loads_them():
    data, arrays = torch_archive("module_conv_block")
    theirs, ours = torch.jit.load(io.BytesIO(data)), reftrace.jit.load(io.BytesIO(data))
    for (tn, tp), (rn, rp) in zip(theirs.named_parameters(), ours.named_parameters()):
        assert tn == rn and tp.requires_grad == rp.requires_grad
        np.testing.assert_array_equal(rp.detach().numpy(), tp.detach().numpy())
    assert [n for n, _ in theirs.named_buffers()] == [n for n, _ in ours.named_buffers()]
    assert ours.training == theirs.training and ours.bn.training == theirs.bn.training
    assert ours.conv.weight is ours.state_dict(keep_vars=True)["conv.weight"]
    # outputs computed from parameters that require grad require grad (the grad path of codegen)
    assert ours(*LP.to_lib(reftrace, arrays)).requires_grad == theirs(*LP.to_lib(torch, arrays)).requires_grad


def test_eval_and_train_switch_every_submodule():
    ours = _golden_module("module_nested_linear_twice")
    assert ours.training and ours.a.lin.training
    ours.eval()
    assert not ours.training and not ours.a.training and not ours.a.lin.training
    ours.train()
    assert ours.b.training


# -- reftrace's own archives ---------------------------------------------------------------------------

_REFTRACE = {}


@pytest.mark.parametrize("name", NAMES)
def test_reftrace_archive_round_trip(name):
    """reftrace.jit.save -> reftrace.jit.load computes what the trace computes; with torch
    installed, the loaded code is what torch shows for its own save of the program."""
    if not _REFTRACE:
        _REFTRACE.update({n: (t, a) for n, t, a in LP.traced_programs(reftrace)})
    traced, arrays = _REFTRACE[name]
    buf = io.BytesIO()
    reftrace.jit.save(traced, buf)
    loaded = reftrace.jit.load(io.BytesIO(buf.getvalue()))
    if name not in LP.RANDOM:
        assert_same_outputs(traced(*LP.to_lib(reftrace, arrays)), loaded(*LP.to_lib(reftrace, arrays)))
    if torch is not None:
        theirs = torch.jit.load(io.BytesIO(torch_archive(name)[0]))
        # (a name torch mangled because this process traced it before is process history that
        # changes the layout: tests/test_jit_save.py compares those in fresh processes)
        if "___torch_mangle" not in theirs.code:
            assert loaded.code == theirs.code
            # (class types' mangles aside, and the values of baked tensors: programs_item_warns
            # bakes a random input's item(), which the two libraries draw differently)
            def text(g):
                return re.sub(r"value=\{[^}]*\}", "value={...}", strip_mangles(canonical(g.str(False))))
            assert text(loaded.graph) == text(theirs.graph)


# -- golden archives written by torch (tests/gen_load_golden.py) -----------------------------------------

def _golden():
    with open(os.path.join(GOLDEN_DIR, "expected.json"), encoding="utf-8") as f:
        return json.load(f)


def _golden_module(name):
    return reftrace.jit.load(os.path.join(GOLDEN_DIR, name + ".pt"))


def _arrays(spec):
    if isinstance(spec, dict) and "array" in spec:
        return np.array(spec["array"], dtype=spec["dtype"]).reshape(spec["shape"])
    if isinstance(spec, dict) and "tuple" in spec:
        return tuple(_arrays(e) for e in spec["tuple"])
    if isinstance(spec, dict) and "dict" in spec:
        return {k: _arrays(v) for k, v in spec["dict"].items()}
    if isinstance(spec, list):
        return [_arrays(e) for e in spec]
    return spec


GOLDEN_NAMES = sorted(_golden()) if os.path.isdir(GOLDEN_DIR) else []


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_golden_torch_archive(name):
    expected = _golden()[name]
    loaded = _golden_module(name)
    assert loaded.code == expected["code"]
    assert canonical(loaded.graph.str(False)) == expected["graph"]
    assert canonical(loaded.inlined_graph.str(False)) == expected["inlined_graph"]
    assert_same_outputs(_arrays(expected["outputs"]), loaded(*LP.to_lib(reftrace, _arrays(expected["inputs"]))))


def test_golden_archives_are_there():
    assert len(GOLDEN_NAMES) >= 8


# -- what is refused ------------------------------------------------------------------------------

def _archive_with_code(code_text):
    """A golden archive whose forward's source is replaced (the zip rewritten)."""
    import zipfile
    src = os.path.join(GOLDEN_DIR, "simple_arith.pt")
    out = io.BytesIO()
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("code/__torch__.py"):
                data = code_text.encode()
            zout.writestr(item, data)
    return io.BytesIO(out.getvalue())


HEAD = ("class PlaceholderModule(Module):\n  __parameters__ = []\n  __buffers__ = []\n"
        "  training : bool\n  def forward(self: __torch__.PlaceholderModule,\n    x: Tensor,\n"
        "    y: Tensor) -> Tensor:\n")


@pytest.mark.parametrize("body, message", [
    ("    if bool(x):\n      return x\n    return y\n", "an if statement (prim::If)"),
    ("    for i in range(3):\n      x = x\n    return x\n", "a for loop (prim::Loop)"),
    ("    while True:\n      pass\n    return x\n", "a while loop (prim::Loop)"),
    ("    return __import__('os').system('true')\n", "unknown operator '__import__'"),
    ("    return torch.frobnicate(x)\n", "unknown operator 'torch.frobnicate'"),
    ("    return torch.add(x, 'a')\n", "no overload of aten::add matches the arguments (Tensor, str)"),
    ("    return (lambda: x)()\n", "cannot call 'lambda: x'"),
    ("    return open('/etc/passwd')\n", "unknown operator 'open'"),
    ("    return x.__class__\n", "Tensor has no attribute '__class__'"),
    ("    return CONSTANTS.c7\n", "CONSTANTS.c7: the archive has 1 constant(s)"),
    ("    return z\n", "undefined name 'z'"),
])
def test_code_outside_traced_programs_is_refused(body, message):
    """Statements are checked when the archive loads, expressions when the method is first
    used (its graph, its code or a call: spec LOAD-5)."""
    with pytest.raises(RuntimeError) as e:
        reftrace.jit.load(_archive_with_code(HEAD + body)).graph
    assert message in str(e.value)
    assert "forward (line " in str(e.value)


# -- mutated code: every load either works or is a clean RuntimeError -------------------------------

_POOL = ["torch.add", "self", "x", "CONSTANTS.c0", "annotate", "int", "[", "]", "(", ")", ",", "=",
         "-1", "1.5", "None", "True", "ops.prim.NumToTensor", "torch.size", "getattr", "Tensor",
         "List[int]", "__torch__.Foo", "\n", "  ", "return", "(a).forward(x, )", '"s"', "{", "}",
         ":", "_0", "uninitialized(Tensor)", "1.5-2.j", "__import__", "lambda: 0", "if x:"]


def _mutate(text, rng):
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text))
        j = min(len(text), i + rng.randint(1, 12))
        op = rng.randrange(4)
        if op == 0:
            text = text[:i] + text[j:]
        elif op == 1:
            text = text[:i] + rng.choice(_POOL) + text[i:]
        elif op == 2:
            text = text[:i] + rng.choice(_POOL) + text[j:]
        else:
            lines = text.split("\n")
            lines.insert(rng.randrange(len(lines)), lines[rng.randrange(len(lines))])
            text = "\n".join(lines)
    return text


@pytest.mark.parametrize("seed", range(4))
def test_mutated_code_loads_or_is_refused_cleanly(seed):
    """Random edits of the archived code of the golden archives (deletions, insertions of tokens
    the printer uses and of ones it never does, duplicated lines): loading, printing and running
    either work or raise RuntimeError (NotImplementedError when forward is gone, as nn.Module),
    never another exception from reftrace's internals. REFTRACE_FUZZ=N runs N cases a seed."""
    import random
    import zipfile
    rng = random.Random(seed)
    golden = _golden()
    for _ in range(int(os.environ.get("REFTRACE_FUZZ", "40"))):
        name = rng.choice(GOLDEN_NAMES)
        src = zipfile.ZipFile(os.path.join(GOLDEN_DIR, name + ".pt"))
        target = rng.choice([n for n in src.namelist() if n.endswith(".py") and "/code/" in n])
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            for n in src.namelist():
                data = src.read(n)
                z.writestr(n, _mutate(data.decode(), rng).encode() if n == target else data)
        try:
            m = reftrace.jit.load(io.BytesIO(out.getvalue()))
            if "forward" in m._type.methods:
                m.code, m.graph, m.inlined_graph
            m(*LP.to_lib(reftrace, _arrays(golden[name]["inputs"])))
        except (RuntimeError, NotImplementedError):
            pass


def test_a_missing_dimension_is_torch_s_runtime_error():
    """A size read from a dimension the new input lacks: torch's interpreter raises RuntimeError
    'Dimension out of range ...'; so do reftrace's generated code and interpreter."""
    loaded = _golden_module("view_by_sizes")
    message = "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
    with pytest.raises(RuntimeError, match=re.escape(message)):
        loaded(reftrace.ones(3))
    with pytest.raises(RuntimeError, match=re.escape(message)):
        loaded.forward.run_interpreted(reftrace.ones(3))
    if torch is not None:
        with pytest.raises(RuntimeError, match=re.escape(message)):
            torch.jit.load(os.path.join(GOLDEN_DIR, "view_by_sizes.pt"))(torch.ones(3))


def test_forward_takes_keyword_arguments_by_the_archived_names():
    loaded = _golden_module("simple_arith")
    x, y = reftrace.ones(2, 3), reftrace.full((2, 3), 2.0)
    assert loaded(x, y=y).tolist() == loaded(x, y).tolist() == [[4.0] * 3] * 2
    # torch 2.13: RuntimeError("forward() is missing value for argument 'y'. Declaration: ...")
    with pytest.raises(RuntimeError, match="forward\\(\\) is missing value for argument 'y'. "
                                           "Declaration: forward\\(__torch__.PlaceholderModule self"):
        loaded(x, z=y)


def test_older_archives_preamble_is_accepted_and_nothing_is_imported():
    """torch 1.x put `op_version_set = N` and `import __torch__...` lines before the classes:
    accepted as text, nothing imported."""
    loaded = reftrace.jit.load(_archive_with_code(
        "op_version_set = 1\nimport __torch__\nimport os\n" + HEAD + "    return torch.add(x, y)\n"))
    assert loaded(reftrace.ones(2), reftrace.ones(2)).tolist() == [2.0, 2.0]
