"""torch.special's Bessel, Airy and orthogonal-polynomial functions, computed by scipy
(imported on the first call) in float64 and rounded to the result dtype. PyTorch gives
none of them a derivative: their results never require grad, so a backward through one
fails as PyTorch's does (nothing in the graph)."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..tensor import Tensor, make
from .registry import public


def _float_dtype(*operands):
    common = dtypes.result_type(*operands)
    return common if common.is_floating_point else dtypes.get_default_dtype()


def _array(value) -> np.ndarray:
    return value._data if isinstance(value, Tensor) else np.asarray(value)


def _unary(name: str, compute):
    def function(input, *, out=None):
        if not isinstance(input, Tensor):
            raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, "
                            f"not {type(input).__name__}")
        target = _float_dtype(input)
        with np.errstate(all="ignore"):
            values = compute(input._data.astype(np.float64))
        result = make(np.asarray(values).astype(target.np))
        if out is not None:
            out.resize_(result.shape).copy_(result)
            return out
        return result

    function.__name__ = name
    return function


def _scipy():
    import scipy.special

    return scipy.special


for _name, _compute in (
        ("bessel_j0", lambda a: _scipy().j0(a)),
        ("bessel_j1", lambda a: _scipy().j1(a)),
        ("bessel_y0", lambda a: _scipy().y0(a)),
        ("bessel_y1", lambda a: _scipy().y1(a)),
        ("modified_bessel_i0", lambda a: _scipy().i0(a)),
        ("modified_bessel_i1", lambda a: _scipy().i1(a)),
        ("modified_bessel_k0", lambda a: _scipy().k0(a)),
        ("modified_bessel_k1", lambda a: _scipy().k1(a)),
        ("scaled_modified_bessel_k0", lambda a: _scipy().k0e(a)),
        ("scaled_modified_bessel_k1", lambda a: _scipy().k1e(a)),
        ("spherical_bessel_j0", lambda a: _scipy().spherical_jn(0, a)),
        ("airy_ai", lambda a: _scipy().airy(a)[0])):
    public(f"torch.special.{_name}")(_unary(_name, _compute))


def _chebyshev_u(x, n):
    return _scipy().eval_chebyu(n, x)


def _previous_u(x, n):
    return np.where(n >= 1, _scipy().eval_chebyu(np.maximum(n - 1, 0), x), 0.0)


#: P_n(x) for integer n >= 0 (V and W, the third and fourth kinds, from U:
#: V_n = U_n - U_{n-1}, W_n = U_n + U_{n-1})
_POLYNOMIALS = {
    "chebyshev_polynomial_t": lambda x, n: _scipy().eval_chebyt(n, x),
    "chebyshev_polynomial_u": _chebyshev_u,
    "chebyshev_polynomial_v": lambda x, n: _chebyshev_u(x, n) - _previous_u(x, n),
    "chebyshev_polynomial_w": lambda x, n: _chebyshev_u(x, n) + _previous_u(x, n),
    "hermite_polynomial_h": lambda x, n: _scipy().eval_hermite(n, x),
    "hermite_polynomial_he": lambda x, n: _scipy().eval_hermitenorm(n, x),
    "laguerre_polynomial_l": lambda x, n: _scipy().eval_laguerre(n, x),
    "legendre_polynomial_p": lambda x, n: _scipy().eval_legendre(n, x),
}


def _polynomial(name: str, compute, shifted: bool):
    def function(input, n, *, out=None):
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"special_{name}() received an invalid combination of arguments - "
                            f"got ({type(input).__name__}, {type(n).__name__})")
        target = _float_dtype(input, n)
        x = _array(input).astype(np.float64)
        degree = np.trunc(_array(n).astype(np.float64))
        x, degree = np.broadcast_arrays(x, degree)
        if shifted:
            x = 2.0 * x - 1.0
        with np.errstate(all="ignore"):
            valid = degree >= 0
            values = np.where(valid, compute(x, np.where(valid, degree, 0).astype(np.int64)), 0.0)
        result = make(np.asarray(values).astype(target.np))
        if out is not None:
            out.resize_(result.shape).copy_(result)
            return out
        return result

    function.__name__ = name
    return function


for _name, _compute in _POLYNOMIALS.items():
    public(f"torch.special.{_name}")(_polynomial(_name, _compute, False))
    if _name.startswith("chebyshev"):
        shifted_name = "shifted_" + _name
        public(f"torch.special.{shifted_name}")(_polynomial(shifted_name, _compute, True))
