"""OneCycleLR, LinearLR and ConstantLR: the warm-up and one-cycle schedules of the fast
training recipes, with PyTorch's formulas so the learning rates (and, for OneCycleLR, the
cycled momentum or beta1) are PyTorch's floats."""

from __future__ import annotations

import math
import types

from .lr_scheduler import LRScheduler
from .optimizer import Optimizer

__all__ = ["ConstantLR", "CosineAnnealingWarmRestarts", "CyclicLR", "LinearLR", "OneCycleLR"]


def _per_group(name: str, optimizer, value) -> list:
    """One value per parameter group (a list must have one for each)."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


class OneCycleLR(LRScheduler):
    """The learning rate rises from max_lr/div_factor to max_lr over pct_start of the steps,
    then anneals to initial_lr/final_div_factor; momentum moves the opposite way."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        up_end = float(pct_start * self.total_steps) - 1
        if three_phase:  # up, back down to the start, then the final annealing
            phases = [(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                      (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                       "max_momentum")]
        else:
            phases = [(up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                       "max_momentum")]
        # (kept as PyTorch keeps them: its state_dict holds this list)
        self._schedule_phases = [dict(zip(("end_step", "start_lr", "end_lr", "start_momentum",
                                           "end_momentum"), phase)) for phase in phases]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                                 "option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            highs = _per_group("max_momentum", optimizer, max_momentum)
            lows = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for high, low, group in zip(highs, lows, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (high, *group["betas"][1:])
                    else:
                        group["momentum"] = high
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        self._warn_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            last = len(self._schedule_phases) - 1
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == last:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    momentum = self._anneal(group[phase["start_momentum"]],
                                            group[phase["end_momentum"]], pct) \
                        if self.cycle_momentum else None
                    break
                start = end
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs


class LinearLR(LRScheduler):
    """The learning rate times a factor moving linearly from start_factor to end_factor over
    total_iters steps (a warm-up)."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return [group["lr"] for group in groups]
        span = self.end_factor - self.start_factor
        return [group["lr"] * (1.0 + span / (self.total_iters * self.start_factor
                                             + (self.last_epoch - 1) * span))
                for group in groups]

    def _get_closed_form_lr(self) -> list:
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """The learning rate times `factor` for the first total_iters steps, then as set."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in groups]
        if self.last_epoch != self.total_iters:
            return [group["lr"] for group in groups]
        return [group["lr"] * (1.0 / self.factor) for group in groups]

    def _get_closed_form_lr(self) -> list:
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the base rate to eta_min over T_i steps, restarting each time,
    with T_i multiplied by T_mult at each restart (SGDR)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1) -> None:  # noqa: N803
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_outside_step()
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2 for base in self.base_lrs]

    def step(self, epoch=None) -> None:
        """One step (or a jump to a possibly fractional `epoch`, as step(epoch + i / iters))."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch >= self.T_0:
            if self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:  # which restart epoch falls in: T_0 (T_mult^n - 1) / (T_mult - 1) <= epoch
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        else:
            self.T_i = self.T_0
            self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class CyclicLR(LRScheduler):
    """The learning rate cycles between base_lr and max_lr (triangular, halving each cycle,
    or shrinking by gamma per iteration), momentum the opposite way."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9,
                 last_epoch=-1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        if scale_fn is None:
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                                 "option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for high, low, group in zip(self.max_momentums, self.base_momentums,
                                            optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (high, *group["betas"][1:])
                    else:
                        group["momentum"] = high
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        if self.mode == "exp_range":
            return self.gamma ** x
        return 1.0

    def get_lr(self) -> list:
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [low + (high - low) * scale_factor * self.scale_fn(at)
               for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for low, high, group in zip(self.base_momentums, self.max_momentums,
                                        self.optimizer.param_groups):
                momentum = high - (high - low) * scale_factor * self.scale_fn(at)
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def state_dict(self) -> dict:
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None  # (a function or lambda is not saved, as in PyTorch)
        if fn is not None and not isinstance(fn, types.FunctionType) and hasattr(fn, "__dict__"):
            state["_scale_fn_custom"] = dict(fn.__dict__)  # (a callable object's attributes)
        return state


for _cls in (OneCycleLR, LinearLR, ConstantLR, CosineAnnealingWarmRestarts, CyclicLR):
    _cls.__module__ = "torch.optim.lr_scheduler"
del _cls
