"""A small UNet: two down steps (max pooling), two up steps (bilinear upsampling and a
transposed convolution), skip connections by concatenation, a 1x1 head.

    python -m reftrace trace examples/unet.py

nn.Upsample(scale_factor=2) records aten::upsample_bilinear2d with the scale factors and no
size, so the trace works for any image size; torch.cat records the skip connections.
"""
import reftrace as torch
from reftrace import nn


def block(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out),
                         nn.ReLU(inplace=True), nn.Conv2d(c_out, c_out, 3, padding=1),
                         nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, c_in=3, n_classes=2, width=8):
        super().__init__()
        self.enc1 = block(c_in, width)
        self.enc2 = block(width, width * 2)
        self.bottom = block(width * 2, width * 4)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
        self.dec2 = block(width * 4 + width * 2, width * 2)
        self.up1 = nn.ConvTranspose2d(width * 2, width, 2, stride=2)
        self.dec1 = block(width * 2, width)
        self.head = nn.Conv2d(width, n_classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        b = self.bottom(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.head(d1)


model = UNet().eval()
EXAMPLE_INPUTS = torch.randn(1, 3, 16, 16)
CHECK_INPUTS = [(torch.randn(2, 3, 24, 32),)]
