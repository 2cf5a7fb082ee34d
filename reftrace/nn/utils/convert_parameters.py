"""torch/nn/utils/convert_parameters.py: all parameters as one flat vector, and back."""
import reftrace


def _check_param_device(param, old_param_device):
    if old_param_device is None:
        return param.get_device() if param.is_cuda else -1
    warn = False
    if param.is_cuda:
        warn = param.get_device() != old_param_device
    else:
        warn = old_param_device != -1
    if warn:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_param_device


def parameters_to_vector(parameters):
    """The parameters flattened (view(-1)) and concatenated: one aten::cat."""
    if isinstance(parameters, reftrace.Tensor):
        parameters = [parameters]
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return reftrace.cat(vec)


def vector_to_parameters(vec, parameters):
    """Slices of ``vec`` written back as each parameter's data (shapes kept)."""
    if not isinstance(vec, reftrace.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    if isinstance(parameters, reftrace.Tensor):
        parameters = [parameters]
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
