"""torch.nn.attention.sdpa_kernel / SDPBackend and torch.backends.cuda's attention and
matmul switches: which kernel scaled_dot_product_attention records (its grad_fn), the
refusals when none may run, and the boilerplate flags, each printed the same by PyTorch,
by plain Python on gradcli.torch and under `gradcli run`."""

from __future__ import annotations

import warnings

import pytest

from tests.test_curriculum_audit import _exec_with, _run_cli

torch = pytest.importorskip("torch")


def _check(source: str) -> str:
    import textwrap

    import gradcli.torch as gtorch

    source = textwrap.dedent(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _exec_with(torch, source)
        assert _exec_with(gtorch, source) == expected
    assert _run_cli("import torch\nimport torch.nn.functional as F\n" + source) == expected
    return expected


def test_sdpa_kernel_picks_the_kernel_and_restores_the_switches():
    out = _check("""
        sdpa_kernel, SDPBackend = torch.nn.attention.sdpa_kernel, torch.nn.attention.SDPBackend
        torch.manual_seed(0)
        q = torch.randn(1, 2, 3, 4, requires_grad=True)
        k, v = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)
        o = F.scaled_dot_product_attention(q, k, v)
        print(o.grad_fn.name())
        print(SDPBackend.MATH, repr(SDPBackend.FLASH_ATTENTION), int(SDPBackend.MATH),
              SDPBackend.MATH == 0, SDPBackend.MATH.name)
        with sdpa_kernel(SDPBackend.MATH):
            o2 = F.scaled_dot_product_attention(q, k, v)
            print(o2.grad_fn.name(), o2.grad_fn.next_functions[0][0].name())
            print(torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled())
        print(torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled())
        print(torch.allclose(o, o2))
        o2.sum().backward()
        print(q.grad)
        with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
            print(F.scaled_dot_product_attention(q, k, v).grad_fn.name())
        torch.backends.cuda.enable_flash_sdp(False)
        print(F.scaled_dot_product_attention(q, k, v).grad_fn.name())
        torch.backends.cuda.enable_flash_sdp(True)
        mha = torch.nn.MultiheadAttention(4, 2, batch_first=True)
        x = torch.randn(1, 3, 4)
        with sdpa_kernel(SDPBackend.MATH):
            out, w = mha(x, x, x, need_weights=False)
        print(out.grad_fn.name(), out)
    """)
    assert "UnsafeViewBackward0 BmmBackward0" in out


def test_no_kernel_left_raises_pytorchs_errors():
    out = _check("""
        sdpa_kernel, SDPBackend = torch.nn.attention.sdpa_kernel, torch.nn.attention.SDPBackend
        q = torch.ones(1, 2, 3, 4)
        with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
            try:
                F.scaled_dot_product_attention(q, q, q)
            except RuntimeError as e:
                print(e)
        for kwargs in ({"dropout_p": 0.5}, {}):
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                try:
                    print(F.scaled_dot_product_attention(q if kwargs else q[0], q, q, **kwargs))
                except RuntimeError as e:
                    print(e)
        try:
            with sdpa_kernel("math"):
                pass
        except AssertionError as e:
            print(e)
        try:
            torch.backends.cuda.enable_math_sdp(1)
        except RuntimeError as e:
            print(e)
    """)
    assert "No viable backend" in out and "No available kernel." in out


def test_tf32_boilerplate_flags():
    _check("""
        print(torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = False
        print(torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision(),
              torch.backends.cudnn.allow_tf32)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = True
        print(torch.get_float32_matmul_precision(),
              torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction)
        try:
            torch.backends.cuda.matmul.foo = 1
        except AttributeError as e:
            print(e)
    """)
