"""torch.autocast (and torch.amp.autocast, torch.cpu.amp.autocast) on CPU: inside the
region the matrix products and convolutions run in the autocast dtype (bfloat16 by
default, float16 allowed), the losses and the ops PyTorch lists as needing float32 run in
float32, and every other op runs in its inputs' dtype; the inputs are cast with recorded
`to` copies (ToCopyBackward0), so gradients come back in the leaves' own dtypes.

Each listed function declares its policy at its own first lines (engine/autocast_state.py:
one read of a module flag while no region is enabled anywhere; the other functions pay
nothing). The region's state is per thread, as PyTorch's; nothing of any function or
module is changed on entering or leaving a region."""

from __future__ import annotations

import copy
import functools
import types
import warnings

from .. import autocast_state, dtypes
from ..tensor import Tensor
from ..warn_site import warn_at_caller
from .registry import PUBLIC

# PyTorch's CPU autocast lists (aten/src/ATen/autocast_mode.cpp), as the engine names the
# functions: (module under gradcli.engine.ops, function name). Each of these checks
# autocast_state at its call (tests/test_autocast_policy.py holds them to it).
LOWER_PRECISION = (
    ("linalg", "mm"), ("linalg", "bmm"), ("linalg", "addmm"), ("linalg", "matmul"),
    ("linalg_ext", "baddbmm"), ("linalg_ext", "addbmm"), ("nn", "linear"),
    ("nn_layers", "conv1d"), ("nn_layers", "conv2d"), ("conv_ext", "conv3d"),
    ("conv_ext", "conv_transpose1d"), ("conv_ext", "conv_transpose2d"),
    ("conv_ext", "conv_transpose3d"),
    ("functional_ext", "prelu"), ("functional_ext", "scaled_dot_product_attention"),
)
FLOAT32 = (
    ("nn", "mse_loss"), ("nn", "cross_entropy"), ("nn", "nll_loss"), ("nn", "binary_cross_entropy"),
    ("nn", "binary_cross_entropy_with_logits"), ("losses", "l1_loss"),
    ("losses", "smooth_l1_loss"), ("losses", "huber_loss"),
    ("losses", "kl_div"), ("functional_ext", "margin_ranking_loss"),
    ("functional_ext", "soft_margin_loss"), ("functional_ext", "hinge_embedding_loss"),
    ("functional_ext", "cosine_embedding_loss"), ("functional_ext", "poisson_nll_loss"),
    ("functional_ext", "triplet_margin_loss"), ("functional_ext", "multi_margin_loss"),
    ("functional_ext", "multilabel_margin_loss"), ("reductions", "prod"),
    ("functional_ext", "cdist"), ("layout", "trace"), ("linalg_ext", "inverse"),
    ("linalg_ext", "pinverse"), ("linalg_ext", "cholesky"),
)

STATE = autocast_state.STATE  # (this thread's, read through the threading.local)


def _cast(value, target, lower: bool):
    """value cast for the op: floating tensors other than float64 (PyTorch's eligible ones);
    under the lower-precision policy a leaf that requires grad is cast once a region."""
    if value.__class__ is not Tensor and not isinstance(value, Tensor):
        if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
            return type(value)(_cast(v, target, lower) for v in value)
        return value
    d = value.dtype
    if not d.is_floating_point or d is dtypes.float64 or d is target:
        return value
    from .shape import to

    state = autocast_state.STATE
    if lower and state.cache_enabled and value.requires_grad and value.grad_fn is None:
        held = state.cache.get(id(value))
        if held is not None and held[0] is value and held[1].dtype is target:
            return held[1]
        cast = to(value, target)
        state.cache[id(value)] = (value, cast)
        return cast
    return to(value, target)


autocast_state.ABOVE.install(cast=_cast)


def _check_device(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                 "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


def device_of(device_type) -> str:
    if device_type not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of "
                           f"device string: {device_type}")
    return device_type


class autocast:  # noqa: N801 - torch's name
    """A region (or, as a decorator, a function) whose ops run in mixed precision: on CPU
    the products and convolutions in `dtype` (bfloat16 unless told), the losses in float32.
    "cuda" (no GPU here) warns and does nothing, as PyTorch without CUDA does."""

    __module__ = "torch.amp.autocast_mode"

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        _check_device(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_of(device_type)
        self._cache_enabled = STATE.cache_enabled if cache_enabled is None else cache_enabled
        if enabled:
            if self.device == "cuda":
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                              UserWarning, stacklevel=2)
                enabled = False
            elif self.fast_dtype not in (dtypes.bfloat16, dtypes.float16):
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", UserWarning, stacklevel=2)
                enabled = False
        self._enabled = bool(enabled)
        self._prevs: list = []  # what each open entry replaced (a region may nest in itself)

    def __enter__(self):
        if self.device != "cpu":
            self._prevs.append(None)
            return self
        state = STATE
        self._prevs.append((state.enabled, state.dtype, state.cache_enabled))
        state.enabled, state.dtype = self._enabled, self.fast_dtype
        state.cache_enabled = self._cache_enabled
        state.nesting += 1
        if self._enabled:
            autocast_state.count_enabled(1)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        prev = self._prevs.pop()
        if prev is None:
            return False
        state = STATE
        state.nesting -= 1
        if state.nesting == 0:
            state.cache.clear()
        state.enabled, state.dtype, state.cache_enabled = prev
        if self._enabled:
            autocast_state.count_enabled(-1)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you "
                "mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            # a fresh region object per call: two threads (or a recursion) in the decorated
            # function each restore their own state on leaving
            region = copy.copy(self)
            region._prevs = []
            with region:
                return func(*args, **kwargs)

        return decorated


class cpu_autocast(autocast):  # noqa: N801
    """torch.cpu.amp.autocast: the deprecated spelling of torch.autocast("cpu", ...)."""

    __module__ = "torch.cpu.amp.autocast_mode"
    __qualname__ = __name__ = "autocast"

    def __init__(self, enabled=True, dtype=dtypes.bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


_NO_DEVICE = object()  # (called without an argument, which PyTorch tells from None)


def is_autocast_enabled(device_type=_NO_DEVICE) -> bool:
    """torch.is_autocast_enabled(): CUDA's state (always off here); with "cpu", CPU's."""
    if device_type is _NO_DEVICE:
        return False
    if not isinstance(device_type, str):
        raise TypeError(f"is_autocast_enabled(): argument 'device_type' (position 1) must be "
                        f"str, not {type(device_type).__name__}")
    _check_device(device_type)
    return STATE.enabled if device_of(device_type) == "cpu" else False


def get_autocast_dtype(device_type):
    _check_device(device_type)
    if device_of(device_type) == "cpu":
        return STATE.dtype
    return dtypes.float16


def is_autocast_cpu_enabled() -> bool:
    warn_at_caller("torch.is_autocast_cpu_enabled() is deprecated. Please use "
                   "torch.is_autocast_enabled('cpu') instead. (Triggered internally at "
                   "/__w/pytorch/pytorch/torch/csrc/autograd/init.cpp:883.)", DeprecationWarning)
    return STATE.enabled


def get_autocast_cpu_dtype():
    warn_at_caller("torch.get_autocast_cpu_dtype() is deprecated. Please use "
                   "torch.get_autocast_dtype('cpu') instead. (Triggered internally at "
                   "/__w/pytorch/pytorch/torch/csrc/autograd/init.cpp:1016.)", DeprecationWarning)
    return STATE.dtype


def is_autocast_cache_enabled() -> bool:
    return STATE.cache_enabled


def clear_autocast_cache() -> None:
    STATE.cache.clear()


def amp_module(name: str, doc: str, **names) -> types.ModuleType:
    """A facade submodule made here (torch.amp, torch.cpu, torch.cpu.amp): named under
    gradcli.torch and entered in sys.modules, so programs may import and reach it as they
    reach the facade's own modules."""
    import sys

    module = types.ModuleType(f"gradcli.torch.{name}", doc)
    module.__dict__.update(names)
    module.__all__ = sorted(names)
    sys.modules.setdefault(module.__name__, module)
    return sys.modules[module.__name__]


def extend_module(name: str, **names) -> None:
    """More names in a facade submodule made by amp_module (amp_training's GradScaler...)."""
    import sys

    module = sys.modules[f"gradcli.torch.{name}"]
    module.__dict__.update(names)
    module.__all__ = sorted({*module.__all__, *names})


_amp = amp_module("amp", "Automatic mixed precision: torch.amp.autocast.", autocast=autocast)
_cpu_amp = amp_module("cpu.amp", "The deprecated CPU spelling of torch.amp.", autocast=cpu_autocast)
_cpu = amp_module("cpu", "CPU queries and the deprecated torch.cpu.amp.", amp=_cpu_amp,
               is_available=lambda: True, device_count=lambda: 1)

for _name, _value in (("autocast", autocast), ("amp", _amp), ("cpu", _cpu),
                      ("is_autocast_enabled", is_autocast_enabled),
                      ("get_autocast_dtype", get_autocast_dtype),
                      ("is_autocast_cpu_enabled", is_autocast_cpu_enabled),
                      ("get_autocast_cpu_dtype", get_autocast_cpu_dtype),
                      ("is_autocast_cache_enabled", is_autocast_cache_enabled),
                      ("clear_autocast_cache", clear_autocast_cache)):
    PUBLIC.setdefault(f"torch.{_name}", _value)
# (the dotted spellings too: the language reads `torch.amp.autocast` as one public name)
PUBLIC.setdefault("torch.amp.autocast", autocast)
PUBLIC.setdefault("torch.cpu.amp.autocast", cpu_autocast)
