"""Shared pieces of the views: the per-call Console, short tensor text, names.

Nothing here imports rich at module level; `make_console`, `emit` and
`render_text` import it when called.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import warnings

from gradcli.engine.formatting import get_printoptions, printoptions
from gradcli.engine.tensor import Tensor

DEFAULT_WIDTH = 80


# ------------------------------------------------------------------ console
def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _env_columns() -> int | None:
    try:
        value = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return value if value > 0 else None


def wants_color(color: bool | None = None, file=None) -> bool:
    """Whether to emit ANSI styles: `color` if given, else a terminal without NO_COLOR."""
    if color is not None:
        return bool(color)
    if os.environ.get("NO_COLOR"):
        return False
    return _isatty(sys.stdout if file is None else file)


def make_console(color: bool | None = None, file=None, width: int | None = None):
    """A rich Console for one call, writing to `file` or the current sys.stdout.

    color=None: styled on a terminal unless NO_COLOR is set; False: plain text,
    no escape codes at all; True: styled even when not a terminal.
    width=None: the terminal's width on a terminal, else COLUMNS or 80.
    """
    from rich.console import Console

    stream = sys.stdout if file is None else file
    tty = _isatty(stream)
    styled = wants_color(color, stream)
    if width is None and not tty:
        width = _env_columns() or DEFAULT_WIDTH
    if styled:
        return Console(file=stream, width=width, force_terminal=True,
                       color_system="auto" if tty else "standard",
                       highlight=False, emoji=False, markup=False, legacy_windows=False)
    return Console(file=stream, width=width, force_terminal=False, color_system=None,
                   no_color=True, highlight=False, emoji=False, markup=False,
                   legacy_windows=False)


def emit(renderable, color: bool | None = None, file=None, width: int | None = None) -> None:
    """Print a renderable to the current stdout (or `file`) with `make_console`.

    Plain output has the padding rich adds at line ends removed.
    """
    stream = sys.stdout if file is None else file
    console = make_console(color=color, file=stream, width=width)
    if console.is_terminal or console.color_system is not None:
        console.print(renderable)
        return
    stream.write(render_text(renderable, width=console.width))
    stream.flush()


def render_text(renderable, width: int = DEFAULT_WIDTH) -> str:
    """The plain text (no ANSI) a renderable prints as, at `width` columns.

    Trailing spaces (rich pads table cells) are removed from every line.
    """
    buffer = io.StringIO()
    make_console(color=False, file=buffer, width=width).print(renderable)
    return "\n".join(line.rstrip() for line in buffer.getvalue().split("\n"))


@contextlib.contextmanager
def held_output():
    """Hold back what is printed to sys.stdout meanwhile: a dry backward walk runs custom
    Functions' backward code, whose prints are not the view's output."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


# --------------------------------------------------------- tensor text
def shape_str(shape) -> str:
    """A shape as PyTorch's torch.Size lists it: [2, 3]; [] for a 0-d tensor."""
    if shape is None:
        return "?"
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def tensor_body(t: Tensor, **options) -> str:
    """The part of repr(t) between `tensor(` and the suffixes, as PyTorch prints it.

    `options` are set_printoptions overrides for this call only; precision and
    sci_mode stay as the program set them.
    """
    current = get_printoptions()
    merged = {k: current[k] for k in ("precision", "threshold", "edgeitems", "linewidth",
                                      "sci_mode")}
    merged.update(options)
    with printoptions(**merged):
        text = repr(t.detach())
    return _strip_repr(text)


def _strip_repr(text: str) -> str:
    body = text[len("tensor("):]
    if body.startswith("["):
        depth = 0
        for i, ch in enumerate(body):
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    body = body[: i + 1]
                    break
    else:
        body = re.split(r"[,)]", body, maxsplit=1)[0]
    # continuation lines were indented past "tensor("
    return re.sub(r"\n {7}", "\n", body)


def short(value, max_items: int = 6, max_chars: int = 60) -> str:
    """A one-line summary of a tensor's values (PyTorch's number style), or None."""
    if value is None:
        return "None"
    if not isinstance(value, Tensor):
        return str(value)
    body = tensor_body(value, threshold=max_items, edgeitems=2, linewidth=10**6)
    body = re.sub(r",?\s*\n\s*", ", ", body)
    body = re.sub(r"\s+", " ", body)
    if len(body) > max_chars:
        body = body[: max_chars - 1] + "…"
    return body


def grad_of(t: Tensor):
    """t.grad without the non-leaf warning (None when not retained)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.grad


# ------------------------------------------------------------------ names
#: the most elements of one list, tuple or dict the views look into for tensors and modules
MAX_CONTAINER_ITEMS = 64


def with_module_parameters(names) -> dict:
    """`names` plus, for each name bound to an nn.Module, its parameters and buffers under
    their qualified names behind the variable's (`model.fc1.weight`, `model.0.bias`): the
    expression that reaches them, as PyTorch's named_parameters names them (a parameter
    shared by two submodules keeps its first name). Lists, tuples and dicts of tensors or
    modules are looked into too (`ws[0]`, `layers[1].weight`, `heads['a'].bias`).

    The modules are walked through their registered parts, never by calling their
    methods: a program's Module subclass may override named_parameters."""
    names = dict(names or {})
    module_mod = sys.modules.get("gradcli.torch.nn.modules.module")
    module_cls = module_mod.Module if module_mod is not None else None
    extra: dict = {}
    seen: set = set()
    for name, obj in names.items():
        if isinstance(obj, (list, tuple)):
            for i, item in enumerate(obj[:MAX_CONTAINER_ITEMS]):
                _add_named(extra, seen, f"{name}[{i}]", item, module_cls)
        elif isinstance(obj, dict):
            for key, item in list(obj.items())[:MAX_CONTAINER_ITEMS]:
                if isinstance(key, (str, int)):
                    _add_named(extra, seen, f"{name}[{key!r}]", item, module_cls)
        elif module_cls is not None and isinstance(obj, module_cls):
            _add_module(extra, seen, str(name), obj, module_cls)
    for key, value in extra.items():
        names.setdefault(key, value)
    return names


def _add_named(extra: dict, seen: set, name: str, obj, module_cls) -> None:
    if isinstance(obj, Tensor):
        extra.setdefault(name, obj)
    elif module_cls is not None and isinstance(obj, module_cls):
        _add_module(extra, seen, name, obj, module_cls)


def _add_module(extra: dict, seen: set, prefix: str, module, module_cls) -> None:
    """Every parameter and buffer below `module`, depth first in registration order (as
    named_parameters lists them), with an explicit stack."""
    stack = [(prefix, module)]
    visited = set()
    while stack:
        path, mod = stack.pop()
        if id(mod) in visited:
            continue
        visited.add(id(mod))
        own = getattr(mod, "__dict__", {})
        for table in ("_parameters", "_buffers"):
            parts = own.get(table)
            if isinstance(parts, dict):
                for key, t in parts.items():
                    if isinstance(t, Tensor) and id(t) not in seen:
                        seen.add(id(t))
                        extra.setdefault(f"{path}.{key}", t)
        children = own.get("_modules")
        if isinstance(children, dict):
            stack.extend((f"{path}.{key}", child) for key, child in reversed(children.items())
                         if isinstance(child, module_cls))


def name_for(t, names) -> str | None:
    """The name `show` gives `t`: a variable bound to it, else the qualified name of a
    module parameter or buffer it is (`model.fc1.weight`), else None."""
    names = names or {}
    for key, value in names.items():
        if value is t:
            return str(key)
    if not isinstance(t, Tensor):
        return None
    for key, value in with_module_parameters(names).items():
        if value is t:
            return str(key)
    return None


class NameIndex:
    """The script's names for tensors: leaves by identity, non-leaves by grad_fn edge."""

    def __init__(self, names=None):
        self._by_id: dict[int, list[str]] = {}
        self._by_edge: dict[tuple[int, int], list[str]] = {}
        self._by_node: dict[int, list[str]] = {}
        self._keep = []  # the tensors, so their ids stay unique while we look
        for name, obj in with_module_parameters(names).items():
            if not isinstance(obj, Tensor):
                continue
            self._keep.append(obj)
            self._by_id.setdefault(id(obj), []).append(str(name))
            fn = obj.grad_fn
            if fn is not None:
                self._by_edge.setdefault((id(fn), obj.output_nr), []).append(str(name))
                self._by_node.setdefault(id(fn), []).append(str(name))

    def of_tensor(self, t) -> str | None:
        found = self._by_id.get(id(t)) if t is not None else None
        return ", ".join(found) if found else None

    def of_edge(self, node, output_nr: int = 0) -> str | None:
        """The name of the leaf an AccumulateGrad feeds, or of the tensor a node produced."""
        variable = getattr(node, "variable", None)
        if variable is not None:
            return self.of_tensor(variable)
        found = self._by_edge.get((id(node), output_nr))
        return ", ".join(found) if found else None

    def of_node(self, node) -> str | None:
        """Every name of what `node` produced (all outputs), or None."""
        variable = getattr(node, "variable", None)
        if variable is not None:
            return self.of_tensor(variable)
        found = self._by_node.get(id(node))
        return ", ".join(found) if found else None
