"""Regenerate tests/data/seq_golden.json from torch 2.13 (python tests/gen_seq_golden.py): the
traced texts and outputs of the sequence/attention examples (tests/seq_models.py)."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seq_models import EXAMPLES, trace_and_run  # noqa: E402

assert torch.__version__.startswith("2.13"), torch.__version__
golden = {}
for name in EXAMPLES:
    t, results = trace_and_run(torch, name)
    golden[name] = {"texts": t, "outputs": results}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "seq_golden.json")
with open(path, "w") as f:
    json.dump(golden, f, indent=1, sort_keys=True)
print("wrote", path)
