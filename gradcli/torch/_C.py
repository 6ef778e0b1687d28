"""torch._C, the few of its autograd internals PyTorch's own autograd tests and some user
code reach for: the SavedTensor type, node classes, the engine's current-task queries."""

from __future__ import annotations

import types as _types

from gradcli.engine import autograd as _engine
from gradcli.engine.grad_mode import is_grad_enabled  # noqa: F401
from gradcli.engine.grad_mode import unsafe_set_version_counter as _unsafe_set_version_counter
from gradcli.engine.node import AccumulateGrad as _AccumulateGrad
from gradcli.engine.node import Node as _Node
from gradcli.engine.saved_tensor import SavedTensor as _SavedTensor


def _saved_tensors_hooks_is_enabled() -> bool:
    from gradcli.engine.saved_hooks import DISABLED

    return DISABLED[0] is None


_autograd = _types.ModuleType("torch._C._autograd")
_autograd.SavedTensor = _SavedTensor
_autograd._saved_tensors_hooks_is_enabled = _saved_tensors_hooks_is_enabled
_autograd._unsafe_set_version_counter = _unsafe_set_version_counter

_functions = _types.ModuleType("torch._C._functions")
_functions.AccumulateGrad = _AccumulateGrad


def _will_engine_execute_node(node) -> bool:
    if isinstance(node, _engine.GradientEdge):
        node = node.node
    if not isinstance(node, _Node):
        raise RuntimeError(
            f"_will_engine_execute_node expects an grad_fn, but got {type(node).__name__}")
    return _engine.will_engine_execute_node(node)


def _current_graph_task_id() -> int:
    return _engine.current_task_id()


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"torch._C.{name} is not supported by gradcli")


def _identity_function(name: str, backward):
    """A one-input node that passes its input through and has `backward` as its rule
    (made on first use: custom_function is not needed for anything else here)."""
    from gradcli.engine.custom_function import Function

    def forward(ctx, x):
        return x.clone()

    return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})


class UndefinedGrad(_Node):
    """torch._C._functions.UndefinedGrad()(t): t passed through; its gradient is undefined
    (None) for the nodes below, as a backward that returns nothing gives."""

    def __init__(self):
        """A factory of pass-through nodes: it keeps no node state of its own."""

    def __call__(self, *tensors):
        fn = _identity_function("UndefinedGrad", lambda ctx, g: None)
        outs = tuple(fn.apply(t) for t in tensors)
        return outs[0] if len(outs) == 1 else outs


class DelayedError(_Node):
    """torch._C._functions.DelayedError(msg, n)(t): t passed through; backward through it
    raises RuntimeError(msg)."""

    def __init__(self, msg: str, num_inputs: int):
        self.msg = msg
        self.num_inputs = num_inputs

    def __call__(self, *tensors):
        msg = self.msg

        def backward(ctx, g):
            raise RuntimeError(msg)

        fn = _identity_function("DelayedError", backward)
        outs = tuple(fn.apply(t) for t in tensors)
        return outs[0] if len(outs) == 1 else outs


_functions.UndefinedGrad = UndefinedGrad
_functions.DelayedError = DelayedError


class _WeakTensorRef:
    """torch._C._WeakTensorRef(t): a weak reference whose expired() says t is gone."""

    __slots__ = ("_ref",)

    def __init__(self, t):
        import weakref

        self._ref = weakref.ref(t)

    def expired(self) -> bool:
        return self._ref() is None


# CUDA-graph "cached tensors" (PyTorch keeps a set of tensors whose storage a graph owns):
# only the bookkeeping, which is all a CPU build has
_CACHED_TENSORS: dict = {}  # id(tensor) -> weak reference to it
_CACHED_ENABLED = [False]


def _set_cached_tensors_enabled(enabled: bool) -> None:
    _CACHED_ENABLED[0] = bool(enabled)


def _cached_tensors_check(what: str, line: int) -> None:
    if not _CACHED_ENABLED[0]:  # (PyTorch's internal assert, word for word)
        raise RuntimeError(f'{what} INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/'
                           f'ATen/CachedTensorUtils.cpp":{line}, please report a bug to PyTorch. ')


def _add_cached_tensor(t) -> None:
    import weakref

    _cached_tensors_check("cached_tensorimpls_enabled.load(std::memory_order_acquire)", 29)
    key = id(t)
    _CACHED_TENSORS[key] = weakref.ref(t, lambda _r: _CACHED_TENSORS.pop(key, None))


def _remove_cached_tensor(t) -> None:
    _cached_tensors_check("cached_tensorimpls_enabled", 35)
    _CACHED_TENSORS.pop(id(t), None)


def _is_cached_tensor(t) -> bool:
    ref = _CACHED_TENSORS.get(id(t))
    return _CACHED_ENABLED[0] and ref is not None and ref() is t


def _is_fwd_grad_enabled() -> bool:
    """Forward grad mode (engine/forward_ad.py, loaded on first use: not at start-up)."""
    from gradcli.engine.forward_ad import is_fwd_grad_enabled

    return is_fwd_grad_enabled()


def _set_fwd_grad_enabled(mode) -> None:
    from gradcli.engine.forward_ad import set_fwd_grad_enabled

    set_fwd_grad_enabled(mode)
