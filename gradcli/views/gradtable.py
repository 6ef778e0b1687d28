"""`grads(names)`: a table of every named tensor that requires grad.

Columns: name, shape, value and grad (one-line summaries in PyTorch's number
style). Names come from `names` (name -> object, usually a program's globals),
in its order; objects that are not tensors, or do not require grad, are skipped.
A non-leaf's grad is shown as None unless it called `retain_grad()`.
"""

from __future__ import annotations

from gradcli.engine.tensor import Tensor

from .common import emit, grad_of, shape_str, short, with_module_parameters


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
    table.add_column("name", style="bold yellow", no_wrap=True)
    table.add_column("shape", no_wrap=True)
    table.add_column("value")
    table.add_column("grad")
    for name, t in rows:
        grad = grad_of(t)
        if grad is None and not t.is_leaf and not t.retains_grad:
            grad_text = Text("None (non-leaf)", style="dim")
        else:
            grad_text = Text(short(grad), style="green" if grad is not None else "dim")
        table.add_row(name, shape_str(t.shape), Text(short(t)), grad_text)
    if not rows:
        table.caption = "no named tensor requires grad"
    return table


def grads(names, *, color: bool | None = None, file=None, width: int | None = None) -> None:
    """Print `grads_table(names)` to the current stdout (or `file`)."""
    emit(grads_table(names), color=color, file=file, width=width)
