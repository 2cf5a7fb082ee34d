"""Write the golden TorchScript archives that tests/test_jit_load.py loads without torch.

    PYTHONPATH=. python tests/gen_load_golden.py

Each program below is traced by torch 2.13 and saved with torch.jit.save to
tests/data/archives/load/<name>.pt; expected.json holds what torch.jit.load shows for the file
(``.code``, ``.graph`` and ``.inlined_graph`` without source locations, unnamed values renumbered)
and the loaded module's outputs on the example inputs (the inputs stored beside them).
"""
import io
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import load_programs as LP  # noqa: E402


OUT = os.path.join(HERE, "data", "archives", "load")

# small programs that cover what the loader resolves: op overloads and defaults, wrapped-number
# constants, traced sizes, containers in and out, in-place ops, submodules, Sequential, conv/bn
GOLDEN = ["simple_arith", "tuple_output", "wrapped_float_int_tensor", "captured_constant",
          "view_by_sizes", "size_arith", "inplace_on_input", "list_input", "dict_input",
          "nested_input", "dict_output_nonstrict", "module_nested_linear_twice",
          "module_sequential_mlp", "module_conv_block", "module_tuple_returning_submodule",
          "programs_program_promotion"]


def _spec(v):
    if isinstance(v, np.ndarray):
        return {"array": v.reshape(-1).tolist(), "dtype": str(v.dtype), "shape": list(v.shape)}
    if isinstance(v, tuple):
        return {"tuple": [_spec(e) for e in v]}
    if isinstance(v, list):
        return [_spec(e) for e in v]
    if isinstance(v, dict):
        return {"dict": {k: _spec(e) for k, e in v.items()}}
    return v


def main():
    os.makedirs(OUT, exist_ok=True)
    expected = {}
    for name, traced, arrays in LP.traced_programs(torch):
        if name not in GOLDEN:
            continue
        path = os.path.join(OUT, name + ".pt")
        buf = io.BytesIO()
        torch.jit.save(traced, buf)
        with open(path, "wb") as f:
            f.write(buf.getvalue())
        loaded = torch.jit.load(path)
        outputs = loaded(*LP.to_lib(torch, arrays))
        expected[name] = {"code": loaded.code, "graph": LP.canonical(loaded.graph.str(False)),
                          "inlined_graph": LP.canonical(loaded.inlined_graph.str(False)),
                          "inputs": _spec(arrays), "outputs": _spec(LP.to_numpy(outputs))}
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(expected)} archives to {OUT}")


if __name__ == "__main__":
    main()
