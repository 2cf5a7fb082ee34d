"""Traced inference of the sequence/attention example models, reftrace vs torch, in one run.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/bench_seq.py

For each of examples/lstm_tagger.py, gru_lm.py, transformer_encoder.py, gpt2_block.py and
bert_tiny.py (same parameters in both libraries, tests/seq_models.py): the traced module's call
on its example inputs, single-threaded on both sides (torch.set_num_threads(1)). The target is
a ratio <= 2 (reftrace / torch).
"""
import os
import sys
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = __file__.rsplit("/bench/", 1)[0]
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import reftrace  # noqa: E402
from _common import per_call  # noqa: E402
from seq_models import EXAMPLES, load_example  # noqa: E402

import torch  # noqa: E402

torch.set_num_threads(1)
warnings.simplefilter("ignore")


def traced(lib, name):
    model, inputs = load_example(lib, name)
    with lib.no_grad():
        return lib.jit.trace(model, inputs[0], check_trace=False), inputs[0]


def main():
    print(f"{'model':<22}{'torch us':>10}{'reftrace us':>13}{'ratio':>8}")
    for name in EXAMPLES:
        tt, targs = traced(torch, name)
        rt, rargs = traced(reftrace, name)

        def run_torch():
            with torch.no_grad():
                tt(*targs)

        def run_reftrace():
            with reftrace.no_grad():
                rt(*rargs)
        t = per_call({"torch": run_torch, "reftrace": run_reftrace}, repeat=5, min_time=0.2)
        print(f"{name:<22}{t['torch'] * 1e6:>10.0f}{t['reftrace'] * 1e6:>13.0f}"
              f"{t['reftrace'] / t['torch']:>8.2f}")


if __name__ == "__main__":
    main()
