"""The funnel every op call goes through.

    OpOverload.bind -> dispatch(op, args) -> kernel            (eager)
                                          -> tracer.record(...)  (while tracing)

The tracer hooks in here and nowhere else: it sees the op overload, the bound arguments (every
schema argument materialised) and the results. Kernels never know whether they are traced.

Autograd is decided here too, once for all ops: when grad mode is on and any tensor argument
requires grad, the call goes through ``autograd._variable_type.record``, which runs the kernel and
gives the floating/complex results a grad_fn (torch's VariableType layer); ops registered with
``differentiable=False`` (detach, argmax ...) never do. Calls on tensors that do not require grad
pay one loop over the tensor arguments.
"""
import threading

from .autograd.grad_mode import STATE as GRAD


class _ThreadState(threading.local):
    # The active TracingState of this thread (None when not tracing). Set by reftrace.jit's
    # tracer on entry and restored on every exit path.
    tracer = None


STATE = _ThreadState()


def dispatch(op, args):
    tracer = STATE.tracer
    if tracer is not None:
        return tracer.record(op, args)
    if MATH_BITS_LIVE[0]:
        return run_kernel(op, args)
    # run_kernel's common case inlined (no math bits exist yet): the same requires_grad rule as
    # _run_kernel, two Python frames fewer on every eager call
    if op.differentiable and GRAD.enabled:
        slots = op.single_tensor_slots
        if slots is None:
            return _run_kernel(op, args)  # (a Tensor[] parameter: the general loop)
        for i in slots:
            a = args[i]
            if a is not None and a.requires_grad:
                return record(op, args)
    return op.kernel(*args)


def run_kernel(op, args):
    """Call the kernel; when grad mode is on and a tensor argument requires grad, through
    autograd, which records the call's grad_fn (shared by eager, tracer, interpreter).
    Once a tensor with a math bit exists (``x.conj()``), through ``_math_bits`` first."""
    if MATH_BITS_LIVE[0]:
        for i in op.tensor_slots:
            a = args[i]
            if a is not None and (a._mbits if type(a) is not list else has_bits(a)):
                return run_with_bits(op, args, _run_kernel)
    return _run_kernel(op, args)


def _run_kernel(op, args):
    if op.differentiable and GRAD.enabled:
        # only the Tensor-typed parameters can require grad (precomputed per overload)
        for i in op.tensor_slots:
            a = args[i]
            if a is None:
                continue
            if type(a) is list:
                for e in a:
                    if e is not None and e.requires_grad:
                        return record(op, args)
            elif a.requires_grad:
                return record(op, args)
    return op.kernel(*args)


from .autograd._variable_type import record  # noqa: E402  (autograd imports grad mode from here)
from ._math_bits import LIVE as MATH_BITS_LIVE, has_bits, run_with_bits  # noqa: E402
