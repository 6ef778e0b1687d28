"""out= on the torch.* functions, compared with PyTorch: the result is written into the
given tensor (same object returned, version bumped, resized with PyTorch's warning,
dtype cast rules), and autograd refuses it when it would have to record the call."""

from __future__ import annotations

import pytest
from scenario_log import attempt, same, same_recording_warnings

torch = pytest.importorskip("torch")

CALLS = [
    ("mul", lambda t, a, b: (a, b)), ("add", lambda t, a, b: (a, b)),
    ("sub", lambda t, a, b: (a, 2.0)), ("div", lambda t, a, b: (a, b + 3)),
    ("matmul", lambda t, a, b: (a, b.t())), ("mm", lambda t, a, b: (a, b.t())),
    ("exp", lambda t, a, b: (a,)), ("tanh", lambda t, a, b: (a,)),
    ("maximum", lambda t, a, b: (a, b)), ("pow", lambda t, a, b: (a, 2)),
    ("sum", lambda t, a, b: (a, 0)), ("cat", lambda t, a, b: ([a, b],)),
]


@pytest.mark.parametrize("name,args", CALLS, ids=[c[0] for c in CALLS])
def test_out_receives_the_result(name, args):
    def scenario(t, log):
        a = t.tensor([[1.0, -2.0], [0.5, 3.0]])
        b = t.tensor([[2.0, 1.0], [-1.0, 0.25]])
        expected = getattr(t, name)(*args(t, a, b))
        out = t.empty(0)
        got = getattr(t, name)(*args(t, a, b), out=out)
        log.append((got is out, out._version, tuple(out.shape), out.tolist() == expected.tolist()))

    same(scenario)


def test_autograd_refuses_out_when_it_would_record():
    def scenario(t, log):
        a = t.randn(2, 2, requires_grad=True)
        b = t.randn(2, 2, requires_grad=True)
        x = t.zeros_like(a)
        attempt(log, lambda: t.mul(a, b, out=x))
        attempt(log, lambda: t.add(a, 1, out=x))
        attempt(log, lambda: t.linalg.inv(a, out=x))
        attempt(log, lambda: t.cat([a, b], out=t.empty(0)))
        with t.no_grad():
            r = t.mul(a, b, out=x)
            log.append((r is x, x.requires_grad, x._version, t.allclose(x, a * b)))
        attempt(log, lambda: t.mul(t.ones(2), t.ones(2), out=t.zeros(2, requires_grad=True)))

    log = same(scenario)
    assert "mul(): functions with out=... arguments don't support" in log[0]


def test_resizing_and_casting_the_out_tensor():
    def scenario(t, log):
        out = t.zeros(3)
        attempt(log, lambda: t.mul(t.ones(2), 2, out=out).tolist())
        log.append(tuple(out.shape))
        attempt(log, lambda: t.mul(t.ones(2), 2.5, out=t.zeros(2, dtype=t.long)))
        attempt(log, lambda: t.mul(t.ones(2, dtype=t.long), 2, out=t.zeros(2)).tolist())
        attempt(log, lambda: t.mul(t.ones(2), 2, out=t.zeros(2, dtype=t.float64)).dtype)

    same_recording_warnings(scenario)


def test_out_into_a_view_writes_the_base():
    def scenario(t, log):
        base = t.zeros(2, 3)
        t.add(t.ones(3), 1, out=base[1])
        log.append(base.tolist())
        log.append(base._version)

    same(scenario)


def test_a_program_can_use_out(tmp_path):
    import subprocess
    import sys

    prog = tmp_path / "out.grad"
    prog.write_text("import torch\nx = torch.empty(0)\ntorch.mul(torch.ones(2), 3, out=x)\n"
                    "print(x.tolist())\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "[3.0, 3.0]", proc.stderr
