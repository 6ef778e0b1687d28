"""OneCycleLR, LinearLR and ConstantLR (gradcli/torch/optim/more_schedulers.py) against real
PyTorch: learning rates and cycled momentum/beta1 step by step, the keys they add to the
parameter groups and their state_dict, errors, and the not-supported message for the rest."""

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

SCHEDULES = [
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 10}),
    ("OneCycleLR", {"max_lr": [0.5], "epochs": 2, "steps_per_epoch": 6,
                    "anneal_strategy": "linear", "three_phase": True}),
    ("OneCycleLR", {"max_lr": 0.2, "total_steps": 9, "cycle_momentum": False, "pct_start": 0.5}),
    ("LinearLR", {"start_factor": 0.5, "total_iters": 3}),
    ("LinearLR", {"start_factor": 1.0, "end_factor": 0.1, "total_iters": 4}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 2}),
    ("CosineAnnealingWarmRestarts", {"T_0": 2}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.001}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "step_size_down": 3,
                  "mode": "triangular2"}),
    ("CyclicLR", {"base_lr": [0.01], "max_lr": 0.1, "step_size_up": 3, "mode": "exp_range",
                  "gamma": 0.9}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2,
                  "scale_fn": lambda x: 0.5 ** x, "scale_mode": "iterations"}),
]


@pytest.mark.parametrize("options", [{"T_0": 2}, {"T_0": 3, "T_mult": 2, "eta_min": 0.001}])
def test_warm_restarts_jumps_as_pytorch(options):
    def run(T):
        opt = T.optim.SGD(T.nn.Linear(2, 1).parameters(), lr=0.1, momentum=0.9)
        sched = T.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, **options)
        seen = []
        for epoch in (0.5, 2.25, 7.5, 20.0, 3):
            sched.step(epoch)
            seen.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        return seen

    assert run(gt) == run(torch)


def _run(T, name, options, optimizer):
    model = T.nn.Linear(2, 1)
    opt = (T.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if optimizer == "SGD"
           else T.optim.Adam(model.parameters(), lr=0.1))
    sched = getattr(T.optim.lr_scheduler, name)(opt, **options)
    seen = []
    for _ in range(9):
        opt.step()
        sched.step()
        group = opt.param_groups[0]
        seen.append((sched.get_last_lr(), group.get("momentum"), group.get("betas")))
    keys = [k for k in opt.param_groups[0] if k != "params"]
    state = sched.state_dict()
    return (seen, keys, sorted(state), state.get("_schedule_phases"),
            state.get("_scale_fn_custom"), str(type(sched)))


@pytest.mark.parametrize("name, options", SCHEDULES)
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_schedule_as_pytorch(name, options, optimizer):
    assert _run(gt, name, options, optimizer) == _run(torch, name, options, optimizer)


@pytest.mark.parametrize("make", [
    "S.OneCycleLR(opt, 0.1)",
    "S.OneCycleLR(opt, 0.1, total_steps=5, pct_start=1)",
    "S.OneCycleLR(T.optim.Adagrad([p]), 0.1, total_steps=4)",
    "S.OneCycleLR(opt, [0.1, 0.2], total_steps=4)",
    "S.LinearLR(opt, start_factor=0)",
    "S.ConstantLR(opt, factor=2.0)",
    "S.CosineAnnealingWarmRestarts(opt, T_0=0)",
    "S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0)",
    "S.CyclicLR(opt, 0.01, 0.1, mode='x')",
    "S.CyclicLR(T.optim.Adagrad([p]), 0.01, 0.1)",
    "(lambda s: [opt.step() or s.step() for _ in range(3)])(S.OneCycleLR(opt, 0.5, total_steps=2))",
])
def test_errors_as_pytorch(make):
    seen = []
    for T in (gt, torch):
        p = T.nn.Parameter(T.ones(2))
        opt = T.optim.SGD([p], lr=0.1, momentum=0.9)
        with pytest.raises(ValueError) as info:
            eval(make, {"T": T, "S": T.optim.lr_scheduler, "opt": opt, "p": p})
        seen.append(str(info.value))
    assert seen[0] == seen[1]


def test_other_schedulers_say_not_supported():
    with pytest.raises(AttributeError, match="^torch.optim.lr_scheduler.NoSuchLR is not "
                                             "supported by gradcli$"):
        gt.optim.lr_scheduler.NoSuchLR  # noqa: B018
