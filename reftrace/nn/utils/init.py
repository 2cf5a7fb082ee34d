"""torch/nn/utils/init.py: skip_init."""
import inspect


def skip_init(module_cls, *args, **kwargs):
    """A module whose parameters and buffers are left uninitialized (torch builds it on the meta
    device, then ``to_empty``). reftrace has no meta device: the module is built on the target
    device and its tensors are replaced by empty ones of the same shapes, dtypes and strides,
    so what the caller sees is torch's (whatever values empty memory holds)."""
    from ..modules.module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = final_device
    return module_cls(*args, **kwargs).to_empty(device=final_device)
