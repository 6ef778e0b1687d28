"""torch.optim.Adafactor (Shazeer and Stern): Adam-like steps with a factored second
moment (a row and a column average for every parameter of two or more dims), a relative
step size and update clipping.

The update is PyTorch's single-tensor step (the default: Adafactor only takes the foreach
path when asked), written with the engine's own tensor ops under no_grad in the same order,
so parameters follow PyTorch's within float rounding. As in PyTorch, eps1=None becomes the
first parameter's dtype epsilon for the rest of the group's step.
"""

from __future__ import annotations

import gradcli.torch as torch

from .optimizer import Optimizer, step_tensor

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False) -> None:
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize})

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with torch.no_grad():
            for group in self.param_groups:
                eps1, eps2 = group["eps"]
                lr = group["lr"]
                lr = lr.item() if isinstance(lr, torch.Tensor) else lr
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    if p.grad.is_sparse:
                        raise RuntimeError("Adafactor does not support sparse gradients")
                    state = self.state[p]
                    if not state:
                        state["step"] = step_tensor()
                        if p.grad.dim() > 1:
                            row_shape = list(p.grad.shape)
                            row_shape[-1] = 1
                            state["row_var"] = p.grad.new_zeros(row_shape)
                            col_shape = list(p.grad.shape)
                            col_shape[-2] = 1
                            state["col_var"] = p.grad.new_zeros(col_shape)
                        else:
                            state["variance"] = torch.zeros_like(p.grad)
                    if eps1 is None:
                        eps1 = torch.finfo(p.dtype).eps
                    grad = -p.grad if group["maximize"] else p.grad
                    self._update(p, grad, state, lr, group, eps1, eps2)
        return loss

    @staticmethod
    def _update(param, grad, state, lr, group, eps1, eps2) -> None:
        state["step"].add_(1)
        step = state["step"].item()
        one_minus_beta2 = step ** group["beta2_decay"]
        rho = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho
        if group["weight_decay"] != 0:
            param.mul_(1 - lr * group["weight_decay"])
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_mean = torch.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
            row_var.lerp_(row_mean, one_minus_beta2)
            col_mean = torch.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
            col_var.lerp_(col_mean, one_minus_beta2)
            estimate = row_var @ col_var
            estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, one_minus_beta2)
            estimate = variance.clone()
        update = estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * group["d"]))
        param.add_(update, alpha=-alpha / denom)


Adafactor.__module__ = "torch.optim"  # (PyTorch exports it under torch.optim itself: type(opt) prints so)
