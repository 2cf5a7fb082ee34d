"""Expose the op table as torch's Python API: ``reftrace.add``, ``Tensor.add``, ``x + y``.

Functions and methods are generated from each op's ``variants`` (as native_functions.yaml's
``variants: function, method``), so an op is registered in exactly one place. Names that
reftrace defines by hand (Python-level functions, like torch's own Python wrappers) win.
"""
from . import ops
from ._dispatch import PLAIN
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


def _varargs_entry(packet, n):
    """The varargs method's entry for ``n`` ints (see _method)."""
    fast = packet.int_varargs(n + 1)
    if fast is None:
        return None
    ov, tail = fast
    # with no tail, self is the one tensor argument (the other is the int list): dispatch just
    # calls the kernel when self does not require grad (see _dispatch.PLAIN)
    return ov, tail, (ov.kernel if not tail else None)


def _method(packet):
    at = _self_position(packet)
    call = packet.__call__  # (bound once: calling the packet itself looks __call__ up each time)
    unary = _unary_overload(packet) if at == 0 else None
    varargs = at == 0 and any(ov.varargs_index == 1 for ov in packet.overloads)
    if unary is not None:
        ov, tail = unary
        kernel = ov.kernel
        one = len(tail) == 1  # (a tail of one default spelled out: kernel(*args) packs a tuple)
        t0 = tail[0] if one else None
        short = len(tail) <= 1

        def method(self, *args, **kwargs):
            # x.relu(), x.sum(): what the packet's fast path would bind, without the packet call
            if not args and not kwargs and type(self) is Tensor:
                if PLAIN[0] and short and not self.requires_grad:
                    # what dispatch does then (see _dispatch.PLAIN), one frame and list fewer
                    return kernel(self, t0) if one else kernel(self)
                # dispatched through _registry's name, as every call (tests spy on it)
                return _registry.dispatch(ov, [self, *tail])
            try:  # (free when nothing raises)
                return call(self, *args, **kwargs)
            except TypeError as e:
                raise _registry.method_error(e, packet) from None
    elif varargs:
        # number of varargs -> (overload, its tail defaults, its kernel when dispatch would
        # just call it) or None: what the packet's search finds for a tensor then ints
        # (OpPacket._int_varargs), worked out by the first call of each length
        fasts = {}

        def method(self, *args, **kwargs):
            # x.view(4, -1), x.permute(1, 0): sizes as varargs, without the packet call
            if not kwargs and type(self) is Tensor:
                fast = fasts.get(len(args))
                if fast is not None:
                    for a in args:
                        if type(a) is not int:
                            break
                    else:
                        ov, tail, kernel = fast
                        if kernel is not None and PLAIN[0] and not self.requires_grad:
                            return kernel(self, list(args))  # (see _dispatch.PLAIN)
                        return _registry.dispatch(ov, [self, list(args), *[
                            list(d) if type(d) is list else d for d in tail]])
                elif args and len(args) not in fasts:
                    fasts[len(args)] = _varargs_entry(packet, len(args))
            try:
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
