"""torch.autograd.NestedIOFunction: the legacy Function taking nested inputs through
forward_extended / backward_extended. In PyTorch 2.13 it can no longer run (its instance
call reaches a base method that is gone, and apply hands it a context without its nested
inputs); gradcli keeps the class, its methods and those same failures, so scripts that
subclass it import and fail as under PyTorch."""

from __future__ import annotations

from gradcli.engine.custom_function import Function


class NestedIOFunction(Function):
    def _do_forward(self, *input):
        raise AttributeError("'super' object has no attribute '_do_forward'")

    def _do_backward(self, gradients, retain_variables):
        raise AttributeError("'super' object has no attribute '_do_backward'")

    def __call__(self, *input):
        return self._do_forward(*input)

    def backward(self, *gradients):
        nested_gradients = gradients
        return self.backward_extended(*nested_gradients)

    def forward(self, *args):
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '_nested_input'")

    def save_for_backward(self, *args) -> None:
        self.to_save = tuple(args)

    @property
    def saved_tensors(self):
        return self.to_save

    def mark_dirty(self, *args, **kwargs) -> None:
        self.dirty_tensors = tuple(args)

    def mark_non_differentiable(self, *args, **kwargs) -> None:
        self.non_differentiable = tuple(args)

    def forward_extended(self, *input):
        raise NotImplementedError

    def backward_extended(self, *grad_output):
        raise NotImplementedError


NestedIOFunction.__module__ = "torch.autograd.function"
