"""F.bilinear inference: reftrace's _trilinear loop on NumPy arrays vs the loop of tensor ops it
stands for (the array loop switched off), and torch eager, measured in the same run.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python bench/bench_bilinear.py

A figure is the best of several rounds of the mean time per call (_common.per_call); the three
take turns in each round. torch is optional.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import reftrace  # noqa: E402
from _common import per_call  # noqa: E402
from reftrace.ops import linear_einsum  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None

SHAPES = [(32, 16, 16, 8), (4, 3, 5, 6), (128, 64, 64, 32)]  # batch, in1, in2, out


def main():
    array_loop = linear_einsum._unrolled_on_arrays
    print(f"{'batch,in1,in2,out':>20} {'op loop us':>11} {'array loop us':>14} {'torch us':>9} "
          f"{'speedup':>8} {'rt/torch':>9}")
    for n, i1, i2, o in SHAPES:
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal(s).astype(np.float32) for s in ((n, i1), (n, i2), (o, i1, i2), (o,))]
        rt = [reftrace.from_numpy(a) for a in arrays]

        def with_loop(loop):
            def call():
                linear_einsum._unrolled_on_arrays = loop
                try:
                    reftrace.nn.functional.bilinear(*rt)
                finally:
                    linear_einsum._unrolled_on_arrays = array_loop
            return call
        fns = {"ops": with_loop(lambda *args: False), "arrays": with_loop(array_loop)}
        if torch is not None:
            th = [torch.from_numpy(a) for a in arrays]
            fns["torch"] = lambda: torch.nn.functional.bilinear(*th)
        us = {k: t * 1e6 for k, t in per_call(fns, repeat=7, min_time=0.05).items()}
        th_us = us.get("torch", float("nan"))
        print(f"{f'{n},{i1},{i2},{o}':>20} {us['ops']:11.1f} {us['arrays']:14.1f} {th_us:9.1f} "
              f"{us['ops'] / us['arrays']:7.1f}x {us['arrays'] / th_us:8.1f}x")


if __name__ == "__main__":
    main()
