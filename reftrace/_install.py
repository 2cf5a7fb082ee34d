"""Expose the op table as torch's Python API: ``reftrace.add``, ``Tensor.add``, ``x + y``.

Functions and methods are generated from each op's ``variants`` (as native_functions.yaml's
``variants: function, method``), so an op is registered in exactly one place. Names that
reftrace defines by hand (Python-level functions, like torch's own Python wrappers) win.
"""
from . import ops
from .ops import _registry
from .ops._deprecated import method_wrapper
from ._tensor import Tensor


def _self_position(packet):
    """Where a method's tensor goes among the schema's arguments: the parameter named ``self``
    (torch binds it by name: ``x.where(cond, y)`` is ``where(cond, x, y)``)."""
    positions = {[a.name for a in ov.schema.arguments].index("self")
                 for ov in packet.overloads
                 if "method" in ov.variants and any(a.name == "self" for a in ov.schema.arguments)}
    if len(positions) > 1:
        raise RuntimeError(f"{packet.name}: method overloads disagree on where self goes")
    return positions.pop() if positions else 0


def _unary_overload(packet):
    """(overload, appended defaults) that ``x.name()`` binds to on a plain tensor (the packet's
    own fast path, see OpPacket.tensor_overload), or None where that path does not apply."""
    fast = packet.tensor_overload(1)
    if fast is None or fast[1] is None or fast[0].return_type is not None:
        return None  # (list defaults are copied per call, named tuples built: the packet's path)
    return fast


def _method(packet):
    at = _self_position(packet)
    call = packet.__call__  # (bound once: calling the packet itself looks __call__ up each time)
    unary = _unary_overload(packet) if at == 0 else None
    if unary is not None:
        ov, tail = unary

        def method(self, *args, **kwargs):
            # x.relu(), x.sum(): what the packet's fast path would bind, without the packet
            # call; dispatched through _registry's name, as every call (tests spy on it)
            if not args and not kwargs and type(self) is Tensor:
                return _registry.dispatch(ov, [self, *tail])
            try:  # (free when nothing raises)
                return call(self, *args, **kwargs)
            except TypeError as e:
                raise _registry.method_error(e, packet) from None
    elif at == 0:
        def method(self, *args, **kwargs):
            try:
                return call(self, *args, **kwargs)
            except TypeError as e:
                raise _registry.method_error(e, packet) from None
    else:
        def method(self, *args, **kwargs):
            return packet(*args[:at], self, *args[at:], **kwargs)
    method.__name__ = packet.name.split("::")[1]
    method.__qualname__ = "Tensor." + method.__name__
    return method


# What install put where (packet names), in op-table order: the stub generator
# (tests/gen_stubs.py) types exactly these, so the stubs follow the same "hand-written wins" rule
FUNCTIONS: "list[str]" = []
METHODS: "list[str]" = []


def install(namespace):
    """Put every function variant in ``namespace`` (a module dict) and every method on Tensor."""
    for name, packet in ops.PACKETS.items():
        short = name.split("::")[1]
        variants = {v for ov in packet.overloads for v in ov.variants}
        if "function" in variants and short not in namespace:
            namespace[short] = packet
            FUNCTIONS.append(name)
        if "method" in variants and short not in Tensor.__dict__:
            method = _method(packet)
            if packet.deprecated:  # x.add_(alpha, other): binds with self left out
                method = method_wrapper(packet, method)
            setattr(Tensor, short, method)
            METHODS.append(name)
