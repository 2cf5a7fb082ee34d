"""The users' tools of issue 14 on the command line and in Python: the `reftrace` console
script, --version, the trace options torch.jit.trace takes, --format json, --draw, --tabular,
--summary, and the conformance runner on command-line program files.

Each behaviour that torch has (strict, _force_outplace, check_tolerance, example_kwarg_inputs,
fx's table layout) is compared with torch: live when installed, else with golden data
generated from it (tests/gen_tabular_golden.py).
"""
import configparser
import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from reftrace.jit._tabular import format_table

try:  # the oracle, when installed
    import torch
except ImportError:
    torch = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))


def cli(*args, env=None, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "reftrace", *args], cwd=cwd, env=env or ENV,
                          capture_output=True, text=True, timeout=300)


def program(tmp_path, source, name="prog.py"):
    path = tmp_path / name
    path.write_text("import reftrace as torch\n" + textwrap.dedent(source))
    return str(path)


def torch_or_skip():
    if torch is None:
        pytest.skip("torch 2.13 (the oracle) is not installed")


# -- the command ------------------------------------------------------------------------------

def test_version():
    import reftrace
    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"reftrace {reftrace.__version__} (the tracer of PyTorch 2.13)"


def test_console_script_is_declared_and_installed_where_pip_installed_us():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    assert cfg["options.entry_points"]["console_scripts"].split() == ["reftrace", "=", "reftrace.__main__:main"]
    script = os.path.join(os.path.dirname(sys.executable), "reftrace")
    if not os.path.exists(script):  # reftrace on PYTHONPATH, not pip-installed into this venv
        pytest.skip("no console script next to this interpreter (not installed with pip)")
    result = subprocess.run([script, "--version"], capture_output=True, text=True, env=ENV)
    assert result.returncode == 0 and result.stdout.startswith("reftrace ")


# -- torch.jit.trace's options ----------------------------------------------------------------

LIST_OUTPUT = """
def model(x):
    return [x + 1, x * 2]
EXAMPLE_INPUTS = torch.ones(2)
"""


def test_no_strict_allows_a_list_output(tmp_path):
    path = program(tmp_path, LIST_OUTPUT)
    strict = cli("trace", path)
    assert strict.returncode == 0
    assert "Encountering a list at the output of the tracer" in strict.stdout
    loose = cli("trace", "--no-strict", path)
    assert loose.returncode == 0, loose.stdout + loose.stderr
    assert "prim::ListConstruct" in loose.stdout and "warnings: none" in loose.stdout
    if torch is None:
        return
    import warnings
    for strict_flag, warned in ((True, True), (False, False)):  # torch warns the same way
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.jit.trace(lambda x: [x + 1, x * 2], torch.ones(2), strict=strict_flag)
        assert any("Encountering a list at the output" in str(w.message) for w in caught) == warned


def test_force_outplace_records_the_out_of_place_op(tmp_path):
    path = program(tmp_path, """
        def model(x):
            y = x.clone()
            y.add_(1)
            return y
        EXAMPLE_INPUTS = torch.ones(2)
        """)
    assert "aten::add_(" in cli("trace", path).stdout
    out = cli("trace", "--force-outplace", path).stdout
    assert "aten::add(" in out and "aten::add_(" not in out
    if torch is None:
        return

    def f(x):
        y = x.clone()
        y.add_(1)
        return y
    graph = str(torch.jit.trace(f, torch.ones(2), _force_outplace=True).graph)
    assert "aten::add(" in graph and "aten::add_(" not in graph


def test_check_tolerance_is_passed_to_the_tracer(tmp_path):
    path = program(tmp_path, "def model(x):\n    return x * 2\nEXAMPLE_INPUTS = torch.ones(2)\n")
    assert cli("trace", "--check-tolerance", "1e-3", path).returncode == 0
    bad = cli("trace", "--check-tolerance", "-1", path)
    assert bad.returncode == 1
    assert "check_tolerance" in bad.stdout
    if torch is None:
        return
    with pytest.raises(Exception) as theirs:
        torch.jit.trace(lambda x: x * 2, torch.ones(2), check_tolerance=-1)
    assert str(theirs.value).splitlines()[0] in bad.stdout


def test_keyword_inputs(tmp_path):
    path = program(tmp_path, """
        def model(x, scale=None):
            return x * scale
        model_kwarg_inputs = {"x": torch.ones(2), "scale": torch.full((2,), 3.0)}
        """)
    result = cli("trace", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "graph(%x : Float(2" in result.stdout and "%scale : Float(2" in result.stdout
    bad = program(tmp_path, "def model(x):\n    return x\nmodel_kwarg_inputs = [1]\n", "bad.py")
    result = cli("trace", bad)
    assert result.returncode == 2 and "model_kwarg_inputs must be a dict" in result.stderr


# -- --format json ----------------------------------------------------------------------------

def test_json_of_a_clean_module_trace():
    result = cli("trace", "examples/mlp.py", "--format", "json")
    assert result.returncode == 0
    doc = json.loads(result.stdout)
    assert doc["verdict"] == "ok" and doc["exit_code"] == 0 and doc["kind"] == "module"
    assert doc["graph"].startswith("graph(%self.1 : __torch__.mlp.MLP")
    assert "aten::linear" in doc["inlined_graph"] and "def forward(self" in doc["code"]
    assert doc["warnings"] == [] and doc["error"] is None
    assert doc["summary"]["ops"]["aten::linear"] == 2


def test_json_of_a_failed_check_and_of_a_tracing_error(tmp_path):
    result = cli("trace", "examples/control_flow.py", "--format", "json")
    doc = json.loads(result.stdout)
    assert result.returncode == 1 and doc["verdict"] == "failed"
    assert "Graphs differed across invocations" in doc["check_error"]
    assert any("Python boolean" in w["message"] and w["count"] == 2 for w in doc["warnings"])
    path = program(tmp_path, "def model(x):\n    raise ValueError('boom')\nEXAMPLE_INPUTS = torch.ones(1)\n")
    result = cli("trace", path, "--format", "json")
    doc = json.loads(result.stdout)
    assert result.returncode == 1 and doc["verdict"] == "error" and doc["graph"] is None
    assert doc["error"]["type"] == "ValueError" and doc["error"]["message"] == "boom"


def test_json_of_a_usage_error():
    result = cli("trace", "examples/nope.py", "--format", "json")
    assert result.returncode == 2
    doc = json.loads(result.stdout)
    assert doc["verdict"] == "usage-error" and "no such file" in doc["error"]["message"]


# -- --draw, --tabular, --summary -------------------------------------------------------------

def test_draw_dot(tmp_path):
    out = tmp_path / "lenet.dot"
    result = cli("trace", "examples/lenet.py", "--draw", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert text.startswith('digraph "graph" {') and text.rstrip().endswith("}")
    assert 'subgraph cluster_0 {' in text and 'label="__module.conv1"' in text  # module scopes
    assert "shape=ellipse" in text and "doubleoctagon" in text  # inputs and the return apart
    assert "aten::max_pool2d\\n%input.5 : Float(2, 6, 14, 14)" in text
    assert "prim::Constant" not in text  # constants are left out of pictures by default


def _fake_dot(tmp_path):
    """A stand-in for Graphviz's dot: writes what it was asked to render to its -o file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    dot = bin_dir / "dot"
    dot.write_text(f"#!{sys.executable}\nimport sys\nfmt, out = sys.argv[1], sys.argv[3]\n"
                   "open(out, 'w').write('<rendered ' + fmt + '>' + sys.stdin.read()[:7])\n")
    dot.chmod(dot.stat().st_mode | stat.S_IEXEC)
    return str(bin_dir)


@pytest.mark.parametrize("ext", ["svg", "png"])
def test_draw_through_graphviz_when_installed(tmp_path, ext):
    out = tmp_path / f"g.{ext}"
    env = dict(ENV, PATH=_fake_dot(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    result = cli("trace", "examples/mlp.py", "--draw", str(out), env=env)
    assert result.returncode == 0, result.stderr
    assert out.read_text() == f"<rendered -T{ext}>digraph"


def test_draw_without_graphviz_says_what_to_install(tmp_path):
    env = dict(ENV, PATH=os.path.dirname(sys.executable))  # a PATH with no dot on it
    if any(os.path.exists(os.path.join(p, "dot")) for p in env["PATH"].split(os.pathsep)):
        pytest.skip("Graphviz's dot sits next to the interpreter")
    result = cli("trace", "examples/mlp.py", "--draw", str(tmp_path / "g.svg"), env=env)
    assert result.returncode == 1
    assert "needs Graphviz's `dot` program, which is not on PATH: install Graphviz" in result.stderr
    assert "check: ok" in result.stdout  # the trace itself is still reported
    result = cli("trace", "examples/mlp.py", "--draw", str(tmp_path / "g.jpg"))
    assert result.returncode == 1 and "must end in .dot, .svg or .png" in result.stderr


def test_fx_table_layout_is_torchs():
    with open(os.path.join(ROOT, "tests", "data", "fx_print_tabular.json")) as f:
        golden = json.load(f)
    assert format_table(golden["rows"], golden["headers"]) == golden["text"]


def _lenet():
    import runpy
    import reftrace
    ns = runpy.run_path(os.path.join(ROOT, "examples", "lenet.py"))
    return reftrace.jit.trace(ns["model"], ns["EXAMPLE_INPUTS"])


def test_tabular_of_a_module_graph(capsys):
    traced = _lenet()
    traced.graph.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs", "shape"]
    rows = [line.split(None, 2) for line in lines[2:]]
    assert rows[0][:2] == ["placeholder", "self.1"] and rows[1][:2] == ["placeholder", "x.1"]
    assert ["get_attr", "conv1"] in [r[:2] for r in rows]
    assert any(line.startswith("call_module ") and "  conv1  " in line and "(x.1,)" in line for line in lines)
    # constants are shown in place, as fx shows them
    assert any("aten::max_pool2d" in line and "[2, 2], [], [0, 0], [1, 1], False)" in line for line in lines)
    assert lines[-1].startswith("output         output")


def test_summary_counts_ops_and_size_dependence():
    summary = _lenet().inlined_graph.summary()
    d = summary.as_dict()
    assert d["ops"]["aten::relu"] == 4 and d["ops"]["aten::_convolution"] == 2
    assert d["ops"]["aten::linear"] == 3 and "prim::Constant" not in d["ops"]
    assert [s.split(" = ")[1].split(" ")[0] for s in d["size_dependent"]] == [
        "aten::size", "prim::NumToTensor", "aten::Int"]
    assert "conv1.weight" in d["attributes"]
    assert "size-dependent nodes (3)" in summary.format()


def test_tabular_and_summary_on_the_command_line():
    out = cli("trace", "examples/lenet.py", "--tabular", "--summary").stdout
    assert "\ntable:\nopcode " in out and "\nsummary:\n" in out and "aten::relu" in out


# -- the conformance runner takes command-line program files ------------------------------------

def test_conformance_runs_a_command_line_program_file():
    torch_or_skip()
    result = subprocess.run([sys.executable, "-m", "reftrace", "conformance", "examples/mlp.py",
                             "examples/control_flow.py"], cwd=ROOT, env=ENV, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout
    assert "mlp:model ... ok" in result.stdout and "control_flow:loop ... ok" in result.stdout
    assert "3 agree, 0 differ, 0 skipped" in result.stdout


def test_conformance_refuses_a_file_with_no_programs(tmp_path):
    path = program(tmp_path, "x = 1\n")
    result = subprocess.run([sys.executable, "-m", "reftrace", "conformance", "--no-torch", path],
                            cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    assert "defines no programs" in result.stdout and "0 agree, 1 differ" in result.stdout


def test_conformance_program_with_keyword_inputs(tmp_path):
    torch_or_skip()
    path = program(tmp_path, """
        def scaled(x, scale=None):
            return x * scale
        scaled_kwarg_inputs = {"x": torch.ones(2), "scale": torch.full((2,), 3.0)}
        """)
    result = subprocess.run([sys.executable, "-m", "reftrace", "conformance", path], cwd=ROOT,
                            env=ENV, capture_output=True, text=True, timeout=300)
    assert "prog:scaled ... ok" in result.stdout, result.stdout


def test_json_carries_the_specialisation_report():
    result = cli("trace", "examples/control_flow.py", "--specializations", "--format", "json")
    doc = json.loads(result.stdout)
    assert result.returncode == 1 and doc["verdict"] == "failed"
    kinds = [s["kind"] for s in doc["specializations"]]
    assert kinds[0] == "bool" and "branch" in kinds
    assert doc["specializations"][0]["line"] == 19 and "torch.where" in doc["specializations"][0]["fix"]


def test_a_torch_program_without_torch_installed_is_told_what_to_write(tmp_path):
    hidden = tmp_path / "notorch" / "torch"
    hidden.mkdir(parents=True)  # a torch package that is not there: `import torch` fails by name
    (hidden / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    path = tmp_path / "m.py"
    path.write_text("import torch\nmodel = torch.nn.Linear(2, 2)\nEXAMPLE_INPUTS = torch.ones(1, 2)\n")
    env = dict(ENV, PYTHONPATH=os.pathsep.join([str(tmp_path / "notorch"), ROOT]))
    result = cli("trace", str(path), env=env)
    assert result.returncode == 2
    assert "imports torch, which is not installed" in result.stderr
    assert "write `import reftrace as torch`" in result.stderr


def test_layers_from_torch_are_named(tmp_path):
    torch_or_skip()
    path = program(tmp_path, "from torch import nn\nmodel = nn.Linear(2, 2)\nEXAMPLE_INPUTS = torch.ones(1, 2)\n")
    result = cli("trace", path)
    assert result.returncode == 2
    assert "imports torch (model, nn come from torch, not reftrace)" in result.stderr
