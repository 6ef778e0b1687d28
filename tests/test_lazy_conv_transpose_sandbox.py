"""The lazy layers a .grad program can now build (LazyConv3d, LazyConvTranspose1d/2d/3d,
LazyInstanceNorm1d/2d/3d) stay inside the sandbox: before and after their first input
(which turns them into their eager class) the attribute crawler finds nothing unsafe and
their internals are refused; and they work in the language as in PyTorch."""

import io

import pytest

from gradcli.lang import Limits, Session
from tests.test_security_sandbox import BUDGET, crawl

PROGRAM = """
import torch
import torch.nn as nn
fresh = [nn.LazyConv3d(2, 1), nn.LazyConvTranspose1d(2, 3), nn.LazyConvTranspose2d(2, 3),
         nn.LazyConvTranspose3d(2, 1), nn.LazyInstanceNorm1d(), nn.LazyInstanceNorm2d(affine=True),
         nn.LazyInstanceNorm3d()]
used = [nn.LazyConvTranspose2d(4, 3, stride=2), nn.LazyInstanceNorm2d(affine=True)]
y = used[0](torch.ones(1, 3, 4, 4))
z = used[1](y)
shape = tuple(z.shape)
kinds = [type(m) is nn.ConvTranspose2d for m in used[:1]] + [type(used[1]) is nn.InstanceNorm2d]
"""


def _session(extra=""):
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    s.run(PROGRAM + extra, "lazy.grad")
    return s


def test_they_run_and_become_their_eager_class():
    s = _session()
    assert s.globals["shape"] == (1, 4, 9, 9)
    assert s.globals["kinds"] == [True, True]


def test_crawl_finds_nothing_unsafe():
    s = _session()
    kept, bad = crawl([(k, s.globals[k]) for k in ("fresh", "used", "y", "z")])
    assert not bad, bad[:20]
    reached = {type(obj).__name__ for obj in kept}
    assert {"LazyConvTranspose3d", "LazyInstanceNorm1d", "ConvTranspose2d",
            "UninitializedParameter"} <= reached, reached


@pytest.mark.parametrize("attack", [
    "type(fresh[1]).__bases__",
    "fresh[1].__class__",
    "fresh[0].cls_to_become.__init__",
    "fresh[2]._call_lazy.__globals__",
    "used[0].__dict__",
    "fresh[4].initialize_parameters.__func__",
])
def test_internals_are_refused(attack):
    with pytest.raises(Exception) as info:
        _session(f"\nx = {attack}\n")
    assert "not allowed" in str(info.value) or "not supported" in str(info.value), \
        str(info.value)
