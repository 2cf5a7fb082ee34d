"""torch.nn.utils: the helpers of torch/nn/utils, one file each as in torch."""
from . import clip_grad, convert_parameters, fusion  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: F401
                     fuse_linear_bn_weights)
from . import rnn  # noqa: F401
from . import parametrize, parametrizations  # noqa: F401,E402
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401,E402
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401,E402
from . import stateless  # noqa: F401,E402
from .init import skip_init  # noqa: F401,E402
from .memory_format import (convert_conv2d_weight_memory_format,  # noqa: F401,E402
                            convert_conv3d_weight_memory_format)
