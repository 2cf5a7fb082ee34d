"""``python -m reftrace``: the trace command on examples/, its exit codes and its output.

Each test runs the command line in a subprocess, as a user would (torch-free).
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the subprocess imports reftrace from this checkout, installed or not
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))


def reftrace_cli(*args):
    return subprocess.run([sys.executable, "-m", "reftrace", *args], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("example, op", [("mlp", "aten::linear"), ("lenet", "aten::_convolution"),
                                         ("attention", "aten::softmax")])
def test_clean_examples_trace_and_check(example, op):
    result = reftrace_cli("trace", f"examples/{example}.py")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert out.startswith(f"tracing examples/{example}.py:model (")
    assert "graph (submodule calls inlined" in out and "\ngraph(%self.1 : __torch__." in out
    assert op in out and "  return (" in out
    assert "\nwarnings: none\n" in out
    assert out.rstrip().splitlines()[-1].startswith("check: ok")


def test_lenet_reads_the_batch_size_from_the_input():
    out = reftrace_cli("trace", "examples/lenet.py").stdout
    assert "aten::size(" in out and "prim::NumToTensor(" in out
    assert "1 check input(s)" in out


def test_control_flow_branch_is_caught():
    result = reftrace_cli("trace", "examples/control_flow.py")
    out = result.stdout
    assert result.returncode == 1
    assert "Converting a tensor to a Python boolean might cause the trace to be incorrect" in out
    assert "(2 times: the checker re-traces)" in out
    assert "Output nr 1. of the traced function does not match the corresponding output" in out
    assert "check: FAILED: the trace does not generalise (TracingCheckError)" in out
    assert "ERROR: Graphs differed across invocations!" in out
    assert "aten::mul" in out  # the graph of the example inputs is still shown


def test_control_flow_loop_is_caught():
    result = reftrace_cli("trace", "examples/control_flow.py:loop")
    assert result.returncode == 1
    assert result.stdout.count("aten::tanh") >= 3
    assert "ERROR: Graphs differed across invocations!" in result.stdout


def test_no_check_and_no_inline():
    result = reftrace_cli("trace", "--no-check", "--no-inline", "examples/mlp.py")
    assert result.returncode == 0
    assert 'prim::CallMethod[name="forward"]' in result.stdout
    assert result.stdout.rstrip().endswith("check: skipped (--no-check)")


def test_source_locations():
    out = reftrace_cli("trace", "--source-locations", "examples/mlp.py").stdout
    assert "aten::relu(%9) # " in out and "examples/mlp.py:" in out


def test_a_mismatch_without_graph_change_exits_1(tmp_path):
    """Dropout in training mode: same graph every time, other outputs: the checker warns."""
    (tmp_path / "drop.py").write_text(
        "import reftrace as torch\n"
        "def model(x):\n    return torch.dropout(x, 0.5, True)\n"
        "EXAMPLE_INPUTS = torch.ones(4, 4)\n")
    result = reftrace_cli("trace", str(tmp_path / "drop.py"))
    assert result.returncode == 1
    assert "Trace had nondeterministic nodes" in result.stdout
    assert "check: MISMATCH" in result.stdout


def test_a_function_with_tuple_inputs_and_named_inputs(tmp_path):
    (tmp_path / "two.py").write_text(
        "import reftrace as torch\n"
        "def add(x, y):\n    return x + y\n"
        "add_inputs = (torch.ones(2), torch.ones(2))\n")
    result = reftrace_cli("trace", f"{tmp_path / 'two.py'}:add")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(a function)" in result.stdout and "aten::add(%x, %y, %2)" in result.stdout


def test_tracing_errors_exit_1(tmp_path):
    (tmp_path / "none.py").write_text(
        "import reftrace as torch\ndef model(x):\n    x.add_(1)\nEXAMPLE_INPUTS = torch.ones(2)\n")
    result = reftrace_cli("trace", str(tmp_path / "none.py"))
    assert result.returncode == 1
    assert "RuntimeError: The traced function didn't return any values!" in result.stdout


@pytest.mark.parametrize("target, message", [
    ("examples/nope.py", "examples/nope.py: no such file"),
    ("examples/mlp.py:nope", "examples/mlp.py defines no `nope`; name one with examples/mlp.py:NAME"),
    ("examples/control_flow.py:EXAMPLE_INPUTS", "is a Tensor, not a function or nn.Module"),
])
def test_usage_errors_exit_2(target, message):
    result = reftrace_cli("trace", target)
    assert result.returncode == 2
    assert message in result.stderr


def test_missing_inputs_exit_2(tmp_path):
    (tmp_path / "f.py").write_text("def model(x):\n    return x\n")
    result = reftrace_cli("trace", str(tmp_path / "f.py"))
    assert result.returncode == 2
    assert "defines neither `model_inputs` nor `EXAMPLE_INPUTS`" in result.stderr


def test_help():
    result = reftrace_cli("--help")
    assert result.returncode == 0
    assert "trace" in result.stdout and "conformance" in result.stdout
    result = reftrace_cli("trace", "--help")
    assert "EXAMPLE_INPUTS" in result.stdout and "NAME_inputs" in result.stdout
    assert reftrace_cli().returncode == 2  # a command is required


def test_conformance_subcommand_delegates():
    result = reftrace_cli("conformance", "--no-torch", "-k", "PRO-4", "spec/tensors.md")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[1/1] tensors:PRO-4:0 ... ok" in result.stdout
    assert reftrace_cli("conformance", "--help").stdout.startswith("usage: python -m reftrace conformance")


# -- misuse: each a usage error (exit 2) that says what to do, never a traceback (defect D9) --------

MODEL = "import reftrace as torch\ndef model(x):\n    return x * 2\nEXAMPLE_INPUTS = (torch.ones(2),)\n"


@pytest.mark.parametrize("extra, message", [
    ("CHECK_INPUTS = 5\n", "CHECK_INPUTS must be a list of argument tuples, not int"),
    ("CHECK_INPUTS = ((torch.ones(3),) for _ in range(2))\n",
     "CHECK_INPUTS must be a list of argument tuples, not generator"),
    ("model_check_inputs = 'ab'\n", "model_check_inputs must be a list of argument tuples, not str"),
])
def test_bad_check_inputs_exit_2(tmp_path, extra, message):
    (tmp_path / "m.py").write_text(MODEL + extra)
    result = reftrace_cli("trace", str(tmp_path / "m.py"))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_list_of_check_inputs_still_works(tmp_path):
    (tmp_path / "m.py").write_text(MODEL + "CHECK_INPUTS = [(torch.ones(3),), (torch.ones(4),)]\n")
    result = reftrace_cli("trace", str(tmp_path / "m.py"))
    assert result.returncode == 0 and "2 check input(s)" in result.stdout


def test_a_file_not_ending_in_py(tmp_path):
    (tmp_path / "model.txt").write_text(MODEL)
    result = reftrace_cli("trace", str(tmp_path / "model.txt"))
    assert result.returncode == 0 and "check: ok" in result.stdout, result.stderr


def test_a_directory_is_not_a_file(tmp_path):
    result = reftrace_cli("trace", str(tmp_path))
    assert result.returncode == 2 and "is a directory, not a Python file" in result.stderr


def test_a_module_class_needing_arguments_exit_2(tmp_path):
    (tmp_path / "m.py").write_text(
        "import reftrace as torch\nclass Net(torch.nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.lin = torch.nn.Linear(n, 2)\n"
        "    def forward(self, x):\n        return self.lin(x)\nEXAMPLE_INPUTS = (torch.ones(1, 3),)\n")
    result = reftrace_cli("trace", f"{tmp_path / 'm.py'}:Net")
    assert result.returncode == 2 and "cannot be built without arguments" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_program_importing_torch_is_told_what_to_write(tmp_path):
    try:
        import torch  # noqa: F401 - the program below imports it
    except ImportError:
        pytest.skip("torch is not installed")
    (tmp_path / "m.py").write_text(MODEL.replace("import reftrace as torch", "import torch"))
    result = reftrace_cli("trace", str(tmp_path / "m.py"))
    assert result.returncode == 2 and "write `import reftrace as torch`" in result.stderr
# -- trace --save and run: TorchScript archives from the command line -------------------------------

def test_trace_save_then_run_shows_and_runs_the_archive(tmp_path):
    import numpy as np
    import reftrace
    archive = str(tmp_path / "mlp.pt")
    result = reftrace_cli("trace", "examples/mlp.py", "--save", archive)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"saved: {archive}" in result.stdout
    loaded = reftrace.jit.load(archive)

    shown = reftrace_cli("run", archive)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert shown.stdout.startswith(f"loaded {archive}: MLP (__torch__.mlp.MLP)")
    assert "\ncode:\n" + loaded.code.rstrip("\n") + "\n" in shown.stdout
    assert "\ngraph:\n" + loaded.graph.str(False) in shown.stdout

    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    np.savez(tmp_path / "x.npz", x)
    ran = reftrace_cli("run", archive, "--inputs", str(tmp_path / "x.npz"), "--out", str(tmp_path / "y.pt"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Tensor (3, 10) torch.float32" in ran.stdout
    expected = loaded(reftrace.from_numpy(x))
    np.testing.assert_array_equal(reftrace.load(str(tmp_path / "y.pt")).detach().numpy(),
                                  expected.detach().numpy())


def test_run_a_torch_written_archive_on_saved_inputs(tmp_path):
    """A golden archive torch 2.13 wrote (tests/gen_load_golden.py), inputs in torch.save format."""
    import json
    import numpy as np
    import reftrace
    golden = os.path.join("tests", "data", "archives", "load")
    with open(os.path.join(ROOT, golden, "expected.json"), encoding="utf-8") as f:
        case = json.load(f)["module_sequential_mlp"]
    x = case["inputs"]["tuple"][0]
    reftrace.save((reftrace.from_numpy(np.array(x["array"], x["dtype"]).reshape(x["shape"])),),
                  str(tmp_path / "in.pt"))
    ran = reftrace_cli("run", os.path.join(golden, "module_sequential_mlp.pt"), "--inputs",
                       str(tmp_path / "in.pt"), "--out", str(tmp_path / "out.pt"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    out = case["outputs"]
    np.testing.assert_allclose(reftrace.load(str(tmp_path / "out.pt")).detach().numpy(),
                               np.array(out["array"], out["dtype"]).reshape(out["shape"]), rtol=1e-6, atol=1e-6)


def test_run_refuses_what_is_not_an_archive(tmp_path):
    (tmp_path / "x.pt").write_bytes(b"not a zip")
    result = reftrace_cli("run", str(tmp_path / "x.pt"))
    assert result.returncode == 1
    assert result.stdout.startswith(f"loading {tmp_path / 'x.pt'} failed: ")
