"""Differential fuzzing against PyTorch 2.13 (issue 6 items 2 and 4).

:func:`programs` generates well-typed programs over the op table
(``gradcli.engine.ops.registry.OPS``, each entry's ``torch_call``): operand
shapes with broadcasting, 0-d and empty tensors, float32/float64/int64/bool,
nan/inf/zero/ties/negative values, and an autograd scenario (plain backward,
no_grad, retain_graph, a second backward, create_graph, hooks, in-place ops on
leaves and on saved tensors). Each program is valid Python and valid gradcli:
:func:`run_torch` runs it with real torch, :func:`run_gradcli` through the
language; their stdout (values, dtypes, grad_fn names, gradients, the text of
errors) must be equal after addresses are normalised.
"""
from __future__ import annotations

import contextlib
import io
import math
import re
import warnings
from pathlib import Path

from hypothesis import strategies as st

from gradcli.engine.ops.registry import OPS
from gradcli.lang import Limits
from gradcli.lang.session import run_source

ADDR = re.compile(r"0x[0-9a-fA-F]+")
NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?|nan|inf")


def _usable(call: str) -> bool:
    return bool(call) and ":=" not in call and "__" not in call


#: the ops the random programs and the edge sweep draw from: the table's core, listed in
#: SWEPT_OPS.txt. The ops added with the op-breadth work (torch.linalg, special, the
#: nn.functional tail, indexing/sorting/layout) are checked against PyTorch by their own
#: tests and by tests/test_opinfo.py; they join this list as each is swept clean (the edge
#: sweep runs PyTorch in a child process, run_torch_isolated, so an input on which one of
#: PyTorch's kernels crashes cannot take the run down).
SWEPT = frozenset((Path(__file__).with_name("SWEPT_OPS.txt")).read_text().split())

#: op name -> torch_call usable as a gradcli expression (no walrus, no dunder)
CALLS = {name: op.torch_call for name, op in OPS.items()
         if name in SWEPT and _usable(op.torch_call)}
BINARY = {n for n, c in CALLS.items() if "b" in compile(c, "<c>", "eval").co_names}

#: calls for table ops whose own torch_call is empty (tests/test_edge_sweep.py sweeps them)
_WRITTEN_CALLS = {
    "unique": "torch.unique(a, return_inverse=True, return_counts=True)[0] * 1",
    "unique_dim": "torch.unique(a.reshape(-1, 1), dim=0) * 1",
    "cond_nan_to_num": "torch.linalg.cond(a.reshape(-1, 1) * a.reshape(1, -1).cos() "
                       "+ torch.eye(a.numel(), dtype=a.dtype) * 3)",
    "ctc_loss": "torch.nn.functional.ctc_loss(torch.cat([a.reshape(-1, 1, 1), "
                "a.reshape(-1, 1, 1).cos()], 2).log_softmax(2), torch.tensor([[1]]), "
                "(a.numel(),), (1,))",
}

#: the rest of the table (the op-breadth ops: linalg, special, the nn.functional tail,
#: indexing/sorting/layout) for the edge sweep only; the random programs keep to CALLS.
#: Not here: calls through a private attribute (torch._native_batch_norm_legit,
#: torch._softmax_backward_data), which a gradcli program cannot spell, and the RNN
#: layers' internal nodes (rnn_output_transpose, lstm_layer_output: reached through
#: nn.RNN/nn.LSTM modules, swept by tests/test_nn_layers.py).
BREADTH_CALLS = {name: op.torch_call for name, op in OPS.items()
                 if name not in SWEPT and _usable(op.torch_call) and "._" not in op.torch_call}
BREADTH_CALLS.update({k: v for k, v in _WRITTEN_CALLS.items() if k in OPS})

#: the in-place scenarios the table spells with := and __setitem__, as statements
INPLACE = {
    "as_strided": "c = a * 1\nv = c[..., :1]\nc.mul_(2)\nr = v",
    "copy_slices": "c = a * 1\nc[..., 0] = b.sum() * 2\nr = c",
    "index_put": "c = a * 1\nc[torch.tensor([0])] = b.sum() * 2\nr = c",
    "add_inplace": "c = a * 1\nc.add_(b)\nr = c",
    "mul_inplace": "c = a * 1\nc.mul_(b)\nr = c",
    "clamp_inplace": "c = a * 1\nc.clamp_(-0.5, 0.5)\nr = c",
    "div_inplace": "c = a * 1\nc /= b\nr = c",
}

SHAPES = [(), (3,), (2, 3), (1, 3), (2, 1), (0,), (2, 0), (4,), (1,), (3, 1)]
BROADCAST = {(): [(), (3,), (2, 3)], (3,): [(3,), (), (1,), (2, 3), (4,)],
             (2, 3): [(2, 3), (3,), (1, 3), (2, 1), (), (3, 2)], (1, 3): [(2, 1), (3,), (1, 3)],
             (2, 1): [(1, 3), (2, 1), (2, 3)], (0,): [(0,), (), (1,), (3,)],
             (2, 0): [(2, 0), (0,), (2, 1)], (4,): [(4,), (3,)], (1,): [(1,), (3,), ()],
             (3, 1): [(1, 3), (3, 1), (3,)]}
VALUES = {
    "nice": [0.5, -1.0, 2.0, 1.5, -0.25, 3.0, 0.75, -2.5],
    "random": None,
    "edge": [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), -float("inf"), 1e-30, 1e30,
             -2.0, 2.0, 2.0, 0.0, 65504.0, 1e-45, 3.4e38],
    "ties": [1.0, 1.0, -1.0, 2.0, 2.0, 2.0, 0.0, 0.0],
    "negative": [-0.5, -2.0, -3.0, -1.0, -0.0, -1.5],
    "ints": [0, 1, -1, 2, 3, -7, 9, 2**31, -(2**31), 2**62, -(2**63), 5],
    "bools": [True, False, True, True, False],
}
SCENARIOS = ["plain", "no_grad", "retain", "twice", "create_graph", "hook", "modify_saved",
             "leaf_inplace", "grad_api"]
DTYPES = ["float32", "float64"]


def _literal(shape, pool, draw, kind):
    n = math.prod(shape)
    if pool is None:
        vals = [round(draw(st.floats(-3, 3, allow_nan=False, width=32)), 4) for _ in range(n)]
    else:
        vals = [pool[draw(st.integers(0, len(pool) - 1))] for _ in range(n)]

    def fmt(v):
        if isinstance(v, bool):
            return "True" if v else "False"
        if isinstance(v, int):
            return str(v)
        if v != v:
            return "float('nan')"
        if v in (float("inf"), -float("inf")):
            return "float('inf')" if v > 0 else "-float('inf')"
        return repr(float(v))

    flat = [fmt(v) for v in vals]

    def nest(dims, items):
        if not dims:
            return items.pop(0)
        if dims[0] == 0:
            return "[]" if len(dims) == 1 else "[]"
        return "[" + ", ".join(nest(dims[1:], items) for _ in range(dims[0])) + "]"

    if shape == ():
        return flat[0]
    if 0 in shape:
        return "[" + ", ".join("[]" for _ in range(shape[0])) + "]" if len(shape) == 2 \
            and shape[0] else "[]"
    return nest(list(shape), flat)


@st.composite
def programs(draw, ops=None, edge_bias=False):
    """(op name, scenario, program text)."""
    names = sorted(ops or (set(CALLS) | set(INPLACE)))
    name = draw(st.sampled_from(names))
    scenario = draw(st.sampled_from(SCENARIOS))
    dtype = draw(st.sampled_from(DTYPES))
    kinds = ["nice", "random", "edge", "ties", "negative"] if not edge_bias else \
        ["edge", "edge", "ties", "negative", "nice"]
    a_kind = draw(st.sampled_from(kinds))
    b_kind = draw(st.sampled_from(kinds + ["ints", "bools"]))
    a_shape = draw(st.sampled_from(SHAPES))
    b_shape = draw(st.sampled_from(BROADCAST[a_shape]))
    a_lit = _literal(a_shape, VALUES[a_kind], draw, a_kind)
    b_lit = _literal(b_shape, VALUES[b_kind], draw, b_kind)
    b_dtype = {"ints": "torch.int64", "bools": "torch.bool"}.get(b_kind, f"torch.{dtype}")
    b_grad = b_kind not in ("ints", "bools")
    expr = INPLACE.get(name) or f"r = {CALLS[name]}"
    lines = ["import torch",
             f"a = torch.tensor({a_lit}, dtype=torch.{dtype}, requires_grad=True)",
             f"b = torch.tensor({b_lit}, dtype={b_dtype}, requires_grad={b_grad})"]
    body = []
    if scenario == "hook":
        body += ["a.register_hook(lambda g: g * 2)"]
    if scenario == "no_grad":
        body += ["with torch.no_grad():"] + ["    " + ln for ln in expr.split("\n")]
        body += ["print(r)", "print(r.requires_grad, r.grad_fn)"]
    elif scenario == "leaf_inplace":
        body += ["a.add_(1)", "print(a)"]
    else:
        body += expr.split("\n")
        body += ["print(r)", "print(r.dtype, tuple(r.shape), r.requires_grad)"]
        if scenario == "modify_saved":
            body += ["with torch.no_grad():", "    a.mul_(2)"]
        body += ["if r.requires_grad:"]
        if scenario == "create_graph":
            body += ["    ga, = torch.autograd.grad(r.sum(), a, create_graph=True)",
                     "    print(ga)",
                     "    if ga.requires_grad:",
                     "        ga.sum().backward()",
                     "        print(a.grad)"]
        elif scenario == "grad_api":
            body += ["    gs = torch.autograd.grad(r.sum(), [a, b] if b.requires_grad else [a], "
                     "allow_unused=True)",
                     "    print(gs)"]
        else:
            body += ["    seed = torch.ones_like(r) * 0.5",
                     f"    r.backward(seed{', retain_graph=True' if scenario == 'retain' else ''})",
                     "    print(a.grad, b.grad)"]
            if scenario in ("retain", "twice"):
                body += ["    r.backward(seed)", "    print(a.grad, b.grad)"]
    lines += ["try:"] + ["    " + ln for ln in body]
    for exc in ("RuntimeError", "IndexError", "ValueError", "TypeError", "ZeroDivisionError"):
        lines += [f"except {exc} as e:", f"    print('{exc}:', e)"]
    return name, scenario, "\n".join(lines) + "\n"


def run_torch(source: str) -> str:
    import torch
    out = io.StringIO()
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(source, "prog.grad", "exec"), {"__name__": "__main__"})  # noqa: S102
        except Exception as e:  # noqa: BLE001 - reported as output, compared with gradcli's
            print(f"UNCAUGHT {type(e).__name__}: {e}")
    return out.getvalue()


def run_gradcli(source: str, max_steps: int = 100_000) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = run_source(source, "prog.grad", stdout=out, stderr=err,
                      limits=Limits(max_steps=max_steps, max_elements=10**6))
    text = out.getvalue()
    if code:
        head = err.getvalue().splitlines()[0] if err.getvalue() else f"exit {code}"
        kind_msg = head.split(": ", 1)[1] if ": " in head else head
        text += f"UNCAUGHT {kind_msg}\n"
    return text


def normalise(text: str) -> str:
    return ADDR.sub("0x?", text).rstrip("\n")


def compare(ours: str, theirs: str, rtol: float = 2e-4, signed_zeros: bool = False) -> str:
    """'same', 'close' (float32 last-digit noise only) or 'differ'.

    Spacing is not compared when the numbers differ: a value within tolerance can change
    how a tensor prints (1.4013e-45 for PyTorch's 0 switches it to scientific notation).
    With `signed_zeros`, -0. against 0. is a difference (the edge sweep's zeros)."""
    a, b = normalise(ours), normalise(theirs)
    if a == b:
        return "same"
    if "".join(NUM.sub("#", a).split()) != "".join(NUM.sub("#", b).split()):
        return "differ"
    for x, y in zip(NUM.findall(a), NUM.findall(b)):
        fx, fy = float(x), float(y)
        if fx == fy and signed_zeros and fx == 0 and x.startswith("-") != y.startswith("-"):
            return "differ"
        if fx == fy or (fx != fx and fy != fy):
            continue
        if not math.isclose(fx, fy, rel_tol=rtol, abs_tol=1.5e-4):
            return "differ"
    return "close"


#: the worker run_torch_isolated starts: reads programs (a JSON string per line) and
#: answers each with run_torch's output (a JSON string per line)
_WORKER = r"""
import json, sys
sys.path.insert(0, {here!r})
import difflib_torch as D
for line in sys.stdin:
    print("RESULT " + json.dumps(D.run_torch(json.loads(line))), flush=True)
"""


def run_torch_isolated(sources: list) -> list:
    """run_torch for each program, in a child process: an input on which PyTorch itself
    dies (a segfault in a kernel) reports `PYTORCH CRASHED (exit N)` for that program
    instead of taking the test run down; the child is restarted for the rest."""
    import json
    import subprocess
    import sys

    code = _WORKER.format(here=str(Path(__file__).resolve().parent))
    results: list = []
    pending = list(sources)
    while pending:
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        try:
            while pending:
                proc.stdin.write(json.dumps(pending[0]) + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
                while line and not line.startswith("RESULT "):  # (stray output of PyTorch's)
                    line = proc.stdout.readline()
                if not line:
                    code_ = proc.wait()
                    results.append(f"PYTORCH CRASHED (exit {code_})\n")
                    pending.pop(0)
                    break
                results.append(json.loads(line[len("RESULT "):]))
                pending.pop(0)
        finally:
            if proc.poll() is None:
                proc.stdin.close()
                proc.wait()
    return results
