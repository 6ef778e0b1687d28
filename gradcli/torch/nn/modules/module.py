"""nn.Module: the base class of every layer and of the models programs write.

An ordinary Python class (so a class made by a program, in Python or in a .grad file,
can subclass it): attributes that are Parameters, Modules or registered buffers are
kept in three ordered dicts and found by `__getattr__`, as PyTorch does, so the
traversals (`parameters`, `named_modules`, `state_dict`...) visit them in registration
order with PyTorch's qualified names (`fc1.weight`).
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple

from gradcli.engine.grad_mode import no_grad
from gradcli.engine.tensor import Tensor

from ..parameter import Parameter, buffer_persistence

__all__ = ["Module", "register_module_backward_hook", "register_module_buffer_registration_hook",
           "register_module_forward_hook", "register_module_forward_pre_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

_hook_ids = itertools.count()

_MIXED_BACKWARD_HOOKS = ("Cannot use both regular backward hooks and full backward hooks on a "
                         "single Module. Please use only one of them.")


class RemovableHandle:
    """What register_*_hook returns: `.remove()` takes the hook out again."""

    __module__ = "torch.utils.hooks"  # PyTorch's class name

    def __init__(self, table: dict, *extra: dict | None):
        self._table = table
        self._extra = extra  # (the other tables a hook is also listed in: with_kwargs, ...)
        self.id = next(_hook_ids)

    def remove(self) -> None:
        self._table.pop(self.id, None)
        for table in self._extra:
            if table is not None:
                table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


# Hooks every module runs (torch.nn.modules.module.register_module_*_hook), PyTorch's
# global tables: a module's call runs the global forward pre-hooks and forward hooks before
# its own, its backward hooks the global ones first; the registration hooks see (and may
# replace) every parameter, buffer and submodule any module registers.
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()
_global_is_full_backward_hook: bool | None = None
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()
def _add_global_hook(table: OrderedDict, hook, *flags: OrderedDict | None) -> RemovableHandle:
    """List `hook` in `table` and its id in `flags` (with_kwargs, always_call); its handle
    takes it out of all of them."""
    handle = RemovableHandle(table, *flags)
    table[handle.id] = hook
    for flag in flags:
        if flag is not None:
            flag[handle.id] = True
    return handle


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """hook(module, args) before every module's forward (before the module's own pre-hooks);
    a value it returns replaces the positional arguments (a non-tuple is wrapped in one)."""
    return _add_global_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """hook(module, args, output) (with_kwargs: hook(module, args, kwargs, output)) after
    every module's forward, before the module's own forward hooks; a value it returns
    replaces the output. always_call: it runs even when the forward raises."""
    return _add_global_hook(_global_forward_hooks, hook,
                            _global_forward_hooks_with_kwargs if with_kwargs else None,
                            _global_forward_hooks_always_called if always_call else None)


def _global_backward_kind(full: bool) -> None:
    """Global backward hooks are all full ones or all deprecated ones (PyTorch's rule,
    kept after their hooks are removed)."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full


def register_module_backward_hook(hook) -> RemovableHandle:
    """The deprecated global form of Module.register_backward_hook."""
    _global_backward_kind(full=False)
    return _add_global_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """hook(module, grad_output) for every module, before the module's own backward pre-hooks."""
    return _add_global_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """hook(module, grad_input, grad_output) for every module, before the module's own."""
    _global_backward_kind(full=True)
    return _add_global_hook(_global_backward_hooks, hook)


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """hook(module, name, buffer) whenever a module registers a buffer; a value it returns is
    registered instead."""
    return _add_global_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """hook(module, name, submodule) whenever a module registers a submodule; a value it
    returns is registered instead."""
    return _add_global_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """hook(module, name, param) whenever a module registers a parameter; a value it returns
    is registered instead."""
    return _add_global_hook(_global_parameter_registration_hooks, hook)


def _forget_global_hooks() -> None:
    """Every global module hook gone, as in a new process (a new program's start)."""
    global _global_is_full_backward_hook
    for table in (_global_forward_pre_hooks, _global_forward_hooks,
                  _global_forward_hooks_with_kwargs, _global_forward_hooks_always_called,
                  _global_backward_pre_hooks, _global_backward_hooks,
                  _global_buffer_registration_hooks, _global_module_registration_hooks,
                  _global_parameter_registration_hooks):
        table.clear()
    _global_is_full_backward_hook = None


def _registered(table: OrderedDict, module, name: str, value):
    """`value` as the registration hooks in `table` leave it (each may replace it)."""
    for hook in list(table.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _typename(value) -> str:
    """torch.typename: 'torch.FloatTensor' for tensors, the qualified class otherwise."""
    if isinstance(value, Tensor):
        from gradcli.engine.tensor import _type_word

        return f"torch.{_type_word(value.dtype)}Tensor"
    module = type(value).__module__
    name = type(value).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def _indent(text: str, spaces: int) -> str:
    """Indent every line of `text` but the first by `spaces` (how reprs nest)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    pad = " " * spaces
    return lines[0] + "\n" + "\n".join(pad + line for line in lines[1:])


class Module:
    """Base class for all neural network modules."""

    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            if not self.call_super_init:
                first = next(iter(kwargs), None)
                if kwargs:
                    raise TypeError(
                        f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                        f"'{first}'")
                raise TypeError(
                    f"{type(self).__name__}.__init__() takes 1 positional argument but "
                    f"{len(args) + 1} were given")
        setter = object.__setattr__
        setter(self, "training", True)
        setter(self, "_parameters", {})
        setter(self, "_buffers", {})
        setter(self, "_non_persistent_buffers_set", set())
        setter(self, "_modules", {})
        # (the hook tables are OrderedDicts, as PyTorch's, so they print as PyTorch's;
        # the parameter, buffer and module tables are plain dicts there too)
        setter(self, "_backward_pre_hooks", OrderedDict())
        setter(self, "_backward_hooks", OrderedDict())
        setter(self, "_is_full_backward_hook", None)
        setter(self, "_forward_hooks", OrderedDict())
        setter(self, "_forward_hooks_with_kwargs", OrderedDict())
        setter(self, "_forward_hooks_always_called", OrderedDict())
        setter(self, "_forward_pre_hooks", OrderedDict())
        setter(self, "_forward_pre_hooks_with_kwargs", OrderedDict())

    # the default forward says the subclass forgot one
    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------- calling
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not (d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"]
                or d["_backward_pre_hooks"] or d.get("_non_full_backward_hooks")
                or _global_forward_pre_hooks or _global_forward_hooks
                or _global_backward_hooks or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs) if kwargs else self.forward(*args)
        called = set()  # the always_call forward hooks that ran
        state = [args, None]  # the arguments after the pre-hooks, the result so far
        try:
            return self._call_with_hooks(args, kwargs, called, state)
        except Exception:
            self._call_always_hooks(kwargs, called, *state)
            raise

    def _call_with_hooks(self, args, kwargs, called: set, state: list):
        """forward with PyTorch's order of hooks: the global forward pre-hooks, the module's;
        forward; the global forward hooks, the module's; backward hooks on the inputs and
        outputs (global ones first). `state` keeps the arguments and the result for the
        always_call hooks should anything raise."""
        d = self.__dict__
        full_hooks = [*(_global_backward_hooks.values() if _global_is_full_backward_hook is True
                        else ()), *self._backward_hooks.values()]
        node_hooks = [*(_global_backward_hooks.values() if _global_is_full_backward_hook is False
                        else ()), *d.get("_non_full_backward_hooks", {}).values()]
        pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        with_kwargs = self._forward_pre_hooks_with_kwargs
        for key, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if key in with_kwargs:
                out = hook(self, args, kwargs)
                if out is not None:
                    if not (isinstance(out, tuple) and len(out) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, "
                            f"new_kwargs), but got {out}.")
                    args, kwargs = out
            else:
                out = hook(self, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)
            state[0] = args
        backward_hooks = full_hooks or pre_hooks
        if backward_hooks:
            from ._backward_hooks import wrap_inputs

            args, wrapped = wrap_inputs(self, args, full_hooks, pre_hooks)
            state[0] = args
        result = state[1] = self.forward(*args, **kwargs)
        always = d.get("_forward_hooks_always_called", ())
        for key, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
            if key in always or key in _global_forward_hooks_always_called:
                called.add(key)
            if key in self._forward_hooks_with_kwargs or key in _global_forward_hooks_with_kwargs:
                out = hook(self, args, kwargs, result)
            else:
                out = hook(self, args, result)
            if out is not None:
                result = state[1] = out
        if backward_hooks:
            from ._backward_hooks import wrap_outputs

            if not isinstance(result, (Tensor, tuple)):
                import warnings

                warnings.warn("For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(result)}",
                              stacklevel=1)  # (PyTorch's points at its own line too)
            result = wrap_outputs(self, result, wrapped)
        if node_hooks:
            from ._backward_hooks import hook_output_node

            hook_output_node(self, args, result, node_hooks)
        return result

    def _call_always_hooks(self, kwargs, called: set, args, result) -> None:
        """After forward or a hook raised: the always_call forward hooks that have not run
        (the global ones, then the module's), each hook's own error only warned about."""
        always = self.__dict__.get("_forward_hooks_always_called", ())
        for scope, table, kwarg_ids, flagged in (
                ("global module", _global_forward_hooks, (), _global_forward_hooks_always_called),
                ("module", self._forward_hooks, self._forward_hooks_with_kwargs, always)):
            for key, hook in list(table.items()):
                if key not in flagged or key in called:
                    continue
                try:
                    out = hook(self, args, kwargs, result) if key in kwarg_ids \
                        else hook(self, args, result)
                    if out is not None:
                        result = out
                except Exception as error:
                    import warnings

                    warnings.warn(f"{scope} forward hook with ``always_call=True`` raised an "
                                  "exception that was silenced as another error was raised in "
                                  f"forward: {error}", stacklevel=2)

    # --------------------------------------------------------- registration
    def __getattr__(self, name: str):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            held = d.get(table)
            if held is not None and name in held:
                return held[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, "_buffers", "_modules")
            d.pop(name, None)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, "_parameters", "_buffers")
            d.pop(name, None)
            modules[name] = _registered(_global_module_registration_hooks, self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = _registered(_global_module_registration_hooks, self, name, value)
            return
        buffers = d.get("_buffers")
        persistent = buffer_persistence(value)
        if persistent is not None:  # (an nn.Buffer: registered, with its persistence)
            self.register_buffer(name, value, persistent)
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            buffers[name] = _registered(_global_buffer_registration_hooks, self, name, value)
            return
        object.__setattr__(self, name, value)

    def _forget(self, name: str, *tables: str) -> None:
        for table in tables:
            self.__dict__[table].pop(name, None)
        self.__dict__["_non_persistent_buffers_set"].discard(name)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if name in d.get(table, ()):
                del d[table][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        names = set(dir(type(self))) | set(self.__dict__)
        for table in ("_parameters", "_buffers", "_modules"):
            names |= set(self.__dict__.get(table, ()))
        return sorted(n for n in names if not n[:1].isdigit())

    def _check_name(self, name, kind: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"" if kind != "module name"
                           else f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")

    def register_parameter(self, name: str, param) -> None:
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in d["_parameters"]:  # (a buffer, a submodule too)
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            d["_parameters"][name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                "be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.".replace("{name}", name))
        d["_parameters"][name] = _registered(_global_parameter_registration_hooks, self, name, param)

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        d = self.__dict__
        if "_buffers" not in d:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in d["_buffers"]:  # (a parameter, a submodule too)
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        d["_parameters"].pop(name, None)
        d["_modules"].pop(name, None)
        d["_buffers"][name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            d["_non_persistent_buffers_set"].discard(name)
        else:
            d["_non_persistent_buffers_set"].add(name)

    def add_module(self, name: str, module) -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._check_name(name, "module name")
        self.__dict__["_modules"][name] = _registered(_global_module_registration_hooks, self,
                                                      name, module)

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if item.startswith("_") or not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name.startswith("_") or not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # ----------------------------------------------------------- traversals
    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def _named_members(self, table: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                if recurse else [(prefix, self)])
        for mod_prefix, mod in mods:
            for name, value in mod.__dict__[table].items():
                if value is None or (table == "_buffers"
                                     and name in mod._non_persistent_buffers_set and False):
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield mod_prefix + ("." if mod_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    # ----------------------------------------------------------- modes
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def apply(self, fn) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ----------------------------------------------------------- conversions
    def _apply(self, fn, recurse: bool = True) -> Module:
        """Convert every parameter (and its grad) and buffer in place of its data: the
        Parameter objects stay the same, so an optimizer made before still holds them."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        with no_grad():
            for param in self._parameters.values():
                if param is None:
                    continue
                param.data = fn(param.data)
                if param._grad is not None:
                    param._grad = fn(param._grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> Module:
        from gradcli.engine import dtypes

        dtype = kwargs.get("dtype")
        for a in list(args) + [kwargs.get("device"), kwargs.get("tensor")]:
            if isinstance(a, dtypes.dtype):
                dtype = a
            elif isinstance(a, Tensor):
                dtype = a.dtype
            elif a is not None:
                _check_device(a)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")
            if dtype.is_complex:
                from gradcli.engine.warn_site import warn_at_caller

                warn_at_caller(
                    "Complex modules are a new feature under active development whose design may "
                    "change, and some modules might not work as expected when using complex "
                    "tensors as parameters or buffers. Please file an issue at https://github.com/"
                    "pytorch/pytorch/issues/new?template=bug-report.yml if a complex module does "
                    "not work as expected.")
            return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)
        return self

    def cpu(self) -> Module:
        return self

    def cuda(self, device=None) -> Module:
        from gradcli.torch.cuda import _no_cuda

        _no_cuda()

    def type(self, dst_type) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> Module:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self) -> Module:
        return self

    # ----------------------------------------------------------- state
    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        if args:  # the deprecated positional form (destination, prefix, keep_vars)
            import warnings

            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.state_dict for details.", FutureWarning, stacklevel=2)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "items"):
            raise TypeError(
                f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        state = dict(state_dict)

        def load(module: Module, prefix: str) -> None:
            local = {}
            for name, p in module._parameters.items():
                if p is not None:
                    local[name] = p
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers_set:
                    local[name] = b
            for name, current in local.items():
                key = prefix + name
                if key not in state:
                    missing.append(key)
                    continue
                given = state[key]
                if not isinstance(given, Tensor):
                    errors.append(
                        f'While copying the parameter named "{key}", expected torch.Tensor or '
                        f"Tensor-like object from checkpoint but received {type(given)}")
                    continue
                if tuple(given.shape) != tuple(current.shape):
                    errors.append(
                        f"size mismatch for {key}: copying a param with shape {given.shape} "
                        f"from checkpoint, the shape in current model is {current.shape}.")
                    continue
                with no_grad():
                    if assign:
                        if isinstance(current, Parameter):
                            new = given if isinstance(given, Parameter) else \
                                Parameter(given, requires_grad=current.requires_grad)
                            setattr(module, name, new)
                        else:
                            setattr(module, name, given)
                    else:
                        current.copy_(given)
            for key in state:
                if key.startswith(prefix):
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in module._modules and head not in local:
                        unexpected.append(key)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self, "")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ----------------------------------------------------------- hooks
    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        return self._add_hook("_forward_pre_hooks", hook, prepend,
                              "_forward_pre_hooks_with_kwargs" if with_kwargs else None)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        return self._add_hook("_forward_hooks", hook, prepend,
                              "_forward_hooks_with_kwargs" if with_kwargs else None,
                              "_forward_hooks_always_called" if always_call else None)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        if self.__dict__.get("_is_full_backward_hook") is False:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        object.__setattr__(self, "_is_full_backward_hook", True)
        return self._add_hook("_backward_hooks", hook, prepend, None)

    def register_backward_hook(self, hook) -> RemovableHandle:
        """The deprecated form: `hook(module, grad_input, grad_output)` runs on the last
        node of each forward's output (its grad_input is that node's input gradients)."""
        if self.__dict__.get("_is_full_backward_hook") is True:
            raise RuntimeError(_MIXED_BACKWARD_HOOKS)
        object.__setattr__(self, "_is_full_backward_hook", False)
        if "_non_full_backward_hooks" not in self.__dict__:
            object.__setattr__(self, "_non_full_backward_hooks", {})
        return self._add_hook("_non_full_backward_hooks", hook, False, None)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        return self._add_hook("_backward_pre_hooks", hook, prepend, None)

    def _add_hook(self, table_name: str, hook, prepend: bool, kwargs_set,
                  always_set=None) -> RemovableHandle:
        d = self.__dict__
        table = d[table_name]
        kwargs_table = None if kwargs_set is None else d[kwargs_set]
        always_table = None if always_set is None else d.setdefault(always_set, OrderedDict())
        handle = RemovableHandle(table, kwargs_table, always_table)
        if prepend:
            items = list(table.items())
            table.clear()
            table[handle.id] = hook
            table.update(items)
        else:
            table[handle.id] = hook
        if kwargs_set is not None:
            kwargs_table[handle.id] = True
        if always_table is not None:
            always_table[handle.id] = True
        return handle

    # ----------------------------------------------------------- printing
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _indent(repr(module), 2)
                       for key, module in self._modules.items()]
        text = self._get_name() + "("
        lines = extra_lines + child_lines
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"

    def __getstate__(self):  # pragma: no cover - copy support
        return self.__dict__

    def __setstate__(self, state):  # pragma: no cover
        self.__dict__.update(state)


def _check_device(dev) -> None:
    """A device a program may move to: only the CPU exists (PyTorch's errors otherwise)."""
    from gradcli.torch.cuda import check_device

    check_device(dev)
