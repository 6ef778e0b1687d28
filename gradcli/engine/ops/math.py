"""Elementary and special math (issue 24, group 1): one declaration per op.

Values come from numpy, or from scipy.special imported on the first call (`scipy_fn`);
float32 inputs are computed in float64 and rounded once, which keeps them within
torch.testing's float32 tolerances. Gradients are PyTorch's derivatives.yaml formulas
written with Tensor ops, so they are differentiable again (create_graph=True).
"""

from __future__ import annotations

import math as _m

import numpy as np

from .. import dtypes
from ..tensor import Tensor, make
from .declare import binary, expose, scipy_fn, unary
from .elementwise import (  # mul.Scalar / add.Scalar (MulBackward1, AddBackward1)
    ADD_SCALAR,
    MUL_SCALAR,
)
from .registry import defop, public, run_op, run_unary

_PI = _m.pi
_LN2 = _m.log(2.0)
_LN10 = _m.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / _m.sqrt(_m.pi)


def _f64(fn):
    """fn on float64, the result in the input's dtype (float32 rounded once)."""

    def forward(*args):
        if any(type(x) is np.ndarray and x.dtype == np.float32 for x in args):
            wide = [x.astype(np.float64) if type(x) is np.ndarray else x for x in args]
            return np.asarray(fn(*wide)).astype(np.float32)
        return fn(*args)

    forward.__name__ = getattr(fn, "__name__", "forward")
    return forward


def _x(c):
    return c.saved[0]


# ------------------------------------------------------------------ trigonometric

asin = unary("asin", "AsinBackward0", _f64(np.arcsin),
             lambda c, g: (g / (1 - _x(c) * _x(c)).sqrt(),), "d asin(a)/da = 1/sqrt(1-a^2)",
             domain="unit", extra=("torch.arcsin", "Tensor.arcsin", "Tensor.arcsin_"))
acos = unary("acos", "AcosBackward0", _f64(np.arccos),
             lambda c, g: (-g / (1 - _x(c) * _x(c)).sqrt(),), "d acos(a)/da = -1/sqrt(1-a^2)",
             domain="unit", extra=("torch.arccos", "Tensor.arccos", "Tensor.arccos_"))
atan = unary("atan", "AtanBackward0", _f64(np.arctan),
             lambda c, g: (g / (_x(c) * _x(c) + 1),), "d atan(a)/da = 1/(1+a^2)",
             extra=("torch.arctan", "Tensor.arctan", "Tensor.arctan_"))
sinh = unary("sinh", "SinhBackward0", _f64(np.sinh), lambda c, g: (g * cosh(_x(c)),),
             "d sinh(a)/da = cosh(a)")
cosh = unary("cosh", "CoshBackward0", _f64(np.cosh), lambda c, g: (g * sinh(_x(c)),),
             "d cosh(a)/da = sinh(a)")
asinh = unary("asinh", "AsinhBackward0", _f64(np.arcsinh),
              lambda c, g: (g / (_x(c) * _x(c) + 1).sqrt(),), "d asinh(a)/da = 1/sqrt(a^2+1)",
              extra=("torch.arcsinh", "Tensor.arcsinh", "Tensor.arcsinh_"), inplace_node="AsinhBackward1")
acosh = unary("acosh", "AcoshBackward0", _f64(np.arccosh),
              lambda c, g: (g / (_x(c) * _x(c) - 1).sqrt(),), "d acosh(a)/da = 1/sqrt(a^2-1)",
              domain="above1", extra=("torch.arccosh", "Tensor.arccosh", "Tensor.arccosh_"),
              inplace_node="AcoshBackward1",
              torch_call="torch.acosh(a.abs() + 1)")
atanh = unary("atanh", "AtanhBackward0", _f64(np.arctanh),
              lambda c, g: (g / (1 - _x(c) * _x(c)),), "d atanh(a)/da = 1/(1-a^2)",
              domain="unit", extra=("torch.arctanh", "Tensor.arctanh", "Tensor.arctanh_"),
              inplace_node="AtanhBackward1")
deg2rad = unary("deg2rad", "Deg2RadBackward0", lambda a: a * a.dtype.type(_PI / 180),
                lambda c, g: (g * (_PI / 180),), "d deg2rad(a)/da = pi/180", save="")
rad2deg = unary("rad2deg", "Rad2DegBackward0", lambda a: a * a.dtype.type(180 / _PI),
                lambda c, g: (g * (180 / _PI),), "d rad2deg(a)/da = 180/pi", save="")


def _sinc(a):
    """np.sinc in float64; nan where pi * a overflows the input's own dtype (a float32
    3e38: PyTorch forms pi * a in the input's precision and takes sin(inf))."""
    out = np.sinc(a.astype(np.float64))
    with np.errstate(over="ignore"):
        over = np.isinf(a * a.dtype.type(_PI)) & np.isfinite(a)
    return np.where(over, np.nan, out).astype(a.dtype)


def _sinc_grad(c, g):
    """PyTorch's sinc_backward: 0 where pi a^2 is 0 in the input's dtype (it underflows
    for a tiny a, where the quotient would be 0/0)."""
    x = _x(c)
    px = x * _PI
    slope = (px * px.cos() - px.sin()) / (px * x)
    return (g * slope.masked_fill(x * x * _PI == 0, 0.0),)


sinc = unary("sinc", "SincBackward0", _sinc, _sinc_grad,
             "d sinc(a)/da = (pi a cos(pi a) - sin(pi a)) / (pi a^2), 0 at 0",
             extra=("torch.special.sinc",))

# ------------------------------------------------------------------ exponential, logarithmic

exp2 = unary("exp2", "Exp2Backward0", _f64(np.exp2), lambda c, g: (g * c.result * _LN2,),
             "d 2^a/da = 2^a ln 2", save="result", extra=("torch.special.exp2",))
expm1 = unary("expm1", "Expm1Backward0", _f64(np.expm1), lambda c, g: (g * (c.result + 1),),
              "d expm1(a)/da = expm1(a) + 1", save="result", extra=("torch.special.expm1",))
log2 = unary("log2", "Log2Backward0", _f64(np.log2), lambda c, g: (g / (_x(c) * _LN2),),
             "d log2(a)/da = 1/(a ln 2)", domain="positive")
log10 = unary("log10", "Log10Backward0", _f64(np.log10), lambda c, g: (g / (_x(c) * _LN10),),
              "d log10(a)/da = 1/(a ln 10)", domain="positive")
frac = unary("frac", "FracBackward0", lambda a: a - np.trunc(a), lambda c, g: (g,),
             "d frac(a)/da = 1", save="", ints="error")


def _logaddexp_grads(c, g):
    a, b = c.saved
    return (g / ((b - a).exp() + 1) if c.needs(0) else None,
            g / ((a - b).exp() + 1) if c.needs(1) else None)


def _logaddexp2_grads(c, g):
    a, b = c.saved
    return (g / (exp2(b - a) + 1) if c.needs(0) else None,
            g / (exp2(a - b) + 1) if c.needs(1) else None)


_LOGADDEXP_REAL = _f64(np.logaddexp)


def _logaddexp_fwd(a, b):
    """log(exp(a) + exp(b)); for complex as PyTorch's kernel: the operand of larger real
    part factored out, log1p(exp(min - max)) + max (nan in, nan out; equal infinite real
    parts: the sum's log, or the -inf operand)."""
    if np.result_type(a, b).kind != "c":
        return _LOGADDEXP_REAL(a, b)
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    a_max = a.real >= b.real
    hi = np.where(a_max, a, b)
    lo = np.where(a_max, b, a)
    with np.errstate(all="ignore"):
        out = np.log1p(np.exp(lo - hi)) + hi
        same_inf = ~np.isfinite(lo.real) & (lo.real == hi.real)
        if same_inf.any():
            out = np.where(same_inf, np.where(lo.real < 0, lo, np.log(np.exp(lo) + np.exp(hi))), out)
        bad = np.isnan(lo.real) | np.isnan(lo.imag)
        if bad.any():
            out = np.where(bad, complex(np.nan, np.nan), out)
    return out.astype(np.result_type(a, b))


logaddexp = binary("logaddexp", "LogaddexpBackward0", _logaddexp_fwd, _logaddexp_grads,
                   "d logaddexp(a, b)/da = 1/(1 + exp(b - a))", inplace=False, ints="error")
logaddexp2 = binary("logaddexp2", "Logaddexp2Backward0", _f64(np.logaddexp2), _logaddexp2_grads,
                    "d logaddexp2(a, b)/da = 1/(1 + 2^(b - a))", inplace=False, ints="error")


def _atan2_grads(c, g):
    """PyTorch's: g b / (a^2 + b^2) and -g a / (a^2 + b^2) with 1/(a^2 + b^2) taken as 0
    where a^2 + b^2 is 0 (at the origin both are signed zeros, not nan)."""
    a, b = c.saved
    r = a * a + b * b
    recip = r.reciprocal().masked_fill(r == 0, 0.0)
    return (g * b * recip if c.needs(0) else None, g * -a * recip if c.needs(1) else None)


atan2 = binary("atan2", "Atan2Backward0", _f64(np.arctan2), _atan2_grads,
               "d atan2(a, b)/da = b/(a^2+b^2), d/db = -a/(a^2+b^2)",
               extra=("torch.arctan2", "Tensor.arctan2", "Tensor.arctan2_"))


def _hypot_grads(c, g):
    a, b = c.saved
    r = c.result
    return (g * a / r if c.needs(0) else None, g * b / r if c.needs(1) else None)


hypot = binary("hypot", "HypotBackward0", _f64(np.hypot), _hypot_grads,
               "d hypot(a, b)/da = a/hypot, d/db = b/hypot", save="inputs,result", ints="error",
               save_for=((0,), (1,)), check_order=(1, 0, 2))
# (each input saved only for its own gradient, checked other, self, result: as PyTorch's)


def _xlogy_fwd(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(y)
    return np.where((x == 0) & ~np.isnan(y), 0, out).astype(out.dtype, copy=False)


def _xlogy_grads(c, g):
    x, y = c.saved
    gx = gy = None
    if c.needs(0):  # PyTorch's formula: 0 only where x == 0 and y <= 0 (log(y) at x == 0)
        gx = _zero_where(xlogy(g, y), x, y, 0)
    if c.needs(1):
        gy = g * x / y
    return gx, gy


def _zero_where(gx: Tensor, x: Tensor, y, bound: float) -> Tensor:
    """gx with zeros where x == 0 and y <= bound (y a tensor or a Python number)."""
    if isinstance(y, Tensor):
        return gx.masked_fill((x == 0) & (y <= bound), 0.0)
    return gx.masked_fill(x == 0, 0.0) if y <= bound else gx


xlogy = binary("xlogy", "XlogyBackward0", _f64(_xlogy_fwd), _xlogy_grads,
               "d xlogy(x, y)/dx = log(y) (0 where x = 0 and y <= 0), d/dy = x/y",
               domain="positive",
               scalar_other="XlogyBackward2", scalar_self="XlogyBackward1",
               extra=("torch.special.xlogy",), torch_call="torch.xlogy(a, b.abs() + 0.5)")


def _xlog1py_fwd(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log1p(y)
    return np.where((x == 0) & ~np.isnan(y), 0, out).astype(out.dtype, copy=False)


def _xlog1py_grads(c, g):
    x, y = c.saved
    gx = gy = None
    if c.needs(0):  # PyTorch's formula: 0 only where x == 0 and y <= -1
        gx = _zero_where(xlog1py(g, y), x, y, -1)
    if c.needs(1):
        gy = g * x / (y + 1)
    return gx, gy


xlog1py = binary("special_xlog1py", "SpecialXlog1PyBackward0", _f64(_xlog1py_fwd),
                 _xlog1py_grads, "d xlog1py(x, y)/dx = log1p(y), d/dy = x/(1+y)",
                 domain="positive", scalar_other="SpecialXlog1PyBackward2",
                 scalar_self="SpecialXlog1PyBackward1", names=("torch.special.xlog1py",),
                 inplace=False, torch_call="torch.special.xlog1py(a, b.abs())")


def _copysign_grads(c, g):
    a = c.saved[0]
    ratio = (c.result / a).masked_fill(a == 0, 0.0)
    return (g * ratio if c.needs(0) else None, g * 0 if c.needs(1) else None)


copysign = binary("copysign", "CopysignBackward0", _f64(np.copysign), _copysign_grads,
                  "d copysign(a, b)/da = sign agreement (0 at a = 0), d/db = 0",
                  save="inputs,result", scalar_other="CopysignBackward1")


def _float_power_grads(c, g):
    a, b = c.saved
    ga = gb = None
    if c.needs(0):
        ga = (g * b * a ** (b - 1)).masked_fill(b == 0, 0.0) if isinstance(b, Tensor) else (
            g * 0 if b == 0 else g * b * a ** (b - 1))
    if c.needs(1):
        base = a if isinstance(a, Tensor) else make(np.asarray(float(a)))
        ga_log = base.log()
        gb = g * c.result * ga_log.masked_fill((base == 0).logical_and(b >= 0), 0.0) \
            if isinstance(b, Tensor) else None
    return ga, gb


def _float_power_fwd(a, b):
    return np.power(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))


float_power_ = binary("float_power", "PowBackward1", _float_power_fwd, _float_power_grads,
                      "d a^b/da = b a^(b-1), d/db = a^b log a (float64)", save="inputs,result",
                      scalar_other="PowBackward0", scalar_self="PowBackward2", domain="positive",
                      names=(), inplace=False)


@public("torch.float_power", "Tensor.float_power")
def float_power(input, exponent):
    """a^b in float64 whatever the operands' dtypes (PyTorch computes it in double)."""
    a = input.to(dtypes.float64) if isinstance(input, Tensor) else input
    b = exponent.to(dtypes.float64) if isinstance(exponent, Tensor) else exponent
    return float_power_(a, b)


@public("Tensor.float_power_")
def float_power_inplace(input, exponent):
    if input.dtype is not dtypes.float64:
        raise RuntimeError("the base given to float_power_ has dtype "
                           f"{_dtype_word(input.dtype)} but the operation's result requires "
                           "dtype Double")
    return input._apply_inplace(lambda old: float_power(old, exponent))


def _dtype_word(d) -> str:
    from ..tensor import _type_word

    return _type_word(d)


# ------------------------------------------------------------------ error functions, gamma

_erf = scipy_fn("erf")
_erfc = scipy_fn("erfc")
_erfinv_scipy = scipy_fn("erfinv")


def _erfinv(a):
    """scipy's erfinv keeps the sign of zero as PyTorch does (erfinv(-0.) = -0.)."""
    out = np.asarray(_erfinv_scipy(a))
    return np.where(a == 0, a, out)


_gammaln = scipy_fn("gammaln")
_psi = scipy_fn("psi")
_polygamma = scipy_fn("polygamma")
_i0 = scipy_fn("i0")
_i0e = scipy_fn("i0e")
_i1 = scipy_fn("i1")
_i1e = scipy_fn("i1e")
_erfcx = scipy_fn("erfcx")
_ndtr = scipy_fn("ndtr")
_ndtri = scipy_fn("ndtri")
_log_ndtr = scipy_fn("log_ndtr")
_zeta_scipy = scipy_fn("zeta")


def _zeta(x, q):
    """scipy's Hurwitz zeta; PyTorch's series gives nan at q = +inf (x > 1; scipy: 0)."""
    out = np.asarray(_zeta_scipy(x, q))
    return np.where((np.asarray(q) == np.inf) & (np.asarray(x) > 1), np.nan, out)

erf = unary("erf", "ErfBackward0", _f64(_erf),
            lambda c, g: (g * _TWO_OVER_SQRT_PI * (-(_x(c) * _x(c))).exp(),),
            "d erf(a)/da = 2/sqrt(pi) exp(-a^2)", extra=("torch.special.erf",))
erfc = unary("erfc", "ErfcBackward0", _f64(_erfc),
             lambda c, g: (g * -_TWO_OVER_SQRT_PI * (-(_x(c) * _x(c))).exp(),),
             "d erfc(a)/da = -2/sqrt(pi) exp(-a^2)", extra=("torch.special.erfc",))
erfinv = unary("erfinv", "ErfinvBackward0", _f64(_erfinv),
               lambda c, g: (g * (0.5 * _m.sqrt(_PI)) * (c.result * c.result).exp(),),
               "d erfinv(a)/da = sqrt(pi)/2 exp(erfinv(a)^2)", save="result", domain="unit",
               extra=("torch.special.erfinv",))


def _digamma_fwd(a):
    """scipy's psi, with PyTorch's values at the poles: -inf at +0 and +inf at -0 (the
    limit from the side of the zero's sign), nan at the negative integers."""
    out = np.asarray(_psi(a))
    out = np.where(a == 0, np.copysign(np.inf, -a), out)
    return np.where((a < 0) & (a == np.floor(a)), np.nan, out).astype(out.dtype, copy=False)


def _trigamma(a):
    """polygamma(1, a) as PyTorch forms it: the reflection 1/sin^2 for a < 1/2 with sin(pi a)
    in the input's precision, so at a negative integer it is a huge finite value (sin(pi a)
    is not 0 in floating point) rather than inf, and nan at -inf; the asymptotic series
    after six recurrence steps, in float64."""
    x = np.array(a, dtype=np.float64)
    sign = np.ones_like(x)
    result = np.zeros_like(x)
    low = x < 0.5
    with np.errstate(all="ignore"):
        s = np.sin(np.asarray(a * a.dtype.type(_PI), dtype=a.dtype)).astype(np.float64)
        result = np.where(low, -(_PI * _PI) / (s * s), result)
        sign = np.where(low, -1.0, sign)
        x = np.where(low, 1 - x, x)
        for _ in range(6):
            result = result + 1 / (x * x)
            x = x + 1
        ixx = 1 / (x * x)
        result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return (sign * result).astype(a.dtype)


def _polygamma_fwd(a, n):
    """n = 0 digamma, 1 trigamma (above), n >= 2 scipy's; PyTorch's Hurwitz zeta gives nan
    at +inf (scipy: 0), so polygamma(n >= 2, inf) is nan."""
    if n == 1:
        return _trigamma(a)  # (from the input's own dtype)
    wide = a.astype(np.float64)
    out = _digamma_fwd(wide) if n == 0 else np.where(wide == np.inf, np.nan,
                                                       np.asarray(_polygamma(n, wide)))
    return out.astype(a.dtype)


def _gammaln_fwd(a):
    """scipy's gammaln; PyTorch's lgamma(-inf) is +inf (|gamma| grows without bound)."""
    return np.where(a == -np.inf, np.inf, np.asarray(_gammaln(a)))


lgamma = unary("lgamma", "LgammaBackward0", _f64(_gammaln_fwd), lambda c, g: (g * digamma(_x(c)),),
               "d lgamma(a)/da = digamma(a)", domain="positive",
               extra=("torch.special.gammaln",))
digamma = unary("digamma", "DigammaBackward0", _f64(_digamma_fwd),
                lambda c, g: (g * polygamma(1, _x(c)),), "d digamma(a)/da = polygamma(1, a)",
                domain="positive", extra=("torch.special.digamma", "torch.special.psi"))

POLYGAMMA = defop("polygamma", "PolygammaBackward0",
                  _polygamma_fwd,
                  lambda c, g: (g * polygamma(c.meta[0] + 1, _x(c)),),
                  "d polygamma(n, a)/da = polygamma(n+1, a)", save="inputs",
                  torch_call="torch.polygamma(2, a)", domain="positive")


def _float_input(fname, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 2) must be Tensor, "
                        f"not {type(input).__name__}")
    d = input._data
    return d.astype(dtypes.get_default_dtype().np) if d.dtype.kind not in "fV" else None


@public("torch.polygamma", "torch.special.polygamma")
def polygamma(n, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return run_unary(POLYGAMMA, input, (int(n),), _float_input("polygamma", input))


@public("Tensor.polygamma")
def polygamma_method(input, n):
    return polygamma(n, input)


@public("Tensor.polygamma_")
def polygamma_inplace(input, n):
    return input._apply_inplace(lambda old: polygamma(n, old))


def _mvlgamma_fwd(a, p):
    terms = sum(_gammaln(a - j / 2.0) for j in range(p))
    return terms + p * (p - 1) / 4.0 * _m.log(_PI)


def _mvlgamma_grad(c, g):
    x = _x(c)
    p = c.meta[0]
    total = None
    for j in range(p):
        term = digamma(x - j / 2.0)
        total = term if total is None else total + term
    return (g * total,)


MVLGAMMA = defop("mvlgamma", "MvlgammaBackward0", _f64(_mvlgamma_fwd), _mvlgamma_grad,
                 "d mvlgamma(a, p)/da = sum_j digamma(a - j/2)", save="inputs",
                 torch_call="torch.mvlgamma(a.abs() + 2, 2)")


@public("torch.mvlgamma", "Tensor.mvlgamma", "torch.special.multigammaln")
def mvlgamma(input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    d = input._data
    if d.dtype == np.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if d.dtype.kind in "iu":  # (PyTorch computes integers in the default float dtype)
        input = input.to(dtypes.get_default_dtype())  # noqa: A001
        d = input._data
    if (d <= (p - 1) / 2).any():
        raise RuntimeError("All elements must be greater than (p-1)/2")
    from ..limits import check_count

    check_count(d.size * int(p))  # p passes over the input (--max-elements bounds the work)
    return run_unary(MVLGAMMA, input, (int(p),))


@public("Tensor.mvlgamma_")
def mvlgamma_inplace(input, p):
    return input._apply_inplace(lambda old: mvlgamma(old, p))


# ------------------------------------------------------------------ Bessel functions

def _not_tiny(x):
    """PyTorch's i1/i1e backward take 0.5 (the slope at 0) wherever |x| <= eps of the dtype,
    nan included (|nan| > eps is false)."""
    return x.abs() > float(dtypes.finfo(x._data.dtype).eps)


def _i1_grad(c, g):
    x = _x(c)
    slope = i0(x) - c.result / x
    return (g * slope.masked_fill(~_not_tiny(x), 0.5),)


def _i1e_grad(c, g):
    x = _x(c)
    slope = special_i0e(x) - c.result * (x.sign() + x.reciprocal())
    return (g * slope.masked_fill(~_not_tiny(x), 0.5),)


i0 = unary("i0", "I0Backward0", _f64(_i0), lambda c, g: (g * special_i1(_x(c)),),
           "d i0(a)/da = i1(a)", extra=("torch.special.i0",))
special_i0e = unary("special_i0e", "SpecialI0EBackward0", _f64(_i0e),
                    lambda c, g: (g * (special_i1e(_x(c)) - _x(c).sign() * c.result),),
                    "d i0e(a)/da = i1e(a) - sign(a) i0e(a)", save="inputs,result",
                    names=("torch.special.i0e",), inplace=False,
                    torch_call="torch.special.i0e(a)")
special_i1 = unary("special_i1", "SpecialI1Backward0", _f64(_i1), _i1_grad,
                   "d i1(a)/da = i0(a) - i1(a)/a", save="inputs,result",
                   names=("torch.special.i1",), inplace=False, torch_call="torch.special.i1(a)")
special_i1e = unary("special_i1e", "SpecialI1EBackward0", _f64(_i1e), _i1e_grad,
                    "d i1e(a)/da = i0e(a) - i1e(a)(sign(a) + 1/a)", save="inputs,result",
                    names=("torch.special.i1e",), inplace=False,
                    torch_call="torch.special.i1e(a)")

# ------------------------------------------------------------------ torch.special's own

special_erfcx = unary("special_erfcx", "SpecialErfcxBackward0", _f64(_erfcx),
                      lambda c, g: (g * (2 * _x(c) * c.result - _TWO_OVER_SQRT_PI),),
                      "d erfcx(a)/da = 2 a erfcx(a) - 2/sqrt(pi)", save="inputs,result",
                      names=("torch.special.erfcx",), inplace=False,
                      torch_call="torch.special.erfcx(a)")


@public("torch.special.ndtr")
def special_ndtr(input):
    """(1 + erf(x/sqrt 2)) / 2, composed as PyTorch composes it (MulBackward1 on top)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"special_ndtr(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    d = input._data
    x = input if d.dtype.kind in "fV" else input.to(dtypes.get_default_dtype())
    inner = run_unary(MUL_SCALAR, x, (_m.sqrt(0.5),))
    return run_unary(MUL_SCALAR, run_unary(ADD_SCALAR, erf(inner), (1,)), (0.5,))
special_ndtri = unary("special_ndtri", "SpecialNdtriBackward0", _f64(_ndtri),
                      lambda c, g: (g * _m.sqrt(2 * _PI) * (c.result * c.result / 2).exp(),),
                      "d ndtri(p)/dp = sqrt(2 pi) exp(ndtri(p)^2/2)", save="result",
                      domain="positive_small", names=("torch.special.ndtri",), inplace=False,
                      torch_call="torch.special.ndtri(a.abs() * 0.4)")
special_log_ndtr = unary(
    "special_log_ndtr", "SpecialLogNdtrBackward0", _f64(_log_ndtr),
    lambda c, g: (g / _m.sqrt(2 * _PI) * (-(c.result + _x(c) * _x(c) / 2)).exp(),),
    "d log_ndtr(a)/da = exp(-a^2/2 - log_ndtr(a))/sqrt(2 pi)", save="inputs,result",
    names=("torch.special.log_ndtr",), inplace=False, torch_call="torch.special.log_ndtr(a)")


def _entr_fwd(a):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = -a * np.log(a)
    return np.where(a == 0, 0, np.where(a < 0, -np.inf, out)).astype(a.dtype, copy=False)


special_entr = unary("special_entr", "SpecialEntrBackward0", _f64(_entr_fwd),
                     lambda c, g: (g * -(_x(c).log() + 1),), "d entr(a)/da = -(1 + log a)",
                     domain="positive", names=("torch.special.entr",), inplace=False,
                     torch_call="torch.special.entr(a)")


def _zeta_grads(c, g):
    x, q = c.saved
    gx = None
    if c.needs(0):
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    gq = g * -x * special_zeta(x + 1, q) if c.needs(1) else None
    return gx, gq


special_zeta = binary("special_zeta", "SpecialZetaBackward0", _f64(_zeta), _zeta_grads,
                      "d zeta(x, q)/dq = -x zeta(x+1, q)", scalar_self="SpecialZetaBackward1",
                      names=("torch.special.zeta",), inplace=False, domain="above1",
                      torch_call="torch.special.zeta(torch.full_like(b, 2.5), b.abs() + 0.5)")


# ------------------------------------------------------------------ logit, nan_to_num

def _logit_fwd(a, eps):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(a / (1 - a))


def _logit_grad(c, g):
    x = _x(c)
    eps = c.meta[0]
    slope = g / (x * (1 - x))
    if eps is None:
        return (slope.masked_fill((x < 0).logical_or(x > 1), _m.nan),)
    return (slope.masked_fill((x < eps).logical_or(x > 1 - eps), 0.0),)


LOGIT = defop("logit", "LogitBackward0", _f64(_logit_fwd), _logit_grad,
              "d logit(a)/da = 1/(a(1-a)) (0 outside [eps, 1-eps])", save="inputs",
              torch_call="torch.logit(a.abs() * 0.4)")


@public("torch.logit", "Tensor.logit", "torch.special.logit")
def logit(input, eps=None):
    d = input._data
    array = d.astype(dtypes.get_default_dtype().np) if d.dtype.kind not in "fV" else None
    return run_unary(LOGIT, input, (None if eps is None else float(eps),), array)


@public("Tensor.logit_")
def logit_inplace(input, eps=None):
    return input._apply_inplace(lambda old: logit(old, eps))


def _nan_to_num_fwd(a, nan, posinf, neginf):
    return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


NAN_TO_NUM = defop("nan_to_num", "NanToNumBackward0", _nan_to_num_fwd,
                   lambda c, g: (g * isfinite_mask(_x(c)),),
                   "d nan_to_num(a)/da = 1 where a is finite, else 0", save="inputs",
                   torch_call="torch.nan_to_num(a)")


def isfinite_mask(x):
    return make(np.isfinite(x._data).astype(x._data.dtype))


@public("torch.nan_to_num", "Tensor.nan_to_num")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    d = input._data
    if d.dtype.kind not in "fV":  # integers have no nan or inf: a copy
        return make(d.copy())
    info = dtypes.finfo(d.dtype)
    return run_unary(NAN_TO_NUM, input, (0.0 if nan is None else nan,
                                         info.max if posinf is None else posinf,
                                         info.min if neginf is None else neginf))


@public("Tensor.nan_to_num_")
def nan_to_num_inplace(input, nan=0.0, posinf=None, neginf=None):
    return input._apply_inplace(lambda old: nan_to_num(old, nan, posinf, neginf))


# ------------------------------------------------------------------ lerp, addcmul, addcdiv

def _lerp_fwd(a, b, w):
    """PyTorch's two-sided formula: exact at both ends."""
    out = np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))
    return out.astype(np.result_type(a, b), copy=False)


def _lerp_grads(c, g):
    a, b, w = c.saved
    return (g * (1 - w) if c.needs(0) else None, g * w if c.needs(1) else None,
            g * (b - a) if c.needs(2) else None)


LERP = defop("lerp", "LerpBackward0", _lerp_fwd,
             lambda c, g: (g * (1 - c.meta[0]) if c.needs(0) else None,
                           g * c.meta[0] if c.needs(1) else None),
             "d lerp(a, b, w)/da = 1 - w, d/db = w", broadcast=True,
             torch_call="torch.lerp(a, b, 0.3)")
LERP_TENSOR = defop("lerp_tensor", "LerpBackward1", _lerp_fwd, _lerp_grads,
                    "d lerp(a, b, w)/da = 1 - w, d/db = w, d/dw = b - a", save="inputs",
                    broadcast=True, torch_call="torch.lerp(a, b, b * 0.5)")


def _promoted_arrays(result, *tensors):
    return tuple(t._data if t._data.dtype == result.np else t._data.astype(result.np)
                 for t in tensors)


@public("torch.lerp", "Tensor.lerp")
def lerp(input, end, weight):
    if isinstance(weight, Tensor):
        result = dtypes.result_type(input, end, weight)
        _same_dtype("lerp", input, end, weight)
        return run_op(LERP_TENSOR, (input, end, weight),
                      arrays=_promoted_arrays(result, input, end, weight))
    _same_dtype("lerp", input, end)
    return run_op(LERP, (input, end), (weight,))


def _same_dtype(fname, *tensors):
    first = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not first:
            what = "weight" if t is tensors[-1] and len(tensors) == 3 else "end"
            raise RuntimeError(f"expected dtype {first} for `{what}` but got dtype {t.dtype}")


@public("Tensor.lerp_")
def lerp_inplace(input, end, weight):
    return input._apply_inplace(lambda old: lerp(old, end, weight))


def _addc_fwd(kind):
    if kind == "mul":
        return lambda a, t1, t2, value: a + value * (t1 * t2)
    return lambda a, t1, t2, value: a + value * (t1 / t2)


def _addcmul_grads(c, g):
    a, t1, t2 = c.saved
    v = c.meta[0]
    return (g if c.needs(0) else None,
            g * t2 * v if c.needs(1) else None,
            g * t1 * v if c.needs(2) else None)


def _addcdiv_grads(c, g):
    a, t1, t2 = c.saved
    v = c.meta[0]
    return (g if c.needs(0) else None,
            g * v / t2 if c.needs(1) else None,
            -g * v * t1 / (t2 * t2) if c.needs(2) else None)


ADDCMUL = defop("addcmul", "AddcmulBackward0", _addc_fwd("mul"), _addcmul_grads,
                "d addcmul(a, x, y, v)/dx = v y", save="inputs", broadcast=True,
                torch_call="torch.addcmul(a, b, a, value=0.5)",
                save_for=((), (2,), (1,)))  # (each factor only for the other's gradient)
ADDCDIV = defop("addcdiv", "AddcdivBackward0", _addc_fwd("div"), _addcdiv_grads,
                "d addcdiv(a, x, y, v)/dx = v/y, d/dy = -v x/y^2", save="inputs", broadcast=True,
                torch_call="torch.addcdiv(a, b, a, value=0.5)")


def _addc(op, fname, input, tensor1, tensor2, value):
    for arg, pos, t in (("input", 1, input), ("tensor1", 2, tensor1), ("tensor2", 3, tensor2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, "
                            f"not {type(t).__name__}")
    result = dtypes.result_type(input, tensor1, tensor2)
    if fname == "addcdiv" and result._category < 2 and tensor1.dtype._category < 2 \
            and tensor2.dtype._category < 2:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return run_op(op, (input, tensor1, tensor2), (value,),
                  arrays=_promoted_arrays(result, input, tensor1, tensor2))


@public("torch.addcmul", "Tensor.addcmul")
def addcmul(input, tensor1, tensor2, *, value=1):
    return _addc(ADDCMUL, "addcmul", input, tensor1, tensor2, value)


@public("torch.addcdiv", "Tensor.addcdiv")
def addcdiv(input, tensor1, tensor2, *, value=1):
    return _addc(ADDCDIV, "addcdiv", input, tensor1, tensor2, value)


@public("Tensor.addcmul_")
def addcmul_inplace(input, tensor1, tensor2, *, value=1):
    return input._apply_inplace(lambda old: addcmul(old, tensor1, tensor2, value=value))


@public("Tensor.addcdiv_")
def addcdiv_inplace(input, tensor1, tensor2, *, value=1):
    return input._apply_inplace(lambda old: addcdiv(old, tensor1, tensor2, value=value))


# ------------------------------------------------------------------ torch.special aliases

def _aliases():
    from . import elementwise as E
    from . import nn, reductions

    expose("torch.special.", {
        "expit": E.sigmoid, "log1p": E.log1p, "logsumexp": reductions.logsumexp,
        "round": lambda input, *, decimals=0: E.round(input, decimals=decimals),
        "softmax": nn.softmax, "log_softmax": nn.log_softmax,
    })


_aliases()


# ------------------------------------------------------------------ fmax, fmin


def _fmax_grads(c, g):
    a, b = c.saved
    wins = (a >= b).logical_or(b.isnan())
    return (g.masked_fill(wins.logical_not(), 0.0) if c.needs(0) else None,
            g.masked_fill(wins, 0.0) if c.needs(1) else None)


def _fmin_grads(c, g):
    a, b = c.saved
    wins = (a <= b).logical_or(b.isnan())
    return (g.masked_fill(wins.logical_not(), 0.0) if c.needs(0) else None,
            g.masked_fill(wins, 0.0) if c.needs(1) else None)


def _fmax(a, b):
    """np.fmax, but a where a == b (PyTorch's fmax(0., -0.) is 0., fmax(-0., 0.) is -0.)."""
    return np.where(a == b, a, np.fmax(a, b)).astype(np.result_type(a, b), copy=False)


def _fmin(a, b):
    return np.where(a == b, a, np.fmin(a, b)).astype(np.result_type(a, b), copy=False)


fmax = binary("fmax", "FmaxBackward0", _fmax, _fmax_grads,
              "d fmax(a, b)/da = 1 where a wins (nan loses)", float_result=False, inplace=False)
fmin = binary("fmin", "FminBackward0", _fmin, _fmin_grads,
              "d fmin(a, b)/da = 1 where a wins (nan loses)", float_result=False, inplace=False)
