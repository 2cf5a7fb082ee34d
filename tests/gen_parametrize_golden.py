"""Regenerate tests/data/parametrize_golden.json from torch 2.13 (python tests/gen_parametrize_golden.py):
the output of each program of tests/parametrize_programs.py under torch."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parametrize_programs import PROGRAMS, run  # noqa: E402

assert torch.__version__.startswith("2.13"), torch.__version__
golden = {name: run(torch, name) for name in PROGRAMS}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "parametrize_golden.json")
with open(path, "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
print("wrote", path)
