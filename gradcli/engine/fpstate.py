"""Op kernels run with numpy's floating-point errors ignored, without touching the caller's
numpy error state.

PyTorch turns 1/0, log(0), overflow and inf - inf into inf and nan silently; numpy, in a
process that left its defaults, warns (or raises, after `np.seterr(all="raise")`). The
engine used to call `np.seterr(all="ignore")` at import, which changed that for everyone
in the process. Now each op's forward runs inside a `contextvars.Context` of this thread
in which numpy's error state (a context variable since numpy 2.0) is "ignore": one
`Context.run` per op (~0.1 us), where `with np.errstate(...)` costs ~1 us, as much as a
small op's whole forward (bench W2). The caller's own state is never changed.

The Context is made once per thread, as a copy of that thread's context at its first op:
the forwards read no context variable but numpy's error state. An op run inside another
op's forward runs directly (already inside). With numpy older than 2.0, whose error state
is per thread, not per context, `np.errstate` around each forward does the same, slower.

The command-line tool sets `np.seterr(all="ignore")` once for its own process instead
(gradcli/cli/app.py): nothing else runs there.
"""

from __future__ import annotations

import contextvars
import threading

import numpy as np

_CONTEXT_LOCAL = int(np.__version__.split(".", 1)[0]) >= 2
#: True inside a quiet Context (set there once, when it is made): an op run inside another
#: op's forward runs directly. A ContextVar read is one cached C call, where a
#: threading.local attribute cost ~1,000 machine instructions and a try/finally more.
_INSIDE = contextvars.ContextVar("gradcli_quiet_forward", default=False)
#: thread id -> that thread's quiet Context. A Context may be entered by one thread at a
#: time; a thread that reuses a finished one's id reuses its Context (never entered then).
_CONTEXTS: dict = {}
_thread_id = threading.get_ident


def _context_of(ident: int) -> contextvars.Context:
    """The quiet Context of thread `ident`, made on its first op."""
    context = contextvars.copy_context()
    context.run(np.seterr, all="ignore")
    context.run(_INSIDE.set, True)
    _CONTEXTS[ident] = context
    return context


def quiet(forward):
    """`forward` run with numpy's floating-point errors ignored (see the top)."""
    if not _CONTEXT_LOCAL:
        def run_with_errstate(*args):
            with np.errstate(all="ignore"):
                return forward(*args)

        run_with_errstate.quiet = True
        return run_with_errstate

    inside, contexts, thread_id = _INSIDE.get, _CONTEXTS.get, _thread_id

    def run(*args):
        if inside():
            return forward(*args)
        context = contexts(thread_id())
        if context is None:
            context = _context_of(thread_id())
        return context.run(forward, *args)

    run.__name__ = getattr(forward, "__name__", "forward")
    run.__doc__ = forward.__doc__
    run.__wrapped__ = forward
    run.quiet = True
    return run


def run_quietly(function, *args, **kwargs):
    """function(*args) with numpy's floating-point errors ignored, as an op's forward is:
    for a whole backward pass (run_engine), whose formulas and gradient sums (inf + -inf)
    are numpy outside any op's forward, or an optimizer's step. One Context.run a pass,
    nothing per node."""
    if not _CONTEXT_LOCAL:
        with np.errstate(all="ignore"):
            return function(*args, **kwargs)
    if _INSIDE.get():
        return function(*args, **kwargs)
    ident = _thread_id()
    context = _CONTEXTS.get(ident)
    if context is None:
        context = _context_of(ident)
    return context.run(function, *args, **kwargs)


def quiet_forwards(ops) -> None:
    """Every op's forward run quietly (ops: the op table's Op objects); idempotent.

    Not in the `gradcli` command's own process: it set numpy's errors to "ignore" once
    for the whole process (gradcli/engine/__init__.py), and a wrapper per op would cost
    two calls of every small op for nothing (~8% of the instructions of bench W3)."""
    import gradcli

    if gradcli.OWNS_PROCESS:
        return
    for op in ops:
        if not getattr(op.forward, "quiet", False):
            op.forward = quiet(op.forward)
