"""A DCGAN generator: a latent vector up to a 32x32 RGB image through transposed convolutions.

    python -m reftrace trace examples/dcgan.py

Each ConvTranspose2d records aten::_convolution with transposed=True and its output_padding;
BatchNorm2d in eval mode records aten::batch_norm with the running statistics.
"""
import reftrace as torch
from reftrace import nn


class Generator(nn.Module):
    def __init__(self, latent=16, width=8, channels=3):
        super().__init__()
        self.net = nn.Sequential(
            nn.ConvTranspose2d(latent, width * 4, 4, 1, 0, bias=False),   # 1 -> 4
            nn.BatchNorm2d(width * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(width * 4, width * 2, 4, 2, 1, bias=False),  # 4 -> 8
            nn.BatchNorm2d(width * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(width * 2, width, 4, 2, 1, bias=False),      # 8 -> 16
            nn.BatchNorm2d(width),
            nn.ReLU(True),
            nn.ConvTranspose2d(width, channels, 4, 2, 1, bias=False),       # 16 -> 32
            nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z)


model = Generator().eval()
EXAMPLE_INPUTS = torch.randn(2, 16, 1, 1)
CHECK_INPUTS = [(torch.randn(5, 16, 1, 1),)]
