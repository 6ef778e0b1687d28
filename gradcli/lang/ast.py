"""gradcli's own syntax tree: small dataclasses with source positions.

Every node has ``pos = (line, col, end_line, end_col)``: 1-based lines and
columns, the end column exclusive, as lark reports them. The parser
(``gradcli.lang.parser``) builds these nodes; the compiler
(``gradcli.lang.compiler``) turns them into closures.

Left-associative operator chains (``a + b - c``) are nested ``BinOp`` nodes
whose ``left`` is the chain so far; the compiler folds such spines
iteratively, so a 10,000-term sum nests no Python calls.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

Pos = tuple  # (line, col, end_line, end_col)
NOPOS: Pos = (0, 0, 0, 0)


@dataclass(slots=True)
class Node:
    pos: Pos = field(default=NOPOS, kw_only=True, repr=False, compare=False)

    @property
    def line(self) -> int:
        return self.pos[0]

    @property
    def col(self) -> int:
        return self.pos[1]

    @property
    def end_line(self) -> int:
        return self.pos[2]

    @property
    def end_col(self) -> int:
        return self.pos[3]


# ----------------------------------------------------------------- expressions
@dataclass(slots=True)
class Name(Node):
    id: str


@dataclass(slots=True)
class Const(Node):
    value: Any


@dataclass(slots=True)
class FormattedValue(Node):
    value: Node
    conversion: str | None  # 's', 'r', 'a' or None
    spec: "FString | None"
    debug: str | None = None  # the "x=" text of f"{x=}"


@dataclass(slots=True)
class FString(Node):
    parts: list  # of str and FormattedValue


@dataclass(slots=True)
class Attribute(Node):
    value: Node
    attr: str


@dataclass(slots=True)
class Subscript(Node):
    value: Node
    index: Node


@dataclass(slots=True)
class Slice(Node):
    lower: Node | None
    upper: Node | None
    step: Node | None


@dataclass(slots=True)
class Keyword(Node):
    name: str
    value: Node


@dataclass(slots=True)
class Starred(Node):
    value: Node


@dataclass(slots=True)
class Call(Node):
    func: Node
    args: list  # of expressions and Starred
    keywords: list  # of Keyword


@dataclass(slots=True)
class BinOp(Node):
    op: str  # '+', '-', '*', '/', '//', '%', '@', '**', '<<', '>>', '&', '|', '^'
    left: Node
    right: Node


@dataclass(slots=True)
class UnaryOp(Node):
    op: str  # '-', '+', '~', 'not'
    operand: Node


@dataclass(slots=True)
class BoolOp(Node):
    op: str  # 'and' / 'or'
    values: list


@dataclass(slots=True)
class Compare(Node):
    left: Node
    ops: list  # '<', 'not in', 'is not', ...
    comparators: list


@dataclass(slots=True)
class IfExp(Node):
    test: Node
    body: Node
    orelse: Node


@dataclass(slots=True)
class Param(Node):
    name: str
    default: Node | None = None
    annotation: Node | None = None


@dataclass(slots=True)
class Params(Node):
    args: list  # positional-or-keyword Param (positional-only ones first)
    vararg: Param | None = None
    kwonly: list = field(default_factory=list)
    kwarg: Param | None = None
    posonly: int = 0  # how many of args are positional-only


@dataclass(slots=True)
class Lambda(Node):
    params: Params
    body: Node


@dataclass(slots=True)
class ListDisplay(Node):
    elts: list


@dataclass(slots=True)
class TupleDisplay(Node):
    elts: list


@dataclass(slots=True)
class Comprehension(Node):
    target: Node
    iter: Node
    ifs: list


@dataclass(slots=True)
class ListComp(Node):
    elt: Node
    generators: list


@dataclass(slots=True)
class GenExp(Node):
    elt: Node
    generators: list


# ------------------------------------------------------------------ statements
@dataclass(slots=True)
class ExprStmt(Node):
    value: Node


@dataclass(slots=True)
class Assign(Node):
    targets: list
    value: Node


@dataclass(slots=True)
class AugAssign(Node):
    target: Node
    op: str  # '+', '-', ... (without '=')
    value: Node


@dataclass(slots=True)
class AnnAssign(Node):
    target: Node
    annotation: Node
    value: Node | None


@dataclass(slots=True)
class If(Node):
    test: Node
    body: list
    orelse: list


@dataclass(slots=True)
class While(Node):
    test: Node
    body: list
    orelse: list


@dataclass(slots=True)
class For(Node):
    target: Node
    iter: Node
    body: list
    orelse: list


@dataclass(slots=True)
class Break(Node):
    pass


@dataclass(slots=True)
class Continue(Node):
    pass


@dataclass(slots=True)
class Pass(Node):
    pass


@dataclass(slots=True)
class FunctionDef(Node):
    name: str
    params: Params
    body: list
    decorators: list
    returns: Node | None = None


@dataclass(slots=True)
class Return(Node):
    value: Node | None


@dataclass(slots=True)
class Global(Node):
    names: list


@dataclass(slots=True)
class Nonlocal(Node):
    names: list


@dataclass(slots=True)
class WithItem(Node):
    context: Node
    target: Node | None


@dataclass(slots=True)
class With(Node):
    items: list
    body: list


@dataclass(slots=True)
class Handler(Node):
    type: Node | None
    name: str | None
    body: list


@dataclass(slots=True)
class Try(Node):
    body: list
    handlers: list
    orelse: list
    finalbody: list


@dataclass(slots=True)
class Raise(Node):
    exc: Node | None
    cause: Node | None = None


@dataclass(slots=True)
class Assert(Node):
    test: Node
    msg: Node | None


@dataclass(slots=True)
class Alias(Node):
    name: str  # dotted for `import a.b`
    asname: str | None


@dataclass(slots=True)
class Import(Node):
    names: list


@dataclass(slots=True)
class ImportFrom(Node):
    module: str
    names: list  # of Alias; empty for `import *`
    star: bool = False


@dataclass(slots=True)
class Delete(Node):
    targets: list


@dataclass(slots=True)
class Module(Node):
    body: list


_FIELDS: dict = {}


def fields_of(node: Node) -> tuple:
    """The child-bearing field names of a node's class (cached)."""
    cls = type(node)
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f for f in cls.__dataclass_fields__ if f != "pos")
        _FIELDS[cls] = names
    return names


def iter_children(node: Node) -> Iterator[Node]:
    for name in fields_of(node):
        value = getattr(node, name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Node):
                    yield item


def walk(node: Node) -> Iterator[Node]:
    """Every node under ``node`` (itself included), without recursion."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(iter_children(n))
