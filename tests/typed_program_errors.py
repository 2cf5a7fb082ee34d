"""Calls a type checker must reject, as it rejects them against torch's own stubs.

Each line marked `# error` is an error for mypy here and also with `import torch` (checked by
tests/test_types.py: always against reftrace's types, with REFTRACE_FULL=1 against torch's too);
the unmarked lines are not. Never run: it only has to type-check (or not).
"""
import reftrace as torch

x = torch.zeros(2)
torch.relu(1)  # error: an int is no Tensor
x.view("a")  # error: a str is no size
x.nosuch  # error: Tensor has no such attribute
torch.cat(x)  # error: cat takes a sequence of tensors
y: int = x.sum()  # error: a Tensor is no int
x.size("0")  # error: a dimension is an int
torch.max(x, dim="a")  # error: a dimension is an int
torch.zeros(2, dtype="float")  # error: a dtype is no str
x.clamp(min="0")  # error: a bound is a number or a tensor
torch.nn.functional.relu(x, inplace=1.5)  # error: inplace is a bool
z: float = torch.randn(2).item()
w: torch.Size = x.shape
