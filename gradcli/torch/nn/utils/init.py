"""torch.nn.utils.init: skip_init, a module built without running its initialization.
gradcli has no meta device to build on, so the module is built normally (its parameters
hold initialized values where PyTorch's hold whatever memory held: only the values differ,
and PyTorch promises none)."""

from __future__ import annotations

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs), refused as PyTorch refuses it for a module class that
    does not take a device argument."""
    import gradcli.torch as torch

    if not issubclass(module_cls, torch.nn.Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = final_device
    return module_cls(*args, **kwargs)
