"""torch.utils.checkpoint against PyTorch: what a program sees of activation checkpointing.

The reentrant variant's output hangs off CheckpointFunctionBackward and its backward runs
the function again; the non-reentrant variant keeps the function's own graph and runs
it again, up to its last saved tensor, when the backward first needs one; both re-runs
replay the generator state of the first (a dropout draws the same mask) and leave the
generator where it was. Compared: values, gradients, grad_fn names, how often and how
far the function runs, the numbers drawn afterwards, warnings and errors."""

from __future__ import annotations

import warnings

import pytest
from process_helpers import assert_runs_as_python_does

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _scenario(T, reentrant, body):
    """Run `body` checkpointed; (output, its grad_fn name, x.grad, the function's trace,
    the number drawn after backward)."""
    from importlib import import_module

    cp = import_module(T.__name__ + ".utils.checkpoint")
    T.manual_seed(3)
    x = T.randn(4, requires_grad=True)
    trace = []

    def fn(a):
        return body(T, a, trace)

    out = cp.checkpoint(fn, x, use_reentrant=reentrant)
    trace.append("forward done")
    out.backward()
    return (out.detach().tolist(), type(out.grad_fn).__name__, x.grad.tolist(), trace,
            T.randn(2).tolist())


BODIES = {
    "saves": lambda T, a, trace: (trace.append("start"), (a.exp() * a).sum(),
                                  trace.append("end"))[1],
    # add and sum save nothing: the non-reentrant backward never runs the function again
    "saves_nothing": lambda T, a, trace: (trace.append("start"), (a + 1).sum())[1],
    # the last saved tensor is sin's input: what runs after it is not repeated (early stop)
    "early_stop": lambda T, a, trace: (trace.append("start"), (a.sin(), trace.append("mid"))[0]
                                       .sum().mul(2), trace.append("end"))[1],
    "dropout": lambda T, a, trace: (T.nn.functional.dropout(a * a, 0.5, True)).sum(),
}


@pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non_reentrant"])
@pytest.mark.parametrize("body", sorted(BODIES))
def test_checkpoint_as_pytorch(reentrant, body):
    assert _scenario(gt, reentrant, BODIES[body]) == _scenario(torch, reentrant, BODIES[body])


def _caught(T, call):
    from importlib import import_module

    cp = import_module(T.__name__ + ".utils.checkpoint")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            call(T, cp)
            error = None
        except (RuntimeError, ValueError) as e:
            error = (type(e).__name__, str(e))
    return [(w.category.__name__, str(w.message)) for w in seen], error


CALLS = {
    "default_variant_warns": lambda T, cp: cp.checkpoint(
        lambda a: a * 2, T.ones(2, requires_grad=True)).sum().backward(),
    "no_input_requires_grad": lambda T, cp: cp.checkpoint(lambda a: a * 2, T.ones(2),
                                                          use_reentrant=True),
    "reentrant_refuses_kwargs": lambda T, cp: cp.checkpoint(lambda a, k=1: a * k, T.ones(2),
                                                            use_reentrant=True, k=3),
    "reentrant_refuses_grad": lambda T, cp: (lambda x: T.autograd.grad(
        cp.checkpoint(lambda a: (a * a).sum(), x, use_reentrant=True), x))(
        T.ones(2, requires_grad=True)),
    "non_reentrant_grad_works": lambda T, cp: (lambda x: T.autograd.grad(
        cp.checkpoint(lambda a, k=1: (a * a * k).sum(), x, use_reentrant=False, k=3), x))(
        T.ones(2, requires_grad=True)),
    "sequential_default_warns": lambda T, cp: cp.checkpoint_sequential(
        T.nn.Sequential(T.nn.Identity(), T.nn.Identity()), 2, T.ones(2, requires_grad=True)),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_checkpoint_warnings_and_errors_as_pytorch(call):
    assert _caught(gt, CALLS[call]) == _caught(torch, CALLS[call])


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_sequential_as_pytorch(reentrant):
    def run(T):
        from importlib import import_module

        cp = import_module(T.__name__ + ".utils.checkpoint")
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 4), T.nn.ReLU(),
                                T.nn.Linear(4, 1))
        x = T.randn(5, 3, requires_grad=True)
        out = cp.checkpoint_sequential(model, 3, x, use_reentrant=reentrant)
        out.sum().backward()
        return (type(out.grad_fn).__name__, out.detach().tolist(), x.grad.tolist(),
                [p.grad.tolist() for p in model.parameters()])

    got, expected = run(gt), run(torch)
    assert got[0] == expected[0]
    torch.testing.assert_close(torch.tensor(got[1]), torch.tensor(expected[1]))
    torch.testing.assert_close(torch.tensor(got[2]), torch.tensor(expected[2]))
    for g, e in zip(got[3], expected[3], strict=True):
        torch.testing.assert_close(torch.tensor(g), torch.tensor(e))


def test_checkpoint_in_a_program(tmp_path):
    assert_runs_as_python_does(tmp_path, """\
import torch
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
block = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Dropout(0.3), torch.nn.GELU())
x = torch.randn(2, 3, requires_grad=True)
calls = []

def run(t):
    calls.append(len(calls))
    return block(t)

y = checkpoint(run, x, use_reentrant=False)
print(y)
y.sum().backward()
print(x.grad, calls)
z = checkpoint(run, x, use_reentrant=True)
print(z.grad_fn.name())
z.sum().backward()
print(x.grad, calls, torch.rand(1))
""")
