"""SGD, Adam, AdamW, RMSprop and Adagrad: PyTorch's single-tensor CPU updates, op for op
(see optimizer.py for how the arithmetic is matched)."""

from __future__ import annotations

import numpy as np

from gradcli.engine.tensor import make

from . import _updates as U
from .optimizer import (
    Optimizer,
    axpy,
    axpy_into,
    check_fused_flags,
    check_fused_params,
    check_tensor_lr,
    real,
    refuse_capturable,
    refuse_differentiable_leaf,
    required,
    step_tensor,
    write,
)

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(message)


def _lr(lr) -> None:
    check_tensor_lr(lr)
    if lr is not required and lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")


def _grads_of(group):
    """(param, gradient array) of the group's parameters that have a gradient; a complex
    one as its real view (PyTorch's view_as_real: real and imaginary parts updated as
    independent elements, as the optimizers other than SGD do)."""
    return [(p, real(p._grad._data)) for p in group["params"] if p._grad is not None]


def _r(t):
    """A state tensor's buffer, a complex one as its real view."""
    return real(t._data)


def _begin(optimizer, closure):
    """What every step does first: the closure, then the refusals PyTorch's step makes
    before it updates anything (fused on a non-float parameter, differentiable=True on a
    leaf)."""
    loss = optimizer._closure_loss(closure)
    for group in optimizer.param_groups:
        if group.get("fused"):
            check_fused_params(group)
        if group.get("capturable"):
            refuse_capturable(optimizer, group)
        if group.get("differentiable"):
            refuse_differentiable_leaf(optimizer, optimizer._through_view)
    return loss


def _step(state) -> float:
    """state['step'] += 1 (a float32 0-d tensor, as PyTorch keeps it); the new value."""
    t = state["step"]
    t._data = np.asarray(t._data + np.float32(1))
    t._vc[0] += 1
    return float(t._data)


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None) -> None:
        _lr(lr)
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        check_fused_flags(fused, foreach, differentiable)
        super().__init__(params, defaults)

    @staticmethod
    def _through_view(group) -> bool:
        return False  # (SGD updates a complex parameter as it is)

    def step(self, closure=None):
        if closure is None:  # (_closure_loss's answer, without the call)
            self._opt_called = True
            loss = None
        else:
            loss = _begin(self, closure)
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov = group["weight_decay"], group["nesterov"]
            maximize = group["maximize"]
            if group["fused"] or group["differentiable"]:  # (refusals before any update)
                _begin(self, None)
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                d = p._data
                grad = g._data
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = U.add(grad, d, weight_decay)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = make(np.array(grad))  # (0-d too)
                    else:
                        write(buf, U.add(U.mul(buf._data, momentum), grad, 1 - dampening))
                    grad = U.add(grad, buf._data, momentum) if nesterov else buf._data
                axpy_into(-lr, grad, d)
                p._vc[0] += 1
        return loss


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False) -> None:
        from gradcli.engine.tensor import Tensor

        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
            check_tensor_lr(lr)
        _lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        if not (all(isinstance(b, float) for b in betas[:2])
                or all(isinstance(b, Tensor) for b in betas[:2])):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        check_fused_flags(fused, foreach, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    @staticmethod
    def _through_view(group) -> bool:
        # (the decoupled weight decay scales the complex parameter itself first)
        return not (group["decoupled_weight_decay"] and group["weight_decay"] != 0)

    def step(self, closure=None):
        loss = _begin(self, closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
            decoupled = group["decoupled_weight_decay"]
            for p, grad in _grads_of(group):
                state = self.state[p]
                d = real(p._data)
                if not state:
                    state["step"] = step_tensor(fused=group.get("fused"))
                    state["exp_avg"] = make(np.zeros_like(p._data))
                    state["exp_avg_sq"] = make(np.zeros_like(p._data))
                    if amsgrad:
                        state["max_exp_avg_sq"] = make(np.zeros_like(p._data))
                if group["maximize"]:
                    grad = -grad
                step = _step(state)
                if weight_decay != 0:
                    if decoupled:
                        np.copyto(d, U.mul(d, 1 - lr * weight_decay))
                        p._vc[0] += 1
                    else:
                        grad = U.add(grad, d, weight_decay)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                write(exp_avg, U.lerp(_r(exp_avg), grad, 1 - beta1))
                write(exp_avg_sq, U.addcmul(U.mul(_r(exp_avg_sq), beta2), grad, grad,
                                            1 - beta2))
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                second = _r(exp_avg_sq)
                if amsgrad:
                    held = state["max_exp_avg_sq"]
                    write(held, np.maximum(_r(held), second))
                    second = _r(held)
                denom = U.add_scalar(U.div(np.sqrt(second), bias_correction2_sqrt), eps)
                np.copyto(d, U.addcdiv(d, _r(exp_avg), denom, -step_size))
                p._vc[0] += 1
        return loss


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad: bool = False, *, maximize: bool = False, foreach=None,
                 capturable: bool = False, differentiable: bool = False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _lr(lr)
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = _begin(self, closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            weight_decay, momentum, centered = (group["weight_decay"], group["momentum"],
                                                group["centered"])
            for p, grad in _grads_of(group):
                state = self.state[p]
                d = real(p._data)
                if not state:
                    state["step"] = step_tensor(fused=group.get("fused"))
                    state["square_avg"] = make(np.zeros_like(p._data))
                    if momentum > 0:
                        state["momentum_buffer"] = make(np.zeros_like(p._data))
                    if centered:
                        state["grad_avg"] = make(np.zeros_like(p._data))
                if group["maximize"]:
                    grad = -grad
                _step(state)
                if weight_decay != 0:
                    grad = U.add(grad, d, weight_decay)
                square_avg = state["square_avg"]
                write(square_avg, U.addcmul(U.mul(_r(square_avg), alpha), grad, grad,
                                            1 - alpha))
                if centered:
                    grad_avg = state["grad_avg"]
                    write(grad_avg, U.lerp(_r(grad_avg), grad, 1 - alpha))
                    avg = np.sqrt(U.addcmul(_r(square_avg), _r(grad_avg), _r(grad_avg), -1))
                else:
                    avg = np.sqrt(_r(square_avg))
                avg = U.add_scalar(avg, eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    write(buf, U.addcdiv(U.mul(_r(buf), momentum), grad, avg))
                    np.copyto(d, axpy(-lr, _r(buf), d))
                else:
                    np.copyto(d, U.addcdiv(d, grad, avg, -lr))
                p._vc[0] += 1
        return loss


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, fused=None) -> None:
        _lr(lr)
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= initial_accumulator_value,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        check_fused_flags(fused, foreach, differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _group_added(self, group: dict) -> None:
        # Adagrad makes its state when it is built (PyTorch does it in __init__)
        for p in group["params"]:
            state = self.state[p]
            if not state:
                state["step"] = step_tensor(fused=group.get("fused"))
                value = group["initial_accumulator_value"]
                if p._data.dtype.kind == "c":  # (PyTorch's: both parts start at the value)
                    value = complex(value, value)
                state["sum"] = make(np.full_like(p._data, value))

    def step(self, closure=None):
        loss = _begin(self, closure)
        for group in self.param_groups:
            lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
            weight_decay = group["weight_decay"]
            for p, grad in _grads_of(group):
                state = self.state[p]
                step = _step(state)
                d = real(p._data)
                if group["maximize"]:
                    grad = -grad
                if weight_decay != 0:
                    grad = U.add(grad, d, weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum = state["sum"]
                write(state_sum, U.addcmul(_r(state_sum), grad, grad, 1))
                std = U.add_scalar(np.sqrt(_r(state_sum)), eps)
                np.copyto(d, U.addcdiv(d, grad, std, -clr))
                p._vc[0] += 1
        return loss


for _cls, _home in ((SGD, "sgd"), (Adam, "adam"), (AdamW, "adamw"), (RMSprop, "rmsprop"),
                    (Adagrad, "adagrad")):
    _cls.__module__ = "torch.optim." + _home  # (type(opt) prints as PyTorch's)
del _cls, _home
