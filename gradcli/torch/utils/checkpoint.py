"""torch.utils.checkpoint: activation checkpointing with what a program can see of PyTorch's.

Checkpointing trades memory for a second run of the function; gradcli's tensors are
small, so what matters is what shows: when the function runs again, which RNG state
it sees, which node the output hangs off, which warnings and errors come out.

- The reentrant variant (`use_reentrant=True`, the default when the argument is left out,
  with PyTorch's warning) is a custom Function, CheckpointFunction: the function runs
  under no_grad, the output's grad_fn is `CheckpointFunctionBackward`, and its backward
  runs the function again on detached inputs under grad mode and backpropagates through
  that second graph.
- The non-reentrant variant keeps the function's own graph (the output's grad_fn is the
  function's last node) but packs every tensor its ops save as a place-holder; the first
  time the backward reads one, the function runs again, up to the op that saves the last
  of them (early stop), and the place-holders are answered from that run.
Both re-runs start from the generator state of the first run (`preserve_rng_state`), so a
dropout inside draws the same mask.
"""

from __future__ import annotations

import contextlib
import warnings

from gradcli.engine.autograd import backward as _backward
from gradcli.engine.autograd import is_checkpoint_valid
from gradcli.engine.custom_function import Function
from gradcli.engine.grad_mode import enable_grad, no_grad
from gradcli.engine.tensor import Tensor
from gradcli.torch.autograd.graph import saved_tensors_hooks
from gradcli.torch.random import fork_rng, get_rng_state, set_rng_state

__all__ = ["CheckpointError", "CheckpointFunction", "check_backward_validity", "checkpoint",
           "checkpoint_sequential", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop"]

_EARLY_STOP = [True]


class CheckpointError(RuntimeError):
    pass


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Inside, the non-reentrant re-run stops (or not) after the last saved tensor."""
    before = _EARLY_STOP[0]
    _EARLY_STOP[0] = enable
    try:
        yield
    finally:
        _EARLY_STOP[0] = before


def detach_variable(inputs):
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    if not any(isinstance(inp, Tensor) and inp.requires_grad for inp in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      UserWarning, stacklevel=3)


@contextlib.contextmanager
def _replaying(state):
    """The block draws from `state` and leaves the generator as it found it."""
    if state is None:
        yield
        return
    with fork_rng():
        set_rng_state(state)
        yield


class CheckpointFunction(Function):
    """The reentrant variant (its backward node prints as CheckpointFunctionBackward)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.places = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.others)
        for place, saved in zip(ctx.places, ctx.saved_tensors, strict=True):
            inputs[place] = saved
        inputs = detach_variable(tuple(inputs))
        with _replaying(ctx.rng_state), enable_grad():
            outputs = ctx.run_function(*inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in inputs)


class _StopRecomputation(Exception):
    """Raised inside the re-run once it has saved every tensor the backward needs."""


class _Frame:
    """One non-reentrant call: how many tensors its forward saved, and their values from
    the re-run once the backward asks for the first of them."""

    def __init__(self, function, args, kwargs, rng_state, recompute_context):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = rng_state
        self.recompute_context = recompute_context
        self.count = 0
        self.values = None

    def pack(self, _tensor):
        self.count += 1
        return self.count - 1

    def unpack(self, index):
        if self.values is None:
            self.values = self._rerun()
        return self.values[index]

    def _rerun(self) -> list:
        values: list = []
        wanted = self.count
        early = _EARLY_STOP[0]

        def keep(t):
            values.append(t.detach())
            if early and len(values) == wanted:
                raise _StopRecomputation
            return None

        def refuse(_):
            raise CheckpointError("torch.utils.checkpoint: unpack is being triggered for a "
                                  "tensor that was already unpacked once.")

        with _replaying(self.rng_state), enable_grad(), self.recompute_context, \
                saved_tensors_hooks(keep, refuse):
            try:
                self.function(*self.args, **self.kwargs)
            except _StopRecomputation:
                pass
        if len(values) < wanted:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{wanted}\nNumber of tensors saved during recomputation: {len(values)}.")
        return values


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """Run `function(*args, **kwargs)` so that its backward runs it again (see the module)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", UserWarning,
            stacklevel=1)  # (PyTorch's points at its own line too)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    forward_context, recompute_context = context_fn()
    frame = _Frame(function, args, kwargs, get_rng_state() if preserve else None,
                   recompute_context)
    with set_checkpoint_early_stop(early_stop and _EARLY_STOP[0]), forward_context, \
            saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or a list of modules/functions) in `segments` chunks, every chunk
    but the last under checkpoint."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.", UserWarning,
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from gradcli.torch.nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def chunk(start, stop):
        def run(x):
            for fn in functions[start:stop]:
                x = fn(x)
            return x
        return run

    size = len(functions) // segments
    for start in range(0, size * (segments - 1), size):
        input = checkpoint(chunk(start, start + size), input,  # noqa: A001
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return chunk(size * (segments - 1), len(functions))(input)
