"""The nn.init module the layers' reset_parameters use, found on first use."""

from __future__ import annotations


def nn_init():
    from gradcli.torch.nn import init

    return init


def fan_in(tensor) -> int:
    init = nn_init()
    fans = init._calculate_fan_in_and_fan_out
    return fans(tensor)[0]
