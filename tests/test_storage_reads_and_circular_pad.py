"""Against PyTorch: as_strided of a view reading its storage beyond the view (values from
the storage, gradients only for the view's own elements), and F.pad's circular mode
(grad_fn chains node for node, gradients)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402
import gradcli.torch.nn.functional  # noqa: E402, F401


def _run(mod, src: str) -> str:
    env = {"torch": mod, "F": mod.nn.functional, "chain": _chain}
    try:
        exec(src, env)  # noqa: S102 - test sources written here
        return repr(env["out"])
    except Exception as err:  # noqa: BLE001 - the error text is compared
        return f"{type(err).__name__}: {err}"


def _chain(fn) -> list:
    """The grad_fn graph depth first, as (depth, class name)."""
    out, stack = [], [(fn, 0)]
    while stack:
        f, depth = stack.pop()
        if f is None:
            continue
        out.append((depth, type(f).__name__))
        stack.extend((nf, depth + 1) for nf, _ in reversed(f.next_functions))
    return out


def same(src: str) -> None:
    expected = _run(torch, src)
    got = _run(gt, src)
    assert got == expected, f"\n{src}\n gradcli: {got}\n pytorch: {expected}"


STRIDED = [
    # a view of a leaf that requires grad: the elements outside the view get no gradient
    "base = torch.arange(12.).requires_grad_()\nw = base[2:6].as_strided((4,), (2,), 1)\n"
    "(w * torch.arange(4.)).sum().backward()\nout = (w, base.grad)",
    # a leaf that is itself a view of a larger storage (as_strided.partial_views' samples)
    "leaf = torch.arange(20.)[5:15].requires_grad_()\no = leaf.as_strided((3, 3), (4, 1), 2)\n"
    "(o * o).sum().backward()\nout = (o, leaf.is_leaf, leaf.grad)",
    "leaf = torch.arange(20.)[5:15].requires_grad_()\no = leaf.as_strided((2, 2), (1, 9), 0)\n"
    "g, = torch.autograd.grad(o.sum(), leaf)\nout = (o, g)",
    "out = torch.as_strided_copy(torch.arange(20.)[5:15], (4,), (3,), 3)",
    "out = torch.arange(20.)[5:15].as_strided((3,), (1,), 18)",
    "out = torch.arange(20.)[5:15].as_strided((3,), (1,), 25)",
]


@pytest.mark.parametrize("src", STRIDED)
def test_as_strided_reads_the_storage(src):
    same(src)


PADS = [((1, 2, 5), (1, 2)), ((1, 1, 3, 4), (1, 1, 2, 0)), ((2, 3), (2, 1)),
        ((1, 1, 2, 3, 4), (1, 0, 1, 1, 0, 2)), ((1, 2, 5), (-1, 2)), ((1, 2, 5), (0, 0)),
        ((1, 2, 4, 4), (-1, -1, 2, 3))]


@pytest.mark.parametrize(("shape", "pad"), PADS)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_circular_pad_graph_and_gradient(shape, pad, dtype):
    same(f"x = torch.arange(float(torch.tensor({shape}).prod())).reshape({shape})"
         f".to(torch.{dtype}).requires_grad_()\n"
         f"y = F.pad(x, {pad}, mode='circular')\n"
         "y.backward(torch.arange(float(y.numel())).reshape(y.shape).to(y.dtype))\n"
         "out = (y, chain(y.grad_fn), x.grad)")
