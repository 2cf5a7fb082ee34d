"""Traced inference of the example models (examples/dcgan.py, unet.py, mobilenet.py,
audio_cnn.py, super_resolution.py), reftrace vs torch, single-threaded on both sides.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python bench/bench_nn_models.py

Each model is loaded under both libraries, the reftrace one with torch's parameters, traced on
its example inputs; the traced module is then called on them. Ratios < 1: reftrace is faster.
"""
import os
import sys
import warnings

ROOT = __file__.rsplit("/bench/", 1)[0]
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import reftrace  # noqa: E402
from _common import best  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

warnings.simplefilter("ignore")
EXAMPLES = ["dcgan", "unet", "mobilenet", "audio_cnn", "super_resolution"]


def main():
    if torch is None:
        print("torch is not installed: nothing to compare with")
        return
    torch.set_num_threads(1)
    from test_nn_examples import load
    print(f"{'model':<18} {'reftrace ms':>12} {'torch ms':>10} {'ratio':>7}")
    for name in EXAMPLES:
        th_ns, rt_ns = load(name, torch), load(name, reftrace)
        rt_ns["model"].load_state_dict({k: reftrace.from_numpy(v.detach().numpy().copy())
                                        for k, v in th_ns["model"].state_dict().items()})
        x = th_ns["EXAMPLE_INPUTS"].numpy().copy()
        th_x, rt_x = torch.from_numpy(x), reftrace.from_numpy(x)
        th_traced = torch.jit.trace(th_ns["model"], th_x, check_trace=False)
        rt_traced = reftrace.jit.trace(rt_ns["model"], rt_x, check_trace=False)
        for _ in range(3):
            th_traced(th_x)
            rt_traced(rt_x)
        th_ms = best(lambda: th_traced(th_x), 20) * 1e3
        rt_ms = best(lambda: rt_traced(rt_x), 20) * 1e3
        print(f"{name:<18} {rt_ms:>12.3f} {th_ms:>10.3f} {rt_ms / th_ms:>7.2f}")


if __name__ == "__main__":
    main()
