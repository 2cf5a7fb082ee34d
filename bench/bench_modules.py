"""Module tracing cost, reftrace vs torch.jit.trace, side by side in one run.

    python bench/bench_modules.py

For a 10-layer MLP module, a LeNet-style CNN and a ResNet basic block: trace time
(check_trace=False, and with the checker on), and the traced module's call time, each against
torch measured in the same run on the same inputs. Ratios < 1 mean reftrace is faster.
"""
import sys
import warnings

sys.path.insert(0, __file__.rsplit("/bench/", 1)[0])
import reftrace  # noqa: E402
from _common import best  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

warnings.simplefilter("ignore")


def models(lib):
    nn = lib.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(64, 64) for _ in range(10)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x).relu()
            return x

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
            self.fc1, self.fc2, self.fc3 = nn.Linear(256, 120), nn.Linear(120, 84), nn.Linear(84, 10)

        def forward(self, x):
            x = nn.functional.max_pool2d(self.conv1(x).relu(), 2)
            x = nn.functional.max_pool2d(self.conv2(x).relu(), 2)
            x = x.flatten(1)
            return self.fc3(self.fc2(self.fc1(x).relu()).relu())

    class BasicBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(16)
            self.conv2 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(16)

        def forward(self, x):
            out = self.bn1(self.conv1(x)).relu()
            return (self.bn2(self.conv2(out)) + x).relu()

    return [("MLP 10x64", MLP().eval(), (8, 64)), ("LeNet 28x28", LeNet().eval(), (8, 1, 28, 28)),
            ("ResNet block", BasicBlock().eval(), (8, 16, 16, 16))]


def measure(lib, model, shape):
    x = lib.ones(*shape)
    trace = best(lambda: lib.jit.trace(model, x, check_trace=False), 5)
    checked = best(lambda: lib.jit.trace(model, x), 3)
    traced = lib.jit.trace(model, x, check_trace=False)
    traced(x)
    traced(x)
    call = best(lambda: traced(x), 10)
    return trace * 1e3, checked * 1e3, call * 1e3


def main():
    rt_models = models(reftrace)
    th_models = models(torch) if torch is not None else [None] * len(rt_models)
    print(f"{'model':<14} {'trace ms':>18} {'trace+check ms':>22} {'call ms':>18}   (reftrace / torch = ratio)")
    for (name, rt_model, shape), th in zip(rt_models, th_models):
        rt = measure(reftrace, rt_model, shape)
        tt = measure(torch, th[1], shape) if th else None
        cells = []
        for i in range(3):
            if tt:
                cells.append(f"{rt[i]:7.2f}/{tt[i]:7.2f}={rt[i] / tt[i]:4.2f}x")
            else:
                cells.append(f"{rt[i]:7.2f}/    n/a")
        print(f"{name:<14} {cells[0]:>18} {cells[1]:>22} {cells[2]:>18}")


if __name__ == "__main__":
    main()
