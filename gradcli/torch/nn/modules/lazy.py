"""nn.LazyLinear (d2l's layers since its 2023 edition): the input size is read from the
first input. Until then the weight and bias are UninitializedParameters (printing
`<UninitializedParameter>`); the first call gives them their shapes in place (so an
optimizer made before it holds the same objects), draws Linear's initialisation from the
generator at that moment, as PyTorch does, and turns the module into a Linear."""

from __future__ import annotations

from gradcli.engine.grad_mode import no_grad
from gradcli.engine.ops.creation import empty

from ..parameter import Parameter
from .linear import Linear
from .module import Module

__all__ = ["LazyLinear", "UninitializedParameter"]


class UninitializedParameter(Parameter):
    """A parameter without a shape yet; ``materialize(shape)`` gives it one."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass  # all done in __new__

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Become an (uninitialised) Parameter of `shape`: the same object, new storage."""
        self.data = empty(tuple(shape), dtype=dtype if dtype is not None else self.dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return "<UninitializedParameter>"

    __str__ = __repr__


UninitializedParameter.__module__ = "torch.nn.parameter"


class LazyLinear(Linear):
    """Linear whose in_features is the last dimension of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def has_uninitialized_params(self) -> bool:
        return any(isinstance(p, UninitializedParameter) for p in (self.weight, self.bias))

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            Linear.reset_parameters(self)

    def initialize_parameters(self, input) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()

    def forward(self, input):
        if self.has_uninitialized_params():
            self.initialize_parameters(input)
            self.__class__ = self.cls_to_become
        return Linear.forward(self, input)


LazyLinear.__module__ = "torch.nn.modules.linear"
