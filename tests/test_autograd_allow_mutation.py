"""torch.autograd.graph.allow_mutation_on_saved_tensors and in-place ops under
saved_tensors_hooks, each scenario run with PyTorch 2.13 and with gradcli: what it prints
(gradients, how many saved tensors the context copied, errors) must be the same text."""

from __future__ import annotations

import io
import re
import textwrap

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

ADDR = re.compile(r"0x[0-9a-f]+")


def _run(module, source: str) -> str:
    out = io.StringIO()

    def show(*args, **kwargs):
        print(*args, **kwargs, file=out)

    def attempt(fn):
        try:
            fn()
        except (RuntimeError, AssertionError) as exc:
            show(type(exc).__name__, exc)

    names = {"torch": module, "print": show, "attempt": attempt,
             "allow": module.autograd.graph.allow_mutation_on_saved_tensors,
             "hooks": module.autograd.graph.saved_tensors_hooks}
    exec(textwrap.dedent(source), names)  # noqa: S102 - this file's own scenarios
    return ADDR.sub("0x?", out.getvalue())


SCENARIOS = {
    "write_after_save": """
        a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        def fn():
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.backward()
        attempt(fn)
        with allow() as ctx:
            fn()
            print(a.grad, len(ctx.cloned), len(ctx.original))
    """,
    "views_and_bases": """
        a = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]], requires_grad=True)
        with allow() as ctx:
            b = a.clone(); c = b[:1]; out = b ** 2
            c *= 10
            print(len(ctx.cloned))
            out.sum().backward()
            print(a.grad, len(ctx.cloned))
        a.grad = None
        with allow():
            b = a.clone(); c = b[:, 1]; out = (c ** 3).sum()
            b.mul_(2)
            out.backward()
            print(a.grad)
        with allow():
            b = a.clone(); v = b.view(-1); out = (b.exp() * 1).sum() + (b ** 2).sum()
            v.add_(1)
            print(b)
            grad, = torch.autograd.grad(out, a)
            print(grad)
    """,
    "one_copy_per_tensor_and_version": """
        with allow() as ctx:
            a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True).clone()
            b = a ** 2
            c = a ** 2
            print(len(ctx.tid_to_weakhandle))
            a.sin_()
            print(len(ctx.cloned))
            del b, c
            print(len(ctx.cloned))
            b = a ** 2
            a.cos_()
            c = a ** 2
            a.exp_()
            print(len(ctx.cloned))
            del b
            print(len(ctx.cloned))
            del c
            print(len(ctx.cloned))
    """,
    "freed_by_backward": """
        with allow() as ctx:
            a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True).clone()
            out = (a ** 2).sum()
            print(len(ctx.tid_to_weakhandle), len(ctx.cloned))
            out.backward()
            a.sin_()
            print(len(ctx.cloned))
            out = (a ** 2).sum()
            a.sin_()
            print(len(ctx.cloned))
            del out
            print(len(ctx.cloned))
    """,
    "out_variant_and_double_backward": """
        with allow() as ctx:
            a = torch.tensor([1.0, 3.0], requires_grad=True)
            b = torch.tensor([2.0, -1.0])
            out = a * b
            torch.sin(torch.tensor([0.5, 0.25]), out=b)
            print(len(ctx.cloned), b)
            out.sum().backward()
            print(a.grad, len(ctx.cloned))
        with allow() as ctx:
            a = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
            b = a.clone()
            out = (b ** 3).sum()
            b.sin_()
            da, = torch.autograd.grad(out, a, create_graph=True)
            d2a, = torch.autograd.grad(da.sum(), a)
            print(da, d2a, len(ctx.cloned))
    """,
    "errors": """
        with allow():
            a = torch.tensor([0.5, -1.0], requires_grad=True)
            out = (a ** 2).sum()
        attempt(out.backward)
        with allow():
            a = torch.tensor([0.5, -1.0], requires_grad=True)
            out = (a ** 2).sum()
        with allow():
            attempt(out.backward)
        def nested():
            with allow():
                with allow():
                    pass
        attempt(nested)
        b = torch.tensor([1.0], requires_grad=True).clone()
        out = b * b
        b.add_(1)
        attempt(lambda: out.backward())
    """,
    "inplace_under_identity_hooks": """
        a = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
        with hooks(lambda x: x, lambda x: x):
            b = a.clone()
            b.sin_()
            c = a.clone()
            c.mul_(a)
            d = a.clone()
            d.pow_(3)
            (b.sum() + c.sum() + d.sum()).backward()
        print(a.grad)
        kept = []
        with hooks(lambda x: kept.append(x) or len(kept) - 1, lambda i: kept[i]):
            e = a.clone()
            e.exp_().tanh_()
            grad, = torch.autograd.grad(e.sum(), a)
        print(grad)
    """,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_as_pytorch(name):
    source = SCENARIOS[name]
    assert _run(gt, source) == _run(torch, source)
