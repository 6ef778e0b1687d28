"""gradcheck(..., check_forward_ad=True): the Jacobian by forward-mode AD (one dual pass
per input element, as PyTorch's slow mode) against the central differences."""

from __future__ import annotations

import numpy as np

from . import forward_ad
from .gradcheck import GradcheckError, _as_tuple, _slow_check, _tensor_text, numerical_jacobians
from .tensor import Tensor, make


def forward_jacobians(func, inputs, outputs) -> list:
    """[per input that requires grad][per float output] an (input numel, output numel)
    array: column k of the Jacobian is the tangent of the output when input element k's
    tangent is 1 and every other is 0."""
    float_outs = [o for o in outputs if isinstance(o, Tensor) and o._data.dtype.kind in "fc"]
    with forward_ad.dual_level():
        tangents, duals = [], []
        for inp in inputs:
            if isinstance(inp, Tensor) and inp.requires_grad:
                t = make(np.zeros_like(inp._data))
                inp = forward_ad.make_dual(inp.detach(), t)
                tangents.append(t)
            duals.append(inp)
        result = []
        for t in tangents:
            flat = t._data.reshape(-1)  # (a contiguous array of zeros: a view of it)
            jac = [np.zeros((flat.size, o._data.size), dtype=o._data.dtype) for o in float_outs]
            for k in range(flat.size):
                flat[k] = 1
                outs = [o for o in _as_tuple(func(*duals))
                        if isinstance(o, Tensor) and o._data.dtype.kind in "fc"]
                for col, o in enumerate(outs[:len(jac)]):
                    tangent = forward_ad.tangent_of(o)
                    if tangent is not None:
                        jac[col][k] = np.asarray(tangent._data, dtype=jac[col].dtype).reshape(-1)
                flat[k] = 0
            result.append(jac)
    return result


def check_forward_ad(func, func_out, inputs, outputs, eps, rtol, atol) -> None:
    """PyTorch's slow-mode forward-AD check: raise GradcheckError on a mismatch."""
    func_out = _as_tuple(func_out)
    if not outputs:
        _slow_check(func, func_out, inputs, outputs, eps, rtol, atol, False, 0.0)
        return
    numerical = numerical_jacobians(func, inputs, func_out, eps)
    float_outs = [o for o in func_out if isinstance(o, Tensor) and o._data.dtype.kind == "f"]
    kept = [k for k, o in enumerate(float_outs) if o.requires_grad]
    analytical = forward_jacobians(func, inputs, func_out)
    for i, k in enumerate(kept):
        for j, per_output in enumerate(numerical):
            n = per_output[k]
            a = analytical[j][k]
            if not np.allclose(a, n.astype(np.result_type(a, n)), rtol=rtol, atol=atol):
                raise GradcheckError(
                    f"Jacobian computed with forward mode mismatch for output {i:d} with respect "
                    f"to input {j:d},\nnumerical:{_tensor_text(n)}\nanalytical:{_tensor_text(a)}\n")
