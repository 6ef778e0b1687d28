"""torch.nn.utils.parametrize: a parameter or buffer computed from others each time it is read.

Registering a parametrization moves the tensor to ``module.parametrizations[name].original``
(a ParametrizationList, a ModuleList of the parametrizations) and swaps the module's class
for a made-on-the-spot subclass ``Parametrized<Class>`` with a property under the tensor's
name: reading it runs the chain, assigning to it runs each ``right_inverse`` backwards. The
module prints, names its parameters and saves its state as PyTorch's does because these
are the same ordinary Module mechanics (submodules, a property on the class).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager

from gradcli.engine.grad_mode import no_grad
from gradcli.engine.tensor import Tensor

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

#: how many cached() blocks are open, and what they computed: {(id(module), name): tensor}
_cache_depth = [0]
_cache: dict = {}


@contextmanager
def cached():
    """Inside the block each parametrized tensor is computed once, on first read."""
    _cache_depth[0] += 1
    try:
        yield
    finally:
        _cache_depth[0] -= 1
        if not _cache_depth[0]:
            _cache.clear()


def _register_tensor(module: Module, name: str, value) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_in_place(dest: Tensor, src: Tensor) -> None:
    """Make `dest` hold `src`'s data (the Parameter object stays the one optimizers hold)."""
    dest.set_(src)


def _kind(value) -> str:
    return type(value).__name__


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to ``original`` (or to
    ``original0, original1...`` when the first right_inverse returns several tensors)."""

    __module__ = "torch.nn.utils.parametrize"  # (prints as PyTorch's class)

    def __init__(self, modules, original, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {_kind(new)}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _set_in_place(original, new)
            _register_tensor(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors "
                        f"(list, tuple...). Got element {i} of the sequence with type "
                        f"{_kind(part)}.")
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part._requires_grad_(original.requires_grad)
                _register_tensor(self, f"original{i}", part)
        if not self.unsafe:
            out = self()
            if not isinstance(out, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {_kind(out)}.")
            if out.dtype != dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {dtype}\n"
                    f"parametrized dtype: {out.dtype}")
            if out.shape != shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {shape}\n"
                    f"parametrized shape: {out.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Assigning to the parametrized tensor: the inverses, last parametrization first,
        give the new original(s)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {_kind(value)}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_in_place(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError("'right_inverse' must return a sequence of tensors. "
                                 f"Got {_kind(value)}.")
            if len(value) != self.ntensors:
                raise ValueError("'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, part in enumerate(value):
                held = getattr(self, f"original{i}")
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a sequence of tensors or "
                                     f"reference-type opaques. Got element {i} of type "
                                     f"{_kind(part)}.")
                if held.dtype != part.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{part.dtype} while `original{i}` has dtype {held.dtype}")
                _set_in_place(held, part)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        index = 1
        while hasattr(self, str(index)):
            x = self[index](x)
            index += 1
        return x


def _parametrized_deepcopy(self, memo):
    import copy

    done = memo.get(id(self))
    if done is not None:
        return done
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    return replica


def _refuse_pickling(self):
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). See:\n"
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _inject_new_class(module: Module) -> None:
    """Give this one module a class of its own, so properties added to it touch no other."""
    cls = type(module)
    members = {"__getstate__": _refuse_pickling, "__module__": "torch.nn.utils.parametrize"}
    if not hasattr(cls, "__deepcopy__"):
        members["__deepcopy__"] = _parametrized_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), members)


def _inject_property(module: Module, name: str) -> None:
    if hasattr(module, name):
        raise AssertionError(f"Module already has an attribute named '{name}'")

    def compute(self) -> Tensor:
        chain = self.parametrizations[name]
        if not _cache_depth[0]:
            return chain()
        key = (id(module), name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = chain()
        return value

    def assign(self, value) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(compute, assign))


def _check_like(what: str, name: str, got: Tensor, want: Tensor, text_dtype: str,
                text_shape: str) -> None:
    if got.dtype != want.dtype:
        raise ValueError(text_dtype.format(name=name, want=want.dtype, got=got.dtype))
    if got.shape != want.shape:
        raise ValueError(text_shape.format(name=name, want=want.shape, got=got.shape))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` be ``parametrization(original)`` (appended to the chain
    when the tensor is parametrized already)."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            out = parametrization(current)
            if not isinstance(out, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {_kind(out)}.")
            _check_like("", tensor_name, out, current,
                        "Registering a parametrization may not change the dtype of the tensor,"
                        " unless the `unsafe` flag is enabled.\nmodule.{name}.dtype: {want}\n"
                        "parametrization(module.{name}).dtype: {got}",
                        "Registering a parametrization may not change the shape of the tensor,"
                        " unless the `unsafe` flag is enabled.\nmodule.{name}.shape: {want}\n"
                        "parametrization(module.{name}).shape: {got}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    back = parametrization.right_inverse(out)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(back, Tensor):
                        raise ValueError("parametrization.right_inverse must return a tensor. "
                                         f"Got: {_kind(back)}")
                    _check_like("", tensor_name, back, current,
                                "The tensor returned by parametrization.right_inverse must have"
                                " the same dtype as module.{name}, unless the `unsafe` flag is "
                                "enabled.\nmodule.{name}.dtype: {want}\nreturned dtype: {got}",
                                "The tensor returned by parametrization.right_inverse must have"
                                " the same shape as module.{name}, unless the `unsafe` flag is "
                                "enabled.\nmodule.{name}.shape: {want}\nreturned shape: {got}")
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        chain = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = chain
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    found = getattr(module, "parametrizations", None)
    if found is None or not isinstance(found, ModuleDict):
        return False
    if tensor_name is None:
        return len(found) > 0
    return tensor_name in found


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo the parametrization of one tensor: it becomes a plain parameter (or buffer)
    again, holding the current parametrized value (or the original, if asked)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                _set_in_place(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        value = getattr(module, tensor_name)
        original = Parameter(value) if value.requires_grad else value
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_tensor(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register on `to_module` the same parametrizations (the same objects) and originals."""
    if is_parametrized(from_module):
        names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
        for name in names:
            if not hasattr(to_module, name):
                setattr(to_module, name, Parameter(getattr(from_module, name)))
            for step in from_module.parametrizations[name]:
                register_parametrization(to_module, name, step)
            source = from_module.parametrizations[name]
            target = to_module.parametrizations[name]
            if hasattr(source, "original"):
                target.original = source.original
            else:
                i = 0
                while hasattr(source, f"original{i}"):
                    setattr(target, f"original{i}", getattr(source, f"original{i}"))
                    i += 1
    return to_module
