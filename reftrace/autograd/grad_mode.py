"""Grad mode: whether op results may require grad. Thread-local, as torch's."""
import functools
import threading


class _GradState(threading.local):
    enabled = True


STATE = _GradState()


def is_grad_enabled():
    return STATE.enabled


class set_grad_enabled:
    """Context manager (and function) setting grad mode; restores the previous mode on exit."""

    def __init__(self, mode):
        self.prev = STATE.enabled
        STATE.enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        STATE.enabled = self.prev
        return False


class _GradModeContext:
    mode = True

    def __enter__(self):
        self.prev = STATE.enabled
        STATE.enabled = self.mode
        return self

    def __exit__(self, *exc):
        STATE.enabled = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    mode = False


class enable_grad(_GradModeContext):
    mode = True


class inference_mode(_GradModeContext):
    """torch.inference_mode: grad mode off inside (reftrace has no inference tensors: tensors
    made inside are ordinary tensors that do not require grad)."""

    def __init__(self, mode=True):
        self.mode = not mode

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(not mode):
                return fn(*args, **kwargs)
        return wrapper

    def __enter__(self):
        super().__enter__()
        self._prev_inference = _INFERENCE.enabled
        _INFERENCE.enabled = not self.mode
        return self

    def __exit__(self, *exc):
        _INFERENCE.enabled = self._prev_inference
        return super().__exit__(*exc)


class _InferenceState(threading.local):
    enabled = False


_INFERENCE = _InferenceState()


def is_inference_mode_enabled():
    return _INFERENCE.enabled
