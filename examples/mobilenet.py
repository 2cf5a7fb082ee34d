"""A MobileNetV3-style network: a strided stem with hardswish, inverted residual blocks
(1x1 expansion, depthwise 3x3 convolution, squeeze-and-excitation with hardsigmoid, 1x1
projection), adaptive average pooling and a classifier with dropout.

    python -m reftrace trace examples/mobilenet.py

Depthwise convolutions record aten::_convolution with groups = channels; the squeeze-excite
gate is AdaptiveAvgPool2d(1) -> conv -> relu -> conv -> hardsigmoid -> mul.
"""
import reftrace as torch
from reftrace import nn


class SqueezeExcite(nn.Module):
    def __init__(self, channels, squeeze):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.relu = nn.ReLU()
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.gate = nn.Hardsigmoid()

    def forward(self, x):
        return x * self.gate(self.fc2(self.relu(self.fc1(self.pool(x)))))


class InvertedResidual(nn.Module):
    def __init__(self, c_in, expand, c_out, stride, use_se, activation):
        super().__init__()
        self.use_residual = stride == 1 and c_in == c_out
        layers = [nn.Conv2d(c_in, expand, 1, bias=False), nn.BatchNorm2d(expand), activation(),
                  nn.Conv2d(expand, expand, 3, stride, 1, groups=expand, bias=False),
                  nn.BatchNorm2d(expand), activation()]
        if use_se:
            layers.append(SqueezeExcite(expand, max(expand // 4, 8)))
        layers += [nn.Conv2d(expand, c_out, 1, bias=False), nn.BatchNorm2d(c_out)]
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        out = self.block(x)
        return x + out if self.use_residual else out


class MobileNetV3(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16),
                                  nn.Hardswish())
        self.blocks = nn.Sequential(
            InvertedResidual(16, 16, 16, 2, True, nn.ReLU),
            InvertedResidual(16, 72, 24, 2, False, nn.ReLU6),
            InvertedResidual(24, 88, 24, 1, False, nn.ReLU6),
            InvertedResidual(24, 96, 40, 2, True, nn.Hardswish),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(40, 64), nn.Hardswish(),
                                        nn.Dropout(0.2), nn.Linear(64, n_classes))

    def forward(self, x):
        return self.classifier(self.pool(self.blocks(self.stem(x))))


model = MobileNetV3().eval()
EXAMPLE_INPUTS = torch.randn(2, 3, 32, 32)
CHECK_INPUTS = [(torch.randn(3, 3, 48, 40),)]
