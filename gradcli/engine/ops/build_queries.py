"""torch.* names scripts read about the build and the process (has_mkl, has_lapack,
compiled_with_cxx11_abi, is_vulkan_available, init_num_threads), the device errors they
catch (torch.OutOfMemoryError, torch.AcceleratorError), torch.legacy_contiguous_format,
torch.is_storage, torch.is_distributed, thread_safe_generator, and the small Tensor methods
of the same kind (const_data_ptr, is_set_to, module_load, the removed reinforce).

The answers are those of PyTorch 2.13's CPU build, which gradcli stands in for: a script that
branches on them takes the branch it takes under PyTorch.
"""

from __future__ import annotations

from ..tensor import Tensor
from .memory_formats import contiguous_format
from .registry import PUBLIC, public
from .storage import UntypedStorage

# PyTorch's CPU wheel is built with MKL, LAPACK, OpenMP and the spectral (FFT) ops
for _flag in ("has_lapack", "has_mkl", "has_openmp", "has_spectral"):
    PUBLIC[f"torch.{_flag}"] = True
del _flag

#: PyTorch's old name of contiguous_format (the same object)
PUBLIC["torch.legacy_contiguous_format"] = contiguous_format


class OutOfMemoryError(RuntimeError):
    """Exception raised when device is out of memory"""


class AcceleratorError(RuntimeError):
    """Exception raised while executing on device"""


for _cls in (OutOfMemoryError, AcceleratorError):
    _cls.__module__ = "torch"
    PUBLIC[f"torch.{_cls.__name__}"] = _cls
del _cls


def _no_arguments(name: str, args: tuple, kwargs: dict) -> None:
    if kwargs:
        raise TypeError(f"{name}() takes no keyword arguments")
    if args:
        raise TypeError(f"{name}() takes 0 positional arguments but {len(args)} "
                        f"{'was' if len(args) == 1 else 'were'} given")


@public("torch.compiled_with_cxx11_abi")
def compiled_with_cxx11_abi(*args, **kwargs) -> bool:
    """PyTorch's wheels are built with _GLIBCXX_USE_CXX11_ABI=1."""
    _no_arguments("compiled_with_cxx11_abi", args, kwargs)
    return True


@public("torch.is_vulkan_available")
def is_vulkan_available(*args, **kwargs) -> bool:
    """No Vulkan backend (nor any other device) in a CPU build (PyTorch's binding ignores
    any arguments)."""
    return False


@public("torch.init_num_threads")
def init_num_threads(*args, **kwargs) -> None:
    """Nothing to set up: gradcli's worker threads read torch.set_num_threads when they run."""
    if args or kwargs:
        shown = ", ".join(repr(a) for a in args)  # (pybind11's wording of the call)
        if kwargs:
            shown += ("; " if args else "") + "kwargs: " + ", ".join(
                f"{k}={v!r}" for k, v in kwargs.items())
        raise TypeError("init_num_threads(): incompatible function arguments. The following "
                        "argument types are supported:\n    1. () -> None\n\n"
                        f"Invoked with: {shown}")
    return None


@public("torch.is_storage")
def is_storage(obj) -> bool:
    """Whether `obj` is a storage (what Tensor.untyped_storage() and .storage() give)."""
    return isinstance(obj, UntypedStorage)


@public("torch.is_distributed", "Tensor.is_distributed")
def is_distributed(input) -> bool:  # noqa: A002 - PyTorch's name
    """No tensor is distributed across processes here."""
    if not isinstance(input, Tensor):
        raise TypeError("is_distributed(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return False


@public("torch.random.thread_safe_generator", "torch.thread_safe_generator")
def thread_safe_generator():
    """The generator a DataLoader thread worker draws from; outside one (always, for a
    program: its loaders run in the calling thread) None, meaning the global generator."""
    return None


@public("Tensor.const_data_ptr")
def const_data_ptr(self) -> int:
    """data_ptr() for reading (PyTorch separates the two for copy-on-write storages)."""
    d = self._data
    return 0 if d.size == 0 else int(d.__array_interface__["data"][0])


@public("Tensor.is_set_to")
def is_set_to(self, tensor) -> bool:
    """True when both tensors see the same memory: same dtype, first element, sizes and
    strides (a fresh tensor of equal values is not set to another)."""
    if not isinstance(tensor, Tensor):
        raise TypeError("is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    a, b = self._data, tensor._data
    if a.dtype != b.dtype or a.shape != b.shape or a.strides != b.strides:
        return False
    if a.size == 0:
        return a is b or (a.base is not None and a.base is b.base)
    return a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


@public("Tensor.module_load")
def module_load(self, other, assign=False):
    """What load_state_dict swaps in for `self` (a parameter or buffer) given the state
    dict's `other`: self with other's values copied in, detached; or other, detached, when
    the state dict is assigned."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


_REINFORCE = (
    "reinforce() was removed.\nUse torch.distributions instead.\n"
    "See https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
    "probs = policy_network(state)\naction = probs.multinomial()\n"
    "next_state, reward = env.step(action)\naction.reinforce(reward)\naction.backward()\n\n"
    "Use:\n\nprobs = policy_network(state)\n"
    "# NOTE: categorical is equivalent to what used to be called multinomial\n"
    "m = torch.distributions.Categorical(probs)\naction = m.sample()\n"
    "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
    "loss.backward()\n")


@public("Tensor.reinforce")
def reinforce(self, reward):
    """Removed in PyTorch 0.4: PyTorch's text points to torch.distributions."""
    raise RuntimeError(_REINFORCE)


# (Python methods of PyTorch's Tensor: Python's own argument errors name them so)
module_load.__qualname__ = "Tensor.module_load"
reinforce.__qualname__ = "Tensor.reinforce"
