"""torch.fft: the ops named aten::fft_<x> as fft.<x>; torch's names reftrace lacks raise
"reftrace does not implement torch.fft.<x> yet" (reftrace/_missing.py)."""
from ._missing import install_namespace as _install

__all__ = _install(globals(), "fft", "reftrace.fft")
