"""What `gradcli run --graph/--grads/--json` shows after a program has run.

JSON schema gradcli.run/1 (one record per file, in order):
  {"schema": "gradcli.run/1", "runs": [RUN, ...]}
  RUN = {"file": str, "exit_code": int, "stdout": str, "seconds": float,
         "tensors": {name: {"shape": [...], "dtype": str, "requires_grad": bool,
                            "is_leaf": bool, "grad_fn": str | null,
                            "value": nested lists, "grad": nested lists | null}},
         "error": null | {"kind": str, "message": str, "file": str,
                          "line": int | null, "column": int | null, "report": str}}
"tensors" holds the program's named tensors, then the parameters and buffers of its named
nn.Modules under their qualified names ("model.fc1.weight"). With --graph/--grads the
views' text ends the record's "stdout".
"seconds" is the wall time from reading the file to the program's end (parsing and
compiling included, gradcli's own start-up not): what a benchmark of a program wants.
Tensors larger than 10,000 elements are recorded without values ("value": null).
Non-finite numbers appear as the strings "nan", "inf", "-inf"; a complex tensor's
elements as [real, imag] pairs.
"""

from __future__ import annotations

MAX_RECORDED_ELEMENTS = 10_000


def named_tensors(session) -> dict:
    from gradcli.engine.tensor import Tensor

    if session is None:
        return {}
    return {k: v for k, v in session.globals.items() if isinstance(v, Tensor) and not k.startswith("_")}


def recorded_tensors(session) -> dict:
    """The named tensors, then each named module's parameters and buffers under their
    qualified names (`model.fc1.weight`), as grads() lists them."""
    from gradcli.engine.tensor import Tensor
    from gradcli.views.common import with_module_parameters

    if session is None:
        return {}
    modules = {k: v for k, v in session.globals.items() if not k.startswith("_")}
    return {k: v for k, v in with_module_parameters(modules).items()
            if isinstance(v, Tensor) and not str(k).startswith("_")}


def _values(t):
    from gradcli.cli.grad_problem import _jsonable

    if t is None:
        return None
    if t.numel() > MAX_RECORDED_ELEMENTS:
        return None
    return _jsonable(t.detach().tolist())


def record_run(path: str, session, error, stdout: str, seconds: float) -> dict:
    tensors = {}
    for name, t in recorded_tensors(session).items():
        tensors[name] = {
            "shape": list(t.shape), "dtype": t.dtype.name, "requires_grad": t.requires_grad,
            "is_leaf": t.is_leaf, "grad_fn": None if t.grad_fn is None else type(t.grad_fn).__name__,
            "value": _values(t), "grad": _values(t._grad),
        }
    err = None
    if error is not None:
        from gradcli.lang.session import render_error

        err = {"kind": getattr(error, "kind", type(error).__name__), "message": error.message,
               "file": error.filename, "line": error.line, "column": error.col,
               "report": render_error(error)}
    return {"file": path, "exit_code": None, "stdout": stdout, "seconds": seconds,
            "tensors": tensors, "error": err}


def graph_roots(tensors: dict, max_nodes: int = 200_000) -> list:
    """Named tensors with history that no other named tensor was computed from."""
    by_node = {}
    for name, t in tensors.items():
        if t.grad_fn is not None:
            by_node.setdefault(t.grad_fn, []).append(name)
    reached = set()
    for t in tensors.values():
        if t.grad_fn is None:
            continue
        stack = [fn for fn, _ in t.grad_fn.next_functions if fn is not None]
        seen = 0
        while stack and seen < max_nodes:
            node = stack.pop()
            if node in reached:
                continue
            reached.add(node)
            seen += 1
            stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return [names[0] for node, names in by_node.items() if node not in reached]


def render_after_run(session, graph: bool, grads: bool, file=None) -> None:
    """The --graph and --grads views of a finished program, to stdout or `file` (with
    --json: the record's stdout)."""
    if session is None:
        return
    tensors = named_tensors(session)
    if graph:
        from gradcli.views import graph as draw

        for name in graph_roots(tensors):
            draw(tensors[name], names=session.globals, file=file)
    if grads:
        from gradcli.views import grads as table

        table(session.globals, file=file)
