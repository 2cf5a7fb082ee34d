"""torch.linalg: the ops named aten::linalg_<x> as linalg.<x>; torch's names reftrace lacks raise
"reftrace does not implement torch.linalg.<x> yet" (reftrace/_missing.py)."""
from ._missing import install_namespace as _install

__all__ = _install(globals(), "linalg", "reftrace.linalg")
from .ops.linalg import LinAlgError  # noqa: E402,F401  torch.linalg.LinAlgError
