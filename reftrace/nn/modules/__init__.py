"""torch.nn.modules: Module and the layers, one file per family as in torch."""
from .module import Module  # noqa: F401
from .activation import ELU, GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
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

# the layers of nn-layers (issue 11), one block per torch file
__all__ += ["Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]
from .channelshuffle import ChannelShuffle  # noqa: F401,E402
from .fold import Fold, Unfold  # noqa: F401,E402
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401,E402
__all__ += ["ChannelShuffle", "Fold", "Unfold", "PixelShuffle", "PixelUnshuffle"]
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool3d, AdaptiveMaxPool1d,  # noqa: F401,E402
                      AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d, AvgPool3d, LPPool1d,
                      LPPool2d, LPPool3d, MaxPool1d, MaxPool3d, MaxUnpool1d, MaxUnpool2d,
                      MaxUnpool3d)
__all__ += ["AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
            "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
            "MaxPool1d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401,E402
__all__ += ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
from .activation import (CELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish,  # noqa: F401,E402
                         Hardtanh, LogSigmoid, Mish, PReLU, ReLU6, RReLU, Softmax2d, Softmin,
                         Softplus, Softshrink, Softsign, Tanhshrink, Threshold)
__all__ += ["CELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
            "LogSigmoid", "Mish", "PReLU", "ReLU6", "RReLU", "Softmax2d", "Softmin", "Softplus",
            "Softshrink", "Softsign", "Tanhshrink", "Threshold"]
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: F401,E402
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad1d, ZeroPad2d, ZeroPad3d)
__all__ += ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
            "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
            "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
            "ZeroPad3d"]
from .batchnorm import BatchNorm3d, SyncBatchNorm  # noqa: F401,E402
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401,E402
from .normalization import CrossMapLRN2d, LocalResponseNorm, RMSNorm  # noqa: F401,E402
__all__ += ["BatchNorm3d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
            "CrossMapLRN2d", "LocalResponseNorm", "RMSNorm"]
from .dropout import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401,E402
__all__ += ["AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"]
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401,E402
__all__ += ["CosineSimilarity", "PairwiseDistance"]
from .flatten import Unflatten  # noqa: F401,E402
__all__ += ["Unflatten"]
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss,  # noqa: F401,E402
                   GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss,
                   MarginRankingLoss, MSELoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss,
                   MultiMarginLoss, NLLLoss, NLLLoss2d, PoissonNLLLoss, SmoothL1Loss,
                   SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
__all__ += ["BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
            "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
            "MarginRankingLoss", "MSELoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
            "MultiMarginLoss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "SmoothL1Loss",
            "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss"]
from .batchnorm import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401,E402
from .conv import (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,  # noqa: F401,E402
                   LazyConvTranspose2d, LazyConvTranspose3d)
from .instancenorm import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d  # noqa: F401,E402
from .linear import LazyLinear  # noqa: F401,E402
__all__ += ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
            "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
            "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LazyLinear"]
from .container import Container  # noqa: F401,E402
__all__ += ["Container"]
from .pooling import FractionalMaxPool2d, FractionalMaxPool3d  # noqa: F401,E402
__all__ += ["FractionalMaxPool2d", "FractionalMaxPool3d"]
# the sequence and attention families (rnn.py, transformer.py, MultiheadAttention, EmbeddingBag)
from .activation import MultiheadAttention  # noqa: E402,F401
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: E402,F401
from .sparse import EmbeddingBag  # noqa: E402,F401
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: E402,F401
                          TransformerEncoder, TransformerEncoderLayer)
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
            "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
            "TransformerEncoderLayer", "TransformerDecoderLayer", "EmbeddingBag"]
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402,F401
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: E402,F401
from .loss import CTCLoss, LinearCrossEntropyLoss  # noqa: E402,F401
__all__ += ["AdaptiveLogSoftmaxWithLoss", "CTCLoss", "LinearCrossEntropyLoss",
            "LinearCrossEntropyOptions"]
