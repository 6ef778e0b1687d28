"""``gradcli check``: compile without running, reporting every error found."""
from __future__ import annotations

from . import ast as A
from .errors import CompileError, ForbiddenError, GradcliError
from .parser import parse_all
from .session import Session, read_source


class UnsupportedError(CompileError):
    """A torch name the program uses that gradcli does not have (found by ``gradcli
    check`` before anything runs; at run time the same use raises AttributeError)."""

    kind = "NotSupported"


def check_source(source: str, filename: str) -> list:
    """Every syntax and forbidden-name error of a program, as CompileErrors
    sorted by position (empty when it compiles)."""
    session = Session()
    module, errors = parse_all(source, filename, max_nesting=session.limits.max_nesting)
    if module is not None:
        try:
            session.compile(source, filename)
        except CompileError as e:
            errors.extend(e.errors)
        except GradcliError as e:
            errors.append(e)
    elif errors:
        # the parts that parsed may still hold forbidden names
        _, partial = _parts(source, filename, errors, session)
        errors.extend(partial)
    if module is not None:
        seen = {(e.filename, e.line, e.col) for e in errors}
        found = unsupported_uses(module, source, filename) + _in_helpers(module, filename)
        errors.extend(e for e in found if (e.filename, e.line, e.col) not in seen)
    # the program's own errors first, then those of the helpers it imports, each in order
    errors.sort(key=lambda e: (e.filename != filename, e.filename or "", e.line, e.col))
    return errors


def _in_helpers(module, filename: str, visited=None) -> list:
    """The unsupported torch names of the sibling ``.grad`` helpers a program imports (and
    of those they import), reported at the helpers' own lines; their syntax and
    forbidden-name errors are the compiler's (see :mod:`gradcli.lang.grad_modules`)."""
    import os

    from .grad_modules import links_out, sibling_path
    from .parser import parse

    visited = visited if visited is not None else {os.path.realpath(filename)}
    errors: list = []
    names = []
    for node in _walk(module):
        if isinstance(node, A.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, A.ImportFrom) and node.module:
            names.append(node.module)
    for name in names:
        path = sibling_path(filename, name)
        if path is None or os.path.realpath(path) in visited or links_out(path, filename):
            continue  # (a link out of the folder is refused by the compiler)
        visited.add(os.path.realpath(path))
        shown = os.path.join(os.path.dirname(filename), name + ".grad")
        try:
            with open(path, "rb") as f:
                source = f.read().decode("utf-8")
            helper = parse(source, shown)
        except (OSError, UnicodeDecodeError, GradcliError):
            continue  # reported by the compiler
        errors += unsupported_uses(helper, source, shown)
        errors += _in_helpers(helper, shown, visited)
    return errors


def _walk(node):
    """Every node of a tree, parents first."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, A.Node):
            yield n
            stack.extend(reversed([getattr(n, f, None) for f in n._fields]))
        elif isinstance(n, (list, tuple)):
            stack.extend(reversed(n))


def unsupported_uses(module, source: str, filename: str) -> list:
    """Every ``torch.…`` / ``F.…`` / ``nn.…`` attribute chain of the program (through
    the names its imports bind to torch's modules) that gradcli's facade lacks."""
    from gradcli.torch import _UnsupportedNamespace as unsupported_namespace

    from .runtime import facade_module

    aliases: dict = {}  # program name -> dotted torch module path
    errors: list = []

    def bind_imports(node):
        if isinstance(node, A.Import):
            for alias in node.names:
                if alias.name == "torch" or alias.name.startswith("torch."):
                    if alias.asname:
                        aliases[alias.asname] = alias.name
                    else:
                        aliases["torch"] = "torch"
        elif isinstance(node, A.ImportFrom) and node.module and (
                node.module == "torch" or node.module.startswith("torch.")):
            for alias in node.names or ():
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def walk(node, visit):
        if isinstance(node, A.Node):
            visit(node)
            for field in node._fields:
                walk(getattr(node, field, None), visit)
        elif isinstance(node, (list, tuple)):
            for item in node:
                walk(item, visit)

    walk(module, bind_imports)
    if not aliases:
        return errors

    def chain_of(node):
        """Attribute(Attribute(Name)) -> (root name, [attribute nodes, outermost last])."""
        attrs = []
        while isinstance(node, A.Attribute):
            attrs.append(node)
            node = node.value
        if isinstance(node, A.Name):
            return node.id, attrs[::-1]
        return None, []

    reported: set = set()

    def check_chain(node):
        if not isinstance(node, A.Attribute):
            return
        root, attrs = chain_of(node)
        if root not in aliases or id(attrs[-1]) in reported:
            return
        for a in attrs:
            reported.add(id(a))
        path = aliases[root]
        try:
            obj = facade_module(path)
        except LookupError:
            return  # the import itself is reported by the compiler
        for a in attrs:
            if a.attr.startswith("_"):
                return  # the compiler reports private names
            try:
                obj = getattr(obj, a.attr)
            except AttributeError as e:
                message = str(e)
                if "not supported by gradcli" not in message:
                    message = f"{path}.{a.attr} is not supported by gradcli"
                errors.append(UnsupportedError(message, filename, a.pos, source))
                return
            path = f"{path}.{a.attr}"
            if isinstance(obj, unsupported_namespace):
                continue  # torch.fft & co: the next name says it is not supported
            if not isinstance(obj, type) and type(obj).__name__ != "module":
                return  # a value: its attributes depend on what it holds at run time

    walk(module, check_chain)
    return errors


def _parts(source, filename, syntax_errors, session):
    bad_lines = {e.line for e in syntax_errors}
    lines = source.split("\n")
    kept = []
    # blank out top-level statements that contain a syntax error
    i = 0
    blocks = []
    while i < len(lines):
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j][:1] in " \t#)]}" or
                                  lines[j].lstrip().startswith(("else", "elif", "except",
                                                                "finally"))):
            j += 1
        blocks.append((i, j))
        i = j
    for a, b in blocks:
        if any(a < ln <= b for ln in bad_lines):
            kept.extend([""] * (b - a))
        else:
            kept.extend(lines[a:b])
    try:
        session.compile("\n".join(kept), filename)
    except CompileError as e:
        return None, [x for x in e.errors if isinstance(x, ForbiddenError)]
    except GradcliError:
        pass
    return None, []


def check_file(path: str) -> list:
    """Rendered reports of every error in one file (empty list: it compiles)."""
    try:
        source, filename = read_source(path)
    except CompileError as e:
        return [e.render()]
    return [e.render() for e in check_source(source, filename)]
