"""torch.signal: its one submodule, windows."""
from . import windows  # noqa: F401
