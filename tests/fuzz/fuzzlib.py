"""Strategies and checks shared by the fuzz tests (tests/test_fuzz_*.py) and the
long run (tests/fuzz/run_fuzz.py).

Strategies (hypothesis):

* ``random_bytes`` / ``random_text`` -- arbitrary bytes (read as a file) and
  unicode text, plus text built from the language's own characters;
* ``grammar_programs`` -- programs generated from the constructs of
  grammar/gradcli.lark: statements, blocks, expressions of every precedence
  level, calls of builtins, facade functions and tensor methods, f-strings,
  comprehensions, lambdas, try/with/def;
* ``mutated_programs`` -- the conformance cases with tokens dropped, swapped,
  duplicated or replaced;
* ``deep_nesting`` -- brackets, operators, f-strings, lambdas and blocks nested
  from 1 to several hundred deep, balanced or cut off.

Checks: :func:`check_source` runs a program in-process through
``gradcli.lang.Session`` and renders its error as the CLI does;
:func:`check_outcome` asserts the rules every input must satisfy (exit 0/1/2, a
gradcli headline, no traceback, no internal error).
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from hypothesis import strategies as st

from gradcli.lang import GradcliError, InternalError, Limits, Session
from gradcli.lang.session import render_error, reset_engine

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "conformance" / "cases"

#: small budgets: a fuzz input must end quickly whatever it does
FUZZ_LIMITS = Limits(max_steps=5_000, max_elements=200_000, max_length=200_000, max_depth=40)
HEADLINE = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+)(:(?P<col>\d+))?: (?P<kind>[A-Za-z]+)"
                      r"(: |\n|$)")
#: text that only a bug inside gradcli could put into a report
INTERNAL_MARKERS = ("Traceback (most recent call last)", "InternalError", "internal error",
                    "this is a bug in gradcli", "Token(", "Tree(", "lark.", "_Signal",
                    "<unbound>", "gradcli/lang/", "gradcli.lang.")
#: the kinds a report may carry
KINDS = {"SyntaxError", "IndentationError", "ForbiddenError", "LimitError", "KeyboardInterrupt",
         "RuntimeError", "TypeError", "ValueError", "IndexError", "KeyError", "NameError",
         "ZeroDivisionError", "AssertionError", "AttributeError", "UnboundLocalError",
         "NotImplementedError", "OverflowError", "Exception", "ArithmeticError", "LookupError",
         "StopIteration", "MemoryError", "RecursionError", "Error", "UserWarning"}


class Outcome:
    __slots__ = ("code", "stdout", "report", "error")

    def __init__(self, code, stdout, report, error=None):
        self.code, self.stdout, self.report, self.error = code, stdout, report, error

    def __repr__(self):
        return f"Outcome(code={self.code}, report={self.report[:300]!r})"


def check_source(source: str, filename: str = "fuzz.grad", limits: Limits = FUZZ_LIMITS,
                 session: Session | None = None) -> Outcome:
    """Run ``source`` in-process as ``gradcli run`` would (fresh session unless one
    is given); any exception other than a GradcliError is returned as a bug."""
    out = io.StringIO()
    if session is None:
        reset_engine(0)
        session = Session(limits=limits, stdout=out, stderr=io.StringIO())
    else:
        session.state.out = out
    try:
        session.run(source, filename)
    except GradcliError as e:
        return Outcome(e.exit_code, out.getvalue(), render_error(e), e)
    except BaseException as e:  # noqa: BLE001 - anything else is a gradcli bug
        return Outcome(-1, out.getvalue(), f"escaped {type(e).__name__}: {e}", e)
    return Outcome(0, out.getvalue(), "")


def problems(outcome: Outcome) -> list:
    """Why an outcome breaks the rules (empty list: it doesn't)."""
    bad = []
    if outcome.code not in (0, 1, 2):
        bad.append(f"exit code {outcome.code}")
    if isinstance(outcome.error, InternalError):
        bad.append("internal error")
    for marker in INTERNAL_MARKERS:
        if marker in outcome.report:
            bad.append(f"report contains {marker!r}")
    if outcome.code in (1, 2):
        m = HEADLINE.match(outcome.report)
        if not m:
            bad.append("no gradcli headline")
        elif m.group("kind") not in KINDS:
            bad.append(f"unexpected kind {m.group('kind')}")
    return bad


def check_outcome(source: str, outcome: Outcome) -> None:
    bad = problems(outcome)
    assert not bad, f"{bad}\n--- source ---\n{source[:2000]}\n--- report ---\n" \
                    f"{outcome.report[:2000]}"


# ------------------------------------------------------------------ raw input
random_bytes = st.binary(max_size=400)
_ALPHABET = ("abcxyz_019 \t\n\r()[]{}:;,.=+-*/%@<>!&|^~'\"#\\`$?"
             "éπ\u00a0\u200b\ufeff\u2028\U0001f600")
LANG_TOKENS = ["def ", "lambda", "if ", "else", "elif ", "for ", "in ", "while ", "try:",
               "except", "finally:", "with ", "as ", "return", "import ", "from ", "not ",
               "and ", "or ", "is ", "None", "True", "False", "pass", "break", "continue",
               "torch", "x", "y", "ones(2)", "tensor([1.,2.])", ".backward()", ".grad",
               "requires_grad=True", "f'{", "}'", "'''", '"', "\n", "\n    ", ":", "(", ")",
               "[", "]", ",", "**", "*", "@", "=", "+=", "0", "1e309", "0x", "1_0", "...",
               "print(", "del ", "global ", "assert ", "raise ", "@torch.no_grad()\n",
               "\\\n", "#", ";", "lambda x:", "yield", "async ", "await ", "class ", "{", "}"]
random_text = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=_ALPHABET, max_size=300),
    st.lists(st.sampled_from(LANG_TOKENS), max_size=60).map("".join),
)


# ------------------------------------------------------------------ grammar-generated
NAMES = ["x", "y", "z", "a", "b", "t", "xs", "s", "n", "f", "g", "k"]
BUILTINS = ["len", "range", "abs", "min", "max", "sum", "sorted", "list", "tuple", "str",
            "repr", "float", "int", "bool", "round", "enumerate", "zip", "reversed", "all",
            "any", "isinstance", "print"]
FACADE = ["tensor", "ones", "zeros", "full", "eye", "arange", "linspace", "rand", "randn",
          "ones_like", "zeros_like", "cat", "stack", "where", "maximum", "minimum", "clamp",
          "exp", "log", "sqrt", "sin", "relu", "sigmoid", "tanh", "softmax", "matmul",
          "no_grad", "enable_grad", "set_grad_enabled", "manual_seed", "allclose", "isclose",
          "equal", "Variable", "FloatTensor", "torch.autograd.grad", "F.relu", "F.mse_loss",
          "F.cross_entropy", "F.softmax", "F.linear", "torch.autograd.functional.jacobian",
          "set_printoptions", "is_grad_enabled", "torch.Size", "explain", "show", "graph"]
METHODS = ["sum", "mean", "backward", "detach", "clone", "reshape", "view", "t", "T", "shape",
           "size", "dim", "numel", "item", "tolist", "grad", "grad_fn", "data", "requires_grad",
           "requires_grad_", "is_leaf", "retain_grad", "register_hook", "zero_", "add_",
           "mul_", "max", "min", "argmax", "norm", "std", "var", "exp", "log", "pow",
           "unsqueeze", "squeeze", "transpose", "permute", "expand", "repeat", "flatten",
           "split", "chunk", "to", "float", "double", "long", "bool", "append", "pop", "join",
           "split", "upper", "index", "count", "name", "next_functions", "values", "indices",
           "cumsum", "logsumexp", "softmax", "clamp", "abs", "sign", "masked_fill", "fill_",
           "copy_", "detach_", "dtype", "is_floating_point", "remove", "mT", "amax"]
BINOPS = ["+", "-", "*", "/", "//", "%", "**", "@", "<", "<=", ">", ">=", "==", "!=", "and",
          "or", "is", "is not", "in", "not in", "&", "|", "^", "<<", ">>"]
AUGOPS = ["+=", "-=", "*=", "/=", "//=", "%=", "**=", "@="]
LITERALS = ["0", "1", "2", "-1", "3", "0.5", "1e-3", ".5", "1e308", "1e309", "2**31",
            "10**20", "True", "False", "None", "'s'", '"a b"', "'\\n'", "...", "float('nan')",
            "float('inf')", "[]", "()", "[1, 2, 3]", "(1,)", "[[1., 2.], [3., 4.]]",
            "tensor(2.)", "tensor([1., 2.], requires_grad=True)", "ones(2, 3)", "zeros(0)",
            "tensor([1, 2])", "tensor([True, False])", "arange(6.).reshape(2, 3)",
            "torch.float64", "torch.long"]
TENSORY = ["x", "t", "ones(3)", "tensor([1.5, -2.], requires_grad=True)", "y"]


@st.composite
def _expr(draw, depth=0):
    if depth >= 4:
        return draw(st.sampled_from(NAMES + LITERALS))
    kind = draw(st.integers(0, 17))
    sub = lambda: draw(_expr(depth + 1))  # noqa: E731
    if kind == 0:
        return draw(st.sampled_from(LITERALS))
    if kind == 1:
        return draw(st.sampled_from(NAMES))
    if kind == 2:
        return f"({sub()} {draw(st.sampled_from(BINOPS))} {sub()})"
    if kind == 3:
        return f"({draw(st.sampled_from(['-', '+', '~', 'not ']))}{sub()})"
    if kind in (4, 5):
        fname = draw(st.sampled_from(BUILTINS + FACADE))
        args = draw(st.lists(_expr(depth + 1), max_size=3))
        kw = draw(st.sampled_from(["", "requires_grad=True", "dim=0", "dtype=torch.float64",
                                   "keepdim=True", "retain_graph=True", "end=''", "key=abs"]))
        return f"{fname}({', '.join(args + ([kw] if kw else []))})"
    if kind in (6, 7):
        m = draw(st.sampled_from(METHODS))
        base = draw(st.sampled_from(TENSORY + NAMES)) if draw(st.booleans()) else f"({sub()})"
        if draw(st.booleans()):
            args = draw(st.lists(_expr(depth + 1), max_size=2))
            return f"{base}.{m}({', '.join(args)})"
        return f"{base}.{m}"
    if kind == 8:
        idx = draw(st.sampled_from(["0", "-1", "1:", ":2", "::2", "None", "...", "0, 1",
                                    ":, 0", "tensor([0, 0])", "tensor([True, False])",
                                    "x > 0", "::-1", "10"]))
        return f"({sub()})[{idx}]"
    if kind == 9:
        items = draw(st.lists(_expr(depth + 1), max_size=3))
        if draw(st.booleans()):
            return f"[{', '.join(items)}]"
        return f"({', '.join(items)},)" if items else "()"
    if kind == 10:
        return f"[{sub()} for {draw(st.sampled_from(['v', 'i', 'k']))} in {sub()}" + \
            draw(st.sampled_from(["]", " if v]", " for w in range(2)]"]))
    if kind == 11:
        return f"({sub()} if {sub()} else {sub()})"
    if kind == 12:
        return f"(lambda {draw(st.sampled_from(['', 'v', 'v, w=1', '*a']))}: {sub()})"
    if kind == 13:
        spec = draw(st.sampled_from(["", ":.4f", ":>8", "!r", ":d", ":.2e", ":{n}", "!s:^9"]))
        inner = draw(st.sampled_from(NAMES + ["x.sum()", "x[0]", "1.5", "n * 2", "xs",
                                              "t.shape", "x.grad", "y.item()", "-x"]))
        return f'f"<{{{inner}{spec}}}>"'
    if kind == 14:
        return f"({sub()})({', '.join(draw(st.lists(_expr(depth + 1), max_size=2)))})"
    if kind == 15:
        return f"'%s %d %.3f' % ({sub()}, {sub()}, {sub()})"
    if kind == 16:
        return f"({sub()} {draw(st.sampled_from(['<', '==', '<=']))} {sub()} < {sub()})"
    return f"({sub()}).{draw(st.sampled_from(METHODS))}"


def _indent(lines, pad="    "):
    return [pad + ln for ln in lines]


@st.composite
def _stmts(draw, depth=0, in_loop=False, in_def=False):
    n = draw(st.integers(1, 4 if depth else 8))
    out = []
    for _ in range(n):
        out.extend(draw(_stmt(depth, in_loop, in_def)))
    return out


@st.composite
def _stmt(draw, depth=0, in_loop=False, in_def=False):
    e = lambda: draw(_expr())  # noqa: E731
    name = lambda: draw(st.sampled_from(NAMES))  # noqa: E731
    body = lambda loop=in_loop, fn=in_def: draw(_stmts(depth + 1, loop, fn))  # noqa: E731
    kinds = ["assign", "expr", "print", "aug", "backward", "tuple", "subassign", "attrassign"]
    if depth < 3:
        kinds += ["if", "while", "for", "def", "try", "with", "decorated"]
    kinds += ["pass", "assert", "del", "import", "raise", "global"]
    if in_loop:
        kinds += ["break", "continue"]
    if in_def:
        kinds += ["return"]
    k = draw(st.sampled_from(kinds))
    if k == "assign":
        return [f"{name()} = {e()}"]
    if k == "expr":
        return [e()]
    if k == "print":
        return [f"print({e()}, {e()})"]
    if k == "aug":
        return [f"{name()} {draw(st.sampled_from(AUGOPS))} {e()}"]
    if k == "backward":
        return [f"{name()}.backward({draw(st.sampled_from(['', 'retain_graph=True', 'ones(3)', 'create_graph=True']))})"]
    if k == "tuple":
        return [f"{name()}, {name()} = {e()}"]
    if k == "subassign":
        return [f"{name()}[{draw(st.sampled_from(['0', '-1', ':', '1:', 'tensor([0])']))}] = {e()}"]
    if k == "attrassign":
        return [f"{name()}.{draw(st.sampled_from(['requires_grad', 'grad', 'data']))} = {e()}"]
    if k == "if":
        lines = [f"if {e()}:"] + _indent(body())
        if draw(st.booleans()):
            lines += [f"elif {e()}:"] + _indent(body())
        if draw(st.booleans()):
            lines += ["else:"] + _indent(body())
        return lines
    if k == "while":
        return ["k = 0", f"while k < {draw(st.integers(0, 4))} and {e()}:", "    k += 1"] + \
            _indent(body(loop=True))
    if k == "for":
        tgt = draw(st.sampled_from(["v", "i, v", "(i, v)", "k"]))
        it = draw(st.sampled_from(["range(3)", "[1, 2]", "ones(2, 2)", "enumerate(xs)",
                                   "zip(xs, xs)", "'ab'", "x", "tensor([])"]))
        lines = [f"for {tgt} in {it}:"] + _indent(body(loop=True))
        if draw(st.booleans()):
            lines += ["else:"] + _indent(body())
        return lines
    if k == "def":
        params = draw(st.sampled_from(["", "v", "v, w=2", "*args", "v, *, w=1"]))
        return [f"def {draw(st.sampled_from(['f', 'g']))}({params}):"] + \
            _indent(body(loop=False, fn=True))
    if k == "decorated":
        dec = draw(st.sampled_from(["@torch.no_grad()", "@no_grad()", "@f", "@g(1)"]))
        return [dec, "def h(v=1):"] + _indent(body(loop=False, fn=True))
    if k == "try":
        exc = draw(st.sampled_from(["", " Exception", " RuntimeError as err", " (TypeError, ValueError)",
                                    " ZeroDivisionError as err"]))
        lines = ["try:"] + _indent(body()) + [f"except{exc}:"] + _indent(body())
        if draw(st.booleans()):
            lines += ["finally:"] + _indent(body())
        return lines
    if k == "with":
        ctx = draw(st.sampled_from(["no_grad()", "enable_grad()", "torch.no_grad() as q",
                                    "set_grad_enabled(False)", "detect_anomaly()", "x"]))
        return [f"with {ctx}:"] + _indent(body())
    if k == "assert":
        return [f"assert {e()}, {e()}"]
    if k == "del":
        return [f"del {name()}"]
    if k == "import":
        return [draw(st.sampled_from(["import torch", "import math", "import torch.nn.functional as F",
                                      "from torch import ones, zeros", "from math import sqrt, pi",
                                      "from torch.autograd import grad, Variable"]))]
    if k == "raise":
        return [f"raise {draw(st.sampled_from(['ValueError', 'RuntimeError', 'KeyError']))}({e()})"]
    if k == "global":
        return [f"global {name()}"]
    if k == "return":
        return [f"return {e()}"]
    return [k]


PREAMBLE = ("import torch\nimport torch.nn.functional as F\nx = tensor([1.5, -2.0, 0.5], "
            "requires_grad=True)\nt = ones(2, 3)\nxs = [1, 2, 3]\ns = 'ab'\nn = 2\n"
            "y = (x * x).sum()\n")


@st.composite
def grammar_programs(draw):
    lines = draw(_stmts())
    src = "\n".join(lines) + "\n"
    return PREAMBLE + src if draw(st.integers(0, 4)) else src


# ------------------------------------------------------------------ mutated corpus
def corpus_sources() -> list:
    return [p.read_text(encoding="utf-8") for p in sorted(CASES.glob("*.grad"))]


def token_spans(source: str) -> list:
    """(start offset, end offset) of every token Python's tokenizer finds."""
    line_starts = [0]
    for ln in source.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(ln))
    spans = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            a = line_starts[tok.start[0] - 1] + tok.start[1]
            b = line_starts[tok.end[0] - 1] + tok.end[1]
            if b > a:
                spans.append((a, b))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return spans


_SOURCES = None
_SPANS = None


def _corpus():
    global _SOURCES, _SPANS
    if _SOURCES is None:
        _SOURCES = corpus_sources()
        _SPANS = [token_spans(s) for s in _SOURCES]
    return _SOURCES, _SPANS


def mutate(source: str, spans: list, ops: list) -> str:
    """Apply (kind, i, j, text) mutations, from the last token backwards."""
    for kind, i, j, text in ops:
        if not spans:
            break
        i %= len(spans)
        j %= len(spans)
        a, b = spans[i]
        if kind == "drop":
            source = source[:a] + source[b:]
        elif kind == "dup":
            source = source[:b] + " " + source[a:b] + source[b:]
        elif kind == "swap":
            (a, b), (c, d) = sorted([spans[i], spans[j]])
            if b <= c:
                source = source[:a] + source[c:d] + source[b:c] + source[a:b] + source[d:]
        elif kind == "replace":
            source = source[:a] + text + source[b:]
        spans = token_spans(source) or spans[:0]
    return source


@st.composite
def mutated_programs(draw):
    sources, spans = _corpus()
    k = draw(st.integers(0, len(sources) - 1))
    ops = draw(st.lists(st.tuples(st.sampled_from(["drop", "dup", "swap", "replace"]),
                                  st.integers(0, 10_000), st.integers(0, 10_000),
                                  st.sampled_from(LANG_TOKENS + BINOPS + NAMES)),
                        min_size=1, max_size=3))
    return mutate(sources[k], spans[k], ops)


# ------------------------------------------------------------------ deep nesting
OPENERS = [("(", ")"), ("[", "]"), ("f(", ")"), ("ones(", ")"), ("-", ""), ("not ", ""),
           ("lambda: ", ""), ("[v for v in ", "]"), ("1 if True else ", ""), ("x[", "]"),
           ("(1, ", ")"), ("{", "}"), ("f'{", "}'"), ("~", ""), ("2 ** ", ""), ("[0, ", "]"),
           ("abs(", ")"), ("(lambda v: v)(", ")"), ("x.sum(", ")"), ("print(", ")")]
BLOCKS = ["if True:", "while False:", "for i in range(1):", "def f():", "try:", "with no_grad():",
          "if x:", "else:", "@torch.no_grad()\ndef g():"]


@st.composite
def deep_nesting(draw):
    depth = draw(st.one_of(st.integers(1, 60), st.integers(60, 400)))
    if draw(st.booleans()):
        pairs = draw(st.lists(st.sampled_from(OPENERS), min_size=1, max_size=4))
        seq = [pairs[i % len(pairs)] for i in range(depth)]
        head = "".join(o for o, _ in seq)
        tail = "".join(c for _, c in reversed(seq))
        cut = draw(st.sampled_from(["none", "close", "open", "extra"]))
        if cut == "close":
            tail = tail[: draw(st.integers(0, max(len(tail) - 1, 0)))]
        elif cut == "open":
            head = head[: draw(st.integers(0, len(head)))]
        elif cut == "extra":
            tail += draw(st.sampled_from([")", "]", "}", "))"]))
        return f"x = ones(2)\ndef f(*a):\n    return 1\ny = {head}1{tail}\nprint(y)\n"
    kinds = draw(st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=3))
    lines, pad = ["x = 1"], ""
    for i in range(min(depth, 150)):
        for part in kinds[i % len(kinds)].split("\n"):
            lines.append(pad + part)
        pad += draw(st.sampled_from(["    ", "    ", " ", "\t"])) if i < 3 else "    "
        if kinds[i % len(kinds)] == "try:" and draw(st.booleans()):
            lines.append(pad + "pass")
            lines.append(pad[:-4] + "except Exception:")
    lines.append(pad + draw(st.sampled_from(["pass", "print(1)", "x = x + 1", "", "return 1"])))
    return "\n".join(lines) + "\n"
