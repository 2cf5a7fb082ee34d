"""torch/nn/utils/weight_norm.py: the old, hook-based weight normalisation (deprecated in torch
for parametrizations.weight_norm, and still used by many checkpoints).

``weight_norm(module)`` replaces the parameter ``weight`` by ``weight_g`` (the magnitude,
``norm_except_dim(weight, 2, dim)``) and ``weight_v`` (the direction), and a forward pre-hook
sets ``module.weight = _weight_norm(weight_v, weight_g, dim)`` before every call, so a trace
records ``aten::_weight_norm`` at the start of the module's graph.
"""
from typing_extensions import deprecated

import reftrace
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return reftrace._weight_norm(v, g, self.dim)

    @staticmethod
    @deprecated("`torch.nn.utils.weight_norm` is deprecated "
                "in favor of `torch.nn.utils.parametrizations.weight_norm`.",
                category=FutureWarning)
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization")
        # remove w from parameter list
        del module._parameters[name]
        # add g and v as new parameters and express w as g/||v|| * v
        module.register_parameter(name + "_g", Parameter(reftrace.norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        # recompute weight before every forward()
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Apply weight normalisation to ``module.<name>`` (``dim=None``: one norm over the whole
    tensor). Deprecated in torch (a FutureWarning) for parametrizations.weight_norm."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Remove the weight normalisation: ``module.<name>`` becomes a parameter again."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
