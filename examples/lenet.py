"""LeNet-5 style CNN: convolutions, max pooling, a flatten whose size is traced, a classifier.

    python -m reftrace trace examples/lenet.py

`x.view(x.size(0), -1)` records aten::size and prim::NumToTensor, so the trace still works for
another batch size; `CHECK_INPUTS` has the checker confirm that on a batch of 3.
"""
import reftrace as torch
from reftrace import nn
import reftrace.nn.functional as F


class LeNet(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, n_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(x.size(0), -1)   # the batch size is read from x, not baked in
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


model = LeNet().eval()
EXAMPLE_INPUTS = torch.randn(2, 1, 28, 28)
# check inputs: each entry is one set of arguments (a tuple), here a different batch size
CHECK_INPUTS = [(torch.randn(3, 1, 28, 28),)]
