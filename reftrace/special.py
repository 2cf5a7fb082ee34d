"""torch.special: the ops named aten::special_<x> as special.<x>; torch's names reftrace lacks raise
"reftrace does not implement torch.special.<x> yet" (reftrace/_missing.py)."""
from ._missing import install_namespace as _install

__all__ = _install(globals(), "special", "reftrace.special")
