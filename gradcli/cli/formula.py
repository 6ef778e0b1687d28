"""`gradcli grad --formula`: the derivative of EXPR as a formula, with sympy.

Imported only when `--formula` is given (sympy costs ~0.4 s to import).

EXPR is read with Python's `ast` (it is already known to be a valid gradcli expression:
it was evaluated first) and rebuilt as a sympy expression:

- every bound name is one sympy symbol standing for *one element* of its tensor, so an
  elementwise expression over vectors is written exactly as over numbers;
- a full reduction (`.sum()`, `.mean()`, `torch.sum(E)`) becomes a fresh symbol R, and
  what it reduces is remembered; the derivative of a scalar EXPR with respect to `x` is
  then d/dx of the explicit part plus, for each R, dEXPR/dR times the derivative of the
  reduced expression (summed over the elements `x` was broadcast to). So
  `(x**3).sum() + (x*w).sum()` with vectors gives `3*x**2 + w`;
- matrix products (`@`, `mm`, `mv`, `matmul`, `dot`, `.T`) are written with sympy's matrix
  symbols, whose derivative sympy knows in closed form (`x @ W @ x` gives
  `W @ x + W.T @ x`).

What has no symbolic rule here (indexing, reductions over one dim, a function sympy does not
know) is reported by name; the numbers are printed anyway. The formula is checked
numerically against the autograd gradient at the --at point.

Formulas are given twice: `text`, in the expression's notation (`(x**2).sum()`, `W.T @ x`),
and `sympy`, a string `sympy.parse_expr` reads (`sum_all(x**2)`, `transpose(W)*x`).
"""

from __future__ import annotations

import ast

import sympy
from sympy.printing.str import StrPrinter


class NoRule(Exception):
    """EXPR uses something that has no symbolic rule here (the message says what)."""


SumAll = sympy.Function("sum_all")
MeanAll = sympy.Function("mean_all")


class MatScalar(sympy.Function):
    """The number a 1x1 matrix product stands for (`x @ W @ x`), so that it can sit in
    scalar arithmetic (`(x @ W @ x)**2`, `tanh(x @ x)`): sympy's Function of a matrix
    expression is otherwise non-commutative, and a MatMul refuses it as a coefficient."""

    is_commutative = True
    is_real = True

    def _eval_is_commutative(self):
        return True

    @property
    def precedence(self):
        """Printed `x @ W @ x`, it binds like a product (parenthesized inside one, not as a
        function's argument); printed `(W @ x).sum()`, like an atom."""
        from sympy.printing.precedence import PRECEDENCE

        return PRECEDENCE["Atom"] if _sum_form(self.args[0]) else PRECEDENCE["Mul"] - 1


def _squared_norm(e):
    """(coefficient, M) when `e` is M.T @ M or trace(M.T @ M) for an M that is not a name
    (`x @ x` stays as written); None otherwise."""
    coeff = 1
    if isinstance(e, sympy.MatMul) and not all(getattr(a, "is_Matrix", False) for a in e.args):
        coeff, e = e.as_coeff_mmul()
        e = e.doit() if isinstance(e, sympy.MatMul) and len(e.args) == 1 else e
    if isinstance(e, sympy.Trace):
        e = e.arg
    if isinstance(e, sympy.MatMul) and len(e.args) == 2 and \
            isinstance(e.args[0], sympy.Transpose) and e.args[0].arg == e.args[1] and \
            not isinstance(e.args[1], sympy.MatrixSymbol):
        return coeff, e.args[1]
    return None


def _sum_form(e):
    """(coefficient, the reduced product, element count) when the 1x1 product `e` is
    ones.T @ M (@ ones): `M.sum()`; None otherwise."""
    coeff, mats = e.as_coeff_mmul() if isinstance(e, sympy.MatMul) else (1, e)
    mats = list(mats.args) if isinstance(mats, sympy.MatMul) else [mats]
    if len(mats) < 2 or not isinstance(mats[0], sympy.OneMatrix):
        return None
    count = mats[0].shape[1]
    if isinstance(mats[-1], sympy.OneMatrix) and len(mats) >= 3:
        count *= mats[-1].shape[0]
        mats = mats[:-1]
    inner = sympy.MatMul(*mats[1:]) if len(mats) > 2 else mats[1]
    return coeff, inner, count


def _relu(a):
    return sympy.Max(0, a)


def _sigmoid(a):
    return 1 / (1 + sympy.exp(-a))


def _softplus(a, beta=1, threshold=20):
    return sympy.log(1 + sympy.exp(beta * a)) / beta


def _clamp(a, lo=None, hi=None, min=None, max=None):  # noqa: A002 - torch's names
    lo = min if lo is None else lo
    hi = max if hi is None else hi
    if lo is not None and lo is not sympy.nan:
        a = sympy.Max(a, lo)
    if hi is not None and hi is not sympy.nan:
        a = sympy.Min(a, hi)
    return a


def _gelu(a, approximate="none"):
    if approximate == "tanh":
        inner = sympy.sqrt(2 / sympy.pi) * (a + sympy.Rational(44715, 1000000) * a ** 3)
        return a * (1 + sympy.tanh(inner)) / 2
    return a * (1 + sympy.erf(a / sympy.sqrt(2))) / 2


def _piecewise(*pieces):
    return sympy.Piecewise(*pieces)


def _elu(a, alpha=1, inplace=False):
    return _piecewise((a, a > 0), (alpha * (sympy.exp(a) - 1), True))


_ONE_HUNDREDTH = sympy.Rational(1, 100)
_SELU_ALPHA = sympy.Float("1.6732632423543772848170429916717", 17)
_SELU_SCALE = sympy.Float("1.0507009873554804934193349852946", 17)


def _hardtanh(a, min_val=-1, max_val=1, inplace=False):
    # autograd's slope is 1 strictly inside (min_val, max_val), 0 at and beyond the ends
    return _piecewise((min_val, a <= min_val), (max_val, a >= max_val), (a, True))


def _ndtr(a):
    return (1 + sympy.erf(a / sympy.sqrt(2))) / 2


class _Step(sympy.Function):
    """A piecewise-constant function (floor, round, ...): its derivative is 0 wherever it
    exists, which is what autograd sends everywhere."""

    def fdiff(self, argindex=1):
        return sympy.S.Zero


#: gradcli name -> the step function sympy lacks a derivative for (printed by that name)
STEPS = {name: type(name, (_Step,), {}) for name in ("floor", "ceil", "round", "trunc")}
STEP_NUMBERS = {"floor": lambda v: float(__import__("math").floor(v)),
                "ceil": lambda v: float(__import__("math").ceil(v)),
                "round": lambda v: float(round(v)),  # half to even, as torch.round
                "trunc": lambda v: float(int(v))}


def _step(name):
    def rule(a, *rest, **kw):
        if rest or any(v not in (0, None) for v in kw.values()):
            raise TypeError(name)  # round(x, decimals=2): no rule
        return STEPS[name](a)
    return rule


#: gradcli function or method name -> sympy builder (the symbolic rules)
FUNCTIONS = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "exp": sympy.exp,
    "log": sympy.log, "sqrt": sympy.sqrt, "tanh": sympy.tanh, "sinh": sympy.sinh,
    "cosh": sympy.cosh, "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan,
    "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan,
    "asinh": sympy.asinh, "acosh": sympy.acosh, "atanh": sympy.atanh,
    "arcsinh": sympy.asinh, "arccosh": sympy.acosh, "arctanh": sympy.atanh,
    "atan2": sympy.atan2, "arctan2": sympy.atan2,
    "log2": lambda a: sympy.log(a, 2), "log10": lambda a: sympy.log(a, 10),
    "log1p": lambda a: sympy.log(1 + a), "expm1": lambda a: sympy.exp(a) - 1,
    "exp2": lambda a: 2 ** a, "square": lambda a: a ** 2, "rsqrt": lambda a: 1 / sympy.sqrt(a),
    "reciprocal": lambda a: 1 / a, "neg": lambda a: -a, "negative": lambda a: -a,
    "abs": sympy.Abs, "absolute": sympy.Abs, "sign": sympy.sign, "sgn": sympy.sign,
    "erf": sympy.erf, "erfc": sympy.erfc, "erfinv": sympy.erfinv,
    "sigmoid": _sigmoid, "expit": _sigmoid, "logit": lambda a: sympy.log(a / (1 - a)),
    "relu": _relu, "softplus": _softplus, "silu": lambda a: a * _sigmoid(a),
    "logsigmoid": lambda a: -_softplus(-a), "softsign": lambda a: a / (1 + sympy.Abs(a)),
    "gelu": _gelu, "mish": lambda a: a * sympy.tanh(_softplus(a)),
    "pow": lambda a, b: a ** b, "float_power": lambda a, b: a ** b,
    "add": lambda a, b, alpha=1: a + alpha * b, "sub": lambda a, b, alpha=1: a - alpha * b,
    "subtract": lambda a, b, alpha=1: a - alpha * b,
    "mul": lambda a, b: a * b, "multiply": lambda a, b: a * b,
    "div": lambda a, b: a / b, "divide": lambda a, b: a / b, "true_divide": lambda a, b: a / b,
    "maximum": sympy.Max, "minimum": sympy.Min, "clamp": _clamp, "clip": _clamp,
    "hypot": lambda a, b: sympy.sqrt(a ** 2 + b ** 2),
    "xlogy": lambda a, b: a * sympy.log(b), "sinc": lambda a: sympy.sin(sympy.pi * a) / (sympy.pi * a),
    "deg2rad": lambda a: a * sympy.pi / 180, "rad2deg": lambda a: a * 180 / sympy.pi,
    "lgamma": sympy.loggamma, "digamma": sympy.digamma, "gammaln": sympy.loggamma,
    "cbrt": sympy.cbrt,
    "psi": sympy.digamma, "polygamma": lambda n, a: sympy.polygamma(n, a),
    "elu": _elu, "selu": lambda a, inplace=False: _SELU_SCALE * _elu(a, _SELU_ALPHA),
    "celu": lambda a, alpha=1, inplace=False: _piecewise(
        (a, a > 0), (alpha * (sympy.exp(a / alpha) - 1), True)),
    "leaky_relu": lambda a, negative_slope=_ONE_HUNDREDTH, inplace=False: _piecewise(
        (a, a > 0), (negative_slope * a, True)),
    "hardtanh": _hardtanh, "relu6": lambda a, inplace=False: _hardtanh(a, 0, 6),
    "hardsigmoid": lambda a, inplace=False: _piecewise(
        (0, a <= -3), (1, a >= 3), (a / 6 + sympy.S.Half, True)),
    "hardswish": lambda a, inplace=False: _piecewise(
        (0, a < -3), (a * (a + 3) / 6, a <= 3), (a, True)),
    "softshrink": lambda a, lambd=sympy.S.Half: _piecewise(
        (a - lambd, a > lambd), (a + lambd, a < -lambd), (0, True)),
    "hardshrink": lambda a, lambd=sympy.S.Half: _piecewise(
        (a, a > lambd), (a, a < -lambd), (0, True)),
    "tanhshrink": lambda a: a - sympy.tanh(a),
    "ndtr": _ndtr, "log_ndtr": lambda a: sympy.log(_ndtr(a)),
    "ndtri": lambda a: sympy.sqrt(2) * sympy.erfinv(2 * a - 1),
    "erfcx": lambda a: sympy.exp(a ** 2) * sympy.erfc(a),
    "entr": lambda a: -a * sympy.log(a),
    "i0": lambda a: sympy.besseli(0, a), "i1": lambda a: sympy.besseli(1, a),
    "i0e": lambda a: sympy.exp(-sympy.Abs(a)) * sympy.besseli(0, a),
    "i1e": lambda a: sympy.exp(-sympy.Abs(a)) * sympy.besseli(1, a),
    "xlog1py": lambda a, b: a * sympy.log(1 + b),
    "logaddexp": lambda a, b: sympy.log(sympy.exp(a) + sympy.exp(b)),
    "logaddexp2": lambda a, b: sympy.log(2 ** a + 2 ** b, 2),
    "ldexp": lambda a, b: a * 2 ** b,
    "copysign": lambda a, b: sympy.Abs(a) * sympy.sign(b),
    "fmax": sympy.Max, "fmin": sympy.Min,
    "clamp_min": lambda a, min: sympy.Max(a, min), "clamp_max": lambda a, max: sympy.Min(a, max),
    "remainder": lambda a, b: a - b * STEPS["floor"](a / b),
    "fmod": lambda a, b: a - b * STEPS["trunc"](a / b),
    "frac": lambda a: a - STEPS["trunc"](a),
    "floor": _step("floor"), "ceil": _step("ceil"), "round": _step("round"),
    "trunc": _step("trunc"), "fix": _step("trunc"),
    "rsub": lambda a, b, alpha=1: b - alpha * a,
    "addcmul": lambda a, b, c, value=1: a + value * b * c,
    "addcdiv": lambda a, b, c, value=1: a + value * b / c,
    "lerp": lambda a, b, w: a + w * (b - a),
    "positive": lambda a: a, "clone": lambda a, memory_format=None: a,
    "alias_copy": lambda a: a, "resolve_conj": lambda a: a, "resolve_neg": lambda a: a,
    "conj": lambda a: a, "conj_physical": lambda a: a, "real": lambda a: a,
}
REDUCTIONS = ("sum", "mean")
MATMULS = ("matmul", "mm", "mv", "dot", "inner", "__matmul__")
CONSTANTS = {"pi": sympy.pi, "e": sympy.E, "inf": sympy.oo, "nan": sympy.nan}
MODULES = ("torch", "F", "special", "nn", "functional", "math")


class Val:
    """A symbolic value: a sympy expression and the shape of the tensor it stands for
    (an elementwise expression stands for every element of that shape)."""

    __slots__ = ("e", "shape", "matrix")

    def __init__(self, e, shape, matrix=False):
        self.e = e
        self.shape = tuple(shape)
        self.matrix = matrix


def _broadcast(*shapes):
    out = []
    for dims in _zip_right(shapes):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise NoRule("shapes that do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(reversed(out))


def _zip_right(shapes):
    n = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (n - len(s)) + tuple(s) for s in shapes]
    return [tuple(p[i] for p in padded) for i in reversed(range(n))]


def _number(v):
    if isinstance(v, bool):
        return sympy.Integer(int(v))
    if isinstance(v, int):
        return sympy.Integer(v)
    text = repr(v)
    if v != v:
        return sympy.nan
    if v in (float("inf"), float("-inf")):
        return sympy.oo if v > 0 else -sympy.oo
    if len(text) <= 8 and "e" not in text:
        return sympy.Rational(text)
    return sympy.Float(v, 17)


class Builder:
    """EXPR -> Val, recording each full reduction as a symbol."""

    def __init__(self, shapes: dict, matrix: bool):
        self.shapes = shapes
        self.matrix = matrix
        self.symbols = {}
        for name, shape in shapes.items():
            if matrix and len(shape) in (1, 2):
                rows, cols = (shape[0], 1) if len(shape) == 1 else shape
                self.symbols[name] = sympy.MatrixSymbol(name, rows, cols)
            else:
                self.symbols[name] = sympy.Symbol(name, real=True)
        self.reductions = {}  # R symbol -> (kind, Val reduced)

    def build(self, text: str) -> Val:
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError:
            raise NoRule("an expression Python's parser does not read") from None
        return self.node(tree.body)

    # ------------------------------------------------------------ nodes
    def node(self, n) -> Val:
        method = getattr(self, "n_" + type(n).__name__, None)
        if method is None:
            raise NoRule(f"{type(n).__name__.lower()} expressions")
        return method(n)

    def n_Constant(self, n):
        if isinstance(n.value, (int, float)):
            return Val(_number(n.value), ())
        raise NoRule(f"the constant {n.value!r}")

    def n_Name(self, n):
        if n.id in self.symbols:
            shape = self.shapes[n.id]
            return Val(self.symbols[n.id], shape, self.matrix and len(shape) in (1, 2))
        if n.id in CONSTANTS:
            return Val(CONSTANTS[n.id], ())
        raise NoRule(f"the name {n.id}")

    def n_UnaryOp(self, n):
        v = self.node(n.operand)
        if isinstance(n.op, ast.USub):
            return Val(-v.e, v.shape, v.matrix)
        if isinstance(n.op, ast.UAdd):
            return v
        raise NoRule(f"the operator {type(n.op).__name__}")

    def n_BinOp(self, n):
        a, b = self.node(n.left), self.node(n.right)
        op = type(n.op).__name__
        if op == "MatMult":
            return self.matmul(a, b)
        if op == "BitXor":
            raise NoRule("`^` (bitwise xor; write ** for powers)")
        if a.matrix and op == "Pow" and not b.matrix and b.e == 2:
            return self.matrix_square(a)
        if a.matrix or b.matrix:
            return self.matrix_arith(op, a, b)
        shape = _broadcast(a.shape, b.shape)
        if op == "Add":
            return Val(a.e + b.e, shape)
        if op == "Sub":
            return Val(a.e - b.e, shape)
        if op == "Mult":
            return Val(a.e * b.e, shape)
        if op == "Div":
            return Val(a.e / b.e, shape)
        if op == "Pow":
            return Val(a.e ** b.e, shape)
        raise NoRule(f"the operator {op}")

    def n_Attribute(self, n):
        if n.attr in ("T", "mT") and not isinstance(n.value, ast.Name) or \
                (n.attr in ("T", "mT") and n.value.id not in MODULES):
            v = self.node(n.value)
            if not v.matrix:
                if len(v.shape) < 2:
                    return v
                raise NoRule(".T outside a matrix product")
            return Val(v.e.T, tuple(reversed(v.shape)), True)
        raise NoRule(f"the attribute .{n.attr}")

    def n_Call(self, n):
        f = n.func
        if isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and
                                                 f.value.id in MODULES) and \
                not (isinstance(f.value, ast.Attribute) and f.value.attr in MODULES):
            name = f.attr
            args = [f.value] + list(n.args)  # a method: self is the first argument
        elif isinstance(f, ast.Attribute):
            name = f.attr
            args = list(n.args)
        elif isinstance(f, ast.Name):
            name = f.id
            args = list(n.args)
        else:
            raise NoRule("a call of a computed function")
        kwargs = {}
        for k in n.keywords:
            if k.arg is None:
                raise NoRule("**kwargs")
            kwargs[k.arg] = k.value
        if name in REDUCTIONS:
            if len(args) != 1 or kwargs:
                raise NoRule(f"{name} over a dim (only the full {name}() has a rule here)")
            return self.reduce(name, self.node(args[0]))
        if name in MATMULS:
            if len(args) != 2 or kwargs:
                raise NoRule(name)
            return self.matmul(self.node(args[0]), self.node(args[1]))
        if name in ("t", "transpose") and len(args) == 1:
            return self.n_Attribute(ast.Attribute(value=args[0], attr="T"))
        rule = FUNCTIONS.get(name)
        if rule is None:
            raise NoRule(name)
        vals = [self.node(a) for a in args]
        kw = {}
        for k, v in kwargs.items():
            if isinstance(v, ast.Constant) and isinstance(v.value, (str, bool)):
                kw[k] = v.value
            else:
                kw[k] = self.node(v).e if not _is_none(v) else None
        if len(vals) == 1 and vals[0].matrix and name == "square" and not kw:
            return self.matrix_square(vals[0])
        if len(vals) == 2 and vals[0].matrix and name == "pow" and not vals[1].matrix and \
                vals[1].e == 2:
            return self.matrix_square(vals[0])
        if any(v.matrix for v in vals):
            raise NoRule(f"{name} of a matrix product (no closed form here)")
        try:
            e = rule(*[v.e for v in vals], **kw)
        except TypeError:
            raise NoRule(f"{name} with these arguments") from None
        return Val(e, _broadcast(*[v.shape for v in vals]))

    # ------------------------------------------------------------ pieces
    def reduce(self, kind, v: Val) -> Val:
        if v.matrix and isinstance(v.e, sympy.HadamardPower):
            # ((W @ x - b)**2).sum(): the squared norm M.T @ M (a trace for a matrix M),
            # whose matrix derivative sympy knows
            base = v.e.base
            rows, cols = base.shape
            total = base.T * base if cols == 1 else sympy.Trace(base.T * base)
            if kind == "mean":
                total = total / (rows * cols)
            return self.matrix_scalar(total)
        if v.matrix:
            rows, cols = v.e.shape
            total = sympy.OneMatrix(1, rows) * v.e * sympy.OneMatrix(cols, 1)
            if kind == "mean":
                total = total / (rows * cols)
            return self.matrix_scalar(total)
        if not v.shape:
            return v  # the sum of one element is the element
        r = sympy.Dummy(f"R{len(self.reductions)}", real=True)
        self.reductions[r] = (kind, v)
        return Val(r, ())

    def matrix_square(self, a: Val) -> Val:
        """The elementwise square of a matrix expression: only its full sum or mean has a
        rule here (the squared norm)."""
        if isinstance(a.e, sympy.HadamardPower):
            raise NoRule("a power of a squared matrix product")
        return Val(sympy.HadamardPower(a.e, 2), a.shape, True)

    def matmul(self, a: Val, b: Val) -> Val:
        if not (self.matrix and a.matrix and b.matrix):
            raise NoRule("a matrix product with a non-matrix operand")
        if isinstance(a.e, sympy.HadamardPower) or isinstance(b.e, sympy.HadamardPower):
            raise NoRule("a matrix product of an elementwise square")
        if len(a.shape) == 1 and len(b.shape) == 1:
            return self.matrix_scalar(a.e.T * b.e)
        if len(a.shape) == 1:
            return Val(b.e.T * a.e, (b.shape[1],), True)
        if len(b.shape) == 1:
            return Val(a.e * b.e, (a.shape[0],), True)
        return Val(a.e * b.e, (a.shape[0], b.shape[1]), True)

    def matrix_scalar(self, e) -> Val:
        """A 1x1 matrix product as a scalar symbol R, remembered like a reduction: the
        chain rule through it is dEXPR/dR times sympy's matrix derivative of the product."""
        r = sympy.Dummy(f"R{len(self.reductions)}", real=True)
        self.reductions[r] = ("matrix", Val(e, (), True))
        return Val(r, ())

    def matrix_arith(self, op, a: Val, b: Val):
        if isinstance(a.e, sympy.HadamardPower) or isinstance(b.e, sympy.HadamardPower):
            raise NoRule("arithmetic on an elementwise square of a matrix product (only its "
                         "sum() or mean() has a rule here)")
        if op in ("Add", "Sub") and a.matrix and b.matrix and a.shape == b.shape:
            return Val(a.e + b.e if op == "Add" else a.e - b.e, a.shape, True)
        scalar = a if not a.matrix else b
        mat = b if scalar is a else a
        if not scalar.shape and op == "Mult" and not scalar.matrix:
            return Val(scalar.e * mat.e, mat.shape, True)
        if not scalar.shape and op == "Div" and mat is a:
            return Val(mat.e / scalar.e, mat.shape, True)
        raise NoRule("elementwise arithmetic on a matrix product (no closed form here)")


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


# ---------------------------------------------------------------- derivative

def _uses_matrices(text: str) -> bool:
    return "@" in text or any(f"{m}(" in text for m in MATMULS) or ".T" in text or ".t(" in text


def derive(text: str, shapes: dict, wrt: list) -> dict:
    """{name: (sympy expression, None) or (None, reason)}: the derivative of EXPR with
    respect to each wrt name (elementwise where EXPR is not a scalar)."""
    matrix = _uses_matrices(text)
    try:
        b = Builder(shapes, matrix)
        v = b.build(text)
    except NoRule as e:
        reason = f"no symbolic rule for {e}"
        return {name: (None, reason) for name in wrt}
    import time

    _warm_simplify()
    deadline = time.process_time() + SIMPLIFY_SECONDS
    out = {}
    for name in wrt:
        try:
            if v.matrix:
                raise NoRule("the derivative of a non-scalar matrix product (a Jacobian, "
                             "not one formula per element)")
            if isinstance(b.symbols[name], sympy.MatrixSymbol):
                d = _matrix_name_derivative(b, v, name, deadline - time.process_time())
            else:
                d = _derivative(b, v, name)
                d = _restore(b, d, ("sum", "mean"))
                d = _torch_step(_simplify(d, deadline - time.process_time()))
                d = _restore(b, d)
            out[name] = (d, None)
        except NoRule as e:
            out[name] = (None, f"no symbolic rule for {e}")
    return out


#: CPU seconds sympy.simplify may take for all the formulas of one command (it is exponential
#: on some expressions): past it, a formula is printed as differentiated, cheaply tidied
SIMPLIFY_SECONDS = 0.4


def _warm_simplify():
    """sympy.simplify's first call loads its helpers (~0.15 s of CPU): pay that before the
    budget starts, so the budget measures the simplification alone and the same expression
    gets the same formula whatever the load (and whether it is the first of a command)."""
    t = sympy.Symbol("t", real=True)
    _with_deadline(lambda: sympy.simplify(sympy.sin(t) * sympy.exp(t) + t), 2.0)


class _TooSlow(Exception):
    pass


def _torch_step(d):
    """Heaviside(x) (1/2 at 0 in sympy) as Heaviside(x, 0): autograd's relu, abs and
    clamp send 0 at the kink, so the formula must too."""
    d = d.replace(lambda e: isinstance(e, sympy.Heaviside) and
                  (len(e.args) == 1 or e.args[1] == sympy.S.Half),
                  lambda e: sympy.Heaviside(e.args[0], 0))
    if d.has(sympy.DiracDelta):  # sign(x)' is 0 for autograd, a delta for sympy
        d = d.replace(lambda e: isinstance(e, sympy.DiracDelta), lambda e: sympy.S.Zero)
    return d


def _simplify(d, seconds=SIMPLIFY_SECONDS):
    """The shorter of d (cheaply tidied) and sympy.simplify(d) within `seconds`."""
    try:
        tidy = sympy.factor_terms(d)
    except Exception:  # noqa: BLE001 - tidying is a nicety
        tidy = d
    if sympy.count_ops(tidy) > 60 or seconds < 0.01:
        return tidy
    simplified = _with_deadline(lambda: sympy.simplify(tidy), seconds)
    if simplified is None:
        return tidy
    return simplified if sympy.count_ops(simplified) <= sympy.count_ops(tidy) else tidy


def _with_deadline(fn, seconds):
    """fn() or None when it takes longer than `seconds` of this process's CPU time (SIGPROF;
    main thread only). CPU time, not wall time: on a loaded machine the same expression
    gets the same simplification, so the printed formula does not depend on the load."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "setitimer"):
        return None

    def stop(signum, frame):
        raise _TooSlow()

    old = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        return fn()
    except _TooSlow:
        return None
    except Exception:  # noqa: BLE001 - simplification is a nicety
        return None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _chain_terms(b: Builder, v: Val):
    """(kind, inner, dEXPR/dR) for each reduction R that v depends on with a nonzero
    outer derivative: the chain-rule terms both derivative builders add."""
    for r, (kind, inner) in list(b.reductions.items()):
        if v.e.has(r):
            outer = sympy.diff(v.e, r)
            if outer != 0:
                yield kind, inner, outer


def _derivative(b: Builder, v: Val, name: str):
    """d v / d name, elementwise; reductions' chain terms added."""
    sym = b.symbols[name]
    target = tuple(b.shapes[name])
    d = sympy.diff(v.e, sym)
    for kind, inner, outer in _chain_terms(b, v):
        if kind == "matrix":  # a 1x1 matrix product of a scalar name
            d = d + outer * _matrix_part(b, inner, name)
            continue
        part = _derivative(b, inner, name)
        if part == 0:
            continue
        if kind == "mean":
            part = part / _numel(inner.shape)
        part = _sum_to(b, part, inner.shape, target)
        d = d + outer * part
    return d


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _sum_to(b: Builder, part, shape, target):
    """The elementwise derivative `part` (over `shape`) summed to the wrt name's shape."""
    if _numel(shape) == _numel(target) and _broadcast(shape, target) == tuple(shape):
        return part
    if not target or _numel(target) == 1:
        r = sympy.Dummy(f"R{len(b.reductions)}", real=True)
        b.reductions[r] = ("sum", Val(part, shape))
        return r
    raise NoRule("a sum over broadcast dims of part of a tensor")


def _restore(b: Builder, d, kinds=("sum", "mean", "matrix")):
    """Put each reduction symbol of `kinds` back as sum_all(E) / mean_all(E) / the matrix
    product it stands for."""
    wrappers = {"sum": SumAll, "mean": MeanAll, "matrix": MatScalar}
    for _ in range(len(b.reductions) + 1):
        free = [r for r in b.reductions if d.has(r) and b.reductions[r][0] in kinds]
        if not free:
            break
        d = d.xreplace({r: wrappers[b.reductions[r][0]](b.reductions[r][1].e) for r in free})
    return d


def _matrix_name_derivative(b: Builder, v: Val, name: str, seconds: float):
    """d EXPR / d name for a vector or matrix name: EXPR is scalar arithmetic over 1x1
    matrix products R (`(x @ W @ x)**2`), so the derivative is the sum of dEXPR/dR times
    sympy's matrix derivative of each R."""
    sym = b.symbols[name]
    terms = []
    for kind, inner, outer in _chain_terms(b, v):
        if kind != "matrix":
            raise NoRule(f"{kind}() of an elementwise expression beside a matrix product")
        part = _matrix_part(b, inner, name)
        if part == 0 or isinstance(part, sympy.ZeroMatrix):
            continue
        outer = _restore(b, _simplify(outer, seconds / 2))
        terms.append(part if outer == 1 else outer * part)
    if not terms:
        return sympy.ZeroMatrix(*sym.shape)
    d = terms[0]
    for t in terms[1:]:
        d = d + t
    return d


def _matrix_part(b: Builder, inner: Val, name: str):
    """sympy's derivative of the 1x1 matrix product `inner` with respect to `name`: a
    matrix of name's shape, or for a scalar name a scalar."""
    e = inner.e
    if any(e.has(r) for r in b.reductions):
        raise NoRule("a matrix product of another matrix product's value")
    sym = b.symbols[name]
    if not e.has(sym):
        return sympy.ZeroMatrix(*sym.shape) if isinstance(sym, sympy.MatrixSymbol) else 0
    d = e.diff(sym)
    if not isinstance(sym, sympy.MatrixSymbol):
        if isinstance(d, sympy.ZeroMatrix) or d == 0:
            return 0
        return MatScalar(d) if getattr(d, "is_Matrix", False) else d
    d = _as_matrix(d, sym.shape)
    if len(b.shapes[name]) == 1 and d.shape == (1, b.shapes[name][0]):
        d = d.T
    return d


def _as_matrix(d, shape):
    """A matrix expression of `shape` for sympy's derivative `d`: sympy gives the
    derivative of `u.T @ A @ B @ v` with respect to a non-square A as an array expression
    (a permuted tensor product of two columns); that is the outer product of the two."""
    from sympy.tensor.array.expressions import ArrayAdd, ArrayTensorProduct, PermuteDims

    if getattr(d, "is_Matrix", False) and tuple(d.shape) == tuple(shape):
        return d
    if isinstance(d, ArrayAdd):
        terms = [_as_matrix(t, shape) for t in d.args]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total.doit() if hasattr(total, "doit") else total
    perm = None
    if isinstance(d, PermuteDims):
        perm, d = d.permutation, d.expr
    if isinstance(d, ArrayTensorProduct) and len(d.args) == 2 and \
            all(getattr(a, "is_Matrix", False) and a.shape[1] == 1 for a in d.args):
        a, c = d.args
        # axes 0, 1 are a's (rows, 1), axes 2, 3 c's; output axis i comes from axis perm(i)
        source = [perm(i) if perm is not None else i for i in range(4)]
        sizes = [a.shape[0], 1, c.shape[0], 1]
        out_shape = tuple(sizes[k] for k in source)
        if out_shape == tuple(shape) + (1, 1):
            if source[0] == 0 and source[1] == 2:
                return a * c.T
            if source[0] == 2 and source[1] == 0:
                return c * a.T
    raise NoRule("a matrix derivative sympy gives only as an array expression")


# ---------------------------------------------------------------- printing

class TextPrinter(StrPrinter):
    """sympy -> the expression's own notation (gradcli/PyTorch spelling)."""

    def _print_Function(self, expr):
        name = expr.func.__name__
        if name in ("sum_all", "mean_all"):
            inner = self._print(expr.args[0])
            if not expr.args[0].is_Symbol:
                inner = f"({inner})"
            return f"{inner}.{name[:-4]}()"
        return super()._print_Function(expr)

    def _print_Abs(self, expr):
        return f"abs({self._print(expr.args[0])})"

    def _print_MatScalar(self, expr):
        """A 1x1 product as EXPR wrote it: `x @ W @ x`, `(W @ x).sum()`,
        `((W @ x - b)**2).sum()`."""
        e = expr.args[0]
        squared = _squared_norm(e)
        if squared is not None:
            coeff, base = squared
            text = f"(({self._print(base)})**2)"
            if coeff != 1:
                return f"{text}.mean()" if coeff * base.shape[0] * base.shape[1] == 1 else \
                    f"{self._print(coeff)}*{text}.sum()"
            return f"{text}.sum()"
        reduced = _sum_form(e)
        if reduced is not None:
            coeff, inner, count = reduced
            text = self._print(inner)
            if not isinstance(inner, sympy.MatrixSymbol):
                text = f"({text})"
            if coeff * count == 1 and count != 1:
                return f"{text}.mean()"
            return f"{text}.sum()" if coeff == 1 else f"{self._print(coeff)}*{text}.sum()"
        coeff, mats = e.as_coeff_mmul() if isinstance(e, sympy.MatMul) else (1, e)
        mats = list(mats.args) if isinstance(mats, sympy.MatMul) else [mats]
        if isinstance(mats[0], sympy.Transpose) and isinstance(mats[0].arg, sympy.MatrixSymbol) \
                and mats[0].arg.shape[1] == 1:
            mats[0] = mats[0].arg  # a 1-d vector on the left: `x @ W`, not `x.T @ W`
        text = " @ ".join(self._print(m) if not isinstance(m, sympy.MatAdd) else
                          f"({self._print(m)})" for m in mats)
        return text if coeff == 1 else f"{self._print(coeff)}*{text}"

    def _print_Heaviside(self, expr):
        at_zero = self._print(expr.args[1]) if len(expr.args) > 1 else "0.5"
        return f"heaviside({self._print(expr.args[0])}, {at_zero})"

    def _print_OneMatrix(self, expr):
        rows, cols = expr.shape
        if rows == 1 or cols == 1:
            return f"ones({max(rows, cols)})"  # a vector of ones
        return f"ones({rows}, {cols})"

    def _scalar(self, a) -> str:
        """A scalar factor of a matrix product, parenthesized where it binds looser."""
        from sympy.printing.precedence import PRECEDENCE

        return self.parenthesize(a, PRECEDENCE["Mul"], strict=True)

    def _print_MatMul(self, expr):
        args = list(expr.args)
        scalars = [a for a in args if not getattr(a, "is_Matrix", False)]
        mats = [a for a in args if getattr(a, "is_Matrix", False)]
        last = mats[-1] if mats else None
        if len(mats) >= 2 and last.shape[0] == 1 and \
                isinstance(last, (sympy.Transpose, sympy.OneMatrix)) and \
                sympy.MatMul(*mats[:-1]).shape[1] == 1:
            # a column times a row: the outer product of two vectors (`x @ x.T` of a 1-d x
            # would be a number in torch)
            row = last.arg if isinstance(last, sympy.Transpose) else last
            column = mats[0] if len(mats) == 2 else sympy.MatMul(*mats[:-1])
            out = f"outer({self._print(column)}, {self._print(row)})"
        else:
            parts = []
            for a in mats:
                text = self._print(a)
                if isinstance(a, sympy.MatAdd):
                    text = f"({text})"
                parts.append(text)
            out = " @ ".join(parts)
        if len(scalars) == 1 and scalars[0].is_Number and scalars[0] < 0:
            # -b, -2*W @ x: the sum's printer turns a leading minus into " - "
            magnitude = -scalars[0]
            return f"-{out}" if magnitude == 1 else f"-{self._print(magnitude)}*{out}"
        return "*".join([self._scalar(a) for a in scalars] + [out]) if scalars else out

    def _print_Transpose(self, expr):
        inner = self._print(expr.arg)
        if not isinstance(expr.arg, sympy.MatrixSymbol):
            inner = f"({inner})"
        return f"{inner}.T"

    def _print_Piecewise(self, expr):
        """where(cond, a, where(cond2, b, c)), as torch writes a piecewise function."""
        *pieces, (last, last_cond) = expr.args
        text = self._print(last)
        if last_cond != sympy.true:
            text = f"where({self._print(last_cond)}, {text}, nan)"
        for value, cond in reversed(pieces):
            text = f"where({self._print(cond)}, {self._print(value)}, {text})"
        return text

    def _print_besseli(self, expr):
        order, arg = expr.args
        if order in (0, 1):
            return f"i{order}({self._print(arg)})"
        return super()._print_Function(expr)

    def _print_loggamma(self, expr):
        return f"lgamma({self._print(expr.args[0])})"

    def _print_Max(self, expr):
        if len(expr.args) == 2:
            return f"maximum({self._print(expr.args[0])}, {self._print(expr.args[1])})"
        return super()._print_Max(expr)

    def _print_Min(self, expr):
        if len(expr.args) == 2:
            return f"minimum({self._print(expr.args[0])}, {self._print(expr.args[1])})"
        return super()._print_Min(expr)

    def _print_Exp1(self, expr):
        return "e"


class SympyPrinter(StrPrinter):
    """sympy -> a string sympy.parse_expr reads back (matrix transposes as transpose())."""

    def _print_Transpose(self, expr):
        return f"transpose({self._print(expr.arg)})"

    def _print_MatScalar(self, expr):
        return self._print(expr.args[0])

    def _print_OneMatrix(self, expr):
        return f"ones_matrix({expr.shape[0]}, {expr.shape[1]})"  # a function to parse_expr

    def _print_MatMul(self, expr):
        return "*".join(self.parenthesize(a, 50) for a in expr.args)


#: higher degree first, as a calculus text writes it: `3*x**2 + w`, not `w + 3*x**2`
_ORDER = {"order": "grlex"}


def as_text(d) -> str:
    return TextPrinter(_ORDER).doprint(d)


def as_sympy(d) -> str:
    return SympyPrinter(_ORDER).doprint(d)


# ---------------------------------------------------------------- numbers

def evaluate(d, b_shapes: dict, values: dict, names_matrix: bool):
    """The formula's numbers at the point: a numpy array."""
    import numpy as np

    products = {f: _matrix_number(f.args[0], values) for f in d.atoms(MatScalar)}
    if products:
        d = d.xreplace(products)
    if isinstance(d, sympy.MatrixExpr) or getattr(d, "is_Matrix", False):
        return _matrix_numbers(d, values)
    sums = {}
    for f in d.atoms(sympy.Function):
        if f.func in (SumAll, MeanAll):
            sums[f] = f
    expr = d
    # reductions inside out: evaluate the innermost first
    for _ in range(10):
        inner = [f for f in expr.atoms(sympy.Function) if f.func in (SumAll, MeanAll)
                 and not any(g.func in (SumAll, MeanAll) for g in f.args[0].atoms(sympy.Function))]
        if not inner:
            break
        subs = {}
        for f in inner:
            arr = np.asarray(_lambdify(f.args[0], values), dtype=float)
            full = np.broadcast_to(arr, _shape_of(f.args[0], b_shapes))
            subs[f] = sympy.Float(float(full.sum() if f.func is SumAll else full.mean()), 30)
        expr = expr.xreplace(subs)
    return np.asarray(_lambdify(expr, values), dtype=float)


def _matrix_numbers(d, values: dict):
    """A matrix expression at the point (vectors as columns), as a numpy array."""
    import numpy as np

    subs = {}
    for sym in d.free_symbols:
        arr = np.asarray(values[sym.name], dtype=float)
        if isinstance(sym, sympy.MatrixSymbol):
            subs[sym] = sympy.Matrix(arr.reshape(-1, 1) if arr.ndim == 1 else arr)
        else:
            subs[sym] = sympy.Float(float(arr), 30)
    m = d.subs(subs).doit()
    if not getattr(m, "is_Matrix", False):  # a trace
        return np.asarray([[float(m)]], dtype=float)
    return np.asarray(sympy.Matrix(m).tolist(), dtype=float)


def _matrix_number(e, values: dict):
    """The 1x1 matrix product `e` at the point, as a sympy number."""
    return sympy.Float(float(_matrix_numbers(e, values).reshape(-1)[0]), 30)


def _shape_of(e, shapes):
    syms = [s.name for s in e.free_symbols if s.name in shapes]
    return _broadcast(*[shapes[s] for s in syms]) if syms else ()


def _on_float(f):
    return lambda v: f(float(v))


def _lambdify(e, values):
    """e at the point, elementwise over the values' broadcast shape. mpmath (which sympy
    has loaded already) does the arithmetic: numpy's printer would import scipy.special
    for erf & co, ~0.4 s of a command that should answer within a second."""
    import numpy as np

    syms = sorted((s for s in e.free_symbols), key=lambda s: s.name)
    numbers = {"Heaviside": lambda x, h=0.5: 1.0 if x > 0 else (0.0 if x < 0 else float(h)),
               **{name: _on_float(f) for name, f in STEP_NUMBERS.items()}}
    fn = sympy.lambdify(syms, e, modules=[numbers, "mpmath"])

    def one(*xs):
        try:
            v = fn(*xs)
            return float(v.real) if isinstance(v, complex) or hasattr(v, "imag") and v.imag == 0 \
                else float(v)
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            return float("nan")

    args = [np.asarray(values[s.name], dtype=float) for s in syms]
    if not args:
        return np.asarray(one(), dtype=float)
    return np.vectorize(one, otypes=[float])(*args)
