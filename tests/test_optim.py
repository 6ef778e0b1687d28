"""torch.optim against real PyTorch: 2000 steps of every optimizer and option on the same
gradients leave the parameters within tolerance of PyTorch's; reprs, state_dicts,
param groups, errors and the lr schedulers' learning rates."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")

CASES = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9)),
    ("SGD", dict(lr=0.01, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.5, 0.9), maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.05)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.001, momentum=0.5, centered=True, weight_decay=0.01)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.01, initial_accumulator_value=0.1)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_2000_steps_agree(name, kwargs, dtype):
    """A quadratic bowl whose gradients depend on the parameters, so errors would grow."""
    rng = np.random.default_rng(0)
    start = rng.standard_normal((3, 4)).astype(dtype)
    bias0 = rng.standard_normal(4).astype(dtype)
    target = rng.standard_normal((3, 4)).astype(dtype)
    results = []
    for lib in (torch, G):
        w = lib.nn.Parameter(lib.tensor(start.copy()))
        b = lib.nn.Parameter(lib.tensor(bias0.copy()))
        tgt = lib.tensor(target)
        opt = getattr(lib.optim, name)([w, b], **kwargs)
        for _ in range(2000):
            opt.zero_grad()
            loss = ((w - tgt) ** 2).sum() + (b * b).sum() * 0.5 + (w * w * w).sum() * 0.01
            loss.backward()
            opt.step()
        results.append((w.detach().numpy() if lib is torch else np.asarray(w._data),
                        b.detach().numpy() if lib is torch else np.asarray(b._data),
                        opt.state_dict()))
    (wt, bt, st), (wg, bg, sg) = results
    tol = dict(rtol=1.3e-6, atol=1e-5) if dtype == "float32" else dict(rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(wg, wt, **tol)
    np.testing.assert_allclose(bg, bt, **tol)
    assert sg["param_groups"] == st["param_groups"]
    assert sorted(sg["state"]) == sorted(st["state"])
    for k in st["state"]:
        assert list(sg["state"][k]) == list(st["state"][k])
        assert repr(sg["state"][k]["step" if "step" in st["state"][k] else
                                    list(st["state"][k])[0]].dtype).replace("torch.", "") == \
            repr(st["state"][k]["step" if "step" in st["state"][k] else
                                list(st["state"][k])[0]].dtype).replace("torch.", "")


def test_repr_groups_and_errors():
    for name, kwargs in CASES:
        reps = []
        for lib in (torch, G):
            p = lib.nn.Parameter(lib.zeros(2))
            opt = getattr(lib.optim, name)([p], **kwargs)
            opt.add_param_group({"params": [lib.nn.Parameter(lib.ones(1))], "lr": 0.5})
            reps.append(repr(opt))
        assert reps[0] == reps[1]

    def errors(build):
        out = []
        for lib in (torch, G):
            try:
                build(lib)
                out.append(None)
            except Exception as e:  # noqa: BLE001 - comparing exactly what each raises
                out.append((type(e).__name__, str(e)))
        return out

    for build in (
        lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=-1),
        lambda lib: lib.optim.SGD([], lr=1),
        lambda lib: lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1, nesterov=True),
        lambda lib: lib.optim.Adam([lib.nn.Parameter(lib.zeros(1))], betas=(1.0, 0.9)),
        lambda lib: lib.optim.SGD(lib.nn.Parameter(lib.zeros(1)), lr=0.1),
        lambda lib: lib.optim.RMSprop([lib.nn.Parameter(lib.zeros(1))], eps=-1),
    ):
        ours, theirs = errors(build)[1], errors(build)[0]
        assert ours == theirs


def test_zero_grad_set_to_none_and_load_state_dict():
    for lib in (torch, G):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        p.grad = lib.ones(2)
        opt.step()
        opt.zero_grad(set_to_none=False)
        assert p.grad is not None and float(p.grad.sum()) == 0.0
        opt.zero_grad()
        assert p.grad is None
    p = G.nn.Parameter(G.ones(2))
    opt = G.optim.Adam([p], lr=0.1)
    p.grad = G.ones(2)
    opt.step()
    saved = opt.state_dict()
    q = G.nn.Parameter(G.ones(2))
    opt2 = G.optim.Adam([q], lr=0.5)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == 0.1
    assert float(opt2.state[q]["step"]) == 1.0


SCHEDULERS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=4, eta_min=0.001)),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e)),
]


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_schedulers_give_pytorchs_learning_rates(name, kwargs):
    runs = []
    for lib in (torch, G):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([p], lr=0.1)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
        lrs = []
        for _ in range(12):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr()[0])
        runs.append((lrs, list(sched.state_dict()), opt.param_groups[0]["lr"]))
    assert runs[0] == runs[1]


def test_reduce_lr_on_plateau():
    runs = []
    for lib in (torch, G):
        p = lib.nn.Parameter(lib.zeros(1))
        opt = lib.optim.SGD([p], lr=0.1)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2, factor=0.5,
                                                         cooldown=1)
        lrs = []
        for metric in [5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3]:
            sched.step(metric)
            lrs.append(sched.get_last_lr()[0])
        runs.append((lrs, sched.state_dict()))
    assert runs[0] == runs[1]
