"""torch.optim.Muon: momentum SGD whose update, for each 2-D parameter, is orthogonalized
by a quintic Newton-Schulz iteration (Keller Jordan's Muon, as PyTorch 2.13 ships it).

The step is PyTorch's single-tensor path in the same order: the momentum buffer lerps
toward the gradient, Nesterov's look-ahead, the iteration in bfloat16 (as PyTorch runs it,
on gradcli's bfloat16 tensors), the learning rate scaled by the shape, decoupled weight
decay. bfloat16 matrix products round where PyTorch's oneDNN kernels may not, so updates
agree with PyTorch's to bfloat16 precision, not bit for bit.
"""

from __future__ import annotations

import math

import gradcli.torch as torch

from .optimizer import Optimizer

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _orthogonalized(grad, coefficients, steps: int, eps: float):
    """The Newton-Schulz iterate approximating U V^T of grad = U S V^T (in bfloat16)."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    wide = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if wide:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(steps):
        gram = x @ x.T
        poly = torch.addmm(gram, gram, gram, beta=b, alpha=c)
        x = torch.addmm(x, poly, x, beta=a)
    return x.T if wide else x


def _adjusted_lr(lr: float, rule, shape) -> float:
    rows, cols = shape[:2]
    if rule is None or rule == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif rule == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None) -> None:
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                                  "nesterov": nesterov, "ns_coefficients": ns_coefficients,
                                  "eps": eps, "ns_steps": ns_steps,
                                  "adjust_lr_fn": adjust_lr_fn})
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with torch.no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                lr = lr.item() if isinstance(lr, torch.Tensor) else lr
                momentum = group["momentum"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    if p.grad.is_sparse:
                        raise RuntimeError("Muon does not support sparse gradients")
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = torch.zeros_like(p.grad)
                    grad = p.grad
                    if grad.ndim != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    buf = state["momentum_buffer"]
                    buf.lerp_(grad, 1 - momentum)
                    update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                    update = _orthogonalized(update, group["ns_coefficients"],
                                             group["ns_steps"], group["eps"])
                    p.mul_(1 - lr * group["weight_decay"])
                    p.add_(update, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss


Muon.__module__ = "torch.optim"  # (PyTorch exports it under torch.optim itself: type(opt) prints so)
