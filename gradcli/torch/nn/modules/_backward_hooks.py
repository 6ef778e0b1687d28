"""Module full backward hooks: hook(module, grad_input, grad_output), called once the
gradients for the module's inputs are known, as PyTorch calls them.

The module's tensor inputs and outputs pass through identity nodes
(BackwardHookFunctionBackward, as in PyTorch); tensor hooks on those collect the output
gradients first and the input gradients after. A hook's return value replaces the input
gradients (for a module with one tensor input needing grad, the common case, exactly).
"""

from __future__ import annotations

from gradcli.engine.grad_mode import is_grad_enabled
from gradcli.engine.tensor import Tensor


class _State:
    """One call's backward hooks (the global ones first, as the call found them: a hook
    registered or removed after the forward does not change what its backward runs, as in
    PyTorch) and the gradients gathered for them."""

    def __init__(self, module, n_inputs: int, hooks: list, pre_hooks: list):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_inputs = [None] * n_inputs
        self.waiting = set()
        self.grad_outputs = None
        self.n_outputs = 0
        self.fired = False
        self.outputs_seen = 0

    def call_pre_hooks(self):
        """Full backward pre-hooks: hook(module, grad_output), whose result (if not None)
        becomes the output gradients the module's backward and its full hooks see."""
        changed = False
        for hook in self.pre_hooks:
            out = hook(self.module, tuple(self.grad_outputs))
            if out is not None:
                out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
                if len(out) != len(self.grad_outputs):
                    raise RuntimeError(
                        f"Backward pre hook returned an invalid number of grad_output, got "
                        f"{len(out)}, but expected {len(self.grad_outputs)}")
                self.grad_outputs = list(out)
                changed = True
        return self.grad_outputs if changed else None

    def call_hooks(self):
        grad_in = tuple(self.grad_inputs)
        grad_out = tuple(self.grad_outputs or ())
        for hook in self.hooks:
            out = hook(self.module, grad_in, grad_out)
            if out is not None:
                out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
                if len(out) != len(grad_in):
                    raise RuntimeError(
                        f"Backward hook returned an invalid number of grad_input, got "
                        f"{len(out)}, but expected {len(grad_in)}")
                grad_in = out
        self.fired = True
        return grad_in


def _identity(t):
    from gradcli.engine.ops.nn_layers import backward_hook_identity

    return backward_hook_identity(t)


def wrap_inputs(module, args, hooks: list, pre_hooks: list):
    if not is_grad_enabled():
        return args, None
    tensors = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    state = _State(module, len(tensors), hooks, pre_hooks)
    new_args = list(args)
    for slot, i in enumerate(tensors):
        a = args[i]
        if not a.requires_grad:
            continue
        wrapped = _identity(a)
        state.waiting.add(slot)

        def on_grad(grad, slot=slot):
            state.grad_inputs[slot] = grad
            state.waiting.discard(slot)
            if state.grad_outputs is None:  # the gradient reached the inputs without passing
                return None  # the outputs (a list returned, a double backward): no hook runs
            if not state.waiting and not state.fired:
                replaced = state.call_hooks()
                return replaced[slot]
            return None

        wrapped.register_hook(on_grad)
        new_args[i] = wrapped
    return tuple(new_args), state


def wrap_outputs(module, result, state):
    if state is None:
        return result
    single = isinstance(result, Tensor)
    # (only a tensor or a tuple's tensors: any other output, a list too, is one opaque value)
    outs = [result] if single else list(result) if isinstance(result, tuple) else None
    if outs is None:
        return result
    idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    state.grad_outputs = [None] * len([o for o in outs if isinstance(o, Tensor)])
    for i in idx:
        wrapped = _identity(outs[i])

        def on_grad(grad, i=i):
            state.grad_outputs[i] = grad
            state.outputs_seen += 1
            replaced = None
            if state.outputs_seen == len(idx):
                # every output's gradient is in: the pre-hooks see (and may replace) them
                replaced = state.call_pre_hooks()
            # no input needs a gradient: the hook runs now, with None for each input
            if not state.waiting and not state.fired:
                state.call_hooks()
            return None if replaced is None else replaced[i]

        wrapped.register_hook(on_grad)
        outs[i] = wrapped
    if single:
        return outs[0]
    return tuple(outs) if type(result) is tuple else type(result)(*outs)


# ------------------------------------------------------------------ register_backward_hook
_NOT_SINGLE_OUTPUT = (
    "Using non-full backward hooks on a Module that does not return a single Tensor or a "
    "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
    "missing some of the grad_output. Please use register_full_backward_hook to get the "
    "documented behavior.")
_NOT_SINGLE_INPUT = (
    "Using non-full backward hooks on a Module that does not take as input a single Tensor or "
    "a tuple of Tensors is deprecated and will be removed in future versions. This hook will "
    "be missing some of the grad_input. Please use register_full_backward_hook to get the "
    "documented behavior.")
_NESTED_OUTPUTS = (
    "Using a non-full backward hook when outputs are nested in python data structure is "
    "deprecated and will be removed in future versions. This hook will be missing some "
    "grad_output.")
_SEVERAL_OUTPUT_NODES = (
    "Using a non-full backward hook when outputs are generated by different autograd Nodes is "
    "deprecated and will be removed in future versions. This hook will be missing some "
    "grad_output. Please use register_full_backward_hook to get the documented behavior.")
_SEVERAL_NODES = (
    "Using a non-full backward hook when the forward contains multiple autograd Nodes is "
    "deprecated and will be removed in future versions. This hook will be missing some "
    "grad_input. Please use register_full_backward_hook to get the documented behavior.")


def _first_tensor(value):
    while not isinstance(value, Tensor):
        if isinstance(value, dict):
            value = next(v for v in value.values() if isinstance(v, Tensor))
        else:
            value = value[0]
    return value


def _partial_hook_warning(args, result, grad_fn):
    """Which of PyTorch's FutureWarnings says what such a hook will miss, or None."""
    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        return _NOT_SINGLE_OUTPUT
    if not (isinstance(args, tuple) and all(isinstance(a, Tensor) for a in args)):
        return _NOT_SINGLE_INPUT
    out_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and grad_fn not in out_nodes):
        return _NESTED_OUTPUTS
    if len(out_nodes) > 1:
        return _SEVERAL_OUTPUT_NODES
    in_nodes = {a.grad_fn for a in args if a.grad_fn is not None}
    if in_nodes != {fn for fn, _ in grad_fn.next_functions}:
        return _SEVERAL_NODES
    return None


def hook_output_node(module, args, result, hooks: list) -> None:
    """The deprecated Module.register_backward_hook: each hook becomes a post-hook of the
    node that made the forward's first output tensor, called as hook(module, grad_input,
    grad_output) with that node's gradients, and PyTorch's FutureWarning says when those
    are not the module's."""
    grad_fn = _first_tensor(result).grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(_ModuleNodeHook(hook, module))
    message = _partial_hook_warning(args, result, grad_fn)
    if message is not None:
        import warnings

        warnings.warn(message, FutureWarning, stacklevel=3)


class _ModuleNodeHook:
    """A node post-hook calling a module's backward hook with the module first."""

    def __init__(self, hook, module):
        self.hook = hook
        self.module = module

    def __call__(self, grad_inputs, grad_outputs):
        return self.hook(self.module, grad_inputs, grad_outputs)
