"""torch/nn/modules/lazy.py: LazyModuleMixin, the machinery of the Lazy* layers.

A lazy layer is built with UninitializedParameter / UninitializedBuffer placeholders. A forward
pre-hook calls ``initialize_parameters(*inputs)`` on the first call (the layer reads the sizes it
needs off the input, materializes the placeholders and initialises them as its eager twin does),
removes itself, and turns the layer into its ``cls_to_become`` (LazyLinear -> Linear). Loading a
state dict into a lazy layer materializes the placeholders with the loaded shapes first.
"""
import itertools

from ..parameter import is_lazy


def _lazy_load_hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
                    unexpected_keys, error_msgs):
    from ...autograd import no_grad
    for name, param in itertools.chain(module._parameters.items(), module._buffers.items()):
        key = prefix + name
        if key in state_dict and param is not None:
            input_param = state_dict[key]
            if is_lazy(param) and not is_lazy(input_param):
                with no_grad():
                    param.materialize(input_param.shape)


class LazyModuleMixin:
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(_lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                if not (is_lazy(param) or keep_vars):
                    param = param.detach()
                destination[prefix + name] = param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                if not (is_lazy(buf) or keep_vars):
                    buf = buf.detach()
                destination[prefix + name] = buf

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        for param in itertools.chain(self._parameters.values(), self._buffers.values()):
            if is_lazy(param):
                return True
        return False

    def _infer_parameters(self, module, args, kwargs=None):
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {type(self).__name__} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize the "
                           "modules")
