"""gradcli AST -> Python closures.

Each expression becomes a function ``ev(env)`` and each statement a function
``ex(env)``; they are built once, so running a program does no tree walking
and no per-node dispatch. ``env`` is the list of slots of the running
function (``None`` at module level, where variables live in the session's
globals dict).

Scoping follows Python: a name assigned in a function is local to it unless
declared ``global``/``nonlocal``; a function reading a name that an
enclosing function binds shares it through a :class:`~gradcli.lang.runtime.Cell`;
defaults are evaluated once, when the ``def`` runs; comprehensions have
their own scope. Statements return ``None``, ``BREAK``, ``CONTINUE`` or
``(value,)`` for ``return``.

Sandbox checks made here (reported as :class:`ForbiddenError`, exit 2):
attribute names starting with ``_`` (except ``_version``, a node's read-only
``_saved_*``, and the special methods of docs/language.md read from a name, a dotted
name or ``super()``: checked again at run time), ``format_map``, dunder names,
class bodies binding any ``_`` name but those special methods, metaclasses and
class keywords, Python builtins outside docs/language.md that the program does not
define itself, and imports other than ``torch[.sub]``, ``math``, ``random``,
``functools``, ``collections`` and ``numpy``.

A class statement runs its body in a frame whose names go to a namespace dict (slot
``__ns__``); its methods see the enclosing function's variables but not the class's
names, as in Python; zero-argument ``super()`` reads the class cell (slot
``__class__``) and the method's first argument. The class itself is made by
:func:`gradcli.lang.runtime.make_class`.
"""
from __future__ import annotations

import math
import operator
import sys

from . import ast as A
from . import fused as FUSED
from . import runtime as R
from .errors import CompileError, ForbiddenError
from .limits import Limits
from .runtime import BREAK, CONTINUE, UNBOUND, Cell, note

# ------------------------------------------------------------------ scopes


class Scope:
    def __init__(self, kind, name, parent, node):
        self.kind = kind  # "module", "function", "comp", "class"
        self.name = name
        self.qualname = name
        self.parent = parent
        self.node = node
        self.params = []
        self.assigned = set()
        self.used = set()
        self.globals = set()
        self.nonlocals = set()
        self.children = []
        self.locals = set()
        self.cells = set()
        self.frees = []  # ordered
        self.slots = {}
        self.nslots = 0
        self.star_import = False

    @property
    def is_function(self):
        return self.kind != "module"

    def resolve(self, name):
        """('global', name) | ('local'|'cell'|'free', slot) | ('classns', (name, fallback)).

        A class body keeps its names in a namespace dict (the slot ``__ns__``); a name it
        reads but did not bind falls back to the enclosing scopes (``fallback``)."""
        if self.kind == "module" or name in self.globals:
            return ("global", name)
        if self.kind == "class" and name not in CLASS_SLOTS:
            return ("classns", (name, self.resolve_closure(name)))
        return self.resolve_closure(name)

    def resolve_closure(self, name):
        """How a function defined in this scope captures ``name``: as ``resolve``, except
        that the names a class body binds are invisible to its methods (Python's rule)."""
        if self.kind == "module" or name in self.globals:
            return ("global", name)
        if name in self.slots:
            if name in self.locals:
                return ("cell" if name in self.cells else "local", self.slots[name])
            return ("free", self.slots[name])
        return ("global", name)


def _target_names(node, out, loads):
    """Names bound by an assignment target; expressions it reads go to loads."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, A.Name):
            out.append(n)
        elif isinstance(n, (A.TupleDisplay, A.ListDisplay)):
            stack.extend(n.elts)
        elif isinstance(n, A.Starred):
            stack.append(n.value)
        elif isinstance(n, A.Attribute):
            loads.append(n.value)
        elif isinstance(n, A.Subscript):
            loads.append(n.value)
            loads.append(n.index)


class ScopeBuilder:
    """Collects bindings and uses per scope, then resolves free variables."""

    def __init__(self, compiler):
        self.c = compiler
        self.by_node = {}
        #: (scope, name) of every name an `except ... as NAME` or a `del NAME` unbinds
        self.unbinds = []

    def build(self, module: A.Module) -> Scope:
        root = Scope("module", "<module>", None, module)
        self.by_node[id(module)] = root
        todo = [(root, module.body, [])]
        while todo:
            scope, stmts, exprs = todo.pop()
            self._collect(scope, stmts, exprs, todo)
        self._resolve(root)
        return root

    def _new(self, kind, name, parent, node):
        s = Scope(kind, name, parent, node)
        if parent.kind == "class":
            s.qualname = f"{parent.qualname}.{name}"
        elif parent.kind != "module":
            s.qualname = f"{parent.qualname}.<locals>.{name}"
        parent.children.append(s)
        self.by_node[id(node)] = s
        return s

    def _bind(self, scope, name_node):
        self.c.check_name(name_node.id, name_node.pos, in_class=scope.kind == "class",
                          binding=True)
        scope.assigned.add(name_node.id)

    def _collect(self, scope, stmts, exprs, todo):
        stack = list(reversed(stmts)) + list(exprs)
        while stack:
            n = stack.pop()
            if n is None:
                continue
            t = type(n)
            if t is A.Name:
                scope.used.add(n.id)
                self.c.check_name(n.id, n.pos, in_class=scope.kind == "class")
                continue
            if t is A.Assign:
                stack.append(n.value)
                for tg in n.targets:
                    self._targets(scope, tg, stack)
                continue
            if t is A.AugAssign:
                stack.append(n.value)
                if isinstance(n.target, A.Name):
                    scope.used.add(n.target.id)
                self._targets(scope, n.target, stack)
                continue
            if t is A.AnnAssign:
                stack.append(n.value)
                self._targets(scope, n.target, stack)
                continue
            if t is A.For:
                stack.extend([n.iter, *reversed(n.body), *reversed(n.orelse)])
                self._targets(scope, n.target, stack)
                continue
            if t is A.With:
                for item in n.items:
                    stack.append(item.context)
                    if item.target is not None:
                        self._targets(scope, item.target, stack)
                stack.extend(reversed(n.body))
                continue
            if t is A.Try:
                stack.extend(reversed(n.body))
                for h in n.handlers:
                    stack.append(h.type)
                    if h.name:
                        self.c.check_name(h.name, h.pos, in_class=scope.kind == "class",
                                          binding=True)
                        scope.assigned.add(h.name)
                        self.unbinds.append((scope, h.name))
                    stack.extend(reversed(h.body))
                stack.extend(reversed(n.orelse))
                stack.extend(reversed(n.finalbody))
                continue
            if t is A.Delete:
                for tg in n.targets:
                    if isinstance(tg, A.Name):
                        self.unbinds.append((scope, tg.id))
                    self._targets(scope, tg, stack)
                continue
            if t is A.Global or t is A.Nonlocal:
                if t is A.Nonlocal and scope.kind == "module":
                    raise self.c.syntax("nonlocal declaration not allowed at module level", n.pos)
                for name in n.names:
                    self.c.check_name(name, n.pos, in_class=scope.kind == "class",
                                      binding=True)
                    if name in scope.params:
                        raise self.c.syntax(f"name '{name}' is parameter and "
                                            f"{'global' if t is A.Global else 'nonlocal'}", n.pos)
                    (scope.globals if t is A.Global else scope.nonlocals).add(name)
                continue
            if t is A.Import:
                for alias in n.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    self.c.check_name(bound, alias.pos, in_class=scope.kind == "class",
                                      binding=True)
                    scope.assigned.add(bound)
                continue
            if t is A.ImportFrom:
                if n.star:
                    if scope.kind != "module":
                        raise self.c.syntax("import * only allowed at module level", n.pos)
                    scope.star_import = True
                for alias in n.names:
                    bound = alias.asname or alias.name
                    self.c.check_name(bound, alias.pos, in_class=scope.kind == "class",
                                      binding=True)
                    scope.assigned.add(bound)
                continue
            if t is A.FunctionDef:
                self.c.check_name(n.name, n.pos, in_class=scope.kind == "class", binding=True)
                scope.assigned.add(n.name)
                stack.extend(n.decorators)
                self._param_exprs(n.params, stack)
                if n.returns is not None:
                    stack.append(n.returns)
                child = self._new("function", n.name, scope, n)
                self._params(child, n.params)
                todo.append((child, n.body, []))
                continue
            if t is A.ClassDef:
                self.c.check_name(n.name, n.pos, binding=True)
                scope.assigned.add(n.name)
                stack.extend(n.bases)
                stack.extend(k.value for k in n.keywords)
                child = self._new("class", n.name, scope, n)
                todo.append((child, n.body, []))
                continue
            if t is A.Call and type(n.func) is A.Name and n.func.id == "super" and \
                    not n.args and not n.keywords:
                scope.used.add("__class__")  # zero-argument super() reads the class cell
            if t is A.Lambda:
                self._param_exprs(n.params, stack)
                child = self._new("function", "<lambda>", scope, n)
                self._params(child, n.params)
                todo.append((child, [], [n.body]))
                continue
            if t is A.ListComp or t is A.GenExp or t is A.SetComp or t is A.DictComp:
                gens = n.generators
                stack.append(gens[0].iter)
                child = self._new("comp", scope.name, scope, n)
                child.qualname = scope.qualname
                inner = [n.key, n.value] if t is A.DictComp else [n.elt]
                for i, g in enumerate(gens):
                    tnames, loads = [], []
                    _target_names(g.target, tnames, loads)
                    for nm in tnames:
                        self._bind(child, nm)
                    inner.extend(loads)
                    if i:
                        inner.append(g.iter)
                    inner.extend(g.ifs)
                todo.append((child, [], inner))
                continue
            if t is A.Attribute:
                self.c.check_attr(n.attr, n.pos, load=True, classy=_names_a_class(n.value))
            elif t is A.Keyword:
                pass
            stack.extend(A.iter_children(n))

    def _targets(self, scope, target, stack):
        names, loads = [], []
        _target_names(target, names, loads)
        for nm in names:
            self._bind(scope, nm)
        stack.extend(loads)
        # attribute targets are checked too
        s2 = [target]
        while s2:
            x = s2.pop()
            if isinstance(x, A.Attribute):
                self.c.check_attr(x.attr, x.pos)
            elif isinstance(x, (A.TupleDisplay, A.ListDisplay)):
                s2.extend(x.elts)
            elif isinstance(x, A.Starred):
                s2.append(x.value)

    @staticmethod
    def _param_exprs(params, stack):
        for p in params.args + params.kwonly:
            if p.default is not None:
                stack.append(p.default)
            if p.annotation is not None:
                stack.append(p.annotation)
        for p in (params.vararg, params.kwarg):
            if p is not None and p.annotation is not None:
                stack.append(p.annotation)

    def _params(self, scope, params):
        for p in params.args + ([params.vararg] if params.vararg else []) + params.kwonly + \
                ([params.kwarg] if params.kwarg else []):
            self.c.check_name(p.name, p.pos, binding=True)
            scope.params.append(p.name)
            scope.assigned.add(p.name)

    def _resolve(self, root):
        order = []
        stack = [root]
        while stack:
            s = stack.pop()
            order.append(s)
            stack.extend(s.children)
        for s in order:
            if s.kind == "module":
                continue
            if s.kind == "class":
                # a class body's own names live in its namespace dict, not in slots
                s.locals = set(CLASS_SLOTS)
                continue
            s.locals = (s.assigned | set(s.params)) - s.globals - s.nonlocals
            for nm in s.nonlocals:
                if nm in s.assigned and nm in s.globals:
                    raise self.c.syntax(f"name '{nm}' is nonlocal and global", s.node.pos)
        for s in order:
            if s.kind == "module":
                continue
            wanted = (s.used | s.assigned | s.nonlocals) - s.locals - s.globals
            if s.kind == "class":
                wanted -= CLASS_SLOTS
            for nm in sorted(wanted):
                owner = self._owner(s.parent, nm)
                if owner is None:
                    if nm in s.nonlocals:
                        raise self.c.syntax(f"no binding for nonlocal '{nm}' found", s.node.pos)
                    continue
                owner.cells.add(nm)
                p = s
                while p is not owner:
                    if nm not in p.frees and nm not in p.locals:
                        p.frees.append(nm)
                    p = p.parent
        for s in order:
            if s.kind == "module":
                continue
            names = list(s.params) + sorted(s.locals - set(s.params)) + \
                [nm for nm in s.frees if nm not in s.locals]
            s.slots = {nm: i for i, nm in enumerate(names)}
            s.nslots = len(names)

    @staticmethod
    def _owner(scope, name):
        while scope is not None and scope.kind != "module":
            if name in scope.locals:
                return scope
            if name in scope.globals:
                return None
            scope = scope.parent
        return None


# -------------------------------------------------------------- the compiler

_BINOPS = {
    "+": R.checked_add, "-": operator.sub, "*": R.checked_mul, "/": operator.truediv,
    "//": operator.floordiv, "%": R.checked_mod, "@": operator.matmul, "**": R.checked_pow,
    "<<": R.checked_lshift, ">>": operator.rshift, "&": operator.and_, "|": operator.or_,
    "^": operator.xor,
}
_FAST_BINOPS = {"-": operator.sub, "/": operator.truediv, "//": operator.floordiv,
                "@": operator.matmul, ">>": operator.rshift, "&": operator.and_,
                "|": operator.or_, "^": operator.xor}
_IOPS = {
    "+": R.checked_iadd, "-": operator.isub, "*": R.checked_imul, "/": operator.itruediv,
    "//": operator.ifloordiv, "%": lambda a, b: R.checked_mod(a, b) if type(a) is str
    else operator.imod(a, b), "@": operator.imatmul,
    "**": lambda a, b: R.checked_pow(a, b) if type(a) in R.INTS and type(b) in R.INTS
    else operator.ipow(a, b),
    "<<": lambda a, b: R.checked_lshift(a, b) if type(a) in R.INTS else operator.ilshift(a, b),
    ">>": operator.irshift, "&": operator.iand, "|": operator.ior, "^": operator.ixor,
}
_CMPOPS = {
    "<": operator.lt, ">": operator.gt, "==": operator.eq, ">=": operator.ge, "<=": operator.le,
    "!=": operator.ne, "in": R.contains, "not in": R.not_contains, "is": operator.is_,
    "is not": operator.is_not,
}
_UNOPS = {"-": operator.neg, "+": operator.pos, "~": operator.invert, "not": operator.not_}

ALLOWED_PRIVATE_ATTRS = frozenset({"_version"})
#: the hidden slots of a class body's frame: the class cell that zero-argument super()
#: reads, and the namespace dict the body's names go to (no program can spell either)
CLASS_SLOTS = frozenset({"__class__", "__ns__"})
ALLOWED_DUNDERS = R.ALLOWED_DUNDERS
#: the __future__ features whose statement changes nothing in Python 3.10 for gradcli
#: (annotations only defers evaluating annotations, which gradcli never evaluates)
FUTURE_FEATURES = frozenset({"nested_scopes", "generators", "division", "absolute_import",
                             "with_statement", "print_function", "unicode_literals",
                             "generator_stop", "annotations"})


def _leading_future_imports(body) -> set:
    """ids of the ``from __future__`` statements at the top of a module (after an optional
    docstring): the only place Python accepts them."""
    ok = set()
    for i, stmt in enumerate(body):
        if i == 0 and isinstance(stmt, A.ExprStmt) and isinstance(stmt.value, A.Const) \
                and isinstance(stmt.value.value, str):
            continue
        if isinstance(stmt, A.ImportFrom) and stmt.module == "__future__":
            ok.add(id(stmt))
            continue
        break
    return ok


PY_MODULES = frozenset({"random", "functools", "collections", "numpy", "functorch"})
FORBIDDEN_ATTRS = {
    "format_map": "str.format_map is not available in gradcli: use an f-string",
}


#: (filename, pos) -> the line Python reports for that expression where it is not its first
#: line: an attribute or a method call written over several lines is at its name's line in a
#: Python warning (`y\n  .grad` warns at `.grad`'s line), so a warning shows that line
PYTHON_LINES: dict = {}


def _note_python_line(filename, node) -> None:
    """Record the line Python gives a multi-line attribute or method call (see PYTHON_LINES)."""
    tp = type(node)
    if tp is A.Attribute:
        line = node.pos[2]
    elif tp is A.Call and type(node.func) is A.Attribute:
        line = node.func.pos[2]
    else:
        return
    PYTHON_LINES[(filename, node.pos)] = line


class Program:
    """A compiled program: ``run(None)`` executes it at module level."""

    def __init__(self, code, filename, source, module, last_holder):
        self.code = code
        self.filename = filename
        self.source = source
        self.module = module
        self.last_holder = last_holder


class Compiler:
    def __init__(self, filename, source, *, globals_, builtins, state, limits: Limits,
                 echo=False, static_globals=False, display=None):
        self.filename = filename
        self.source = source
        self.G = globals_
        self.B = builtins
        self.state = state
        self.limits = limits
        self.echo = echo
        self.static_globals = static_globals
        self.display = display
        self.errors = []
        self.scope = None
        self.loop_depth = 0
        self.module_bound = set()
        self.pending_names = []
        self.future_ok: set = set()  # ids of the leading `from __future__` statements
        #: globals the program can unbind (`except ... as NAME`, `del NAME`): once unbound,
        #: such a name falls back to Python's builtins only, never to a bare torch name
        self.unbindable_globals = frozenset()

    # ----------------------------------------------------------- diagnostics
    def syntax(self, message, pos):
        return CompileError(message, self.filename, pos, self.source)

    def forbid(self, message, pos, hint=None):
        self.errors.append(ForbiddenError(message, self.filename, pos, self.source, hint=hint))

    def check_attr(self, name, pos, load=False, classy=False):
        if load and ((classy and name in ALLOWED_DUNDERS) or R.is_saved_attr(name)
                     or name == "__version__"):
            return  # read-only names checked again at run time (runtime.get_attr)
        if name.startswith("_") and name not in ALLOWED_PRIVATE_ATTRS:
            self.forbid(f"attribute '{name}' is not allowed: gradcli programs cannot use "
                        "attributes whose name starts with '_'", pos)
        elif name in FORBIDDEN_ATTRS:
            self.forbid(FORBIDDEN_ATTRS[name], pos)

    def check_name(self, name, pos, in_class=False, binding=False):
        if in_class and name.startswith("_"):
            if name in ALLOWED_DUNDERS:
                return
            if binding:
                self.forbid(f"name '{name}' is not allowed in a class body: a gradcli class "
                            "may define only the special methods " + R.DUNDER_LIST +
                            " and no other name that starts with '_'", pos)
                return
        if name.startswith("__") and (binding or name != "__name__"):
            # (`__name__` may be read: "__main__" in the program, the module's name in a .grad
            # file it imports, so `if __name__ == "__main__":` runs as in Python)
            self.forbid(f"name '{name}' is not allowed: gradcli programs cannot use names that "
                        "start with '__'", pos)
        else:
            self.pending_names.append((name, pos))

    def loc(self, node):
        pos = node.pos
        if pos[0] != pos[2]:
            _note_python_line(self.filename, node)
        return (self.filename, pos, self.scope.name if self.scope else "<module>")

    # ----------------------------------------------------------- entry point
    def compile_module(self, module: A.Module) -> Program:
        builder = ScopeBuilder(self)
        root = builder.build(module)
        self.scopes = builder.by_node
        self.unbindable_globals = frozenset(
            name for s, name in builder.unbinds if s.kind == "module" or name in s.globals)
        bound = set(root.assigned)
        for s in builder.by_node.values():
            bound |= s.assigned
        for name, pos in self.pending_names:
            if name not in bound and name not in self.B and name not in self.G:
                reason = R.forbidden_reason(name)
                if reason:
                    self.forbid(f"'{name}' is not available in gradcli: {reason}", pos)
        self.global_bound = set(root.assigned)
        for s in builder.by_node.values():
            self.global_bound |= (s.assigned & s.globals)
        self.star_import = root.star_import
        self.scope = root
        last_holder = [None]
        body = module.body
        self.future_ok = _leading_future_imports(body)
        fns = []
        for i, stmt in enumerate(body):
            if i == len(body) - 1 and isinstance(stmt, A.ExprStmt):
                fns.append(self.expr_stmt(stmt, holder=last_holder))
            else:
                fns.append(self.stmt(stmt))
        if self.errors:
            self._raise_errors()
        code = self.block_from(fns, body)
        return Program(code, self.filename, self.source, module, last_holder)

    def _raise_errors(self):
        errs = sorted(self.errors, key=lambda e: (e.line, e.col))
        first = errs[0]
        first.errors = errs
        raise first

    # ------------------------------------------------------------- blocks
    def block(self, stmts):
        return self.block_from([self.stmt(s) for s in stmts], stmts)

    def block_from(self, fns, stmts):
        st = self.state
        locs = [self.loc(s) for s in stmts]
        if not fns:
            return lambda env: None
        if len(fns) == 1:
            f0 = fns[0]
            l0 = locs[0]

            def block1(env):
                try:
                    st.steps -= 1
                    if st.steps < 0:
                        st.out_of_steps()
                    return f0(env)
                except BaseException as e:
                    note(e, l0)
                    raise
            return block1
        pairs = tuple(zip(fns, locs, strict=False))

        def block(env):
            loc = None
            try:
                for f, loc in pairs:  # noqa: B007 - loc names the failing statement
                    st.steps -= 1
                    if st.steps < 0:
                        st.out_of_steps()
                    r = f(env)
                    if r is not None:
                        return r
                return None
            except BaseException as e:
                note(e, loc)
                raise
        return block

    # ------------------------------------------------------------- statements
    def stmt(self, node):
        method = getattr(self, "s_" + type(node).__name__)
        return method(node)

    def s_ExprStmt(self, node):
        return self.expr_stmt(node)

    def expr_stmt(self, node, holder=None):
        echo = self.echo and self.scope.kind == "module" and self.display is not None
        if holder is None and not echo and type(node.value) is A.Call:
            fused = self._fused_call(node.value, "drop")
            if fused is not None:
                return fused
        ev = self.expr(node.value)
        if echo:
            display = self.display
            if holder is not None:
                def ex(env):
                    v = ev(env)
                    holder[0] = v
                    display(v)
                return ex

            def ex(env):
                display(ev(env))
            return ex
        if holder is not None:
            def ex(env):
                holder[0] = ev(env)
            return ex

        def ex(env):
            ev(env)
        return ex

    def s_Pass(self, node):
        return lambda env: None

    def s_Break(self, node):
        if not self.loop_depth:
            raise self.syntax("'break' outside loop", node.pos)
        return lambda env: BREAK

    def s_Continue(self, node):
        if not self.loop_depth:
            raise self.syntax("'continue' not properly in loop", node.pos)
        return lambda env: CONTINUE

    def s_Return(self, node):
        if self.scope.kind != "function":
            raise self.syntax("'return' outside function", node.pos)
        if node.value is None:
            none = (None,)
            return lambda env: none
        ev = self.expr(node.value)

        def ex(env):
            return (ev(env),)
        return ex

    def s_Assign(self, node):
        if len(node.targets) == 1 and type(node.targets[0]) is A.Name \
                and type(node.value) is A.Call:
            kind, where = self.scope.resolve(node.targets[0].id)
            if kind in ("global", "local"):
                self.store(node.targets[0])  # (the checks a store makes)
                fused = self._fused_call(node.value, "gset" if kind == "global" else "lset",
                                         where)
                if fused is not None:
                    return fused
        ev = self.expr(node.value)
        stores = [self.store(t) for t in node.targets]
        if len(stores) == 1:
            st0 = stores[0]
            if isinstance(node.targets[0], A.Name):
                kind, where = self.scope.resolve(node.targets[0].id)
                if kind == "global":
                    G = self.G

                    def ex(env):
                        G[where] = ev(env)
                    return ex
                if kind == "local":
                    def ex(env):
                        env[where] = ev(env)
                    return ex

            def ex(env):
                st0(env, ev(env))
            return ex

        def ex(env):
            v = ev(env)
            for s in stores:
                s(env, v)
        return ex

    def s_AnnAssign(self, node):
        if node.value is None:
            return lambda env: None
        return self.s_Assign(A.Assign([node.target], node.value, pos=node.pos))

    def s_AugAssign(self, node):
        iop = _IOPS[node.op]
        rhs = self.expr(node.value)
        t = node.target
        loc = self.loc(node)
        if isinstance(t, A.Name):
            load = self.name_load(t)
            store = self.store(t)
            kind, where = self.scope.resolve(t.id)
            if kind == "global":  # `w -= lr * w.grad` at module level: the dict, inline
                G = self.G

                def ex(env):
                    try:
                        v = G[where]
                    except KeyError:
                        v = load(env)  # (the builtins, or the NameError)
                    r = rhs(env)
                    try:
                        v = iop(v, r)
                    except BaseException as e:
                        note(e, loc)
                        raise
                    G[where] = v
                return ex
            if kind == "local":
                def ex(env):
                    v = env[where]
                    if v is UNBOUND:
                        v = load(env)  # (raises UnboundLocalError)
                    r = rhs(env)
                    try:
                        v = iop(v, r)
                    except BaseException as e:
                        note(e, loc)
                        raise
                    env[where] = v
                return ex

            def ex(env):
                v = load(env)
                r = rhs(env)
                try:
                    v = iop(v, r)
                except BaseException as e:
                    note(e, loc)
                    raise
                store(env, v)
            return ex
        if isinstance(t, A.Attribute):
            obj = self.expr(t.value)
            name = t.attr
            get, set_ = R.get_attr, R.set_attr

            def ex(env):
                o = obj(env)
                try:
                    v = get(o, name)
                    v = iop(v, rhs(env))
                    set_(o, name, v)
                except BaseException as e:
                    note(e, loc)
                    raise
            return ex
        obj = self.expr(t.value)
        idx = self.expr(t.index)

        def ex(env):
            o = obj(env)
            k = idx(env)
            try:
                v = o[k]
                v = iop(v, rhs(env))
                o[k] = v
            except BaseException as e:
                note(e, loc)
                raise
        return ex

    def s_If(self, node):
        test = self.expr(node.test)
        body = self.block(node.body)
        if not node.orelse:
            def ex(env):
                if test(env):
                    return body(env)
            return ex
        orelse = self.block(node.orelse)

        def ex(env):
            if test(env):
                return body(env)
            return orelse(env)
        return ex

    def _loop_blocks(self, node):
        """``(body, orelse or None)`` of a while or for loop: the body is compiled inside the
        loop (where 'break' and 'continue' belong to it), the else block outside it."""
        self.loop_depth += 1
        body = self.block(node.body)
        self.loop_depth -= 1
        orelse = self.block(node.orelse) if node.orelse else None
        return body, orelse

    def s_While(self, node):
        test = self.expr(node.test)
        body, orelse = self._loop_blocks(node)

        def ex(env):
            while test(env):
                r = body(env)
                if r is not None:
                    if r is BREAK:
                        return None
                    if r is CONTINUE:
                        continue
                    return r
            if orelse is not None:
                return orelse(env)
            return None
        return ex

    def s_For(self, node):
        it = self.expr(node.iter)
        store = self.store(node.target)
        body, orelse = self._loop_blocks(node)
        loc = self.loc(node.iter)
        fast_local = None
        if isinstance(node.target, A.Name):
            kind, where = self.scope.resolve(node.target.id)
            if kind == "local":
                fast_local = where
            elif kind == "global":  # a loop at module level: the globals dict, inline
                G = self.G

                def ex(env):
                    seq = it(env)
                    try:
                        iterator = iter(seq)
                    except BaseException as e:
                        note(e, loc)
                        raise
                    for G[where] in iterator:
                        r = body(env)
                        if r is not None:
                            if r is BREAK:
                                return None
                            if r is CONTINUE:
                                continue
                            return r
                    if orelse is not None:
                        return orelse(env)
                    return None
                return ex

        def ex(env):
            seq = it(env)
            try:
                iterator = iter(seq)
            except BaseException as e:
                note(e, loc)
                raise
            for v in iterator:
                if fast_local is None:
                    store(env, v)
                else:
                    env[fast_local] = v  # a local target is stored inline: no call per item
                r = body(env)
                if r is not None:
                    if r is BREAK:
                        return None
                    if r is CONTINUE:
                        continue
                    return r
            if orelse is not None:
                return orelse(env)
            return None
        return ex

    def s_FunctionDef(self, node):
        decorators = [self.expr(d) for d in node.decorators]
        make = self.function(node, node.name, node.params, body_stmts=node.body)
        store = self.store(A.Name(node.name, pos=node.pos))

        def ex(env):
            decs = [d(env) for d in decorators]
            fn = make(env)
            for d in reversed(decs):
                fn = d(fn)
            store(env, fn)
        return ex

    def s_ClassDef(self, node):
        for k in node.keywords:
            what = "metaclasses" if k.name == "metaclass" else "class keywords"
            self.forbid(f"{what} are not allowed: a gradcli class statement takes only base "
                        "classes", k.pos)
        for b in node.bases:
            if isinstance(b, A.Starred):
                self.forbid("starred base classes are not allowed", b.pos)
        bases = [self.expr(b) for b in node.bases if not isinstance(b, A.Starred)]
        scope = self.scopes[id(node)]
        outer = self.scope
        self.scope = scope
        saved_loop = self.loop_depth
        self.loop_depth = 0
        body = self.block(node.body)
        self.loop_depth = saved_loop
        self.scope = outer
        free_slots = tuple(w for _, w in (outer.resolve_closure(nm) for nm in scope.frees))
        free_targets = tuple(scope.slots[nm] for nm in scope.frees)
        nslots = scope.nslots
        ns_slot, cls_slot = scope.slots["__ns__"], scope.slots["__class__"]
        name, qual = node.name, scope.qualname
        store = self.store(A.Name(name, pos=node.pos))
        make_class = R.make_class
        loc = self.loc(node)

        def ex(env):
            bs = tuple(b(env) for b in bases)
            frame = [UNBOUND] * nslots
            cell = frame[cls_slot] = Cell()
            ns = frame[ns_slot] = {}
            for src, dst in zip(free_slots, free_targets, strict=False):
                frame[dst] = env[src]
            body(frame)
            try:
                cls = make_class(name, qual, bs, ns)
            except BaseException as e:
                note(e, loc)
                raise
            cell.v = cls
            store(env, cls)
        return ex

    def s_Global(self, node):
        return lambda env: None

    s_Nonlocal = s_Global

    def s_Delete(self, node):
        dels = [self.deleter(t) for t in node.targets]

        def ex(env):
            for d in dels:
                d(env)
        return ex

    def deleter(self, t):
        if isinstance(t, A.Name):
            kind, where = self.scope.resolve(t.id)
            name = t.id
            if kind == "classns":
                ns_slot = self.scope.slots["__ns__"]

                def d(env):
                    try:
                        del env[ns_slot][name]
                    except KeyError:
                        raise NameError(f"name '{name}' is not defined") from None
                return d
            if kind == "global":
                G = self.G

                def d(env):
                    try:
                        del G[name]
                    except KeyError:
                        raise NameError(f"name '{name}' is not defined") from None
                return d
            if kind == "local":
                def d(env):
                    if env[where] is UNBOUND:
                        raise UnboundLocalError(f"cannot access local variable '{name}' where "
                                                "it is not associated with a value")
                    env[where] = UNBOUND
                return d

            def d(env):
                cell = env[where]
                if cell.v is UNBOUND:
                    raise NameError(f"cannot access free variable '{name}' where it is not "
                                    "associated with a value in enclosing scope")
                cell.v = UNBOUND
            return d
        if isinstance(t, (A.TupleDisplay, A.ListDisplay)):
            subs = [self.deleter(e) for e in t.elts]

            def d(env):
                for s in subs:
                    s(env)
            return d
        if isinstance(t, A.Attribute):
            obj = self.expr(t.value)
            name = t.attr
            return lambda env: R.del_attr(obj(env), name)
        obj = self.expr(t.value)
        idx = self.expr(t.index)

        def d(env):
            o = obj(env)
            del o[idx(env)]
        return d

    def s_Assert(self, node):
        from .assertions import EXPLAIN_KEY, probe

        test = probe(self, node.test, _CMPOPS)
        msg = self.expr(node.msg) if node.msg is not None else None

        def ex(env):
            passed, explain = test(env)
            if not passed:
                err = AssertionError() if msg is None else AssertionError(msg(env))
                err.__dict__[EXPLAIN_KEY] = explain
                raise err
        return ex

    def s_Raise(self, node):
        if node.exc is None:
            def ex(env):
                raise  # noqa: PLE0704 - re-raises the exception being handled
            return ex
        exc = self.expr(node.exc)
        cause = self.expr(node.cause) if node.cause is not None else None

        def ex(env):
            e = exc(env)
            if isinstance(e, type) and not issubclass(e, BaseException) or \
                    not isinstance(e, type) and not isinstance(e, BaseException):
                raise TypeError("exceptions must derive from BaseException")
            if cause is not None:
                raise e from cause(env)
            raise e
        return ex

    def s_Try(self, node):
        body = self.block(node.body)
        handlers = []
        for h in node.handlers:
            typ = self.expr(h.type) if h.type is not None else None
            store = self.store(A.Name(h.name, pos=h.pos)) if h.name else None
            unbind = self.deleter(A.Name(h.name, pos=h.pos)) if h.name else None
            handlers.append((typ, store, unbind, self.block(h.body)))
        orelse = self.block(node.orelse) if node.orelse else None
        final = self.block(node.finalbody) if node.finalbody else None
        uncatchable = R.uncatchable

        def run_handlers(env, e):
            for typ, store, unbind, hbody in handlers:
                if typ is not None:
                    cls = typ(env)
                    if not _valid_except(cls):
                        raise TypeError("catching classes that do not inherit from BaseException "
                                        "is not allowed")
                    if not isinstance(e, cls):
                        continue
                if store is None:
                    return True, hbody(env)
                store(env, e)
                try:
                    return True, hbody(env)
                finally:
                    try:
                        unbind(env)
                    except NameError:
                        pass
            return False, None

        if handlers:
            def inner(env):
                try:
                    r = body(env)
                except Exception as e:
                    if uncatchable(e):
                        raise
                    handled, r = run_handlers(env, e)
                    if not handled:
                        raise
                    return r
                if orelse is not None and r is None:
                    return orelse(env)
                return r
        else:
            inner = body
        if final is None:
            return inner

        def ex(env):
            try:
                r = inner(env)
            except BaseException as e:
                r2 = final(env)
                if r2 is not None and isinstance(e, Exception) and not uncatchable(e):
                    return r2
                raise
            r2 = final(env)
            return r2 if r2 is not None else r
        return ex

    def s_With(self, node):
        body = self.block(node.body)
        for item in reversed(node.items):
            body = self._with_item(item, body)
        return body

    def _with_item(self, item, body):
        ctx = self.expr(item.context)
        store = self.store(item.target) if item.target is not None else None
        loc = self.loc(item.context)
        uncatchable = R.uncatchable

        def ex(env):
            mgr = ctx(env)
            tp = type(mgr)
            try:
                enter = tp.__enter__
                exit_ = tp.__exit__
            except AttributeError:
                e = TypeError(f"'{tp.__name__}' object does not support the context manager "
                              "protocol")
                note(e, loc)
                raise e from None
            val = enter(mgr)
            if store is not None:
                store(env, val)
            try:
                r = body(env)
            except BaseException as e:
                suppress = exit_(mgr, type(e), e, e.__traceback__)
                if suppress and isinstance(e, Exception) and not uncatchable(e):
                    return None
                raise
            exit_(mgr, None, None, None)
            return r
        return ex

    def s_Import(self, node):
        stores = []
        helpers = []  # (store, load) of sibling .grad files: loaded when the import runs
        for alias in node.names:
            name = alias.name
            if name not in ("math", "torch") and not name.startswith(("math.", "torch.")):
                load = self._sibling(name, alias.pos)
                if load is not None:
                    helpers.append((self.store(A.Name(alias.asname or name, pos=alias.pos)),
                                    load))
                    continue
            if name == "math" or name.startswith("math."):
                if name != "math":
                    self.forbid(f"import of '{name}' is not allowed", alias.pos)
                    continue
                value = math
            elif name == "torch" or name.startswith("torch."):
                value = self._torch_module(name, alias.pos)
                if value is None:
                    continue
                if alias.asname is None:
                    value = R.facade()
            elif name in PY_MODULES or name == "numpy.random":
                value = self._py_module(name)
                if name == "numpy.random" and alias.asname is None:
                    value = self._py_module("numpy")
            else:
                self._bad_import(name, alias.pos)
                continue
            bound = alias.asname or name.split(".")[0]
            stores.append((self.store(A.Name(bound, pos=alias.pos)), value))
        if not helpers:
            return _bind_all(stores)
        bind = _bind_all(stores)

        def ex(env):
            bind(env)
            for store, load in helpers:
                store(env, load(env))
        return ex

    def _sibling(self, name, pos):
        """``load(env)`` for a helper ``NAME.grad`` beside this program, or None."""
        from .grad_modules import compile_sibling

        return compile_sibling(self, name, pos)

    def _torch_module(self, name, pos):
        """The facade module for ``torch`` or ``torch.<sub>``, or None once the reason it cannot
        be imported is recorded (``import`` and ``from ... import`` refuse it in the same words)."""
        try:
            return R.facade_module(name)
        except LookupError as e:
            self.forbid(str(e), pos)
            return None

    def _py_module(self, name):
        """The session's ``random``/``functools``/``collections``/``numpy`` module."""
        from . import pymodules
        cache = self.B.setdefault("__modules__", {})
        if name == "numpy.random":
            return pymodules.load("numpy", cache).random
        return pymodules.load(name, cache)

    def _bad_import(self, name, pos):
        tail = ("collections, numpy and functorch" if not self.filename
                or self.filename.startswith("<")
                else "collections, numpy, functorch and the NAME.grad files beside the program")
        self.forbid(f"import of '{name}' is not allowed: gradcli programs can import only "
                    f"torch (and its submodules), math, random, functools, {tail}", pos)

    def s_ImportFrom(self, node):
        mod = node.module
        if mod == "__future__":
            return self._future_import(node)
        if mod not in ("math", "torch") and not mod.startswith(("math.", "torch.")):
            load = self._sibling(mod, node.pos)
            if load is not None:
                return self._from_sibling(node, load)
        if mod == "math":
            module = math
        elif mod in PY_MODULES or mod == "numpy.random":
            module = self._py_module(mod)
        elif mod == "torch" or mod.startswith("torch."):
            module = self._torch_module(mod, node.pos)
            if module is None:
                return lambda env: None
        else:
            self._bad_import(mod, node.pos)
            return lambda env: None
        allowed = R.module_names(module)
        display = R.display_module_name(module)
        if node.star:
            items = {n: R.math_attr(n) if module is math else getattr(module, n)
                     for n in allowed}
            G = self.G

            def ex(env):
                G.update(items)
            return ex
        stores = []
        for alias in node.names:
            if alias.name.startswith("_"):
                self.forbid(f"'{alias.name}' cannot be imported: names starting with '_' are "
                            "private", alias.pos)
                continue
            if alias.name not in allowed:
                self.forbid(f"{display}.{alias.name} is not supported by gradcli", alias.pos)
                continue
            value = R.math_attr(alias.name) if module is math else getattr(module, alias.name)
            stores.append((self.store(A.Name(alias.asname or alias.name, pos=alias.pos)), value))
        return _bind_all(stores)

    def _future_import(self, node):
        """``from __future__ import division``: Python 3 has every listed feature on, so
        the statement does nothing; placed as Python places it (first, after a docstring);
        features that change the language (barry_as_FLUFL) are refused. No name is bound."""
        if id(node) not in self.future_ok:
            raise self.syntax("from __future__ imports must occur at the beginning of the file",
                              node.pos)
        # (an import gradcli refuses is a ForbiddenError, with Python's words where it has
        # them: the attack corpus holds `from __future__ import *` among the refused imports)
        if node.star:
            self.forbid("future feature * is not defined", node.pos)
        for alias in node.names:
            if alias.name not in FUTURE_FEATURES:
                if alias.name == "barry_as_FLUFL":
                    self.forbid("from __future__ import barry_as_FLUFL is not supported by "
                                "gradcli", alias.pos)
                elif alias.name == "braces":  # (Python's own answer)
                    self.forbid("not a chance", alias.pos)
                else:
                    self.forbid(f"future feature {alias.name} is not defined", alias.pos)
        return lambda env: None

    def _from_sibling(self, node, load):
        """``from helper import a, b as c`` of a sibling ``helper.grad``."""
        from .grad_modules import name_from

        if node.star:
            self.forbid("'from ... import *' of a .grad file is not supported: import the "
                        "names it defines", node.pos)
            return lambda env: None
        binds = []
        for alias in node.names:
            if alias.name.startswith("_"):
                self.forbid(f"'{alias.name}' cannot be imported: names starting with '_' are "
                            "private", alias.pos)
                continue
            binds.append((self.store(A.Name(alias.asname or alias.name, pos=alias.pos)),
                          alias.name))
        loc = self.loc(node)

        def ex(env):
            mod = load(env)
            if mod is None:
                return
            for store, name in binds:
                try:
                    value = name_from(mod, name)
                except ImportError as e:
                    note(e, loc)
                    raise
                store(env, value)
        return ex

    # ------------------------------------------------------------- targets
    def store(self, t):
        if isinstance(t, A.Name):
            kind, where = self.scope.resolve(t.id)
            if kind == "classns":
                ns_slot, name = self.scope.slots["__ns__"], t.id

                def s(env, v):
                    env[ns_slot][name] = v
                return s
            if kind == "global":
                G = self.G

                def s(env, v):
                    G[where] = v
                return s
            if kind == "local":
                def s(env, v):
                    env[where] = v
                return s

            def s(env, v):
                env[where].v = v
            return s
        if isinstance(t, A.Attribute):
            obj = self.expr(t.value)
            name = t.attr
            set_ = R.set_attr
            loc = self.loc(t)

            def s(env, v):
                o = obj(env)
                try:
                    set_(o, name, v)
                except BaseException as e:
                    note(e, loc)
                    raise
            return s
        if isinstance(t, A.Subscript):
            obj = self.expr(t.value)
            idx = self.expr(t.index)
            loc = self.loc(t)

            def s(env, v):
                o = obj(env)
                k = idx(env)
                try:
                    if type(o) is list and type(k) is slice:
                        v = R.bounded(v)
                    o[k] = v
                except BaseException as e:
                    note(e, loc)
                    raise
            return s
        if isinstance(t, (A.TupleDisplay, A.ListDisplay)):
            return self.unpacker(t)
        raise self.syntax("invalid assignment target", t.pos)

    def unpacker(self, t):
        elts = t.elts
        star = next((i for i, e in enumerate(elts) if isinstance(e, A.Starred)), None)
        stores = [self.store(e.value if isinstance(e, A.Starred) else e) for e in elts]
        n = len(elts)
        loc = self.loc(t)
        if star is None:
            def s(env, v):
                if type(v) is tuple or type(v) is list:
                    seq = v
                else:
                    try:
                        seq = _take(v, n)
                    except BaseException as e:
                        note(e, loc)
                        raise
                if len(seq) != n:
                    e = ValueError(f"not enough values to unpack (expected {n}, got {len(seq)})"
                                   if len(seq) < n else f"too many values to unpack (expected {n})")
                    note(e, loc)
                    raise e
                for f, x in zip(stores, seq, strict=False):
                    f(env, x)
            return s
        before, after = star, n - star - 1

        def s(env, v):
            try:
                e = _not_unpackable(v)
                if e is not None:
                    raise e
                seq = list(R.bounded(v))
            except BaseException as e:
                note(e, loc)
                raise
            if len(seq) < before + after:
                e = ValueError(f"not enough values to unpack (expected at least {n - 1}, got "
                               f"{len(seq)})")
                note(e, loc)
                raise e
            vals = seq[:before] + [seq[before:len(seq) - after]] + seq[len(seq) - after:]
            for f, x in zip(stores, vals, strict=False):
                f(env, x)
        return s

    # ------------------------------------------------------------- functions
    def function(self, node, name, params: A.Params, body_stmts=None, body_expr=None):
        """A maker ``make(env) -> function`` for a def or lambda."""
        outer = self.scope
        scope = self.scopes[id(node)]
        defaults = [self.expr(p.default) for p in params.args if p.default is not None]
        kwdefaults = [(p.name, self.expr(p.default)) for p in params.kwonly
                      if p.default is not None]
        self.scope = scope
        saved_loop = self.loop_depth
        self.loop_depth = 0
        if body_expr is not None:
            ev = self.expr(body_expr)
            loc = self.loc(body_expr)
            st_ = self.state

            def body(env):
                # a lambda's body counts as one step, as a def's return statement does (a
                # lambda called from C, as a key or an __iter__, is bounded by the budget too)
                st_.steps -= 1
                if st_.steps < 0:
                    st_.out_of_steps()
                try:
                    return (ev(env),)
                except BaseException as e:
                    note(e, loc)
                    raise
        else:
            body = self.block(body_stmts)
        self.loop_depth = saved_loop
        self.scope = outer
        qual = scope.qualname if name != "<lambda>" else (
            name if outer.kind == "module" else f"{outer.qualname}.<locals>.{name}")
        # Python names a method by its qualified name in argument errors ("A.f() takes ...")
        binder = _Binder(qual if outer.kind == "class" else name, params, scope)
        free_src = [outer.resolve_closure(nm) for nm in scope.frees]
        for kind, _ in free_src:
            assert kind in ("cell", "free"), kind
        free_slots = tuple(w for _, w in free_src)
        st = self.state
        mark = R.mark_frame_exit
        is_method = outer.kind == "class"

        def make(env):
            dvals = tuple(d(env) for d in defaults)
            kwd = {k: d(env) for k, d in kwdefaults}
            cells = tuple(env[i] for i in free_slots) if free_slots else ()
            bind = binder.make(dvals, kwd, cells)

            def fn(*args, **kwargs):
                frame = bind(args, kwargs)
                st.depth += 1
                try:
                    if st.depth > st.max_depth:
                        st.too_deep()
                    r = body(frame)
                except BaseException as e:
                    mark(e)
                    raise
                finally:
                    st.depth -= 1
                return None if r is None else r[0]
            fn.__name__ = name
            fn.__qualname__ = qual
            fn.__module__ = "__main__"
            if is_method:
                # host code may inspect a method (a Function's forward): it sees the
                # parameters the program wrote, not the closure's (*args, **kwargs)
                fn.__signature__ = _signature(params, dvals, kwd)
            return fn
        return make

    # ------------------------------------------------------------- expressions
    def expr(self, node):
        return getattr(self, "e_" + type(node).__name__)(node)

    def e_Const(self, node):
        v = node.value
        if type(v) is str and len(v) > self.limits.max_length:
            raise self.syntax(f"string literal too long ({len(v)} characters; the limit is "
                              f"{self.limits.max_length})", node.pos)
        return lambda env: v

    def e_Name(self, node):
        return self.name_load(node)

    def name_load(self, node):
        name = node.id
        kind, where = self.scope.resolve(name)
        loc = self.loc(node)
        if kind == "classns":
            ns_slot = self.scope.slots["__ns__"]
            saved = self.scope
            # the fallback reads the name as the enclosing code would (a free slot of this
            # frame, or the globals)
            fkind, fwhere = where[1]
            self.scope = _FallbackScope(saved, fkind, fwhere)
            try:
                fallback = self.name_load(node)
            finally:
                self.scope = saved

            def ev(env):
                ns = env[ns_slot]
                if name in ns:
                    return ns[name]
                return fallback(env)
            return ev
        if kind == "local":
            def ev(env):
                v = env[where]
                if v is UNBOUND:
                    e = UnboundLocalError(f"cannot access local variable '{name}' where it is not "
                                          "associated with a value")
                    note(e, loc)
                    raise e
                return v
            return ev
        if kind in ("cell", "free"):
            def ev(env):
                v = env[where].v
                if v is UNBOUND:
                    e = (UnboundLocalError(f"cannot access local variable '{name}' where it is "
                                           "not associated with a value") if kind == "cell" else
                         NameError(f"cannot access free variable '{name}' where it is not "
                                   "associated with a value in enclosing scope"))
                    note(e, loc)
                    raise e
                return v
            return ev
        G, B = self.G, self.B
        if self.static_globals and name not in self.global_bound and not self.star_import \
                and name not in G:
            if name in B:
                value = B[name]
                return lambda env: value

            def ev(env):
                e = NameError(f"name '{name}' is not defined")
                note(e, loc)
                raise e
            return ev
        if name in self.unbindable_globals and not hasattr(R._py, name):
            # (Python deletes `e` after `except ... as e:`: reading it then is a NameError,
            # although `e` alone is gradcli's bare torch.e)
            def ev(env):
                try:
                    return G[name]
                except KeyError:
                    e = NameError(f"name '{name}' is not defined")
                    note(e, loc)
                    raise e from None
            return ev

        def ev(env):
            try:
                return G[name]
            except KeyError:
                pass
            try:
                return B[name]
            except KeyError:
                e = NameError(f"name '{name}' is not defined")
                note(e, loc)
                raise e from None
        return ev

    def e_Attribute(self, node):
        obj = self.expr(node.value)
        name = node.attr
        loc = self.loc(node)
        get = R.get_attr
        if name in R.DENY_ATTRS or name.startswith("_"):
            return _apply_to_pair(get, obj, None, loc, name)  # get(o, name) raises
        if name in R.SIZED_METHODS:
            sized = R.sized_method

            def ev(env):
                o = obj(env)
                try:
                    v = get(o, name)
                    return sized(o, name, v) if callable(v) else v
                except BaseException as e:
                    note(e, loc)
                    raise
            return ev
        fast = R.ENGINE_TYPES
        getter = operator.attrgetter(name)
        kind, key, _ = self._operand(node.value, obj) if self._hot() else ("f", None, None)
        if kind == "g":  # `w.grad` in a loop at module level: the global read inline
            G = self.G

            def ev(env):
                try:
                    o = G[key]
                except KeyError:
                    o = obj(env)  # (the builtins, or the NameError)
                try:
                    if type(o) in fast:
                        return getter(o)
                    return get(o, name)
                except BaseException as e:
                    note(e, loc)
                    raise
            return ev
        if kind == "l":  # `self.weight` in a method: the local read inline
            def ev(env):
                o = env[key]
                if o is UNBOUND:
                    o = obj(env)  # (raises UnboundLocalError)
                try:
                    if type(o) in fast:
                        return getter(o)
                    return get(o, name)
                except BaseException as e:
                    note(e, loc)
                    raise
            return ev

        def ev(env):
            o = obj(env)
            try:
                if type(o) in fast:
                    return getter(o)
                return get(o, name)
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    def e_Subscript(self, node):
        obj = self.expr(node.value)
        idx = self.expr(node.index)
        loc = self.loc(node)

        def ev(env):
            o = obj(env)
            k = idx(env)
            try:
                return o[k]
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    def e_Slice(self, node):
        lo = self.expr(node.lower) if node.lower is not None else None
        up = self.expr(node.upper) if node.upper is not None else None
        step = self.expr(node.step) if node.step is not None else None
        if step is None:
            if lo is None and up is None:
                s = slice(None)
                return lambda env: s
            if lo is None:
                return lambda env: slice(None, up(env))
            if up is None:
                return lambda env: slice(lo(env), None)
            return lambda env: slice(lo(env), up(env))
        none = lambda env: None  # noqa: E731
        lo = lo or none
        up = up or none
        return lambda env: slice(lo(env), up(env), step(env))

    def e_Starred(self, node):
        raise self.syntax("can't use starred expression here", node.pos)

    def _method_call0(self, node):
        """`obj.name()` (a plain attribute, no arguments) in one closure, as common as
        `y.norm()` in a loop: the attribute is read as e_Attribute reads it, and errors
        are noted at the attribute or at the call as the two closures would note them."""
        attr = node.func
        obj = self.expr(attr.value)
        name = attr.attr
        aloc, loc = self.loc(attr), self.loc(node)
        get, fast, getter = R.get_attr, R.ENGINE_TYPES, operator.attrgetter(name)

        def ev(env):
            o = obj(env)
            try:
                f = getter(o) if type(o) in fast else get(o, name)
            except BaseException as e:
                note(e, aloc)
                raise
            try:
                return f()
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    def _hot(self) -> bool:
        """Whether the code being compiled may run many times: a loop's body, a function's
        or a comprehension's (code that runs once keeps the plain closures: no fused
        factory is built for it)."""
        return self.loop_depth > 0 or self.scope.kind in ("function", "comp")

    def _operand(self, node, ev=None):
        """``(kind, key, closure)`` of an operand of a fused call (fused.OPERAND_KINDS):
        the key is the global's name, the local's slot or the constant's value (``ev``:
        the operand's closure if it is compiled already)."""
        if ev is None:
            ev = self.expr(node)
        tp = type(node)
        if tp is A.Const:
            return "c", node.value, ev
        if tp is A.Name:
            name = node.id
            kind, where = self.scope.resolve(name)
            if kind == "local":
                return "l", where, ev
            if kind == "global":
                if self.static_globals and name not in self.global_bound \
                        and not self.star_import and name not in self.G:
                    if name in self.B:  # as name_load binds it: the builtin, once
                        return "c", self.B[name], ev
                    return "f", None, ev
                return "g", name, ev
        return "f", None, ev

    def _fused_call(self, node, sink, target=None):
        """The call ``node`` as one fused closure (see fused.py) whose result goes to
        ``sink`` (``target``: the global's name or the local's slot it is stored in), or
        None where the general closures serve it (cold code, ``*``/``**`` arguments, many
        operands, zero-argument ``super()``, attributes read through other paths)."""
        if not self._hot():
            return None
        f = node.func
        if any(type(a) is A.Starred for a in node.args) or \
                any(k.name is None or k.name.startswith("__") for k in node.keywords) or \
                1 + len(node.args) + len(node.keywords) > FUSED.MAX_OPERANDS:
            return None
        if type(f) is A.Name and f.id == "super" and not node.args and not node.keywords:
            return None
        method = type(f) is A.Attribute and not (
            f.attr in R.DENY_ATTRS or f.attr.startswith("_") or f.attr in R.SIZED_METHODS)
        head = self._operand(f.value if method else f)
        args = [self._operand(a) for a in node.args]
        args += [self._operand(k.value) for k in node.keywords]
        shape = (head[0], method, tuple(a[0] for a in args), len(node.keywords), sink)
        make = FUSED.factory(shape)
        ops = [head, *args]
        name = f.attr if method else None
        return make(self.G, UNBOUND, note, R.get_attr, R.ENGINE_TYPES,
                    operator.attrgetter(name) if method else None, name,
                    self.loc(f) if method else None, self.loc(node), target,
                    *(o[1] for o in ops), *(o[2] for o in ops),
                    *(k.name for k in node.keywords))

    def _zero_arg_super(self, node):
        """``super()`` inside a method: the class cell and the method's first argument."""
        kind, where = self.scope.resolve("__class__")
        loc = self.loc(node)
        first = self.scope.params[0] if self.scope.kind == "function" and self.scope.params \
            else None
        if kind not in ("cell", "free") or first is None:
            msg = "super(): no arguments" if kind in ("cell", "free") or \
                self.scope.kind != "function" else "super(): __class__ cell not found"

            def fail(env):
                e = RuntimeError(msg)
                note(e, loc)
                raise e
            return fail
        self_load = self.name_load(A.Name(first, pos=node.pos))
        make = R.make_super

        def ev(env):
            cls = env[where].v
            try:
                return make(cls, self_load(env))
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    def e_Call(self, node):
        f = node.func
        if type(f) is A.Name and f.id == "super" and not node.args and not node.keywords \
                and self.scope.resolve("super")[0] == "global" and "super" not in self.global_bound:
            return self._zero_arg_super(node)
        fused = self._fused_call(node, "ret")
        if fused is not None:
            return fused
        if (not node.args and not node.keywords and isinstance(f, A.Attribute)
                and not (f.attr in R.DENY_ATTRS or f.attr.startswith("_")
                         or f.attr in R.SIZED_METHODS)):
            return self._method_call0(node)
        func = self.expr(node.func)
        loc = self.loc(node)
        has_star = any(isinstance(a, A.Starred) for a in node.args)
        if not node.keywords and not has_star:
            # Calls with up to three positional arguments are unrolled on purpose: each copy
            # differs only in its arity, and unrolling them makes a call about a third cheaper
            # than building an argument list (tests/lang/bench_lang.py measures the overhead).
            args = [self.expr(a) for a in node.args]
            n = len(args)
            if n == 0:
                def ev(env):
                    f = func(env)
                    try:
                        return f()
                    except BaseException as e:
                        note(e, loc)
                        raise
                return ev
            if n == 1:
                a0 = args[0]

                def ev(env):
                    f = func(env)
                    x = a0(env)
                    try:
                        return f(x)
                    except BaseException as e:
                        note(e, loc)
                        raise
                return ev
            if n == 2:
                a0, a1 = args

                def ev(env):
                    f = func(env)
                    x = a0(env)
                    y = a1(env)
                    try:
                        return f(x, y)
                    except BaseException as e:
                        note(e, loc)
                        raise
                return ev
            if n == 3:
                a0, a1, a2 = args

                def ev(env):
                    f = func(env)
                    x = a0(env)
                    y = a1(env)
                    z = a2(env)
                    try:
                        return f(x, y, z)
                    except BaseException as e:
                        note(e, loc)
                        raise
                return ev
        parts = []
        for a in node.args:
            if isinstance(a, A.Starred):
                parts.append((True, self.expr(a.value)))
            else:
                parts.append((False, self.expr(a)))
        kws = [(k.name, self.expr(k.value)) for k in node.keywords]
        for k in node.keywords:
            if k.name is not None and k.name.startswith("__"):
                self.forbid(f"keyword '{k.name}' is not allowed", k.pos)
        has_kwstar = any(k.name is None for k in node.keywords)
        bounded = R.bounded
        merge_kwargs = R.merge_kwargs

        if has_kwstar:
            def ev(env):
                f = func(env)
                args = []
                for star, a in parts:
                    if star:
                        v = a(env)
                        try:
                            args.extend(bounded(v))
                        except TypeError:
                            e = TypeError(f"Value after * must be an iterable, not "
                                          f"{type(v).__name__}")
                            note(e, loc)
                            raise e from None
                    else:
                        args.append(a(env))
                try:
                    kwargs = merge_kwargs(f, [(k, a(env)) for k, a in kws])
                    return f(*args, **kwargs)
                except BaseException as e:
                    note(e, loc)
                    raise
            return ev

        def ev(env):
            f = func(env)
            args = []
            for star, a in parts:
                if star:
                    v = a(env)
                    try:
                        args.extend(bounded(v))
                    except TypeError:
                        e = TypeError(f"Value after * must be an iterable, not {type(v).__name__}")
                        note(e, loc)
                        raise e from None
                else:
                    args.append(a(env))
            kwargs = {k: a(env) for k, a in kws}
            try:
                return f(*args, **kwargs)
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    def e_BinOp(self, node):
        # fold a left-nested chain of binary operators iteratively
        chain = []
        n = node
        while isinstance(n, A.BinOp) and n.op != "**":
            chain.append(n)
            n = n.left
        if not chain:
            return self._binop(node.op, self.expr(node.left), self.expr(node.right), node,
                               node.left)
        ev = self.expr(n)
        left = n
        for b in reversed(chain):
            ev = self._binop(b.op, ev, self.expr(b.right), b, left)
            left = None
        return ev

    def _fused_pair(self, fn, lf, rf, node, left, checked=None, risky=None, risky_b=None):
        """A binary operator (``node``) whose operands are read inline, or None where the
        general closures serve it (cold code, or neither operand a name or a constant).
        ``left`` is the left operand's node when ``lf`` is that node's own closure."""
        if not self._hot():
            return None
        a = self._operand(left, lf) if left is not None else ("f", None, lf)
        b = self._operand(node.right, rf)
        if a[0] == "f" and b[0] in ("f", "c"):
            return None  # nothing to read inline (a constant right operand is one already)
        make = FUSED.pair_factory((a[0], b[0], checked is not None))
        return make(self.G, UNBOUND, note, fn, checked, risky, risky_b, self.loc(node),
                    a[1], b[1], a[2], b[2])

    def _binop(self, op, lf, rf, node, left=None):
        loc = self.loc(node)
        const = _const_of(node.right)
        if op in _FAST_BINOPS:
            return self._fused_pair(_FAST_BINOPS[op], lf, rf, node, left) or \
                _apply_to_pair(_FAST_BINOPS[op], lf, rf, loc, const)
        checked = _BINOPS[op]
        plain = {"+": operator.add, "*": operator.mul, "%": operator.mod, "**": operator.pow,
                 "<<": operator.lshift}[op]
        # A check runs only when both operands have a type it guards (int * int, list * int,
        # int ** int...), or for `%` when the left one is a format string: `y * 2` on a
        # Tensor, the loops' common case, goes straight to the operator.
        risky_b = risky = R.INTS
        if op == "+":
            risky_b = risky = R.SEQS
        elif op == "*":
            risky_b = risky = R.RISKY_MUL
        elif op == "%":
            risky, risky_b = frozenset({str}), _ANY_TYPE
        fused = self._fused_pair(plain, lf, rf, node, left, checked, risky, risky_b)
        if fused is not None:
            return fused
        if const is not _NO_CONST:
            if type(const) not in risky_b:  # no check can apply: `y * 2.0`
                return _apply_to_pair(plain, lf, rf, loc, const)

            def ev_const(env):  # `y * 2`: checked only if y is an int or a sequence
                a = lf(env)
                try:
                    if type(a) in risky:
                        return checked(a, const)
                    return plain(a, const)
                except BaseException as e:
                    note(e, loc)
                    raise
            return ev_const

        def ev(env):
            a = lf(env)
            b = rf(env)
            try:
                if type(a) in risky and type(b) in risky_b:
                    return checked(a, b)
                return plain(a, b)
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    def e_UnaryOp(self, node):
        ops = []
        n = node
        while isinstance(n, A.UnaryOp):
            ops.append(_UNOPS[n.op])
            n = n.operand
        inner = self.expr(n)
        loc = self.loc(node)
        if len(ops) == 1:
            op = ops[0]

            def ev(env):
                v = inner(env)
                try:
                    return op(v)
                except BaseException as e:
                    note(e, loc)
                    raise
            return ev
        ops = tuple(reversed(ops))

        def ev(env):
            v = inner(env)
            try:
                for op in ops:
                    v = op(v)
                return v
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    def e_BoolOp(self, node):
        vals = [self.expr(v) for v in node.values]
        first, rest = vals[0], tuple(vals[1:])
        if node.op == "and":
            def ev(env):
                v = first(env)
                for f in rest:
                    if not v:
                        return v
                    v = f(env)
                return v
            return ev

        def ev(env):
            v = first(env)
            for f in rest:
                if v:
                    return v
                v = f(env)
            return v
        return ev

    def e_Compare(self, node):
        left = self.expr(node.left)
        ops = [_CMPOPS[o] for o in node.ops]
        rights = [self.expr(c) for c in node.comparators]
        loc = self.loc(node)
        if len(ops) == 1:
            return _apply_to_pair(ops[0], left, rights[0], loc, _const_of(node.comparators[0]))
        pairs = tuple(zip(ops, rights, strict=False))

        def ev(env):
            a = left(env)
            r = True
            try:
                for op, right in pairs:
                    b = right(env)
                    r = op(a, b)
                    if not r:
                        return r
                    a = b
                return r
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    def e_IfExp(self, node):
        test, body, orelse = self.expr(node.test), self.expr(node.body), self.expr(node.orelse)
        return lambda env: body(env) if test(env) else orelse(env)

    def e_Lambda(self, node):
        return self.function(node, "<lambda>", node.params, body_expr=node.body)

    def _display_items(self, elts):
        if not any(isinstance(e, A.Starred) for e in elts):
            fns = tuple(self.expr(e) for e in elts)
            return fns, None
        parts = [(isinstance(e, A.Starred), self.expr(e.value if isinstance(e, A.Starred) else e))
                 for e in elts]
        return None, parts

    def e_ListDisplay(self, node):
        fns, parts = self._display_items(node.elts)
        if fns is not None:
            if not fns:
                return lambda env: []
            return lambda env: [f(env) for f in fns]
        return self._starred_seq(parts, list, node)

    def e_TupleDisplay(self, node):
        fns, parts = self._display_items(node.elts)
        if fns is not None:
            if not fns:
                return lambda env: ()
            if len(fns) == 2:
                f0, f1 = fns
                return lambda env: (f0(env), f1(env))
            return lambda env: tuple([f(env) for f in fns])
        return self._starred_seq(parts, tuple, node)

    def _starred_seq(self, parts, tp, node):
        loc = self.loc(node)
        lim = self.limits

        def ev(env):
            out = []
            for star, f in parts:
                if star:
                    try:
                        out.extend(R.bounded(f(env)))
                    except BaseException as e:
                        note(e, loc)
                        raise
                    if len(out) > lim.max_length:
                        e = R.too_long(len(out), "list")
                        note(e, loc)
                        raise e
                else:
                    out.append(f(env))
            return out if tp is list else tuple(out)
        return ev

    def e_DictDisplay(self, node):
        items = tuple((self.expr(k) if k is not None else None, self.expr(v))
                      for k, v in zip(node.keys, node.values, strict=False))
        loc = self.loc(node)
        if all(k is not None for k, _ in items):
            return lambda env: {k(env): v(env) for k, v in items}
        merge = R.merge_mapping

        def ev(env):
            out = {}
            for k, v in items:
                if k is None:
                    try:
                        merge(out, v(env))
                    except BaseException as e:
                        note(e, loc)
                        raise
                else:
                    out[k(env)] = v(env)
            return out
        return ev

    def e_SetDisplay(self, node):
        fns, parts = self._display_items(node.elts)
        if fns is not None:
            return lambda env: {f(env) for f in fns}
        seq = self._starred_seq(parts, list, node)
        return lambda env: set(seq(env))

    def e_FString(self, node):
        pieces = []
        for p in node.parts:
            if isinstance(p, str):
                pieces.append(p)
            else:
                pieces.append(self._formatted(p))
        if all(isinstance(p, str) for p in pieces):
            s = "".join(pieces)
            return lambda env: s
        fns = tuple((lambda env, s=p: s) if isinstance(p, str) else p for p in pieces)
        lim = self.limits
        loc = self.loc(node)

        def ev(env):
            s = "".join([f(env) for f in fns])
            if len(s) > lim.max_length:
                e = R.too_long(len(s), "string")
                note(e, loc)
                raise e
            return s
        return ev

    def _formatted(self, fv: A.FormattedValue):
        val = self.expr(fv.value)
        conv = fv.conversion
        if fv.debug is not None and conv is None and fv.spec is None:
            conv = "r"
        spec = self.e_FString(fv.spec) if fv.spec is not None else None
        debug = fv.debug or ""
        fmt = R.format_value
        loc = self.loc(fv)

        def ev(env):
            v = val(env)
            sp = spec(env) if spec is not None else ""
            try:
                return debug + fmt(v, conv, sp)
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    # ------------------------------------------------------------- comprehensions
    def _comprehension(self, node, scope_of=None):
        """Returns (first_iter_fn, run(env_outer, it0, emit)) pieces."""
        scope = self.scopes[id(scope_of if scope_of is not None else node)]
        outer = self.scope
        first = self.expr(node.generators[0].iter)
        self.scope = scope
        levels = []
        for i, g in enumerate(node.generators):
            it = self.expr(g.iter) if i else None
            store = self.store(g.target)
            ifs = tuple(self.expr(c) for c in g.ifs)
            levels.append((it, store, ifs))
        elt = self.expr(node.elt)
        self.scope = outer
        free_slots = tuple(w for _, w in (outer.resolve_closure(nm) for nm in scope.frees))
        nslots = scope.nslots
        cell_slots = tuple(scope.slots[nm] for nm in sorted(scope.cells & scope.locals))
        free_targets = tuple(scope.slots[nm] for nm in scope.frees)
        return first, levels, elt, free_slots, nslots, cell_slots, free_targets

    def _comp_env(self, env, free_slots, nslots, cell_slots, free_targets):
        frame = [UNBOUND] * nslots
        for i in cell_slots:
            frame[i] = Cell()
        for src, dst in zip(free_slots, free_targets, strict=False):
            frame[dst] = env[src]
        return frame

    def _comp_walker(self, levels, elt):
        """The loop levels of a comprehension as one generator (shared by [...] and (...))."""
        st = self.state
        nlev = len(levels)

        def run(frame, level, iterable):
            _, store, ifs = levels[level]
            nxt = level + 1
            for v in iterable:
                st.steps -= 1
                if st.steps < 0:
                    st.out_of_steps()
                store(frame, v)
                ok = True
                for c in ifs:
                    if not c(frame):
                        ok = False
                        break
                if not ok:
                    continue
                if nxt == nlev:
                    yield elt(frame)
                else:
                    yield from run(frame, nxt, levels[nxt][0](frame))
        return run

    def e_ListComp(self, node, scope_of=None):
        first, levels, elt, free_slots, nslots, cell_slots, free_targets = \
            self._comprehension(node, scope_of)
        loc = self.loc(node)
        make_env = self._comp_env
        run = self._comp_walker(levels, elt)

        def ev(env):
            it0 = first(env)
            frame = make_env(env, free_slots, nslots, cell_slots, free_targets)
            try:
                return list(run(frame, 0, it0))
            except BaseException as e:
                note(e, loc)
                raise
        return ev

    def e_SetComp(self, node):
        listcomp = self.e_ListComp(node)
        return lambda env: set(listcomp(env))

    def e_DictComp(self, node):
        pair = A.TupleDisplay([node.key, node.value], pos=node.pos)
        pairs = self.e_ListComp(A.ListComp(pair, node.generators, pos=node.pos), scope_of=node)
        return lambda env: dict(pairs(env))

    def e_GenExp(self, node):
        first, levels, elt, free_slots, nslots, cell_slots, free_targets = \
            self._comprehension(node)
        make_env = self._comp_env
        run = self._comp_walker(levels, elt)

        def ev(env):
            it0 = iter(first(env))
            frame = make_env(env, free_slots, nslots, cell_slots, free_targets)
            return run(frame, 0, it0)
        return ev


class _FallbackScope:
    """Stands for a class body's scope while the compiler builds the read of a name the
    body did not bind: the name resolves as the enclosing code sees it."""

    def __init__(self, scope, kind, where):
        self.scope = scope
        self.kind = scope.kind
        self.name = scope.name
        self.qualname = scope.qualname
        self._found = (kind, where)

    def resolve(self, name):
        return self._found


def _names_a_class(node) -> bool:
    """Whether an attribute's object may carry a special method a program reads (checked
    again at run time): ``super()``, ``super(A, self)``, a name or a dotted name
    (``nn.Module.__init__``, ``self.__call__``)."""
    if type(node) is A.Call:
        return type(node.func) is A.Name and node.func.id == "super"
    while type(node) is A.Attribute:
        node = node.value
    return type(node) is A.Name


def _bind_all(stores):
    """A statement that stores each (store, value) pair: the run-time half of ``import`` and
    ``from ... import``, whose values are all found while compiling."""
    def ex(env):
        for store, value in stores:
            store(env, value)
    return ex


class _AnyType:
    """A container of every type (`type(x) in _ANY_TYPE` is always true)."""

    __slots__ = ()

    def __contains__(self, item) -> bool:
        return True


_ANY_TYPE = _AnyType()


_NO_CONST = object()


def _const_of(node):
    """The value of a literal operand (``2`` in ``y * 2``), else _NO_CONST."""
    return node.value if isinstance(node, A.Const) else _NO_CONST


def _apply_to_pair(fn, left, right, loc, const=_NO_CONST):
    """``ev(env) -> fn(left(env), right(env))`` with an error noted at ``loc``.

    One closure for a plain binary operator and a single comparison (``a < b``): both
    evaluate two operands left to right and then apply a fixed function. A literal right
    operand (`const`) is used as it is: one call less in loops such as `y.norm() < 1000`."""
    if const is not _NO_CONST:
        def ev_const(env):
            a = left(env)
            try:
                return fn(a, const)
            except BaseException as e:
                note(e, loc)
                raise
        return ev_const

    def ev(env):
        a = left(env)
        b = right(env)
        try:
            return fn(a, b)
        except BaseException as e:
            note(e, loc)
            raise
    return ev


def _valid_except(cls):
    if isinstance(cls, tuple):
        return all(isinstance(c, type) and issubclass(c, BaseException) for c in cls)
    return isinstance(cls, type) and issubclass(cls, BaseException)


def _not_unpackable(v):
    """CPython's TypeError for unpacking a value that is neither iterable nor a sequence."""
    tp = type(v)
    if getattr(tp, "__iter__", None) is None and getattr(tp, "__getitem__", None) is None:
        return TypeError(f"cannot unpack non-iterable {tp.__name__} object")
    return None


def _take(v, n):
    import itertools
    e = _not_unpackable(v)
    if e is not None:
        raise e
    it = iter(v)
    return list(itertools.islice(it, n + 1))


class _Binder:
    """Binds call arguments to a new frame with Python's rules and messages."""

    def __init__(self, name, params: A.Params, scope: Scope):
        self.name = name
        self.pos_names = [p.name for p in params.args]
        self.posonly = params.posonly
        self.vararg = params.vararg.name if params.vararg else None
        self.kwonly = [p.name for p in params.kwonly]
        self.kwarg = params.kwarg.name if params.kwarg else None
        self.ndefaults = sum(1 for p in params.args if p.default is not None)
        self.nslots = scope.nslots
        self.slots = scope.slots
        self.cell_slots = tuple(scope.slots[nm] for nm in sorted(scope.cells & scope.locals))
        self.free_targets = tuple(scope.slots[nm] for nm in scope.frees)

    def make(self, defaults, kwdefaults, cells):
        npos = len(self.pos_names)
        nslots = self.nslots
        filler = [UNBOUND] * (nslots - npos)
        cell_slots = self.cell_slots
        free_targets = self.free_targets
        simple = not self.vararg and not self.kwonly and not self.kwarg
        general = self._general

        def finish(frame):
            for i in cell_slots:
                frame[i] = Cell(frame[i])
            for cell, i in zip(cells, free_targets, strict=False):
                frame[i] = cell
            return frame

        if simple and not cell_slots and not free_targets:
            def bind(args, kwargs):
                if not kwargs and len(args) == npos:
                    return [*args, *filler]
                return general(args, kwargs, defaults, kwdefaults)
            return bind

        def bind(args, kwargs):
            if simple and not kwargs and len(args) == npos:
                frame = [*args, *filler]
            else:
                frame = general(args, kwargs, defaults, kwdefaults)
            return finish(frame) if (cell_slots or free_targets) else frame
        return bind

    def _general(self, args, kwargs, defaults, kwdefaults):
        name = self.name
        npos = len(self.pos_names)
        frame = [UNBOUND] * self.nslots
        slots = self.slots
        given = min(len(args), npos)
        for i in range(given):
            frame[i] = args[i]
        extra = args[npos:]
        if self.vararg is not None:
            frame[slots[self.vararg]] = tuple(extra)
        rest = {} if self.kwarg is not None else None
        for k, v in kwargs.items():
            if k in self.pos_names and self.pos_names.index(k) >= self.posonly:
                i = self.pos_names.index(k)
            elif k in self.kwonly:
                i = slots[k]
            elif rest is not None:
                rest[k] = v
                continue
            elif k in self.pos_names:
                raise TypeError(f"{name}() got some positional-only arguments passed as "
                                f"keyword arguments: '{k}'")
            else:
                raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
            if frame[i] is not UNBOUND:
                raise TypeError(f"{name}() got multiple values for argument '{k}'")
            frame[i] = v
        if extra and self.vararg is None:  # after the keywords, as CPython checks
            raise TypeError(self._too_many(len(args), frame))
        ndef = self.ndefaults
        first_default = npos - ndef
        missing = []
        for i in range(npos):
            if frame[i] is UNBOUND:
                if i >= first_default:
                    frame[i] = defaults[i - first_default]
                else:
                    missing.append(self.pos_names[i])
        if missing:
            raise TypeError(_missing(name, missing, "positional"))
        kwmissing = []
        for k in self.kwonly:
            i = slots[k]
            if frame[i] is UNBOUND:
                if k in kwdefaults:
                    frame[i] = kwdefaults[k]
                else:
                    kwmissing.append(k)
        if kwmissing:
            raise TypeError(_missing(name, kwmissing, "keyword-only"))
        if rest is not None:
            frame[slots[self.kwarg]] = rest
        return frame


    def _too_many(self, given, frame):
        """CPython's text for too many positional arguments (keyword-only ones given count)."""
        npos, ndef = len(self.pos_names), self.ndefaults
        if ndef:
            takes = f"from {npos - ndef} to {npos} positional arguments"
        else:
            takes = f"{npos} positional argument{'s' if npos != 1 else ''}"
        kw_given = sum(frame[self.slots[k]] is not UNBOUND for k in self.kwonly)
        if kw_given:
            was = (f" positional argument{'s' if given != 1 else ''} (and {kw_given} "
                   f"keyword-only argument{'s' if kw_given != 1 else ''}) were")
        else:
            was = " was" if given == 1 else " were"
        return f"{self.name}() takes {takes} but {given}{was} given"


def _signature(params: A.Params, defaults, kwdefaults):
    """An inspect.Signature of a program function's parameters (imported on first use)."""
    import inspect
    P = inspect.Parameter
    out = []
    first_default = len(params.args) - len(defaults)
    for i, p in enumerate(params.args):
        kind = P.POSITIONAL_ONLY if i < params.posonly else P.POSITIONAL_OR_KEYWORD
        d = defaults[i - first_default] if i >= first_default else P.empty
        out.append(P(p.name, kind, default=d))
    if params.vararg is not None:
        out.append(P(params.vararg.name, P.VAR_POSITIONAL))
    for p in params.kwonly:
        out.append(P(p.name, P.KEYWORD_ONLY, default=kwdefaults.get(p.name, P.empty)))
    if params.kwarg is not None:
        out.append(P(params.kwarg.name, P.VAR_KEYWORD))
    return inspect.Signature(out)


def _missing(name, names, kind):
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        listed = quoted[0]
    elif len(quoted) == 2:
        listed = f"{quoted[0]} and {quoted[1]}"
    else:
        listed = ", ".join(quoted[:-1]) + f", and {quoted[-1]}"
    s = "s" if len(names) > 1 else ""
    return f"{name}() missing {len(names)} required {kind} argument{s}: {listed}"


def compile_program(module: A.Module, filename: str, source: str, *, globals_, builtins, state,
                    limits: Limits, echo=False, static_globals=False, display=None) -> Program:
    """Compile a parsed module against a namespace (see :class:`Compiler`)."""
    old = sys.getrecursionlimit()
    if old < 20000:
        sys.setrecursionlimit(20000)
    try:
        c = Compiler(filename, source, globals_=globals_, builtins=builtins, state=state,
                     limits=limits, echo=echo, static_globals=static_globals, display=display)
        return c.compile_module(module)
    finally:
        sys.setrecursionlimit(old)
