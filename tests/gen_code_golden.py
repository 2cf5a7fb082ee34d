"""Regenerate tests/data/code_golden.json from torch 2.13 (python tests/gen_code_golden.py).

For every function case (tracer_cases.py, code_cases.py) the traced function's ``.code``; for
every module case (module_cases.py, code_cases.py) ``.code``, the names in
``code_with_constants``' table and each traced submodule's ``.code``.
"""
import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from code_cases import all_function_cases, all_module_cases, function_code, module_codes  # noqa: E402

assert torch.__version__.startswith("2.13"), torch.__version__
warnings.simplefilter("ignore")
golden = {"functions": {name: function_code(torch, case) for name, case in all_function_cases().items()},
          "modules": {name: module_codes(torch, case) for name, case in all_module_cases().items()}}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "code_golden.json")
with open(path, "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
print("wrote", path)
