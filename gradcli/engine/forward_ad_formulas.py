"""PyTorch's explicit forward-derivative formulas for more ops (derivatives.yaml `result:`).

The double-vjp rule of forward_ad gives every op the right tangent values, but the
tangent's own graph (its grad_fn, when a primal or a tangent requires grad) is then the
graph of gradcli's backward formula, which is often built from other ops than PyTorch's
(acos's backward divides, PyTorch's multiplies by an rsqrt; elu's is a few Tensor ops,
PyTorch's is one elu_backward node). The formulas here are written with the ops PyTorch's
formulas end in, so that `tangent.grad_fn` prints the same name. Each takes
(inputs, meta, res, tangents) as forward_ad's _FORMULAS do and may return NotImplemented
to leave a case to the generic rule. forward_ad merges FORMULAS into its table.
"""

from __future__ import annotations

import math

import numpy as np

from .grad_mode import GRAD_MODE
from .ops import registry as _registry
from .ops.losses import _tensor_reduce as reduced  # (a loss's tangent, reduced as the loss)
from .tensor import Tensor, make


def _plain(res: Tensor) -> Tensor:
    """The op's result as a formula reads it: itself while a graph is recorded, else its
    values (the same rule as forward_ad's)."""
    return res if GRAD_MODE.enabled and res._requires_grad else make(res._data)


def _zeros_for(x, t):
    return t if t is not None else make(np.zeros_like(x._data))


def _where(mask, a, b):
    return _registry.PUBLIC["torch.where"](mask, a, b)


def _scalar(value, like: Tensor) -> Tensor:
    return make(np.array(value, dtype=like._data.dtype))


def _mul_s(t: Tensor, s: float) -> Tensor:
    """t * a number as PyTorch's C++ formulas multiply (MulBackward1)."""
    return _registry.run_op(_registry.OPS["mul_scalar"], (t,), (s,))


def _cast_to(out: Tensor, res: Tensor) -> Tensor:
    return out if out._data.dtype == res._data.dtype else out.to(res.dtype)


# ------------------------------------------------------------------ efficient zeros

def zero_term(x, zero_first: bool = True):
    """PyTorch's (missing tangent) * x: a missing tangent is an efficient zero tensor, so
    the product is zeros (never nan), recorded (MulBackward0) only when x requires grad;
    None when nothing is recorded (the term then changes nothing). `zero_first`: the
    zero is the product's first operand (its next_functions' order)."""
    if not (GRAD_MODE.enabled and isinstance(x, Tensor) and x._requires_grad):
        return None
    op = _EFFICIENT_ZERO_MUL[zero_first]
    if op is None:
        # (not in the op table: an internal step; its gradient is +0 everywhere, as an
        # efficient zero's product's is, where g * 0 would give -0 for a negative g)
        if zero_first:
            op = _registry.Op(
                "efficient_zero_mul", "MulBackward0", lambda z, a, shape: np.zeros_like(a),
                lambda c, g: (None, make(np.zeros(c.meta[0], g._data.dtype))),
                "d (zero * x)/dx = 0", save_meta=True)
        else:
            op = _registry.Op(
                "efficient_zero_mul", "MulBackward0", lambda a, z, shape: np.zeros_like(a),
                lambda c, g: (make(np.zeros(c.meta[0], g._data.dtype)), None),
                "d (x * zero)/dx = 0", save_meta=True)
        _EFFICIENT_ZERO_MUL[zero_first] = op
    zero = make(np.zeros((), x._data.dtype))
    pair = (zero, x) if zero_first else (x, zero)
    return _registry.run_op(op, pair, (x._data.shape,))


_EFFICIENT_ZERO_MUL: list = [None, None]  # (x * zero, zero * x)


def missing_zero(x, like: Tensor) -> Tensor:
    """The zero tangent of an operand without one (PyTorch's efficient zeros): x's shape,
    or a 0-d zero for a number."""
    if isinstance(x, Tensor):
        return make(np.zeros(x._data.shape, like._data.dtype))
    return make(np.zeros((), like._data.dtype))


def valued(out: Tensor, values: np.ndarray) -> Tensor:
    """`out` (an add or a sub with an efficient zero, for its node) holding `values`: an
    efficient zero changes nothing in PyTorch, not even a zero's sign (-0. + 0. is 0.)."""
    out._data = np.array(np.broadcast_to(values, out._data.shape), dtype=out._data.dtype)
    return out


# ------------------------------------------------------------------ elementwise math

def _acos(inputs, meta, res, tangents):
    x = inputs[0]
    return tangents[0] * -((-x * x + 1).rsqrt())


def _asin(inputs, meta, res, tangents):
    x = inputs[0]
    return tangents[0] * (-x * x + 1).rsqrt()


def _acosh(inputs, meta, res, tangents):
    return tangents[0] * (inputs[0].pow(2) - 1).rsqrt()


def _asinh(inputs, meta, res, tangents):
    return tangents[0] * (inputs[0].pow(2) + 1).rsqrt()


def _exp2(inputs, meta, res, tangents):
    return _mul_s(tangents[0] * _plain(res), math.log(2.0))


def _scaled_by(factor: float):
    """deg2rad / rad2deg: PyTorch's composite multiplies by the constant (MulBackward1)."""

    def formula(inputs, meta, res, tangents):
        return _cast_to(_mul_s(tangents[0], factor), res)

    return formula


def _sinc(inputs, meta, res, tangents):
    """sinc's backward on the tangent: t (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 where
    x is 0 (WhereBackward0 on top)."""
    x = inputs[0]
    t = tangents[0]
    xpi = _mul_s(x, math.pi)
    squared_pi = _mul_s(x * x, math.pi)
    out = t * ((xpi * xpi.cos() - xpi.sin()) / squared_pi)
    return _where(squared_pi == 0, _scalar(0.0, res), out)


def _logit(inputs, meta, res, tangents):
    """logit's backward on the tangent: t / (x (1 - x)) inside [eps, 1 - eps] (inside
    [0, 1], nan outside, without eps), 0 outside (WhereBackward0 on top)."""
    x = inputs[0]
    t = tangents[0]
    eps = meta[0]
    inner = t / (x * (1 - x))
    if eps is None:
        inside = (x >= 0) & (x <= 1)
        return _where(inside, inner, _scalar(float("nan"), res))
    inside = (x >= eps) & (x <= 1 - eps)
    return _where(inside, inner, _scalar(0.0, res))


def _scalar_self_log(shift: float):
    """xlogy(s, y) and xlog1py(s, y) with a number s: t s / (y + shift), DivBackward0 on
    top (shift 1 adds first: AddBackward1)."""

    def formula(inputs, meta, res, tangents):
        s, y = inputs
        t = tangents[1]
        if not isinstance(y, Tensor) or t is None or isinstance(s, Tensor):
            return NotImplemented
        below = y if not shift else _registry.run_op(_registry.OPS["add_scalar"], (y,), (shift,))
        return _cast_to(_mul_s(t, float(s)) / below, res)

    return formula


def _nextafter(inputs, meta, res, tangents):
    """nextafter(a, b): a's tangent, 0 where a == b (b is not differentiable: only b with a
    tangent gives none), WhereBackward0 on top."""
    a, b = inputs
    if tangents[0] is None:
        return None
    return _cast_to(_where(a == b, _scalar(0.0, res), tangents[0]), res)


def _ldexp(inputs, meta, res, tangents):
    """ldexp(a, b) = a * 2^b, PyTorch's composite: a_t 2^b + a (2^b ln2 b_t), AddBackward0
    on top even when b has no tangent (then a term that is -0, adding nothing)."""
    a, b = inputs
    a_t = _zeros_for(a, tangents[0])
    b_t = tangents[1] if len(tangents) > 1 else None
    if not isinstance(b, Tensor):
        return NotImplemented
    power = make(np.asarray(np.exp2(b._data.astype(np.float64)), dtype=res._data.dtype))
    first = a_t * power
    if b_t is not None:
        return _cast_to(first + a * _mul_s(b_t * power, math.log(2.0)), res)
    prev = GRAD_MODE.enabled
    with np.errstate(all="ignore"):
        held = _mul_s(a.abs(), -0.0) if prev and a.requires_grad else _scalar(-0.0, res)
    return _cast_to(first + held, res)


# ------------------------------------------------------------------ activations

def _elu_family(inputs, meta, res, tangents):
    """celu and selu are elu in PyTorch: the tangent is elu_backward(t, x)
    (EluBackwardBackward0)."""
    return _registry.run_op(_registry.OPS["elu_backward"], (tangents[0], inputs[0]), meta)


def _gradient_op(name: str, node: str, forward, x_grad=None):
    """An op over (g, x) whose value is an activation's backward: its own gradient in g is
    itself on the incoming gradient, in x `x_grad(gg, g, x, *meta)` (zeros if None, for
    the piecewise-linear ones). Not in the op table: only tangents use it."""

    def backward(c, gg):
        g, x = c.saved
        dg = _registry.run_op(op, (gg, x), c.meta) if c.needs(0) else None
        dx = None
        if c.needs(1):
            dx = make(np.zeros_like(x._data)) if x_grad is None else x_grad(gg, g, x, *c.meta)
        return dg, dx

    def fwd(g, x, *meta):
        with np.errstate(all="ignore"):
            return np.asarray(forward(g, x, *meta), dtype=x.dtype)

    op = _registry.Op(name, node, fwd, backward, f"{name}(g, x)", save_inputs=True)
    return op


def _shrink_fwd(g, x, lambd):
    return np.where((x >= -lambd) & (x <= lambd), 0.0, g)


_HARDSHRINK_BACKWARD = _gradient_op("hardshrink_backward", "HardshrinkBackwardBackward0",
                                    _shrink_fwd)
_SOFTSHRINK_BACKWARD = _gradient_op("softshrink_backward", "SoftshrinkBackwardBackward0",
                                    _shrink_fwd)


def _hardswish_fwd(g, x):
    return np.where(x < -3, 0.0, np.where(x <= 3, g * (x / 3 + 0.5), g))


def _hardswish_x_grad(gg, g, x):
    inside = (x > -3) & (x < 3)
    return _where(inside, _mul_s(gg * g, 1.0 / 3.0), _scalar(0.0, x))


_HARDSWISH_BACKWARD = _gradient_op("hardswish_backward", "HardswishBackwardBackward0",
                                   _hardswish_fwd, _hardswish_x_grad)


def _rrelu_fwd(g, x, slope):
    if type(slope) is np.ndarray:
        return g * slope
    return np.where(x > 0, g, g * slope)


_RRELU_BACKWARD = _gradient_op("rrelu_with_noise_backward", "RreluWithNoiseBackwardBackward0",
                               _rrelu_fwd)


def _unsupported_op(name: str, node_name: str, forward):
    """An op PyTorch has no derivative for: its node is `NotImplemented`, and a backward
    through it raises PyTorch's error."""

    def backward(c, gg):
        raise RuntimeError(f"derivative for aten::{node_name} is not implemented")

    return _registry.Op(name, "NotImplemented", forward, backward, f"{name}: no derivative")


_HARDSIGMOID_BACKWARD = _unsupported_op(
    "hardsigmoid_backward", "hardsigmoid_backward",
    lambda g, x: np.asarray(np.where((x > -3) & (x < 3), g / 6, 0.0), dtype=x.dtype))


def _glu_jvp_fwd(res, x, x_t, dim):
    a, b = np.split(x, 2, axis=dim)
    a_t, b_t = np.split(x_t, 2, axis=dim)
    with np.errstate(all="ignore"):
        sig = 1 / (1 + np.exp(-b))
        return np.asarray(a_t * sig + res * (1 - sig) * b_t, dtype=x.dtype)


_GLU_JVP = _unsupported_op("glu_jvp", "glu_jvp", _glu_jvp_fwd)


def _via(op, *, with_meta: bool = True):
    def formula(inputs, meta, res, tangents):
        return _registry.run_op(op, (tangents[0], inputs[0]), meta if with_meta else ())

    return formula


def _glu(inputs, meta, res, tangents):
    x = inputs[0]
    return _registry.run_op(_GLU_JVP, (_plain(res), x, tangents[0]), meta)


def _prelu(inputs, meta, res, tangents):
    """prelu's formula: where(x >= 0, x_t, w x_t + w_t x) (WhereBackward0 on top), the
    weight laid along dim 1 as the kernel lays it."""
    x, w = inputs
    x_t = _zeros_for(x, tangents[0])
    w_t = _zeros_for(w, tangents[1])
    nd = x._data.ndim
    if w._data.size != 1 and nd >= 2:
        shape = (1, w._data.size) + (1,) * (nd - 2)
        w = w.reshape(shape)
        w_t = w_t.reshape(shape)
    return _where(x >= 0, x_t, w * x_t + w_t * x)


# ------------------------------------------------------------------ reductions, scans

def _cumprod(inputs, meta, res, tangents):
    """cumprod's formula: result * cumsum(t / x); past each first zero along dim, the
    cumprod of x with that zero replaced by its tangent (WhereBackward0 on top)."""
    x, t = inputs[0], tangents[0]
    dim = meta[0]
    if x._data.ndim == 0:
        return (t / x * _plain(res)).masked_fill(x == 0, 0.0)
    generic = (t / x).cumsum(dim) * _plain(res)
    zeros = x == 0
    first = zeros & (zeros.cumsum(dim) == 1)
    replaced = _where(first, t, x).cumprod(dim)
    after = first.cumsum(dim) != 0
    return _cast_to(_where(after, replaced, generic), res)


def _logcumsumexp(inputs, meta, res, tangents):
    """logcumsumexp's formula: cumsum(t e) / cumsum(e), e = exp(x - max over dim)."""
    x, t = inputs[0], tangents[0]
    dim = meta[0]
    e = (x - x.amax(dim, keepdim=True)).exp() if x._data.size else x.exp()
    return (t * e).cumsum(dim) / e.cumsum(dim)


def _prod_dim(inputs, meta, res, tangents):
    """prod over dim: (result / x) t summed over dim (SumBackward1 on top); inputs with a
    zero are left to the generic rule."""
    x, t = inputs[0], tangents[0]
    dim, keepdim = meta[0], meta[1]
    if not np.all(x._data != 0) or x._data.ndim == 0:
        return NotImplemented
    out = _plain(res)
    if not keepdim:
        out = out.unsqueeze(dim)
    return ((out / x) * t).sum(dim, keepdim)


# ------------------------------------------------------------------ losses

def _loss_pair_jvp(backward_name: str):
    """A loss over (x, y) with a backward op over (g, x, y): the reduction of
    backward(x_t, x, y) + backward(y_t, y, x), each unreduced (as mse_loss's formula)."""

    def formula(inputs, meta, res, tangents):
        x, y = inputs
        if not isinstance(y, Tensor):
            return NotImplemented
        backward = _registry.OPS[backward_name]
        unreduced = ("none",) + tuple(meta[1:])
        x_t, y_t = (_zeros_for(a, b) for a, b in zip(inputs, tangents, strict=True))
        total = _registry.run_op(backward, (x_t, x, y), unreduced) + _registry.run_op(
            backward, (y_t, y, x), unreduced)
        total = _cast_to(total, res) if total._data.ndim == 0 else total
        return reduced(total, meta[0])

    return formula


def _bce_with_logits(inputs, meta, res, tangents):
    """binary_cross_entropy_with_logits without weights: the reduction of
    x_t (sigmoid(x) - y) + y_t (-x) (AddBackward0 under the reduction, as PyTorch's)."""
    x, y = inputs
    reduction, weight, pos_weight = meta[0], meta[1], meta[2]
    if weight is not None or pos_weight is not None or not isinstance(y, Tensor):
        return NotImplemented
    x_t, y_t = (_zeros_for(a, b) for a, b in zip(inputs, tangents, strict=True))
    return reduced(x_t * (x.sigmoid() - y) + y_t * -x, reduction)


def _softmax_backward_data(inputs, meta, res, tangents):
    """_softmax_backward_data(g, y) = g y - y sum(g y): the product rule on it, the
    tangent of the product less the tangent of y sum(g y) (SubBackward0 on top)."""
    g, y = inputs
    if not isinstance(y, Tensor):
        return NotImplemented
    g_t, y_t = (_zeros_for(a, b) for a, b in zip(inputs, tangents, strict=True))
    dim = meta[0]
    product_t = g_t * y + g * y_t
    total = (g * y).sum(dim, keepdim=True)
    return _cast_to(product_t - (y_t * total + y * product_t.sum(dim, keepdim=True)), res)


# ------------------------------------------------------------------ pooling

def _max_pool_gather(nd: int):
    """max pools with indices: the tangent's elements at the arg-max positions, gathered
    from the flattened window planes and viewed as the result (ViewBackward0 on top)."""

    def formula(inputs, meta, res, tangents):
        t = tangents[0]
        gather = meta[0].gather
        if gather.index.size and gather.index.min() < 0:
            return NotImplemented
        in_shape = gather.in_shape
        lead = tuple(in_shape[:-nd])
        plane = math.prod(in_shape[-nd:])
        local = (gather.index % max(plane, 1)).reshape(lead + (-1,))
        flat = t.reshape(lead + (plane,))
        return flat.gather(-1, make(local.astype(np.int64))).view(tuple(gather.out_shape))

    return formula


# ------------------------------------------------------------------ convolution, solve

def _convolution(name: str):
    """PyTorch's _convolution_jvp: conv(x_t, w) + conv(x, w_t, b_t), AddBackward0 on top
    even when x or w has no tangent (a zero one stands in)."""

    def formula(inputs, meta, res, tangents):
        op = _registry.OPS[name]
        x, w, b = inputs
        x_t = _zeros_for(x, tangents[0])
        w_t = _zeros_for(w, tangents[1])
        b_t = None
        if isinstance(b, Tensor):
            b_t = _zeros_for(b, tangents[2])
        return _cast_to(_registry.run_op(op, (x_t, w, None), meta)
                        + _registry.run_op(op, (x, w_t, b_t), meta), res)

    return formula


def _linalg_solve(inputs, meta, res, tangents):
    """linalg.solve with a vector right side: solve(A, B_t - A_t X) on the vector as a
    column, squeezed back (SqueezeBackward1 on top, as PyTorch's linalg_solve_jvp), A
    taken as a constant there (PyTorch reuses its LU factors, which have no derivative)."""
    a, b = inputs
    left, vector = meta
    if not (left and vector):
        return NotImplemented
    a_t, b_t = tangents
    x = _plain(res).unsqueeze(-1)
    rhs = None if b_t is None else b_t.unsqueeze(-1)
    if a_t is not None:
        rhs = -(a_t @ x) if rhs is None else rhs - a_t @ x
    # (PyTorch solves with the LU factors of A, an output without derivative: A's values)
    return _registry.PUBLIC["torch.linalg.solve"](make(a._data), rhs).squeeze(-1)


def _linalg_pinv(inputs, meta, res, tangents):
    """pinv's formula (real matrices): the derivative of the Moore-Penrose inverse, the
    two terms of PyTorch's pinv_jvp added (AddBackward0 on top); the products grouped to
    keep the matrices the smaller of m x m and n x n."""
    a, da = inputs[0], tangents[0]
    if a._data.dtype.kind not in "fV" or meta[2]:  # (hermitian=True: left to the generic rule)
        return NotImplemented
    p = _plain(res)
    m, n = a._data.shape[-2], a._data.shape[-1]
    da_h, p_h = da.mT, p.mT
    if m <= n:
        k = p_h @ da_h
        return p @ (k - k.mT - k @ (a @ p)) + (da_h - p @ (a @ da_h)) @ (p_h @ p)
    k = p @ da
    k_h = k.mT
    return (k_h - k - (p @ a) @ k_h) @ p + (p @ p_h) @ (da_h - (da_h @ a) @ p)


def _scatter_reduce(inputs, meta, res, tangents):
    """scatter_reduce with "sum" or "mean" is linear in (self, src): the op itself on the
    tangents (ScatterReduceBackward0 on top, as PyTorch's); the other reductions are left
    to the generic rule."""
    reduce = meta[2]
    if reduce not in ("sum", "mean"):
        return NotImplemented
    args = tuple(_zeros_for(x, t) for x, t in zip(inputs, tangents, strict=True))
    return _cast_to(_registry.run_op(_registry.OPS["scatter_reduce"], args, meta), res)


def _rsub_alpha(inputs, meta, res, tangents):
    """rsub(a, s, alpha) = s - alpha a: the tangent times -alpha (MulBackward1)."""
    return _cast_to(_mul_s(tangents[0], -meta[1]), res)


# ------------------------------------------------------------------ activations' backwards

def _threshold_backward(inputs, meta, res, tangents):
    """threshold_backward(g, x, t): PyTorch's zeros_like(x_t) + threshold_backward(g_t, x_p,
    t), an AddBackward0 on top whenever the primal x requires grad."""
    g, x = inputs
    term = _registry.run_op(_registry.OPS["threshold_backward"],
                            (_zeros_for(g, tangents[0]), x), meta)
    return make(np.zeros_like(x._data)) + term


def _hardtanh_backward(inputs, meta, res, tangents):
    """hardtanh_backward(g, x, lo, hi): PyTorch's where(lo < x_p < hi, g_t, 0): the
    tangent reads x only through the mask (WhereBackward0 on g_t's graph)."""
    g, x = inputs
    lo, hi = meta
    inside = make((x._data > lo) & (x._data < hi))
    return _where(inside, _zeros_for(g, tangents[0]), _scalar(0, res).expand_as(res))


# ------------------------------------------------------------------ householder_product

def _householder_product(inputs, meta, res, tangents):
    """Q = H_1 ... H_k (first n columns), H_i = I - tau_i v_i v_i^T: dQ = sum over i of
    H_1..H_{i-1} dH_i H_{i+1}..H_k, with dH_i = -(dtau_i v_i v_i^T) - tau_i (dv_i v_i^T +
    v_i dv_i^T), summed as the tau terms plus the v terms (an AddBackward0 on top, as
    PyTorch's householder_product_jvp ends). Real dtypes (complex is out of scope)."""
    a, tau = inputs
    if a._data.dtype.kind == "c":
        return NotImplemented
    da = _zeros_for(a, tangents[0])
    dtau = _zeros_for(tau, tangents[1])
    m, n = a._data.shape[-2:]
    k = tau._data.shape[-1]
    dtype = a._data.dtype
    below = make(np.tril(np.ones((m, n), dtype), -1))
    v = a * below + make(np.eye(m, n, dtype=dtype))
    dv = da * below
    eye = make(np.eye(m, dtype=dtype))
    cols = [v[..., :, i:i + 1] for i in range(k)]
    dcols = [dv[..., :, i:i + 1] for i in range(k)]
    taus = [tau[..., i:i + 1].unsqueeze(-1) for i in range(k)]
    dtaus = [dtau[..., i:i + 1].unsqueeze(-1) for i in range(k)]
    reflectors = [eye - t * (c @ c.mT) for t, c in zip(taus, cols, strict=True)]
    before = [eye]
    for h in reflectors[:-1]:
        before.append(before[-1] @ h)
    after = [make(np.eye(m, n, dtype=dtype))]
    for h in reversed(reflectors[1:]):
        after.insert(0, h @ after[0])
    tau_terms = v_terms = None
    for i in range(k):
        c, dc = cols[i], dcols[i]
        by_tau = before[i] @ (-(dtaus[i] * (c @ c.mT))) @ after[i]
        by_v = before[i] @ (-(taus[i] * (dc @ c.mT + c @ dc.mT))) @ after[i]
        tau_terms = by_tau if tau_terms is None else tau_terms + by_tau
        v_terms = by_v if v_terms is None else v_terms + by_v
    return _cast_to(tau_terms + v_terms, res)


# ------------------------------------------------------------------ copying squeezes

def _dims_dropped(longer, shorter) -> list:
    """The dims of shape `longer` that are missing from `shorter` (greedy: equal sizes
    pair up; where size-1 dims are ambiguous, any choice is the same view)."""
    dims, j = [], 0
    for i, n in enumerate(longer):
        if j < len(shorter) and shorter[j] == n:
            j += 1
        else:
            dims.append(i)
    return dims


def _squeezed(kind: str):
    """squeeze_copy / unsqueeze_copy: PyTorch's tangent is the (viewing) squeeze or
    unsqueeze of the tangent (SqueezeBackward0/1/2, UnsqueezeBackward0 on its graph)."""

    def formula(inputs, meta, res, tangents):
        t = tangents[0]
        in_shape, out_shape = tuple(inputs[0]._data.shape), tuple(res._data.shape)
        if kind == "unsqueeze":
            dims = _dims_dropped(out_shape, in_shape)
            return t.unsqueeze(dims[0]) if len(dims) == 1 else NotImplemented
        if kind == "all":
            return t.squeeze()
        dims = _dims_dropped(in_shape, out_shape)
        if kind == "dim":
            return t.squeeze(dims[0]) if len(dims) == 1 else NotImplemented
        return t.squeeze(tuple(dims)) if dims else NotImplemented

    return formula


FORMULAS = {
    "acos": _acos, "asin": _asin, "acosh": _acosh, "asinh": _asinh, "exp2": _exp2,
    "deg2rad": _scaled_by(math.pi / 180.0), "rad2deg": _scaled_by(180.0 / math.pi),
    "sinc": _sinc, "logit": _logit, "xlogy_scalar_self": _scalar_self_log(0.0),
    "special_xlog1py_scalar_self": _scalar_self_log(1.0), "ldexp": _ldexp,
    "nextafter": _nextafter,
    "celu": _elu_family, "selu": _elu_family,
    "linalg_householder_product": _householder_product,
    "threshold_backward": _threshold_backward, "hardtanh_backward": _hardtanh_backward,
    "hardshrink": _via(_HARDSHRINK_BACKWARD), "softshrink": _via(_SOFTSHRINK_BACKWARD),
    "hardswish": _via(_HARDSWISH_BACKWARD), "rrelu": _via(_RRELU_BACKWARD),
    "hardsigmoid": _via(_HARDSIGMOID_BACKWARD), "glu": _glu, "prelu": _prelu,
    "cumprod": _cumprod, "logcumsumexp": _logcumsumexp, "prod_dim": _prod_dim,
    "huber_loss": _loss_pair_jvp("huber_loss_backward"),
    "smooth_l1_loss": _loss_pair_jvp("smooth_l1_loss_backward"),
    "adaptive_max_pool2d": _max_pool_gather(2), "adaptive_max_pool3d": _max_pool_gather(3),
    "max_pool3d_with_indices": _max_pool_gather(3),
    "convolution": _convolution("convolution"),
    "convolution_ext": _convolution("convolution_ext"),
    "linalg_solve": _linalg_solve, "rsub_alpha": _rsub_alpha, "linalg_pinv": _linalg_pinv,
    "scatter_reduce": _scatter_reduce,
    "binary_cross_entropy_with_logits": _bce_with_logits,
    "softmax_backward_data_public": _softmax_backward_data,
    "squeeze_copy": _squeezed("all"), "squeeze_copy_dim": _squeezed("dim"),
    "squeeze_copy_dims": _squeezed("dims"), "unsqueeze_copy": _squeezed("unsqueeze"),
}

# losses whose reduced tangent PyTorch copies into a new tensor (its CPU kernel writes the
# reduction into an output of its own): CopyBackwards on top when the tangent has a graph
COPIED_REDUCTIONS = frozenset({"mse_loss", "smooth_l1_loss", "soft_margin_loss",
                               "binary_cross_entropy"})

# ops whose outputs' tangents PyTorch copies into new tensors of the primal's layout (the
# LAPACK results are column-major or views of larger buffers: the formula's tangent does
# not have their layout): op -> the indices of those outputs
COPIED_OUTPUTS = {"cholesky_inverse": (0,), "linalg_cholesky_ex": (0,), "linalg_inv_ex": (0,),
                  "linalg_matrix_exp": (0,), "linalg_lu_factor_ex": (0,),
                  "linalg_eigh": (0, 1), "linalg_qr": (1,), "linalg_svd": (0, 1, 2)}
