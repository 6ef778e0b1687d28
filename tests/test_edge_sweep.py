"""Numerical edge sweep against PyTorch 2.13 (issue 6 item 4; SPEC 1.4).

Deterministic, over every op of the table (tests/fuzz/difflib_torch.py CALLS
and the in-place scenarios): operands filled with nan/inf/-0/huge/tiny values,
ties, negative bases, zeros; shapes 0-d, empty and 2-D with a broadcast
partner; float32 and float64 (and int64/bool partners); plus integer overflow
and division/modulo signs on int64 tensors. Values, dtypes, grad_fn names,
gradients and error texts are compared with real torch. Mismatches must be
known engine bugs with a regression case (tests/regressions/XFAIL.txt, key
``diff_<op>_<scenario>``, scenario ``edge_<kind>`` here).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import difflib_torch as D  # noqa: E402

REG = Path(__file__).resolve().parent / "regressions"
KNOWN = {ln.partition(":")[0].strip()[5:] for ln in (REG / "XFAIL.txt").read_text().splitlines()
         if ln.startswith("diff_")}
KINDS = {"edge": D.VALUES["edge"], "ties": D.VALUES["ties"], "negative": D.VALUES["negative"],
         "zero": [0.0, -0.0]}
SHAPES = [((), ()), ((0,), ()), ((2, 3), (3,))]


def _fmt(v):
    if v != v:
        return "float('nan')"
    if v in (float("inf"), -float("inf")):
        return "float('inf')" if v > 0 else "-float('inf')"
    return repr(float(v))


def literal(shape, pool, offset):
    n = 1
    for d in shape:
        n *= d
    vals = [_fmt(pool[(offset + 3 * i) % len(pool)]) for i in range(n)]
    if shape == ():
        return vals[0]
    if 0 in shape:
        return "[]"
    rows, cols = (1, shape[0]) if len(shape) == 1 else shape
    body = ["[" + ", ".join(vals[r * cols:(r + 1) * cols]) + "]" for r in range(rows)]
    return body[0] if len(shape) == 1 else "[" + ", ".join(body) + "]"


def program(name, kind, shapes, dtype, offset):
    expr = D.INPLACE.get(name) or f"r = {D.CALLS[name]}"
    pool = KINDS[kind]
    lines = ["import torch",
             f"a = torch.tensor({literal(shapes[0], pool, offset)}, dtype=torch.{dtype}, "
             "requires_grad=True)",
             f"b = torch.tensor({literal(shapes[1], pool, offset + 1)}, dtype=torch.{dtype}, "
             "requires_grad=True)",
             "try:"]
    lines += ["    " + ln for ln in expr.split("\n")]
    lines += ["    print(r)", "    if r.requires_grad:", "        r.backward(torch.ones_like(r))",
              "        print(a.grad, b.grad)"]
    for exc in ("RuntimeError", "IndexError", "ValueError", "TypeError", "ZeroDivisionError"):
        lines += [f"except {exc} as e:", f"    print('{exc}:', e)"]
    return "\n".join(lines) + "\n"


def cases():
    out = []
    for name in sorted(set(D.CALLS) | set(D.INPLACE)):
        for k, kind in enumerate(KINDS):
            for s, shapes in enumerate(SHAPES):
                dtype = ("float32", "float64")[(k + s) % 2]
                out.append((name, kind, program(name, kind, shapes, dtype, k + s)))
    return out


CASES = cases()
INT_OPS = ["a * 4", "a + a", "a - 2 ** 62 * 3", "a // 3", "a % 3", "a // -3", "a % -3",
           "-a", "a.abs()", "a.sum()", "a.prod()", "a.cumsum(0)", "a ** 2", "a * True",
           "a / 0", "a // 1", "torch.remainder(a, -7)", "torch.fmod(a, -7)", "a.max()",
           "a.argmax()", "a.float()", "a.double() * 1e300", "(a > 0).sum()", "a.mean()",
           "a.to(torch.float32)", "a & 1", "a | 1", "a ^ 1", "a << 3", "a >> 1"]


@pytest.mark.parametrize("chunk", range(8))
def test_edge_sweep_matches_pytorch(chunk):
    bad = []
    chunk_cases = CASES[chunk::8]
    # PyTorch runs in a child process: an edge input on which one of its kernels crashes
    # the interpreter is reported as that program's output, not the end of the test run
    all_theirs = D.run_torch_isolated([src for _, _, src in chunk_cases])
    for (name, kind, src), theirs in zip(chunk_cases, all_theirs, strict=True):
        ours = D.run_gradcli(src)
        if D.compare(ours, theirs) == "differ" and f"{name}_edge_{kind}" not in KNOWN:
            bad.append(f"{name} [{kind}]\n{src}--- gradcli\n{ours}--- torch\n{theirs}")
    assert not bad, f"{len(bad)} mismatches; first:\n" + "\n".join(bad[:2])


@pytest.mark.parametrize("expr", INT_OPS)
def test_int64_overflow_and_signs(expr):
    src = ("import torch\na = torch.tensor([2 ** 62, -(2 ** 63), 7, -7, 0, 1], dtype=torch.int64)\n"
           f"try:\n    r = {expr}\n    print(r, r.dtype)\n"
           "except RuntimeError as e:\n    print('RuntimeError:', e)\n"
           "except ZeroDivisionError as e:\n    print('ZeroDivisionError:', e)\n"
           "except TypeError as e:\n    print('TypeError:', e)\n")
    ours, theirs = D.run_gradcli(src), D.run_torch(src)
    key = "int_" + "".join(c if c.isalnum() else "_" for c in expr)
    if D.compare(ours, theirs, rtol=0) == "differ" and key not in KNOWN:
        pytest.fail(f"{expr}\n--- gradcli\n{ours}--- torch\n{theirs}")
