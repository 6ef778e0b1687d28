"""The bfloat16 forms of the ops whose numpy route would round at every step where
PyTorch's CPU kernels widen bfloat16 to float32, compute, and round once at the end.

Each op of the table below gets its bfloat16 kernel when it is declared (`Op.__init__`
asks `kernel_for(name, forward)`), as its `bf16` slot; the dispatch (registry.run_op,
run_unary) calls that kernel instead of the forward only when the op's first array is
bfloat16. So no op object is changed at run time, loading bfloat16 (ml_dtypes) changes
nothing in the op table, and an op of another dtype pays one slot test (`op.bf16 is not
None`), plus a dtype test for the ops listed here.

A kernel has its op's forward signature; it may still decline (a Python number first,
an empty tensor) and run the plain forward. It runs with numpy's floating-point errors
ignored, as every forward does (fpstate)."""

from __future__ import annotations

import numpy as np

from ..fpstate import quiet

# Ops whose numpy forward takes several steps (max, exp, sum, divide...) where PyTorch's
# CPU kernel for bfloat16 widens to float32, runs the whole formula, and rounds once: done
# step by step in bfloat16 each step would round, and a softmax row's sum drifts by
# several units in the last place.
WIDENED = ("softmax", "softmax_backward_data", "softmax_backward_data_public",
           "log_softmax_backward_data",
           "_safe_softmax", "sigmoid", "sigmoid_backward", "log_sigmoid", "gelu",
           "gelu_backward", "silu", "softplus", "softplus_backward", "tanh_backward",
           "layer_norm", "binary_cross_entropy",
           # a Python-number operand (alpha, value, a bound) is held in float32 by PyTorch's
           # kernels (its "opmath" type), and numpy would widen the result to float32
           "rsub_alpha", "rsub_tensor", "add_scalar", "sub_scalar",
           "mul_scalar", "div_scalar", "addcmul", "addcdiv", "lerp", "clamp", "clamp_min",
           "clamp_max",
           # a product with a bias: summed in float32 with the bias, rounded once
           "addmm", "addmv", "baddbmm",
           # convolutions and averages (numpy's einsum takes no bfloat16)
           "convolution", "convolution_ext", "avg_pool2d", "avg_pool1d_2d", "avg_pool2d_ext",
           "avg_pool2d_backward", "adaptive_avg_pool2d", "adaptive_avg_pool2d_ext",
           "adaptive_avg_pool2d_backward", "avg_pool3d",
           "adaptive_max_pool2d", "adaptive_max_pool3d", "max_pool2d", "max_pool3d_with_indices",
           "upsample_bicubic2d", "upsample_bilinear2d", "upsample_linear1d",
           "upsample_trilinear3d", "upsample_nearest1d", "upsample_nearest2d",
           "upsample_nearest3d", "upsample_nearest-exact1d", "upsample_nearest-exact2d",
           "upsample_nearest-exact3d", "grid_sampler_2d", "grid_sampler_3d",
           "affine_grid_generator",
           # special functions (scipy's take no bfloat16) and formulas with constants
           "digamma", "lgamma", "erf", "erfc", "erfinv", "i0", "special_i0e", "special_i1",
           "special_i1e", "special_ndtri", "special_log_ndtr", "special_erfcx", "mvlgamma",
           "polygamma", "igamma", "igammac", "ldexp", "logcumsumexp", "cumsum",
           "norm", "norm_dim", "linalg_vector_norm", "renorm", "glu", "hardshrink",
           "softshrink", "celu", "selu", "elu", "elu_backward", "mish", "hardswish",
           "hardsigmoid", "leaky_relu", "leaky_relu_backward", "prelu", "native_group_norm",
           "batch_norm", "batch_norm_with_update", "native_batch_norm_legit", "native_batch_norm_legit_no_stats",
           "embedding_bag", "nan_to_num", "cond_nan_to_num",
           # numpy's einsum and scipy's expm take no bfloat16
           "trilinear_product", "linalg_matrix_exp",
           # statistics: accumulated in float32 as PyTorch's reductions for bfloat16
           "var", "std", "var_mean", "std_mean", "logsumexp", "cumprod", "prod", "prod_dim",
           "dist", "cdist", "pdist")


def _is_bf16(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind == "V"


def in_float32(forward):
    """forward computed on bfloat16 arrays widened to float32, its float results rounded
    once to the first array's bfloat16."""
    def widened(first, *rest):
        if not _is_bf16(first):
            return forward(first, *rest)
        target = first.dtype
        args = [a.astype(np.float32) if _is_bf16(a) else a for a in (first, *rest)]
        out = forward(*args)
        if isinstance(out, tuple):
            return tuple(o.astype(target) if isinstance(o, np.ndarray) and o.dtype.kind == "f"
                         else o for o in out)
        return np.asarray(out).astype(target)

    return widened


def number_in_float32(forward):
    """add/sub/mul/div with a bfloat16 array: elementwise.binary hands a right-hand Python
    number over as a float32 0-d array (PyTorch holds it in float32, its "opmath" type);
    the product is taken in float32 and rounded once. Two bfloat16 arrays give numpy's
    own bfloat16 result (ml_dtypes also computes one operation in float32, rounds once)."""
    def widened(x, y):
        if not _is_bf16(x) or _is_bf16(y):
            return forward(x, y)
        return np.asarray(forward(x.astype(np.float32), y)).astype(x.dtype)

    return widened


def log_softmax(forward):
    """log_softmax of bfloat16 as PyTorch's CPU kernel: max, exp and sum in float32; over
    the last dim the row's sum is kept in bfloat16 (its buffer's type), its log taken in
    float32 and kept in bfloat16 too, then x - max - that in float32, rounded once (bit for
    bit on random rows of 1 to 100 elements); over another dim nothing is rounded before
    the result (bit for bit on random tensors there)."""
    def widened(a, dim):
        if not _is_bf16(a) or a.size == 0 or a.ndim == 0:
            return forward(a, dim)
        x = a.astype(np.float32)
        top = np.max(x, axis=dim, keepdims=True)
        total = np.sum(np.exp(x - top), axis=dim, keepdims=True)
        if dim % a.ndim != a.ndim - 1:
            # over another dim its kernel keeps the sum and its log in float32: one rounding
            return (x - top - np.log(total)).astype(a.dtype)
        log_sum = np.log(total.astype(a.dtype).astype(np.float32))
        return (x - top - log_sum.astype(a.dtype).astype(np.float32)).astype(a.dtype)

    return widened


def mse_backward(forward):
    """mse_loss_backward of bfloat16 as PyTorch's kernel computes it: norm held as bfloat16
    and every step rounded, (norm * (x - t)) * g (the float32 formula differs in ~1 of 2)."""
    def widened(g, x, t, reduction):
        if not _is_bf16(x):
            return forward(g, x, t, reduction)
        n = int(np.prod(np.broadcast_shapes(np.shape(x), np.shape(t))))
        norm = (2.0 / n if n else float("inf")) if reduction == "mean" else 2.0
        return np.asarray(x.dtype.type(norm) * (x - t) * g).astype(x.dtype)

    return widened


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


def with_alpha(sign: float):
    """add/sub(a, b, alpha=) of two bfloat16 tensors as PyTorch's add kernel (add_scaled)."""
    def wrap(forward):
        def widened(a, b, alpha):
            if not _is_bf16(a):
                return forward(a, b, alpha)
            return add_scaled(a, b, sign * alpha)

        return widened

    return wrap


def addbmm(forward):
    """addbmm of bfloat16 as PyTorch runs it: one addmm_ per batch into the result, so the
    running sum is rounded to bfloat16 after each batch (beta applies to the first only)."""
    def widened(bias, b1, b2, beta, alpha):
        if not _is_bf16(b1):
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

    return widened


def _round(x, like):
    """x (float32 values) rounded to bfloat16, `like`'s dtype, and widened back: one step
    of a PyTorch kernel whose bfloat16 arithmetic rounds after every operation."""
    return np.asarray(x, np.float32).astype(like).astype(np.float32)


def addr(forward):
    """addr of bfloat16 as PyTorch's addr kernel: its arithmetic is bfloat16's, each
    product and the sum rounded, beta*self + (alpha*v1)*v2 (self ignored for beta 0)."""
    def stepwise(bias, v1, v2, beta, alpha):
        if not _is_bf16(v1):
            return forward(bias, v1, v2, beta, alpha)
        bf = v1.dtype
        scale = _round(alpha, bf)
        out = _round(_round(scale * v1.astype(np.float32)[:, None], bf)
                     * v2.astype(np.float32)[None, :], bf)
        if beta != 0:
            kept = _round(_round(beta, bf) * np.asarray(bias, np.float32), bf)
            out = out + kept
        return np.asarray(out, np.float32).astype(bf)

    return stepwise


def logit(forward):
    """logit of bfloat16 as PyTorch's kernel: the clamp bounds, 1 - x and the quotient in
    bfloat16 (each rounded), then the log in float32, rounded once."""
    def stepwise(a, eps):
        if not _is_bf16(a):
            return forward(a, eps)
        bf = a.dtype
        x = a.astype(np.float32)
        if eps is not None:
            lo = _round(eps, bf)
            x = np.clip(x, lo, _round(np.float32(1) - lo, bf))
        ratio = _round(x / _round(np.float32(1) - x, bf), bf)
        return np.log(ratio).astype(bf)

    return stepwise


def linspace(start, end, steps: int, bf) -> np.ndarray:
    """torch.linspace of bfloat16 (steps >= 2) as PyTorch's kernel, whose arithmetic is
    bfloat16's: the ends and the step rounded, each element start + step*i from the
    front, end - step*(steps-1-i) from the back, every product and sum rounded."""
    first, last = _round(start, bf), _round(end, bf)
    step = _round(_round(last - first, bf) / _round(steps - 1, bf), bf)
    idx = np.arange(steps)
    half = steps // 2
    front = _round(first + _round(step * _round(idx, bf), bf), bf)
    back = _round(last - _round(step * _round(steps - 1 - idx, bf), bf), bf)
    return np.where(idx < half, front, back).astype(bf)


def adaptive_avg_pool3d(forward):
    """adaptive_avg_pool3d of bfloat16 as PyTorch's CPU kernel (a scalar loop in the
    tensor's own type): each window summed in bfloat16 in (t, h, w) order, every addition
    rounded, then divided by kT, kH and kW in turn, each quotient rounded."""
    def stepwise(x, spec):
        if not _is_bf16(x) or len(spec.mats) != 3:
            return forward(x, spec)
        bf = x.dtype
        windows = []
        for entry in spec.mats:  # (dim, matrix out x in): a row's nonzeros are its window
            rows = []
            for row in entry[1]:
                taps = np.flatnonzero(row)
                rows.append((int(taps[0]), int(taps[-1]) + 1))
            windows.append(rows)
        wide = x.astype(np.float32)
        out = np.empty(x.shape[:-3] + tuple(len(w) for w in windows), np.float32)
        for ot, (t0, t1) in enumerate(windows[0]):
            for oh, (h0, h1) in enumerate(windows[1]):
                for ow, (w0, w1) in enumerate(windows[2]):
                    total = np.zeros(x.shape[:-3], np.float32)
                    for it in range(t0, t1):
                        for ih in range(h0, h1):
                            for iw in range(w0, w1):
                                total = _round(total + wide[..., it, ih, iw], bf)
                    for k in (t1 - t0, h1 - h0, w1 - w0):
                        total = _round(total / np.float32(k), bf)
                    out[..., ot, oh, ow] = total
        return out.astype(bf)

    return stepwise


def bce_with_logits(forward):
    """binary_cross_entropy_with_logits of bfloat16 as PyTorch composes it: log_sigmoid's
    kernel in float32, rounded once, then (1 - t) * x - log_weight * that (* weight), each
    operation in bfloat16 and rounded; a "mean" or "sum" accumulates in float32."""
    def composed(x, t, reduction, weight, pos_weight):
        if not _is_bf16(x):
            return forward(x, t, reduction, weight, pos_weight)
        bf = x.dtype
        wide = x.astype(np.float32)
        log_sig = (np.minimum(wide, 0) - np.log1p(np.exp(-np.abs(wide)))).astype(bf)
        one = bf.type(1)
        if pos_weight is not None:
            log_sig = log_sig * ((pos_weight - one) * t + one)
        loss = (one - t) * x - log_sig
        if weight is not None:
            loss = loss * weight
        loss = np.asarray(loss).astype(bf)
        if reduction == "mean":
            return np.asarray(np.sum(loss, dtype=np.float32) / np.float32(max(loss.size, 1))
                              if loss.size else np.float32("nan")).astype(bf)
        if reduction == "sum":
            return np.asarray(np.sum(loss, dtype=np.float32)).astype(bf)
        return loss

    return composed


#: op name -> the maker of its bfloat16 kernel from its forward
KERNELS = {name: in_float32 for name in WIDENED}
KERNELS.update({"log_softmax": log_softmax, "mse_loss_backward": mse_backward,
                "add_alpha": with_alpha(1.0), "sub_alpha": with_alpha(-1.0),
                "addbmm": addbmm, "addr": addr, "logit": logit,
                "adaptive_avg_pool3d": adaptive_avg_pool3d,
                "binary_cross_entropy_with_logits": bce_with_logits, "add": number_in_float32, "sub": number_in_float32,
                "mul": number_in_float32, "div": number_in_float32})


def kernel_for(name: str, forward):
    """The bfloat16 kernel of the op `name` declared with `forward` (None: the forward
    serves bfloat16 as it is)."""
    make = KERNELS.get(name)
    if make is None:
        return None
    kernel = quiet(make(forward))
    kernel.__wrapped__ = forward
    return kernel
