"""PyTorch's bmm and baddbmm of small matrices, bit for bit.

ATen does not hand a batched product to BLAS when each matrix product is small (inner size
times result rows times result columns below 400): its own loop computes every element as
0 + a0*b0 + a1*b1 + ... in order in the dtype, each product and each sum rounded (the file
is compiled without fused multiply-adds), and baddbmm then takes bias*beta + alpha*sum.
Attention with short sequences or narrow heads (nn.MultiheadAttention, sdpa's math path)
lives in this range, and its softmax amplifies a last-bit difference in the scores into
the gradients, so the order is kept. Larger products go to MKL (numpy's BLAS here)."""

from __future__ import annotations

import numpy as np

from .. import kernels as _switch

_SMALL = 400
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def applies(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether a @ b (3-d, same float dtype) is one of ATen's small products (switch on)."""
    if not _switch.EXACT or a.dtype not in _FLOATS or b.dtype != a.dtype:
        return False
    k = a.shape[-1]
    return k > 0 and k * a.shape[-2] * b.shape[-1] < _SMALL


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per batch a @ b as ATen's loop sums it: the rounded products added in order from +0
    (accumulate gives p0 + p1 + ...; adding +0 at the end is the same as starting from it,
    which only turns an all-zero -0 into +0)."""
    # (batch, m, k, n), each rounded; laid out in C order whatever the operands' strides,
    # so the result is a fresh row-major matrix as ATen's (later views and contiguous()
    # calls, and so the graph, depend on it)
    terms = np.multiply(a[..., :, :, None], b[..., None, :, :], order="C")
    if terms.shape[-2] == 1:
        return np.add(terms[..., 0, :], 0.0, order="C")
    return np.add(np.add.accumulate(terms, axis=-2)[..., -1, :], 0.0, order="C")


def added(bias: np.ndarray, a: np.ndarray, b: np.ndarray, beta, alpha) -> np.ndarray:
    """baddbmm's beta*bias + alpha*(a @ b) in ATen's small loop: bias*beta + alpha*sum with
    beta and alpha in the dtype, each step rounded; beta == 0 ignores the bias (nan too)."""
    dtype = a.dtype.type
    total = product(a, b)
    if alpha != 1:
        total = total * dtype(alpha)
    if beta == 0:
        return total
    return np.add(np.broadcast_to(bias, total.shape) * dtype(beta), total, order="C")
