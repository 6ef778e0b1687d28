"""torch.nn.modules: the layer classes, one module per family as in PyTorch."""

from __future__ import annotations

from .activation import (  # noqa: F401
    ELU,
    GELU,
    Hardtanh,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .activation_more import (  # noqa: F401
    CELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    LogSigmoid,
    Mish,
    PReLU,
    RReLU,
    Softmax2d,
    Softmin,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear  # noqa: F401
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .conv_more import Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
from .data_parallel import DataParallel  # noqa: F401
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d  # noqa: F401
from .dropout_more import AlphaDropout, FeatureAlphaDropout  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from .layers import (  # noqa: F401
    AdaptiveAvgPool2d,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    Conv1d,
    Conv2d,
    Embedding,
    LayerNorm,
    MaxPool1d,
    MaxPool2d,
)
from .lazy import (  # noqa: F401  (d2l's CNN chapters)
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    LazyLinear,  # noqa: F401  (d2l's layers)
)
from .linear import Bilinear, Identity, Linear  # noqa: F401
from .linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions  # noqa: F401
from .loss import (  # noqa: F401
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .loss_more import (  # noqa: F401
    CosineEmbeddingLoss,
    CTCLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    NLLLoss2d,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from .module import Module  # noqa: F401
from .normalization import CrossMapLRN2d, GroupNorm, LocalResponseNorm, RMSNorm  # noqa: F401
from .padding import (  # noqa: F401
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .pooling_more import (  # noqa: F401
    AdaptiveAvgPool1d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
)
from .reshaping import (  # noqa: F401
    ChannelShuffle,
    Fold,
    PixelShuffle,
    PixelUnshuffle,
    Unfold,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .rnn import GRU, LSTM, RNN, _RNNBase  # noqa: F401
from .rnn_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: F401
from .sparse import EmbeddingBag  # noqa: F401
from .transformer import (  # noqa: F401
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = ["ELU", "GELU", "Hardtanh", "LeakyReLU", "LogSoftmax", "ReLU", "ReLU6", "Sigmoid",
           "SiLU", "Softmax", "Softplus", "Tanh", "ModuleDict", "ModuleList", "ParameterDict",
           "ParameterList", "Sequential", "Dropout", "Dropout1d", "Dropout2d",
           "Dropout3d", "Flatten", "Unflatten", "Bilinear",
           "Identity", "Linear", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss",
           "KLDivLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss", "Module",
           "AdaptiveAvgPool2d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Conv1d", "Conv2d",
           "Embedding", "LayerNorm", "MaxPool1d", "MaxPool2d", "RNN", "LSTM", "GRU", "RNNCell",
           "LSTMCell", "GRUCell"]
__all__ += ["LazyLinear"]
__all__ += ["LazyConv1d", "LazyConv2d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]
__all__ += ["LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
            "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
__all__ += ["MultiheadAttention", "NonDynamicallyQuantizableLinear", "TransformerEncoderLayer",
            "TransformerEncoder", "TransformerDecoderLayer", "TransformerDecoder",
            "Transformer"]

# Each class names PyTorch's module as its own, as `type(m)` and `torch.typename(m)` print it
# under PyTorch (<class 'torch.nn.modules.linear.Linear'>). The language treats "torch."
# classes as gradcli's own (lang/runtime.py), and torch.load finds them by name.
_TORCH_HOMES = {
    "activation": "ELU GELU Hardtanh LeakyReLU LogSoftmax ReLU ReLU6 Sigmoid SiLU Softmax "
                  "Softplus Tanh",
    "container": "ModuleDict ModuleList ParameterDict ParameterList Sequential",
    "dropout": "Dropout Dropout1d Dropout2d Dropout3d",
    "flatten": "Flatten Unflatten",
    "linear": "Bilinear Identity Linear",
    "loss": "BCELoss BCEWithLogitsLoss CrossEntropyLoss HuberLoss KLDivLoss L1Loss MSELoss "
            "NLLLoss SmoothL1Loss",
    "module": "Module",
    "pooling": "AdaptiveAvgPool2d AvgPool2d MaxPool1d MaxPool2d",
    "batchnorm": "BatchNorm1d BatchNorm2d BatchNorm3d",
    "conv": "Conv1d Conv2d",
    "sparse": "Embedding",
    "normalization": "LayerNorm",
    "rnn": "RNN LSTM GRU",
}
_TORCH_HOMES["activation"] += " MultiheadAttention"
_TORCH_HOMES["linear"] += " NonDynamicallyQuantizableLinear"
_TORCH_HOMES["transformer"] = ("TransformerEncoderLayer TransformerEncoder "
                               "TransformerDecoderLayer TransformerDecoder Transformer")
# the classes of issue #23 (constructed, initialised and printed as PyTorch's)
_MORE = {
    "activation": "CELU GLU SELU Hardshrink Hardsigmoid Hardswish LogSigmoid Mish PReLU RReLU "
                  "Softmax2d Softmin Softshrink Softsign Tanhshrink Threshold",
    "conv": "Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d",
    "distance": "CosineSimilarity PairwiseDistance",
    "dropout": "AlphaDropout FeatureAlphaDropout",
    "loss": "CosineEmbeddingLoss CTCLoss GaussianNLLLoss HingeEmbeddingLoss MarginRankingLoss "
            "MultiLabelMarginLoss MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss2d "
            "PoissonNLLLoss SoftMarginLoss TripletMarginLoss TripletMarginWithDistanceLoss "
            "LinearCrossEntropyLoss",
    "normalization": "CrossMapLRN2d GroupNorm LocalResponseNorm RMSNorm",
    "padding": " ".join(f"{kind}Pad{n}d" for kind in ("Circular", "Constant", "Reflection",
                                                      "Replication", "Zero")
                        for n in (1, 2, 3)),
    "pooling": "AdaptiveAvgPool1d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d "
               "AdaptiveMaxPool3d AvgPool1d AvgPool3d FractionalMaxPool2d FractionalMaxPool3d "
               "LPPool1d LPPool2d LPPool3d MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d",
    "pixelshuffle": "PixelShuffle PixelUnshuffle",
    "channelshuffle": "ChannelShuffle",
    "fold": "Fold Unfold",
    "upsampling": "Upsample UpsamplingBilinear2d UpsamplingNearest2d",
    "sparse": "EmbeddingBag",
    "adaptive": "AdaptiveLogSoftmaxWithLoss",
}
# the recurrent layers' bases, with PyTorch's constructors (RNNBase(mode, ...),
# RNNCellBase(input_size, hidden_size, bias, num_chunks))
RNNBase = _RNNBase
__all__ += ["RNNBase", "RNNCellBase"]
_TORCH_HOMES["rnn"] += " RNNBase RNNCellBase"
# (a dataclass, not a layer; DataParallel lives in torch.nn.parallel)
__all__ += ["LinearCrossEntropyOptions", "DataParallel"]
_TORCH_HOMES["linear_cross_entropy_options"] = "LinearCrossEntropyOptions"
for _home, _names in _MORE.items():
    __all__ += _names.split()
    _TORCH_HOMES[_home] = (_TORCH_HOMES.get(_home, "") + " " + _names).strip()
for _home, _names in _TORCH_HOMES.items():
    for _name in _names.split():
        globals()[_name].__module__ = "torch.nn.modules." + _home
del _home, _names, _name
