"""Regenerate tests/data/tracer_golden.json from torch 2.13 (run: python tests/gen_tracer_golden.py)."""
import json
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracer_cases import CASES, ERROR_CASES, trace_case  # noqa: E402

assert torch.__version__.startswith("2.13"), torch.__version__
warnings.simplefilter("ignore", DeprecationWarning)

golden = {"graphs": {}, "errors": {}}
for name, (src, spec, kw) in CASES.items():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = trace_case(torch, name, src, spec, kw).graph
    golden["graphs"][name] = {"graph": g.str(False),
                              "warnings": [str(x.message) for x in w if x.category is torch.jit.TracerWarning]}
for name, (src, spec, kw) in ERROR_CASES.items():
    try:
        trace_case(torch, name, src, spec, kw)
        raise SystemExit(f"{name}: torch did not raise")
    except Exception as e:  # the exception is the expected result
        golden["errors"][name] = {"type": type(e).__name__, "message": str(e).split("\nTensor:\n")[0]}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tracer_golden.json")
with open(path, "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
print("wrote", path)
