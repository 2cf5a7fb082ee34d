"""The funnel every op call goes through.

    OpOverload.bind -> dispatch(op, args) -> kernel            (eager)
                                          -> tracer.record(...)  (while tracing)

The tracer hooks in here and nowhere else: it sees the op overload, the bound arguments (every
schema argument materialised) and the results. Kernels never know whether they are traced.
"""
import threading


class _ThreadState(threading.local):
    # The active TracingState of this thread (None when not tracing). Set by reftrace.jit's
    # tracer on entry and restored on every exit path.
    tracer = None


STATE = _ThreadState()


def dispatch(op, args):
    tracer = STATE.tracer
    if tracer is not None:
        return tracer.record(op, args)
    return op.kernel(*args)
