"""torch.signal.windows (torch/signal/windows/windows.py): window functions."""
from .windows import (bartlett, blackman, cosine, exponential, gaussian, general_cosine,  # noqa: F401
                      general_hamming, hamming, hann, kaiser, nuttall)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]

from ..._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("torch.signal.windows", "reftrace.signal.windows")
