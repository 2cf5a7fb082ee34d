"""torch's deprecated Python signatures (tools/autograd/deprecated.yaml): the pre-1.0 argument
orders that old code still uses, ``p.add_(-lr, grad)``, ``exp_avg_sq.addcmul_(1 - beta2, g, g)``,
``torch.addmm(beta, M, mat1, mat2)``. Python binds them after every regular signature has failed;
each stands for a call of a regular ATen overload with its arguments reordered (what the tracer
records), and the first one a process uses warns, once (TORCH_WARN_ONCE in
python_arg_parser.cpp).

The table (reftrace/ops/_deprecated_table.py) is generated from torch by tests/gen_deprecated.py:
the schemas, the ATen calls, and torch's warning text for the function and the method form.
"""
from .._frames import warn_at_caller
from .._schema import parse_schema
from ._deprecated_table import DEPRECATED
from ._registry import PACKETS, NoMatch, OpOverload, dispatch

_WARNED = []          # the one TORCH_WARN_ONCE of the parser: the first use warns, never again
_METHOD_CALLS = [0]   # > 0 while a Tensor method of a packet with deprecated signatures binds


class DeprecatedSignature:
    def __init__(self, schema_text, call, function_warning, method_warning, target):
        self.binder = OpOverload(parse_schema(schema_text), None, False, ())  # its bind() only
        self.names = [a.name for a in self.binder.schema.arguments]
        self.self_index = self.names.index("self")
        self.warnings = (function_warning, method_warning)
        self.target = target
        # C++ passes an out= overload's out tensors first, then the schema's order
        args = target.schema.arguments
        order = [a for a in args if a.is_write and a.kwarg_only] + \
                [a for a in args if not (a.is_write and a.kwarg_only)]
        inner = [e.strip() for e in call.split("(", 1)[1].rstrip(")").split(",")]
        source = {a.name: e for a, e in zip(order, inner)}
        # per target argument: the deprecated argument it reads, or a constant (the `1` of
        # `addmm(self, mat1, mat2, beta, 1)`)
        self.plan = [(True, self.names.index(source[a.name])) if source[a.name] in self.names
                     else (False, int(source[a.name])) for a in args]

    def call(self, args, kwargs, method):
        if method:   # the method wrapper put self first; the deprecated order has it elsewhere
            args = args[1:self.self_index + 1] + args[:1] + args[self.self_index + 1:]
        bound = self.binder.bind(args, kwargs)   # NoMatch when it does not fit
        if not _WARNED:
            _WARNED.append(True)
            warn_at_caller(self.warnings[1 if method else 0] or self.warnings[0] or self.warnings[1])
        return dispatch(self.target, [bound[v] if is_arg else v for is_arg, v in self.plan])


def call(packet, args, kwargs, error):
    """Bind to packet's deprecated signatures after its regular ones failed; else raise error."""
    method = _METHOD_CALLS[0] > 0
    for sig in packet.deprecated:
        try:
            return sig.call(args, kwargs, method)
        except NoMatch:
            continue
    raise error


def method_wrapper(packet, method):
    """The Tensor method of a packet with deprecated signatures: marks the call as a method
    call, whose deprecated form has no self parameter (and its own warning text)."""
    def deprecated_aware(self, *args, **kwargs):
        _METHOD_CALLS[0] += 1
        try:
            return method(self, *args, **kwargs)
        finally:
            _METHOD_CALLS[0] -= 1
    deprecated_aware.__name__, deprecated_aware.__qualname__ = method.__name__, method.__qualname__
    return deprecated_aware


def _target(call):
    name = call.split("(", 1)[0]
    is_out = name.endswith("_out")
    packet = PACKETS.get("aten::" + (name[:-4] if is_out else name))
    n = call.count(",") + 1
    for ov in packet.overloads if packet else ():
        if ov.python_hidden or (ov.overload == "out") != is_out:
            continue
        if len(ov.schema.arguments) == n and (is_out or not ov.out_names):
            return ov
    return None


def install():
    """Attach each deprecated signature to its packet (those reftrace has the target of)."""
    for schema_text, call, fn_warning, method_warning in DEPRECATED:
        packet = PACKETS.get("aten::" + schema_text.split("(", 1)[0])
        target = _target(call)
        if packet is None or target is None:
            continue
        if packet.deprecated is None:
            packet.deprecated = []
        packet.deprecated.append(DeprecatedSignature(schema_text, call, fn_warning, method_warning,
                                                     target))
