"""``python -m reftrace trace --specializations --deep-check`` (reftrace/_cli_insight.py) on
examples whose bakes are known: examples/control_flow.py's `if` on data and its loop over a size."""
import pytest

from tests.test_cli import reftrace_cli


def test_specializations_and_deep_check_of_a_branch_on_data():
    result = reftrace_cli("trace", "examples/control_flow.py", "--specializations", "--deep-check")
    out = result.stdout
    assert result.returncode == 1
    section = out.split("\nspecializations: ")[1].split("\n\n")[0].splitlines()
    assert section[0] == "3 values baked into the trace:"
    assert section[1] == "  examples/control_flow.py:19: bool = True"
    assert "  examples/control_flow.py:20: branch" in section
    deep = out.split("\ndeep check: ")[1].split("\n\n")[0]
    assert deep.startswith("FAILED on check input 1: Deep check failed")
    assert "First diverging node (node 1 of the replay), at examples/control_flow.py:20:" in deep
    assert "why: eager ran aten::neg where the trace runs aten::mul" in deep
    assert "check: FAILED: the trace does not generalise (TracingCheckError)" in out


def test_a_loop_over_a_size_is_an_index_bake():
    out = reftrace_cli("trace", "examples/control_flow.py:loop", "--specializations").stdout
    assert "  examples/control_flow.py:29: index = 3 (from x.size(0))" in out


@pytest.mark.parametrize("example", ["mlp", "lenet"])
def test_clean_examples_have_nothing_baked_and_pass_the_deep_check(example):
    result = reftrace_cli("trace", f"examples/{example}.py", "--specializations", "--deep-check")
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "\nspecializations: No values baked in" in out
    assert "\ndeep check: ok (every output leaf matches Python on 1 input set(s))" in out
    assert out.rstrip().splitlines()[-1].startswith("check: ok")


def test_options_are_in_the_help():
    out = reftrace_cli("trace", "--help").stdout
    assert "--specializations" in out and "--deep-check" in out
