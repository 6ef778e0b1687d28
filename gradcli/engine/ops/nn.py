"""Neural-net functions (torch.nn.functional): softmax, log_softmax, mse_loss,
cross_entropy (NllLoss over LogSoftmax, as PyTorch composes it),
binary_cross_entropy, linear."""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, _wrap_dim, make
from .registry import defop, run_op


def _softmax_fwd(a, dim):
    if a.size == 0:
        return a.copy()
    if a.ndim == 0:
        return _softmax_fwd(a.reshape(1), 0).reshape(())
    m = np.max(a, axis=dim, keepdims=True) if a.size else 0
    e = np.exp(a - np.where(np.isfinite(m), m, 0))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax_fwd(a, dim):
    if a.size == 0:
        return a.copy()
    if a.ndim == 0:
        return _log_softmax_fwd(a.reshape(1), 0).reshape(())
    m = np.max(a, axis=dim, keepdims=True) if a.size else 0
    shifted = a - np.where(np.isfinite(m), m, 0)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


SOFTMAX = defop("softmax", "SoftmaxBackward0", _softmax_fwd,
                lambda c, g: (c.result * (g - (g * c.result).sum(c.meta[0], keepdim=True)),),
                "d softmax(a)/da: s*(g - sum(g*s))", save="result", torch_call="torch.softmax(a, -1)")
LOG_SOFTMAX = defop("log_softmax", "LogSoftmaxBackward0", _log_softmax_fwd,
                    lambda c, g: (g - c.result.exp() * g.sum(c.meta[0], keepdim=True),),
                    "d log_softmax(a)/da: g - softmax(a)*sum(g)", save="result",
                    torch_call="torch.log_softmax(a, -1)")


def _reduce(arr, reduction):
    if reduction == "mean":
        return np.mean(arr)
    if reduction == "sum":
        return np.sum(arr)
    return arr


def _reduced_grad(g, reduction, n):
    if reduction == "mean":
        return g / n
    return g


MSE = defop("mse_loss", "MseLossBackward0",
            lambda a, t, reduction: _reduce((a - t) ** 2, reduction),
            lambda c, g: _mse_grads(c, g),
            "d mse(a, t)/da = 2(a - t)/N", save="inputs", broadcast=True,
            torch_call="torch.nn.functional.mse_loss(a, a * 0.5)")


def _mse_grads(c, g):
    a, t = c.saved
    reduction = c.meta[0]
    diff = a - t
    n = max(diff._data.size, 1)
    ga = (2.0 / n if reduction == "mean" else 2.0) * diff * g  # PyTorch's grouping
    return (ga if c.needs(0) else None, -ga if c.needs(1) else None)


def _nll_fwd(logp, target, reduction, wt, shape, dtype):
    """-logp at each target, times its weight (0 where ignored); reduced."""
    if logp.ndim == 1:
        picked = -logp[target] * wt
    else:
        moved = np.moveaxis(logp, 1, -1)
        picked = -np.take_along_axis(moved, target[..., None], axis=-1)[..., 0] * wt
    picked = np.asarray(picked, dtype=logp.dtype)
    if reduction == "mean":
        return np.asarray(np.sum(picked) / np.sum(wt), dtype=logp.dtype)
    if reduction == "sum":
        return np.sum(picked)
    return picked


def _nll_backward(c, g):
    target, reduction, wt, shape, dtype = c.meta
    mask = np.zeros(shape, dtype=dtype)
    if len(shape) == 1:
        mask[target] = 0 - wt
    else:
        moved = np.moveaxis(mask, 1, -1)
        np.put_along_axis(moved, target[..., None], (0 - np.asarray(wt, dtype=dtype))[..., None], axis=-1)
    scale = make(mask)
    if reduction == "none" and len(shape) > 1:
        return (scale * g.unsqueeze(1),)
    if reduction == "mean":
        return (scale * (g / float(np.sum(wt))),)
    return (scale * g,)


NLL = defop("nll_loss", "NllLossBackward0", _nll_fwd, _nll_backward,
            "d nll(logp, t)/dlogp = -w_t/sum(w) at the target class", save="meta",
            torch_call="torch.nn.functional.nll_loss(a.reshape(2, -1), torch.tensor([0, 1]))")


DIV_SCALAR = defop("div_scalar", "DivBackward1", lambda a, s: a / s, lambda c, g: (g / c.meta[0],),
                   "d(a/s)/da = 1/s",
                   torch_call="torch.nn.functional.cross_entropy(a.reshape(1, -1), "
                              "torch.ones_like(a.reshape(1, -1)) / a.numel())")


def _softmax_args(input: Tensor, dim, dtype, name: str):
    d = input._data
    if dim is None:
        dim = 0 if d.ndim in (0, 1, 3) else 1
    ax = _wrap_dim(dim, d.ndim)
    if dtype is not None:
        return ax, (d.astype(dtype.np),)
    if d.dtype.kind != "f":
        from ..tensor import _type_word

        last = "lastdim_" if ax == d.ndim - 1 or d.ndim == 0 else ""
        raise NotImplementedError(
            f'"{name}_{last}kernel_impl" not implemented for \'{_type_word(input.dtype)}\'')
    return ax, None


def softmax(input: Tensor, dim=None, dtype=None, _stacklevel=3) -> Tensor:
    ax, arrays = _softmax_args(input, dim, dtype, "softmax")
    return run_op(SOFTMAX, (input,), (ax,), arrays=arrays)


def log_softmax(input: Tensor, dim=None, dtype=None, _stacklevel=3) -> Tensor:
    ax, arrays = _softmax_args(input, dim, dtype, "log_softmax")
    return run_op(LOG_SOFTMAX, (input,), (ax,), arrays=arrays)


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction="mean") -> Tensor:
    if input._data.dtype.kind != "f" or target._data.dtype.kind != "f":
        raise NotImplementedError('"mse_cpu" not implemented for \'Long\'')
    if input._data.shape != target._data.shape:
        import warnings

        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            UserWarning, stacklevel=2)
    return run_op(MSE, (input, target), (reduction,))


def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index=-100,
             reduce=None, reduction="mean") -> Tensor:
    t = target._data
    if t.dtype.kind not in "iu":
        raise RuntimeError(
            f"expected scalar type Long but found {target.dtype._legacy.replace('Tensor', '')}")
    d = input._data
    n_classes = d.shape[0] if d.ndim == 1 else d.shape[1]
    if d.ndim >= 2 and t.shape[0] != d.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({d.shape[0]}) to match target batch_size ({t.shape[0]}).")
    kept = t != ignore_index
    live = t[kept]
    if live.size and (live.max() >= n_classes or live.min() < 0):
        bad = int(live.max() if live.max() >= n_classes else live.min())
        raise IndexError(f"Target {bad} is out of bounds.")
    safe = np.where(kept, t, 0)
    wt = np.ones(t.shape, dtype=d.dtype) if weight is None else weight._data.astype(d.dtype)[safe]
    wt = np.where(kept, wt, 0).astype(d.dtype)
    return run_op(NLL, (input,), (safe, reduction, wt, d.shape, d.dtype))


def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0) -> Tensor:
    if input._data.ndim == 0:
        _wrap_dim(1, 0)  # PyTorch's "Dimension out of range" for a 0-d input
    if label_smoothing:
        raise RuntimeError("cross_entropy with label_smoothing is not supported by gradcli")
    if target._data.dtype.kind == "f":
        # class probabilities, as PyTorch composes them: -(log_softmax(input) * target)
        # summed over the class dim ("none"), over everything ("sum"), or that divided by
        # the batch size ("mean", a DivBackward1)
        class_dim = 1 if input._data.ndim > 1 else 0
        prod = log_softmax(input, class_dim) * target
        if reduction == "none":
            return -prod.sum(class_dim)
        total = -prod.sum()
        if reduction == "sum":
            return total
        batch = input._data.size // input._data.shape[class_dim]
        return run_op(DIV_SCALAR, (total,), (float(batch),))
    return nll_loss(log_softmax(input, 1 if input._data.ndim > 1 else 0), target, weight,
                    ignore_index=ignore_index, reduction=reduction)


def _bce_fwd(x, t, reduction, weight):
    with np.errstate(divide="ignore"):
        logx = np.maximum(np.log(x), -100)
        log1mx = np.maximum(np.log(1 - x), -100)
    loss = -(t * logx + (1 - t) * log1mx)
    if weight is not None:  # rescales each element's loss (broadcast), as PyTorch
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_grads(c, g):
    x, t = c.saved
    reduction, weight = c.meta
    n = max(x._data.size, 1)
    g = _reduced_grad(g, reduction, n)
    if weight is not None:
        g = g * make(weight)
    denom = ((1 - x) * x).clamp(min=1e-12)
    gx = g * (x - t) / denom
    gt = None
    if c.needs(1):
        gt = g * ((1 - x).log().clamp(min=-100) - x.log().clamp(min=-100))
    return (gx if c.needs(0) else None, gt)


BCE = defop("binary_cross_entropy", "BinaryCrossEntropyBackward0", _bce_fwd, _bce_grads,
            "d bce(x, t)/dx = (x - t)/(x(1 - x))/N", save="inputs",
            torch_call="torch.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid())")


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                         reduce=None, reduction="mean") -> Tensor:
    if input._data.shape != target._data.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size.")
    x = input._data
    if target._data.dtype != x.dtype:
        from ..tensor import _type_word

        raise RuntimeError(
            f"Found dtype {_type_word(target.dtype)} but expected {_type_word(input.dtype)}")
    if x.size and ((x < 0).any() or (x > 1).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    w = None
    if weight is not None:
        w = np.broadcast_to(weight._data.astype(x.dtype), x.shape)
    return run_op(BCE, (input, target), (reduction, w))


def linear(input: Tensor, weight: Tensor, bias=None) -> Tensor:
    from .linalg import addmm, matmul

    d = input._data
    if d.ndim == 0 or weight._data.ndim == 0:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are "
            f"{d.ndim}D and {weight._data.ndim}D")
    if bias is not None and d.ndim == 2:
        return addmm(bias, input, weight.t())
    if bias is not None and d.flags.c_contiguous and d.ndim >= 1:
        # PyTorch folds the leading dims into one matrix, uses addmm, and views the result back
        flat = input.reshape(-1, d.shape[-1])
        out = addmm(bias, flat, weight.t())
        return out.view(d.shape[:-1] + (weight._data.shape[0],))
    out = matmul(input, weight.t())
    if bias is not None:
        out = out + bias
    return out


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return input.relu_()
    return input.relu()
