"""A small LALR(1) runtime for the gradcli grammar: lexer, parser loop and tree builder.

The grammar is compiled ahead of time by lark (``python -m gradcli.lang._lalr_gen``
writes the tables to :mod:`gradcli.lang._lalr_tables`); this module runs those
tables without importing lark, whose import (with ``regex``, ``logging``,
``hashlib``, its grammar loader) and table loading cost more than the rest of
``gradcli grad``'s start-up besides numpy.

It reproduces exactly what lark 1.x does for ``Lark(parser="lalr", lexer="basic",
postlex=..., propagate_positions=True, maybe_placeholders=True)``: the same
tokens (type, value, positions), the same trees (rule aliases, ``?rule``
inlining, ``_rule`` expansion, ``None`` placeholders, meta positions including
lark's ``container_*`` bookkeeping) and the same errors (classes named and
filled as lark's ``UnexpectedCharacters`` / ``UnexpectedToken``). The
differential test ``tests/test_startup_parser.py`` checks all of that against lark
itself, and that the tables are fresh for ``grammar/gradcli.lark``.
"""
import re

__all__ = ["Token", "Tree", "Meta", "UnexpectedInput", "UnexpectedCharacters",
           "UnexpectedToken", "UnexpectedEOF", "Parser"]


class Token(str):
    """A string with its token type and position (as lark's ``Token``)."""

    __slots__ = ("type", "start_pos", "value", "line", "column", "end_line", "end_column",
                 "end_pos")

    def __new__(cls, type, value, start_pos=None, line=None, column=None, end_line=None,
                end_column=None, end_pos=None):
        inst = str.__new__(cls, value)
        inst.type = type
        inst.start_pos = start_pos
        inst.value = value
        inst.line = line
        inst.column = column
        inst.end_line = end_line
        inst.end_column = end_column
        inst.end_pos = end_pos
        return inst

    def update(self, type=None, value=None):
        return Token.new_borrow_pos(type if type is not None else self.type,
                                    value if value is not None else self.value, self)

    @classmethod
    def new_borrow_pos(cls, type_, value, borrow_t):
        return cls(type_, value, borrow_t.start_pos, borrow_t.line, borrow_t.column,
                   borrow_t.end_line, borrow_t.end_column, borrow_t.end_pos)

    def __reduce__(self):
        return (self.__class__, (self.type, self.value, self.start_pos, self.line, self.column))

    def __repr__(self):
        return "Token(%r, %r)" % (self.type, self.value)

    def __eq__(self, other):
        if isinstance(other, Token) and self.type != other.type:
            return False
        return str.__eq__(self, other)

    __hash__ = str.__hash__


class Meta:
    """Positions of a tree (attributes appear as lark sets them; ``empty`` until then)."""

    def __init__(self):
        self.empty = True


class Tree:
    __slots__ = ("data", "children", "_meta")

    def __init__(self, data, children, meta=None):
        self.data = data
        self.children = children
        self._meta = meta

    @property
    def meta(self):
        if self._meta is None:
            self._meta = Meta()
        return self._meta

    def __repr__(self):
        return "Tree(%r, %r)" % (self.data, self.children)


# ------------------------------------------------------------------ errors
class UnexpectedInput(Exception):
    """Base of the parse errors (named as lark's, with the same attributes)."""

    line = column = pos_in_stream = None
    state = interactive_parser = None


class UnexpectedEOF(UnexpectedInput):  # never raised by LALR; kept for except clauses
    pass


class UnexpectedCharacters(UnexpectedInput):
    def __init__(self, seq, lex_pos, line, column, allowed=None, token_history=None):
        self.line = line
        self.column = column
        self.pos_in_stream = lex_pos
        self.allowed = allowed
        self.token_history = token_history
        self.char = seq[lex_pos]
        super().__init__(f"No terminal matches {self.char!r} in the current parser context, "
                         f"at line {line} col {column}")


class UnexpectedToken(UnexpectedInput):
    def __init__(self, token, expected):
        self.line = getattr(token, "line", "?")
        self.column = getattr(token, "column", "?")
        self.pos_in_stream = getattr(token, "start_pos", None)
        self.token = token
        self.expected = expected
        super().__init__(f"Unexpected token {token!r} at line {self.line}, column {self.column}. "
                         f"Expected one of: {sorted(expected)}")


# ------------------------------------------------------------------ lexer
_T = None  # gradcli.lang._lalr_tables, imported on first use (so that the generator
_SCANNERS = None  # can import gradcli.lang.parser while the tables are missing)


_STATES = None


def _tables():
    global _T
    if _T is None:
        from . import _lalr_tables
        _T = _lalr_tables
    return _T


class _States(dict):
    """state -> {symbol: action}, each dict built from the compact table on first use."""

    def __missing__(self, state):
        T = _T
        keyset, actions = T.STATES[state]
        symbols = T.SYMBOLS
        row = self[state] = {symbols[k]: a for k, a in zip(T.KEYSETS[keyset], actions)}
        return row


def _states():
    global _STATES
    if _STATES is None:
        _tables()
        _STATES = _States()
    return _STATES


def _scanners():
    global _SCANNERS
    if _SCANNERS is None:
        T = _tables()
        _SCANNERS = (_compile_patterns(T.PATTERNS), T.UNLESS)
    return _SCANNERS


def _compile_patterns(patterns) -> list:
    """The lexer's regexes, compiled by re (~1.5 ms of a start-up: re.compile parses the
    1.5 KB alternation in Python code)."""
    return [re.compile(p, f) for p, f in patterns]


def lex(text):
    """Tokens of ``text`` (ignored ones dropped), lazily, as lark's BasicLexer."""
    mres, unless = _scanners()
    T = _tables()
    ignore = T.IGNORE
    newline_types = T.NEWLINE_TYPES
    end = len(text)
    pos = 0
    line = 1
    column = 1
    line_start = 0
    last = None
    while pos < end:
        for mre in mres:
            m = mre.match(text, pos, end)
            if m:
                break
        else:
            raise UnexpectedCharacters(text, pos, line, column, allowed=set(T.ALLOWED),
                                       token_history=last and [last])
        value = m.group(0)
        type_ = m.lastgroup
        ignored = type_ in ignore
        t = None
        if not ignored or type_ in unless:
            t = Token(type_, value, pos, line, column)
        if type_ in newline_types:
            n = value.count("\n")
            if n:
                line += n
                line_start = pos + value.rindex("\n") + 1
        pos += len(value)
        column = pos - line_start + 1
        if t is not None:
            t.end_line = line
            t.end_column = column
            t.end_pos = pos
            if type_ in unless:
                t.type = unless[type_].get(value, type_)
            if not ignored:
                last = t
                yield t


# ------------------------------------------------------------------ parser
def _edge(c):
    """A child's span end values as lark's PropagatePositions reads them: a tree's
    ``container_*`` positions (set with its plain ones), a token's own; None for a
    child without a position (a placeholder, or a tree with an empty meta)."""
    tc = type(c)
    if tc is Token:
        return c
    if tc is Tree or isinstance(c, Tree):
        m = c._meta
        if m is None or m.empty:
            return None
        return m
    return None


def _propagate(res, children):
    """lark's PropagatePositions: the rule's span from its first and last child with a
    position; a side's plain attributes are set only once, its ``container_*`` ones
    every time (a tree inlined by ``?rule`` keeps its own first span)."""
    if not isinstance(res, Tree):
        return
    meta = res.meta
    d = meta.__dict__
    for c in children:
        e = _edge(c)
        if e is not None:
            if type(e) is Token:
                v = (e.line, e.column, e.start_pos)
            else:
                v = (e.container_line, e.container_column, e.container_start_pos)
            if "line" not in d:
                d["line"], d["column"], d["start_pos"] = v
                d["empty"] = False
            d["container_line"], d["container_column"], d["container_start_pos"] = v
            break
    for c in reversed(children):
        e = _edge(c)
        if e is not None:
            if type(e) is Token:
                v = (e.end_line, e.end_column, e.end_pos)
            else:
                v = (e.container_end_line, e.container_end_column, e.container_end_pos)
            if "end_line" not in d:
                d["end_line"], d["end_column"], d["end_pos"] = v
                d["empty"] = False
            d["container_end_line"], d["container_end_column"], d["container_end_pos"] = v
            break


def _build(rule, children):
    """The value of a reduction: lark's ChildFilterLALR, ExpandSingleChild and Tree."""
    _origin, _size, name, expand1, include, append_none = rule
    if include is None:
        filtered = children
    else:
        filtered = []
        for i, to_expand, add_none in include:
            if add_none:
                filtered += [None] * add_none
            if to_expand:
                if filtered:
                    filtered += children[i].children
                else:
                    filtered = children[i].children
            else:
                filtered.append(children[i])
        if append_none:
            filtered += [None] * append_none
    if expand1 and len(filtered) == 1:
        res = filtered[0]
    else:
        res = Tree(name, filtered)
    _propagate(res, children)
    return res


class Parser:
    """``parse(text, start)`` and ``lex(text)`` with a post-lexer, as ``lark.Lark``."""

    def __init__(self, postlex_factory):
        self.postlex_factory = postlex_factory

    def lex(self, text, dont_ignore=False):
        assert not dont_ignore
        return self.postlex_factory().process(lex(text))

    def parse(self, text, start):
        T = _tables()
        states = _states()
        rules = T.RULES
        end_state = T.END[start]
        state_stack = [T.START[start]]
        value_stack = []

        def feed(token, is_end=False):
            while True:
                row = states[state_stack[-1]]
                action = row.get(token.type)
                if action is None:
                    raise UnexpectedToken(token, {s for s in row if s.isupper()})
                if action >= 0:  # shift
                    state_stack.append(action)
                    value_stack.append(token)
                    return None
                rule = rules[~action]
                size = rule[1]
                if size:
                    s = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    s = []
                value = _build(rule, s)
                state_stack.append(states[state_stack[-1]][rule[0]])
                value_stack.append(value)
                if is_end and state_stack[-1] == end_state:
                    return value_stack[-1]

        token = None
        for token in self.postlex_factory().process(lex(text)):
            feed(token)
        end_token = Token.new_borrow_pos("$END", "", token) if token else Token("$END", "", 0, 1, 1)
        return feed(end_token, True)
