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

    def held(render, *args, **kwargs):
        """Build a view with the program's prints held back (a dry backward walk runs
        custom Functions' backward code), then print it where the program prints."""
        import io

        target, saved = out(), state.out
        state.out = io.StringIO()
        try:
            renderable = render(*args, **kwargs)
        finally:
            state.out = saved
        from gradcli.views.common import emit

        emit(renderable, file=target)

    def graph(t):
        from gradcli.views import graph_tree

        held(graph_tree, t, names=names)

    def grads():
        from gradcli.views import grads as render

        render(names, file=out())

    def explain(output, gradient=None):
        from gradcli.views import explain_renderable

        held(explain_renderable, output, gradient=gradient, names=names)

    def export(t, format="dot"):  # noqa: A002 - the spec's keyword
        import io

        from gradcli.views import export as render

        saved = state.out
        state.out = io.StringIO()  # (its dry walk: see held)
        try:
            return ExportedText(render(t, format, names=names))
        finally:
            state.out = saved

    return {"show": show, "graph": graph, "grads": grads, "explain": explain, "export": export}
