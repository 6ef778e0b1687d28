"""gradcli's own syntax tree: small slotted node classes with source positions.

Every node has ``pos = (line, col, end_line, end_col)``: 1-based lines and
columns, the end column exclusive, as lark reports them. The parser
(``gradcli.lang.parser``) builds these nodes; the compiler
(``gradcli.lang.compiler``) turns them into closures.

Left-associative operator chains (``a + b - c``) are nested ``BinOp`` nodes
whose ``left`` is the chain so far; the compiler folds such spines
iteratively, so a 10,000-term sum nests no Python calls.
"""
from __future__ import annotations

from collections.abc import Iterator

Pos = tuple  # (line, col, end_line, end_col)
NOPOS: Pos = (0, 0, 0, 0)


class Node:
    """Base of all nodes: ``Cls(*fields, pos=...)``; fields in ``_fields``,
    defaults in ``_defaults`` (a callable default is a factory)."""

    __slots__ = ("pos",)
    _fields: tuple = ()
    _defaults: dict = {}

    def __init__(self, *args, pos=NOPOS, **kwargs):
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} fields")
        for name, value in zip(fields, args, strict=False):
            object.__setattr__(self, name, value)
        for name in fields[len(args):]:
            if name in kwargs:
                value = kwargs.pop(name)
            elif name in self._defaults:
                value = self._defaults[name]
                if callable(value):
                    value = value()
            else:
                raise TypeError(f"{type(self).__name__} needs field {name!r}")
            object.__setattr__(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(kwargs))!r}")
        self.pos = pos

    def __repr__(self):
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, f) == getattr(other, f) for f in self._fields)

    __hash__ = None

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
class Name(Node):
    __slots__ = _fields = ('id',)


class Const(Node):
    __slots__ = _fields = ('value',)


class FormattedValue(Node):
    __slots__ = _fields = ('value', 'conversion', 'spec', 'debug',)
    _defaults = {'debug': None}


class FString(Node):
    __slots__ = _fields = ('parts',)


class Attribute(Node):
    __slots__ = _fields = ('value', 'attr',)


class Subscript(Node):
    __slots__ = _fields = ('value', 'index',)


class Slice(Node):
    __slots__ = _fields = ('lower', 'upper', 'step',)


class Keyword(Node):
    __slots__ = _fields = ('name', 'value',)


class Starred(Node):
    __slots__ = _fields = ('value',)


class Call(Node):
    __slots__ = _fields = ('func', 'args', 'keywords',)


class BinOp(Node):
    __slots__ = _fields = ('op', 'left', 'right',)


class UnaryOp(Node):
    __slots__ = _fields = ('op', 'operand',)


class BoolOp(Node):
    __slots__ = _fields = ('op', 'values',)


class Compare(Node):
    __slots__ = _fields = ('left', 'ops', 'comparators',)


class IfExp(Node):
    __slots__ = _fields = ('test', 'body', 'orelse',)


class Param(Node):
    __slots__ = _fields = ('name', 'default', 'annotation',)
    _defaults = {'default': None, 'annotation': None}


class Params(Node):
    __slots__ = _fields = ('args', 'vararg', 'kwonly', 'kwarg', 'posonly',)
    _defaults = {'vararg': None, 'kwonly': list, 'kwarg': None, 'posonly': 0}


class Lambda(Node):
    __slots__ = _fields = ('params', 'body',)


class ListDisplay(Node):
    __slots__ = _fields = ('elts',)


class TupleDisplay(Node):
    __slots__ = _fields = ('elts',)


class DictDisplay(Node):
    """``{k: v, **m}``: a ``None`` key marks a ``**`` item."""
    __slots__ = _fields = ('keys', 'values',)


class SetDisplay(Node):
    __slots__ = _fields = ('elts',)


class Comprehension(Node):
    __slots__ = _fields = ('target', 'iter', 'ifs',)


class ListComp(Node):
    __slots__ = _fields = ('elt', 'generators',)


class GenExp(Node):
    __slots__ = _fields = ('elt', 'generators',)


class SetComp(Node):
    __slots__ = _fields = ('elt', 'generators',)


class DictComp(Node):
    __slots__ = _fields = ('key', 'value', 'generators',)


# ------------------------------------------------------------------ statements
class ExprStmt(Node):
    __slots__ = _fields = ('value',)


class Assign(Node):
    __slots__ = _fields = ('targets', 'value',)


class AugAssign(Node):
    __slots__ = _fields = ('target', 'op', 'value',)


class AnnAssign(Node):
    __slots__ = _fields = ('target', 'annotation', 'value',)


class If(Node):
    __slots__ = _fields = ('test', 'body', 'orelse',)


class While(Node):
    __slots__ = _fields = ('test', 'body', 'orelse',)


class For(Node):
    __slots__ = _fields = ('target', 'iter', 'body', 'orelse',)


class Break(Node):
    __slots__ = ()


class Continue(Node):
    __slots__ = ()


class Pass(Node):
    __slots__ = ()


class FunctionDef(Node):
    __slots__ = _fields = ('name', 'params', 'body', 'decorators', 'returns',)
    _defaults = {'returns': None}


class ClassDef(Node):
    __slots__ = _fields = ('name', 'bases', 'keywords', 'body',)


class Return(Node):
    __slots__ = _fields = ('value',)


class Global(Node):
    __slots__ = _fields = ('names',)


class Nonlocal(Node):
    __slots__ = _fields = ('names',)


class WithItem(Node):
    __slots__ = _fields = ('context', 'target',)


class With(Node):
    __slots__ = _fields = ('items', 'body',)


class Handler(Node):
    __slots__ = _fields = ('type', 'name', 'body',)


class Try(Node):
    __slots__ = _fields = ('body', 'handlers', 'orelse', 'finalbody',)


class Raise(Node):
    __slots__ = _fields = ('exc', 'cause',)
    _defaults = {'cause': None}


class Assert(Node):
    __slots__ = _fields = ('test', 'msg',)


class Alias(Node):
    __slots__ = _fields = ('name', 'asname',)


class Import(Node):
    __slots__ = _fields = ('names',)


class ImportFrom(Node):
    __slots__ = _fields = ('module', 'names', 'star',)
    _defaults = {'star': False}


class Delete(Node):
    __slots__ = _fields = ('targets',)


class Module(Node):
    __slots__ = _fields = ('body',)


_FIELDS: dict = {}


def fields_of(node: Node) -> tuple:
    """The child-bearing field names of a node's class (cached)."""
    cls = type(node)
    names = _FIELDS.get(cls)
    if names is None:
        names = cls._fields
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
