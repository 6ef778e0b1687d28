"""Stand-in for gradcli.torch.nn.init until the rng helper's module is merged (the lead
deletes this file then). Same signatures; the numbers are not PyTorch's."""

from __future__ import annotations

import math

from gradcli.engine.grad_mode import no_grad
from gradcli.engine.ops.creation import rand, randn


def _fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    return {"relu": math.sqrt(2.0), "tanh": 5.0 / 3, "selu": 3.0 / 4}.get(nonlinearity, 1.0)


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.copy_(rand(tuple(tensor.shape), dtype=tensor.dtype) * (b - a) + a)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.copy_(randn(tuple(tensor.shape), dtype=tensor.dtype) * std + mean)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    fan_in, fan_out = _fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


_calculate_fan_in_and_fan_out = _fan_in_and_fan_out
