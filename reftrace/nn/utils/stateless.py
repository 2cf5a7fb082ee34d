"""torch/nn/utils/stateless.py: functional_call, a module called with other parameters and
buffers swapped in by name for the call (torch's _reparametrize_module over the swap of
torch/nn/utils/_named_member_accessor.py), then swapped back."""
import contextlib
import warnings

from ..._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _swap_tensor(module, name, tensor, allow_missing=False):
    """_named_member_accessor.swap_tensor: set ``module.<name>`` (a parameter, buffer or plain
    attribute) to ``tensor``; return what was there."""
    if tensor is not _MISSING and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for store in (module._parameters, module._buffers):
        if name in store:
            orig = store[name]
            if tensor is not _MISSING:
                store[name] = tensor
            else:
                del store[name]
            return orig
    if hasattr(module, name):
        orig = getattr(module, name)
    else:
        if not allow_missing:
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        orig = _MISSING
    if orig is not _MISSING and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _swap_tensors_dict(module, named_tensors, allow_missing=False):
    orig, missing = {}, []
    for name, tensor in named_tensors.items():
        prefix, _, attr = name.rpartition(".")
        try:
            owner = module.get_submodule(prefix) if prefix else module
            old = _swap_tensor(owner, attr, tensor, allow_missing=allow_missing)
        except AttributeError:
            if not allow_missing:
                raise
            old = _MISSING
        if old is _MISSING:
            missing.append(name)
        else:
            orig[name] = old
    return orig, missing


def _all_named_tensors(module):
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie_named_tensors_map(module, parameters_and_buffers):
    """Every name of a tied tensor gets the value given for any one of its names."""
    by_tensor = {}
    for name, tensor in _all_named_tensors(module).items():
        by_tensor.setdefault(id(tensor), set()).add(name)
    tied = {n: names for names in by_tensor.values() if len(names) > 1 for n in names}
    given_tied = {n for n in parameters_and_buffers if n in tied}
    for given in given_tied:
        names = tied[given]
        if len(names & given_tied) > 1 and \
                len({id(parameters_and_buffers[n]) for n in names & given_tied}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             f"which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for given in given_tied:
        for name in tied[given]:
            untied[name] = parameters_and_buffers[given]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False,
                          stack_weights=False):
    untied = (_untie_named_tensors_map(module, parameters_and_buffers) if tie_weights
              else parameters_and_buffers)
    if strict:
        keys = set(_all_named_tensors(module))
        missing_keys = sorted(keys - set(untied))
        unexpected_keys = sorted(set(untied) - keys)
        error_msgs = []
        if unexpected_keys:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected_keys))}.")
        if missing_keys:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing_keys))}.")
        if error_msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(error_msgs)))
    orig = {}
    try:
        orig, _ = _swap_tensors_dict(module, untied, allow_missing=True)
        yield
    finally:
        if stack_weights:
            orig = dict(reversed(orig.items()))
        new, _ = _swap_tensors_dict(module, orig, allow_missing=True)
        # a module that replaced entries of its _parameters/_buffers in place: written back
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. "
                  "Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    from ...jit import TracedModule, is_tracing
    from ...jit.traced import TracedFunction
    # torch's ScriptModule / ScriptFunction: reftrace's traced (and loaded) modules and functions
    if is_tracing() or isinstance(module, (TracedModule, TracedFunction)):
        raise RuntimeError("The stateless API can't be used with Jitted modules")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights,
                               strict=strict):
        return module(*args, **kwargs)

