"""Regenerate tests/data/module_golden.json from torch 2.13 (python tests/gen_module_golden.py)."""
import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from module_cases import CASES, trace_texts  # noqa: E402

assert torch.__version__.startswith("2.13"), torch.__version__
warnings.simplefilter("ignore")
golden = {name: trace_texts(torch, name) for name in CASES}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "module_golden.json")
with open(path, "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
print("wrote", path)
