"""The rich views as program builtins: show, graph, grads, explain, export (docs/language.md).

They see the program's globals, so leaves are named by the script's variables,
and they print to the program's stdout. gradcli.views (and rich) load on first use.
"""

from __future__ import annotations

import sys


class ExportedText(str):
    """What export() returns: a str that echoes as its text (REPL, --echo)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def view_builtins(names: dict, state) -> dict:
    def out():
        return state.out or sys.stdout

    def name_of(t):
        from gradcli.views.common import name_for

        return name_for(t, names)

    def show(t, name=None):
        from gradcli.views import show as render

        render(t, name=name if name is not None else name_of(t), file=out())

    def graph(t):
        from gradcli.views import graph as render

        render(t, names=names, file=out())

    def grads():
        from gradcli.views import grads as render

        render(names, file=out())

    def explain(output, gradient=None):
        from gradcli.views import explain as render

        render(output, gradient=gradient, names=names, file=out())

    def export(t, format="dot"):  # noqa: A002 - the spec's keyword
        from gradcli.views import export as render

        return ExportedText(render(t, format, names=names))

    return {"show": show, "graph": graph, "grads": grads, "explain": explain, "export": export}
