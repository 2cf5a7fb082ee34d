"""ESPCN super-resolution: convolutions in low resolution, then PixelShuffle to a 3x larger
image; reflection padding keeps the borders.

    python -m reftrace trace examples/super_resolution.py
"""
import reftrace as torch
from reftrace import nn


class ESPCN(nn.Module):
    def __init__(self, scale=3, channels=1, width=16):
        super().__init__()
        self.body = nn.Sequential(
            nn.ReflectionPad2d(2), nn.Conv2d(channels, width, 5), nn.Tanh(),
            nn.Conv2d(width, width // 2, 3, padding=1, padding_mode="replicate"), nn.Tanh(),
            nn.Conv2d(width // 2, channels * scale * scale, 3, padding=1),
        )
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, x):
        return torch.sigmoid(self.shuffle(self.body(x)))


model = ESPCN().eval()
EXAMPLE_INPUTS = torch.randn(1, 1, 12, 10)
CHECK_INPUTS = [(torch.randn(2, 1, 9, 14),)]
