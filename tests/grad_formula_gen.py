"""Random calculus expressions for the `gradcli grad --formula` tests (issue 25).

Each expression is built twice from one random tree: as gradcli text, in one of the
spellings a user may type (`f(E)`, `(E).f()`, `torch.f(E)`, `torch.special.f(E)`,
`torch.nn.functional.f(E)`), and as a sympy expression written here from the functions'
mathematical definitions, independently of gradcli's own rule table. The derivative the
tests expect is sympy's derivative of that reference expression.

Arguments are kept inside each function's domain by construction (`log(1 + E**2)`,
`asin(E/(2 + E**2))`, ...), so any point of [-1.5, 1.5]^3 is valid.
"""

from __future__ import annotations

import random

import sympy

SYMBOLS = {n: sympy.Symbol(n, real=True) for n in ("x", "y", "z")}
HALF = sympy.Rational(1, 2)


def _sigmoid(a):
    return 1 / (1 + sympy.exp(-a))


def _softplus(a):
    return sympy.log(1 + sympy.exp(a))


def _ndtr(a):
    return (1 + sympy.erf(a / sympy.sqrt(2))) / 2


def _pw(*pieces):
    return sympy.Piecewise(*pieces)


# name -> (reference, domain, spellings). Domains: any; pos (> 0); unit (|a| < 1);
# gt1 (> 1); prob (0 < a < 1). Spellings: b bare, m method, t torch., s torch.special.,
# f torch.nn.functional.
UNARY = {
    "sin": (sympy.sin, "any", "bmt"), "cos": (sympy.cos, "any", "bmt"),
    "tan": (sympy.tan, "unit", "bmt"), "exp": (sympy.exp, "any", "bmt"),
    "log": (sympy.log, "pos", "bmt"), "sqrt": (sympy.sqrt, "pos", "bmt"),
    "tanh": (sympy.tanh, "any", "bmtf"), "sinh": (sympy.sinh, "any", "bmt"),
    "cosh": (sympy.cosh, "any", "bmt"), "asin": (sympy.asin, "unit", "bmt"),
    "acos": (sympy.acos, "unit", "bmt"), "atan": (sympy.atan, "any", "bmt"),
    "asinh": (sympy.asinh, "any", "bmt"), "acosh": (sympy.acosh, "gt1", "bmt"),
    "atanh": (sympy.atanh, "unit", "bmt"), "sigmoid": (_sigmoid, "any", "bmtf"),
    "expit": (_sigmoid, "any", "bs"), "softplus": (_softplus, "any", "bf"),
    "relu": (lambda a: sympy.Max(a, 0), "any", "bmtf"), "abs": (sympy.Abs, "any", "bmt"),
    "erf": (sympy.erf, "any", "bmts"), "erfc": (sympy.erfc, "any", "bmts"),
    "erfinv": (sympy.erfinv, "unit", "bmts"), "log1p": (lambda a: sympy.log(1 + a), "pos", "bmts"),
    "expm1": (lambda a: sympy.exp(a) - 1, "any", "bmts"),
    "log2": (lambda a: sympy.log(a) / sympy.log(2), "pos", "bmt"),
    "log10": (lambda a: sympy.log(a) / sympy.log(10), "pos", "bmt"),
    "exp2": (lambda a: 2 ** a, "any", "bmts"), "square": (lambda a: a * a, "any", "bmt"),
    "rsqrt": (lambda a: a ** -HALF, "pos", "bmt"), "reciprocal": (lambda a: 1 / a, "pos", "bmt"),
    "neg": (lambda a: -a, "any", "bmt"),
    "silu": (lambda a: a * _sigmoid(a), "any", "bf"),
    "gelu": (lambda a: a * _ndtr(a), "any", "bf"),
    "mish": (lambda a: a * sympy.tanh(_softplus(a)), "any", "bf"),
    "logsigmoid": (lambda a: sympy.log(_sigmoid(a)), "any", "bf"),
    "softsign": (lambda a: a / (1 + sympy.Abs(a)), "any", "bf"),
    "sinc": (lambda a: sympy.sin(sympy.pi * a) / (sympy.pi * a), "pos", "bmts"),
    "elu": (lambda a: _pw((a, a > 0), (sympy.exp(a) - 1, True)), "any", "bf"),
    "celu": (lambda a: _pw((a, a > 0), (sympy.exp(a) - 1, True)), "any", "btf"),
    "leaky_relu": (lambda a: _pw((a, a > 0), (a / 100, True)), "any", "bf"),
    "hardtanh": (lambda a: sympy.Min(1, sympy.Max(-1, a)), "any", "bf"),
    "hardsigmoid": (lambda a: sympy.Min(1, sympy.Max(0, a / 6 + HALF)), "any", "bf"),
    "hardswish": (lambda a: a * sympy.Min(6, sympy.Max(0, a + 3)) / 6, "any", "bf"),
    "softshrink": (lambda a: _pw((a - HALF, a > HALF), (a + HALF, a < -HALF), (0, True)),
                   "any", "bf"),
    "tanhshrink": (lambda a: a - sympy.tanh(a), "any", "bf"),
    "deg2rad": (lambda a: a * sympy.pi / 180, "any", "bmt"),
    "lgamma": (sympy.loggamma, "pos", "bmt"), "digamma": (sympy.digamma, "pos", "bmts"),
    "ndtr": (_ndtr, "any", "bs"), "log_ndtr": (lambda a: sympy.log(_ndtr(a)), "any", "bs"),
    "ndtri": (lambda a: sympy.sqrt(2) * sympy.erfinv(2 * a - 1), "prob", "bs"),
    "erfcx": (lambda a: sympy.exp(a * a) * sympy.erfc(a), "any", "bs"),
    "i0": (lambda a: sympy.besseli(0, a), "any", "bmts"),
    "i1": (lambda a: sympy.besseli(1, a), "any", "bs"),
    "i0e": (lambda a: sympy.exp(-sympy.Abs(a)) * sympy.besseli(0, a), "any", "bs"),
    "logit": (lambda a: sympy.log(a / (1 - a)), "prob", "bmts"),
    "entr": (lambda a: -a * sympy.log(a), "pos", "bs"),
}

# name -> (reference, domain of the second argument, spellings)
BINARY = {
    "atan2": (sympy.atan2, "pos", "bt"),
    "hypot": (lambda a, b: sympy.sqrt(a * a + b * b), "pos", "bt"),
    "maximum": (sympy.Max, "any", "bt"), "minimum": (sympy.Min, "any", "bt"),
    "xlogy": (lambda a, b: a * sympy.log(b), "pos", "bts"),
    "xlog1py": (lambda a, b: a * sympy.log(1 + b), "pos", "bs"),
    "logaddexp": (lambda a, b: sympy.log(sympy.exp(a) + sympy.exp(b)), "any", "bt"),
    "pow": (lambda a, b: a ** b, "exponent", "bt"),
}

PREFIX = {"t": "torch.", "s": "torch.special.", "f": "torch.nn.functional."}


def _in_domain(domain, text, e):
    if domain == "pos":
        return f"(1 + ({text})**2)", 1 + e ** 2
    if domain == "gt1":
        return f"(2 + ({text})**2)", 2 + e ** 2
    if domain == "unit":
        return f"(({text}) / (2 + ({text})**2))", e / (2 + e ** 2)
    if domain == "prob":
        return f"(1 / (2 + ({text})**2))", 1 / (2 + e ** 2)
    return text, e


def _spell(rng, name, spellings, args, has_tensor):
    """One spelling of a call; methods and qualified names need a tensor argument (a
    Python number is taken only by the bare name)."""
    choices = [s for s in spellings if s == "b" or has_tensor]
    kind = rng.choice(choices)
    if kind == "b":
        return f"{name}({', '.join(args)})"
    if kind == "m":
        rest = ", ".join(args[1:])
        return f"({args[0]}).{name}({rest})"
    return f"{PREFIX[kind]}{name}({', '.join(args)})"


def generate(rng: random.Random, depth: int, names=("x", "y")):
    """(gradcli text, sympy expression) of a random expression over `names`."""
    if depth == 0 or rng.random() < 0.15:
        if rng.random() < 0.8:
            n = rng.choice(names)
            return n, SYMBOLS[n]
        c = rng.choice([2, 3, 0.5, 1.5, "pi", "e"])
        return str(c), {"pi": sympy.pi, "e": sympy.E}.get(c, sympy.nsimplify(c))
    kind = rng.random()
    if kind < 0.35:
        a_text, a = generate(rng, depth - 1, names)
        b_text, b = generate(rng, depth - 1, names)
        op = rng.choice(["+", "-", "*", "/", "**"])
        if op == "/":
            return f"({a_text}) / (1 + ({b_text})**2)", a / (1 + b ** 2)
        if op == "**":
            k = rng.choice([2, 3, "0.5"])
            if k == "0.5":
                return f"(1 + ({a_text})**2)**0.5", sympy.sqrt(1 + a ** 2)
            return f"({a_text})**{k}", a ** k
        return f"({a_text}) {op} ({b_text})", {"+": a + b, "-": a - b, "*": a * b}[op]
    if kind < 0.5:
        name = rng.choice(sorted(BINARY))
        fn, domain, spellings = BINARY[name]
        a_text, a = generate(rng, depth - 1, names)
        b_text, b = generate(rng, depth - 1, names)
        if name == "pow":  # a positive base to a bounded power
            a_text, a = _in_domain("pos", a_text, a)
            b_text, b = f"(({b_text}) / (1 + ({b_text})**2))", b / (1 + b ** 2)
        else:
            b_text, b = _in_domain(domain, b_text, b)
        # torch.atan2(t, 2.0) is PyTorch's TypeError: qualified names get two tensors
        has_tensor = bool(a.free_symbols) and bool(b.free_symbols)
        return _spell(rng, name, spellings, [a_text, b_text], has_tensor), fn(a, b)
    name = rng.choice(sorted(UNARY))
    fn, domain, spellings = UNARY[name]
    a_text, a = generate(rng, depth - 1, names)
    a_text, a = _in_domain(domain, a_text, a)
    return _spell(rng, name, spellings, [a_text], bool(a.free_symbols)), fn(a)


def _at(expr, point):
    """expr at a point (name -> float), in 30-digit mpmath arithmetic (sympy's evalf of a
    derivative nested in Abs/Max can take minutes; lambdify takes milliseconds)."""
    import mpmath

    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    numbers = {"Heaviside": lambda v, h=0.5: 1 if v > 0 else (0 if v < 0 else h),
               "DiracDelta": lambda v, k=0: 0 if v != 0 else mpmath.inf}
    with mpmath.workdps(30):
        fn = sympy.lambdify(syms, expr, modules=[numbers, "mpmath"])
        return complex(fn(*[mpmath.mpf(point[s.name]) for s in syms]))


def numerically_equal(formula, reference, symbols, points, tol=1e-8) -> bool:
    """formula == reference at each point (dicts name -> float); points where the reference
    is not finite (a kink, an overflow) are skipped."""
    del symbols  # the points name them
    for point in points:
        try:
            want = _at(reference, point)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            continue
        if not (abs(want) < 1e300 and want == want):
            continue
        got = _at(formula, point)
        if not abs(got - want) <= tol * max(1.0, abs(want)):
            return False
    return True
