"""Mixed-precision training lines besides autocast: torch.amp.GradScaler (and its
torch.GradScaler, torch.cuda.amp and torch.cpu.amp spellings), torch.amp.custom_fwd /
custom_bwd and is_autocast_available. Each program prints the same under PyTorch, in plain
Python on gradcli.torch and under `gradcli run`."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest

from tests.test_curriculum_audit import _exec_with, _run_cli

torch = pytest.importorskip("torch")


def _check(source: str, cli: bool = True) -> str:
    import gradcli.torch as gtorch

    source = textwrap.dedent(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _exec_with(torch, source)
        assert _exec_with(gtorch, source) == expected
    if cli:
        assert _run_cli("import torch\n" + source) == expected
    return expected


def test_a_gpu_loop_on_the_cpu_runs_with_the_scaler_off():
    out = _check("""
        torch.manual_seed(0)
        m = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        scaler = torch.cuda.amp.GradScaler()
        print(scaler.is_enabled(), scaler.get_scale(), scaler.state_dict())
        x = torch.randn(8, 4)
        for _ in range(3):
            opt.zero_grad()
            with torch.cuda.amp.autocast():
                loss = m(x).pow(2).mean()
            scaled = scaler.scale(loss)
            print(scaled is loss)
            scaled.backward()
            print(scaler.step(opt))
            scaler.update()
        print(m.weight, m.bias)
        print(torch.GradScaler().is_enabled(), torch.amp.GradScaler("cuda").get_scale())
    """)
    assert "False 1.0 {}" in out


def test_cpu_scaler_scales_unscales_skips_and_grows():
    out = _check("""
        torch.manual_seed(0)
        m = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        x = torch.randn(8, 4)
        s = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=2)
        print(s.get_scale(), s.state_dict())
        for i in range(5):
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = m(x).float().pow(2).mean()
            scaled = s.scale(loss)
            print(scaled)
            scaled.backward()
            if i == 2:
                m.weight.grad[0, 0] = float("inf")
            s.unscale_(opt)
            print(m.weight.grad)
            print(s.step(opt), s.get_scale())
            s.update()
            print(s.get_scale(), s.state_dict())
        print(m.weight, m.bias)
        print(s.scale([loss, (loss, loss)]))
        s.update(64.0)
        print(s.get_scale())
        s.update(torch.tensor(32.0))
        print(s.get_scale())
        t = torch.amp.GradScaler("cpu")
        t.load_state_dict(s.state_dict())
        print(t.state_dict(), t.get_growth_factor(), t.get_backoff_factor(), t.get_growth_interval())
    """)
    assert "inf" in out


def test_scaler_misuse_raises_pytorchs_errors():
    _check("""
        m = torch.nn.Linear(2, 1)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        s = torch.amp.GradScaler("cpu")
        for call in (lambda: s.update(), lambda: s.step(opt), lambda: s.unscale_(opt)):
            try:
                call()
            except AssertionError as e:
                print("AssertionError", e)
        loss = s.scale(m(torch.ones(3, 2)).sum())
        loss.backward()
        s.unscale_(opt)
        try:
            s.unscale_(opt)
        except RuntimeError as e:
            print("RuntimeError", e)
        s.step(opt)
        for call in (lambda: s.step(opt), lambda: s.unscale_(opt)):
            try:
                call()
            except RuntimeError as e:
                print("RuntimeError", e)
        try:
            s.step(opt, closure=lambda: 0)
        except RuntimeError as e:
            print("RuntimeError", e)
        s.update()
        empty = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        s.scale(torch.ones(()))
        try:
            s.step(empty)
        except AssertionError as e:
            print("AssertionError", e)
        for kw in ({"growth_factor": 1.0}, {"backoff_factor": 1.0}):
            try:
                torch.amp.GradScaler("cpu", **kw)
            except AssertionError as e:
                print("AssertionError", e)
        try:
            torch.amp.GradScaler("cpu").load_state_dict({})
        except RuntimeError as e:
            print("RuntimeError", e)
    """)


def test_custom_fwd_and_custom_bwd_under_autocast():
    _check("""
        class Product(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                print("forward", a.dtype, b.dtype, torch.is_autocast_enabled("cpu"))
                return a.mm(b)

            @staticmethod
            @torch.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                print("backward", torch.is_autocast_enabled("cpu"))
                return g.mm(b.t()), a.t().mm(g)

        class Traced(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type="cpu")
            def forward(ctx, a):
                print("forward", a.dtype, torch.is_autocast_enabled("cpu"))
                return a * 2

            @staticmethod
            @torch.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                print("backward", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
                return g * 2

        torch.manual_seed(0)
        a = torch.randn(2, 3, requires_grad=True)
        b = torch.randn(3, 2, requires_grad=True)
        with torch.autocast("cpu"):
            r = Product.apply(a.bfloat16(), b)
            q = Traced.apply(a)
        print(r.dtype, q.dtype)
        (r.sum() + q.sum()).backward()
        print(a.grad, b.grad)
        r = Product.apply(a, b)
        print(r.dtype)
        print(torch.amp.is_autocast_available("cuda"), torch.amp.is_autocast_available("cpu"))
        try:
            torch.amp.is_autocast_available("foo")
        except RuntimeError as e:
            print(e)
        try:
            torch.amp.custom_fwd(device_type=1)
        except ValueError as e:
            print(e)
    """)


def test_the_deprecated_spellings_warn_as_pytorch(tmp_path):
    prog = tmp_path / "amp.grad"
    prog.write_text("import torch\ns = torch.cuda.amp.GradScaler()\n"
                    "with torch.cuda.amp.autocast():\n    pass\n"
                    "c = torch.cpu.amp.GradScaler()\nprint(c.is_enabled())\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(prog)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "True\n"
    expected = [
        "2: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
        "`torch.amp.GradScaler('cuda', args...)` instead.",
        "2: UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
        "Disabling.",
        "3: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use "
        "`torch.amp.autocast('cuda', args...)` instead.",
        "3: UserWarning: CUDA is not available or torch_xla is imported. Disabling autocast.",
        "5: FutureWarning: `torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
        "`torch.amp.GradScaler('cpu', args...)` instead.",
    ]
    lines = proc.stderr.splitlines()[::2]  # (each followed by the program's line)
    assert len(lines) == len(expected), proc.stderr
    for line, tail in zip(lines, expected):
        assert line.endswith(tail), (line, tail)
    assert proc.stderr.splitlines()[1::2] == [
        "  s = torch.cuda.amp.GradScaler()", "  s = torch.cuda.amp.GradScaler()",
        "  with torch.cuda.amp.autocast():", "  with torch.cuda.amp.autocast():",
        "  c = torch.cpu.amp.GradScaler()"]
