"""Rich views of tensors, graphs and the backward pass (the tour in README.md).

Importing this package is cheap: nothing here imports rich, and each name below
is loaded on first use from its submodule, so a one-shot `gradcli grad` that
never renders a view pays nothing. `export` (DOT, Mermaid, JSON) never imports
rich at all.

Printing functions write to the *current* ``sys.stdout`` (or ``file=``) through a
rich Console made for that call; the text is plain (no ANSI escapes) when the
stream is not a terminal, when ``NO_COLOR`` is set, or with ``color=False``. The
width follows the terminal, and is ``COLUMNS`` or 80 when not a terminal.

==================  ======================================  ============================
prints              returns a rich renderable               module
==================  ======================================  ============================
``show``            ``show_renderable``                     ``gradcli.views.panel``
``graph``           ``graph_tree``                          ``gradcli.views.tree``
``grads``           ``grads_table``                         ``gradcli.views.gradtable``
``explain``         ``explain_renderable``                  ``gradcli.views.walkthrough``
(none)              ``export`` returns a str                ``gradcli.views.exporters``
==================  ======================================  ============================

``render_text(renderable, width=80)`` turns any renderable into plain text, and
``make_console``/``emit`` are the shared console helpers (``gradcli.views.common``).
"""

from __future__ import annotations

import importlib

_LAZY = {
    "show": "panel",
    "show_renderable": "panel",
    "graph": "tree",
    "graph_tree": "tree",
    "grads": "gradtable",
    "grads_table": "gradtable",
    "explain": "walkthrough",
    "explain_renderable": "walkthrough",
    "export": "exporters",
    "FORMATS": "exporters",
    "render_text": "common",
    "make_console": "common",
    "emit": "common",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gradcli.views' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
