"""What training loops written for mixed precision call besides autocast (ops/amp.py):
torch.amp.GradScaler (also torch.GradScaler, and the deprecated torch.cuda.amp and
torch.cpu.amp spellings), loss scaling with PyTorch's bookkeeping, and torch.amp's
custom_fwd/custom_bwd decorators for custom Functions.

Training loops written for a GPU wrap their step as `scaler.scale(loss).backward();
scaler.step(optimizer); scaler.update()`. Without CUDA, a scaler made for "cuda" (the
default device) warns and turns itself off, and every call passes through: the loop runs
as plain training. A scaler made for "cpu" scales: the loss is multiplied by a float32
scale (2**16 to begin with), `step` first unscales each gradient in place by the scale's
reciprocal (computed in float64, rounded to float32, as PyTorch does), skips the
optimizer's step when any gradient holds an inf or NaN, and `update` halves the scale
after a skipped step or doubles it after `growth_interval` good ones in a row. The scale
and the growth count are 0-d tensors (float32, int32), made on the first `scale` call.
"""

from __future__ import annotations

import enum
import functools
import warnings

import numpy as np

from .. import dtypes
from ..grad_mode import no_grad
from ..tensor import Tensor, make
from .amp import (
    DEVICE_TYPES,
    amp_module,
    autocast,
    device_of,
    extend_module,
    get_autocast_dtype,
    is_autocast_enabled,
)
from .registry import PUBLIC

_NOT_SCALED_YET = ("This may indicate your script did not use scaler.scale(loss or outputs) "
                   "earlier in the iteration.")


class OptState(enum.Enum):
    """Where one optimizer is in the current iteration (reset by update)."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class _OptimizerStates(dict):
    """Per-optimizer state by id(optimizer), made on first use."""

    def __missing__(self, key):
        state = self[key] = _fresh_optimizer_state()
        return state


class GradScaler:
    """Scales a loss so that small float16/bfloat16 gradients do not flush to zero, and
    unscales the gradients before the optimizer's step (see the module's docstring)."""

    __module__ = "torch.amp.grad_scaler"

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = _OptimizerStates()

    # ------------------------------------------------------------------ scaling
    def _scale_and_tracker(self, action: str):
        if self._scale is None:
            raise AssertionError(f"Attempted {action} but _scale is None.  " + _NOT_SCALED_YET)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {action} but _growth_tracker is None.  "
                                 + _NOT_SCALED_YET)
        return self._scale, self._growth_tracker

    def _first_scale(self) -> Tensor:
        if self._scale is None:
            if self._growth_tracker is not None:
                raise AssertionError("_growth_tracker initialized before _scale")
            self._scale = make(np.array(self._init_scale, dtypes.float32.np))
            self._growth_tracker = make(np.array(self._init_growth_tracker, dtypes.int32.np))
        return self._scale

    def scale(self, outputs):
        """outputs (a tensor, or lists/tuples/iterables of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._first_scale()

        def scaled(value):
            if isinstance(value, Tensor):
                return value * self._first_scale()
            if isinstance(value, (list, tuple)):
                return type(value)(map(scaled, value))
            if hasattr(value, "__iter__"):
                return map(scaled, value)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return scaled(outputs)

    # ---------------------------------------------------------------- unscaling
    def _unscale_grads(self, optimizer, inv_scale: Tensor, allow_fp16: bool) -> dict:
        """Every gradient of the optimizer's parameters times inv_scale, in place; a float32
        0-d found_inf, 1.0 when one of them held an inf or NaN (checked before scaling)."""
        found_inf = make(np.array(0.0, dtypes.float32.np))
        grads = []
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError("expected param to be torch.Tensor, got "
                                             f"{type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grads.append(grad)
            for grad in grads:
                if not np.isfinite(grad._data).all():
                    found_inf.fill_(1.0)
                if inv_scale.item() != 1.0:
                    grad.mul_(inv_scale)
        return {"cpu": found_inf} if grads else {}

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale now (to clip them, say); step
        then does not unscale them again this iteration."""
        if not self._enabled:
            return
        self._scale_and_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = make(np.array(np.float32(1.0 / np.float64(self._scale._data)),
                                  dtypes.float32.np))
        state["found_inf_per_device"] = self._unscale_grads(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(), unless a gradient held an inf or NaN (then None)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._scale_and_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """The next iteration's scale: `new_scale` if given, else backed off after an inf,
        grown after growth_interval clean steps in a row (kept if growing overflows)."""
        if not self._enabled:
            return
        scale, tracker = self._scale_and_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if (not isinstance(new_scale, Tensor) or new_scale.numel() != 1
                        or new_scale.requires_grad):
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found = [inf for state in self._per_optimizer_states.values()
                     for inf in state["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_any = sum(float(inf._data) for inf in found)
            current = np.float32(scale._data)
            if found_any:
                scale._data[...] = np.float32(np.float64(current) * self._backoff_factor)
                tracker._data[...] = 0
            else:
                successful = int(tracker._data) + 1
                if successful == self._growth_interval:
                    grown = np.float32(np.float64(current) * self._growth_factor)
                    if np.isfinite(grown):
                        scale._data[...] = grown
                    tracker._data[...] = 0
                else:
                    tracker._data[...] = successful
        self._per_optimizer_states = _OptimizerStates()

    # ------------------------------------------------------------------- queries
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _growth_count(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return self._growth_tracker.item()

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_count()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])


def _deprecated_spelling(device: str):
    """torch.cuda.amp.GradScaler / torch.cpu.amp.GradScaler: warn, then the scaler for
    that device."""

    class DeprecatedGradScaler(GradScaler):
        __module__ = f"torch.{device}.amp.grad_scaler"

        def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                     backoff_factor: float = 0.5, growth_interval: int = 2000,
                     enabled: bool = True) -> None:
            warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                          f"`torch.amp.GradScaler('{device}', args...)` instead.",
                          FutureWarning, stacklevel=2)
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    DeprecatedGradScaler.__name__ = DeprecatedGradScaler.__qualname__ = "GradScaler"
    return DeprecatedGradScaler


CudaGradScaler = _deprecated_spelling("cuda")
CpuGradScaler = _deprecated_spelling("cpu")


def _cast_inputs(value, device_type: str, dtype):
    """value with its floating tensors (not float64) on device_type cast to dtype, through
    lists, tuples and dicts, as autocast's custom_fwd casts a forward's inputs."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not dtypes.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast_inputs(k, device_type, dtype): _cast_inputs(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, device_type, dtype) for v in value)
    return value


def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """A custom Function's forward under autocast: with cast_inputs, its floating inputs
    are cast to that dtype and it runs with autocast off; without, it runs as called and
    custom_bwd replays the autocast state it saw."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_inputs(args, device_type, cast_inputs),
                       **_cast_inputs(kwargs, device_type, cast_inputs))

    return forward


def custom_bwd(bwd=None, *, device_type: str):
    """A custom Function's backward, run under the autocast state its forward ran in."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return backward


class cuda_autocast(autocast):  # noqa: N801
    """torch.cuda.amp.autocast: the deprecated spelling of torch.autocast("cuda", ...),
    which without CUDA warns and leaves the region as it is."""

    __module__ = "torch.cuda.amp.autocast_mode"
    __qualname__ = __name__ = "autocast"

    def __init__(self, enabled=True, dtype=dtypes.float16, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast knows device_type (every device type PyTorch names does)."""
    return device_of(device_type) in DEVICE_TYPES


extend_module("amp", GradScaler=GradScaler, custom_fwd=custom_fwd, custom_bwd=custom_bwd,
              is_autocast_available=is_autocast_available)
extend_module("cpu.amp", GradScaler=CpuGradScaler)
cuda_amp = amp_module("cuda.amp", "The deprecated CUDA spelling of torch.amp (no CUDA here).",
                      autocast=cuda_autocast, GradScaler=CudaGradScaler, custom_fwd=custom_fwd,
                      custom_bwd=custom_bwd)
PUBLIC.setdefault("torch.GradScaler", GradScaler)
for _name, _value in (("GradScaler", GradScaler), ("custom_fwd", custom_fwd),
                      ("custom_bwd", custom_bwd), ("is_autocast_available", is_autocast_available)):
    PUBLIC.setdefault(f"torch.amp.{_name}", _value)
PUBLIC.setdefault("torch.cpu.amp.GradScaler", CpuGradScaler)
