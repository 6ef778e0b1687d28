"""torch.autograd over gradcli's engine: backward, grad, Variable, gradcheck, modes."""

from __future__ import annotations

import functools

from gradcli.engine.autograd import backward  # noqa: F401
from gradcli.engine.autograd import grad as _engine_grad
from gradcli.engine.custom_function import Function, FunctionCtx, once_differentiable  # noqa: F401
from gradcli.engine.grad_mode import (  # noqa: F401
    _unsafe_preserve_version_counter,
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from gradcli.engine.ops.sparse_coo import sparse_gradients as _sparse_gradients
from gradcli.engine.saved_tensor import SavedTensor  # noqa: F401
from gradcli.engine.tensor import Tensor as _Tensor
from gradcli.engine.view_replay import (  # noqa: F401,E402
    _force_original_view_tracking,
    is_view_replay_enabled,
)

from .. import _C  # noqa: F401,E402  (torch._C: attached to the facade package on import)
from . import function, functional, graph, profiler, profiler_util  # noqa: F401
from . import gradcheck as _gradcheck_module
from .profiler import _profiler_enabled, kineto_available  # noqa: F401


@functools.wraps(_engine_grad)
def grad(outputs, inputs, *args, **kwargs):
    """The engine's torch.autograd.grad, a sparse input's gradient given sparse as in
    PyTorch (engine/ops/sparse_coo.py `sparse_gradients`)."""
    return _sparse_gradients(inputs, _engine_grad(outputs, inputs, *args, **kwargs))


# torch.autograd.gradcheck is the function; the module of that name stays importable
gradcheck = _gradcheck_module.gradcheck
gradgradcheck = _gradcheck_module.gradgradcheck


class VariableMeta(type):
    """Every tensor is a Variable to isinstance, as in PyTorch (the class makes tensors)."""

    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, _Tensor)


class Variable(metaclass=VariableMeta):
    """Legacy Variable(t, requires_grad=): a new leaf over t's data (t itself is left as
    it was, as PyTorch's); the result is a plain tensor."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, _Tensor):
            raise TypeError("Variable data has to be a tensor, but got " + type(data).__name__)
        out = data.detach()
        if requires_grad:
            out._requires_grad_(True)
        return out


Variable.__module__ = VariableMeta.__module__ = "torch.autograd.variable"


class _ExecutionEngine:
    """Variable._execution_engine: the engine hook custom backward code reaches for."""

    @staticmethod
    def queue_callback(callback) -> None:
        from gradcli.engine.autograd import queue_callback

        queue_callback(callback)


Variable._execution_engine = _ExecutionEngine()

import gradcli.torch as torch  # noqa: E402,F401  (torch.autograd.torch is torch, as PyTorch's)

from .. import profiler as _torch_profiler  # noqa: E402,F401  (torch.profiler, as PyTorch imports it)

#: loaded on first use: start-up does not pay for forward-mode AD
_LAZY_SUBMODULES = ("forward_ad", "anomaly_mode", "variable")

# (two small modules over what is loaded already: imported here so that programs, which
# read a module's own names, reach them too)
from ._nested_io import NestedIOFunction  # noqa: E402,F401
from .grad_mode import (  # noqa: E402,F401
    enforce_grad_layout_policy,
    is_multithreading_enabled,
    set_multithreading_enabled,
)


def __getattr__(name: str):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"torch.autograd.{name} is not supported by gradcli")
