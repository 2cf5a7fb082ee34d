"""reftrace: a pure-Python, torch-free reference implementation of torch.jit.trace (PyTorch 2.13).

``import reftrace as torch`` runs the programs reftrace covers: tensors over NumPy (cpu) or CuPy
(cuda), the op table of ATen schemas, and ``reftrace.jit.trace``.
"""
from . import _dtype
from ._dtype import ALIASES as _ALIASES
from ._dtype import (bool, uint8, int8, int16, int32, int64, float16, float32, float64, complex64,
                     complex128, dtype, get_default_dtype, set_default_dtype)
from ._promotion import promote_types, can_cast, result_type
from ._device import (device, strided, contiguous_format, preserve_format, channels_last,
                      channels_last_3d)
from ._tensor import Tensor, Size
from . import autograd
from .autograd import (no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode,
                       is_inference_mode_enabled)
from . import ops
from ._creation import *  # noqa: F401,F403  tensor, as_tensor, from_numpy
from ._factories import *  # noqa: F401,F403  zeros, ones, ... (requires_grad=); Tensor.to, .float(), .type()
from ._tensor_str import set_printoptions, get_printoptions, printoptions
from .functional import *  # noqa: F401,F403  torch/functional.py's Python-level functions
from ._legacy import *  # noqa: F401,F403  torch.FloatTensor and the other typed constructors
from . import _operators
from ._install import install as _install_ops
from .random import *  # noqa: F401,F403  manual_seed, get_rng_state, ..., rand, randn, ...
from .ops.nn_rnn import gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell  # noqa: F401  (recorded as their decomposition)
from . import backends  # noqa: F401  (torch.backends.mha)
from . import nn  # torch.nn: `import reftrace as torch; torch.nn.functional.relu(x)`
from .serialization import save, load  # torch.save / torch.load (zip format, weights only)

__version__ = "0.1.0"

# torch.float is torch.float32, torch.long is torch.int64, ...
globals().update(_ALIASES)

_operators.install()
_install_ops(globals())

from . import jit  # noqa: E402  (after the op table: jit records its ops)
from . import linalg, special, fft, signal  # noqa: E402,F401  torch.linalg / .special / .fft / .signal
from ._missing import module_getattr as _module_getattr  # noqa: E402

# a torch name reftrace lacks: "reftrace does not implement torch.einsum yet" (an AttributeError)
__getattr__ = _module_getattr("torch", "reftrace")
