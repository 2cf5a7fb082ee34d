"""Expose the op table as torch's Python API: ``reftrace.add``, ``Tensor.add``, ``x + y``.

Functions and methods are generated from each op's ``variants`` (as native_functions.yaml's
``variants: function, method``), so an op is registered in exactly one place. Names that
reftrace defines by hand (Python-level functions, like torch's own Python wrappers) win.
"""
from . import ops
from ._tensor import Tensor


def _method(packet):
    def method(self, *args, **kwargs):
        return packet(self, *args, **kwargs)
    method.__name__ = packet.name.split("::")[1]
    method.__qualname__ = "Tensor." + method.__name__
    return method


def install(namespace):
    """Put every function variant in ``namespace`` (a module dict) and every method on Tensor."""
    for name, packet in ops.PACKETS.items():
        short = name.split("::")[1]
        variants = {v for ov in packet.overloads for v in ov.variants}
        if "function" in variants and short not in namespace:
            namespace[short] = packet
        if "method" in variants and short not in Tensor.__dict__:
            setattr(Tensor, short, _method(packet))
