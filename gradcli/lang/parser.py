"""Source text -> gradcli AST, with Python-style syntax error messages.

The grammar (``grammar/gradcli.lark``) is compiled ahead of time by lark (LALR,
basic lexer) into :mod:`gradcli.lang._lalr_tables`, which the small runtime in
:mod:`gradcli.lang._lalr` runs with the same tokens, trees and errors as lark;
parsing never imports lark (lark's import plus loading its tables from a cache
cost ~40 ms of every ``gradcli grad``). After editing the grammar, regenerate
the tables with ``python -m gradcli.lang._lalr_gen`` (tests/test_startup_parser.py
fails while they are stale, and checks the runtime against lark itself).

The parse tree is converted to :mod:`gradcli.lang.ast` nodes by an iterative
post-order walk (no recursion, so 5000 nested parentheses or unary minuses
parse fine); nesting deeper than ``Limits.max_nesting`` is a syntax error.
"""
from __future__ import annotations

import re
import unicodedata

from . import ast as A
from ._lalr import (
    Parser,
    Token,
    Tree,
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)
from .errors import CompileError

_PARSER = None
MAX_NESTING = 200

UNSUPPORTED_KEYWORDS = {
    "yield": "generators ('yield') are not supported by gradcli",
    "async": "'async' is not supported by gradcli",
    "await": "'await' is not supported by gradcli",
    "match": None,  # soft keyword: refused where it starts a statement (_token_error)
}

_OPEN = {"LPAR": "(", "LSQB": "[", "LBRACE": "{"}
_CLOSE = {"RPAR": ")", "RSQB": "]", "RBRACE": "}"}
_PAIR = {")": "(", "]": "[", "}": "{"}

_TOKEN_TEXT = {
    "_NEWLINE": "newline", "$END": "end of input", "_INDENT": "indent",
    "_DEDENT": "dedent",
}

_COMPOUND_KEYWORDS = ("if", "elif", "else", "for", "while", "def", "with", "try",
                      "except", "finally", "class")


# ----------------------------------------------------------------- the parser
def get_parser():
    """The process-wide parser: lark's LALR tables for the grammar, compiled ahead of
    time into gradcli.lang._lalr_tables and run by gradcli.lang._lalr."""
    global _PARSER
    if _PARSER is None:
        _PARSER = Parser(GradIndenter)
    return _PARSER


class _IndentationProblem(Exception):
    def __init__(self, message, token):
        super().__init__(message)
        self.token = token


class GradIndenter:
    """lark's PythonIndenter post-lexer (indentation -> _INDENT/_DEDENT tokens, no
    newlines inside brackets), except that it reports bad dedents with a position and
    never asserts on unbalanced brackets (the parser reports those). Plain Python, so
    that it serves both gradcli.lang._lalr and lark (the table generator and the
    differential tests)."""

    NL_type = "_NEWLINE"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8
    always_accept = ("_NEWLINE",)

    def __init__(self):
        self.paren_level = 0
        self.indent_level = [0]

    def process(self, stream):
        self.paren_level = 0
        self.indent_level = [0]
        return self._process(stream)

    def handle_NL(self, token):
        if self.paren_level > 0:
            return
        yield token
        indent_str = token.rsplit("\n", 1)[1]
        indent = indent_str.count(" ") + indent_str.count("\t") * self.tab_len
        if indent > self.indent_level[-1]:
            self.indent_level.append(indent)
            yield token.new_borrow_pos(self.INDENT_type, indent_str, token)
        else:
            while indent < self.indent_level[-1]:
                self.indent_level.pop()
                yield token.new_borrow_pos(self.DEDENT_type, indent_str, token)
            if indent != self.indent_level[-1]:
                raise _IndentationProblem(
                    "unindent does not match any outer indentation level", token)

    def _process(self, stream):
        token = None
        for token in stream:
            if token.type == self.NL_type:
                yield from self.handle_NL(token)
            elif token.type == "NAME" and not token.isascii():
                # identifiers are NFKC-normalised, as Python does: 'ｅｖａｌ' is 'eval'
                # (so the sandbox's name checks see the name Python would see)
                yield token.update(value=unicodedata.normalize("NFKC", token))
            else:
                yield token
            if token.type in self.OPEN_PAREN_types:
                self.paren_level += 1
            elif token.type in self.CLOSE_PAREN_types:
                self.paren_level = max(0, self.paren_level - 1)
        while len(self.indent_level) > 1:
            self.indent_level.pop()
            if token is not None:
                yield token.new_borrow_pos(self.DEDENT_type, "", token)


# ------------------------------------------------------------------ public API
def parse(source: str, filename: str = "<string>", *, max_nesting: int = MAX_NESTING) -> A.Module:
    """Parse a whole program. Raises :class:`CompileError` (the first error)."""
    return _Parse(source, filename, max_nesting).module()


def parse_all(source: str, filename: str = "<string>", *, max_nesting: int = MAX_NESTING,
              max_errors: int = 20):
    """Parse, recovering after each syntax error at the next top-level
    statement. Returns ``(module or None, [CompileError, ...])``; the module
    holds the statements of the parts that parsed."""
    errors = []
    body = []
    text = _normalise(source)
    lines = text.split("\n")
    start = 0  # first line (0-based) still to parse
    while True:
        masked = "\n" * start + "\n".join(lines[start:])
        try:
            mod = _Parse(masked, filename, max_nesting, original=text).module()
            body.extend(mod.body)
            break
        except CompileError as e:
            errors.append(e)
            if len(errors) >= max_errors:
                break
            nxt = _next_statement_line(lines, max(e.line, start + 1))
            if nxt is None:
                break
            # keep what parsed before the error: reparse the region [start, nxt)
            region = "\n" * start + "\n".join(lines[start:max(e.line - 1, start)])
            try:
                body.extend(_Parse(region, filename, max_nesting, original=text).module().body)
            except CompileError:
                pass
            start = nxt
    return (A.Module(body, pos=(1, 1, 1, 1)) if not errors else None), errors


def parse_expression(source: str, filename: str = "<string>", *,
                     max_nesting: int = MAX_NESTING) -> A.Node:
    """Parse one expression (as in ``gradcli grad "EXPR"``)."""
    mod = parse(source, filename, max_nesting=max_nesting)
    if len(mod.body) != 1 or not isinstance(mod.body[0], A.ExprStmt):
        first = mod.body[0] if mod.body else None
        raise CompileError("expected an expression", filename,
                           first.pos if first else (1, 1, 1, 1), source)
    return mod.body[0].value


def is_incomplete(source: str) -> bool:
    """True when ``source`` is the start of a longer input: the parser ran
    out of text inside a construct (an open bracket, a block header, a
    triple-quoted string, a trailing backslash), or a block statement has
    not yet been ended by a blank line (as Python's interactive prompt)."""
    text = _normalise(source)
    if not text.strip():
        return False
    stripped = text.rstrip("\n")
    if stripped.endswith("\\"):
        return True
    try:
        parse(text)
    except CompileError as e:
        return bool(getattr(e, "at_eof", False))
    lines = [ln for ln in stripped.split("\n")]
    first = next((ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")), "")
    starts_block = first.rstrip().endswith(":") or first.lstrip().startswith("@") or any(
        ln[:1] in (" ", "\t") for ln in lines if ln.strip())
    return starts_block and not text.endswith("\n\n") and len(lines) >= 1 and \
        _opens_block(lines)


def _opens_block(lines) -> bool:
    for ln in lines:
        s = ln.strip()
        if s and not s.startswith("#"):
            word = re.match(r"[A-Za-z_@]+", s)
            return bool(word) and (word.group(0) in _COMPOUND_KEYWORDS or s.startswith("@"))
    return False


# ------------------------------------------------------------------ internals
def _normalise(source: str) -> str:
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def _next_statement_line(lines, after_line):
    """0-based index of the first line after ``after_line`` (1-based) that
    starts a top-level statement, or None."""
    for i in range(after_line, len(lines)):
        ln = lines[i]
        if ln and not ln[0].isspace() and not ln.startswith("#") and not ln.startswith(")") \
                and not re.match(r"(else|elif|except|finally)\b", ln):
            return i
    return None


def _describe(tok) -> str:
    t = tok.type
    if t in _TOKEN_TEXT:
        return _TOKEN_TEXT[t]
    v = str(tok.value)
    if t in ("STRING", "LONG_STRING"):
        return "string"
    if t.endswith("NUMBER"):
        return f"number {v}"
    if len(v) > 30:
        v = v[:27] + "..."
    return f"'{v}'"


class _Parse:
    def __init__(self, source, filename, max_nesting, original=None):
        self.text = _normalise(source)
        self.source = original if original is not None else self.text
        self.filename = filename
        self.max_nesting = max_nesting

    # -- errors
    def error(self, message, pos, *, kind=None, hint=None, cls=CompileError, at_eof=False):
        e = cls(message, self.filename, pos, self.source, kind=kind, hint=hint)
        e.at_eof = at_eof
        return e

    def module(self) -> A.Module:
        text = self.text
        if not text.endswith("\n"):
            text += "\n"
        self._check_leading_indent(text)
        tree = self._lark_parse(text, "file_input")
        return _Converter(self).convert(tree)

    def _check_leading_indent(self, text):
        for i, ln in enumerate(text.split("\n")):
            s = ln.strip()
            if not s or s.startswith("#") or s == "\\":
                continue
            if ln[0] in " \t\f":
                col = len(ln) - len(ln.lstrip()) + 1
                raise self.error("unexpected indent", (i + 1, col, i + 1, col + 1),
                                 kind="IndentationError")
            return

    def _lark_parse(self, text, start):
        parser = get_parser()
        try:
            return parser.parse(text, start=start)
        except _IndentationProblem as e:
            tok = e.token
            line = tok.end_line or tok.line
            indent = str(tok).rsplit("\n", 1)[1]
            raise self.error(str(e), (line, 1, line, len(indent) + 2),
                             kind="IndentationError") from None
        except UnexpectedCharacters as e:
            raise self._char_error(text, e) from None
        except UnexpectedToken as e:
            raise self._token_error(text, e) from None
        except UnexpectedEOF as e:
            raise self._eof_error(text, getattr(e, "expected", ()) or ()) from None
        except UnexpectedInput as e:  # pragma: no cover - other lark input errors
            raise self.error("invalid syntax", (e.line, e.column, e.line, e.column + 1)) from None

    def _char_error(self, text, e):
        line, col = e.line, e.column
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        pos = (line, col, line, col + 1)
        if ch in "\"'":
            rest = text[e.pos_in_stream:]
            if rest.startswith(ch * 3):
                last = text.rstrip("\n").count("\n") + 1
                return self.error(f"unterminated triple-quoted string literal (detected at line {last})",
                                  pos, at_eof=True)
            return self.error(f"unterminated string literal (detected at line {line})", pos)
        if ch == "\\":
            return self.error("unexpected character after line continuation character", pos)
        if ch == "!":
            return self.error("invalid syntax", pos, hint="'!' is only valid as part of '!='")
        return self.error(f"invalid character '{ch}' (U+{ord(ch):04X})" if ch else "invalid syntax", pos)

    def _bracket_problem(self, text, upto=None):
        """Scan brackets with the lexer: returns (kind, token) for the first
        unmatched closer / mismatched pair, or ('open', token) for the
        innermost bracket left open at ``upto`` (or the end)."""
        stack = []
        try:
            for tok in get_parser().lex(text, dont_ignore=False):
                if upto is not None and (tok.line, tok.column) >= upto:
                    break
                if tok.type in _OPEN:
                    stack.append(tok)
                elif tok.type in _CLOSE:
                    if not stack:
                        return "unmatched", tok, None
                    opener = stack.pop()
                    if _PAIR[str(tok)] != str(opener):
                        return "mismatch", tok, opener
        except Exception:
            pass
        if stack:
            return "open", stack[-1], None
        return None, None, None

    def _eof_error(self, text, expected):
        kind, tok, _ = self._bracket_problem(text)
        if kind == "open":
            return self.error(f"'{tok}' was never closed", (tok.line, tok.column, tok.line, tok.column + 1),
                              at_eof=True)
        lines = text.rstrip("\n").split("\n")
        last = len(lines)
        endcol = len(lines[-1]) + 1
        if "_INDENT" in expected:
            header = self._block_header(lines, last)
            return self.error(f"expected an indented block{header}", (last, endcol, last, endcol + 1),
                              kind="IndentationError", at_eof=True)
        return self.error("unexpected end of input", (last, endcol, last, endcol + 1), at_eof=True)

    def _block_header(self, lines, line):
        """" after 'if' statement on line N" for the block header at/above line."""
        for i in range(min(line, len(lines)) - 1, -1, -1):
            s = lines[i].strip()
            m = re.match(r"(if|elif|else|for|while|def|with|try|except|finally|class)\b", s)
            if m and s.endswith(":"):
                word = m.group(1)
                what = {"def": "function definition", "class": "class definition"}.get(
                    word, f"'{word}' statement")
                return f" after {what} on line {i + 1}"
            if s and not s.startswith("#"):
                break
        return ""

    def _token_error(self, text, e):
        tok = e.token
        expected = set(e.expected or ())
        if tok.type == "$END":
            return self._eof_error(text, expected)
        line, col = tok.line, tok.column
        end_col = tok.end_column if tok.end_line == line and tok.end_column else col + 1
        pos = (line, col, line, end_col)
        if tok.type == "_INDENT":
            line = tok.end_line or line
            col = len(str(tok.value)) + 1
            return self.error("unexpected indent", (line, col, line, col + 1), kind="IndentationError")
        kind, opener, _ = self._bracket_problem(text, upto=(line, col))
        if kind == "open" and opener.line < line:
            return self.error(f"'{opener}' was never closed",
                              (opener.line, opener.column, opener.line, opener.column + 1))
        if "_INDENT" in expected:
            lines = text.split("\n")
            header = self._block_header(lines, line - 1)
            first = len(lines[line - 1]) - len(lines[line - 1].lstrip()) + 1 if line <= len(lines) else 1
            return self.error(f"expected an indented block{header}", (line, first, line, first + 1),
                              kind="IndentationError")
        if tok.type == "_DEDENT":
            return self.error("unexpected dedent", pos, kind="IndentationError")
        if tok.type in _CLOSE:
            kind, btok, opener = self._bracket_problem(text, upto=(line, col + 1))
            if kind == "unmatched":
                return self.error(f"unmatched '{tok}'", pos)
            if kind == "mismatch":
                return self.error(f"closing parenthesis '{tok}' does not match opening parenthesis "
                                  f"'{opener}'" + (f" on line {opener.line}" if opener.line != line else ""),
                                  pos)
        here = text.split("\n")[line - 1] if line <= len(text.split("\n")) else ""
        header = re.match(r"(\s*)match\b(?!\s*[=.])[^=]*:\s*(#.*)?$", here)
        if header:  # a match statement's first line (`match` is a name elsewhere)
            start = len(header.group(1)) + 1
            return self.error("'match' statements are not supported by gradcli",
                              (line, start, line, start + 5))
        if tok.type == "_NEWLINE":
            lines = text.split("\n")
            line_text = lines[line - 1] if line <= len(lines) else ""
            end = len(line_text.rstrip()) + 1
            kind, btok, _ = self._bracket_problem(text, upto=(line, col))
            pos = (line, end, line, end + 1)
            if "COLON" in expected and re.match(
                    r"\s*(if|elif|else|for|while|def|with|try|except|finally|class)\b", line_text):
                return self.error("expected ':'", pos)
            return self.error("invalid syntax", pos, hint="the statement is incomplete")
        value = str(tok.value)
        if value == ":" and here[col:col + 1] == "=":
            return self.error("assignment expressions (':=') are not supported by gradcli",
                              (line, col, line, col + 2))
        star = re.match(r"(\s*)except\s*\*", here)
        if star and star.end() >= col:
            start = len(star.group(1)) + 1
            return self.error("'except*' is not supported by gradcli",
                              (line, start, line, star.end() + 1))
        if value == "class" and "DEF" in expected:  # after a decorator
            return self.error("class decorators are not supported by gradcli", pos)
        if value in UNSUPPORTED_KEYWORDS and UNSUPPORTED_KEYWORDS[value]:
            return self.error(UNSUPPORTED_KEYWORDS[value], pos)
        lines_ = text.split("\n")
        prefix = lines_[line - 1][: col - 1] if line <= len(lines_) else ""
        m = re.search(r"(\w+)\s*$", prefix)
        if m and UNSUPPORTED_KEYWORDS.get(m.group(1)):
            kcol = m.start(1) + 1
            return self.error(UNSUPPORTED_KEYWORDS[m.group(1)],
                              (line, kcol, line, kcol + len(m.group(1))))
        if "COLON" in expected and len(expected) <= 3 and tok.type != "EQUAL":
            return self.error("expected ':'", pos)
        if tok.type == "EQUAL":
            prev = text.split("\n")[line - 1][: col - 1].strip()
            if re.match(r"(if|elif|while|assert|return)\b", prev) or "(" in prev:
                return self.error("invalid syntax. Maybe you meant '==' instead of '='?", pos)
            return self.error("invalid syntax", pos)
        if tok.type in ("STRING", "LONG_STRING", "NAME") or tok.type.endswith("NUMBER"):
            line_text = text.split("\n")[line - 1]
            before = line_text[: col - 1].strip()
            if before == "print":
                return self.error("Missing parentheses in call to 'print'. Did you mean print(...)?",
                                  pos)
            kind, btok, _ = self._bracket_problem(text, upto=(line, col))
            if kind == "open":
                return self.error("invalid syntax. Perhaps you forgot a comma?", pos)
        return self.error("invalid syntax", pos, hint=f"unexpected {_describe(tok)}")


# ------------------------------------------------------------------ converter
_NEST = frozenset({
    "call", "subscript", "attribute", "list", "paren_tuple", "listcomp", "genexp", "binchain",
    "pow", "compare", "ifexp", "lambdef", "or_op", "and_op", "not_op", "star_expr", "suite",
    "brace", "slice", "setcomp", "dictcomp",
})

# (patterns, not compiled objects: re compiles and caches one on its first use, and a
# program with no escapes never pays it at start-up)
_ESCAPE = (r"\\(\n|\\|'|\"|a|b|f|n|r|t|v|[0-7]{1,3}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}"
           r"|U[0-9a-fA-F]{8}|N\{[^}]*\}|x|u|U|N)")
_SIMPLE_ESC = {"\n": "", "\\": "\\", "'": "'", '"': '"', "a": "\a", "b": "\b", "f": "\f",
               "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _pos_of(meta):
    return (meta.line, meta.column, meta.end_line, meta.end_column) if not meta.empty else A.NOPOS


def _tok_pos(tok):
    return (tok.line, tok.column, tok.end_line, tok.end_column)


class _Converter:
    """Parse tree -> AST, iteratively (post-order with an explicit stack)."""

    def __init__(self, parse: _Parse, line_offset=0, col_offset=0):
        self.p = parse
        self.line_offset = line_offset
        self.col_offset = col_offset  # added to columns on the snippet's first line

    def pos(self, meta):
        if meta.empty:
            return A.NOPOS
        return self.shift((meta.line, meta.column, meta.end_line, meta.end_column))

    def tpos(self, tok):
        return self.shift(_tok_pos(tok))

    def shift(self, pos):
        if not self.line_offset and not self.col_offset:
            return pos
        l1, c1, l2, c2 = pos
        if l1 == 1:
            c1 += self.col_offset
        if l2 == 1:
            c2 += self.col_offset
        return (l1 + self.line_offset, c1, l2 + self.line_offset, c2)

    def error(self, message, pos, **kw):
        return self.p.error(message, pos, **kw)

    def convert(self, tree):
        limit = self.p.max_nesting
        # stack entries: (tree, child_index, converted_children, depth)
        stack = [[tree, 0, [], 0]]
        result = None
        while stack:
            frame = stack[-1]
            node, i, kids = frame[0], frame[1], frame[2]
            children = node.children
            if i < len(children):
                frame[1] = i + 1
                child = children[i]
                if isinstance(child, Tree):
                    stack.append([child, 0, [], 0])
                else:
                    kids.append(child)
                continue
            stack.pop()
            data = node.data
            depth = frame[3]
            if data in _NEST:
                if data == "unary" or (data == "binchain"):
                    depth += 0 if data == "unary" and self._is_unary_chain(node) else 1
                else:
                    depth += 1
                if depth > limit:
                    raise self.error(f"too many nested parentheses, brackets or blocks "
                                     f"(more than {limit})", self.pos(node.meta))
            elif data == "unary":
                depth += 0 if self._is_unary_chain(node) else 1
            value = getattr(self, "c_" + data)(node.meta, kids)
            if stack:
                parent = stack[-1]
                parent[2].append(value)
                if depth > parent[3]:
                    parent[3] = depth
            else:
                result = value
        return result

    @staticmethod
    def _is_unary_chain(node):
        return len(node.children) == 2 and isinstance(node.children[1], Tree) and \
            node.children[1].data == "unary"

    # ---------------------------------------------------------- statements
    def c_file_input(self, meta, kids):
        body = []
        for k in kids:
            if isinstance(k, list):
                body.extend(k)
            elif k is not None and not _is_token(k):
                body.append(k)
        return A.Module(body, pos=(1, 1, 1, 1))

    def c_fexpr(self, meta, kids):
        return kids[0]

    def c_simple_stmt(self, meta, kids):
        return [k for k in kids if k is not None]

    def c_suite(self, meta, kids):
        body = []
        for k in kids:
            if isinstance(k, list):
                body.extend(k)
            elif k is not None:
                body.append(k)
        return body

    def c_expr_stmt(self, meta, kids):
        return A.ExprStmt(kids[0], pos=self.pos(meta))

    def c_assign(self, meta, kids):
        targets = [self.target(t, "assign to") for t in kids[:-1]]
        return A.Assign(targets, kids[-1], pos=self.pos(meta))

    def c_augassign(self, meta, kids):
        target, op, value = kids
        if not isinstance(target, (A.Name, A.Attribute, A.Subscript)):
            raise self.error(f"'{_expr_kind(target)}' is an illegal expression for augmented "
                             "assignment", target.pos)
        return A.AugAssign(target, str(op)[:-1], value, pos=self.pos(meta))

    def c_annassign(self, meta, kids):
        target, ann, value = kids
        if not isinstance(target, (A.Name, A.Attribute, A.Subscript)):
            raise self.error("only single target (not tuple) can be annotated", target.pos)
        return A.AnnAssign(target, ann, value, pos=self.pos(meta))

    def c_pass_stmt(self, meta, kids):
        return A.Pass(pos=self.pos(meta))

    def c_break_stmt(self, meta, kids):
        return A.Break(pos=self.pos(meta))

    def c_continue_stmt(self, meta, kids):
        return A.Continue(pos=self.pos(meta))

    def c_return_stmt(self, meta, kids):
        return A.Return(kids[0] if kids else None, pos=self.pos(meta))

    def c_raise_stmt(self, meta, kids):
        kids = kids + [None, None]
        return A.Raise(kids[0], kids[1], pos=self.pos(meta))

    def c_global_stmt(self, meta, kids):
        return A.Global([str(k) for k in kids], pos=self.pos(meta))

    def c_nonlocal_stmt(self, meta, kids):
        return A.Nonlocal([str(k) for k in kids], pos=self.pos(meta))

    def c_del_stmt(self, meta, kids):
        t = kids[0]
        targets = t.elts if isinstance(t, A.TupleDisplay) else [t]
        return A.Delete([self.target(x, "delete") for x in targets], pos=self.pos(meta))

    def c_assert_stmt(self, meta, kids):
        return A.Assert(kids[0], kids[1], pos=self.pos(meta))

    def c_import_name(self, meta, kids):
        return A.Import(kids, pos=self.pos(meta))

    def c_dotted_as_name(self, meta, kids):
        name, asname = kids
        return A.Alias(name, str(asname) if asname is not None else None, pos=self.pos(meta))

    def c_dotted_name(self, meta, kids):
        return ".".join(str(k) for k in kids)

    def c_import_from(self, meta, kids):
        module, names = kids[0], kids[1]
        if names == "*":
            return A.ImportFrom(module, [], True, pos=self.pos(meta))
        return A.ImportFrom(module, names, pos=self.pos(meta))

    def c_import_star(self, meta, kids):
        return "*"

    def c_import_as_names(self, meta, kids):
        return list(kids)

    def c_import_as_name(self, meta, kids):
        name, asname = kids
        return A.Alias(str(name), str(asname) if asname is not None else None, pos=self.pos(meta))

    def c_if_stmt(self, meta, kids):
        test, body = kids[0], kids[1]
        orelse = kids[-1] or []
        elifs = kids[2:-1]
        for (etest, ebody, epos) in reversed(elifs):
            orelse = [A.If(etest, ebody, orelse, pos=epos)]
        return A.If(test, body, orelse, pos=self.pos(meta))

    def c_elif_clause(self, meta, kids):
        return (kids[0], kids[1], self.pos(meta))

    def c_while_stmt(self, meta, kids):
        return A.While(kids[0], kids[1], kids[2] or [], pos=self.pos(meta))

    def c_for_stmt(self, meta, kids):
        target = self.target(kids[0], "assign to")
        return A.For(target, kids[1], kids[2], kids[3] or [], pos=self.pos(meta))

    def c_try_stmt(self, meta, kids):
        body = kids[0]
        handlers = [k for k in kids[1:-2]]
        for h in handlers[:-1]:
            if h.type is None:
                raise self.error("default 'except:' must be last", h.pos)
        return A.Try(body, handlers, kids[-2] or [], kids[-1] or [], pos=self.pos(meta))

    def c_try_finally(self, meta, kids):
        return A.Try(kids[0], [], [], kids[1], pos=self.pos(meta))

    def c_except_clause(self, meta, kids):
        typ, name, body = kids
        return A.Handler(typ, str(name) if name is not None else None, body, pos=self.pos(meta))

    def c_with_stmt(self, meta, kids):
        return A.With(kids[:-1], kids[-1], pos=self.pos(meta))

    def c_with_item(self, meta, kids):
        ctx, target = kids
        if target is not None:
            target = self.target(target, "assign to")
        return A.WithItem(ctx, target, pos=self.pos(meta))

    def c_funcdef(self, meta, kids):
        name, params, returns, body = kids
        params = params or A.Params([], pos=self.pos(meta))
        return A.FunctionDef(str(name), params, body, [], returns, pos=self.pos(meta))

    def c_decorated(self, meta, kids):
        fn = kids[-1]
        fn.decorators = list(kids[:-1])
        return fn

    def c_decorator(self, meta, kids):
        return kids[0]

    def c_classdef(self, meta, kids):
        name, body = kids[0], kids[-1]
        args = next((k for k in kids[1:-1] if isinstance(k, list)), [])
        bases, keywords = [], []
        for a in args:
            if isinstance(a, A.GenExp):
                raise self.error("invalid syntax", a.pos)
            if isinstance(a, A.Keyword):
                keywords.append(a)
            else:
                bases.append(a)
        return A.ClassDef(str(name), bases, keywords, body, pos=self.pos(meta))

    # ---------------------------------------------------------- parameters
    def _params(self, meta, items, lam):
        args, kwonly = [], []
        vararg = kwarg = None
        posonly = 0
        star_seen = False
        seen_default = False
        names = set()
        for item in items:
            kind, param = item
            if param is not None:
                if param.name in names:
                    raise self.error(f"duplicate argument '{param.name}' in function definition",
                                     param.pos)
                names.add(param.name)
            if kwarg is not None:
                raise self.error("arguments cannot follow var-keyword argument", (param or kwarg).pos)
            if kind == "/":
                if star_seen or posonly or not args:
                    raise self.error("invalid syntax", self.pos(meta), hint="misplaced '/'")
                posonly = len(args)
            elif kind == "*":
                if star_seen:
                    raise self.error("* argument may appear only once", self.pos(meta))
                star_seen = True
                vararg = param
            elif kind == "**":
                kwarg = param
            elif star_seen:
                kwonly.append(param)
            else:
                if param.default is not None:
                    seen_default = True
                elif seen_default:
                    raise self.error("non-default argument follows default argument", param.pos)
                args.append(param)
        if star_seen and vararg is None and not kwonly:
            raise self.error("named arguments must follow bare *", self.pos(meta))
        return A.Params(args, vararg, kwonly, kwarg, posonly, pos=self.pos(meta))

    def c_parameters(self, meta, kids):
        return self._params(meta, kids, False)

    def c_lambda_params(self, meta, kids):
        return self._params(meta, kids, True)

    def c_typed_param(self, meta, kids):
        name, ann, default = kids
        return ("", A.Param(str(name), default, ann, pos=self.pos(meta)))

    def c_lambda_param(self, meta, kids):
        name, default = kids
        return ("", A.Param(str(name), default, None, pos=self.pos(meta)))

    def c_star_param(self, meta, kids):
        name = kids[0]
        return ("*", A.Param(str(name), None, kids[1], pos=self.pos(meta)) if name is not None else None)

    def c_lambda_star_param(self, meta, kids):
        name = kids[0]
        return ("*", A.Param(str(name), pos=self.pos(meta)) if name is not None else None)

    def c_kwstar_param(self, meta, kids):
        return ("**", A.Param(str(kids[0]), None, kids[1] if len(kids) > 1 else None,
                              pos=self.pos(meta)))

    def c_lambda_kwstar_param(self, meta, kids):
        return ("**", A.Param(str(kids[0]), pos=self.pos(meta)))

    def c_slash_param(self, meta, kids):
        return ("/", None)

    # ---------------------------------------------------------- expressions
    def c_ifexp(self, meta, kids):
        body, test, orelse = kids
        return A.IfExp(test, body, orelse, pos=self.pos(meta))

    def c_lambdef(self, meta, kids):
        params, body = kids
        return A.Lambda(params or A.Params([], pos=self.pos(meta)), body, pos=self.pos(meta))

    def c_or_op(self, meta, kids):
        return A.BoolOp("or", kids, pos=self.pos(meta))

    def c_and_op(self, meta, kids):
        return A.BoolOp("and", kids, pos=self.pos(meta))

    def c_not_op(self, meta, kids):
        return A.UnaryOp("not", kids[0], pos=self.pos(meta))

    def c_compare(self, meta, kids):
        return A.Compare(kids[0], list(kids[1::2]), list(kids[2::2]), pos=self.pos(meta))

    def c_comp_op(self, meta, kids):
        return " ".join(str(k) for k in kids)

    def c_star_expr(self, meta, kids):
        return A.Starred(kids[0], pos=self.pos(meta))

    def c_binchain(self, meta, kids):
        left = kids[0]
        for i in range(1, len(kids), 2):
            right = kids[i + 1]
            left = A.BinOp(str(kids[i]), left, right,
                           pos=(left.pos[0], left.pos[1], right.pos[2], right.pos[3]))
        return left

    def c_unary(self, meta, kids):
        return A.UnaryOp(str(kids[0]), kids[1], pos=self.pos(meta))

    def c_pow(self, meta, kids):
        return A.BinOp("**", kids[0], kids[1], pos=self.pos(meta))

    def c_call(self, meta, kids):
        func, args = kids
        pos = self.pos(meta)
        if args is None:
            return A.Call(func, [], [], pos=pos)
        if isinstance(args, A.GenExp):
            return A.Call(func, [args], [], pos=pos)
        positional, keywords = [], []
        seen = set()
        for a in args:
            if isinstance(a, A.Keyword):
                if a.name is None:
                    keywords.append(a)
                    continue
                if a.name in seen:
                    raise self.error(f"keyword argument repeated: {a.name}", a.pos)
                seen.add(a.name)
                keywords.append(a)
            else:
                if keywords and not isinstance(a, A.Starred):
                    raise self.error("positional argument follows keyword argument", a.pos)
                positional.append(a)
        return A.Call(func, positional, keywords, pos=pos)

    def c_arguments(self, meta, kids):
        for k in kids:
            if isinstance(k, A.GenExp) and len(kids) > 1:
                raise self.error("Generator expression must be parenthesized", k.pos)
        return list(kids)

    def c_genexp_argument(self, meta, kids):
        elt, gens = kids[0]
        return A.GenExp(elt, gens, pos=self.pos(meta))

    def c_kwarg(self, meta, kids):
        return A.Keyword(str(kids[0]), kids[1], pos=self.pos(meta))

    def c_star_arg(self, meta, kids):
        return A.Starred(kids[0], pos=self.pos(meta))

    def c_kwstar_arg(self, meta, kids):
        return A.Keyword(None, kids[0], pos=self.pos(meta))

    def c_subscript(self, meta, kids):
        return A.Subscript(kids[0], kids[1], pos=self.pos(meta))

    def c_subscriptlist(self, meta, kids):
        if len(kids) == 1:
            item = kids[0]
            end = (meta.end_line, meta.end_column)
            if not meta.empty and item.pos != A.NOPOS and (self.shift((1, 1) + end)[2:]) > item.pos[2:] \
                    and not isinstance(item, A.Starred):
                return A.TupleDisplay([item], pos=self.pos(meta))
            if isinstance(item, A.Starred):
                return A.TupleDisplay([item], pos=self.pos(meta))
            return item
        return A.TupleDisplay(list(kids), pos=self.pos(meta))

    def c_slice(self, meta, kids):
        lo, up, step = (kids + [None, None, None])[:3]
        return A.Slice(lo, up, step, pos=self.pos(meta))

    def c_attribute(self, meta, kids):
        return A.Attribute(kids[0], str(kids[1]), pos=self.pos(meta))

    def c_empty_tuple(self, meta, kids):
        return A.TupleDisplay([], pos=self.pos(meta))

    def c_paren_tuple(self, meta, kids):
        t = kids[0]
        return A.TupleDisplay(t.elts, pos=self.pos(meta))

    def c_testlist_tuple(self, meta, kids):
        return A.TupleDisplay(list(kids), pos=self.pos(meta))

    def c_exprlist_tuple(self, meta, kids):
        return A.TupleDisplay(list(kids), pos=self.pos(meta))

    def c_genexp(self, meta, kids):
        elt, gens = kids[0]
        return A.GenExp(elt, gens, pos=self.pos(meta))

    def c_list(self, meta, kids):
        return A.ListDisplay([k for k in kids if k is not None], pos=self.pos(meta))

    def c_listcomp(self, meta, kids):
        elt, gens = kids[0]
        return A.ListComp(elt, gens, pos=self.pos(meta))

    def c_brace(self, meta, kids):
        items = [k for k in kids if k is not None]
        pos = self.pos(meta)
        if not items:
            return A.DictDisplay([], [], pos=pos)
        is_dict = [isinstance(k, tuple) for k in items]
        if all(is_dict):
            return A.DictDisplay([k[0] for k in items], [k[1] for k in items], pos=pos)
        if any(is_dict):
            bad = next(k for k in items if isinstance(k, tuple) != is_dict[0])
            where = bad[1].pos if isinstance(bad, tuple) else bad.pos
            raise self.error("invalid syntax", where)
        return A.SetDisplay(items, pos=pos)

    def c_dict_pair(self, meta, kids):
        return (kids[0], kids[1])

    def c_dict_star(self, meta, kids):
        return (None, kids[0])

    def c_setcomp(self, meta, kids):
        elt, gens = kids[0]
        return A.SetComp(elt, gens, pos=self.pos(meta))

    def c_dictcomp(self, meta, kids):
        (key, value), gens = kids[0], kids[1:]
        if key is None:
            raise self.error("dict unpacking cannot be used in dict comprehension", value.pos)
        return A.DictComp(key, value, list(gens), pos=self.pos(meta))

    def c_comprehension(self, meta, kids):
        elt = kids[0]
        if isinstance(elt, A.Starred):
            raise self.error("iterable unpacking cannot be used in comprehension", elt.pos)
        return (elt, list(kids[1:]))

    def c_comp_for(self, meta, kids):
        target = self.target(kids[0], "assign to")
        return A.Comprehension(target, kids[1], list(kids[2:]), pos=self.pos(meta))

    def c_comp_if(self, meta, kids):
        return kids[0]

    def c_name(self, meta, kids):
        return A.Name(str(kids[0]), pos=self.tpos(kids[0]))

    def c_dec_number(self, meta, kids):
        return A.Const(int(str(kids[0]).replace("_", "")), pos=self.tpos(kids[0]))

    def c_base_number(self, meta, kids):
        return A.Const(int(str(kids[0]), 0), pos=self.tpos(kids[0]))

    def c_float_number(self, meta, kids):
        return A.Const(float(str(kids[0]).replace("_", "")), pos=self.tpos(kids[0]))

    def c_imag_number(self, meta, kids):
        # (complex tensors: `2+3j` is the int 2 plus the imaginary literal 3j, as Python's)
        return A.Const(complex(str(kids[0]).replace("_", "")), pos=self.tpos(kids[0]))

    def c_ellipsis(self, meta, kids):
        return A.Const(Ellipsis, pos=self.pos(meta))

    def c_const_none(self, meta, kids):
        return A.Const(None, pos=self.pos(meta))

    def c_const_true(self, meta, kids):
        return A.Const(True, pos=self.pos(meta))

    def c_const_false(self, meta, kids):
        return A.Const(False, pos=self.pos(meta))

    def c_strings(self, meta, kids):
        parts = []
        is_f = False
        for tok in kids:
            prefix, quote, body, raw, f = self._split_string(tok)
            if f:
                is_f = True
                parts.extend(self._fstring_parts(tok, prefix, quote, body, raw))
            else:
                parts.append(body if raw else self._unescape(body, tok))
        pos = self.pos(meta)
        if not is_f:
            return A.Const("".join(parts), pos=pos)
        merged = []
        for p in parts:
            if isinstance(p, str) and merged and isinstance(merged[-1], str):
                merged[-1] += p
            elif p != "":
                merged.append(p)
        return A.FString(merged, pos=pos)

    # ---------------------------------------------------------- strings
    def _split_string(self, tok):
        text = str(tok)
        i = 0
        while text[i] not in "'\"":
            i += 1
        prefix = text[:i].lower()
        q = text[i]
        quote = q * 3 if text[i:i + 3] == q * 3 and len(text) - i >= 6 else q
        body = text[i + len(quote): len(text) - len(quote)]
        if "b" in prefix:
            raise self.error("bytes literals are not supported by gradcli", self.tpos(tok))
        if prefix not in ("", "r", "u", "f", "fr", "rf"):
            raise self.error(f"invalid string prefix '{text[:i]}'", self.tpos(tok))
        return prefix, quote, body, "r" in prefix, "f" in prefix

    def _unescape(self, s, tok):
        if "\\" not in s:
            return s

        def sub(m):
            g = m.group(1)
            if g in _SIMPLE_ESC:
                return _SIMPLE_ESC[g]
            c = g[0]
            if c in "01234567":
                return chr(int(g, 8))
            if c in "xuU":
                if len(g) == 1:
                    kind = {"x": "\\xXX", "u": "\\uXXXX", "U": "\\UXXXXXXXX"}[c]
                    raise self.error(f"(unicode error) truncated {kind} escape", self.tpos(tok))
                code = int(g[1:], 16)
                if code > 0x10FFFF:
                    raise self.error("(unicode error) illegal Unicode character", self.tpos(tok))
                return chr(code)
            if c == "N":
                name = g[2:-1] if len(g) > 1 else ""
                try:
                    return unicodedata.lookup(name)
                except KeyError:
                    raise self.error("(unicode error) unknown Unicode character name",
                                     self.tpos(tok)) from None
            return m.group(0)

        return re.sub(_ESCAPE, sub, s)

    def _fstring_parts(self, tok, prefix, quote, body, raw):
        # absolute position of body[0]
        text = str(tok)
        start = text.index(quote[0]) + len(quote)
        base_line, base_col = self.tpos(tok)[0], self.tpos(tok)[1] + start

        def where(k):
            """(line, col) of body[k]."""
            nl = body.count("\n", 0, k)
            if nl:
                return base_line + nl, k - body.rindex("\n", 0, k)
            return base_line, base_col + k

        return self._fparse(tok, body, 0, len(body), raw, where, nested=0)[0]

    def _fparse(self, tok, s, i, end, raw, where, nested, in_spec=False):
        """Parse f-string text s[i:end] (or a format spec, up to its '}').
        Returns (parts, index after)."""
        parts = []
        lit = []
        while i < end:
            ch = s[i]
            if ch == "{":
                if not in_spec and i + 1 < end and s[i + 1] == "{":
                    lit.append("{")
                    i += 2
                    continue
                if lit:
                    parts.append(self._lit("".join(lit), raw, tok))
                    lit = []
                fv, i = self._field(tok, s, i, end, raw, where, nested)
                parts.append(fv)
                continue
            if ch == "}":
                if in_spec:
                    break
                if i + 1 < end and s[i + 1] == "}":
                    lit.append("}")
                    i += 2
                    continue
                line, col = where(i)
                raise self.error("f-string: single '}' is not allowed", (line, col, line, col + 1))
            lit.append(ch)
            i += 1
        if lit:
            parts.append(self._lit("".join(lit), raw, tok))
        return parts, i

    def _lit(self, text, raw, tok):
        return text if raw else self._unescape(text, tok)

    def _field(self, tok, s, i, end, raw, where, nested):
        """s[i] == '{': parse one replacement field; returns (FormattedValue, index after '}')."""
        line0, col0 = where(i)
        if nested >= 2:
            raise self.error("f-string: expressions nested too deeply", (line0, col0, line0, col0 + 1))
        j = i + 1
        depth = 0
        quote = None
        expr_end = conv = spec_start = None
        debug = None
        while j < end:
            c = s[j]
            if quote:
                if c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    if c == "}":
                        expr_end = j
                        break
                    line, col = where(j)
                    raise self.error(f"f-string: unmatched '{c}'", (line, col, line, col + 1))
                depth -= 1
            elif c == "\\":
                line, col = where(j)
                raise self.error("f-string expression part cannot include a backslash",
                                 (line, col, line, col + 1))
            elif c == "#":
                line, col = where(j)
                raise self.error("f-string expression part cannot include '#'", (line, col, line, col + 1))
            elif depth == 0 and c == "!" and j + 1 < end and s[j + 1] != "=":
                expr_end = j
                break
            elif depth == 0 and c == ":":
                expr_end = j
                break
            elif depth == 0 and c == "=" and s[j - 1] not in "=!<>" and \
                    s[j + 1:end].lstrip(" ")[:1] in ("!", ":", "}") and s[j + 1:j + 2] != "=":
                k = j + 1
                while k < end and s[k] == " ":
                    k += 1
                debug = s[i + 1:k]
                expr_end = j
                j = k
                break
            j += 1
        else:
            raise self.error("f-string: expecting '}'", (line0, col0, line0, col0 + 1))
        if debug is not None:
            expr_text = s[i + 1:expr_end]
            k = j
        else:
            expr_text = s[i + 1:expr_end]
            k = expr_end
        if not expr_text.strip():
            raise self.error("f-string: empty expression not allowed", (line0, col0, line0, col0 + 1))
        if quote:
            raise self.error("f-string: unterminated string", (line0, col0, line0, col0 + 1))
        eline, ecol = where(i + 1)
        value = self._parse_fexpr(expr_text, eline, ecol)
        if k < end and s[k] == "!":
            conv = s[k + 1:k + 2]
            if conv not in ("s", "r", "a"):
                line, col = where(k)
                raise self.error("f-string: invalid conversion character: expected 's', 'r', or 'a'",
                                 (line, col, line, col + 2))
            k += 2
        spec = None
        if k < end and s[k] == ":":
            spec_start = k + 1
            sparts, k = self._fparse(tok, s, spec_start, end, raw, where, nested + 1, in_spec=True)
            sl, sc = where(spec_start)
            spec = A.FString(sparts, pos=(sl, sc, sl, sc))
        if k >= end or s[k] != "}":
            raise self.error("f-string: expecting '}'", (line0, col0, line0, col0 + 1))
        eline2, ecol2 = where(k)
        fv = A.FormattedValue(value, conv, spec, debug, pos=(line0, col0, eline2, ecol2 + 1))
        return fv, k + 1

    def _parse_fexpr(self, text, line, col):
        # parse "(" + text + ")" with the fexpr start; shift positions back
        sub = _Parse("(" + text + ")", self.p.filename, self.p.max_nesting, original=self.p.source)
        try:
            tree = sub._lark_parse("(" + text + ")", "fexpr")
        except CompileError as e:
            l1 = e.line
            c1 = e.col - 1 + (col - 1 if l1 == 1 else 0)
            raise self.error(f"f-string: {e.message}", (l1 + line - 1, max(c1, 1), l1 + line - 1,
                                                        max(c1, 1) + 1)) from None
        conv = _Converter(sub, line_offset=line - 1, col_offset=col - 2)
        return conv.convert(tree)

    # ---------------------------------------------------------- targets
    def target(self, node, verb):
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (A.Name, A.Attribute, A.Subscript)):
                continue
            if isinstance(n, (A.TupleDisplay, A.ListDisplay)):
                stars = [e for e in n.elts if isinstance(e, A.Starred)]
                if len(stars) > 1:
                    raise self.error("multiple starred expressions in assignment", stars[1].pos)
                if stars and verb == "delete":
                    raise self.error("cannot delete starred", stars[0].pos)
                stack.extend(n.elts)
                continue
            if isinstance(n, A.Starred):
                if n is node:
                    raise self.error("starred assignment target must be in a list or tuple", n.pos)
                stack.append(n.value)
                continue
            raise self.error(f"cannot {verb} {_expr_kind(n)}", n.pos)
        return node


def _is_token(x):
    return isinstance(x, Token)


# What Python's messages call each kind of expression ("cannot assign to comparison");
# any kind not named here is "expression".
_EXPR_KINDS = {
    A.Call: "function call",
    A.FString: "f-string expression",
    A.Compare: "comparison",
    A.IfExp: "conditional expression",
    A.Lambda: "lambda",
    A.ListComp: "list comprehension",
    A.GenExp: "generator expression",
    A.SetComp: "set comprehension",
    A.DictComp: "dict comprehension",
    A.DictDisplay: "dict literal",
    A.SetDisplay: "set display",
    A.TupleDisplay: "tuple",
    A.ListDisplay: "list",
}


def _expr_kind(n) -> str:
    if isinstance(n, A.Const):
        if n.value is Ellipsis:
            return "ellipsis"
        if n.value is None or n.value is True or n.value is False:
            return repr(n.value)
        return "literal"
    return _EXPR_KINDS.get(type(n), "expression")
