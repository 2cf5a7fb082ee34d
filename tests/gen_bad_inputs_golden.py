"""Record torch 2.13's outcome of every bad-input catalog case (tests/test_bad_inputs.py), so
that torch-free machines check reftrace's error types against torch's too.

    python tests/gen_bad_inputs_golden.py     # writes tests/data/bad_inputs_torch.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402,F401 - the oracle

from differential import outcome  # noqa: E402
from test_bad_inputs import CASES  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "bad_inputs_torch.json")

if __name__ == "__main__":
    golden = {}
    for src in CASES:
        o = outcome(torch, src)
        golden[src] = ["ok"] if o[0] == "ok" else ["error", o[1], o[2]]
    with open(OUT, "w") as f:
        json.dump(golden, f, indent=0, sort_keys=True)
    print(f"{len(golden)} cases -> {OUT}")
