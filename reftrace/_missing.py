"""Names torch has and reftrace does not (yet): a clear error instead of a bare AttributeError.

``reftrace.einsum`` (or ``x.unfold``, ``reftrace.linalg.svd``) raises ``NotImplementedInReftrace``,
which says so; it is an AttributeError, so ``hasattr`` stays False and code that probes for a
feature keeps working. torch's public names are the checked-in list ``_torch_names.py``
(tests/gen_torch_names.py generates it from torch 2.13); ``python -m reftrace coverage`` prints
which of them reftrace implements.
"""
import functools


class NotImplementedInReftrace(AttributeError):
    """A torch name reftrace does not implement yet."""


@functools.lru_cache(maxsize=None)
def torch_names(namespace):
    from ._torch_names import TORCH_NAMES
    return frozenset(TORCH_NAMES.get(namespace, ()))


def missing(namespace, name, owner):
    """The error for ``owner.name`` (``owner`` as Python's AttributeError names it)."""
    if name in torch_names(namespace):
        return NotImplementedInReftrace(
            f"reftrace does not implement {namespace}.{name} yet (python -m reftrace coverage lists "
            f"what it implements)")
    return AttributeError(f"{owner} has no attribute '{name}'")


def module_getattr(namespace, module_name):
    """A PEP 562 module ``__getattr__`` raising ``missing``'s error."""
    def __getattr__(name):
        if name.startswith("__"):  # (import machinery probes: __path__, __file__ ...)
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        raise missing(namespace, name, f"module '{module_name}'")
    return __getattr__


def install_namespace(namespace, prefix, module_name):
    """torch.linalg / torch.special / torch.fft: ops ``aten::<prefix>_<x>`` as ``<x>``, plus the
    missing-name error. Returns the names installed."""
    from .ops import PACKETS
    names = {}
    for qualified, packet in PACKETS.items():
        short = qualified.split("::")[1]
        if short.startswith(prefix + "_") and \
                any("function" in ov.variants for ov in packet.overloads):
            names[short[len(prefix) + 1:]] = packet
    namespace.update(names)
    namespace["__getattr__"] = module_getattr(f"torch.{prefix}", module_name)
    return sorted(names)
