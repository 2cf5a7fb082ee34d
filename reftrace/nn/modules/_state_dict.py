"""Module.state_dict / load_state_dict (torch keeps them in module.py; split out here for size).

A state dict maps dotted names to tensors: each module's own parameters and persistent buffers,
then each child's under "<child name>.", in ``_modules`` order. Loading copies values in place
(``param.copy_`` under no_grad), so parameter identity survives; ``assign=True`` replaces them.
With strict=True, every key must match; the errors are collected and raised together, in
torch's words.
"""
from __future__ import annotations

import functools
import itertools
from typing import Any
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._tensor import Tensor
from ...autograd import no_grad
from ...utils.hooks import RemovableHandle
from ..parameter import Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it could not match (strict=False collects them)."""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _StateDictMixin:
    """The state-dict half of Module (it uses Module's _parameters, _buffers, _modules)."""

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """Parameters and persistent buffers by dotted name, in named_modules order; detached
        (sharing data) unless keep_vars."""
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module."
                "state_dict for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            hook_result = hook(self, destination, prefix, {})
            if not getattr(hook, "_from_public_api", False):
                if hook_result is not None:  # the private hooks may replace the dict
                    destination = hook_result
            elif hook_result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars), before this module's entries are saved."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) -> None; may edit state_dict."""
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook):
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that "
                               "was previously registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs), before this module's entries are loaded; may edit state_dict."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """The same hook, given the module first only ``with_module`` (torch's private form,
        which parametrizations.weight_norm uses to load a state_dict of the old weight_norm)."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self) if with_module else hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Copy this module's own entries (not its children's) in place; collect what is wrong."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items()
                              if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                                  f"or Tensor-like object from checkpoint but received {type(input_param)}")
                continue
            # a 0-dim parameter accepts a one-element 1-D checkpoint entry (old checkpoints)
            if len(param.shape) == 0 and len(input_param.shape) == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(input_param, Parameter):
                            input_param = Parameter(input_param, requires_grad=param.requires_grad)
                        elif isinstance(param, Parameter):
                            input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in '
                                  f"the model are {param.size()} and whose dimensions in the "
                                  f"checkpoint are {input_param.size()}, an exception occurred : "
                                  f"{ex.args}.")
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != prefix + "_extra_state":
                    input_name = key[len(prefix):].split(".", 1)
                    # "child.x" belongs to the child (checked there); "x" must be ours
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        state_dict = OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            local_metadata = {"assign_to_params_buffers": assign} if assign else {}
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            incompatible_keys = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible_keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be modified, "
                        "it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)
