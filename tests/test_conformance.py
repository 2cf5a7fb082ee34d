"""The conformance runner (reftrace.conformance): programs under torch and reftrace, diffed.

The runner's own logic (canonical text, program files, the report, the exit code) is tested
torch-free, with ``--no-torch`` or by handing ``run`` a stand-in for torch. The tests marked
``requires_torch`` run the real comparison against torch 2.13 and skip cleanly without it.
"""
import os
import subprocess
import sys
import textwrap

import pytest

import reftrace
from reftrace.conformance import canon, runner

try:  # torch is only the oracle; reftrace never imports it
    import torch as _torch
except ImportError:  # pragma: no cover - exercised on torch-free machines
    _torch = None

requires_torch = pytest.mark.skipif(_torch is None, reason="torch 2.13 (the oracle) is not installed")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PROGRAMS = '''
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)

    def forward(self, x):
        return torch.relu(self.fc(x))


def program_net():
    return Net(), torch.randn(4, 3)


def program_sizes():
    return (lambda x: x.view(x.size(0), -1) * 2), torch.rand(2, 3, 4)


def program_differs():
    # deliberately library-dependent: under reftrace the function adds 2, under torch 1
    k = 1 if torch.__name__ == "torch" else 2
    return (lambda x: x + k), torch.ones(2)
'''


@pytest.fixture
def program_file(tmp_path):
    path = tmp_path / "progs.py"
    path.write_text(PROGRAMS)
    return str(path)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# subprocesses import reftrace from this checkout, installed or not
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))


def _run(args):
    return subprocess.run([sys.executable, "-m", "reftrace.conformance", *args], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)


# -- canonical text -----------------------------------------------------------------------------

def test_canonical_graph_drops_locations_renumbers_values_strips_mangles():
    text = textwrap.dedent("""\
        graph(%self.1 : __torch__.torch.nn.modules.linear.___torch_mangle_3.Linear,
              %x : Float(2, strides=[1], requires_grad=0, device=cpu)):
          %27 : int = prim::Constant[value=1]() # /a/b.py:3:0
          %y.2 : Float(2) = aten::add(%x, %x, %27) # /site-packages/torch/nn/f.py:12:0
          return (%y.2)
        """)
    assert canon.canonical_graph(text) == textwrap.dedent("""\
        graph(%0 : __torch__.torch.nn.modules.linear.Linear,
              %1 : Float(2, strides=[1], requires_grad=0, device=cpu)):
          %2 : int = prim::Constant[value=1]()
          %3 : Float(2) = aten::add(%1, %1, %2)
          return (%3)
        """)


def test_canonical_message_drops_stacks_numbers_and_reads_reftrace_as_torch():
    msg = ("ERROR: x\n\tTrace source location:\n\t\t/a.py(3): f\n\t\t/b.py(9): g\n\tNode diff:\n"
           "Greatest absolute difference: 0.123 at index (0,) (up to 1e-05 allowed)\n"
           "module 'reftrace.nn' has no attribute 'Foo'")
    assert canon.canonical_message(msg) == (
        "ERROR: x\n\tTrace source location:\n\tNode diff:\nGreatest absolute difference: <numbers>\n"
        "module 'torch.nn' has no attribute 'Foo'")


# -- torch-free ---------------------------------------------------------------------------------

def test_import_is_torch_free():
    code = "import sys, reftrace, reftrace.conformance.runner; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_no_torch_compares_the_spec_with_its_text(tmp_path):
    chapter = tmp_path / "mini.md"
    chapter.write_text(textwrap.dedent("""\
        ### MIN-1 A rule

        ```python
        print(torch.tensor([1, 2]).dtype)
        ```
        ```expected
        torch.int64
        ```

        ```python
        print((torch.tensor([1, 2]) / 2).dtype)
        ```
        ```expected
        torch.int64
        ```

        ```python torch-only
        print(1)
        ```
        ```expected
        1
        ```
        """))
    result = _run(["--no-torch", str(chapter)])
    assert result.returncode == 1
    out = result.stdout
    assert "--no-torch: comparing reftrace with the spec's expected text only" in out
    assert "[1/3] mini:MIN-1:0 ... ok" in out
    assert "[2/3] mini:MIN-1:1 ... DIFFERS (stdout)" in out
    assert "-torch.int64\n" in out.replace("      ", "") and "+torch.float32" in out
    assert "[3/3] mini:MIN-1:2 ... skipped (torch-only: reftrace differs on purpose)" in out
    assert out.rstrip().endswith("1 agree, 1 differ, 1 skipped")


def test_no_torch_skips_program_files(program_file):
    result = _run(["--no-torch", program_file])
    assert result.returncode == 0
    assert "[1/3] progs:program_net ... skipped (no torch to compare with)" in result.stdout
    assert result.stdout.rstrip().endswith("0 agree, 0 differ, 3 skipped")


def test_program_files_against_a_stand_in(program_file, capsys):
    """reftrace itself as the 'torch' side: every program agrees but the one that asks which
    library it runs under (reftrace answers 'reftrace' both times, so it agrees too)."""
    verdicts = runner.run([program_file], torch=reftrace)
    assert [v.status for v in verdicts] == ["ok", "ok", "ok"]
    assert capsys.readouterr().out.splitlines()[-1] == "3 agree, 0 differ, 0 skipped"


def test_select_and_quiet(program_file, capsys):
    verdicts = runner.run([program_file], torch=reftrace, select="sizes", quiet=True)
    assert [v.id for v in verdicts] == ["progs:program_sizes"]
    assert capsys.readouterr().out == "1 agree, 0 differ, 0 skipped\n"


def test_a_broken_program_file_is_reported(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("raise ValueError('nope')\n")
    verdicts = runner.run([str(path)], torch=None)
    assert verdicts[0].status == "differs" and "ValueError: nope" in verdicts[0].diffs[0][1]


# -- against torch ------------------------------------------------------------------------------

@requires_torch
def test_programs_against_torch(program_file):
    """The module and the size-reading function agree with torch 2.13 (graph, outputs, warnings);
    the deliberately library-dependent program differs, with a diff of graph and outputs."""
    result = _run([program_file])
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert out.startswith("conformance: reftrace against torch 2.13")
    assert "[1/3] progs:program_net ... ok" in out
    assert "[2/3] progs:program_sizes ... ok" in out
    assert "[3/3] progs:program_differs ... DIFFERS (graph, outputs)" in out
    assert "-  %1 : Long(requires_grad=0, device=cpu) = prim::Constant[value={1}]()" in out
    assert "+  %1 : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()" in out
    assert "-[2. 2.]" in out and "+[3. 3.]" in out
    assert out.rstrip().endswith("2 agree, 1 differ, 0 skipped")


@requires_torch
def test_a_spec_chapter_agrees_with_torch():
    result = _run(["-q", "spec/recording.md"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith(" differ, 0 skipped") and " 0 differ" in result.stdout


@requires_torch
def test_torch_versus_a_stale_spec(tmp_path):
    """The spec is torch's output written down: when torch no longer prints it, the runner says so."""
    chapter = tmp_path / "stale.md"
    chapter.write_text("### STA-1 A rule\n\n```python\nprint(torch.ones(2).dtype)\n```\n"
                       "```expected\ntorch.float64\n```\n")
    verdict = runner.run([str(chapter)], torch=_torch)[0]
    assert verdict.status == "differs"
    assert [s for s, _ in verdict.diffs] == ["spec vs torch: stdout"]
