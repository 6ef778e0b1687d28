"""Neural-net functions (torch.nn.functional): softmax, log_softmax, mse_loss,
cross_entropy (NllLoss over LogSoftmax, as PyTorch composes it),
binary_cross_entropy, linear."""

from __future__ import annotations

import numpy as np

from .. import autocast_state as _autocast
from ..kernels.sleef import vec_exp32, vec_log1p32
from ..kernels.softmax import (
    log_softmax_backward,
    log_softmax_forward,
    softmax_backward,
    softmax_forward,
)
from ..kernels.summation import nll_cascade_sum
from ..node import keep_given, keep_index_inputs
from ..tensor import Tensor, _wrap_dim, make
from .elementwise import ADD_SCALAR, DIV_SCALAR, MUL_SCALAR
from .linalg import addmm, matmul
from .reductions import _mean_fwd, _sum_all
from .registry import defop, run_op, run_unary
from .views import t as _t


def _softmax_double_backward(c, gg):
    """PyTorch's derivatives of _softmax_backward_data(g, y): for g the same op on the
    incoming gradient; for y softmax_double_backward, term for term."""
    g, y = c.saved
    dim = c.meta[0]
    gg = gg.to(y.dtype) if gg._data.dtype != y._data.dtype else gg
    dg = run_op(SOFTMAX_BACKWARD, (gg, y), (dim,)) if c.needs(0) else None
    dy = None
    if c.needs(1):
        dy = g * gg - (y * g).sum(dim, keepdim=True) * gg - g * (y * gg).sum(dim, keepdim=True)
    return dg, dy


def _log_softmax_double_backward(c, gg):
    g, y = c.saved
    dim = c.meta[0]
    gg = gg.to(y.dtype) if gg._data.dtype != y._data.dtype else gg
    dg = gg - (gg * y.exp()).sum(dim, keepdim=True) if c.needs(0) else None
    dy = -g.sum(dim, keepdim=True) * y.exp() * gg if c.needs(1) else None
    return dg, dy


SOFTMAX = defop("softmax", "SoftmaxBackward0", softmax_forward,
                lambda c, g: (run_op(SOFTMAX_BACKWARD, (g, c.result), c.meta),),
                "d softmax(a)/da: s*(g - sum(g*s))", save="result", torch_call="torch.softmax(a, -1)")
LOG_SOFTMAX = defop("log_softmax", "LogSoftmaxBackward0", log_softmax_forward,
                    lambda c, g: (run_op(LOG_SOFTMAX_BACKWARD, (g, c.result), c.meta),),
                    "d log_softmax(a)/da: g - softmax(a)*sum(g)", save="result",
                    torch_call="torch.log_softmax(a, -1)")
def _second_order_call(forward: str) -> str:
    """A torch_call that reaches forward's backward op as an op: a create_graph gradient
    with a non-constant grad_output, used again (so its own backward runs too)."""
    w = "(torch.ones_like(a).cumsum(-1) * 0.5)"
    return (f"torch.enable_grad()(lambda a: torch.autograd.grad({forward}, a, {w} ** 2 + a * 0.5, "
            f"create_graph=True)[0] * ({w} ** 3 + a))(a)")


SOFTMAX_BACKWARD = defop(
    "softmax_backward_data", "SoftmaxBackwardDataBackward0", softmax_backward,
    _softmax_double_backward, "d[s*(g - sum(g*s))]/dg, /ds", save="inputs",
    torch_call=_second_order_call("torch.softmax(a, -1)"))
LOG_SOFTMAX_BACKWARD = defop(
    "log_softmax_backward_data", "LogSoftmaxBackwardDataBackward0", log_softmax_backward,
    _log_softmax_double_backward, "d[g - exp(y)*sum(g)]/dg, /dy", save="inputs",
    torch_call=_second_order_call("torch.log_softmax(a, -1)"))


def _reduce(arr, reduction):
    """A loss's reduction: PyTorch's whole-tensor mean or sum, in its order."""
    if reduction == "mean":
        return _mean_fwd(arr)
    if reduction == "sum":
        return _sum_all(arr)
    return arr


def _mse_norm(reduction, x, t) -> float:
    if reduction != "mean":
        return 2.0
    n = int(np.prod(np.broadcast_shapes(np.shape(x), np.shape(t))))
    return 2.0 / n if n else float("inf")


def _mse_backward_fwd(g, x, t, reduction):
    """PyTorch's mse_loss_backward kernel: norm * (x - t) * g, norm = 2 (/ N for "mean").
    (Run as an op's forward, so numpy's floating-point errors are already quiet.)"""
    out = _mse_norm(reduction, x, t) * (x - t) * g
    if type(out) is np.ndarray and out.dtype == x.dtype == t.dtype:
        return out
    return np.asarray(out, dtype=np.result_type(x, t))


def _mse_grads(c, g):
    a, t = c.saved
    return (run_op(MSE_BACKWARD, (g, a, t), c.meta) if c.needs(0) else None,
            run_op(MSE_BACKWARD, (g, t, a), c.meta) if c.needs(1) else None)


def _mse_double_backward(c, gg):
    """PyTorch's mse_loss_double_backward(_grad_output), term for term."""
    g, x, t = c.saved
    reduction = c.meta[0]
    dg = dx = None
    if c.needs(0):
        if reduction == "none":
            dg = run_op(MSE_BACKWARD, (gg, x, t), c.meta)
        else:
            dg = (run_op(MSE_BACKWARD, (make(np.ones_like(g._data)), x, t), c.meta) * gg).sum()
    if c.needs(1) or c.needs(2):
        dx = run_op(MUL_SCALAR, (gg * g,), (2,))
        if reduction == "mean":
            n = dx._data.size
            dx = run_op(DIV_SCALAR, (dx,), (float(n),))
    return dg, dx if c.needs(1) else None, -dx if c.needs(2) else None


MSE = defop("mse_loss", "MseLossBackward0",
            lambda a, t, reduction: _reduce((a - t) ** 2, reduction), _mse_grads,
            "d mse(a, t)/da = 2(a - t)/N", save="inputs", broadcast=True,
            torch_call="torch.nn.functional.mse_loss(a, a * 0.5)")
MSE_BACKWARD = defop(
    "mse_loss_backward", "MseLossBackwardBackward0", _mse_backward_fwd, _mse_double_backward,
    "d mse_loss_backward(g, x, t)/dg = 2(x - t)/N, /dx = 2g/N, /dt = -2g/N", save="inputs",
    broadcast=True,
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad(torch.nn.functional.mse_loss("
               "a, a * 0.5 + 1, reduction='sum'), a, a.sum() + 1, create_graph=True)[0] * a)(a)")


def _nll_total_weight(wt, kept, dtype):
    """The total weight of nll_loss's "mean": the count of kept targets, or with weights
    their sum in the kernel's cascade order (summation.nll_cascade_sum)."""
    at = np.flatnonzero(np.ravel(kept))
    weights = np.ravel(wt)[at]
    if (weights == 1).all():
        return dtype.type(len(at))
    return nll_cascade_sum(weights.astype(dtype, copy=False), at)


def _nll_fwd(logp, target, reduction, wt, shape, dtype, kept):
    """-logp at each target, times its weight (0 where ignored); reduced."""
    if logp.size == 0:  # no classes (every target ignored) or an empty batch
        picked = np.zeros(target.shape, dtype=logp.dtype)
    elif logp.ndim == 1:
        picked = -logp[target] * wt + 0.0  # PyTorch sums the one sample from 0: no -0.
    else:
        moved = np.moveaxis(logp, 1, -1)
        picked = -np.take_along_axis(moved, target[..., None], axis=-1)[..., 0] * wt
    picked = np.asarray(picked, dtype=logp.dtype)
    if reduction == "none":
        return np.where(kept, picked, 0).astype(logp.dtype, copy=False)  # (an ignored 0 is +0.)
    at = np.flatnonzero(np.ravel(kept))  # the kept terms, added in the kernel's order
    loss = nll_cascade_sum(np.ravel(picked)[at], at)
    if reduction == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(loss / _nll_total_weight(wt, kept, picked.dtype), dtype=logp.dtype)
    return np.asarray(loss, dtype=logp.dtype)


def _nll_backward_fwd(g, logp, target, reduction, wt, shape, dtype, kept):
    """PyTorch's nll_loss_backward: -w_t * g (g / total weight for "mean") at each kept
    target, 0 elsewhere (an ignored target gets 0 even when the total weight is 0)."""
    g = np.asarray(g, dtype=dtype)
    if reduction == "mean":
        with np.errstate(divide="ignore", invalid="ignore"):
            g = g / _nll_total_weight(wt, kept, np.dtype(dtype))
    vals = np.where(kept, wt * -g, 0).astype(dtype, copy=False)
    out = np.zeros(shape, dtype=dtype)
    if out.size == 0:
        return out
    if len(shape) == 1:
        out[target] = vals
    else:
        np.put_along_axis(np.moveaxis(out, 1, -1), target[..., None], vals[..., None], axis=-1)
    return out


def _nll_pair(name: str, node: str, torch_call: str, backward_call: str):
    """nll_loss (or nll_loss2d) and its backward as two ops that differentiate into each
    other: d nll_loss_backward(g, logp)/dg = nll_loss(.), /dlogp = 0 (PyTorch's rules)."""
    def backward(c, g):
        return (run_op(back, (g, c.saved[0]), c.meta),)

    def double_backward(c, gg):
        return (run_op(fwd, (gg,), c.meta) if c.needs(0) else None,
                make(np.zeros_like(gg._data)) if c.needs(1) else None)

    fwd = defop(name, node, _nll_fwd, backward,
                "d nll(logp, t)/dlogp = -w_t/sum(w) at the target class", save="inputs meta",
                torch_call=torch_call)
    back = defop(name + "_backward", node.replace("Backward0", "BackwardBackward0"),
                 _nll_backward_fwd, double_backward,
                 "d nll_loss_backward(g, logp)/dg = nll_loss(.), /dlogp = 0", save="meta",
                 torch_call=backward_call)
    return fwd, back


_NLL_GRAD = ("torch.enable_grad()(lambda a: torch.autograd.grad(torch.nn.functional.nll_loss("
             "a.reshape({shape}), torch.tensor({target}), reduction='sum'), a, a.sum() + 1, "
             "create_graph=True)[0])(a)")
NLL, NLL_BACKWARD = _nll_pair(
    "nll_loss", "NllLossBackward0",
    "torch.nn.functional.nll_loss(a.reshape(2, -1), torch.tensor([0, 1]))",
    _NLL_GRAD.format(shape="2, -1", target="[0, 1]"))
# inputs with spatial dims (N, C, d1, ...): PyTorch's nll_loss2d, through an (N, C, 1, -1)
# view unless the input is 4-d
NLL2D, NLL2D_BACKWARD = _nll_pair(
    "nll_loss2d", "NllLoss2DBackward0",
    "torch.nn.functional.nll_loss(a.reshape(1, 2, -1), torch.tensor([[0, 1, 1]]))",
    _NLL_GRAD.format(shape="1, 2, -1", target="[[0, 1, 1]]"))


def _softmax_args(input: Tensor, dim, dtype, name: str):
    """(input, dim): with dtype= the input is converted first, as PyTorch does (ToCopyBackward0)."""
    if dtype is not None:
        input = input.to(dtype)  # noqa: A001
    d = input._data
    if dim is None:
        from ..warn_site import warn_at_caller

        warn_at_caller(f"Implicit dimension choice for {name} has been deprecated. Change the "
                       "call to include dim=X as an argument.")
        dim = 0 if d.ndim in (0, 1, 3) else 1
    ax = _wrap_dim(dim, d.ndim)
    if d.dtype.kind not in "fV":
        from ..tensor import _type_word

        last = "lastdim_" if ax == d.ndim - 1 or d.ndim == 0 else ""
        raise NotImplementedError(
            f'"{name}_{last}kernel_impl" not implemented for \'{_type_word(input.dtype)}\'')
    return input, ax


def softmax(input: Tensor, dim=None, dtype=None, _stacklevel=3) -> Tensor:
    input, ax = _softmax_args(input, dim, dtype, "softmax")  # noqa: A001
    return keep_given(run_unary(SOFTMAX, input, (ax,)), SOFTMAX, dim)


def log_softmax(input: Tensor, dim=None, dtype=None, _stacklevel=3) -> Tensor:
    input, ax = _softmax_args(input, dim, dtype, "log_softmax")  # noqa: A001
    return keep_given(run_unary(LOG_SOFTMAX, input, (ax,)), LOG_SOFTMAX, dim)


def _reduction_arg(size_average, reduce, reduction: str) -> str:
    """PyTorch's _Reduction: the legacy size_average/reduce arguments (with their deprecation
    warning) and the check of the reduction string. (Its warning helper is imported where a
    warning is due: an import statement on every loss call costs ~10k instructions.)"""
    if size_average is not None or reduce is not None:
        from ..warn_site import warn_inside

        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
        warn_inside(f"size_average and reduce args will be deprecated, please use "
                    f"reduction='{reduction}' instead.")
    if reduction == "elementwise_mean":
        from ..warn_site import warn_inside

        warn_inside("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                    "instead.")
        reduction = "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _broadcast_pair(input: Tensor, target: Tensor):
    """A loss's input and target broadcast as torch.broadcast_tensors does before PyTorch's
    pointwise losses (mse, huber, smooth_l1): its error text for shapes that do not
    broadcast, and an ExpandBackward0 only on a tensor broadcasting enlarges."""
    if input._data.shape == target._data.shape:
        return input, target
    a, b = input._data.shape, target._data.shape
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for d in range(n - 1, -1, -1):  # (PyTorch's broadcast check, from the last dimension)
        if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
            raise RuntimeError(f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                               f"({pb[d]}) at non-singleton dimension {d}")
    shape = tuple(np.broadcast_shapes(a, b))
    # (torch.broadcast_tensors: only a tensor of another shape is expanded, with its node)
    return (input if a == shape else input.expand(shape),
            target if b == shape else target.expand(shape))


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction="mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(mse_loss, input, target, size_average, reduce, reduction)
    if input._data.shape != target._data.shape:
        from ..warn_site import warn_at_caller

        warn_at_caller(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.")
    reduction = _reduction_arg(size_average, reduce, reduction)
    arrays = None
    same = input._data.dtype == target._data.dtype
    if not same:  # the kernel runs in the promoted dtype
        from .. import dtypes

        np_dt = dtypes.result_type(input, target).np
        arrays = (input._data.astype(np_dt), target._data.astype(np_dt))
    if (input._data.dtype if same else np.result_type(input._data, target._data)).kind not in "fV":
        from .. import dtypes
        from ..tensor import _type_word

        kind = _type_word(dtypes.result_type(input, target))
        raise NotImplementedError(f'"mse_cpu" not implemented for \'{kind}\'')
    if input._data.shape != target._data.shape:  # (PyTorch broadcasts both first)
        input, target = _broadcast_pair(input, target)  # noqa: A001
        if arrays is not None:
            arrays = (np.broadcast_to(arrays[0], input._data.shape),
                      np.broadcast_to(arrays[1], target._data.shape))
    return run_op(MSE, (input, target), (reduction,), arrays=arrays)


def _scalar_name(t: Tensor) -> str:
    return t.dtype._legacy.replace("Tensor", "")


def _sizes(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index=-100,
             reduce=None, reduction="mean") -> Tensor:
    """PyTorch's nll_loss_nd: 1-d/2-d inputs are nll_loss; a 4-d input nll_loss2d; other
    inputs with spatial dims nll_loss2d through (N, C, 1, -1) views. Its checks, in order."""
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(nll_loss, input, target, weight,
                              size_average, ignore_index, reduce, reduction)
    reduction = _reduction_arg(size_average, reduce, reduction)
    d, t = input._data, target._data
    if d.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {d.ndim})")
    t_batch = t.shape[0] if t.ndim else 0
    if d.ndim != 1 and d.shape[0] != t_batch:
        raise ValueError(
            f"Expected input batch_size ({d.shape[0]}) to match target batch_size ({t_batch}).")
    n_classes = d.shape[0] if d.ndim == 1 else d.shape[1]
    if d.ndim in (1, 2):
        op, shape, tt = NLL, d.shape, t
    else:
        op = NLL2D
        if d.ndim == 4:
            shape, tt = d.shape, t
        else:
            out_size = (d.shape[0],) + d.shape[2:]
            if t.shape[1:] != d.shape[2:]:
                raise RuntimeError(f"Expected target size {_sizes(out_size)}, got {_sizes(t.shape)}")
            spatial = (1, -1) if d.size else (0, 0)
            shape = (d.shape[0], n_classes) + spatial
            input = input.reshape(shape)  # noqa: A001 - PyTorch's view of the input
            shape = input._data.shape
            tt = t.reshape((t_batch,) + ((1, -1) if t.size else (0, 0)))
    if op is NLL and t.ndim > 1:  # (PyTorch checks the target's rank before its dtype)
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if t.dtype not in (np.int64, np.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{target.dtype._legacy.replace('Tensor', '')}")
    if op is NLL:
        if t.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if d.ndim == 1 and t.ndim == 1:
            if t.size != 1:
                raise RuntimeError(
                    f"For 1D input, 1D target must have size 1, but got target size: {t.size}")
            tt = t.reshape(())  # one sample either way: a 0-d loss
        if weight is not None and (weight._data.ndim != 1 or weight._data.size != n_classes):
            raise RuntimeError(
                f"weight tensor should be defined either for all {n_classes} classes or no classes "
                f"but got weight tensor of shape: {_sizes(weight._data.shape)}")
    else:
        if tt.ndim != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {tt.ndim}")
        if weight is not None and weight._data.size != n_classes:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if (shape[0], shape[2], shape[3]) != tt.shape:
            raise RuntimeError(
                f"size mismatch (got input: {_sizes(shape)} , target: {_sizes(tt.shape)}")
    if weight is not None and weight._data.dtype != d.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input)} but found {_scalar_name(weight)}")
    t = tt.astype(np.int64)
    kept = t != ignore_index
    bad = kept & ((t < 0) | (t >= n_classes))
    if bad.any():  # the first bad target in order, as PyTorch's (serial) kernel reports it
        raise IndexError(f"Target {int(t.reshape(-1)[np.argmax(bad.reshape(-1))])} is out of bounds.")
    safe = np.where(kept, t, 0)
    wt = np.ones(t.shape, dtype=d.dtype) if weight is None or not n_classes else \
        weight._data.reshape(-1).astype(d.dtype)[safe]
    wt = np.where(kept, wt, 0).astype(d.dtype)
    res = run_unary(op, input, (safe, reduction, wt, shape, d.dtype, kept))
    if res._grad_fn is not None:  # (PyTorch's node saves target, weight and total_weight too)
        total = make(np.asarray(wt.sum() if reduction != "none" else 0, dtype=d.dtype))
        res = keep_index_inputs(res, target, weight, total)
    out = res
    if reduction == "none" and d.ndim > 2 and d.ndim != 4:
        return out.view((d.shape[0],) + d.shape[2:])
    return out


def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(cross_entropy, input, target, weight, size_average,
                              ignore_index, reduce, reduction, label_smoothing)
    reduction = _reduction_arg(size_average, reduce, reduction)
    if input._data.ndim == 0:
        _wrap_dim(1, 0)  # PyTorch's "Dimension out of range" for a 0-d input
    smoothing = label_smoothing > 0.0
    if input._data.shape == target._data.shape:
        if target._data.dtype.kind not in "fV":
            from ..tensor import _type_word

            raise RuntimeError("Expected floating point type for target with class probabilities, "
                               f"got {_type_word(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        _check_smoothing(label_smoothing)
        n_classes = input._data.shape[1 if input._data.ndim > 1 else 0]
        if weight is not None and (weight._data.ndim != 1 or weight._data.size != n_classes):
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all {n_classes} classes "
                f"or no classes but got weight tensor of shape: {_sizes(weight._data.shape)}")
        if smoothing:  # PyTorch mixes the target with the uniform distribution
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        # class probabilities, as PyTorch composes them: -(log_softmax(input) * target
        # [* weight]) summed over the class dim ("none"), over everything ("sum"), or that
        # divided by the batch size ("mean", a DivBackward1; an empty input fills the sum
        # with nan instead: FillBackward2, and no division by a zero batch)
        class_dim = 1 if input._data.ndim > 1 else 0
        prod = log_softmax(input, class_dim) * target
        if weight is not None:
            wshape = [1] * input._data.ndim
            wshape[class_dim] = -1
            prod = prod * (weight.reshape(wshape) if input._data.ndim > 1 else weight)
        if reduction == "none":
            return -prod.sum(class_dim)
        if reduction == "sum":
            return -prod.sum()
        if input._data.size == 0:
            return -prod.sum().fill_(float("nan"))
        batch = input._data.size // input._data.shape[class_dim]
        return run_op(DIV_SCALAR, (-prod.sum(),), (float(batch),))
    _check_smoothing(label_smoothing)
    class_dim = 1 if input._data.ndim > 1 else 0
    logp = log_softmax(input, class_dim)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not smoothing:
        return nll
    return run_op(MUL_SCALAR, (nll,), (1 - label_smoothing,)) + run_op(
        MUL_SCALAR, (_smooth_loss(logp, target, weight, ignore_index, reduction, class_dim),),
        (label_smoothing / logp._data.shape[class_dim],))


def _check_smoothing(label_smoothing) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")


def _smooth_loss(logp, target, weight, ignore_index, reduction, class_dim):
    """The label-smoothing term of cross_entropy, as PyTorch composes it: -sum over the
    classes of logp [* weight], 0 where the target is ignored; "mean" divides by the number
    (or the total weight) of the kept targets."""
    ignored = target._data == ignore_index
    if weight is not None:
        shape = [1] * logp._data.ndim
        shape[class_dim] = weight._data.shape[0]
        smooth = -(logp * weight.view(shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(make(np.asarray(ignored)), 0.0)
    if reduction == "sum":
        return smooth.sum()
    if reduction != "mean":
        return smooth
    kept = target._data[~ignored].reshape(-1)
    if weight is not None:
        return smooth.sum() / make(np.asarray(weight._data[kept].sum()))
    return smooth.sum() / make(np.asarray(np.count_nonzero(~ignored), dtype=np.int64))


def _bce_fwd(x, t, reduction, weight):
    # PyTorch's kernel: (t - 1) * max(log1p(-x), -100) - t * max(log(x), -100)
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
    if weight is not None:  # rescales each element's loss (broadcast), as PyTorch
        loss = loss * weight
    return _reduce(loss, reduction)


_BCE_EPS = 1e-12
_BCE_KERNEL_EPS = float(np.float32(1e-12))  # the kernel's EPSILON is a float constant


def _bce_backward_fwd(g, x, t, reduction, weight):
    """PyTorch's binary_cross_entropy_backward: g (x - t) / max((1 - x) x, 1e-12) [* w] [/ N]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = g * (x - t) / np.maximum((1 - x) * x, x.dtype.type(_BCE_KERNEL_EPS))
        if weight is not None:
            out = out * weight
        if reduction == "mean":
            out = out / x.size
    return np.asarray(out, dtype=x.dtype)


def _one_minus(x):
    """1 - x as PyTorch's C++ formulas write it (SubBackward0, not RsubBackward1)."""
    return make(np.ones((), dtype=x._data.dtype)) - x


def _plus_eps(v):
    return run_op(ADD_SCALAR, (v,), (_BCE_EPS,))  # v + eps: AddBackward1, as PyTorch's formula


def _bce_mean(v, reduction, n):
    return run_op(DIV_SCALAR, (v,), (float(n),)) if reduction == "mean" else v


def _bce_grads(c, g):
    """d/dx: the binary_cross_entropy_backward op; d/dt: -logit(x) * g [* w] [/ N]."""
    x, t = c.saved
    reduction, weight = c.meta
    gx = run_op(BCE_BACKWARD, (g, x, t), c.meta) if c.needs(0) else None
    gt = None
    if c.needs(1):
        gt = -run_op(LOGIT, (x,)) * g
        if weight is not None:
            gt = gt * make(weight)
        gt = _bce_mean(gt, reduction, x._data.size)
    return (gx, gt)


def _bce_double_backward(c, gg):
    """PyTorch's derivatives of binary_cross_entropy_backward(g, x, t), term for term."""
    from ..grad_mode import no_grad

    g, x, t = c.saved
    reduction, weight = c.meta
    w = make(weight) if weight is not None else None
    n = x._data.size
    dg = dx = dt = None
    if c.needs(0):
        dg = (x - t) / (_plus_eps(x) * _plus_eps(_one_minus(x)))
        if w is not None:
            dg = dg * w
        dg = _bce_mean(dg * gg, reduction, n)
        if reduction != "none":
            dg = dg.sum()
    if c.needs(1):
        num = x * x - run_op(MUL_SCALAR, (x,), (2,)) * t + t
        dx = num / (_plus_eps(x) ** 2 * _plus_eps(_one_minus(x)) ** 2) * (gg * g)
        if w is not None:
            dx = dx * w
        dx = _bce_mean(dx, reduction, n)
    if c.needs(2):
        dt = -gg * g
        if w is not None:
            dt = dt * w
        denom = _one_minus(x) * x
        with no_grad():  # clamped in place outside the graph, as PyTorch does
            np.maximum(denom._data, denom._data.dtype.type(_BCE_EPS), out=denom._data)
        dt = _bce_mean(dt / denom, reduction, n)
    return dg, dx, dt


def _logit_fwd(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1 - x))


def _logit_backward(c, g):
    # g / (x (1 - x)), nan outside [0, 1] (PyTorch's logit backward without eps)
    from .elementwise import where

    x = c.saved[0]
    inside = make((x._data >= 0) & (x._data <= 1))
    return (where(inside, g / (x * _one_minus(x)), float("nan")),)


_BCE_GRAD = ("torch.enable_grad()(lambda a: torch.autograd.grad(torch.nn.functional."
             "binary_cross_entropy(a.sigmoid(), a.sigmoid() * 0.5), a, create_graph=True)[0] "
             "* a)(a)")
BCE = defop("binary_cross_entropy", "BinaryCrossEntropyBackward0", _bce_fwd, _bce_grads,
            "d bce(x, t)/dx = (x - t)/(x(1 - x))/N", save="inputs",
            torch_call="torch.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid())")
BCE_BACKWARD = defop(
    "binary_cross_entropy_backward", "BinaryCrossEntropyBackwardBackward0", _bce_backward_fwd,
    _bce_double_backward, "d bce_backward(g, x, t)/dg, /dx, /dt (PyTorch's double backward)",
    save="inputs", torch_call=_BCE_GRAD)
# logit(x) = log(x / (1 - x)): the gradient of binary_cross_entropy for its target is -logit(x)
# (its own table entry: torch.logit, in math.py, takes eps)
LOGIT = defop("bce_target_logit", "LogitBackward0", _logit_fwd, _logit_backward,
              "d logit(x)/dx = 1/(x(1 - x))", save="inputs", torch_call=_BCE_GRAD)


def _bce_weight_check(tshape: tuple, weight: Tensor) -> None:
    """PyTorch expands weight to the target's broadcast shape: its errors for what cannot."""
    wshape = weight._data.shape
    for i in range(1, len(wshape) + 1):
        if i <= len(tshape) and wshape[-i] not in (tshape[-i], 1) and tshape[-i] != 1:
            dims = ", ".join(str(n) for n in wshape)
            raise RuntimeError(
                f"Attempting to broadcast a dimension of length {wshape[-i]} at -{i}! Mismatching "
                f"argument at index 1 had torch.Size([{dims}]); but expected shape should be "
                f"broadcastable to {_sizes(tshape)}")
    full = np.broadcast_shapes(tshape, wshape)
    if full != tuple(tshape):
        raise RuntimeError(f"output with shape {_sizes(tshape)} doesn't match the broadcast shape "
                           f"{_sizes(full)}")


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None,
                         reduce=None, reduction="mean") -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(binary_cross_entropy, input, target, weight,
                              size_average, reduce, reduction)
    reduction = _reduction_arg(size_average, reduce, reduction)
    if input._data.shape != target._data.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        _bce_weight_check(target._data.shape, weight)
    x = input._data
    if target._data.dtype != x.dtype:
        from ..tensor import _type_word

        raise RuntimeError(
            f"Found dtype {_type_word(target.dtype)} but expected {_type_word(input.dtype)}")
    if x.size and not ((x >= 0) & (x <= 1)).all():  # nan is out of range too
        raise RuntimeError("all elements of input should be between 0 and 1")
    t = target._data
    if t.size and not ((t >= 0) & (t <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    w = None
    if weight is not None:
        w = np.broadcast_to(weight._data.astype(x.dtype), x.shape)
    return run_op(BCE, (input, target), (reduction, w))


def linear(input: Tensor, weight: Tensor, bias=None) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(linear, input, weight, bias)
    d = input._data
    if d.ndim == 0 or weight._data.ndim == 0:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are "
            f"{d.ndim}D and {weight._data.ndim}D")
    if bias is not None and d.ndim == 2:
        # (views.t itself: Tensor.t's argument-checking wrapper has nothing to check here)
        return addmm(bias, input, _t(weight) if weight._data.ndim == 2 else weight.t())
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


# ------------------------------------------------- binary_cross_entropy_with_logits
# PyTorch 2.13 (measured bit for bit): loss = (1 - t) * x - log_weight * log_sigmoid(x),
# log_weight = (pos_weight - 1) * t + 1 (no pos_weight: 1), each step rounded to the
# tensor's dtype; times weight; then the reduction. log_sigmoid's CPU kernel works in
# vector code on every element (its tail is a partial vector): min(x, 0) - log1p(z) with
# z = exp(-|x|), SLEEF's expf and log1pf for float32. Its gradients are formulas over
# Tensor ops (PyTorch's binary_cross_entropy_with_logits_backward and _target_backward),
# so a create_graph gradient has PyTorch's nodes (SigmoidBackward0, MulBackward0, ...).

_F32, _F64, _I32 = np.float32, np.float64, np.int32


def _log_sigmoid_buffer(x):
    """exp(-|x|): the buffer PyTorch's log_sigmoid keeps for its backward."""
    with np.errstate(over="ignore"):
        minus = np.asarray(-np.abs(x))
        if x.dtype == _F32:
            return np.asarray(vec_exp32(minus.reshape(-1))).reshape(minus.shape)
        return np.exp(minus)


def _log_sigmoid_fwd(x):
    z = _log_sigmoid_buffer(x)
    with np.errstate(invalid="ignore"):
        lp = vec_log1p32(z) if x.dtype == _F32 else np.log1p(z)
        return np.asarray(np.minimum(x, x.dtype.type(0)) - lp, dtype=x.dtype)


def _log_sigmoid_backward_fwd(g, x):
    """PyTorch's log_sigmoid_backward: (x < 0 ? 1 - z/(1 + z) : z/(1 + z)) * g."""
    z = _log_sigmoid_buffer(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = z / (x.dtype.type(1) + z)
        d = np.where(x < 0, x.dtype.type(1) - q, x.dtype.type(0) + q)
        return np.asarray(d * g, dtype=np.result_type(x, g))


def _log_sigmoid_double_backward(c, gg):
    """d/dg: the same op on gg; d/dx: gg * g * (s - 1) * s, s = sigmoid(x)."""
    g, x = c.saved
    dg = run_op(LOG_SIGMOID_BACKWARD, (gg, x)) if c.needs(0) else None
    dx = None
    if c.needs(1):
        s = x.sigmoid()
        dx = (gg * g) * (s - 1) * s
    return dg, dx


# reaches log_sigmoid (and, differentiated again, its backward): the target's gradient
# of binary_cross_entropy_with_logits with pos_weight, under create_graph
_BCE_LOGITS_TARGET_GRAD = (
    "torch.enable_grad()(lambda a: torch.autograd.grad(torch.nn.functional."
    "binary_cross_entropy_with_logits(a * 0.5 + 0.25, a, pos_weight=torch.ones_like(a) * 2.5, "
    "reduction='sum'), a, create_graph=True)[0] * a)(a)")
# ... and differentiated once more under create_graph, log_sigmoid's backward as an op
_BCE_LOGITS_TARGET_GRAD2 = ("torch.enable_grad()(lambda a: torch.autograd.grad("
                            f"{_BCE_LOGITS_TARGET_GRAD}.sum(), a, create_graph=True)[0] * a)(a)")
LOG_SIGMOID = defop("log_sigmoid", "LogSigmoidBackward0", _log_sigmoid_fwd,
                    lambda c, g: (run_op(LOG_SIGMOID_BACKWARD, (g, c.saved[0])),),
                    "d log_sigmoid(x)/dx = 1 - sigmoid(x)", save="inputs",
                    torch_call=_BCE_LOGITS_TARGET_GRAD)
LOG_SIGMOID_BACKWARD = defop(
    "log_sigmoid_backward", "LogSigmoidBackwardBackward0", _log_sigmoid_backward_fwd,
    _log_sigmoid_double_backward, "d[g(1 - sigmoid(x))]/dg, /dx = -g s(1 - s)",
    save="inputs", broadcast=True, torch_call=_BCE_LOGITS_TARGET_GRAD2)


def _in_place(a, b, op):
    """a.op_(b) as PyTorch's in-place ops compute it: in the promoted dtype, kept in a's."""
    return np.asarray(op(a, b)).astype(a.dtype, copy=False)


def _bce_logits_fwd(x, t, reduction, weight, pos_weight):
    ls = _log_sigmoid_fwd(x)
    with np.errstate(invalid="ignore", over="ignore"):
        if pos_weight is not None:
            log_weight = (pos_weight - pos_weight.dtype.type(1)) * t
            log_weight = log_weight + log_weight.dtype.type(1)
            ls = _in_place(ls, log_weight, np.multiply)
        loss = _in_place(t.dtype.type(1) - t, x, np.multiply)
        loss = _in_place(loss, ls, np.subtract)
        if weight is not None:
            loss = _in_place(loss, weight, np.multiply)
    return _reduce(loss, reduction)


def _bce_logits_grads(c, g):
    """PyTorch's two backward formulas, as the Tensor ops they are made of."""
    x, t = c.saved
    reduction, weight, pos_weight = c.meta
    n = x._data.size
    w = make(weight) if weight is not None else None
    pw = make(pos_weight) if pos_weight is not None else None
    gx = gt = None
    if c.needs(0):
        if pw is not None:
            pt = pw * t
            gx = (run_op(ADD_SCALAR, (pt,), (1,)) - t) * x.sigmoid() - pt
        else:
            gx = x.sigmoid() - t
        gx = gx * g
        if w is not None:
            gx = gx * w
        if reduction == "mean":
            gx = run_op(DIV_SCALAR, (gx,), (float(n),))
    if c.needs(1):
        if pw is not None:
            gt = (run_op(LOG_SIGMOID, (-x,)) - run_op(LOG_SIGMOID, (x,)) * pw) * g
        else:
            gt = -x * g
        if w is not None:
            gt = gt * w
        if reduction == "mean":
            gt = run_op(DIV_SCALAR, (gt,), (float(t._data.size),))
    return gx, gt


BCE_LOGITS = defop(
    "binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
    _bce_logits_fwd, _bce_logits_grads,
    "d bce_logits(x, t)/dx = (sigmoid(x) - t)/N, /dt = -x/N", save="inputs", broadcast=True,
    torch_call="torch.nn.functional.binary_cross_entropy_with_logits(a, b.sigmoid())")

_REDUCTION_ENUM = {0: "none", 1: "mean", 2: "sum"}


def _as_tensor_arg(value, name: str, position: int):
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"binary_cross_entropy_with_logits(): argument '{name}' (position "
                        f"{position}) must be Tensor, not {type(value).__name__}")


def _bce_logits_impl(input: Tensor, target: Tensor, weight, pos_weight, reduction: str) -> Tensor:
    """torch.binary_cross_entropy_with_logits: PyTorch's checks in the order its steps
    would raise them (log_sigmoid's dtype, pos_weight's broadcast, the in-place ops')."""
    from ..grad_mode import GRAD_MODE
    from ..tensor import _type_word
    from .registry import broadcast_error

    x, t = input._data, target._data
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{_type_word(input.dtype)}'")

    def fits(out_shape, a_shape, b_shape):
        try:
            full = np.broadcast_shapes(a_shape, b_shape)
        except ValueError:
            broadcast_error(a_shape, b_shape)
        if full != tuple(out_shape):
            raise RuntimeError(f"output with shape {_sizes(out_shape)} doesn't match the "
                               f"broadcast shape {_sizes(full)}")

    pw = None
    if pos_weight is not None:
        p = pos_weight._data
        try:
            lw_shape = np.broadcast_shapes(p.shape, t.shape)
        except ValueError:
            broadcast_error(p.shape, t.shape)
        fits(x.shape, x.shape, lw_shape)
        pw = p
    if t.dtype.kind not in "fV":  # (1 - target) keeps target's integer dtype: x cannot go in
        from .. import dtypes

        result = dtypes.promote(target.dtype, input.dtype)
        raise RuntimeError(f"result type {_type_word(result)} can't be cast to the desired "
                           f"output type {_type_word(target.dtype)}")
    fits(t.shape, t.shape, x.shape)  # (1 - target).mul_(input); log_sigmoid has x's shape
    w = None
    if weight is not None:
        fits(t.shape, t.shape, weight._data.shape)
        w = weight._data
    if GRAD_MODE.enabled:
        for name, arg in (("weight", weight), ("pos_weight", pos_weight)):
            if arg is not None and arg.requires_grad:
                raise RuntimeError(
                    f"The function 'binary_cross_entropy_with_logits' is not differentiable "
                    f"with respect to argument '{name}'. This input cannot have requires_grad "
                    f"True.")
    return run_op(BCE_LOGITS, (input, target), (reduction, w, pw))


def torch_binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                           pos_weight=None, reduction: int = 0) -> Tensor:
    """torch.binary_cross_entropy_with_logits: reduction as an int (0 none, 1 mean, 2 sum;
    any other value: none, as PyTorch's apply_loss_reduction), no size check. Its schema
    says reduction=Mean, but PyTorch 2.13's binding, called without it, does not reduce
    (measured): so neither does this."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError("binary_cross_entropy_with_logits(): argument 'reduction' must be int, "
                        f"not {type(reduction).__name__}")
    _as_tensor_arg(weight, "weight", 3)
    _as_tensor_arg(pos_weight, "pos_weight", 4)
    return _bce_logits_impl(input, target, weight, pos_weight, _REDUCTION_ENUM.get(reduction, "none"))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None,
                                     size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None) -> Tensor:
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's float32 list)
        return _autocast.fp32(binary_cross_entropy_with_logits, input, target, weight,
                              size_average, reduce, reduction, pos_weight)
    reduction = _reduction_arg(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _as_tensor_arg(weight, "weight", 3)
    _as_tensor_arg(pos_weight, "pos_weight", 4)
    return _bce_logits_impl(input, target, weight, pos_weight, reduction)
