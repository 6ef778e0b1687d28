"""The nn.init module the layers' reset_parameters use, found on first use."""

from __future__ import annotations

import math


def nn_init():
    from gradcli.torch.nn import init

    return init


def fan_in(tensor) -> int:
    init = nn_init()
    fans = init._calculate_fan_in_and_fan_out
    return fans(tensor)[0]


def reset_weight_and_bias(module) -> None:
    """Linear's and the convolutions' default initialisation, as PyTorch's: the weight
    Kaiming-uniform with a = sqrt(5), the bias uniform in +-1/sqrt(fan_in) (these draws, in
    this order, are what make seeded layers hold PyTorch's numbers)."""
    init = nn_init()
    init.kaiming_uniform_(module.weight, a=math.sqrt(5))
    if module.bias is not None:
        fan = fan_in(module.weight)
        bound = 1 / math.sqrt(fan) if fan > 0 else 0
        init.uniform_(module.bias, -bound, bound)
