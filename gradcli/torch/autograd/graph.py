"""torch.autograd.graph: the graph's Node type, gradient edges, saved-tensor hooks and
multi-tensor gradient hooks, over gradcli's engine."""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections import defaultdict

from gradcli.engine import saved_hooks as _saved_hooks
from gradcli.engine import tensor as _tensor_module
from gradcli.engine.autograd import GradientEdge, current_task_id, will_engine_execute_node
from gradcli.engine.node import Node as _EngineNode
from gradcli.engine.node import RemovableHandle
from gradcli.engine.tensor import Tensor as _Tensor

__all__ = [
    "GradientEdge", "Node", "allow_mutation_on_saved_tensors", "disable_saved_tensors_hooks",
    "get_gradient_edge", "increment_version", "register_multi_grad_hook", "save_on_cpu",
    "saved_tensors_hooks",
]

GradientEdge.__module__ = "torch.autograd.graph"


class _VirtualBase(type):
    """isinstance/issubclass answer for every grad_fn class without being in their MRO."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _EngineNode)

    def __subclasscheck__(cls, sub) -> bool:
        return sub is cls or (isinstance(sub, type) and issubclass(sub, _EngineNode))


class Node(metaclass=_VirtualBase):
    """torch.autograd.graph.Node: the abstract type of grad_fn objects. As PyTorch's, a
    virtual base: every node is an instance, no node class lists it in its MRO."""

    __slots__ = ()


def _node_of(t):
    if isinstance(t, GradientEdge):
        return t.node
    if t.grad_fn is not None:
        return t.grad_fn
    return t._grad_accumulator()


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge through which tensor's gradient flows: usable as an input of autograd.grad."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients")
    return GradientEdge(_node_of(tensor), tensor._output_nr)


def increment_version(tensor) -> None:
    """Mark tensor(s) as changed in place, for the saved-tensor version checks."""
    for t in (tensor,) if isinstance(tensor, _Tensor) else tensor:
        t._vc[0] += 1


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """Inside the context, each tensor saved for backward is pack_hook(tensor), and
    backward reads unpack_hook(packed)."""

    __module__ = "torch.autograd.graph"  # PyTorch's class name

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _saved_hooks.push(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args) -> None:
        _saved_hooks.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Saved tensors are kept as copies "on the CPU" (gradcli has no other device)."""

    __module__ = "torch.autograd.graph"  # PyTorch's class name

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(tensor):
            return ("cpu", tensor)  # (already there: PyTorch's .cpu() returns it as it is)

        def unpack_from_cpu(packed):
            return packed[1]

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Inside, entering saved_tensors_hooks raises RuntimeError(error_message)."""
    if _saved_hooks.STACK:  # (PyTorch refuses to disable hooks that are in use)
        raise RuntimeError(error_message)
    previous = _saved_hooks.DISABLED[0]
    try:
        _saved_hooks.DISABLED[0] = error_message
        yield
    finally:
        _saved_hooks.DISABLED[0] = previous


def _saved_key(t) -> tuple:
    """One tensor object at one address and version (PyTorch's key: saving it again
    before a write reuses the first handle)."""
    return (id(t), t.data_ptr(), t._vc[0])


def _memory_key(t) -> tuple:
    """Where a tensor starts in memory, at its version: as PyTorch, a write is matched to
    the saved tensors that start at the same address (a view at another offset is not)."""
    return (t.data_ptr(), t._vc[0])


class _Handle:
    """What a node keeps for one saved tensor while allow_mutation_on_saved_tensors is on:
    the context maps it weakly to the tensor (or to its copy once it was written), so the
    entry goes when the graph that saved it goes."""

    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """The state of one allow_mutation_on_saved_tensors() block (PyTorch's names, which
    its tests read): saved tensors by handle, the copies made before a write, handles by
    tensor key, tensor keys by memory and version."""

    def __init__(self) -> None:
        self.cloned = weakref.WeakKeyDictionary()
        self.original = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


_MUTATION_ALLOWED = [False]  # inside allow_mutation_on_saved_tensors (PyTorch's global flag)
_OUTSIDE_CONTEXT = (
    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
    "in which the graph was originally recorded.")


def _mutation_hooks(ctx: _AllowMutationOnSavedContext) -> saved_tensors_hooks:
    """Saved tensors become handles; backward reads the copy when the tensor was written
    since it was saved, else the tensor itself."""

    def pack(tensor):
        key = _saved_key(tensor)
        ctx.sid_to_tid[_memory_key(tensor)].add(key)
        handle = ctx.tid_to_weakhandle.get(key)
        if handle is None:
            handle = _Handle()
            ctx.tid_to_weakhandle[key] = handle
            ctx.original[handle] = tensor
        return handle

    def unpack(handle):
        if not _MUTATION_ALLOWED[0]:
            raise AssertionError(_OUTSIDE_CONTEXT)
        if handle in ctx.cloned:
            return ctx.cloned[handle]
        if handle not in ctx.original:
            raise AssertionError(_OUTSIDE_CONTEXT)
        return ctx.original[handle]

    return saved_tensors_hooks(pack, unpack)


def _copy_before_write(ctx: _AllowMutationOnSavedContext):
    """The engine's BEFORE_WRITE for ctx: copy every tensor saved from this memory at its
    current version (once) before the write changes it."""
    from gradcli.engine.grad_mode import no_grad

    def before_write(target) -> None:
        where = _memory_key(target)
        for key in ctx.sid_to_tid.get(where, ()):
            handle = ctx.tid_to_weakhandle.get(key)
            if handle is None or handle in ctx.cloned:
                continue  # freed by a backward since, or copied already
            if ctx.original[handle].data_ptr() != where[0]:
                continue  # the engine gave it memory of its own (an in-place op's input)
            with no_grad():
                ctx.cloned[handle] = ctx.original.pop(handle).detach().clone()

    return before_write


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Tensors saved for backward may be changed in place inside the block: each is
    copied just before its first write, and backward (which must run inside the same
    block) reads the copy. Yields the block's state; cleared on exit."""
    ctx = _AllowMutationOnSavedContext()
    previous_guard = _tensor_module.BEFORE_WRITE
    with _mutation_hooks(ctx):
        _tensor_module.BEFORE_WRITE = _copy_before_write(ctx)
        try:
            if _MUTATION_ALLOWED[0]:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
            _MUTATION_ALLOWED[0] = True
            yield ctx
        finally:
            ctx.clear()
            _MUTATION_ALLOWED[0] = False
            _tensor_module.BEFORE_WRITE = previous_guard


class _MultiHandle(RemovableHandle):
    __slots__ = ("handles",)

    def __init__(self, handles: tuple):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __repr__(self) -> str:
        return f"<torch.autograd.graph._MultiHandle object at {id(self):#x}>"


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """fn(grads) once the gradients of all `tensors` this backward computes are there
    (None for the others); mode="any": fn(grad) with the first of them."""
    supported_modes = ("all", "any")
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    tensors = tuple(tensors)
    if mode == "all":
        count: dict = {}
        buffer: dict = {}
        grad_fns = [_node_of(t) for t in tensors]
        expected = [0]

        def inner(idx):
            def hook(grad):
                task = current_task_id()
                if task == -1:
                    raise AssertionError("expected this hook to be called inside a backward call")
                seen = count.get(task, 0)
                count[task] = seen + 1
                slots = buffer.setdefault(task, [None] * len(tensors))
                if seen == 0:
                    expected[0] = sum(will_engine_execute_node(n) for n in grad_fns)
                slots[idx] = grad
                if seen == expected[0] - 1:
                    del count[task]
                    del buffer[task]
                    fn(slots)

            return hook

        handles = tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors))
    else:
        ran: set = set()

        @functools.wraps(fn)
        def first(grad):
            task = current_task_id()
            if task == -1:
                raise AssertionError("expected this hook to be called inside a backward call")
            if task in ran:
                return
            ran.add(task)
            fn(grad)

        handles = tuple(t.register_hook(first) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)
