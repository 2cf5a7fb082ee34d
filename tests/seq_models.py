"""The sequence/attention example programs (examples/*.py), run under torch or reftrace.

Each example is written against ``import reftrace as torch``; ``load_example(lib, name)`` runs
its source with that import pointed at ``lib`` (real torch for the oracle), then fills every
parameter with fixed values and builds fixed inputs, so the two libraries compute the same
numbers and the golden file (tests/data/seq_golden.json, ``python tests/gen_seq_golden.py``)
holds torch's texts and values for torch-free runs.
"""
import os
import re

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = ["lstm_tagger", "gru_lm", "transformer_encoder", "gpt2_block", "bert_tiny"]


def _tokens(lib, shape, high, seed):
    return lib.tensor(np.random.default_rng(seed).integers(1, high, shape))


# per example: the traced inputs and the other inputs (other batch sizes and lengths)
INPUTS = {
    "lstm_tagger": lambda lib: [(_tokens(lib, (4, 7), 50, 0),), (_tokens(lib, (2, 11), 50, 1),),
                                (_tokens(lib, (1, 3), 50, 2),)],
    "gru_lm": lambda lib: [(_tokens(lib, (6, 3), 40, 0), lib.zeros(2, 3, 32)),
                           (_tokens(lib, (9, 5), 40, 1), lib.linspace(-1, 1, 320).reshape(2, 5, 32))],
    "transformer_encoder": lambda lib: [
        (_tokens(lib, (6, 2), 30, 0), lib.tensor([[False] * 6, [False] * 4 + [True] * 2])),
        (_tokens(lib, (9, 3), 30, 1), lib.zeros(3, 9, dtype=lib.bool))],
    "gpt2_block": lambda lib: [(_tokens(lib, (2, 8), 64, 0),), (_tokens(lib, (3, 13), 64, 1),)],
    "bert_tiny": lambda lib: [
        (_tokens(lib, (2, 7), 100, 0), lib.zeros(2, 7, dtype=lib.long),
         lib.tensor([[1] * 7, [1] * 5 + [0] * 2])),
        (_tokens(lib, (3, 10), 100, 1), lib.ones(3, 10, dtype=lib.long),
         lib.ones(3, 10, dtype=lib.long))],
}


def example_source(name):
    with open(os.path.join(ROOT, "examples", name + ".py")) as f:
        return f.read()


def load_example(lib, name):
    """(model with fixed parameters, [input tuples]) for ``lib`` (torch or reftrace)."""
    src = example_source(name)
    libname = lib.__name__
    src = src.replace("import reftrace as torch", f"import {libname} as torch")
    src = src.replace("from reftrace import nn", f"from {libname} import nn")
    src = src.replace("from reftrace.nn import functional as F", f"from {libname}.nn import functional as F")
    ns = {"__name__": "example_" + name}
    lib.manual_seed(0)
    exec(compile(src, f"examples/{name}.py", "exec"), ns)
    model = ns["model"]
    with lib.no_grad():
        for i, (_, p) in enumerate(sorted(model.named_parameters())):
            p.copy_(lib.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * (i % 5)))
    return model, INPUTS[name](lib)


MANGLE = re.compile(r"___torch_mangle_\d+\.")


def texts(traced):
    """graph, inlined_graph and code, without source locations and class mangles."""
    return {"graph": MANGLE.sub("", traced.graph.str(False)),
            "inlined_graph": MANGLE.sub("", traced.inlined_graph.str(False)),
            "code": MANGLE.sub("", traced.code)}


def flat_outputs(out):
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in flat_outputs(o)]
    return [out]


def trace_and_run(lib, name):
    """Trace with the checker on the other inputs, as torch.jit.trace(..., check_inputs=...)
    does; returns (texts, [outputs per input set as nested lists of (dtype, shape, values)])."""
    import warnings
    model, inputs = load_example(lib, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = lib.jit.trace(model, inputs[0], check_inputs=inputs[1:])
    results = []
    for args in inputs:
        outs = [o.detach() for o in flat_outputs(traced(*args))]
        results.append([(str(o.dtype), list(o.shape), list(o.stride()), o.numpy().tolist()) for o in outs])
    return texts(traced), results
