"""The op table. Each module in this package registers one family of kernels (arithmetic,
reductions, shape, ...); importing the package imports every module, so adding a family is adding
a file. Modules whose names start with '_' are helpers, not families."""
import importlib
import pkgutil

from . import _registry
from ._registry import OVERLOADS, PACKETS, get_packet, op
from ._namespace import aten

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

# after every family: each out= overload pairs with a functional kernel registered above
from ._out import register_all as _register_out  # noqa: E402
_register_out()
# then the deprecated Python signatures, which call the regular overloads
from ._deprecated import install as _install_deprecated  # noqa: E402
_install_deprecated()

__all__ = ["OVERLOADS", "PACKETS", "aten", "get_packet", "op"]
