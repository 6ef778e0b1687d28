"""The grammar and the AST: every construct, precedence, positions, syntax errors."""
import pytest

from gradcli.lang import CompileError, is_incomplete, parse, parse_all, parse_expression
from gradcli.lang import ast as A


def expr(src):
    return parse_expression(src)


def stmt(src):
    mod = parse(src)
    assert len(mod.body) == 1, mod.body
    return mod.body[0]


# ------------------------------------------------------------ precedence
def test_power_binds_tighter_than_unary_minus_on_its_left():
    e = expr("-2 ** 2")
    assert e == A.UnaryOp("-", A.BinOp("**", A.Const(2), A.Const(2)))


def test_power_is_right_associative_and_takes_unary_on_its_right():
    assert expr("2 ** 3 ** 2") == A.BinOp("**", A.Const(2), A.BinOp("**", A.Const(3), A.Const(2)))
    assert expr("2 ** -1") == A.BinOp("**", A.Const(2), A.UnaryOp("-", A.Const(1)))


def test_left_associative_arithmetic():
    e = expr("a - b - c")
    assert e == A.BinOp("-", A.BinOp("-", A.Name("a"), A.Name("b")), A.Name("c"))
    e = expr("a / b * c @ d // e % f")
    assert e.op == "%" and e.left.op == "//" and e.left.left.op == "@"


def test_multiplication_binds_tighter_than_addition():
    assert expr("a + b * c") == A.BinOp("+", A.Name("a"), A.BinOp("*", A.Name("b"), A.Name("c")))


def test_chained_comparison_is_one_node():
    e = expr("a < b <= c is not d not in e")
    assert e == A.Compare(A.Name("a"), ["<", "<=", "is not", "not in"],
                          [A.Name("b"), A.Name("c"), A.Name("d"), A.Name("e")])


def test_boolean_precedence():
    e = expr("not a or b and c")
    assert e == A.BoolOp("or", [A.UnaryOp("not", A.Name("a")),
                                A.BoolOp("and", [A.Name("b"), A.Name("c")])])


def test_conditional_expression_and_lambda():
    assert expr("a if c else b") == A.IfExp(A.Name("c"), A.Name("a"), A.Name("b"))
    e = expr("lambda x, y=1: x + y")
    assert isinstance(e, A.Lambda) and [p.name for p in e.params.args] == ["x", "y"]
    assert e.params.args[1].default == A.Const(1)


def test_bitwise_and_shift_levels():
    e = expr("a | b ^ c & d << 1 + 2")
    assert e.op == "|" and e.right.op == "^" and e.right.right.op == "&"
    assert e.right.right.right.op == "<<"


# ------------------------------------------------------------ atoms
@pytest.mark.parametrize("src,value", [
    ("1e-3", 1e-3), (".5", 0.5), ("1_000", 1000), ("0x1F", 31), ("0o17", 15), ("0b101", 5),
    ("1.", 1.0), ("True", True), ("None", None), ("...", Ellipsis),
    ("'a' \"b\"", "ab"), (r"'\x41\n\t\\'", "A\n\t\\"), (r"r'\n'", "\\n"),
    ("'''multi\nline'''", "multi\nline"), (r"'\N{BULLET}'", "\u2022"),
])
def test_literals(src, value):
    e = expr(src)
    assert isinstance(e, A.Const) and e.value == value and type(e.value) is type(value)


def test_subscripts_slices_ellipsis_none():
    e = expr("x[0, ..., None, 1:2, ::-1]")
    idx = e.index
    assert isinstance(idx, A.TupleDisplay) and len(idx.elts) == 5
    assert idx.elts[3] == A.Slice(A.Const(1), A.Const(2), None)
    assert idx.elts[4] == A.Slice(None, None, A.UnaryOp("-", A.Const(1)))
    assert expr("x[1]").index == A.Const(1)
    assert isinstance(expr("x[1,]").index, A.TupleDisplay)


def test_calls_with_keywords_and_star():
    e = expr("f(a, *b, c=1)")
    assert len(e.args) == 2 and isinstance(e.args[1], A.Starred)
    assert e.keywords == [A.Keyword("c", A.Const(1))]
    assert isinstance(expr("sum(x for x in y)").args[0], A.GenExp)


def test_comprehension_nested_for_if_and_tuple_targets():
    e = expr("[f(v) for i, (a, b) in xs if a for v in b if v > 1]")
    assert isinstance(e, A.ListComp) and len(e.generators) == 2
    assert isinstance(e.generators[0].target, A.TupleDisplay)
    assert len(e.generators[1].ifs) == 1


def test_fstring_parts_and_format_spec():
    e = expr('f"{x.item():.4f} and {y!r:>{w}} {{lit}} {z=}"')
    assert isinstance(e, A.FString)
    first = e.parts[0]
    assert isinstance(first, A.FormattedValue) and first.spec.parts == [".4f"]
    second = e.parts[2]
    assert second.conversion == "r" and isinstance(second.spec.parts[1], A.FormattedValue)
    assert " {lit} " in e.parts
    assert e.parts[-1].debug == "z="


def test_fstring_expression_positions_point_into_the_source():
    e = stmt('print(f"ab {value} c")').value.args[0]
    name = e.parts[1].value
    assert name.pos[:2] == (1, 13)


# ------------------------------------------------------------ statements
def test_all_statement_forms_parse():
    src = '''import torch
import torch.nn.functional as F
from torch.autograd import grad, Variable as V
from math import sqrt
x = y = 1; z: int = 2
x += 1; x -= 1; x *= 2; x /= 2
a, *b = [1, 2, 3]
x.requires_grad = True
x[0] = 1.0
del a, b
global g
assert x, "msg"
if x:
    pass
elif y:
    pass
else:
    pass
while x:
    break
else:
    pass
for i, (a, b) in enumerate(zip(xs, ys)):
    continue
try:
    raise RuntimeError("e")
except RuntimeError as e:
    pass
except:
    pass
else:
    pass
finally:
    pass
with torch.no_grad() as ng, torch.enable_grad():
    pass

@torch.no_grad()
def f(a, b=2, *args, c, d=4):
    """doc"""
    nonlocal_ok = 1
    return a
lambda: 0
'''
    mod = parse(src)
    kinds = [type(s).__name__ for s in mod.body]
    assert kinds == ["Import", "Import", "ImportFrom", "ImportFrom", "Assign", "AnnAssign",
                     "AugAssign", "AugAssign", "AugAssign", "AugAssign", "Assign", "Assign",
                     "Assign", "Delete", "Global", "Assert", "If", "While", "For", "Try",
                     "With", "FunctionDef", "ExprStmt"]
    fn = mod.body[-2]
    assert len(fn.decorators) == 1 and fn.params.kwonly[0].name == "c"


def test_comments_blank_lines_continuations_anywhere():
    src = "x = [1,\n  # c\n\n     2]  # t\ny = 1 + \\\n    2\nif x:\n\n    # odd\n        # indents\n    z = 3\n\n# end"
    mod = parse(src)
    assert [type(s).__name__ for s in mod.body] == ["Assign", "Assign", "If"]


def test_positions_of_nodes():
    s = stmt("y = foo(1, 2)")
    assert s.pos == (1, 1, 1, 14)
    assert s.value.pos == (1, 5, 1, 14)


def test_ten_thousand_term_sum_and_5000_parens_and_unary_minuses():
    parse("x = " + " + ".join(["1"] * 10000))
    parse("x = " + "(" * 5000 + "1" + ")" * 5000)
    parse("x = " + "-" * 5000 + "1")


def test_deep_nesting_is_a_clean_syntax_error():
    with pytest.raises(CompileError) as ei:
        parse("x = " + "[" * 1000 + "]" * 1000)
    assert "too many nested" in ei.value.message


# ------------------------------------------------------------ syntax errors
@pytest.mark.parametrize("src,kind,message,line,col", [
    ("if x > 1\n    pass\n", "SyntaxError", "expected ':'", 1, 9),
    ("x = (1 +\ny = 2\n", "SyntaxError", "'(' was never closed", 1, 5),
    ("x = [1, 2\n", "SyntaxError", "'[' was never closed", 1, 5),
    ("x = 1)\n", "SyntaxError", "unmatched ')'", 1, 6),
    ("x = (1]\n", "SyntaxError", "closing parenthesis ']' does not match opening parenthesis '('",
     1, 7),
    ("x = 1\n  y = 2\n", "IndentationError", "unexpected indent", 2, 3),
    ("  x = 1\n", "IndentationError", "unexpected indent", 1, 3),
    ("if x:\npass\n", "IndentationError", "expected an indented block after 'if' statement on line 1",
     2, 1),
    ("def f():\n", "IndentationError",
     "expected an indented block after function definition on line 1", 1, 9),
    ("if x:\n    a = 1\n  b = 2\n", "IndentationError",
     "unindent does not match any outer indentation level", 3, 1),
    ("x = 'abc\n", "SyntaxError", "unterminated string literal (detected at line 1)", 1, 5),
    ("x = '''abc\n", "SyntaxError", "unterminated triple-quoted string literal (detected at line 1)",
     1, 5),
    ("x = 1 $ 2\n", "SyntaxError", "invalid character '$' (U+0024)", 1, 7),
    ("if x = 1:\n    pass\n", "SyntaxError", "invalid syntax. Maybe you meant '==' instead of '='?",
     1, 6),
    ("print 'hello'\n", "SyntaxError", "Missing parentheses in call to 'print'. Did you mean print(...)?",
     1, 7),
    ("f(x) = 1\n", "SyntaxError", "cannot assign to function call", 1, 1),
    ("1 = x\n", "SyntaxError", "cannot assign to literal", 1, 1),
    ("x = b'a'\n", "SyntaxError", "bytes literals are not supported by gradcli", 1, 5),
    ("def f(a=1, b):\n    pass\n", "SyntaxError", "non-default argument follows default argument",
     1, 12),
    ("f(a=1, 2)\n", "SyntaxError", "positional argument follows keyword argument", 1, 8),
    ("x = f'{}'\n", "SyntaxError", "f-string: empty expression not allowed", 1, 7),
    ("x = f'{a!x}'\n", "SyntaxError", "f-string: invalid conversion character: expected 's', 'r', or 'a'",
     1, 9),
    ("x = f'a }'\n", "SyntaxError", "f-string: single '}' is not allowed", 1, 9),
    ("def f():\n    yield 1\n", "SyntaxError", "generators ('yield') are not supported by gradcli", 2, 5),
    # Python 3.10 constructs outside gradcli's subset are named, not "invalid syntax"
    ("if (n := 3) > 2:\n    pass\n", "SyntaxError",
     "assignment expressions (':=') are not supported by gradcli", 1, 7),
    ("x = [y := f(y) for y in z]\n", "SyntaxError",
     "assignment expressions (':=') are not supported by gradcli", 1, 8),
    ("match point:\n    case (0, 0):\n        pass\n", "SyntaxError",
     "'match' statements are not supported by gradcli", 1, 1),
    ("if a:\n    match (x):  # subject in brackets\n        case _:\n            pass\n",
     "SyntaxError", "'match' statements are not supported by gradcli", 2, 5),
    ("try:\n    pass\nexcept* ValueError:\n    pass\n", "SyntaxError",
     "'except*' is not supported by gradcli", 3, 1),
    ("match = {1: 2\n", "SyntaxError", "'{' was never closed", 1, 9),
])
def test_syntax_error_messages_and_positions(src, kind, message, line, col):
    with pytest.raises(CompileError) as ei:
        parse(src, "p.grad")
    e = ei.value
    assert (e.kind, e.message, e.line, e.col) == (kind, message, line, col)
    assert e.exit_code == 2


def test_syntax_error_render_has_source_line_and_caret():
    with pytest.raises(CompileError) as ei:
        parse("x = 1\nif x > 1\n    pass\n", "p.grad")
    assert ei.value.render() == (
        "p.grad:2:9: SyntaxError: expected ':'\n"
        "    2 | if x > 1\n"
        "      |         ^")


def test_parse_all_recovers_at_the_next_statement():
    src = "x = (1 +\n\ny = 2\nif z\n    pass\nw = 3 3\nok = 1\n"
    module, errors = parse_all(src, "p.grad")
    assert module is None
    assert [(e.line, e.message) for e in errors][:1] == [(1, "'(' was never closed")]
    assert len(errors) >= 2
    assert any(e.line == 6 for e in errors)


# ------------------------------------------------------------ REPL helper
@pytest.mark.parametrize("src,incomplete", [
    ("x = 1", False),
    ("def f(x):", True),
    ("y = (1 +", True),
    ("x = [1,\n 2", True),
    ("s = '''abc", True),
    ("x = 1 + \\", True),
    ("if x:\n    y = 1", True),
    ("if x:\n    y = 1\n\n", False),
    ("y = 1 +", False),
    ("x = 1 $ 2", False),
    ("", False),
])
def test_is_incomplete(src, incomplete):
    assert is_incomplete(src) is incomplete


@pytest.mark.parametrize("src, out", [
    ("match = 3\nprint(match)\n", "3"),
    ("match = [1, 2]\nprint(match[0])\n", "1"),
    ("def match(a):\n    return a\nprint(match(5))\n", "5"),
])
def test_match_stays_an_ordinary_name(src, out):
    """`match` is a soft keyword: as a name it works as in Python."""
    from io import StringIO

    from gradcli.lang.session import run_source

    buf = StringIO()
    assert run_source(src, "p.grad", stdout=buf, stderr=StringIO()) == 0
    assert buf.getvalue().strip() == out
