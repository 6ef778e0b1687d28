"""`grads(names)`: a table of every named tensor that requires grad.

Columns: name, shape, value and grad (one-line summaries in PyTorch's number
style). Names come from `names` (name -> object, usually a program's globals),
in its order; objects that are not tensors, or do not require grad, are skipped.
A non-leaf's grad is shown as None unless it called `retain_grad()`.
"""

from __future__ import annotations

from gradcli.engine.tensor import Tensor

from .common import emit, grad_of, shape_str, short, with_module_parameters

#: the narrowest a value or grad column gets: room for a few numbers a line
MIN_NUMBERS = 18
#: the widest line of a name in the table; longer names break after a dot
NAME_WIDTH = 24


def wrap_dotted(name: str, width: int = NAME_WIDTH) -> str:
    """`name` broken into lines of at most `width` characters after its dots (a part
    longer than that keeps a line of its own, which the table folds)."""
    if len(name) <= width:
        return name
    parts = name.split(".")
    pieces = [p + "." for p in parts[:-1]] + [parts[-1]]
    lines, line = [], ""
    for piece in pieces:
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = ""
        line += piece
    lines.append(line)
    return "\n".join(lines)


def named_grad_tensors(names) -> list[tuple[str, Tensor]]:
    """(name, tensor) for each named tensor that requires grad, in `names` order."""
    return [(str(k), v) for k, v in with_module_parameters(names).items()
            if isinstance(v, Tensor) and v.requires_grad]


def grads_table(names, *, title: str | None = "Gradients"):
    """The rich Table `grads` prints."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    rows = named_grad_tensors(names)
    table = Table(title=title, box=box.SIMPLE_HEAD, title_style="bold", header_style="bold")
    # A long qualified name (`encoder.layers.0.self_attn.in_proj_weight`) is broken after
    # its dots rather than squeeze the numbers into a column of single values.
    wrapped = [wrap_dotted(name) for name, _ in rows]
    widest = max((len(line) for text in wrapped for line in text.split("\n")), default=4)
    table.add_column("name", style="bold yellow", overflow="fold",
                     min_width=min(widest, NAME_WIDTH))
    table.add_column("shape", no_wrap=True)
    cells = []
    for _, t in rows:
        grad = grad_of(t)
        if grad is None and not t.is_leaf and not t.retains_grad:
            grad_text = Text("None (non-leaf)", style="dim")
        else:
            grad_text = Text(short(grad), style="green" if grad is not None else "dim")
        cells.append((Text(short(t)), grad_text))
    # (a column is kept at least as wide as a few numbers, or as its widest cell if less)
    for k, header in enumerate(("value", "grad")):
        widest_cell = max((len(pair[k].plain) for pair in cells), default=len(header))
        table.add_column(header, min_width=min(MIN_NUMBERS, max(widest_cell, len(header))))
    for (_, t), label, (value_text, grad_text) in zip(rows, wrapped, cells, strict=True):
        table.add_row(label, shape_str(t.shape), value_text, grad_text)
    if not rows:
        table.caption = "no named tensor requires grad"
    return table


def grads(names, *, color: bool | None = None, file=None, width: int | None = None) -> None:
    """Print `grads_table(names)` to the current stdout (or `file`)."""
    emit(grads_table(names), color=color, file=file, width=width)
