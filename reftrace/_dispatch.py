"""The funnel every op call goes through.

    OpOverload.bind -> dispatch(op, args) -> kernel            (eager)
                                          -> tracer.record(...)  (while tracing)

The tracer hooks in here and nowhere else: it sees the op overload, the bound arguments (every
schema argument materialised) and the results. Kernels never know whether they are traced.

requires_grad is decided here too, once for all ops: a floating/complex result requires grad
when grad mode is on and any tensor argument requires grad (torch's autograd rule for
differentiable ops); ops registered with ``differentiable=False`` (detach, comparisons' integral
outputs are covered by the dtype rule) never do.
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
    return run_kernel(op, args)


def run_kernel(op, args):
    """Call the kernel and apply the requires_grad rule (shared by eager, tracer, interpreter)."""
    result = op.kernel(*args)
    if op.differentiable and GRAD.enabled:
        # only the Tensor-typed parameters can require grad (precomputed per overload)
        for i in op.tensor_slots:
            a = args[i]
            if a is None:
                continue
            if type(a) is list:
                if any(e is not None and e.requires_grad for e in a):
                    _mark_requires_grad(result)
                    break
            elif a.requires_grad:
                _mark_requires_grad(result)
                break
    return result


def _mark_requires_grad(result):
    if type(result) in (tuple, list):
        for r in result:
            _mark_requires_grad(r)
    elif hasattr(result, "requires_grad") and (result.dtype.is_floating_point or result.dtype.is_complex):
        result.requires_grad = True
