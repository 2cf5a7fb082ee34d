"""out= overloads (``aten::add.out``), generated from the functional kernels.

torch's structured kernels compute the result as the functional op does, then resize the out
tensor to the result's shape (``resize_output`` in ATen/native/Resize.cpp: with a deprecation
warning when it had elements) and write the values into it, cast to its dtype after the
in-place cast check (TensorIterator: "result type Float can't be cast to the desired output
type Long"). That is what every out overload here does: ``register_all`` pairs each schema of
``_out_schemas.OUT_SCHEMAS`` (torch's, verbatim) with the functional overload of the same op
whose arguments are the out schema's minus the outs (a factory's dtype/layout/device/pin_memory
excepted: out= takes them from the out tensor), as torchgen pairs them for torch's Python
bindings. The tracer records the .out node with the out tensors as inputs and maps them to its
outputs, as torch's tracer does.
"""
from .._dispatch import GRAD
from .._frames import warn_at_caller
from .._promotion import check_inplace_cast
from .._schema import parse_schema
from .._tensor import Tensor, xp_of
from ._out_schemas import OUT_SCHEMAS
from ._registry import OVERLOADS, PACKETS, OpOverload

# arguments an out= call does not take: the out tensor decides them
_FACTORY_OPTIONS = frozenset({"dtype", "layout", "device", "pin_memory"})


def _shape(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def resize_output(out, result):
    """ATen's resize_output + copy: ``out`` takes ``result``'s shape (and, when resized, its
    layout, as a structured kernel's set_output does) and values, cast to out's dtype."""
    check_inplace_cast(result.dtype, out.dtype)
    xp = xp_of(out)
    if out._array.shape != result._array.shape:
        if out._array.size != 0:
            warn_at_caller(
                f"An output with one or more elements was resized since it had shape "
                f"{_shape(out._array.shape)}, which does not match the required output shape "
                f"{_shape(result._array.shape)}. This behavior is deprecated, and in a future PyTorch "
                f"release outputs will not be resized unless they have zero elements. You can "
                f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                f"t.resize_(0).")
        out._array = result._array.astype(out.dtype.np, order="K", copy=True)
        out._stride = result._stride
    else:
        xp.copyto(out._array, result._array, casting="unsafe")
    out._version += 1


def _pair(schema):
    """The functional overload an out schema belongs to, and where each of its arguments comes
    from (an index into the out schema's arguments, or a factory option's name)."""
    packet = PACKETS.get(schema.name)
    if packet is None:
        return None
    outs = {a.name for a in schema.arguments if a.is_write and a.kwarg_only}
    given = {a.name: (i, str(a.type)) for i, a in enumerate(schema.arguments) if a.name not in outs}
    for ov in packet.overloads:
        if ov.schema.is_out or ov.schema.is_inplace:
            continue
        args = ov.schema.arguments
        plan = []
        for a in args:
            if a.name in given and given[a.name][1] == str(a.type):
                plan.append(given[a.name][0])
            elif a.name in _FACTORY_OPTIONS and a.has_default:
                plan.append(a.name)  # taken from the (first) out tensor
            else:
                break
        else:
            if len([p for p in plan if type(p) is int]) == len(given):
                return ov, plan
    return None


def _option(out, name, default):
    # a factory's out= call: the out tensor's dtype and device (torch.ones(2, out=long_tensor))
    if name == "dtype":
        return out.dtype
    if name == "device":
        return out.device
    return default


def _out_kernel(functional, plan, out_positions, inputs, short):
    defaults = functional._defaults

    def kernel(*args):
        if GRAD.enabled and any(isinstance(args[i], Tensor) and args[i].requires_grad
                                for i in inputs + out_positions):
            raise RuntimeError(f"{short}(): functions with out=... arguments don't support automatic "
                               f"differentiation, but one of the arguments requires grad.")
        first = args[out_positions[0]]
        result = functional.kernel(*[args[j] if type(j) is int else _option(first, j, defaults[k])
                                     for k, j in enumerate(plan)])
        if len(out_positions) == 1:
            resize_output(args[out_positions[0]], result)
            return args[out_positions[0]]
        outs = tuple(args[i] for i in out_positions)
        for o, r in zip(outs, result):
            resize_output(o, r)
        return outs
    return kernel


def register_all():
    """Register the out overload of every op reftrace has a functional kernel for."""
    for text in OUT_SCHEMAS:
        name = "aten::" + text.split("(", 1)[0].split(".", 1)[0]
        if name not in PACKETS:
            continue
        schema = parse_schema(text)
        qualified = schema.name + "." + schema.overload
        if qualified in OVERLOADS:
            continue  # written by hand
        paired = _pair(schema)
        if paired is None:
            continue
        functional, plan = paired
        args = schema.arguments
        out_positions = [i for i, a in enumerate(args) if a.is_write and a.kwarg_only]
        inputs = [i for i, a in enumerate(args) if a.type.base == "Tensor" and i not in out_positions
                  and not a.type.is_list]
        kernel = _out_kernel(functional, plan, out_positions, inputs, name.split("::")[1])
        ov = OpOverload(schema, kernel, functional.nondeterministic, ("function",), differentiable=False)
        OVERLOADS[qualified] = ov
        PACKETS[schema.name].overloads.append(ov)
