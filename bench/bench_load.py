"""Loading a ResNet-18-sized model (11.7M parameters, ~47 MB): reftrace vs torch, one run.

    .venv/bin/python bench/bench_load.py            # 7 rounds
    .venv/bin/python bench/bench_load.py --quick    # 2 repeats

torch builds a ResNet-18 (defined here: torchvision is not a dependency), traces it and saves
it twice: ``torch.jit.save`` (a TorchScript archive) and ``torch.save(state_dict)``. Then, in
the same run, single-threaded, the best of N rounds (the loaders take turns in each) of:

- state dict: ``reftrace.load`` vs ``torch.load`` (weights_only=True, torch's default);
- archive: ``reftrace.jit.load`` vs ``torch.jit.load``, when reftrace.jit.load exists on this
  branch; reftrace's reading of the archive's data (``read_torchscript_archive``: zip, pickles,
  storages, code text, without building the module) is timed too.
"""
import os
import sys
import tempfile

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import reftrace  # noqa: E402
from reftrace.jit._serialization import read_torchscript_archive  # noqa: E402
from _common import best  # noqa: E402

nn = torch.nn


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNet18(nn.Module):
    def __init__(self, n_classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, n_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


def main(repeat):
    torch.set_num_threads(1)
    model = ResNet18().eval()
    n_params = sum(p.numel() for p in model.parameters())
    tmp = tempfile.mkdtemp()
    archive, state = os.path.join(tmp, "resnet18.pt"), os.path.join(tmp, "resnet18_sd.pt")
    torch.jit.save(torch.jit.trace(model, torch.randn(1, 3, 64, 64)), archive)
    torch.save(model.state_dict(), state)
    print(f"ResNet-18: {n_params / 1e6:.1f}M parameters; archive {os.path.getsize(archive) / 1e6:.1f} MB, "
          f"state dict {os.path.getsize(state) / 1e6:.1f} MB; torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread; best of {repeat}")
    rows = [("state dict: reftrace.load", lambda: reftrace.load(state)),
            ("state dict: torch.load", lambda: torch.load(state)),
            ("archive: read_torchscript_archive (data only)", lambda: read_torchscript_archive(archive)),
            ("archive: torch.jit.load", lambda: torch.jit.load(archive))]
    jit_load = getattr(reftrace.jit, "load", None)
    if jit_load is not None:
        rows.insert(3, ("archive: reftrace.jit.load", lambda: jit_load(archive)))
    for _, fn in rows:
        fn()  # warm: imports, file cache
    # the loaders take turns in each round, so a noisy moment on a shared machine slows all alike
    times = dict.fromkeys(dict(rows), float("inf"))
    for _ in range(repeat):
        for name, fn in rows:
            times[name] = min(times[name], best(fn, 1))
    for name in times:
        print(f"  {name:48s} {times[name] * 1e3:8.1f} ms")
    print(f"ratio state dict reftrace/torch: "
          f"{times['state dict: reftrace.load'] / times['state dict: torch.load']:.2f}x")
    if jit_load is not None:
        print(f"ratio archive reftrace.jit.load/torch.jit.load: "
              f"{times['archive: reftrace.jit.load'] / times['archive: torch.jit.load']:.2f}x")
    print(f"ratio archive data read/torch.jit.load: "
          f"{times['archive: read_torchscript_archive (data only)'] / times['archive: torch.jit.load']:.2f}x")


if __name__ == "__main__":
    main(2 if "--quick" in sys.argv else 7)
