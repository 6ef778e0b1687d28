"""torch.bfloat16: the name, the Tensor.bfloat16() cast, and the ops whose numpy route
would round at every step where PyTorch's CPU kernels widen bfloat16 to float32, compute,
and round once at the end (sums, means, products of matrices).

The numpy type comes from ml_dtypes, imported on the first use of torch.bfloat16's numpy
type (dtypes.dtype.__getattr__), never at start-up."""

from __future__ import annotations

import copy

import numpy as np

from .. import dtypes
from . import elementwise as E
from . import shape as S
from .registry import OPS, PUBLIC, public

PUBLIC["torch.bfloat16"] = dtypes.bfloat16


@public("Tensor.bfloat16")
def bfloat16(self, memory_format=None):
    """self.to(torch.bfloat16)."""
    return S.to(self, dtypes.bfloat16)


# Ops whose numpy forward takes several steps (max, exp, sum, divide...) where PyTorch's
# CPU kernel for bfloat16 widens to float32, runs the whole formula, and rounds once: done
# step by step in bfloat16 each step would round, and a softmax row's sum drifts by
# several units in the last place. Their forwards are wrapped here, not edited in place:
# other dtypes pay one attribute test.
_WIDENED = ("softmax", "softmax_backward_data", "log_softmax_backward_data",
            "_safe_softmax", "sigmoid", "sigmoid_backward", "log_sigmoid", "gelu",
            "gelu_backward", "silu", "softplus", "softplus_backward", "tanh_backward",
            "layer_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits",
            # a Python-number operand (alpha, value, a bound) is held in float32 by PyTorch's
            # kernels (its "opmath" type), and numpy would widen the result to float32
            "rsub_alpha", "rsub_tensor", "add_scalar", "sub_scalar",
            "mul_scalar", "div_scalar", "addcmul", "addcdiv", "lerp", "clamp", "clamp_min",
            "clamp_max",
            # a product with a bias: summed in float32 with the bias, rounded once
            "addmm", "addmv", "addr", "baddbmm",
            # convolutions and averages (numpy's einsum takes no bfloat16)
            "convolution", "convolution_backward_input", "convolution_backward_weight",
            "convolution_ext", "avg_pool2d", "avg_pool1d_2d", "avg_pool2d_ext",
            "avg_pool2d_backward", "adaptive_avg_pool2d", "adaptive_avg_pool2d_ext",
            "adaptive_avg_pool2d_backward", "avg_pool3d", "adaptive_avg_pool3d",
            "adaptive_max_pool2d", "adaptive_max_pool3d", "max_pool2d", "max_pool3d_with_indices",
            "upsample_bicubic2d", "upsample_bilinear2d", "upsample_linear1d",
            "upsample_trilinear3d", "upsample_nearest1d", "upsample_nearest2d",
            "upsample_nearest3d", "upsample_nearest-exact1d", "upsample_nearest-exact2d",
            "upsample_nearest-exact3d", "grid_sampler_2d", "grid_sampler_3d",
            "affine_grid_generator",
            # special functions (scipy's take no bfloat16) and formulas with constants
            "digamma", "lgamma", "erf", "erfc", "erfinv", "i0", "special_i0e", "special_i1",
            "special_i1e", "special_ndtri", "special_log_ndtr", "special_erfcx", "mvlgamma",
            "polygamma", "igamma", "igammac", "ldexp", "logit", "logcumsumexp", "cumsum",
            "norm", "norm_dim", "linalg_vector_norm", "renorm", "glu", "hardshrink",
            "softshrink", "celu", "selu", "elu", "elu_backward", "mish", "hardswish",
            "hardsigmoid", "leaky_relu", "leaky_relu_backward", "prelu", "native_group_norm",
            "batch_norm", "native_batch_norm_legit", "native_batch_norm_legit_no_stats",
            "embedding_bag", "nan_to_num", "cond_nan_to_num",
            # statistics: accumulated in float32 as PyTorch's reductions for bfloat16
            "var", "std", "var_mean", "std_mean", "logsumexp", "cumprod", "prod", "prod_dim",
            "dist", "cdist", "pdist")


def _in_float32(forward):
    def widened(first, *rest):
        if getattr(first, "dtype", None) is None or first.dtype.kind != "V":
            return forward(first, *rest)
        target = first.dtype
        args = [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == "V" else a
                for a in (first, *rest)]
        out = forward(*args)
        if isinstance(out, tuple):
            return tuple(o.astype(target) if isinstance(o, np.ndarray) and o.dtype.kind == "f"
                         else o for o in out)
        return np.asarray(out).astype(target)

    widened.__name__ = getattr(forward, "__name__", "forward")
    widened.__doc__ = forward.__doc__
    widened.__wrapped__ = forward
    widened.bf16_widened = True
    return widened




def _log_softmax(forward):
    """log_softmax of bfloat16 as PyTorch's CPU kernel: max, exp and sum in float32, the
    row's log-sum rounded to bfloat16 (its buffer's type), then x - max - that in float32,
    rounded once (matched bit for bit on random rows; the float32 formula differs in ~1 of 10)."""
    def widened(a, dim):
        if a.dtype.kind != "V" or a.size == 0 or a.ndim == 0:
            return forward(a, dim)
        x = a.astype(np.float32)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            top = np.max(x, axis=dim, keepdims=True)
            log_sum = np.log(np.sum(np.exp(x - top), axis=dim, keepdims=True))
            return (x - top - log_sum.astype(a.dtype).astype(np.float32)).astype(a.dtype)

    widened.__wrapped__ = forward
    widened.bf16_widened = True
    return widened




def _mse_backward(forward):
    """mse_loss_backward of bfloat16 as PyTorch's kernel computes it: norm held as bfloat16
    and every step rounded, (norm * (x - t)) * g (the float32 formula differs in ~1 of 2)."""
    def widened(g, x, t, reduction):
        if getattr(x, "dtype", None) is None or x.dtype.kind != "V":
            return forward(g, x, t, reduction)
        n = int(np.prod(np.broadcast_shapes(np.shape(x), np.shape(t))))
        norm = (2.0 / n if n else float("inf")) if reduction == "mean" else 2.0
        return np.asarray(x.dtype.type(norm) * (x - t) * g).astype(x.dtype)

    widened.__wrapped__ = forward
    widened.bf16_widened = True
    return widened




def _twin(op):
    """A copy of a binary op for a bfloat16 tensor and a Python number held in float32:
    the same node class and backward, a forward that widens, computes, and rounds once."""
    twin = copy.copy(op)
    forward = op.forward

    def widened(x, y):
        return np.asarray(forward(x.astype(np.float32), y)).astype(dtypes.bfloat16.np)

    twin.forward = widened
    twin.binary_ufunc = False
    twin.node_cls = op.node_class()
    return twin




#: below this many elements PyTorch's CPU loop never reaches its vector code on any CPU
#: (it takes two vectors a step: 32 bfloat16 with AVX2, 64 with AVX-512)
SCALAR_LOOP_BELOW = 32


def add_scaled(a, b, alpha):
    """a + alpha * b of bfloat16 arrays as PyTorch's add kernel computes it: alpha in
    bfloat16 (the kernel's scalar type); a long tensor's vector loop fuses the multiply-add
    in float32 and rounds once, a short one's scalar loop rounds the product, then the sum."""
    scale = np.asarray(alpha, np.float32).astype(a.dtype)
    if np.size(a) < SCALAR_LOOP_BELOW and np.size(b) < SCALAR_LOOP_BELOW:
        return np.asarray(a + (b * scale)).astype(a.dtype)
    fused = np.asarray(b, np.float64) * float(scale) + np.asarray(a, np.float64)
    return fused.astype(np.float32).astype(a.dtype)


def _with_alpha(forward, sign: float):
    """add/sub(a, b, alpha=) of two bfloat16 tensors as PyTorch's add kernel (add_scaled)."""
    def widened(a, b, alpha):
        if getattr(a, "dtype", None) is None or a.dtype.kind != "V":
            return forward(a, b, alpha)
        return add_scaled(a, b, sign * alpha)

    widened.__wrapped__ = forward
    widened.bf16_widened = True
    return widened




def _addbmm(forward):
    """addbmm of bfloat16 as PyTorch runs it: one addmm_ per batch into the result, so the
    running sum is rounded to bfloat16 after each batch (beta applies to the first only)."""
    def widened(bias, b1, b2, beta, alpha):
        if getattr(b1, "dtype", None) is None or b1.dtype.kind != "V":
            return forward(bias, b1, b2, beta, alpha)
        out = np.broadcast_to(np.asarray(bias, np.float32), (b1.shape[1], b2.shape[2]))
        scale = np.float32(beta)
        if b1.shape[0] == 0:
            return np.asarray(out * scale if beta != 0 else out * 0).astype(b1.dtype)
        for k in range(b1.shape[0]):
            product = b1[k].astype(np.float32) @ b2[k].astype(np.float32)
            out = (out * scale if beta != 0 else 0) + np.float32(alpha) * product if k == 0 \
                else out + np.float32(alpha) * product
            out = out.astype(b1.dtype).astype(np.float32)
        return out.astype(b1.dtype)

    widened.__wrapped__ = forward
    widened.bf16_widened = True
    return widened


def _install_kernels() -> None:
    """Wrap the forwards above, once, when bfloat16 is first used (dtypes calls this as it
    loads ml_dtypes): a process that never makes a bfloat16 tensor runs every op as it was,
    without the wrappers' one attribute test a call."""
    wrappers = [(name, _in_float32) for name in _WIDENED]
    wrappers += [("log_softmax", _log_softmax), ("mse_loss_backward", _mse_backward),
                 ("add_alpha", lambda f: _with_alpha(f, 1.0)),
                 ("sub_alpha", lambda f: _with_alpha(f, -1.0)), ("addbmm", _addbmm)]
    from ..fpstate import quiet_forwards

    wrapped = []
    for name, wrap in wrappers:
        op = OPS.get(name)
        if op is not None and not getattr(op.forward, "bf16_widened", False):
            op.forward = wrap(op.forward)
            wrapped.append(op)
    for op in (E.ADD, E.SUB, E.MUL, E.DIV):
        twin = E.BF16_SCALAR_TWINS[op] = _twin(op)
        wrapped.append(twin)
    quiet_forwards(wrapped)  # (the wrappers' own numpy calls quiet too, as every forward's)


dtypes.on_bfloat16_load(_install_kernels)
