"""Indices, masks, where-conditions and loss targets are saved with the node that reads
them, as PyTorch saves them: modifying one in place before the backward raises PyTorch's
"modified by an inplace operation" error (gradcli's formulas read their values through
numpy, which went silently stale or wrong), and only where PyTorch's formula reads it
(index_add/scatter_add/accumulating puts need it for the source's gradient only; a 0-d
integer tensor index is a plain integer). Each case runs on both modules and compares
the printed outcome."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402

#: (forward using x (float64, requires grad), s (a source that requires grad), the index
#: i, the mask m), then the in-place change, then the backward
CASES = {
    "getitem": ("y = (x * 1)[i]", "i.add_(1)"),
    "getitem_mask": ("y = (x * 1)[m]", "m.logical_not_()"),
    "getitem_0d_index": ("y = (x * 1)[i[0]]", "i.add_(1)"),
    "getitem_mixed": ("y = (x * 1).reshape(2, 3)[i[:1], 1:]", "i.add_(1)"),
    "setitem": ("y = x * 1\ny[i] = s * 3", "i.add_(1)"),
    "setitem_mask": ("y = x * 1\ny[m] = 2.", "m.logical_not_()"),
    "setitem_view": ("y = x * 1\ny[1:][i] = s", "i.add_(1)"),
    "index_put_accumulate_x_only": ("y = (x * 1).index_put((i,), s.detach(), accumulate=True)",
                                    "i.add_(1)"),
    "index_put_accumulate": ("y = (x * 1).index_put((i,), s, accumulate=True)", "i.add_(1)"),
    "index_select": ("y = x.index_select(0, i)", "i.add_(1)"),
    "gather": ("y = x.gather(0, i)", "i.add_(1)"),
    "take": ("y = x.take(i)", "i.add_(1)"),
    "take_along_dim": ("y = torch.take_along_dim(x, i)", "i.add_(1)"),
    "scatter": ("y = x.scatter(0, i, s)", "i.add_(1)"),
    "scatter_value": ("y = x.scatter(0, i, 2.)", "i.add_(1)"),
    "scatter_": ("y = x * 1\ny.scatter_(0, i, s)", "i.add_(1)"),
    "scatter_add": ("y = x.scatter_add(0, i, s)", "i.add_(1)"),
    "scatter_add_x_only": ("y = x.scatter_add(0, i, s.detach())", "i.add_(1)"),
    "scatter_reduce": ("y = x.scatter_reduce(0, i, s, 'amax')", "i.add_(1)"),
    "index_add": ("y = x.index_add(0, i, s)", "i.add_(1)"),
    "index_add_x_only": ("y = x.index_add(0, i, s.detach())", "i.add_(1)"),
    "index_add_": ("y = x * 1\ny.index_add_(0, i, s)", "i.add_(1)"),
    "index_copy": ("y = x.index_copy(0, i, s)", "i.add_(1)"),
    "index_fill": ("y = x.index_fill(0, i, 3.)", "i.add_(1)"),
    "put": ("y = x.put(i, s)", "i.add_(1)"),
    "put_accumulate_x_only": ("y = x.put(i, s.detach(), accumulate=True)", "i.add_(1)"),
    "masked_fill": ("y = x.masked_fill(m, 0.)", "m.logical_not_()"),
    "masked_fill_": ("y = x * 1\ny.masked_fill_(m, 0.)", "m.logical_not_()"),
    "masked_select": ("y = x.masked_select(m)", "m.logical_not_()"),
    "masked_scatter": ("y = x.masked_scatter(m, s.repeat(3))", "m.logical_not_()"),
    "where": ("y = torch.where(m, x, x * 2)", "m.logical_not_()"),
    "embedding": ("y = torch.nn.functional.embedding(i, x.reshape(6, 1))", "i.add_(1)"),
    "nll_loss": ("y = torch.nn.functional.nll_loss(x.reshape(2, 3).log_softmax(1), i)",
                 "i.add_(-1)"),
    "cross_entropy": ("y = torch.nn.functional.cross_entropy(x.reshape(2, 3), i)",
                      "i.add_(-1)"),
    "unmodified_getitem": ("y = (x * 1)[i]", "pass"),
    "unmodified_index_add": ("y = x.index_add(0, i, s)", "pass"),
    "unmodified_where": ("y = torch.where(m, x, x * 2)", "pass"),
}


def _outcome(mod, forward: str, change: str) -> str:
    env = {"torch": mod,
           "x": mod.arange(6.0, dtype=mod.float64).requires_grad_(),
           "s": mod.tensor([1.5, -2.0], dtype=mod.float64, requires_grad=True),
           "i": mod.tensor([1, 2]),
           "m": mod.tensor([True, False, True, False, False, True])}
    try:
        exec(forward, env)  # noqa: S102 - the cases are written here
        exec(change, env)  # noqa: S102
        env["y"].sum().backward()
    except Exception as err:  # noqa: BLE001 - the error text is compared
        return f"{type(err).__name__}: {err}"
    return f"x.grad={env['x'].grad} s.grad={env['s'].grad}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_modified_index_is_caught_as_pytorch(name):
    forward, change = CASES[name]
    assert _outcome(gt, forward, change) == _outcome(torch, forward, change)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64", "float16", "bfloat16",
                                   "float32", "complex64", "complex128"])
def test_the_message_names_the_tensor_type_as_pytorch(dtype):
    """torch.LongTensor for the types with a legacy class, CPUBoolType & co. for the others."""
    def run(mod):
        dt = getattr(mod, dtype)
        x = mod.ones(2, dtype=mod.complex128 if dt.is_complex else mod.float64,
                     requires_grad=True)
        c = mod.ones(2, dtype=dt)
        y = x * c
        c.logical_not_() if dt is mod.bool else c.add_(1)
        try:
            y.sum().abs().backward()
        except RuntimeError as err:
            return str(err)
        return "no error"

    assert run(gt) == run(torch)
