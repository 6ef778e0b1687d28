"""torch.nn: Module and its layers, Parameter, the functional forms, init and utils.

Plain Python classes over the engine's ops, so programs may subclass them. Only
`functional` loads with the facade; the classes load on first use (start-up of
`gradcli grad` does not grow).
"""

from __future__ import annotations

import importlib as _importlib

from . import functional  # noqa: F401

_CLASSES = (
    "ELU GELU Hardtanh LeakyReLU LogSoftmax ReLU ReLU6 Sigmoid SiLU Softmax Softplus Tanh "
    "ModuleDict ModuleList ParameterDict ParameterList Sequential Dropout Flatten Unflatten "
    "Bilinear Identity Linear BCELoss BCEWithLogitsLoss CrossEntropyLoss HuberLoss KLDivLoss "
    "L1Loss MSELoss NLLLoss SmoothL1Loss Module Embedding Conv1d Conv2d MaxPool1d MaxPool2d "
    "AvgPool2d AdaptiveAvgPool2d BatchNorm1d BatchNorm2d BatchNorm3d LayerNorm RNN LSTM GRU RNNCell "
    "LSTMCell GRUCell Dropout1d Dropout2d Dropout3d").split()
_CLASSES += ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
_CLASSES += ["LazyLinear"]
_CLASSES += ["LazyConv1d", "LazyConv2d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"]
_CLASSES += ["LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
             "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
_CLASSES += ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
             "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]
_CLASSES += (  # issue #23: the layers whose functional forms gradcli had
    "CELU GLU SELU Hardshrink Hardsigmoid Hardswish LogSigmoid Mish PReLU RReLU Softmax2d "
    "Softmin Softshrink Softsign Tanhshrink Threshold Conv3d ConvTranspose1d ConvTranspose2d "
    "ConvTranspose3d CosineSimilarity PairwiseDistance AlphaDropout FeatureAlphaDropout "
    "CosineEmbeddingLoss CTCLoss GaussianNLLLoss HingeEmbeddingLoss MarginRankingLoss "
    "MultiLabelMarginLoss MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss2d PoissonNLLLoss "
    "SoftMarginLoss TripletMarginLoss TripletMarginWithDistanceLoss GroupNorm "
    "LocalResponseNorm RMSNorm AdaptiveAvgPool1d AdaptiveAvgPool3d AdaptiveMaxPool1d "
    "AdaptiveMaxPool2d AdaptiveMaxPool3d AvgPool1d AvgPool3d LPPool1d LPPool2d LPPool3d "
    "MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d PixelShuffle PixelUnshuffle ChannelShuffle "
    "Fold Unfold Upsample UpsamplingBilinear2d UpsamplingNearest2d EmbeddingBag").split()
_CLASSES += [f"{kind}Pad{n}d" for kind in ("Circular", "Constant", "Reflection", "Replication",
                                           "Zero") for n in (1, 2, 3)]
_CLASSES += ["RNNBase", "RNNCellBase", "CrossMapLRN2d", "AdaptiveLogSoftmaxWithLoss",
             "FractionalMaxPool2d", "FractionalMaxPool3d", "LinearCrossEntropyLoss",
             "LinearCrossEntropyOptions", "DataParallel"]
_SUBMODULES = ("modules", "parameter", "utils", "init", "attention", "parallel")

__all__ = sorted(_CLASSES + ["Buffer", "Parameter", "functional", *_SUBMODULES])


def __getattr__(name: str):
    if name in _CLASSES:
        modules = _importlib.import_module(__name__ + ".modules")
        value = getattr(modules, name, None)
        if value is None:
            raise AttributeError(f"torch.nn.{name} is not supported by gradcli")
    elif name in ("Parameter", "Buffer"):
        value = getattr(_importlib.import_module(__name__ + ".parameter"), name)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f"{__name__}.{name}")
    else:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"torch.nn.{name} is not supported by gradcli")
    globals()[name] = value
    return value
