"""Types (issue 14): reftrace is typed for users' type checkers, and stays so as the op table grows.

- the generated stubs (tests/gen_stubs.py) declare exactly what reftrace/_install.py installs:
  a function or Tensor method added to (or removed from) the op table without regenerating them
  fails here, naming it and the command to run;
- every name reftrace puts on the module and on Tensor at run time is known to mypy;
- mypy checks examples/ and tests/typed_program.py (a typed program written as a torch user
  writes one) with 0 errors, and `reveal_type(torch.relu(x))` is Tensor;
- the typed program runs, so what its types claim is what happens.

mypy is the bar (pyright is not required); these tests skip when mypy is not installed, and never
need torch: the programs import reftrace as torch.
"""
import ast
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import gen_stubs  # noqa: E402

import reftrace  # noqa: E402
from reftrace import _factories, _install  # noqa: E402
from reftrace import random as _random  # noqa: E402

REGENERATE = f"run `{gen_stubs.COMMAND}` and commit the stubs"
ERRORS_FILE = "tests/typed_program_errors.py"


def _stub(path):
    return ast.parse(open(os.path.join(ROOT, path), encoding="utf-8").read())


def _stub_all(tree):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def _defs(body):
    return {n.name for n in body if isinstance(n, ast.FunctionDef)}


def _diff(what, declared, installed):
    missing, extra = sorted(installed - declared), sorted(declared - installed)
    lines = []
    if missing:
        lines.append(f"{what} installed at run time but missing from the stubs: {', '.join(missing)}")
    if extra:
        lines.append(f"{what} in the stubs that the op table no longer installs: {', '.join(extra)}")
    return lines


def test_stubs_declare_what_the_op_table_installs():
    # install()'s functions, and the factories wrapped with requires_grad= (_factories, random)
    functions = {n.split("::")[1] for n in _install.FUNCTIONS} | set(
        _factories._FACTORIES + _factories._LIKES + list(_random._FACTORIES + _random._LIKES))
    funcs_tree = _stub("reftrace/_variable_functions.pyi")
    exported = _stub_all(funcs_tree)
    problems = _diff("functions", exported & (functions | _defs(funcs_tree.body)), functions)
    methods_cls = next(n for n in _stub("reftrace/_tensor_methods.pyi").body
                       if isinstance(n, ast.ClassDef) and n.name == "_TensorMethods")
    news = {"new_zeros", "new_ones", "new_full", "new_empty"}
    problems += _diff("Tensor methods", _defs(methods_cls.body) - news,
                      {n.split("::")[1] for n in _install.METHODS})
    for prefix in ("linalg", "special", "fft"):
        problems += _diff(f"reftrace.{prefix} functions", _stub_all(_stub(f"reftrace/{prefix}.pyi")),
                          set(getattr(reftrace, prefix).__all__))
    assert not problems, "\n".join(problems + [REGENERATE])


def test_stubs_are_up_to_date():
    """Same names is not enough: a schema whose arguments changed changes its stub."""
    stale = gen_stubs.stale()
    assert not stale, f"out of date (signatures changed): {', '.join(stale)}: {REGENERATE}"


def test_stub_generation_is_deterministic():
    assert gen_stubs.render() == gen_stubs.render()


# -- what mypy sees -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory):
    """One mypy run over examples/, the typed program and a probe naming every runtime name."""
    module, tensor = _runtime_names()
    probe = tmp_path_factory.mktemp("types") / "probe_names.py"
    lines = ["import reftrace as torch", "x = torch.zeros(1)"]
    lines += [f"torch.{n}" for n in module] + [f"x.{n}" for n in tensor]
    probe.write_text("\n".join(lines) + "\n")
    out, err, status = _mypy(["examples", "tests/typed_program.py", "tests/typed_program_errors.py",
                              str(probe)])
    return out, err, status, str(probe), lines


def _mypy(paths):
    try:
        from mypy import api
    except ImportError:
        pytest.skip("mypy is not installed (it is in the `test` extra)")
    old = os.getcwd()
    os.chdir(ROOT)  # mypy finds reftrace from the working directory, as in a checkout
    try:
        # follow_imports=silent: reftrace's own modules are analysed for their types, their errors
        # are not the user's (as for an installed package); no cache: a cold run takes ~3 s
        out, err, status = api.run(["--follow-imports=silent", "--cache-dir", os.devnull,
                                    "--no-error-summary", "--hide-error-context"] + paths)
    finally:
        os.chdir(old)
    return out, err, status


def test_mypy_passes_on_examples_and_the_typed_program(mypy_run):
    out, err, status, probe, _ = mypy_run
    errors = [line for line in out.splitlines() if ": error:" in line and probe not in line
              and not line.startswith(ERRORS_FILE)]
    assert not errors and not err, out + err
    revealed = [line for line in out.splitlines() if "Revealed type" in line]
    assert revealed == [f'tests/typed_program.py:{_reveal_line()}: note: Revealed type is '
                        '"reftrace._tensor.Tensor"'], out


def _error_lines(out, path):
    return sorted({int(line.split(":")[1]) for line in out.splitlines()
                   if line.startswith(path + ":") and ": error:" in line})


def _marked_lines(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return [i for i, line in enumerate(f, 1) if "  # error" in line]


def test_mypy_rejects_what_torchs_stubs_reject(mypy_run):
    """The types are no Any in disguise: a wrong argument type, a missing attribute, a Tensor used
    as an int are errors, each line marked in the file (and nothing else is)."""
    out = mypy_run[0]
    assert _error_lines(out, ERRORS_FILE) == _marked_lines(ERRORS_FILE), out


@pytest.mark.skipif(os.environ.get("REFTRACE_FULL") != "1",
                    reason="mypy over torch's stubs takes about a minute (REFTRACE_FULL=1 runs it)")
def test_the_typed_programs_check_the_same_against_torch(tmp_path):
    """The oracle: with `import torch` instead of reftrace, mypy (reading torch's own stubs) passes
    the typed program, reveals torch's Tensor, and rejects exactly the marked lines."""
    pytest.importorskip("torch")
    swap = {"import reftrace as torch": "import torch",
            "import reftrace.nn.functional as F": "import torch.nn.functional as F",
            "from reftrace import Tensor, nn": "from torch import Tensor, nn"}
    paths = []
    for name in ("typed_program.py", "typed_program_errors.py"):
        with open(os.path.join(ROOT, "tests", name), encoding="utf-8") as f:
            lines = [swap.get(line.rstrip("\n"), line.rstrip("\n")) for line in f]
        assert not any("reftrace" in line for line in lines if line.startswith(("import", "from")))
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        paths.append(str(tmp_path / name))
    out, err, status = _mypy(paths)
    program, errors_file = paths
    assert not _error_lines(out, program), out + err
    assert f'{program}:{_reveal_line()}: note: Revealed type is "torch._tensor.Tensor"' in out, out
    assert _error_lines(out, errors_file) == _marked_lines(ERRORS_FILE), out


def _reveal_line():
    with open(os.path.join(ROOT, "tests", "typed_program.py"), encoding="utf-8") as f:
        return next(i for i, line in enumerate(f, 1) if "reveal_type(torch.relu(x))" in line)


_LIST_NAMES = """
import json, reftrace
from reftrace._tensor import Tensor
module = {n for n in dir(reftrace) if not n.startswith("_")}
tensor = {n for n in dir(Tensor) if not n.startswith("_") or
          (n.startswith("__") and n.endswith("__") and n not in dir(object))}
tensor -= {"__dict__", "__weakref__", "__slots__", "__div__", "__module__", "__annotations__",
           "__orig_bases__", "__parameters__"}
tensor -= set(Tensor.__slots__)
tensor.discard("__getattr__")  # (hidden from checkers on purpose: see reftrace/_tensor.py)
print(json.dumps([sorted(module), sorted(tensor)]))
"""


def _runtime_names():
    """The public names on reftrace and on Tensor right after `import reftrace` (the op table's,
    the hand-written ones, the aliases, the dunders Python's operators use), read in a fresh
    interpreter: submodules that other tests import (reftrace.conformance) are not among them."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", _LIST_NAMES], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True).stdout
    return json.loads(out)


def test_mypy_knows_every_runtime_name(mypy_run):
    """A name installed at run time that no stub or annotation declares is an error for a user's
    checker ("Module has no attribute"): each one must be declared somewhere."""
    out, err, status, probe, lines = mypy_run
    errors = [line for line in out.splitlines() if ": error:" in line and line.startswith(probe)]
    unknown = [lines[int(e[len(probe):].split(":")[1]) - 1] for e in errors]
    assert not errors and not err, f"names mypy does not know: {', '.join(unknown)}\n{out}{err}"


def test_the_typed_program_runs(capsys):
    import typed_program
    typed_program.main()
    assert "torch.Size([2, 10])" in capsys.readouterr().out
