"""Elementwise ops against real PyTorch 2.13 on their edge values (regressions from fuzzing).

remainder/fmod/div(rounding_mode): the other-gradient -grad * a.div(b, rounding_mode), and
which tensors are saved; pow: PyTorch's special cases for the gradients (exponent 0, base 0)
and its kernels for special exponents; clamp with tensor bounds (nan, both bounds);
log1p of subnormal-sized inputs; << and >>; Python ints beyond int64.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

EDGE = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, -0.5, 1e-30, -1e-30, 1e30, 65504.0,
        float("inf"), -float("inf"), float("nan"), 1e-45]
DTYPES = ["float32", "float64"]


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t._data


def _outcome(mod, fn, arrays, dtype, grad=True):
    """(values, dtype, grad_fn name, gradients) or (error type, message)."""
    ts = [mod.tensor(a, dtype=getattr(mod, dtype), requires_grad=grad) for a in arrays]
    try:
        r = fn(mod, *ts)
        out = [_np(r).copy(), str(r.dtype), type(r.grad_fn).__name__]
        if grad and r.requires_grad:
            gs = mod.autograd.grad(r.sum(), ts, allow_unused=True)
            out.append([None if g is None else _np(g).copy() for g in gs])
        return out
    except Exception as err:  # noqa: BLE001 - compared with PyTorch's
        return [type(err).__name__, str(err)]


def _same(x, y, rtol=0.0) -> bool:
    if isinstance(x, np.ndarray):
        if not (isinstance(y, np.ndarray) and x.shape == y.shape and x.dtype == y.dtype):
            return False
        if x.dtype.kind != "f":
            return bool(np.array_equal(x, y))
        nan = np.isnan(x)
        close = np.array_equal(x[~nan], y[~nan]) if not rtol else np.allclose(x[~nan], y[~nan], rtol, 0)
        return bool(np.array_equal(nan, np.isnan(y)) and close
                    and np.array_equal(np.signbit(x[~nan]), np.signbit(y[~nan])))
    if isinstance(x, list):
        return (isinstance(y, list) and len(x) == len(y)
                and all(_same(a, b, rtol) for a, b in zip(x, y)))
    return x == y


def check(fn, *arrays, dtype="float64", grad=True, rtol=0.0):
    """Same values (bit for bit unless `rtol`), dtype, grad_fn, gradients or error as PyTorch."""
    theirs = _outcome(torch, fn, arrays, dtype, grad)
    ours = _outcome(gt, fn, arrays, dtype, grad)
    assert _same(theirs, ours, rtol), f"\ntorch: {theirs}\nours:  {ours}"


def _grid():
    a = np.repeat(EDGE, len(EDGE))
    b = np.tile(EDGE, len(EDGE))
    return list(a), list(b)


def _run(mod, code: str) -> list:
    out = []
    a = mod.tensor([1.5, -2.5, 3.0], dtype=mod.float64, requires_grad=True)
    b = mod.tensor([2.0, 2.0, -0.5], dtype=mod.float64, requires_grad=True)
    try:
        exec(code, {"torch": mod, "a": a, "b": b, "out": out})  # noqa: S102 - test snippets
    except Exception as err:  # noqa: BLE001
        out.append(f"{type(err).__name__}: {err}")
    return [str(o) for o in out]


def same_run(code: str) -> None:
    theirs, ours = _run(torch, code), _run(gt, code)
    assert theirs == ours, f"\ntorch: {theirs}\nours:  {ours}"


# ------------------------------------------------- remainder, fmod, div(rounding_mode)

ROUNDED = {
    "remainder": lambda m, a, b: m.remainder(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b),
    "floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ROUNDED))
def test_rounded_division_values_and_gradients_on_edges(name, dtype):
    a, b = _grid()
    check(ROUNDED[name], a, b, dtype=dtype)
    check(ROUNDED[name], [[1.5], [-2.5], [7.0]], [[2.0, -3.0, 0.5, float("inf")]], dtype=dtype)


@pytest.mark.parametrize("name", sorted(ROUNDED))
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_rounded_division_integers(name, dtype):
    big = [0, 1, -1, 7, -7, 2**30 + 1, -(2**30 + 1)]
    if dtype == "int64":
        big += [2**62 + 1, -(2**62 + 1), 2**63 - 1]
    for d in (1, -1, 3, -3, 7, 0):
        check(ROUNDED[name], big, [d] * len(big), dtype=dtype, grad=False)
        check(lambda m, x, y, d=d: ROUNDED[name](m, x, d), big, [0], dtype=dtype, grad=False)


@pytest.mark.parametrize("code", [
    # b not requiring grad: nothing saved, so a second backward / modifying a is fine
    "r = torch.remainder(a, b.detach()); r.sum().backward(); r.sum().backward(); out.append(a.grad)",
    "r = torch.fmod(a, b.detach()); r.sum().backward(); r.sum().backward(); out.append(a.grad)",
    "x = a * 1; r = torch.remainder(x, b.detach()); x.mul_(2); r.sum().backward(); out.append(a.grad)",
    "x = a * 1; r = torch.fmod(x, b.detach()); x.mul_(2); r.sum().backward(); out.append(a.grad)",
    # b requiring grad: a and b saved
    "r = torch.remainder(a, b); r.sum().backward(); r.sum().backward()",
    "x = a * 1; r = torch.fmod(x, b); x.mul_(2); r.sum().backward()",
    "r = torch.remainder(a, 2.0); r.sum().backward(); r.sum().backward(); out.append(a.grad)",
    # the gradient of b goes through div(rounding_mode=...) (DivBackward2): zeros beyond
    "r = torch.remainder(a, b); g = torch.autograd.grad(r.sum(), [a, b], create_graph=True);"
    " out.append(g); out.append(type(g[1].grad_fn.next_functions[1][0]).__name__);"
    " out.append(torch.autograd.grad(g[1].sum(), [a, b], allow_unused=True))",
    "r = torch.div(a, b, rounding_mode='floor'); out.append(r); r.sum().backward();"
    " out.append((a.grad, b.grad)); r.sum().backward()",
    "r = torch.div(a, b, rounding_mode=None); out.append(r); r.sum().backward(); out.append((a.grad, b.grad))",
    "r = torch.div(a, 2, rounding_mode='trunc'); out.append(r); r.sum().backward(); out.append(a.grad)",
    "r = torch.div(3, b, rounding_mode='floor'); out.append(r)",
    "x = a.clone(); x.div_(b, rounding_mode='floor'); out.append(x)",
    "torch.div(torch.tensor([True]), torch.tensor([True]), rounding_mode='trunc')",
    "torch.div(torch.tensor([5]), torch.tensor([0]), rounding_mode='floor')",
    "x = torch.tensor([7, -7]); x //= 2; out.append(x); x %= 3; out.append(x)",
])
def test_rounded_division_graph_semantics(code):
    same_run(code)


# --------------------------------------------------------------------------- pow

POW_EDGE = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, 1e-30, 1e30,
            float("inf"), -float("inf"), float("nan"), 1e-45]


@pytest.mark.parametrize("dtype", DTYPES)
def test_pow_tensor_exponent_gradients_on_edges(dtype):
    a = list(np.repeat(POW_EDGE, len(POW_EDGE)))
    b = list(np.tile(POW_EDGE, len(POW_EDGE)))
    # float64 values may differ in the last bit (PyTorch's SLEEF pow): compare float32 exactly
    if dtype == "float32":
        check(lambda m, x, y: x ** y, a, b, dtype=dtype)
    for base in ([0.0, -0.0, 0.0], [0.0, 1e-45, -0.0], [1.0, 2.0, 4.0]):
        for e in ([-0.5], [0.0], [2.0], [-1.0], [float("nan")]):
            check(lambda m, x, y: x ** y, base, e, dtype=dtype)
            check(lambda m, x, y: x ** y, base, e[0], dtype=dtype)  # 0-d exponent


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("e", [0, 1, 2, 3, -1, -2, 0.5, -0.5, 0.0, 2.0, -1.0, 1.5, True, False])
def test_pow_scalar_exponent_kernels_and_gradients(e, dtype):
    # 0.5 is sqrt, -0.5 is 1/sqrt, -1, 2, 3, -2 are products: (-0.) ** -0.5 is -inf
    vals = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, 1e-30, 1e30, float("inf"), -float("inf"),
            float("nan"), 1e-45]
    # float64 std::pow vs PyTorch's SLEEF pow may differ in the last bit
    check(lambda m, x: x ** e, vals, dtype=dtype, rtol=4e-16 if dtype == "float64" else 0.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("s", [0.0, 0, 1.0, -2.0, 2, True, False])
def test_scalar_base_pow_gradients(s, dtype):
    vals = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 1e30, float("inf"), -float("inf"), float("nan")]
    check(lambda m, x: s ** x, vals, dtype=dtype)
    check(lambda m, x: m.pow(s, x), vals, dtype=dtype)


@pytest.mark.parametrize("code", [
    "r = 2.5 ** a; x = a.detach(); a.data.mul_(1); out.append(r)",
    "r = 2.5 ** (a * 1); r.sum().backward(); r.sum().backward()",
    "x = a * 1; r = 2.5 ** x; x.mul_(2); r.sum().backward()",
    "x = a * 1; r = x ** b.detach(); r.mul_(2); r.sum().backward()",
    "g, = torch.autograd.grad((a ** 0).sum(), a, create_graph=True); out.append(g); out.append(g.requires_grad)",
    "g, = torch.autograd.grad((a ** b).sum(), a, create_graph=True); out.append(g)",
    "out.append(torch.tensor([True, False]) ** False); out.append(torch.tensor([True]) ** True)",
    "torch.tensor([True]) ** 2",
    "out.append(torch.tensor([3, 5]) ** 0.5); out.append(torch.tensor([1, 2]) ** 2)",
    "torch.tensor([2]) ** -1",
])
def test_pow_graph_semantics(code):
    same_run(code)


# ------------------------------------------------------------ clamp, tensor bounds

@pytest.mark.parametrize("code", [
    "r = torch.clamp(a, min=b); out.append(r); out.append(torch.autograd.grad(r.sum(), [a, b]))",
    "r = torch.clamp(a, max=b); out.append(r); out.append(torch.autograd.grad(r.sum(), [a, b]))",
    "r = torch.clamp(a, min=b, max=c); out.append(r); out.append(torch.autograd.grad(r.sum(), [a, b, c]))",
    "r = torch.clamp(a, min=c, max=b); out.append(r); out.append(torch.autograd.grad(r.sum(), [a, b, c]))",
    "r = torch.clamp(a, min=b); out.append([f is None for f, _ in r.grad_fn.next_functions])",
    "r = torch.clamp(a, max=b); out.append([f is None for f, _ in r.grad_fn.next_functions])",
    "x = a.clone(); x.clamp_(min=b, max=c); out.append(x)",
    "out.append(torch.clamp(torch.tensor([1, 5]), min=torch.tensor([2.5, 0.0])))",
    "out.append(torch.clamp(torch.tensor([1, 5]), min=torch.tensor([2, 0])))",
    "out.append(torch.clamp(torch.tensor([1., 5]), min=torch.tensor([2., 0], dtype=torch.float64)))",
    "out.append(torch.clamp(torch.tensor([1., 5]), min=torch.tensor(2., dtype=torch.float64)))",
    "out.append(torch.clamp(a[:2], min=torch.tensor([[1.], [2.]])))",
    # one tensor bound and one number: a 0-d tensor without grad is read as a number
    "r = torch.clamp(a, torch.tensor(1.5, dtype=torch.float64), 2); out.append(r)",
    "r = torch.clip(a, 1, torch.tensor(2.0)); out.append(r); out.append(torch.autograd.grad(r.sum(), a))",
    "r = a.clamp(torch.tensor(1), 2.5); out.append(r)",
    "x = a.detach().clone(); x.clamp_(torch.tensor(1.5), 2.5); out.append(x)",
    "out.append(torch.clamp(a, torch.tensor(1.5, requires_grad=True), 2.5))",
    "out.append(torch.clamp(a, 1.5, torch.tensor([2.0])))",
    "out.append(a.clip(torch.tensor([1.0]), 2.0))",
])
def test_clamp_with_tensor_bounds(code):
    def run(mod):
        out = []
        nan, inf = float("nan"), float("inf")
        a = mod.tensor([1., 2., nan, -0.0, 0.0, 3.0, inf], requires_grad=True)
        b = mod.tensor([1.5, inf, 0.0, 0.0, -0.0, nan, inf], requires_grad=True)
        c = mod.tensor([1.0, 5.0, 1.0, -0.0, 0.0, 2.0, inf], requires_grad=True)
        try:
            exec(code, {"torch": mod, "a": a, "b": b, "c": c, "out": out})  # noqa: S102
        except Exception as err:  # noqa: BLE001
            out.append(f"{type(err).__name__}: {err}")
        return [str(o) for o in out]

    assert run(torch) == run(gt)


# ---------------------------------------------------------------------------- log1p

@pytest.mark.parametrize("dtype", DTYPES)
def test_log1p_matches_pytorch_on_tiny_and_edge_values(dtype):
    tiny = 2.0 ** -125 if dtype == "float32" else 2.0 ** -1021
    rng = np.random.default_rng(0)
    vals = np.concatenate([rng.uniform(-4 * tiny, 4 * tiny, 500),
                           [1e-45, -1e-45, 5e-324, -5e-324, 0.0, -0.0, tiny, -tiny, 2 * tiny,
                            -1.0, -2.0, float("inf"), -float("inf"), float("nan"), 1e30, 1.0]])
    check(lambda m, x: x.log1p(), list(vals), dtype=dtype)
    # the printed text: one wrong tiny value switches the whole tensor to scientific notation
    t = torch.tensor([[1.0, float("inf"), 1e30], [2.0, 1e-45, -0.0]], dtype=getattr(torch, dtype))
    g = gt.tensor([[1.0, float("inf"), 1e30], [2.0, 1e-45, -0.0]], dtype=getattr(gt, dtype))
    assert str(g.log1p()) == str(t.log1p())


# ------------------------------------------------------- shifts, ints beyond int64

INT_VALUES = [2**62, -(2**62), 7, -7, 0, 1]
SCALARS = ["1", "3", "63", "64", "-1", "2**63", "2**64 - 1", "2**64", "-(2**63)", "-(2**63) - 1",
           "2**62 * 3", "2**40", "True", "1.5"]
OPS = ["<<", ">>", "+", "-", "*", "/", "//", "%", "**", "==", "<", "&", "|", "^"]


def _int_outcome(mod, expr: str, dtype: str):
    if dtype == "bool":
        a = mod.tensor([True, False])
    else:
        vals = INT_VALUES if dtype != "int32" else [2**30, -(2**30), 7, -7, 0, 1]
        a = mod.tensor(vals, dtype=getattr(mod, dtype))
    try:
        r = eval(expr, {"torch": mod, "a": a})  # noqa: S307 - test expressions
        return f"{r} {r.dtype}"
    except Exception as err:  # noqa: BLE001
        return f"{type(err).__name__}: {err}"


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32"])
@pytest.mark.parametrize("op", OPS)
def test_int_scalar_operators_match_pytorch(op, dtype):
    for s in SCALARS:
        for expr in (f"a {op} ({s})", f"({s}) {op} a"):
            assert _int_outcome(gt, expr, dtype) == _int_outcome(torch, expr, dtype), expr


@pytest.mark.parametrize("expr", [
    "a >> torch.tensor([0, 1, 2, 63, 64, -1])", "a << torch.tensor([0, 1, 2, 63, 64, -1])",
    "a.bitwise_left_shift(2)", "a.bitwise_right_shift(2)", "a.clone().bitwise_left_shift_(1)",
    "torch.tensor([1], dtype=torch.int32) << torch.tensor([31])",
    "torch.tensor([True]) >> torch.tensor([True])", "torch.tensor([5]) >> torch.tensor([1.5])",
    "a.clone().__ilshift__(2)", "a.clone().__irshift__(70)", "a.clone().__iand__(6)",
    "torch.add(a, 1, alpha=2**63)", "torch.add(a, 1, alpha=2**64)", "a.clone().fill_(2**63)",
    "a.clone().fill_(-(2**63) - 1)", "a.clamp(max=2**63)", "a.clamp(max=2**40)",
    "torch.where(a > 0, a, 2**63)", "a.masked_fill(a > 0, 2**63)", "a ** (2**63)",
    "a ** -(2**64)", "torch.remainder(a, 2**63)", "torch.fmod(a, 2**63)",
    "torch.div(a, 2**63, rounding_mode='floor')", "a.clone().add_(2**63)",
])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_int_scalar_functions_match_pytorch(expr, dtype):
    assert _int_outcome(gt, expr, dtype) == _int_outcome(torch, expr, dtype)


@pytest.mark.parametrize("expr", [
    "torch.clamp(a, 1.0, b)", "torch.clamp(a, b, 1.0)", "torch.clamp(a, min=1.0, max=b)",
    "torch.clamp(a, b, max=1)", "torch.clamp(a, max=b, min=1.0)", "a.clamp(1.0, b)",
    "a.clamp(b, 1.0)", "a.clamp(min=b, max=1.0)", "a.clamp(b, max=1.0)", "a.clip(1.0, b)",
    "a.clone().clamp_(1.0, b)", "a.clone().clip_(min=1.0, max=b)", "a.clamp(None, b)",
    "torch.clamp(a, None, 0.5)", "torch.clamp(a)", "a.clamp(b)",
])
def test_clamp_bound_kinds_and_errors(expr):
    def run(mod):
        a, b = mod.tensor([1.0, 2.0]), mod.tensor([1.5, 0.0])
        try:
            return str(eval(expr, {"torch": mod, "a": a, "b": b}))  # noqa: S307 - test expressions
        except Exception as err:  # noqa: BLE001
            return f"{type(err).__name__}: {err}"

    assert run(gt) == run(torch)


INPLACE_UNARY = ["log1p_", "rsqrt_", "tan_", "floor_", "ceil_", "round_", "trunc_", "sign_",
                 "negative_", "absolute_", "fix", "fix_"]
INPLACE_BINARY = ["remainder_", "fmod_", "true_divide_", "divide_", "multiply_", "subtract_",
                  "bitwise_and_", "bitwise_or_", "bitwise_xor_", "less", "greater", "less_equal",
                  "greater_equal", "not_equal"]


@pytest.mark.parametrize("kind", ["leaf", "graph", "int64", "bool", "float32"])
def test_method_aliases_and_inplace_forms(kind):
    def run(mod, code):
        if kind in ("leaf", "graph"):
            a = mod.tensor([1.5, -2.5, 0.0], requires_grad=True)
            a = a * 1 if kind == "graph" else a
            b = mod.tensor([2.0, 2.0, -0.5], requires_grad=True)
        elif kind == "bool":
            a, b = mod.tensor([True, False, True, False]), mod.tensor([True, True, False, False])
        else:
            a = mod.tensor([5, -7, 0, 3], dtype=getattr(mod, kind))
            b = mod.tensor([2, 3, -1, 1], dtype=getattr(mod, kind))
        out = []
        try:
            r = eval(code, {"a": a, "b": b})  # noqa: S307 - test expressions
            out += [str(r), str(a)]
            if r.requires_grad:
                r.sum().backward()
                out.append(str(b.grad))
        except Exception as err:  # noqa: BLE001
            out.append(f"{type(err).__name__}: {err}")
        return out

    codes = [f"a.{n}()" for n in INPLACE_UNARY]
    codes += [c for n in INPLACE_BINARY for c in (f"a.{n}(b)", f"a.{n}(2)")]
    for code in codes:
        assert run(gt, code) == run(torch, code), code
