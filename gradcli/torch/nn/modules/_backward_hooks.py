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
    def __init__(self, module, n_inputs: int):
        self.module = module
        self.grad_inputs = [None] * n_inputs
        self.waiting = set()
        self.grad_outputs = None
        self.n_outputs = 0
        self.fired = False

    def call_hooks(self):
        from .module import _PreHook

        grad_in = tuple(self.grad_inputs)
        grad_out = tuple(self.grad_outputs or ())
        for hook in list(self.module._backward_hooks.values()):
            if isinstance(hook, _PreHook):
                continue
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


def wrap_inputs(module, args):
    if not is_grad_enabled():
        return args, None
    tensors = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    state = _State(module, len(tensors))
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
    outs = [result] if single else list(result) if isinstance(result, (tuple, list)) else None
    if outs is None:
        return result
    idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    state.grad_outputs = [None] * len([o for o in outs if isinstance(o, Tensor)])
    for i in idx:
        wrapped = _identity(outs[i])

        def on_grad(grad, i=i):
            state.grad_outputs[i] = grad
            # no input needs a gradient: the hook runs now, with None for each input
            if not state.waiting and not state.fired:
                state.call_hooks()
            return None

        wrapped.register_hook(on_grad)
        outs[i] = wrapped
    if single:
        return outs[0]
    return type(result)(outs) if isinstance(result, tuple) else outs
