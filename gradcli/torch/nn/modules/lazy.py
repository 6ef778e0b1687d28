"""nn.LazyLinear (d2l's layers since its 2023 edition): the input size is read from the
first input. Until then the weight and bias are UninitializedParameters (printing
`<UninitializedParameter>`); the first call gives them their shapes in place (so an
optimizer made before it holds the same objects), draws Linear's initialisation from the
generator at that moment, as PyTorch does, and turns the module into a Linear."""

from __future__ import annotations

from gradcli.engine.grad_mode import no_grad
from gradcli.engine.ops.creation import empty
from gradcli.engine.tensor import Tensor, _init

from ..parameter import Parameter
from .conv_more import Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, _ConvTransposeNd
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .layers import BatchNorm1d, BatchNorm2d, BatchNorm3d, Conv1d, Conv2d
from .linear import Linear
from .module import Module

__all__ = ["LazyLinear", "UninitializedParameter", "UninitializedBuffer", "LazyConv1d",
           "LazyConv2d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


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


class UninitializedBuffer(Tensor):
    """A buffer without a shape yet (a lazy batch norm's running statistics)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        t = object.__new__(cls)
        _init(t, empty(0, dtype=dtype)._data, bool(requires_grad), None)
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass

    def materialize(self, shape, device=None, dtype=None) -> None:
        self.data = empty(tuple(shape), dtype=dtype if dtype is not None else self.dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return "<UninitializedBuffer>"

    __str__ = __repr__


UninitializedBuffer.__module__ = "torch.nn.parameter"


class _LazyMixin:
    """What the lazy conv and norm layers share: parameters (and buffers) without shapes
    until the first input, which fixes them, draws the layer's initialisation then, and
    turns the module into its eager class (`cls_to_become`)."""

    def has_uninitialized_params(self) -> bool:
        held = list(self._parameters.values()) + list(self._buffers.values())
        return any(isinstance(t, (UninitializedParameter, UninitializedBuffer)) for t in held)

    def _call_lazy(self, input, *args):
        eager = self.cls_to_become
        if self.has_uninitialized_params():
            with no_grad():
                self.initialize_parameters(input)
            self.__class__ = eager
        return eager.forward(self, input, *args)


def _lazy_conv(eager):
    class LazyConv(_LazyMixin, eager):
        cls_to_become = eager

        def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, *rest,
                     **options) -> None:
            # built as an eager layer of `groups` input channels, then emptied (PyTorch
            # draws nothing here either: reset_parameters waits for the shapes). The
            # transposed layers take output_padding before groups, as their eager ones.
            transposed = issubclass(eager, _ConvTransposeNd)
            names = (("output_padding", "groups", "bias", "dilation", "padding_mode",
                      "device", "dtype") if transposed else
                     ("dilation", "groups", "bias", "padding_mode", "device", "dtype"))
            if len(rest) > len(names):
                raise TypeError(f"{type(self).__name__}.__init__() takes from 3 to "
                                f"{len(names) + 5} positional arguments but "
                                f"{len(rest) + 4} were given")
            options.update(zip(names, rest))
            groups = options.get("groups", 1)
            bias = options.get("bias", True)
            dtype = options.get("dtype")
            self._lazy_building = True
            eager.__init__(self, groups, out_channels, kernel_size, stride, padding, **options)
            del self._lazy_building
            self.in_channels = 0
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)

        def reset_parameters(self) -> None:
            if getattr(self, "_lazy_building", False):
                return
            if not self.has_uninitialized_params() and self.in_channels != 0:
                eager.reset_parameters(self)

        def initialize_parameters(self, input) -> None:
            batched = input.dim() == self._dims + 2
            self.in_channels = input.shape[1] if batched else input.shape[0]
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

        def forward(self, input, *args):
            return self._call_lazy(input, *args)

    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + eager.__name__
    LazyConv.__module__ = "torch.nn.modules.conv"
    return LazyConv


def _lazy_norm(eager):
    class LazyNorm(_LazyMixin, eager):
        cls_to_become = eager

        def __init__(self, eps: float = 1e-5, momentum=0.1, affine: bool = True,
                     track_running_stats: bool = True, device=None, dtype=None) -> None:
            eager.__init__(self, 0, eps, momentum, affine, track_running_stats, device=device,
                           dtype=dtype)
            if affine:
                self.weight = UninitializedParameter(dtype=dtype)
                self.bias = UninitializedParameter(dtype=dtype)
            if track_running_stats:
                self.running_mean = UninitializedBuffer(dtype=dtype)
                self.running_var = UninitializedBuffer(dtype=dtype)

        def reset_parameters(self) -> None:
            if not self.has_uninitialized_params() and self.num_features != 0:
                eager.reset_parameters(self)

        def initialize_parameters(self, input) -> None:
            self.num_features = input.shape[1]
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if isinstance(t, (UninitializedParameter, UninitializedBuffer)):
                    t.materialize((self.num_features,))
            self.reset_parameters()

        def forward(self, input):
            return self._call_lazy(input)

    LazyNorm.__name__ = LazyNorm.__qualname__ = "Lazy" + eager.__name__
    LazyNorm.__module__ = ("torch.nn.modules.instancenorm" if "Instance" in eager.__name__
                           else "torch.nn.modules.batchnorm")
    return LazyNorm


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)
LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyConv3d = _lazy_conv(Conv3d)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
