"""The affine parameters the normalisation layers share (BatchNorm, LayerNorm, GroupNorm):
``weight`` and ``bias`` of one shape, registered as None when the layer has none, and their
initialisation (weight ones, bias zeros), in torch's registration order."""
from ... import _factories
from .. import init
from ..parameter import Parameter


def register_affine(module, enabled, shape, bias, factory_kwargs):
    if enabled:
        module.weight = Parameter(_factories.empty(shape, **factory_kwargs))
        if bias:
            module.bias = Parameter(_factories.empty(shape, **factory_kwargs))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def reset_affine(module, enabled):
    if enabled:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)
