"""The precompiled grammar (gradcli.lang._lalr_tables, run by gradcli.lang._lalr).

gradcli parses without importing lark (start-up, issue 5), so these tests keep the
generated tables honest:

- they are fresh: made from grammar/gradcli.lark as it is, and regenerating them
  with the lark version that made them gives the committed file byte for byte
  (after a grammar change, run ``python -m gradcli.lang._lalr_gen``); no interpreter
  internals (``_sre``, ``re._compiler``/``re._parser``) are used to make or run them;
- the runtime behaves as lark does, on every .grad file of the repository, their
  lines as f-string expressions (the ``fexpr`` start), and thousands of mutated
  variants: the same tokens, the same trees (data, children, token types, values and
  positions, meta attributes) and the same errors (class, position, token,
  expected terminals).
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

lark = pytest.importorskip("lark")

from gradcli.lang import _lalr, _lalr_gen  # noqa: E402
from gradcli.lang.parser import GradIndenter, _IndentationProblem, get_parser  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TABLES = ROOT / "gradcli" / "lang" / "_lalr_tables.py"


def test_tables_are_generated_from_this_grammar():
    from gradcli.lang import _lalr_tables

    digest = _lalr_gen.grammar_digest(_lalr_gen.grammar_text())
    assert _lalr_tables.GRAMMAR_SHA256 == digest, \
        "gradcli/lang/_lalr_tables.py is stale: run python -m gradcli.lang._lalr_gen"


def test_tables_are_fresh():
    from gradcli.lang import _lalr_tables

    if lark.__version__ != _lalr_tables.LARK_VERSION:
        pytest.skip(f"tables made by lark {_lalr_tables.LARK_VERSION}, lark {lark.__version__} "
                    "installed (the differential tests below still compare the two)")
    text = _lalr_gen.generate()
    assert TABLES.read_text(encoding="utf-8") == text, \
        "gradcli/lang/_lalr_tables.py is stale: run python -m gradcli.lang._lalr_gen"


def test_no_regex_engine_internals():
    """The lexer is compiled by re.compile on any Python: no code of the re engine's own
    format is generated or loaded (it changes between Python versions)."""
    for path in (ROOT / "gradcli").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for internal in ("import _sre", "_sre.", "re._compiler", "re._parser", "sre_compile",
                         "sre_parse"):
            assert internal not in text, f"{path.relative_to(ROOT)} uses {internal}"
    assert not (ROOT / "gradcli" / "lang" / "_lexer_code.py").exists()


def _tokens(scanners, text):
    saved = _lalr._SCANNERS
    _lalr._SCANNERS = scanners
    try:
        return [(t.type, str(t), t.line, t.column, t.end_pos) for t in _lalr.lex(text)]
    finally:
        _lalr._SCANNERS = saved


_LEX_SAMPLE = ('x = torch.tensor([1.5e-3, 0x1F, 0b10, 0o7, 2j, 1_000], requires_grad=True)\n'
               'if x.norm() >= 2 and not y != 3:  # comment\n'
               '    s = f"{x!r}" + r\'\\n\' + """doc\n"""; z //= 2 ** -1\n'
               'w = a @ b | c & d ^ ~e << 1 >> 2 % 3 ... -> {}\n')


def test_generation_does_not_depend_on_string_hashing():
    # lark numbers LALR states in hash order; the generator renumbers them
    code = "from gradcli.lang._lalr_gen import generate; import sys; sys.stdout.write(generate())"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=ROOT, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2")}
    assert len(outs) == 1


def test_check_flag_reports_fresh(capsys):
    from gradcli.lang import _lalr_tables

    if lark.__version__ != _lalr_tables.LARK_VERSION:
        pytest.skip("another lark version")
    assert _lalr_gen.main(["--check"]) == 0
    assert capsys.readouterr().out.strip() == "fresh"


# ------------------------------------------------------------------ differential
_LARK = None


def lark_parser():
    global _LARK
    if _LARK is None:
        _LARK = _lalr_gen.lark_parser(GradIndenter())
    return _LARK


def _token(t):
    return ("TOKEN", type(t).__name__ == "Token", t.type, str(t), t.value, t.start_pos, t.line,
            t.column, t.end_line, t.end_column, t.end_pos)


def _shape(node):
    """A comparable image of a parse tree (iterative: trees can be 5000 deep)."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            out.append(None)
        elif hasattr(n, "data"):
            meta = {k: v for k, v in vars(n.meta).items()}
            out.append(("TREE", str(n.data), len(n.children), sorted(meta.items())))
            stack.extend(reversed(n.children))
        else:
            out.append(_token(n))
    return out


def _outcome(fn):
    try:
        return ("ok", _shape(fn()))
    except _IndentationProblem as e:
        return ("indent", str(e), _token(e.token))
    except Exception as e:  # lark's or _lalr's errors, compared by name and content
        info = [type(e).__name__, getattr(e, "line", None), getattr(e, "column", None),
                getattr(e, "pos_in_stream", None)]
        if hasattr(e, "token"):
            info += [_token(e.token), sorted(e.expected)]
        if hasattr(e, "allowed"):
            info += [sorted(e.allowed), getattr(e, "char", None)]
        return ("error", info)


def _lex_outcome(parser, text):
    out = []
    try:
        for t in parser.lex(text):
            out.append(_token(t))
    except _IndentationProblem as e:
        out.append(("indent", str(e)))
    except Exception as e:
        out.append((type(e).__name__, getattr(e, "line", None), getattr(e, "column", None)))
    return out


def _same(text, start="file_input"):
    ours = _outcome(lambda: get_parser().parse(text, start))
    theirs = _outcome(lambda: lark_parser().parse(text, start=start))
    assert ours == theirs, (start, text)
    if start == "file_input":
        assert _lex_outcome(get_parser(), text) == _lex_outcome(lark_parser(), text), text
    return ours[0]


def _sources():
    skip = {".git", "node_modules", "__pycache__"}
    files = sorted(p for p in ROOT.rglob("*.grad") if not skip & set(p.parts))
    return [p.read_text(encoding="utf-8", errors="replace") for p in files]


SOURCES = _sources()
SNIPPETS = [
    "", "\n", "x\n", "x = 1", "if x:\n    y = 1\n  z = 2\n", "if x:\ny\n", "def f(:\n", "(1,\n2\n",
    "x = [1, 2\ny = 3\n", "x = (1]\n", "}\n", "print 'a'\n", "x = 'abc\n", "x = '''abc\n",
    "x = 1 ! 2\n", "x = $\n", "x = \\ y\n", "f(a=1, *b, **c)\n", "lambda: (yield)\n",
    "async def f(): pass\n", "ｅｖａｌ('1')\n", "x = f'{a!r:>{w}}'\n", "if x:\n\tpass\n    pass\n",
    "x = 1 if y else 2\n", "a[1:2, ::3, ...]\n", "@d\ndef f(a, /, b=1, *c, d, **e) -> int:\n  return\n",
    "try:\n  pass\nexcept E as e:\n  pass\nelse:\n  pass\nfinally:\n  pass\n",
    "class A(B):\n  pass\n", "{1: 2, **d}\n", "x: int = 3\n", "global a, b\n", "del a[0], b\n",
    "import a.b as c, d\nfrom . import x\n", "0x_1 + 0o7 + 0b1 + 1_000.5e-3j + 00\n", "x = 1 +\n",
    "while x:\n    if y:\n        break\n    continue\n", "((((((x))))))\n" * 2,
    "-" * 300 + "x\n", "(" * 300 + ")" * 300 + "\n", "x = [\n  1,\n  2,\n]\n", "for x in y:\n",
    "x = 'a' 'b' \"\"\"c\"\"\"\n", "# only a comment", "   \n\n", "x\n    y\n", "x = (\n", "x )\n",
]


@pytest.mark.parametrize("text", SNIPPETS)
def test_snippets_match_lark(text):
    _same(text if text.endswith("\n") else text + "\n")


def test_repository_programs_match_lark():
    assert len(SOURCES) > 100
    kinds = [_same(s if s.endswith("\n") else s + "\n") for s in SOURCES]
    assert kinds.count("ok") > 100


def test_fstring_expressions_match_lark():
    lines = sorted({ln.strip() for s in SOURCES for ln in s.splitlines() if ln.strip()})
    kinds = [_same("(" + ln + ")", "fexpr") for ln in lines[:1500]]
    assert "ok" in kinds and "error" in kinds


INSERTS = ["(", ")", "[", "]", "{", "}", ":", "\n", "    ", "\t", '"', "'", '"""', "\\", "!", "$",
           "=", "==", ",", ".", "é", "ｅ", "#", "f'{", "}'", "lambda", "if", "else", "not", "**",
           "\\\n", "0x", "1e", "1j", "_", "->", "@", ";", "*", "yield"]


@pytest.mark.parametrize("chunk", range(8))
def test_mutated_programs_match_lark(chunk):
    rng = random.Random(1000 + chunk)
    kinds = set()
    for _ in range(250):
        src = rng.choice(SOURCES)
        for _ in range(rng.randint(1, 3)):
            i = rng.randint(0, len(src))
            op = rng.random()
            if op < 0.4:
                src = src[:i] + rng.choice(INSERTS) + src[i:]
            elif op < 0.7:
                src = src[:i] + src[i + rng.randint(1, 4):]
            else:
                j = rng.randint(0, len(src))
                src = src[:i] + src[j:j + rng.randint(1, 6)] + src[i:]
        kinds.add(_same(src if src.endswith("\n") else src + "\n"))
    assert "error" in kinds


def test_parse_errors_are_named_as_lark_names_them():
    for cls in (_lalr.UnexpectedCharacters, _lalr.UnexpectedToken, _lalr.UnexpectedEOF):
        assert hasattr(lark.exceptions, cls.__name__)
        assert issubclass(cls, _lalr.UnexpectedInput)
