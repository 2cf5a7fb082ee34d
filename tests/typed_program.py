"""A typed user program written the way a torch user writes one, against `import reftrace as torch`.

tests/test_types.py runs mypy on it (0 errors, and the reveal_type lines must say Tensor) and
runs it (main()), so what the types promise is also what happens.
"""
from __future__ import annotations

import io
from typing import TYPE_CHECKING

import reftrace as torch
import reftrace.nn.functional as F
from reftrace import Tensor, nn


class Block(nn.Module):
    """A residual conv block: layers, F.*, Tensor methods and operators."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(channels)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: Tensor) -> Tensor:
        y = F.relu(self.bn(self.conv(x)))
        return self.drop(y) + x


class Net(nn.Module):
    def __init__(self, n_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(1, 8, 3, padding=1)
        self.blocks = nn.Sequential(Block(8), Block(8))
        self.head = nn.Linear(8, n_classes)

    def forward(self, x: Tensor) -> Tensor:
        x = F.max_pool2d(torch.relu(self.stem(x)), 2)
        x = self.blocks(x)
        x = x.mean(dim=(2, 3))                 # Tensor methods from the op table
        x = x.view(x.size(0), -1)              # varargs int list; size(0) is an int
        return F.log_softmax(self.head(x), dim=1)


def losses(logits: Tensor, target: Tensor) -> tuple[Tensor, float]:
    loss = F.nll_loss(logits, target)
    probs = logits.exp()
    top = probs.max(dim=1)                     # a named tuple, as torch.return_types.max
    agree = (top.indices == target).float().mean()
    return loss, float(agree.item())


def tensor_ops() -> Tensor:
    a = torch.zeros(2, 3)
    b = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    c = torch.arange(6).reshape(2, 3).to(torch.float32)
    d = torch.cat([a, c], dim=0)
    e = torch.where(d > 1, d, torch.zeros_like(d))
    s: torch.Size = e.shape
    n: int = e.numel() + s[0] + e.dim()
    f = torch.matmul(a, c.t()) * 2.0 + 1 - torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    chunks: tuple[Tensor, ...] = torch.split(f, 1)
    parts = f.chunk(2, dim=0)
    stacked = torch.stack(list(parts) + list(chunks))
    g = (b.sum() * 3).double()
    g.backward()
    grad = b.grad
    assert grad is not None
    h = torch.softmax(stacked, -1).clamp(min=0.0, max=1.0)
    dt: torch.dtype = h.dtype
    assert dt == torch.float and n > 0
    return h + grad.sum().float()


def trace_and_save(model: Net, x: Tensor) -> Tensor:
    traced = torch.jit.trace(model, x)         # a TopLevelTracedModule
    print(traced.graph)
    print(traced.code)
    y: Tensor = traced(x)
    buf = io.BytesIO()
    torch.jit.save(traced, buf)
    buf.seek(0)
    loaded = torch.jit.load(buf)
    z: Tensor = loaded(x)

    def fn(a: Tensor, b: Tensor) -> Tensor:
        return torch.relu(a) * b.sigmoid()
    traced_fn = torch.jit.trace(fn, (x, x))    # a ScriptFunction
    print(traced_fn.graph, traced_fn.code)
    w: Tensor = traced_fn(x, x)

    state = model.state_dict()
    sbuf = io.BytesIO()
    torch.save(state, sbuf)
    sbuf.seek(0)
    model.load_state_dict(torch.load(sbuf))
    return y + z + w.sum()


def main() -> None:
    torch.manual_seed(0)
    model = Net().eval()
    x = torch.randn(2, 1, 8, 8)
    with torch.no_grad():
        logits = model(x)
        loss, acc = losses(logits, torch.tensor([1, 2]))
    params = sum(p.numel() for p in model.parameters())
    assert params > 0 and 0.0 <= acc <= 1.0
    print(loss.item(), tensor_ops().shape)
    print(trace_and_save(model, x).shape)
    if TYPE_CHECKING:
        reveal_type(torch.relu(x))  # noqa: F821  (mypy: Revealed type is "reftrace._tensor.Tensor")


if __name__ == "__main__":
    main()
