"""Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD and LBFGS, the rest of torch.optim that the
optimizer docs and examples use (PyTorch's MNIST example trains with Adadelta, the
style-transfer tutorial with LBFGS).

Each update is PyTorch's single-tensor CPU step (`foreach=False`), written with the
engine's own tensor ops under no_grad, in the same order, so the arithmetic rounds where
PyTorch's does: parameters follow PyTorch's within float rounding.
"""

from __future__ import annotations

import gradcli.torch as torch

from .optimizer import (
    Optimizer,
    check_tensor_lr,
    refuse_capturable,
    refuse_differentiable_leaf,
    step_tensor,
)

__all__ = ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD", "LBFGS"]


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(message)


def _betas(betas) -> None:
    _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")


class _PerParameter(Optimizer):
    """An optimizer whose step updates each parameter with a gradient on its own."""

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            if group.get("capturable"):
                refuse_capturable(self, group)
        refuse_differentiable_leaf(self, self._through_view)
        with torch.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        grad = -p.grad if group["maximize"] else p.grad
                        state = self.state[p]
                        if not state:
                            self._init_state(group, p, grad, state)
                        if p.is_complex():  # PyTorch's view_as_real: parts as elements
                            p, grad = torch.view_as_real(p), torch.view_as_real(grad)
                            state = {k: torch.view_as_real(v) if isinstance(v, torch.Tensor)
                                     and v.is_complex() else v for k, v in state.items()}
                        self._update(group, p, grad, state)
        return loss

    def _init_state(self, group, p, grad, state) -> None:
        """The parameter's state on its first step (in the parameter's own dtype)."""
        raise NotImplementedError

    def _update(self, group, p, grad, state) -> None:
        raise NotImplementedError

    @staticmethod
    def _count(state) -> float:
        """state['step'] += 1 (a float32 0-d tensor); the new count as a Python float."""
        state["step"].add_(1)
        return state["step"].item()


class Adadelta(_PerParameter):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False) -> None:
        check_tensor_lr(lr)
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable,
                                      foreach=foreach, differentiable=differentiable))

    @staticmethod
    def _through_view(group) -> bool:
        return False  # (the update is added to the complex parameter itself)

    def _init_state(self, group, p, grad, state) -> None:
        state["step"] = step_tensor()
        state["square_avg"] = torch.zeros_like(p)
        state["acc_delta"] = torch.zeros_like(p)

    def _update(self, group, p, grad, state) -> None:
        rho, eps = group["rho"], group["eps"]
        self._count(state)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        p.add_(delta, alpha=-group["lr"])


class Adamax(_PerParameter):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False,
                 capturable=False) -> None:
        check_tensor_lr(lr)
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _init_state(self, group, p, grad, state) -> None:
        state["step"] = step_tensor()
        state["exp_avg"] = torch.zeros_like(p)
        state["exp_inf"] = torch.zeros_like(p)

    def _update(self, group, p, grad, state) -> None:
        beta1, beta2 = group["betas"]
        step = self._count(state)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.lerp_(grad, 1 - beta1)
        torch.maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"]), out=exp_inf)
        clr = group["lr"] / (1 - beta1 ** step)
        p.addcdiv_(exp_avg, exp_inf, value=-clr)


class NAdam(_PerParameter):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False) -> None:
        check_tensor_lr(lr)
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable))

    def _init_state(self, group, p, grad, state) -> None:
        state["step"] = step_tensor()
        state["mu_product"] = step_tensor(1.0)
        state["exp_avg"] = torch.zeros_like(p)
        state["exp_avg_sq"] = torch.zeros_like(p)

    def _update(self, group, p, grad, state) -> None:
        lr, (beta1, beta2), decay = group["lr"], group["betas"], group["momentum_decay"]
        step = self._count(state)
        bias_correction2 = 1 - beta2 ** step
        if group["weight_decay"] != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * group["weight_decay"])
            else:
                grad = grad.add(p, alpha=group["weight_decay"])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        mu_product = state["mu_product"]
        mu_product.mul_(mu)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(group["eps"])
        product = mu_product.item()
        p.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - product)))
        p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - product * mu_next))


class RAdam(_PerParameter):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False) -> None:
        check_tensor_lr(lr)
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(
            lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
            foreach=foreach, capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def _init_state(self, group, p, grad, state) -> None:
        state["step"] = step_tensor()
        state["exp_avg"] = torch.zeros_like(p)
        state["exp_avg_sq"] = torch.zeros_like(p)

    def _update(self, group, p, grad, state) -> None:
        lr, (beta1, beta2) = group["lr"], group["betas"]
        step = self._count(state)
        if group["weight_decay"] != 0:
            if group["decoupled_weight_decay"]:
                p.mul_(1 - lr * group["weight_decay"])
            else:
                grad = grad.add(p, alpha=group["weight_decay"])
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:  # the variance is tractable: the rectified adaptive step
            adaptive = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(group["eps"])
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
        else:
            p.add_(corrected * lr, alpha=-1.0)


class Rprop(_PerParameter):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False,
                 differentiable=False) -> None:
        check_tensor_lr(lr)
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _init_state(self, group, p, grad, state) -> None:
        state["step"] = step_tensor()
        state["prev"] = torch.zeros_like(p)
        lr = group["lr"]  # (complex: both parts start at lr)
        state["step_size"] = torch.full_like(grad, complex(lr, lr) if p.is_complex() else lr)

    def _update(self, group, p, grad, state) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        self._count(state)
        prev, step_size = state["prev"], state["step_size"]
        sign = grad.mul(prev).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        grad[sign.eq(etaminus)] = 0  # a sign change: no step, and no sign memory
        p.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)


class ASGD(_PerParameter):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False,
                 capturable=False) -> None:
        check_tensor_lr(lr)
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _init_state(self, group, p, grad, state) -> None:
        state["step"] = step_tensor()
        state["eta"] = step_tensor(float(group["lr"]))
        state["mu"] = step_tensor(1.0)
        state["ax"] = torch.zeros_like(p)

    def _update(self, group, p, grad, state) -> None:
        lr, lambd = group["lr"], group["lambd"]
        step = self._count(state)
        if group["weight_decay"] != 0:
            grad = grad.add(p, alpha=group["weight_decay"])
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        eta_value = eta.item()
        p.mul_(1 - lambd * eta_value)
        p.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(p.sub(ax).mul_(mu))
        else:
            ax.copy_(p)
        eta.copy_(torch.as_tensor(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        mu.copy_(torch.as_tensor(1 / max(1, step - group["t0"])))


class LBFGS(Optimizer):
    """Limited-memory BFGS over all parameters flattened into one vector; step(closure)
    re-evaluates the loss up to max_iter times, with a fixed step or the strong Wolfe line
    search (line_search.py)."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None) -> None:
        check_tensor_lr(lr)
        check_tensor_lr(lr)
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        """Every gradient as one flat vector (a complex one as its real and imaginary parts,
        PyTorch's view_as_real)."""
        views = []
        for p in self._params:
            if p.grad is None:
                views.append(p.new_zeros(p.numel()))
            elif p.grad.is_complex():
                views.append(torch.view_as_real(p.grad).view(-1))
            else:
                views.append(p.grad.view(-1))
        return torch.cat(views, 0)

    def _add_grad(self, step_size, update) -> None:
        offset = 0
        for p in self._params:
            if p.is_complex():
                p = torch.view_as_real(p)
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step_size)
            offset += n

    def step(self, closure):
        self._opt_called = True
        group = self.param_groups[0]
        with torch.no_grad():
            return self._run(group, closure)

    def _evaluate(self, closure):
        with torch.enable_grad():
            return closure()

    def _line_search(self, closure, t, d, loss, flat_grad, gtd, max_ls):
        """The strong Wolfe search from the current parameters (restored after each trial)."""
        from .line_search import strong_wolfe

        start = [p.clone() for p in self._params]

        def evaluate(step):
            self._add_grad(step, d)
            value = float(self._evaluate(closure))
            grad = self._flat_grad()
            for p, x in zip(self._params, start):
                p.copy_(x)
            return value, grad

        return strong_wolfe(evaluate, t, d, loss, flat_grad, gtd, max_ls=max_ls)

    def _run(self, group, closure):
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = self._evaluate(closure)
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro, h_diag = [], [], [], 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:  # curvature condition: keep the pair
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()  # two-loop recursion: q := -H grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = torch.mul(q, h_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break
            spent = 0
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                loss, flat_grad, t, spent = self._line_search(closure, t, d, loss, flat_grad,
                                                              gtd, max_eval - evals)
                self._add_grad(t, d)
                optimal = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                optimal = False
                if n_iter != max_iter:
                    loss = float(self._evaluate(closure))
                    flat_grad = self._flat_grad()
                    spent = 1
                    optimal = flat_grad.abs().max() <= tolerance_grad
            evals += spent
            state["func_evals"] += spent
            if n_iter == max_iter or evals >= max_eval:
                break
            if optimal:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


for _cls in (Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD, LBFGS):
    _cls.__module__ = "torch.optim." + _cls.__name__.lower()  # (type(opt) prints as PyTorch's)
del _cls
