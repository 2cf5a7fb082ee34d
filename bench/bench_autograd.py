"""Forward + backward of an MLP and a small CNN: reftrace vs torch, in the same run.

    python bench/bench_autograd.py            # full run
    python bench/bench_autograd.py --quick    # fewer repeats

Both libraries run single-threaded (torch.set_num_threads(1); OMP/OPENBLAS/MKL threads 1, set
before NumPy loads). One step is: zero the gradients, forward, a sum loss, backward. Same
parameters on both sides (torch's are copied into reftrace). A figure is the best of several
rounds of the mean time per step, the libraries taking turns in each round.

Target (issue 9): the MLP step within 3x torch's.
"""
import argparse
import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

# run from a checkout without installing: the repository root is one level up
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import reftrace  # noqa: E402
from _common import per_call  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None


def mlp(m):
    nn = m.nn
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def cnn(m):
    nn = m.nn
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 4 * 4, 10))


MODELS = {"mlp (batch 32, 64-128-128-10)": (mlp, (32, 64)),
          "cnn (batch 8, 3x16x16, conv-bn-pool x2)": (cnn, (8, 3, 16, 16))}


def step(model, x):
    def run():
        for p in model.parameters():
            p.grad = None
        model(x).sum().backward()
    return run


def measure(build, shape, repeat, min_time):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    fns = {}
    r_model = build(reftrace)
    if torch is not None:
        torch.manual_seed(0)
        t_model = build(torch)
        r_model.load_state_dict({k: reftrace.from_numpy(v.detach().numpy().copy())
                                 for k, v in t_model.state_dict().items()})
        fns["torch"] = step(t_model, torch.from_numpy(x.copy()))
    fns["reftrace"] = step(r_model, reftrace.from_numpy(x.copy()))
    return per_call(fns, repeat, min_time)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    args = p.parse_args(argv)
    repeat, min_time = (3, 0.1) if args.quick else (7, 0.3)
    print(f"numpy {np.__version__}, reftrace {reftrace.__version__}, "
          + (f"torch {torch.__version__} ({torch.get_num_threads()} thread)" if torch
             else "torch not installed"))
    head = f"{'model':<42} {'reftrace ms':>12} {'torch ms':>10} {'rt/torch':>9}  target"
    print(head)
    print("-" * len(head))
    for name, (build, shape) in MODELS.items():
        row = measure(build, shape, repeat, min_time)
        rt, th = row["reftrace"], row.get("torch")
        ratio = rt / th if th else None
        target = "-" if ratio is None or not name.startswith("mlp") else \
            ("ok" if ratio <= 3.0 else "over 3x torch")
        print(f"{name:<42} {rt * 1e3:12.3f} {th * 1e3 if th else float('nan'):10.3f} "
              f"{(f'{ratio:8.2f}x' if ratio else '-'):>9}  {target}")


if __name__ == "__main__":
    main()
