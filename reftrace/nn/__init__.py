"""torch.nn: for now the functional interface (``reftrace.nn.functional``); Module and the layers
come with their own issue."""
from . import functional

# Module, Parameter and the layers (reftrace/nn/modules/, one file per torch file)
from . import init  # noqa: E402,F401
from .parameter import Buffer, Parameter  # noqa: E402,F401
from .modules import *  # noqa: E402,F401,F403
from .modules.module import (register_module_backward_hook, register_module_forward_hook,  # noqa: E402,F401
                             register_module_forward_pre_hook, register_module_full_backward_hook)
from . import utils  # noqa: E402,F401  (torch.nn.utils: rnn)
