"""torch.nn.init's functions (gradcli/torch/nn/init.py forwards to them; loaded on first use):
filling parameters in place without recording history.

Each function draws through the tensor's own random fills (uniform_, normal_), so after
`manual_seed` a layer initialised here holds PyTorch's bits: the bounds are computed in
double precision as PyTorch's Python code computes them. Two functions post-process their
draws with arithmetic of their own and are therefore equal only within floating-point
tolerance: `orthogonal_` (a QR decomposition: numpy's LAPACK call, not PyTorch's; the draws
that go into it are PyTorch's) and the rare narrow-interval branch of `trunc_normal_`, whose
acceptance test takes a float log (numpy's, which may differ from PyTorch's in the last bit
and so, very rarely, accept another candidate).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .grad_mode import no_grad
from .warn_site import warn_at_caller

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    shape = tensor._data.shape
    receptive_field_size = 1
    for s in shape[2:]:
        receptive_field_size *= s
    return shape[1] * receptive_field_size, shape[0] * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal values inside [a, b] by rejection, as PyTorch 2.13: when [a, b] holds more
    than 30% of the mass, whole-tensor normal draws replace the values outside until none
    is; otherwise uniform candidates in [a, b] are accepted against the normal density."""
    from .tensor import make

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    arr = tensor._data
    dt = arr.dtype.type
    with no_grad(), np.errstate(all="ignore"):  # (an inf or nan mean: nan, silently)
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            lo, hi = float(dt(a)), float(dt(b))
            result = tensor.normal_(mean, std, generator=generator)._data.copy()
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                fresh = make(np.empty_like(result)).normal_(mean, std, generator=generator)._data
                result = np.where(mask, fresh, result)
        else:
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2

            def log_pdf(c):
                c = (c - dt(mean)) / dt(std)
                return (c * c) * dt(-0.5) - dt(log_peak)

            def accept_draw():
                u = make(np.empty_like(arr)).uniform_(generator=generator)._data
                with np.errstate(divide="ignore"):
                    return np.log(u)

            result = tensor.uniform_(a, b, generator=generator)._data.copy()
            pending = accept_draw() > log_pdf(result)
            while pending.any():
                cand = make(np.empty_like(arr)).uniform_(a, b, generator=generator)._data.copy()
                result = np.where(pending, cand, result)
                pending = np.where(pending, accept_draw() > log_pdf(cand), pending)
        arr[...] = result
        tensor._vc[0] += 1
        return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor._data[...] = np.eye(*tensor._data.shape, dtype=tensor._data.dtype)
        tensor._vc[0] += 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor._data.shape:
        warn_at_caller("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tensor._data.shape:
        warn_at_caller("Initializing zero-element tensors is a no-op")
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of PyTorch's normal draws; the
    signs made unique by R's diagonal. numpy's QR: equal to PyTorch's within tolerance."""
    from .tensor import make

    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor._data.shape[0]
    cols = tensor.numel() // rows
    flat = make(np.empty((rows, cols), tensor._data.dtype))
    with no_grad():
        flat.normal_(0, 1, generator=generator)
    m = flat._data.astype(np.float64)
    if rows < cols:
        m = m.T
    q, r = np.linalg.qr(m)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor._data[...] = (q * gain).astype(tensor._data.dtype).reshape(tensor._data.shape)
        tensor._vc[0] += 1
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor of normal values where, in each column, ceil(sparsity * rows) entries
    (rows drawn by randperm, after the normal fill, as PyTorch draws them) are zero."""
    from .ops.registry import PUBLIC

    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._data.shape
    zeros_per_column = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            order = PUBLIC["torch.randperm"](rows)._data
            tensor._data[order[:zeros_per_column], col] = 0
        tensor._vc[0] += 1
    return tensor


def dirac_(tensor, groups=1):
    """A convolution weight that passes its input through: in each group, output channel
    d reads input channel d at the kernel's centre (zeros elsewhere)."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    shape = tensor._data.shape
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = shape[0] // groups
    centre = tuple(s // 2 for s in shape[2:])
    with no_grad():
        tensor._data[...] = 0
        for g in range(groups):
            for d in range(min(per_group, shape[1])):
                tensor._data[(g * per_group + d, d) + centre] = 1
        tensor._vc[0] += 1
    return tensor
