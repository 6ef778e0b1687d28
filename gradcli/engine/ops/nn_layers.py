"""Layers' functional forms: bilinear, layer_norm, embedding, batch_norm, conv1d/conv2d,
max/avg pooling (Tensor.unflatten, which nn.Unflatten rests on, is in ops/layout.py)."""

from __future__ import annotations

import math

import numpy as np

from .. import autocast_state as _autocast
from ..fpstate import run_quietly
from ..node import keep_given, keep_index_inputs, node_class, packs_index_first
from ..tensor import Tensor, make
from . import shape_checks
from .backward_nodes import BackwardOp
from .conv_backward import ConvFamily, convolution_backward
from .registry import PUBLIC, defop, public, run_op

# ------------------------------------------------------------- module backward hooks
# nn.Module.register_full_backward_hook passes a module's tensor inputs and outputs through
# an identity node, as PyTorch's BackwardHookFunction does, so the gradients flowing
# through them can be seen (and the inputs' replaced) by the hooks.
BACKWARD_HOOK = defop("backward_hook_function", "BackwardHookFunctionBackward", lambda a: a,
                      lambda c, g: (g,), "identity (module backward hooks watch it)",
                      torch_call="(lambda m, x: (m.register_full_backward_hook(lambda *h: None), "
                                 "m(x * 1))[1])(torch.nn.Identity(), a)")
# (PyTorch's BackwardHookFunction is a Python autograd.Function: its node class lives there)
node_class("BackwardHookFunctionBackward").__module__ = "torch.autograd.function"


def backward_hook_identity(t: Tensor) -> Tensor:
    return run_op(BACKWARD_HOOK, (t,))


# ------------------------------------------------------------------ helpers
def _tuple(v, n: int) -> tuple:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(v) * n
        return tuple(int(x) for x in v)
    return (int(v),) * n


# ------------------------------------------------------------------ bilinear
def _trilinear_fwd(a, b, c, spec):
    """ATen's _trilinear adds each slice's contraction into zeros, so an exact zero is +0
    (never -0): the same + 0 here."""
    with np.errstate(all="ignore"):
        out = np.einsum(spec, a, b, c, optimize=True).astype(np.result_type(a, b, c))
        return out + out.dtype.type(0)


def _trilinear_backward(c, g):
    """Each operand's gradient is the same contraction with g in its place (PyTorch's
    _trilinear backward: TrilinearBackward0 again, so every order is one)."""
    ins, outs = c.meta[0].split("->")
    subs = ins.split(",")
    saved = c.saved
    grads = []
    for p in range(3):
        if not c.needs(p):
            grads.append(None)
            continue
        operands = list(saved)
        operands[p] = g
        spec = ",".join(outs if q == p else subs[q] for q in range(3)) + "->" + subs[p]
        grads.append(run_op(TRILINEAR, tuple(operands), (spec,)))
    return tuple(grads)


TRILINEAR = defop("trilinear_product", "TrilinearBackward0", _trilinear_fwd,
                  _trilinear_backward, "d einsum(a, b, c)/d operand = einsum with g in its place",
                  save="inputs",
                  torch_call="torch.nn.functional.bilinear(a.reshape(-1, 1), a.reshape(-1, 1).cos(),"
                             " torch.tensor([[[1.5]], [[-0.5]]], dtype=a.dtype))")


@public("torch.nn.functional.bilinear", "torch.bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias=None) -> Tensor:
    """x1^T W_k x2 (+ b_k) for each output k: one three-operand contraction over the inputs
    viewed as matrices, as PyTorch's _trilinear (TrilinearBackward0, its gradients too)."""
    _bilinear_checks(input1, input2, weight, bias)
    out, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    y = run_op(TRILINEAR, (x1, weight, x2), ("ni,kij,nj->nk",)).view(lead + (out,))
    return y + bias if bias is not None else y


def _bilinear_checks(input1, input2, weight, bias) -> None:
    """PyTorch's shape checks of bilinear, in its order and words."""
    a, b = tuple(input1.shape), tuple(input2.shape)
    if len(a) != len(b):
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {len(a)} and {len(b)}")
    for i in range(len(a) - 1):
        if a[i] != b[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {a[i]} "
                               f"and {b[i]}")
    w = tuple(weight.shape)
    for name, last, expected in (("input1", a[-1], w[1]), ("input2", b[-1], w[2])):
        if last != expected:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {last} "
                               f"but expected {expected}")
    if bias is not None and bias.shape[0] != w[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {w[0]}")


# ------------------------------------------------------------------ embedding
def _embedding_fwd(weight, indices, padding_idx, shape, scale_grad_by_freq=False):
    return weight[indices]


def _embedding_grads(arrays, meta, g):
    weight = arrays[0]
    indices, padding_idx = meta[:2]
    gw = np.zeros_like(weight)
    rows = g.reshape(-1, weight.shape[1])
    if len(meta) > 3 and meta[3]:
        rows = rows * _inverse_counts(indices.reshape(-1), weight.shape[0], g.dtype)[:, None]
    np.add.at(gw, indices.reshape(-1), rows)
    if padding_idx is not None and padding_idx >= 0:
        gw[padding_idx] = 0
    return (gw,)


def _embedding_backward(c, g):
    """The gradient rows added at the indices (index_put with accumulate: Tensor ops, so
    it can be differentiated again); the padding row gets none. With scale_grad_by_freq
    each row is first divided by how often its index occurs in the batch."""
    from .views import index_put

    indices, padding_idx, (n, d) = c.meta[:3]
    flat_np = np.ascontiguousarray(indices.reshape(-1)).astype(np.int64)
    flat = make(flat_np)
    rows = g.reshape(-1, d)
    if len(c.meta) > 3 and c.meta[3]:
        scale = _inverse_counts(flat_np, n, g._data.dtype)[:, None]
        if rows.requires_grad:
            # (PyTorch's derivative of this backward gathers the gradient rows unscaled:
            # the scale changes the values only)
            rows = rows + (rows.detach() * make(scale - 1)).detach()
        else:
            rows = rows * make(scale)
    gw = index_put(make(np.zeros((n, d), g._data.dtype)), (flat,), rows, accumulate=True)
    if padding_idx is not None and padding_idx >= 0:
        keep = np.ones((n, 1), g._data.dtype)
        keep[padding_idx] = 0
        gw = gw * make(keep)
    return (gw,)


def _inverse_counts(flat, n, dtype):
    """1 / (how often each entry's index occurs among the indices), per entry."""
    counts = np.bincount(flat, minlength=n)
    return (1.0 / counts[flat]).astype(dtype)


EMBEDDING = defop("embedding", "EmbeddingBackward0", _embedding_fwd, _embedding_backward,
                       "d embedding(W, i)/dW = the gradient rows added at the indices",
                       save="meta",
                       torch_call="torch.nn.functional.embedding(torch.tensor([[0, 1], [1, 0]]), "
                                  "a.reshape(a.shape[0], -1) if a.dim() > 1 else a.reshape(-1, 1))")
# (EmbeddingBackward0 saves the indices alone: the weight's shape is all it reads of it)
packs_index_first(EMBEDDING)


@public("torch.nn.functional.embedding")
def embedding(input: Tensor, weight: Tensor, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False) -> Tensor:
    if max_norm is not None:  # (PyTorch renorms first: its errors come before embedding's)
        from ..grad_mode import no_grad

        with no_grad():
            PUBLIC["torch.embedding_renorm_"](weight.detach(), input, max_norm, norm_type)
    idx = input._data
    if idx.dtype.kind not in "iu":
        from ..tensor import _type_word

        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got torch."
                           f"{_type_word(input.dtype)}Tensor instead (while checking arguments "
                           "for embedding)")
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += n
    if idx.size and n == 0:  # (PyTorch's embedding is index_select on dim 0 of the weight)
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    return keep_given(keep_index_inputs(run_op(EMBEDDING, (weight,),
                                               (idx, padding_idx, weight._data.shape,
                                                bool(scale_grad_by_freq))), input),
                      EMBEDDING, scale_grad_by_freq, sparse)


# ------------------------------------------------------------------ layer_norm
def _norm_axes(x, k):
    return tuple(range(x.ndim - k, x.ndim))


def _layer_norm_fwd(x, weight, bias, k, eps):
    """PyTorch's CPU kernel within its rounding: the row's mean and variance (exact here,
    rounded to x's dtype), rstd = 1 / sqrt(var + eps) in x's dtype, then per element
    (x - mean) * rstd * w + b, each step rounded to x's dtype."""
    axes = _norm_axes(x, k)
    dt = x.dtype
    x64 = x.astype(np.float64)
    mean64 = x64.mean(axis=axes, keepdims=True)
    var64 = ((x64 - mean64) ** 2).mean(axis=axes, keepdims=True)
    mean = mean64.astype(dt)
    rstd = (1 / np.sqrt(var64.astype(dt) + dt.type(eps))).astype(dt)
    # (x - mean) * rstd, each step rounded to x's dtype: of the orders tried against
    # PyTorch 2.13's float32 results (fused x * rstd - mean * rstd among them) the closest,
    # and a row whose elements equal its mean gives exactly 0 as PyTorch's does
    y = (((x - mean).astype(dt) * rstd).astype(dt) + 0.0).astype(dt)  # (+ 0.: no -0.)
    if weight is not None:
        y = (y * weight).astype(dt)
    if bias is not None:
        y = (y + bias).astype(dt)
    return y


def _layer_norm_grads(arrays, meta, g):
    x, weight, bias = arrays
    k, eps = meta
    axes = _norm_axes(x, k)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    xhat = (x64 - mean) * rstd
    batch = tuple(range(x.ndim - k))
    gw = (g * xhat).sum(axis=batch).astype(x.dtype) if weight is not None else None
    gb = g.sum(axis=batch).astype(x.dtype) if bias is not None else None
    gx = g * weight if weight is not None else g.astype(np.float64)
    gx = rstd * (gx - gx.mean(axis=axes, keepdims=True)
                 - xhat * (gx * xhat).mean(axis=axes, keepdims=True))
    return gx.astype(x.dtype), gw, gb


def _normalized_grads(x, w, b, g, axes, batch_axes, eps, shape, stats=None):
    """The gradients of (x - mean) / sqrt(var + eps) * w + b over `axes`, in Tensor ops (so
    they can be differentiated again). `stats` = fixed (mean, var) arrays (eval mode)."""
    if stats is None:
        mean = x.mean(axes, keepdim=True)
        xc = x - mean
        rstd = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
    else:
        xc = x - make(stats[0].reshape(shape).astype(x._data.dtype))
        rstd = make((1 / np.sqrt(stats[1].reshape(shape) + eps)).astype(x._data.dtype))
    xhat = xc * rstd

    def batch_sum(t):  # (sum over no dims would be a sum over all of them)
        return t.sum(batch_axes) if batch_axes else t

    gw = batch_sum(g * xhat).reshape(w.shape) if w is not None else None
    gb = batch_sum(g).reshape(b.shape) if b is not None else None
    gxh = g * w.reshape(shape) if w is not None else g
    if stats is None:
        gx = rstd * (gxh - gxh.mean(axes, keepdim=True)
                     - xhat * (gxh * xhat).mean(axes, keepdim=True))
    else:
        gx = gxh * rstd
    return gx, gw, gb


def _layer_norm_backward_formula(inputs, meta, mask):
    """native_layer_norm_backward(grad_out, input, mean, rstd, weight, bias): the three
    gradients in Tensor ops (mean and rstd are recomputed from input, so they are edges
    only); meta = (eps, normalized axes, their shape, batch axes)."""
    g, x, w, b = inputs[0], inputs[1], inputs[4], inputs[5]
    eps, axes, shape, batch = meta
    gx, gw, gb = _normalized_grads(x, w, b, g, axes, batch, eps, shape)
    return (gx if mask[0] else None, gw if mask[1] else None, gb if mask[2] else None)


NATIVE_LAYER_NORM_BACKWARD = BackwardOp(
    "native_layer_norm_backward", "NativeLayerNormBackwardBackward0",
    _layer_norm_backward_formula, 3,
    "the vjp of layer_norm's gradients (grad_out, input, weight) by their Tensor formula",
    torch_call="torch.enable_grad()(lambda a: (lambda x: torch.autograd.grad(("
               "torch.nn.functional.layer_norm(x, (3,)) ** 2).sum(), x, create_graph=True)[0])("
               "torch.cat([a.reshape(-1, 1), a.reshape(-1, 1).exp(), a.reshape(-1, 1).sin()], 1"
               ")))(a)")


def _layer_norm_backward(c, g):
    x, w, b = c.saved
    k, eps = c.meta
    nd = x._data.ndim
    axes = list(range(nd - k, nd))
    shape = (1,) * (nd - k) + tuple(x._data.shape[nd - k:])
    batch = list(range(nd - k))
    mask = (c.needs(0), w is not None and c.needs(1), b is not None and c.needs(2))
    return NATIVE_LAYER_NORM_BACKWARD((g, x, None, None, w, b), (eps, axes, shape, batch), mask)


LAYER_NORM = defop("layer_norm", "NativeLayerNormBackward0", _layer_norm_fwd,
                        _layer_norm_backward, "d layer_norm/dx = rstd (g - mean g - xhat mean(g xhat))",
                        save="inputs",
                        torch_call="torch.nn.functional.layer_norm(a, a.shape[-1:])")


@public("torch.nn.functional.layer_norm", "torch.layer_norm")
def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
            "one element, but got normalized_shape = []")
    if tuple(input.shape[input.dim() - k:]) != shape or input.dim() < k:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    return run_op(LAYER_NORM, (input, weight, bias), (k, float(eps)))


# ------------------------------------------------------------------ batch_norm
def _bn_shape(x):
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _bn_axes(x):
    return (0,) + tuple(range(2, x.ndim))


def _batch_norm_fwd(x, weight, bias, mean, var, eps, training, invstd):
    """(x - mean) * invstd * weight + bias in PyTorch's order (kernels/batch_norm.py)."""
    from ..kernels.batch_norm import transform

    return transform(x, weight, bias, mean, invstd)


def _batch_norm_grads(arrays, meta, g):
    x, weight, bias = arrays
    mean, var, eps, training = meta[:4]
    shape, axes = _bn_shape(x), _bn_axes(x)
    rstd = 1 / np.sqrt(var.reshape(shape).astype(np.float64) + eps)
    xhat = (x - mean.reshape(shape)) * rstd
    gw = (g * xhat).sum(axis=axes).astype(x.dtype) if weight is not None else None
    gb = g.sum(axis=axes).astype(x.dtype) if bias is not None else None
    gx = g * weight.reshape(shape) if weight is not None else g.astype(np.float64)
    if training:
        gx = rstd * (gx - gx.mean(axis=axes, keepdims=True)
                     - xhat * (gx * xhat).mean(axis=axes, keepdims=True))
    else:
        gx = gx * rstd
    return gx.astype(x.dtype), gw, gb


def _batch_norm_backward_formula(inputs, meta, mask):
    """native_batch_norm_backward(grad_out, input, weight, running_mean, running_var): the
    three gradients in Tensor ops; meta = (eval stats or None, eps, channel shape, axes)."""
    g, x, w = inputs[0], inputs[1], inputs[2]
    stats, eps, shape, axes, bias_shape = meta
    gx, gw, gb = _normalized_grads(x, w, None, g, axes, axes, eps, shape, stats)
    if mask[2]:
        gb = g.sum(axes).reshape(bias_shape)
    return (gx if mask[0] else None, gw if mask[1] else None, gb)


NATIVE_BATCH_NORM_BACKWARD = BackwardOp(
    "native_batch_norm_backward", "NativeBatchNormBackwardBackward0",
    _batch_norm_backward_formula, 3,
    "the vjp of batch_norm's gradients (grad_out, input, weight) by their Tensor formula",
    torch_call="torch.enable_grad()(lambda a: (lambda x: torch.autograd.grad(("
               "torch.nn.functional.batch_norm(x, None, None, training=True) ** 2).sum(), x, "
               "create_graph=True)[0])(torch.cat([a.reshape(-1, 1), a.reshape(-1, 1).exp(), "
               "a.reshape(-1, 1).sin()])))(a)")


def _batch_norm_backward(c, g):
    x, w, b = c.saved
    mean, var, eps, training = c.meta[:4]
    nd = x._data.ndim
    axes = [0] + list(range(2, nd))
    shape = (1, x._data.shape[1]) + (1,) * (nd - 2)
    meta = (None if training else (mean, var), eps, shape, axes,
            tuple(b._data.shape) if b is not None else None)
    mask = (c.needs(0), w is not None and c.needs(1), b is not None and c.needs(2))
    return NATIVE_BATCH_NORM_BACKWARD((g, x, w, None, None), meta, mask)


BATCH_NORM = defop("batch_norm", "NativeBatchNormBackward0",
                        _batch_norm_fwd,
                        _batch_norm_backward, "d batch_norm/dx over the batch statistics",
                        save="inputs",
                        torch_call="torch.nn.functional.batch_norm(a.reshape(a.shape[0], -1) "
                                   "if a.dim() > 1 else a.reshape(-1, 1), None, None, "
                                   "training=True)")


@public("torch.nn.functional.batch_norm")
def batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    x = input._data
    if training and x.ndim >= 1 and x.shape[0] * math.prod(x.shape[2:]) == 1:
        # (F.batch_norm's own check, in Python: ATen's entry points have none)
        raise ValueError("Expected more than 1 value per channel when training, got input "
                         f"size {input.shape}")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return batch_norm_as(BATCH_NORM, input, running_mean, running_var, weight, bias, training,
                         momentum, eps)


def batch_norm_as(op, input: Tensor, running_mean, running_var, weight, bias, training: bool,
                  momentum: float, eps: float) -> Tensor:
    """batch_norm recorded as `op`: BATCH_NORM, or the same rule under the node name of
    another ATen entry point (_native_batch_norm_legit, _batch_norm_with_update)."""
    x = input._data
    if x.size == 0:  # ATen: a copy (not a view, not a fresh tensor: the graph goes on)
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    if x.ndim < 2:  # ATen reads the channel count as size(1), in this order
        if running_mean is not None:
            raise RuntimeError(f"running_mean should contain 0 elements not "
                               f"{running_mean.numel()}")
        if training:
            raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but "
                             "got 1)")
        raise RuntimeError("running_mean must be defined in evaluation mode")
    _check_batch_norm_params(x, weight, bias, running_mean, running_var, training)
    from ..kernels import batch_norm as order

    if training:
        n = x.size // x.shape[1]
        mean, var_sum = run_quietly(order.batch_stats, x)  # (inf - inf: nan, silently)
        invstd = order.train_invstd(var_sum, n, eps)
        with np.errstate(all="ignore"):
            var = (var_sum.astype(np.float64) / n).astype(x.dtype).astype(np.float64)
        order.update_running(
            running_mean._data if running_mean is not None else None,
            running_var._data if running_var is not None else None,
            mean, var_sum, n, momentum,
            x.flags.c_contiguous or order._rows_layout(x) is not None)
        for stat in (running_mean, running_var):
            if stat is not None:
                stat._vc[0] += 1
        mean = mean.astype(np.float64)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean, var = running_mean._data.astype(np.float64), running_var._data.astype(np.float64)
        invstd = order.eval_invstd(running_var._data, eps, x.dtype)
    return run_op(op, (input, weight, bias), (mean, var, float(eps), bool(training), invstd))


def _check_batch_norm_params(x, weight, bias, running_mean, running_var,
                             training=True) -> None:
    """ATen's checks of the per-channel tensors, in its order: running_mean, running_var
    (each defined in evaluation mode), weight, bias hold one value per channel; then the
    dtype (a float32 input takes float32 parameters; a float64 one, float64)."""
    channels = x.shape[1]
    named = (("running_mean", running_mean), ("running_var", running_var),
             ("weight", weight), ("bias", bias))
    for name, t in named:
        if t is None and not training and name.startswith("running"):
            raise RuntimeError(f"{name} must be defined in evaluation mode")
        if t is not None and t._data.size != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t._data.size}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither "
                         "be None")
    # ATen's mixed-type rule: the first defined of weight, bias, running_mean, running_var
    # sets the parameters' type; if it is not the input's, every parameter must be float32
    # and the input a reduced float. Otherwise a parameter of another type fails the
    # kernel's own dtype check.
    params = [t for t in (weight, bias, running_mean, running_var) if t is not None]
    if params and params[0]._data.dtype != x.dtype:
        if any(t._data.dtype != np.float32 for t in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                               "Float")
        if x.dtype != np.float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for t in params:
        if t._data.dtype != x.dtype:
            raise RuntimeError(f"expected scalar type {_SCALAR_NAME[x.dtype.name]} but found "
                               f"{_SCALAR_NAME.get(t._data.dtype.name, t._data.dtype.name)}")


_SCALAR_NAME = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool"}


# ------------------------------------------------------------------ convolution
# conv1d runs as conv2d over a (N, C, 1, L) view of its input; one ConvolutionBackward0
# node either way. Windows come from sliding_window_view (no copy) and one einsum per
# group dimension; the input's gradient adds each kernel position's slice back.
def _windows(xp, kh, kw, stride, dilation, oh, ow):
    from numpy.lib.stride_tricks import sliding_window_view

    sh, sw = stride
    dh, dw = dilation
    span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    win = sliding_window_view(xp, (span_h, span_w), axis=(2, 3))
    return win[:, :, ::sh, ::sw, ::dh, ::dw][:, :, :oh, :ow]


def _conv_geometry(x_shape, w_shape, stride, padding, dilation):
    _, _, h, w = x_shape
    _, _, kh, kw = w_shape
    (ph, pw), (dh, dw), (sh, sw) = padding, dilation, stride
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    return oh, ow


def _conv_fwd(x, w, b, stride, padding, dilation, groups, one_d):
    if one_d:
        x, w = x[:, :, None, :], w[:, :, None, :]
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = _conv_geometry(x.shape, w.shape, stride, padding, dilation)
    ph, pw = padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else x
    win = _windows(xp, kh, kw, stride, dilation, oh, ow)  # n, c, oh, ow, kh, kw
    win = win.reshape(n, groups, cg, oh, ow, kh, kw)
    wg = w.reshape(groups, o // groups, cg, kh, kw)
    out = np.einsum("ngchwij,gocij->ngohw", win, wg, optimize=True).reshape(n, o, oh, ow)
    if b is not None:
        out = out + b.reshape(1, o, 1, 1)
    # (einsum may hand back a transposed layout: PyTorch's output is contiguous, and
    # CS231n's flatten, x.view(N, -1), relies on it)
    out = np.ascontiguousarray(out.astype(x.dtype, copy=False))
    return out[:, :, 0, :] if one_d else out


def _lift(a, one_d):
    return a[:, :, None, :] if one_d else a


def _conv_grad_input(g, w, x_shape, stride, padding, dilation, groups, one_d):
    """d<g, conv(x, w)>/dx: each kernel position's slice of g @ w added back."""
    g, w = _lift(g, one_d), _lift(w, one_d)
    n, c = x_shape[0], x_shape[1]
    h, wd = (1, x_shape[2]) if one_d else x_shape[2:]
    o, cg, kh, kw = w.shape
    oh, ow = g.shape[2], g.shape[3]
    ph, pw = padding
    (sh, sw), (dh, dw) = stride, dilation
    gg = g.reshape(n, groups, o // groups, oh, ow)
    wg = w.reshape(groups, o // groups, cg, kh, kw)
    cols = np.einsum("ngohw,gocij->ngchwij", gg, wg, optimize=True).reshape(n, c, oh, ow, kh, kw)
    gxp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw), dtype=np.result_type(g, w))
    for i in range(kh):
        for j in range(kw):
            gxp[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                j * dw: j * dw + sw * (ow - 1) + 1: sw] += cols[:, :, :, :, i, j]
    gx = np.ascontiguousarray(gxp[:, :, ph: ph + h, pw: pw + wd])  # (PyTorch's is contiguous)
    return gx[:, :, 0, :] if one_d else gx


def _conv_grad_weight(g, x, w_shape, stride, padding, dilation, groups, one_d):
    """d<g, conv(x, w)>/dw: the correlation of x's windows with g."""
    g, x = _lift(g, one_d), _lift(x, one_d)
    n, c = x.shape[:2]
    o, cg = w_shape[0], w_shape[1]
    kh, kw = (1, w_shape[2]) if one_d else w_shape[2:]
    oh, ow = g.shape[2], g.shape[3]
    ph, pw = padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else x
    win = _windows(xp, kh, kw, stride, dilation, oh, ow).reshape(n, groups, cg, oh, ow, kh, kw)
    gg = g.reshape(n, groups, o // groups, oh, ow)
    gw = np.einsum("ngohw,ngchwij->gocij", gg, win, optimize=True).reshape(o, cg, kh, kw)
    gw = np.ascontiguousarray(gw)  # (a weight's grad is laid out as the weight)
    return gw[:, :, 0, :] if one_d else gw


def _float32_if_bfloat16(a: np.ndarray) -> np.ndarray:
    """numpy's einsum takes no bfloat16: its products run in float32, rounded once after."""
    return a.astype(np.float32) if a.dtype.kind == "V" else a


class _Conv1d2d(ConvFamily):
    """conv1d/conv2d's gradients for the one backward op (conv_backward.py)."""

    def grad_input(self, g, w, x_shape, geo):
        return _conv_grad_input(_float32_if_bfloat16(g._data), _float32_if_bfloat16(w._data),
                                x_shape, *geo).astype(w._data.dtype)

    def grad_weight(self, g, x, w_shape, geo):
        return _conv_grad_weight(_float32_if_bfloat16(g._data), _float32_if_bfloat16(x._data),
                                 w_shape, *geo).astype(x._data.dtype)

    def forward(self, x, w, geo):
        return run_op(CONVOLUTION, (x, w, None), geo)


_CONV_1D_2D = _Conv1d2d()


def _conv_backward(c, g):
    x, w, b = c.saved
    return convolution_backward(_CONV_1D_2D, c.meta, g, x, w,
                                (c.needs(0), c.needs(1), b is not None and c.needs(2)))


CONVOLUTION = defop("convolution", "ConvolutionBackward0", _conv_fwd, _conv_backward,
                    "d conv/dx = transposed conv of g, d/dw = correlation of x and g",
                    save="inputs",
                    torch_call="torch.nn.functional.conv1d(a.reshape(1, 1, -1), "
                               "torch.tensor([[[0.5, -1.0]]], dtype=a.dtype))")



def _pad_same_right(input, total):
    """padding='same' with an odd total padding along some dim: as PyTorch, the input
    (already batched) gets the extra zero on the right (ConstantPadNdBackward0) and the
    convolution the symmetric rest; PyTorch warns once."""
    from ..warn_site import warn_once

    warn_once("conv_same_pad", "Using padding='same' with even kernel lengths and odd dilation "
              "may require a zero-padded copy of the input be created (Triggered internally at "
              "/__w/pytorch/pytorch/aten/src/ATen/native/Convolution.cpp:1101.)")
    pad = []
    for t in reversed(total):  # (F.pad lists the last dim first)
        pad += [0, t - t // 2 - t // 2]
    return PUBLIC["torch.nn.functional.pad"](input, pad)


def _conv(input, weight, bias, stride, padding, dilation, groups, dims: int):
    name = f"conv{dims}d"
    x = input._data
    if x.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {name}, but "
            f"got input of size: {list(input.shape)}")
    unbatched = x.ndim == dims + 1
    if unbatched:
        input = input.unsqueeze(0)
    stride, dilation = _tuple(stride, dims), _tuple(dilation, dims)
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * dims
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            if any(t % 2 for t in total):
                input = _pad_same_right(input, total)  # noqa: A001
            padding = tuple(t // 2 for t in total)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of "
                             "{'valid', 'same'}")
    padding = _tuple(padding, dims)
    c_in = input.shape[1]
    if weight.shape[1] * groups != c_in:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got {c_in} "
            "channels instead")
    if dims == 1:
        stride, padding, dilation = (1,) + stride, (0,) + padding, (1,) + dilation
    x_shape = tuple(input.shape) if dims == 2 else (input.shape[0], c_in, 1, input.shape[2])
    w_shape = tuple(weight.shape) if dims == 2 else (weight.shape[0], weight.shape[1], 1,
                                                     weight.shape[2])
    oh, ow = _conv_geometry(x_shape, w_shape, stride, padding, dilation)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            "Calculated padded input size per channel: "
            f"({' x '.join(str(s + 2 * p) for s, p in zip(x_shape[4 - dims:], padding[2 - dims:]))}). "
            f"Kernel size: ({' x '.join(str(k) for k in kernel)}). Kernel size can't be greater "
            "than actual input size")
    out = run_op(CONVOLUTION, (input, weight, bias),
                 (stride, padding, dilation, int(groups), dims == 1))
    return out.squeeze(0) if unbatched else out


@public("torch.nn.functional.conv1d", "torch.conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(conv1d, input, weight, bias, stride, padding, dilation, groups)
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@public("torch.nn.functional.conv2d", "torch.conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if _autocast.ENABLED and _autocast.wanted():  # (CPU autocast's lower-precision list)
        return _autocast.lower(conv2d, input, weight, bias, stride, padding, dilation, groups)
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


# ------------------------------------------------------------------ pooling
def _pool_out(size, k, s, p, d, ceil_mode):
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _max_pool_fwd(x, kernel, stride, padding, dilation, ceil_mode):
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    n, c, h, w = x.shape
    oh = _pool_out(h, kh, sh, ph, dilation[0], ceil_mode)
    ow = _pool_out(w, kw, sw, pw, dilation[1], ceil_mode)
    need_h = (oh - 1) * sh + dilation[0] * (kh - 1) + 1
    need_w = (ow - 1) * sw + dilation[1] * (kw - 1) + 1
    xp = np.full((n, c, max(need_h, h + 2 * ph), max(need_w, w + 2 * pw)), -np.inf, x.dtype)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    win = _windows(xp, kh, kw, stride, dilation, oh, ow).reshape(n, c, oh, ow, kh * kw)
    # the first maximum (nan wins, as PyTorch's kernel)
    nan = np.isnan(win)
    arg = np.where(nan.any(-1), nan.argmax(-1), win.argmax(-1))
    out = np.take_along_axis(win, arg[..., None], -1)[..., 0]
    ki, kj = np.divmod(arg, kw)
    rows = np.arange(oh)[:, None] * sh + ki * dilation[0] - ph
    cols = np.arange(ow)[None, :] * sw + kj * dilation[1] - pw
    return out, rows * w + cols


def _max_pool_op_fwd(x, kernel, stride, padding, dilation, ceil_mode, holder):
    if x.ndim == 3:  # (an unbatched input is PyTorch's kernel's too: one node, no squeeze)
        out, idx = _max_pool_fwd(x[None], kernel, stride, padding, dilation, ceil_mode)
        out, idx = out[0], idx[0]
    else:
        out, idx = _max_pool_fwd(x, kernel, stride, padding, dilation, ceil_mode)
    holder.append(idx)
    return out


def _max_pool_grads(arrays, meta, g):
    x = arrays[0]
    idx = meta[-1][0]
    n, c, h, w = x.shape
    gx = np.zeros((n, c, h * w), dtype=x.dtype)
    flat = idx.reshape(n, c, -1)
    np.add.at(gx, (np.arange(n)[:, None, None], np.arange(c)[None, :, None], flat),
              g.reshape(n, c, -1))
    return (gx.reshape(x.shape),)


# max_pool2d_with_indices_backward (aten_breadth.py is its public form)
def _pool_bwd_fwd(g, x, indices):
    planes = int(np.prod(x.shape[:-2], dtype=np.int64))
    plane = x.shape[-2] * x.shape[-1]
    out = np.zeros((planes, plane), g.dtype)
    per_plane = indices.reshape(planes, -1)
    rows = np.repeat(np.arange(planes), per_plane.shape[1])
    np.add.at(out, (rows, per_plane.reshape(-1)), g.reshape(-1))
    return out.reshape(x.shape)


def _pool_bwd_backward(c, gg):
    (indices,) = c.meta
    ggrad = None
    if c.needs(0):
        idx = make(indices)
        flat = gg.flatten(-2)
        ggrad = flat.gather(-1, idx.flatten(-2)).view(tuple(indices.shape))
    gx = PUBLIC["torch.zeros_like"](gg) if c.needs(1) else None
    return (ggrad, gx)


MAX_POOL2D_BACKWARD = defop("max_pool2d_with_indices_backward",
                            "MaxPool2DWithIndicesBackwardBackward0", _pool_bwd_fwd,
                            _pool_bwd_backward,
                            "grad scattered (added) to the argmax of each window: its own "
                            "gradient gathers at the same indices", save="meta",
                            torch_call="torch.ops.aten.max_pool2d_with_indices_backward("
                                       "a.reshape(1, 1, 1, -1)[..., ::2] * 1, a.reshape(1, 1, 1, "
                                       "-1) * 1, [1, 2], [1, 2], [0, 0], [1, 1], False, "
                                       "torch.nn.functional.max_pool2d(a.reshape(1, 1, 1, -1), "
                                       "(1, 2), return_indices=True)[1])")


def _max_pool_backward(c, g):
    """g added at each window's maximum, by max_pool2d_with_indices_backward: the node
    PyTorch records under create_graph (MaxPool2DWithIndicesBackwardBackward0, over
    grad_output and the input), whose own gradient gathers at the same indices."""
    return (run_op(MAX_POOL2D_BACKWARD, (g, c.saved[0]), (c.meta[-1][0],)),)


MAX_POOL2D = defop("max_pool2d", "MaxPool2DWithIndicesBackward0", _max_pool_op_fwd,
                        _max_pool_backward, "d max_pool/dx = g at each window's maximum",
                        save="inputs",
                        torch_call="torch.nn.functional.max_pool2d(a.reshape(1, 1, 1, -1), "
                                   "(1, 2), ceil_mode=True)")


def _pool_args(kernel_size, stride, padding, dilation=1):
    kernel = _tuple(kernel_size, 2)
    stride = kernel if stride is None or stride == [] or stride == () else _tuple(stride, 2)
    return kernel, stride, _tuple(padding, 2), _tuple(dilation, 2)


def _as_4d(input, name: str, dims: int = 2):
    x = input._data
    if x.ndim not in (dims + 1, dims + 2):  # (each kernel words its rank error)
        if name == "max_pool2d":
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        if name == "adaptive_avg_pool2d":
            raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                               f"[{', '.join(map(str, x.shape))}]")
        raise RuntimeError(f"{name}: Expected {dims + 1}D or {dims + 2}D (batch mode) tensor "
                           f"for input, but got {input.shape}")
    return (input.unsqueeze(0), True) if x.ndim == dims + 1 else (input, False)


@public("torch.nn.functional.max_pool2d", "torch.max_pool2d")
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    kernel, stride, padding, dilation = _pool_args(kernel_size, stride, padding, dilation)
    if any(p * 2 > k for p, k in zip(padding, kernel)):
        raise RuntimeError("pad should be at most half of effective kernel size, but got "
                           f"pad={padding[0]}, kernel_size={kernel[0]} and dilation={dilation[0]}")
    x4, _ = _as_4d(input, "max_pool2d")
    shape_checks.pool2d_input(input.shape)
    _, c, h, w = x4.shape
    oh = _pool_out(h, kernel[0], stride[0], padding[0], dilation[0], ceil_mode)
    ow = _pool_out(w, kernel[1], stride[1], padding[1], dilation[1], ceil_mode)
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")
    holder = []
    out = run_op(MAX_POOL2D, (input,), (kernel, stride, padding, dilation, bool(ceil_mode),
                                        holder))
    if return_indices:
        return out, make(holder[0])
    return out


@public("torch.nn.functional.max_pool1d", "torch.max_pool1d")
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    shape = tuple(input.shape)
    if not ((len(shape) == 2 and shape[0] and shape[1])
            or (len(shape) == 3 and shape[1] and shape[2])):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:[{', '.join(map(str, shape))}]")
    k = _tuple(kernel_size, 1)[0]
    s = k if stride is None or stride == [] else _tuple(stride, 1)[0]
    if input.dim() in (2, 3):
        size = _pool_out(input.shape[-1], k, s, _tuple(padding, 1)[0], _tuple(dilation, 1)[0],
                         ceil_mode)
        if size < 1:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
    res = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _tuple(padding, 1)[0]),
                     (1, _tuple(dilation, 1)[0]), ceil_mode, return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def _avg_pool_fwd(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    n, c, h, w = x.shape
    oh, ow = _pool_out(h, kh, sh, ph, 1, ceil_mode), _pool_out(w, kw, sw, pw, 1, ceil_mode)
    xp = np.zeros((n, c, max((oh - 1) * sh + kh, h + 2 * ph),
                   max((ow - 1) * sw + kw, w + 2 * pw)), x.dtype)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    win = _windows(xp, kh, kw, stride, (1, 1), oh, ow)
    return win.sum(axis=(-2, -1), dtype=np.float64) / _avg_divisors(
        x.shape, kernel, stride, padding, count_include_pad, divisor, oh, ow)


def _avg_divisors(shape, kernel, stride, padding, count_include_pad, divisor, oh, ow):
    if divisor:
        return float(divisor)
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    h, w = shape[2], shape[3]
    hs = np.arange(oh) * sh - ph
    ws = np.arange(ow) * sw - pw
    he = np.minimum(hs + kh, h + ph)
    we = np.minimum(ws + kw, w + pw)
    if count_include_pad:
        return ((he - hs)[:, None] * (we - ws)[None, :]).astype(np.float64)
    hs2, ws2 = np.maximum(hs, 0), np.maximum(ws, 0)
    he2, we2 = np.minimum(he, h), np.minimum(we, w)
    return ((he2 - hs2)[:, None] * (we2 - ws2)[None, :]).astype(np.float64)


def _avg_pool_grads(arrays, meta, g):
    x = arrays[0]
    kernel, stride, padding, ceil_mode, count_include_pad, divisor = meta
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    n, c, h, w = x.shape
    oh, ow = g.shape[2], g.shape[3]
    share = g / _avg_divisors(x.shape, kernel, stride, padding, count_include_pad, divisor,
                              oh, ow)
    gxp = np.zeros((n, c, max((oh - 1) * sh + kh, h + 2 * ph),
                    max((ow - 1) * sw + kw, w + 2 * pw)), np.float64)
    for i in range(kh):
        for j in range(kw):
            gxp[:, :, i: i + sh * (oh - 1) + 1: sh, j: j + sw * (ow - 1) + 1: sw] += share
    return (gxp[:, :, ph:ph + h, pw:pw + w].astype(x.dtype),)


def _avg_pool_spread(g, x_shape, *meta):
    """avg_pool2d's backward in numpy: each output's gradient spread over its window (an
    unbatched (C, H, W) gradient as a batch of one)."""
    if len(x_shape) == 3:
        return _avg_pool_grads([np.empty((1,) + tuple(x_shape), g.dtype)], meta, g[None])[0][0]
    return _avg_pool_grads([np.empty(x_shape, g.dtype)], meta, g)[0]


def _avg_pool_op_fwd(x, *meta):
    """avg_pool2d of an (N, C, H, W) input, or of an unbatched (C, H, W) one: PyTorch's
    kernel takes both, so its node is the pool's own (no Squeeze node over it)."""
    if x.ndim == 3:
        return _avg_pool_fwd(x[None], *meta).astype(x.dtype)[0]
    return _avg_pool_fwd(x, *meta).astype(x.dtype)


def _zeros_of(c, gg):
    """The zero gradient PyTorch's backward functions give their `self` (zeros_like)."""
    return make(np.zeros(c.meta[0], gg._data.dtype))


# the pool and its backward are linear and adjoint: each one's gradient is the other
AVG_POOL2D = defop(
    "avg_pool2d", "AvgPool2DBackward0", _avg_pool_op_fwd,
    lambda c, g: (run_op(AVG_POOL2D_BACKWARD, (g, c.saved[0]),
                         (tuple(c.saved[0]._data.shape),) + c.meta),),
    "d avg_pool/dx = g / window size, spread over each window", save="inputs",
    torch_call="torch.nn.functional.avg_pool2d(a.reshape(1, 1, 1, -1), (1, 2), ceil_mode=True)")
AVG_POOL2D_BACKWARD = defop(
    "avg_pool2d_backward", "AvgPool2DBackwardBackward0",
    lambda g, x, x_shape, *meta: _avg_pool_spread(g, x_shape, *meta),
    lambda c, gg: (run_op(AVG_POOL2D, (gg,), c.meta[1:]) if c.needs(0) else None,
                   _zeros_of(c, gg) if c.needs(1) else None),
    "d avg_pool_backward(g, x)/dg = avg_pool; /dx = 0 (PyTorch's node takes the input too, "
    "so a gradient of a leaf x requires grad and differentiates to zeros)",
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad(torch.nn.functional.avg_pool2d("
               "a.reshape(1, 1, 1, -1), (1, 2), ceil_mode=True).pow(2).sum(), a, "
               "create_graph=True)[0])(a)")


@public("torch.nn.functional.avg_pool2d", "torch.avg_pool2d")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    kernel, stride, padding, _ = _pool_args(kernel_size, stride, padding)
    if any(p * 2 > k for p, k in zip(padding, kernel)):
        raise RuntimeError("pad should be at most half of effective kernel size, but got "
                           f"pad={padding[0]}, kernel_size={kernel[0]} and dilation=1")
    if input._data.ndim < 3:  # (the kernel reads size(-3) first)
        from ..tensor import _wrap_dim

        _wrap_dim(-3, input._data.ndim)
    if input._data.ndim > 4:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:[{', '.join(map(str, input.shape))}]")
    shape_checks.pool2d_input(input.shape)
    c, h, w = input.shape[-3:]
    oh = _pool_out(h, kernel[0], stride[0], padding[0], 1, ceil_mode)
    ow = _pool_out(w, kernel[1], stride[1], padding[1], 1, ceil_mode)
    if oh < 1 or ow < 1:  # (a window wider than the padded input: PyTorch's shape check)
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")
    return run_op(AVG_POOL2D, (input,), (kernel, stride, padding, bool(ceil_mode),
                                         bool(count_include_pad), divisor_override))


def _bins(size, out):
    starts = [(i * size) // out for i in range(out)]
    ends = [-(-((i + 1) * size) // out) for i in range(out)]
    return starts, ends


def _adaptive_fwd(x, oh, ow):
    """Over the last two dims of a (C, H, W) or (N, C, H, W) input (one node for both, as
    PyTorch's kernel)."""
    h, w = x.shape[-2:]
    hs, he = _bins(h, oh)
    ws, we = _bins(w, ow)
    out = np.empty(x.shape[:-2] + (oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            out[..., i, j] = x[..., hs[i]:he[i], ws[j]:we[j]].mean(axis=(-2, -1))
    return out


def _adaptive_grads(arrays, meta, g):
    x = arrays[0]
    oh, ow = meta
    h, w = x.shape[-2:]
    hs, he = _bins(h, oh)
    ws, we = _bins(w, ow)
    gx = np.zeros(x.shape, np.float64)
    for i in range(oh):
        for j in range(ow):
            area = (he[i] - hs[i]) * (we[j] - ws[j])
            gx[..., hs[i]:he[i], ws[j]:we[j]] += g[..., i:i + 1, j:j + 1] / area
    return (gx.astype(x.dtype),)


ADAPTIVE_AVG_POOL2D = defop(
    "adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", _adaptive_fwd,
    lambda c, g: (run_op(ADAPTIVE_AVG_POOL2D_BACKWARD, (g,),
                         (tuple(c.saved[0]._data.shape),) + c.meta),),
    "d adaptive_avg_pool/dx = g / bin size over each bin", save="inputs",
    torch_call="torch.nn.functional.adaptive_avg_pool2d(a.reshape(1, 1, 1, -1), (1, 2))")
ADAPTIVE_AVG_POOL2D_BACKWARD = defop(
    "adaptive_avg_pool2d_backward", "AdaptiveAvgPool2DBackwardBackward0",
    lambda g, x_shape, oh, ow: _adaptive_grads([np.empty(x_shape, g.dtype)], (oh, ow), g)[0],
    lambda c, gg: (run_op(ADAPTIVE_AVG_POOL2D, (gg,), c.meta[1:]),),
    "d adaptive_avg_pool_backward(g)/dg = adaptive_avg_pool", save="inputs",
    torch_call="torch.enable_grad()(lambda a: torch.autograd.grad("
               "torch.nn.functional.adaptive_avg_pool2d(a.reshape(1, 1, 1, -1), (1, 2)).pow(2).sum(),"
               " a, create_graph=True)[0])(a)")


@public("torch.nn.functional.adaptive_avg_pool2d", "torch.adaptive_avg_pool2d")
def adaptive_avg_pool2d(input, output_size):
    if isinstance(output_size, (tuple, list)) and input.dim() <= len(output_size):
        # (F's _list_with_default, before the kernel sees the input)
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if isinstance(output_size, (tuple, list)) and len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if input.dim() >= 2:
        sizes = _tuple(output_size, 2) if not isinstance(output_size, (tuple, list)) else tuple(
            input.shape[i - 2] if s is None else int(s) for i, s in enumerate(output_size))
        if sizes == (1, 1):
            # PyTorch's shortcut (MeanBackward1) comes before any check of the input's rank
            # or sizes: an empty or 2-d input is averaged too
            return input.mean((-2, -1), keepdim=True)
    x4, _ = _as_4d(input, "adaptive_avg_pool2d")
    shape = tuple(input.shape)
    for d in (len(shape) - 2, len(shape) - 1):  # (PyTorch checks the spatial sizes only)
        if shape[d] == 0:
            raise RuntimeError(
                "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes [{', '.join(map(str, shape))}] with "
                f"dimension {d} being empty")
    sizes = _tuple(output_size, 2) if not isinstance(output_size, (tuple, list)) else tuple(
        x4.shape[2 + i] if s is None else int(s) for i, s in enumerate(output_size))
    return run_op(ADAPTIVE_AVG_POOL2D, (input,), sizes)


# ------------------------------------------------------------------ recurrent layers
# What PyTorch's CPU RNN paths leave as the output's grad_fn: RNN and GRU (batch_first)
# transpose their stacked output in place (TransposeBackward1); LSTM runs each layer as one
# oneDNN op (MkldnnRnnLayerBackward0). gradcli computes the same values with Tensor ops
# and ends on these nodes, so programs print PyTorch's names.
TRANSPOSE_INPLACE = defop(
    "rnn_output_transpose", "TransposeBackward1",
    lambda a: np.ascontiguousarray(np.swapaxes(a, 0, 1)) if a.ndim >= 2 else a,
    lambda c, g: (g.transpose(0, 1),), "d transpose_(0, 1)(a)/da = the gradient transposed back")
LSTM_LAYER = defop(
    "lstm_layer_output", "MkldnnRnnLayerBackward0", lambda a: a, lambda c, g: (g,),
    "the LSTM layer's output (identity over the cell's Tensor ops)")


def rnn_output_transpose(t: Tensor) -> Tensor:
    return run_op(TRANSPOSE_INPLACE, (t,))


def lstm_layer_output(t: Tensor) -> Tensor:
    return run_op(LSTM_LAYER, (t,))
