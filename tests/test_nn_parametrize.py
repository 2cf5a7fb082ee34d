"""torch.nn.utils.parametrize, parametrizations.weight_norm / spectral_norm and the old
weight_norm / spectral_norm hooks: each program of parametrize_programs.py prints the same text
under reftrace as under torch 2.13 (graphs, inlined graphs, code, state_dict keys and values,
gradients, errors, warnings). Checked against the golden file written from torch by
tests/gen_parametrize_golden.py, and against live torch when it is installed."""
import difflib
import json
import os

import pytest

from oracle import requires_torch, torch
from parametrize_programs import PROGRAMS, run

with open(os.path.join(os.path.dirname(__file__), "data", "parametrize_golden.json")) as f:
    GOLDEN = json.load(f)


def _same(expected, got, label):
    if got != expected:
        diff = "\n".join(difflib.unified_diff(expected.splitlines(), got.splitlines(), "torch 2.13",
                                              label, lineterm="", n=2))
        pytest.fail(diff, pytrace=False)


def test_every_program_has_golden_output():
    assert sorted(GOLDEN) == sorted(PROGRAMS), "run python tests/gen_parametrize_golden.py"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reftrace_prints_what_torch_printed(name):
    import reftrace
    _same(GOLDEN[name], run(reftrace, name), "reftrace")


@requires_torch
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_golden_is_what_live_torch_prints(name):
    _same(GOLDEN[name], run(torch, name), "torch")
