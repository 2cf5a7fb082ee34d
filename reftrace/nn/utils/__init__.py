"""torch.nn.utils: the helpers of torch/nn/utils, one file each as in torch."""
from . import rnn  # noqa: F401
