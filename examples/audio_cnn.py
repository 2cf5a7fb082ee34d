"""A 1d CNN for raw audio (M5-style): a wide strided first convolution, batch norm, max pooling,
instance norm, GELU, global average pooling over time, a linear classifier.

    python -m reftrace trace examples/audio_cnn.py

AdaptiveAvgPool1d(1) records aten::adaptive_avg_pool1d, so the trace accepts clips of any
length (CHECK_INPUTS uses a longer one).
"""
import reftrace as torch
from reftrace import nn
import reftrace.nn.functional as F


class AudioCNN(nn.Module):
    def __init__(self, n_classes=5, width=16):
        super().__init__()
        self.conv1 = nn.Conv1d(1, width, 80, stride=4)
        self.bn1 = nn.BatchNorm1d(width)
        self.pool1 = nn.MaxPool1d(4)
        self.conv2 = nn.Conv1d(width, width * 2, 3, padding=1)
        self.norm2 = nn.InstanceNorm1d(width * 2, affine=True)
        self.pool2 = nn.AvgPool1d(4)
        self.conv3 = nn.Conv1d(width * 2, width * 2, 3, dilation=2, padding=2)
        self.gap = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(width * 2, n_classes)

    def forward(self, x):
        x = self.pool1(F.relu(self.bn1(self.conv1(x))))
        x = self.pool2(F.gelu(self.norm2(self.conv2(x))))
        x = F.silu(self.conv3(x))
        return F.log_softmax(self.fc(self.gap(x).squeeze(-1)), dim=-1)


model = AudioCNN().eval()
EXAMPLE_INPUTS = torch.randn(2, 1, 1600)
CHECK_INPUTS = [(torch.randn(3, 1, 2400),)]
