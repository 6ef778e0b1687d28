"""What the tutorial additions let a .grad program reach (the new optimizers with their state,
torch.finfo/iinfo, the narrow dtypes) stays inside the sandbox: the attribute crawler over
them finds nothing unsafe, and their internals are refused when the program is compiled."""

import io

import pytest

from gradcli.lang import Limits, Session
from tests.test_security_sandbox import BUDGET, assert_internal_refused, crawl

PROGRAM = """
import torch
w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
opts = []
for name in ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"]:
    opt = getattr(torch.optim, name)([w], lr=0.01)
    opt.zero_grad()
    (w ** 2).sum().backward()
    opt.step()
    opts.append(opt)
lb = torch.optim.LBFGS([w], max_iter=3)
def closure():
    lb.zero_grad()
    loss = (w ** 2).sum()
    loss.backward()
    return loss
lb.step(closure)
lb.step(closure)
sched = torch.optim.lr_scheduler.OneCycleLR(opts[0], max_lr=0.1, total_steps=4, cycle_momentum=False)
from torch.optim.lr_scheduler import LinearLR, ConstantLR
warm = [LinearLR(opts[1], total_iters=2), ConstantLR(opts[2])]
sched.step()
infos = [torch.finfo(torch.float16), torch.finfo(), torch.iinfo(torch.int8)]
narrow = [torch.ones(2, dtype=torch.half), torch.ones(2, dtype=torch.int8), torch.float16,
          torch.short, torch.ones(2).half(), torch.ones(2).char(), torch.histogram(torch.rand(5)),
          torch.bincount(torch.tensor([1, 2])), torch.histc(torch.rand(4), bins=3)]
"""


def test_crawl_finds_nothing_unsafe():
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    s.run(PROGRAM, "tut3.grad")
    roots = [(k, s.globals[k]) for k in ("opts", "lb", "infos", "narrow", "closure", "sched",
                                         "warm")]
    kept, bad = crawl(roots)
    assert not bad, bad[:20]
    reached = {type(obj).__name__ for obj in kept}
    assert {"LBFGS", "Rprop", "finfo", "iinfo", "dtype", "histogram", "OneCycleLR",
            "LinearLR"} <= reached, reached


@pytest.mark.parametrize("attack", [
    "torch.optim.LBFGS([torch.nn.Parameter(torch.ones(1))])._params",
    "torch.optim.Adadelta([torch.nn.Parameter(torch.ones(1))])._update",
    "torch.finfo().__class__",
    "getattr(torch.finfo(), '__init__')",
    "getattr(torch.optim.Rprop([torch.nn.Parameter(torch.ones(1))]), '_' + 'count')",
])
def test_internals_refused(attack):
    assert_internal_refused(attack)
