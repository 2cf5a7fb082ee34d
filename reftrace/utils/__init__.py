"""torch.utils: the pieces reftrace needs (``hooks.RemovableHandle``)."""
from . import hooks  # noqa: F401
