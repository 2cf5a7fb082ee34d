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
import contextlib
import functools
import threading

from .autograd.grad_mode import STATE as GRAD

# PLAIN[0]: no thread is tracing, no tensor has a math bit and nothing watches the funnel (see
# ``observed``). An op call whose tensor arguments do not require grad then goes straight to its
# kernel: that is what the full rule below decides for it, and the entry points torch binds in C
# (x + y, x.view(4, -1), x[3]: reftrace/_operators.py, _install.py, _indexing.py) check this one
# list item instead of a thread-local tracer, the math bits and grad mode (~100 ns of ~2 us).
PLAIN = [True]
_TRACING = set()       # the threads whose tracer is set
_OBSERVERS = [0]       # open ``observed`` blocks
_LOCK = threading.Lock()


def _refresh():
    PLAIN[0] = not _TRACING and not MATH_BITS_LIVE[0] and not _OBSERVERS[0]


class _ThreadState(threading.local):
    # The active TracingState of this thread (None when not tracing). Set by reftrace.jit's
    # tracer on entry and restored on every exit path.
    tracer = None

    def __setattr__(self, name, value):
        # (reads stay a plain thread-local lookup; a write keeps PLAIN in step, under a lock:
        # two threads starting and ending traces must not leave it True while one traces)
        if name == "tracer":
            with _LOCK:
                if value is None:
                    _TRACING.discard(threading.get_ident())
                else:
                    _TRACING.add(threading.get_ident())
                _refresh()
        threading.local.__setattr__(self, name, value)


STATE = _ThreadState()
# pause_tracer(None) / pause_tracer(tracer): set this thread's tracer to None for a call the
# tracer runs untraced (its kernel), and back after it, without the lock: the thread still
# counts as tracing, so PLAIN stays False and the nested op calls take the general path, which
# finds no tracer. (Twice per recorded op: the locked bookkeeping of ``STATE.tracer = ...`` was
# a tenth of a trace; a partial of the plain thread-local setattr is one C call.)
pause_tracer = functools.partial(threading.local.__setattr__, STATE, "tracer")


def math_bits_live():
    """Called once, when the first tensor with a math bit is made (reftrace/_math_bits.py)."""
    with _LOCK:
        MATH_BITS_LIVE[0] = True
        _refresh()


@contextlib.contextmanager
def observed():
    """Route every op call through ``dispatch`` (the fast paths of the entry points off), for
    tests that watch which overload a call dispatches by replacing ``ops._registry.dispatch``."""
    with _LOCK:
        _OBSERVERS[0] += 1
        _refresh()
    try:
        yield
    finally:
        with _LOCK:
            _OBSERVERS[0] -= 1
            _refresh()


def dispatch(op, args):
    if PLAIN[0]:
        # the common case: nothing traces, no math bits; the kernel runs unless a tensor
        # argument requires grad (then grad mode decides, below)
        slots = op.single_tensor_slots
        if slots is not None:
            for i in slots:
                a = args[i]
                if a is not None and a.requires_grad:
                    break
            else:
                return op.kernel(*args)
    tracer = STATE.tracer
    if tracer is not None:
        return tracer.record(op, args)
    if MATH_BITS_LIVE[0]:
        return run_kernel(op, args)
    return _run_kernel(op, args)


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
