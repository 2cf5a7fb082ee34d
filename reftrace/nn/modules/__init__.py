"""torch.nn.modules: Module and the layers, one file per family as in torch."""
from .module import Module  # noqa: F401
from .activation import ELU, GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d  # noqa: F401
from .dropout import Dropout  # noqa: F401
from .flatten import Flatten  # noqa: F401
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .normalization import GroupNorm, LayerNorm  # noqa: F401
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401
from .sparse import Embedding  # noqa: F401

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "Identity", "Linear", "Bilinear", "Conv1d", "Conv2d", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Dropout",
           "Embedding", "Flatten", "ReLU", "GELU", "SiLU", "LeakyReLU", "ELU", "Sigmoid", "Tanh",
           "Softmax", "LogSoftmax"]

# the sequence and attention families (rnn.py, transformer.py, MultiheadAttention, EmbeddingBag)
from .activation import MultiheadAttention  # noqa: E402,F401
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: E402,F401
from .sparse import EmbeddingBag  # noqa: E402,F401
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: E402,F401
                          TransformerEncoder, TransformerEncoderLayer)
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
            "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
            "TransformerEncoderLayer", "TransformerDecoderLayer", "EmbeddingBag"]
