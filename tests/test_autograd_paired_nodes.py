"""var_mean / std_mean record ONE two-output node (VarMeanBackward0, StdMeanBackward0) as
PyTorch's: both outputs share it, a grad_fn pre-hook sees both gradients at once, and
the gradients (first and second order) match PyTorch's. Also the legacy
torch.autograd._functions.Resize Function. Compared with PyTorch."""

from __future__ import annotations

import importlib

import pytest
from scenario_log import attempt, same

torch = pytest.importorskip("torch")

DATA = [[0.5, -1.25, 2.0], [1.5, 0.25, -0.75], [3.0, 1.0, 0.5]]


@pytest.mark.parametrize("fname", ["var_mean", "std_mean"])
@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"dim": 1, "keepdim": True},
                                    {"dim": (0, 1), "correction": 0}, {"unbiased": False}])
def test_one_node_for_both_outputs(fname, kwargs):
    def scenario(t, log):
        a = t.tensor(DATA, dtype=t.float64, requires_grad=True)
        first, mean = getattr(t, fname)(a, **kwargs)
        log.append((type(first.grad_fn).__name__, first.grad_fn is mean.grad_fn,
                    first.output_nr, mean.output_nr))
        log.append(first.grad_fn.next_functions[0][0].__class__.__name__)
        (first * 2 + mean * 3).sum().backward(create_graph=True)
        log.append([round(v, 10) for v in a.grad.reshape(-1).tolist()])
        g2, = t.autograd.grad((a.grad ** 2).sum(), a)
        log.append([round(v, 8) + 0.0 for v in g2.reshape(-1).tolist()])  # (no -0.0)

    same(scenario)


@pytest.mark.parametrize("which", [0, 1])
def test_only_one_output_used(which):
    def scenario(t, log):
        a = t.tensor(DATA, requires_grad=True)
        out = t.var_mean(a, 1)[which]
        out.sum().backward()
        log.append([round(v, 6) for v in a.grad.reshape(-1).tolist()])

    same(scenario)


def test_a_prehook_on_the_shared_node_sees_both_gradients():
    def scenario(t, log):
        a = t.tensor(DATA, requires_grad=True)
        var, mean = t.var_mean(a, dim=0)
        seen = []

        def prehook(grads):
            seen.append([None if g is None else g.tolist() for g in grads])
            return tuple(None if g is None else g * 2 for g in grads)

        mean.grad_fn.register_prehook(prehook)
        (var + mean).sum().backward()
        log.append(seen)
        log.append([round(v, 6) for v in a.grad.reshape(-1).tolist()])
        b = t.tensor(DATA, requires_grad=True)
        var, mean = t.var_mean(b, dim=0)
        mean.grad_fn.register_prehook(prehook)
        mean.sum().backward()
        log.append(seen[-1])

    same(scenario)


def _functions(t):
    return importlib.import_module(t.autograd.__name__ + "._functions")


def test_legacy_resize_function():
    def scenario(t, log):
        x = t.arange(6., requires_grad=True)
        y = _functions(t).Resize.apply(x, (2, 3))
        log.append((type(y.grad_fn).__name__, tuple(y.shape)))
        (y * t.tensor([1., 2., 3.])).sum().backward()
        log.append(x.grad.tolist())
        attempt(log, lambda: _functions(t).Resize.apply(x, (5,)))
        edge = t.autograd.graph.get_gradient_edge(y)
        out = y.clone()
        log.append(t.autograd.grad(out.sum(), edge)[0].tolist())

    same(scenario)
