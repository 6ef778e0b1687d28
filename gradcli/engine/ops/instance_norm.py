"""instance_norm (torch.nn.functional.instance_norm, torch.instance_norm) composed as ATen
composes it, so the graph has PyTorch's nodes: the input viewed as one sample of N*C
channels (ViewBackward0, after CloneBackward0 when it was not contiguous), batch_norm over
it with the weight, bias and running statistics repeated N times (NativeBatchNormBackward0,
RepeatBackward0), and the result viewed back (ViewBackward0). The running statistics
(updated only from input statistics) are the mean over the batch of the repeated ones.
"""

from __future__ import annotations

from ..grad_mode import no_grad
from ..tensor import Tensor
from .nn_layers import BATCH_NORM, batch_norm_as
from .registry import public


def _verify_spatial_size(input: Tensor) -> None:
    """F.instance_norm's own check (in Python, so torch.instance_norm has none)."""
    spatial = 1
    for size in input.shape[2:]:
        spatial *= size
    if spatial == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{input.shape}")


@public("torch.nn.functional.instance_norm")
def instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    if use_input_stats:
        _verify_spatial_size(input)
    return torch_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                               momentum, eps, True)


@public("torch.instance_norm")
def torch_instance_norm(input: Tensor, weight, bias, running_mean, running_var,
                        use_input_stats: bool, momentum: float, eps: float,
                        cudnn_enabled: bool = True) -> Tensor:
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    shape = list(input.shape)
    n, c = shape[0], shape[1]
    flat_shape = [1, n * c] + shape[2:]
    repeated = [None if t is None else t.repeat(n)
                for t in (weight, bias, running_mean, running_var)]
    out = batch_norm_as(BATCH_NORM, input.contiguous().view(flat_shape), repeated[2],
                        repeated[3], repeated[0], repeated[1], bool(use_input_stats),
                        momentum, eps)
    if use_input_stats:
        with no_grad():
            for stats, stats_repeated in ((running_mean, repeated[2]),
                                          (running_var, repeated[3])):
                if stats is not None:
                    stats.copy_(stats_repeated.view(n, c).mean(0))
    return out.view(shape)
