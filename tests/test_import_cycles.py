"""Imports inside gradcli/cli/ and inside gradcli/engine/ point one way: no module of
either package reaches itself through the imports of that package's modules, counting
the imports inside functions too (read statically, with ast, so that no import order or
laziness can hide a cycle). Dead wiring goes too: every gradcli module the code or
pyproject.toml names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "gradcli"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _imports(name: str, path: Path, known: dict) -> set[str]:
    """The gradcli modules `name` imports anywhere in its text (absolute and relative;
    `from pkg import mod` counts as importing pkg.mod when that is a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            for alias in node.names:
                found.add(f"{target}.{alias.name}")
    return {m for m in found if m in known and m != name}


def _graph(prefix: str) -> dict[str, set[str]]:
    known = _modules()
    inside = {m: p for m, p in known.items() if m == prefix or m.startswith(prefix + ".")}
    # a package's own __init__ is imported on the way to any of its modules: edges to it
    # from its submodules are not cycles of theirs, so they are left out
    graph = {}
    for name, path in inside.items():
        targets = _imports(name, path, known) & set(inside)
        graph[name] = {t for t in targets if not name.startswith(t + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@pytest.mark.parametrize("package", ["gradcli.cli", "gradcli.engine"])
def test_no_import_cycles(package):
    graph = _graph(package)
    assert len(graph) > 3
    assert _cycles(graph) == []


def test_the_walker_sees_a_cycle_held_by_function_level_imports():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_named_gradcli_module_exists():
    known = _modules()
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    named = set(re.findall(r'"(gradcli(?:\.\w+)+)"', pyproject))
    named |= set(re.findall(r'gradcli = "(gradcli(?:\.\w+)+)', pyproject))
    for name in sorted(named):
        if name == "gradcli.grammar":
            continue  # a package of data (grammar/), mapped in pyproject.toml
        assert name in known, f"pyproject.toml names {name}, which does not exist"
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module \
                    and node.module.startswith("gradcli."):
                assert node.module in known or node.module.startswith("gradcli.grammar"), \
                    f"{name} imports {node.module}, which does not exist"


def test_no_references_to_files_or_sections_outside_the_repo():
    """Comments point to what a checkout has: docs/, existing tests; not to spec sections
    kept elsewhere."""
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\bSPEC (section )?\d", text), f"{path.relative_to(ROOT)} cites SPEC"
        for ref in re.findall(r"\b(tests/[\w/]+\.py|docs/[\w/]+\.md)", text):
            assert (ROOT / ref).exists(), f"{path.relative_to(ROOT)} names {ref}, which is missing"
