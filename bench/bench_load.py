"""Loading a saved model: reftrace.jit.load vs torch.jit.load of the same file, in one run.

    python bench/bench_load.py            # ResNet-18 (11.7M parameters, 47 MB archive)
    python bench/bench_load.py --quick    # one ResNet stage: a rough look in seconds

torch traces a ResNet-18 (written out here, torchvision's layout) and saves it with
torch.jit.save; both libraries then load that file: the best of several loads each, taking turns.
torch parses and compiles the archived code with its C++ frontend; reftrace reads the zip, runs
its restricted unpickler, parses the code with ``ast`` and resolves it against its op table. The
first forward after the load is timed too (both libraries prepare their executors on first use).
Ratios < 1 mean reftrace is faster. Single-threaded, as every benchmark here.
"""
import argparse
import os
import sys
import tempfile
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
import numpy as np  # noqa: E402
import reftrace  # noqa: E402

warnings.simplefilter("ignore")


def resnet18(nn, stages=(2, 2, 2, 2)):
    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            layers, cin = [], 64
            for i, n in enumerate(stages):
                cout = 64 * 2 ** i
                layers.append(nn.Sequential(*[BasicBlock(cin if j == 0 else cout, cout,
                                                         2 if (i and j == 0) else 1) for j in range(n)]))
                cin = cout
            self.layer1, self.layer2, self.layer3, self.layer4 = (layers + [nn.Identity()] * 4)[:4]
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(cin, 1000)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    return ResNet().eval()


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="one stage of one block")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)
    stages = (1,) if args.quick else (2, 2, 2, 2)
    torch.manual_seed(0)
    model = resnet18(torch.nn, stages)
    x = torch.randn(1, 3, 64, 64)
    traced = torch.jit.trace(model, x)
    n_params = sum(p.numel() for p in model.parameters())
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "resnet.pt")
        torch.jit.save(traced, path)
        size = os.path.getsize(path)
        best = {"torch": float("inf"), "reftrace": float("inf")}
        first_call = {}
        for _ in range(args.repeat):  # the libraries take turns
            t, t_mod = timed(lambda: torch.jit.load(path))
            best["torch"] = min(best["torch"], t)
            t, r_mod = timed(lambda: reftrace.jit.load(path))
            best["reftrace"] = min(best["reftrace"], t)
        first_call["torch"], t_out = timed(lambda: t_mod(x))
        first_call["reftrace"], r_out = timed(lambda: r_mod(reftrace.from_numpy(x.numpy())))
    diff = float(np.abs(t_out.detach().numpy() - r_out.detach().numpy()).max())
    print(f"ResNet-18{' (quick: one stage)' if args.quick else ''}: {n_params / 1e6:.1f}M parameters, "
          f"archive {size / 1e6:.1f} MB written by torch {torch.__version__}, torch threads "
          f"{torch.get_num_threads()}, best of {args.repeat}")
    print(f"{'':24}{'torch':>10}{'reftrace':>10}{'ratio':>8}")
    print(f"{'jit.load (s)':24}{best['torch']:>10.3f}{best['reftrace']:>10.3f}"
          f"{best['reftrace'] / best['torch']:>8.2f}")
    print(f"{'first forward (s)':24}{first_call['torch']:>10.3f}{first_call['reftrace']:>10.3f}"
          f"{first_call['reftrace'] / first_call['torch']:>8.2f}")
    print(f"outputs agree to {diff:.1e}")


if __name__ == "__main__":
    main()
