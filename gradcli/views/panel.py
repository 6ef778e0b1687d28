"""`show(t)`: one tensor as a panel.

The panel lists name, shape, dtype, requires_grad, is_leaf, grad_fn and
retains_grad (non-leaves), then the values with `.grad` beside them. A 2-D tensor
is a table with row and column indices; other ranks are PyTorch's indented rows.
Numbers are formatted, and big tensors summarised with `...`, exactly as `print(t)`
would (the program's `set_printoptions` apply).
"""

from __future__ import annotations

from gradcli.engine.tensor import Tensor

from .common import emit, grad_of, shape_str, tensor_body
from .walk import display_name

STYLE_KEY = "bold"
STYLE_TITLE = "bold cyan"


def _matrix_cells(t: Tensor) -> tuple[list, list]:
    """Rows of cell texts as print(t) lays out a 2-D tensor, and the row/column labels."""
    from gradcli.engine.formatting import get_printoptions

    body = tensor_body(t, linewidth=10**9)
    lines = [line.strip() for line in body.split("\n") if line.strip()]
    rows = []
    for line in lines:
        line = line.rstrip(",").strip("[]")
        if line == "...":
            rows.append(None)
        else:
            rows.append([cell.strip() for cell in line.split(",")])
    n_rows, n_cols = t.shape
    opts = get_printoptions()
    summarised = t.numel() > opts["threshold"]
    edge = int(opts["edgeitems"])

    def labels(n):
        if summarised and n > 2 * edge:
            return [str(i) for i in range(edge)] + ["…"] + [str(i) for i in range(n - edge, n)]
        return [str(i) for i in range(n)]

    return rows, (labels(n_rows), labels(n_cols))


def _matrix_table(t: Tensor, title: str):
    from rich import box
    from rich.table import Table

    rows, (row_labels, col_labels) = _matrix_cells(t)
    width = max((len(r) for r in rows if r is not None), default=0)
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  title_style=STYLE_KEY, title_justify="left", header_style="dim")
    table.add_column("", style="dim", justify="right", no_wrap=True)
    for label in col_labels[:width]:
        table.add_column(label, justify="right", no_wrap=True)
    for label, row in zip(row_labels, rows, strict=False):
        if row is None:
            table.add_row(label, *(["⋮"] * width))
        else:
            table.add_row(label, *[("…" if c == "..." else c) for c in row])
    return table


class _Rows:
    """PyTorch's indented rows for `t`, wrapped at the width available when rendered."""

    def __init__(self, t: Tensor, title: str):
        self.t = t
        self.title = title

    def _text(self, width: int) -> str:
        # PyTorch wraps at linewidth counting the 7 columns of "tensor(", which
        # tensor_body strips, so lines come out at most `width` wide.
        return tensor_body(self.t, linewidth=max(20, width) + len("tensor("))

    def __rich_console__(self, console, options):
        from rich.text import Text

        yield Text(self.title, style=STYLE_KEY)
        yield Text(self._text(options.max_width), no_wrap=True, overflow="fold")

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        natural = self._text(10**4)
        fitted = self._text(options.max_width)
        if fitted != natural:  # wrapped: take all the width there is, so it wraps the same
            return Measurement(20, options.max_width)
        widest = max(len(line) for line in [self.title] + natural.split("\n"))
        return Measurement(min(widest, 20), widest)


class _Fit:
    """Renders the first of several layouts whose natural width fits, else the last."""

    def __init__(self, *layouts):
        self.layouts = layouts

    def _choose(self, console, options):
        from rich.measure import Measurement

        unbounded = options.update_width(10**6)  # Measurement.get clamps to the width
        for layout in self.layouts[:-1]:
            if Measurement.get(console, unbounded, layout).maximum <= options.max_width:
                return layout
        return self.layouts[-1]

    def __rich_console__(self, console, options):
        yield self._choose(console, options)

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        return Measurement.get(console, options, self._choose(console, options))


def _views(t: Tensor, title: str) -> list:
    """Ways to draw t's values, best first: a table (2-D only), then indented rows."""
    if t.dim() == 2 and t.numel() > 0:
        return [_matrix_table(t, title), _Rows(t, title)]
    return [_Rows(t, title)]


def _values_and_grad(t: Tensor, grad_note: str | None):
    """Values with the gradient beside them when that fits, else below them."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    grad = grad_of(t)
    if grad is None:
        grad_views = [Group(Text("grad", style=STYLE_KEY), Text(grad_note or "None",
                                                                 style="dim"))]
    else:
        grad_views = _views(grad, "grad")
    value_views = _views(t, "value")
    side = Table.grid(padding=(0, 4))
    side.add_row(value_views[0], grad_views[0])
    layouts = [side, Group(value_views[0], Text(""), grad_views[0])]
    if len(value_views) > 1 or len(grad_views) > 1:
        layouts.append(Group(value_views[-1], Text(""), grad_views[-1]))
    return _Fit(*layouts)


def show_renderable(t, name: str | None = None):
    """The panel `show` prints, as a rich renderable."""
    from rich import box
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    if not isinstance(t, Tensor):
        raise TypeError(f"show() expects a tensor, got {type(t).__name__}")
    info = Table.grid(padding=(0, 2))
    info.add_column(style=STYLE_KEY)
    info.add_column()
    fn = t.grad_fn
    rows = [
        ("name", name if name else "(unnamed)"),
        ("shape", shape_str(t.shape)),
        ("dtype", str(t.dtype)),
        ("requires_grad", str(t.requires_grad)),
        ("is_leaf", str(t.is_leaf)),
        ("grad_fn", "None" if fn is None else f"<{display_name(fn)}>"),
    ]
    if fn is not None:
        rows.append(("retains_grad", str(t.retains_grad)))
    for key, value in rows:
        info.add_row(key, Text(value))

    if t.is_leaf:
        note = "None" if t.requires_grad else "None (does not require grad)"
    else:
        note = "None" if t.retains_grad else "None (not a leaf: call retain_grad() to keep it)"
    side = _values_and_grad(t, note)
    title = Text(name if name else "tensor", style=STYLE_TITLE)
    return Panel(Group(info, Text(""), side), title=title, title_align="left",
                 box=box.ROUNDED, expand=False)


def show(t, name: str | None = None, *, color: bool | None = None, file=None,
         width: int | None = None) -> None:
    """Print `show_renderable(t, name)` to the current stdout (or `file`)."""
    emit(show_renderable(t, name), color=color, file=file, width=width)

