"""torch.autograd.Variable: the legacy constructor, kept for old programs.

``Variable(x)`` is ``x.detach()`` (python_variable.cpp THPVariable_pynew); while tracing, the
result is then mapped to ``x``'s own graph value, so the recorded detach is dead code and the
trace sees ``x`` itself (the detach only uses up a value number, as in torch).
"""


def Variable(data, requires_grad=False, volatile=False, _grad_fn=None, name=None):
    from .._dispatch import STATE  # lazy: _dispatch imports this package (grad mode)
    from .._tensor import Tensor
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    var = data.detach()
    var.requires_grad = bool(requires_grad)
    tracer = STATE.tracer
    if tracer is not None and tracer.has_value(data):
        tracer.set_value(var, data._tv[1])
    return var
