"""torch.backends: the switches reftrace honours (``mha``: MultiheadAttention's fast path)."""
from . import mha  # noqa: F401
