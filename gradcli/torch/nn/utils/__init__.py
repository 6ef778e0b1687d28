"""torch.nn.utils: gradient clipping and flattening parameters to one vector."""

from __future__ import annotations

import math
import types

from gradcli.engine.grad_mode import no_grad
from gradcli.engine.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters", "get_total_norm", "clip_grads_with_norm_",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm",
           "parametrize", "parametrizations"]

#: names loaded on first use (not needed to start up), with the submodule that holds them
_LAZY = {"weight_norm": "_norm_hooks", "remove_weight_norm": "_norm_hooks",
         "spectral_norm": "_norm_hooks", "remove_spectral_norm": "_norm_hooks",
         "fuse_conv_bn_eval": "fusion", "fuse_conv_bn_weights": "fusion",
         "fuse_linear_bn_eval": "fusion", "fuse_linear_bn_weights": "fusion",
         "convert_conv2d_weight_memory_format": "memory_format",
         "convert_conv3d_weight_memory_format": "memory_format", "skip_init": "init"}
#: submodules loaded on first use (the facade's lazy-submodule convention)
_LAZY_SUBMODULES = ("parametrize", "parametrizations", "stateless", "fusion", "rnn",
                    "clip_grad", "convert_parameters", "memory_format", "init", "prune")


def __getattr__(name: str):
    import importlib

    if name in _LAZY_SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    elif name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    elif name.startswith("__"):
        raise AttributeError(name)
    else:
        raise AttributeError(f"torch.nn.utils.{name} is not supported by gradcli")
    globals()[name] = value
    return value


def _as_list(tensors) -> list:
    if isinstance(tensors, Tensor):
        return [tensors]
    return list(tensors)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The norm of the norms of `tensors` (as if they were one vector)."""
    from gradcli.engine.ops.creation import tensor as make_tensor
    from gradcli.engine.ops.shape import stack

    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return make_tensor(0.0)
    with no_grad():
        if norm_type == math.inf:
            norms = [t.detach().abs().max() for t in tensors]
            total = norms[0] if len(norms) == 1 else stack(norms).max()
        else:
            norms = [t.detach().norm(norm_type) for t in tensors]
            total = stack(norms).norm(norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the gradients so that their total norm is at most max_norm; returns the
    total norm before clipping."""
    params = _as_list(parameters)
    if not params and isinstance(parameters, types.GeneratorType):
        from gradcli.engine.warn_site import warn_at_caller

        warn_at_caller("`parameters` is an empty generator, no gradient clipping will occur.")
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters) -> Tensor:
    from gradcli.engine.ops.shape import cat

    # (a tensor passes too, as in PyTorch: its rows are flattened one after another)
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n


def skip_init(module_cls, *args, **kwargs):
    """The module built without its initialisation in PyTorch (on the meta device, then
    emptied): its parameters' values are unspecified there; here they are the usual
    initial ones, which is one valid choice of unspecified values."""
    import inspect

    from ..modules.module import Module

    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.pop("device", None)
    return module_cls(*args, **kwargs)


__all__ += ["skip_init", "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
            "fuse_linear_bn_weights"]
