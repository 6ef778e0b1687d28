"""torch.optim.swa_utils: stochastic weight averaging and exponential moving averages of
a model's parameters (AveragedModel), the SWA learning-rate schedule (SWALR) and the
BatchNorm statistics pass (update_bn), with PyTorch's CPU arithmetic order."""

from __future__ import annotations

import copy
import itertools
import math

from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _torch():
    from gradcli import torch

    return torch


def get_ema_multi_avg_fn(decay=0.999):
    """Update each average in place: ema + (1 - decay) (current - ema) (a lerp)."""
    def ema_update(ema_params, current_params, _num_averaged):
        if ema_params and ema_params[0].dtype.is_floating_point:
            for ema, current in zip(ema_params, current_params):
                ema.lerp_(current, 1 - decay)
        else:
            for ema, current in zip(ema_params, current_params):
                ema.copy_(ema * decay + current * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """Update each average in place to the running mean over num_averaged + 1 models."""
    def swa_update(averaged_params, current_params, num_averaged):
        for averaged, current in zip(averaged_params, current_params):
            averaged.copy_(averaged + (current - averaged) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters are the average of those it is updated with."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        torch = _torch()
        self.register_buffer("n_averaged", torch.tensor(0, dtype=torch.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model) -> None:
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(mine, theirs):
            p_model_ = p_model.detach()
            averaged.append(p_avg.detach())
            current.append(p_model_)
            if first:
                p_avg.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(averaged, current, self.n_averaged)
            elif self.avg_fn is None:
                update = get_swa_avg_fn()
                for p_avg, p_model in zip(averaged, current):
                    p_avg.copy_(update(p_avg, p_model, self.n_averaged))
            else:
                for p_avg, p_model in zip(averaged, current):
                    p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged))
        if not self.use_buffers:
            # the model's buffers (BatchNorm statistics) are copied, not averaged
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach())
        self.n_averaged += 1


def update_bn(loader, model, device=None) -> None:
    """Recompute every BatchNorm's running statistics over one pass of `loader` (a
    cumulative average: momentum None for the pass)."""
    from ..nn.modules.layers import _BatchNorm

    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to its swa_lr over anneal_epochs (cosine or linear), then
    hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1) -> None:
        groups = optimizer.param_groups
        if isinstance(swa_lr, (list, tuple)):
            if len(swa_lr) != len(groups):
                raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: "
                                 f"swa_lr has {len(swa_lr)}, optimizer.param_groups has "
                                 f"{len(groups)}")
            lrs = list(swa_lr)
        else:
            lrs = [swa_lr] * len(groups)
        for lr, group in zip(lrs, groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        self._warn_outside_step(stacklevel=3)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)


for _cls in (AveragedModel, SWALR):
    _cls.__module__ = "torch.optim.swa_utils"
