"""Every class of torch.optim.lr_scheduler and torch.optim.swa_utils against PyTorch 2.13:
the same program in both libraries (an optimizer with two parameter groups of different
learning rates, 30 steps of optimizer.step() then scheduler.step()), comparing
get_last_lr(), each group's lr (and momentum / betas where the scheduler cycles them),
state_dict(), a load_state_dict round trip that continues identically, and the warnings
PyTorch gives (scheduler.step() before optimizer.step())."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402

STEPS = 30


def _public_scheduler_names():
    from torch.optim import lr_scheduler

    return sorted(name for name, obj in vars(lr_scheduler).items()
                  if inspect.isclass(obj) and obj.__module__ == lr_scheduler.__name__
                  and (not name.startswith("_") or name == "_LRScheduler")
                  and issubclass(obj, (lr_scheduler.LRScheduler,
                                       lr_scheduler.ReduceLROnPlateau)))


def test_every_scheduler_class_exists():
    missing = [n for n in _public_scheduler_names() if not hasattr(gt.optim.lr_scheduler, n)]
    assert not missing
    assert issubclass(gt.optim.lr_scheduler._LRScheduler, gt.optim.lr_scheduler.LRScheduler)


def _sgd(lib, momentum=0.9):
    a = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5]))
    b = lib.nn.Parameter(lib.tensor([[0.3, 0.1], [-0.7, 2.0]]))
    return [a, b], lib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1,
                                 momentum=momentum)


def _adam(lib):
    a = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5]))
    b = lib.nn.Parameter(lib.tensor([[0.3, 0.1], [-0.7, 2.0]]))
    return [a, b], lib.optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.02}], lr=0.01)


def _s(lib):
    return lib.optim.lr_scheduler


# name -> (optimizer factory, scheduler factory(lib, optimizer))
CASES = {
    "LambdaLR": (_sgd, lambda lib, o: _s(lib).LambdaLR(o, lambda e: 0.95 ** e)),
    "LambdaLR per group": (_sgd, lambda lib, o: _s(lib).LambdaLR(
        o, [lambda e: 1 / (e + 1), lambda e: 0.9 ** (e // 3)])),
    "MultiplicativeLR": (_sgd, lambda lib, o: _s(lib).MultiplicativeLR(o, lambda e: 0.93)),
    "StepLR": (_sgd, lambda lib, o: _s(lib).StepLR(o, step_size=5, gamma=0.5)),
    "MultiStepLR": (_sgd, lambda lib, o: _s(lib).MultiStepLR(o, milestones=[3, 8, 8, 15],
                                                             gamma=0.3)),
    "ConstantLR": (_sgd, lambda lib, o: _s(lib).ConstantLR(o, factor=0.5, total_iters=4)),
    "LinearLR": (_sgd, lambda lib, o: _s(lib).LinearLR(o, start_factor=0.25, end_factor=0.9,
                                                       total_iters=7)),
    "ExponentialLR": (_sgd, lambda lib, o: _s(lib).ExponentialLR(o, gamma=0.9)),
    "PolynomialLR": (_sgd, lambda lib, o: _s(lib).PolynomialLR(o, total_iters=12, power=2.0)),
    "CosineAnnealingLR": (_sgd, lambda lib, o: _s(lib).CosineAnnealingLR(o, T_max=10,
                                                                         eta_min=0.001)),
    "CosineAnnealingWarmRestarts": (_sgd, lambda lib, o: _s(lib).CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=0.01)),
    "CyclicLR triangular": (_sgd, lambda lib, o: _s(lib).CyclicLR(
        o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=4)),
    "CyclicLR triangular2": (_sgd, lambda lib, o: _s(lib).CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=5, mode="triangular2")),
    "CyclicLR exp_range": (_sgd, lambda lib, o: _s(lib).CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range", gamma=0.9)),
    "CyclicLR Adam no momentum": (_adam, lambda lib, o: _s(lib).CyclicLR(
        o, base_lr=0.001, max_lr=0.01, step_size_up=5, cycle_momentum=False)),
    "OneCycleLR": (_sgd, lambda lib, o: _s(lib).OneCycleLR(o, max_lr=0.1, total_steps=STEPS + 9)),
    "OneCycleLR linear three_phase": (_sgd, lambda lib, o: _s(lib).OneCycleLR(
        o, max_lr=[0.1, 0.3], total_steps=STEPS + 9, anneal_strategy="linear",
        three_phase=True)),
    "OneCycleLR Adam": (_adam, lambda lib, o: _s(lib).OneCycleLR(
        o, max_lr=0.01, epochs=4, steps_per_epoch=10, pct_start=0.4)),
    "SequentialLR": (_sgd, lambda lib, o: _s(lib).SequentialLR(
        o, [_s(lib).ConstantLR(o, factor=0.1, total_iters=3),
            _s(lib).ExponentialLR(o, gamma=0.9)], milestones=[3])),
    "SequentialLR three": (_sgd, lambda lib, o: _s(lib).SequentialLR(
        o, [_s(lib).LinearLR(o, start_factor=0.1, total_iters=4),
            _s(lib).StepLR(o, step_size=3, gamma=0.5),
            _s(lib).CosineAnnealingLR(o, T_max=6)], milestones=[4, 12])),
    "ChainedScheduler": (_sgd, lambda lib, o: _s(lib).ChainedScheduler(
        [_s(lib).ConstantLR(o, factor=0.1, total_iters=3), _s(lib).ExponentialLR(o, gamma=0.9)])),
    "ReduceLROnPlateau": (_sgd, lambda lib, o: _s(lib).ReduceLROnPlateau(
        o, mode="min", factor=0.5, patience=2)),
    "ReduceLROnPlateau abs max cooldown": (_sgd, lambda lib, o: _s(lib).ReduceLROnPlateau(
        o, mode="max", factor=0.3, patience=1, threshold=0.05, threshold_mode="abs",
        cooldown=2, min_lr=[0.001, 0.002])),
}


def _metric(step: int) -> float:
    # falls, then plateaus and wobbles (so ReduceLROnPlateau reduces several times)
    return 1.0 / (1 + step) if step < 6 else 0.2 + 0.01 * math.sin(step)


def _grads(lib, params, step):
    for i, p in enumerate(params):
        p.grad = lib.tensor(np.cos(np.arange(p.numel()) + step + i).reshape(tuple(p.shape))
                            .astype(np.float32))


def _run(lib, name, steps=STEPS, start=0, state=None):
    make_opt, make_sched = CASES[name]
    params, opt = make_opt(lib)
    sched = make_sched(lib, opt)
    if state is not None:
        opt.load_state_dict(state[0])
        sched.load_state_dict(state[1])
    trace = []
    for step in range(start, start + steps):
        _grads(lib, params, step)
        opt.step()
        if name.startswith("ReduceLROnPlateau"):
            sched.step(_metric(step))
        else:
            sched.step()
        groups = [{k: g[k] for k in ("lr", "momentum", "betas") if k in g}
                  for g in opt.param_groups]
        trace.append((list(sched.get_last_lr()), groups))
    return params, opt, sched, trace


def _plain(value):
    """A state_dict value for comparison: tensors as arrays, functions left out."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if not callable(v)}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, (torch.Tensor, gt.Tensor)):
        return ("tensor", np.asarray(value.detach().tolist()).tolist())
    return value


def _assert_same(ours, theirs, where=""):
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), where
        assert list(ours) == list(theirs), f"{where}: {list(ours)} != {list(theirs)}"
        for k in theirs:
            _assert_same(ours[k], theirs[k], f"{where}[{k!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), \
            f"{where}: {ours!r} != {theirs!r}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, float):
        assert isinstance(ours, float), f"{where}: {ours!r} ({type(ours).__name__}) != {theirs!r}"
        assert math.isclose(ours, theirs, rel_tol=1.3e-6, abs_tol=1e-12) or (
            math.isnan(ours) and math.isnan(theirs)), f"{where}: {ours!r} != {theirs!r}"
    else:
        assert type(ours) is type(theirs) and ours == theirs, \
            f"{where}: {ours!r} ({type(ours).__name__}) != {theirs!r} ({type(theirs).__name__})"


@pytest.mark.parametrize("name", list(CASES))
def test_schedule_as_pytorch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tparams, topt, tsched, ttrace = _run(torch, name)
        params, opt, sched, trace = _run(gt, name)
    _assert_same(trace, ttrace, "trace")
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1.3e-6,
                                   atol=1e-5)
    _assert_same(_plain(sched.state_dict()), _plain(tsched.state_dict()), "state_dict")
    # a fresh optimizer and scheduler loaded from the state continue as the original
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = (opt.state_dict(), sched.state_dict())
        tstate = (topt.state_dict(), tsched.state_dict())
        *_, more = _run(gt, name, steps=8, start=STEPS, state=state)
        *_, tmore = _run(torch, name, steps=8, start=STEPS, state=tstate)
        *_, tcont = _run(torch, name, steps=STEPS + 8)
    _assert_same(more, tmore, "after load_state_dict")
    _assert_same(tmore, tcont[STEPS:], "PyTorch itself continues")


def _warnings_of(lib, program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program(lib)
    return [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("name", ["StepLR", "OneCycleLR", "CyclicLR triangular",
                                  "SequentialLR", "CosineAnnealingWarmRestarts"])
def test_step_order_warning_as_pytorch(name):
    def program(lib):
        params, opt = CASES[name][0](lib)
        sched = CASES[name][1](lib, opt)
        sched.step()  # before optimizer.step(): PyTorch warns
        _grads(lib, params, 0)
        opt.step()
        sched.step()

    ours, theirs = _warnings_of(gt, program), _warnings_of(torch, program)
    if name != "CosineAnnealingWarmRestarts":  # (its own step(): PyTorch does not warn)
        assert theirs, "PyTorch warned of nothing: the program is not what this test means"
    assert ours == theirs


def test_get_lr_outside_step_warns_as_pytorch():
    def program(lib):
        _, opt = _sgd(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        return sched.get_lr()

    assert _warnings_of(gt, program) == _warnings_of(torch, program)


# ------------------------------------------------------------------ swa_utils
def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(),
                             lib.nn.Linear(4, 2))


def _swa_program(lib, **averaged_kwargs):
    model = _model(lib)
    swa = lib.optim.swa_utils.AveragedModel(model, **averaged_kwargs)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3,
                                      anneal_strategy="cos")
    lrs = []
    for step in range(8):
        x = lib.tensor(np.sin(np.arange(15.0) + step).reshape(5, 3).astype(np.float32))
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        swa.update_parameters(model)
        sched.step()
        lrs.append(sched.get_last_lr())
    loader = [lib.tensor(np.cos(np.arange(15.0) * (k + 1)).reshape(5, 3).astype(np.float32))
              for k in range(3)]
    lib.optim.swa_utils.update_bn(loader, swa)
    out = swa(loader[0])
    return lrs, {k: v.detach().numpy() for k, v in swa.state_dict().items()}, \
        out.detach().numpy(), swa.n_averaged.item()


@pytest.mark.parametrize("kwargs", [
    {},
    {"multi_avg_fn": "ema"},
    {"use_buffers": True},
], ids=["swa", "ema", "use_buffers"])
def test_swa_utils_as_pytorch(kwargs):
    def resolve(lib):
        if kwargs.get("multi_avg_fn") == "ema":
            return {"multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)}
        return dict(kwargs)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tlrs, tstate, tout, tn = _swa_program(torch, **resolve(torch))
        lrs, state, out, n = _swa_program(gt, **resolve(gt))
    _assert_same(lrs, tlrs, "lrs")
    assert list(state) == list(tstate)
    for k in tstate:
        np.testing.assert_allclose(state[k], tstate[k], rtol=1.3e-6, atol=1e-5, err_msg=k)
    np.testing.assert_allclose(out, tout, rtol=1.3e-6, atol=1e-5)
    assert n == tn


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "ExponentialLR",
                                  "MultiStepLR", "LambdaLR"])
def test_step_with_epoch_as_pytorch(name):
    # the deprecated step(epoch): PyTorch's warning and its closed-form learning rates
    def program(lib):
        params, opt = CASES[name][0](lib)
        sched = CASES[name][1](lib, opt)
        lrs = []
        for epoch in (1, 2, 7, 3):
            _grads(lib, params, epoch)
            opt.step()
            sched.step(epoch)
            lrs.append(sched.get_last_lr())
        return lrs

    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        tlrs = program(torch)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        lrs = program(gt)
    _assert_same(lrs, tlrs, "lrs")
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


@pytest.mark.parametrize("make", [
    lambda s, o: s.StepLR(o, step_size=3, gamma=0.5, last_epoch=4),
    lambda s, o: s.CosineAnnealingLR(o, T_max=10, last_epoch=4),
    lambda s, o: s.ExponentialLR(o, gamma=0.8, last_epoch=2),
], ids=["StepLR", "CosineAnnealingLR", "ExponentialLR"])
def test_resume_with_last_epoch_as_pytorch(make):
    # a scheduler built with last_epoch= on an optimizer whose groups hold initial_lr
    def program(lib):
        params, opt = _sgd(lib)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"] * 2
        sched = make(lib.optim.lr_scheduler, opt)
        lrs = [sched.get_last_lr()]
        for step in range(6):
            _grads(lib, params, step)
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        return lrs, sched.last_epoch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_same(program(gt), program(torch), "resumed")
