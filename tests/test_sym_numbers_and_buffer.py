"""torch.sym_max / sym_min / sym_float / sym_int / sym_not / sym_sqrt / sym_sum / sym_ite /
sym_fresh_size / sym_constrain_range(_for_size) on plain numbers and tensors, and nn.Buffer (a buffer marker that a Module
attribute assignment registers, persistent or not), against PyTorch, in programs; and the
sandbox's crawler over what they give."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from gradcli.lang import Limits, Session  # noqa: E402
from tests.test_security_sandbox import BUDGET, assert_internal_refused, crawl  # noqa: E402

SYM = """
import torch
import math
t = torch.tensor([2.5])
cases = [lambda: torch.sym_max(1, 2), lambda: torch.sym_max(1, 2.0), lambda: torch.sym_max(3, 2.0),
         lambda: torch.sym_min(1.0, 2), lambda: torch.sym_min(-1, 2), lambda: torch.sym_max(t, 1),
         lambda: torch.sym_min(1, "a"), lambda: torch.sym_max(True, 2), lambda: torch.sym_float(3),
         lambda: torch.sym_float(t), lambda: torch.sym_float("1.5"), lambda: torch.sym_int(2.7),
         lambda: torch.sym_int(-2.7), lambda: torch.sym_int(t), lambda: torch.sym_int(torch.ones(2)),
         lambda: torch.sym_not(True), lambda: torch.sym_not(0), lambda: torch.sym_not(t),
         lambda: torch.sym_not(torch.ones(2)), lambda: torch.sym_sqrt(4), lambda: torch.sym_sqrt(2.0),
         lambda: torch.sym_sqrt(t), lambda: torch.sym_sqrt(-1), lambda: torch.sym_sum(1, 2, 3),
         lambda: torch.sym_sum([1, 2.5]), lambda: torch.sym_sum((t, t)), lambda: torch.sym_sum([]),
         lambda: torch.sym_ite(True, 1, 2), lambda: torch.sym_ite(False, 1, 2),
         lambda: torch.sym_ite(1, 1, 2), lambda: torch.sym_ite(True, 1, 2.0),
         lambda: torch.sym_ite(False, t, t * 2), lambda: torch.sym_fresh_size(5),
         lambda: torch.sym_fresh_size(2.5), lambda: torch.sym_max(torch.tensor(3).item(), 2),
         lambda: torch.sym_constrain_range(3, min=0, max=5), lambda: torch.sym_constrain_range(3, min=4),
         lambda: torch.sym_constrain_range(3, max=2), lambda: torch.sym_constrain_range(3, 0, 5),
         lambda: torch.sym_constrain_range(3, min=5, max=2), lambda: torch.sym_constrain_range("a"),
         lambda: torch.sym_constrain_range(3, min=2.5), lambda: torch.sym_constrain_range(3.7, min=4),
         lambda: torch.sym_constrain_range(torch.tensor(3), min=5),
         lambda: torch.sym_constrain_range(torch.tensor([1, 2])),
         lambda: torch.sym_constrain_range(size=3, min=5), lambda: torch.sym_constrain_range_for_size(3),
         lambda: torch.sym_constrain_range_for_size(-1), lambda: torch.sym_constrain_range_for_size(3, max=2),
         lambda: torch.sym_constrain_range_for_size(3, min=5, max=2),
         lambda: torch.sym_constrain_range_for_size(10, max=5),
         lambda: torch.sym_constrain_range_for_size(-1, min=-3),
         lambda: torch.sym_constrain_range(3, foo=1), lambda: torch.sym_constrain_range(t, foo=1),
         lambda: torch.sym_constrain_range_for_size(3, min=1.5, foo=2)]
for f in cases:
    try:
        r = f()
        print(repr(r), type(r))
    except Exception as e:
        print(repr(e))
"""

BUFFER = """
import torch
b = torch.nn.Buffer(torch.ones(2, requires_grad=True), persistent=False)
print(type(b), b, b.requires_grad, b.is_leaf, isinstance(b, torch.nn.Buffer),
      isinstance(torch.ones(1), torch.nn.Buffer))
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Buffer(torch.zeros(2))
        self.b = torch.nn.Buffer(torch.ones(1), persistent=False)
        self.c = torch.ones(3)
m = M()
print(list(m.named_buffers()), m.state_dict(), m.c)
m.a = torch.ones(2) * 5
print(m.state_dict())
print(torch.nn.Buffer())
for make in (lambda: torch.nn.Buffer([1.0]), lambda: torch.nn.Buffer(torch.ones(1), False)):
    try:
        make()
    except Exception as e:
        print(repr(e))
x = torch.ones(2, requires_grad=True) * 2
bb = torch.nn.Buffer(x)
print(bb.requires_grad, bb.grad_fn, isinstance(bb * 2, torch.nn.Buffer),
      isinstance(bb.clone(), torch.nn.Buffer))
m.d = torch.nn.Buffer(torch.ones(1))
print(m.d, list(m.state_dict()))
class N(torch.nn.Module):
    def __init__(self):
        self.a = torch.nn.Buffer(torch.zeros(2))
try:
    N()
except Exception as e:
    print(repr(e))
m.e = 3
try:
    m.e = torch.nn.Buffer(torch.ones(1))
except Exception as e:
    print(repr(e))
m.p = torch.nn.Parameter(torch.ones(1))
try:
    m.p = torch.nn.Buffer(torch.ones(1))
except Exception as e:
    print(repr(e))
m.b = torch.nn.Buffer(torch.ones(1) * 7)
print(m.state_dict(), dict(m.named_buffers()))
m2 = M()
m2.load_state_dict({"a": torch.tensor([1.0, 2.0])})
print(m2.a, m2.b, m2)
from torch.nn import Buffer
print(Buffer, torch.nn.parameter.Buffer, m.double().a.dtype)
"""


def _pytorch_prints(source: str) -> str:
    run = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                         timeout=120, check=True)
    return run.stdout


def _gradcli_prints(source: str) -> str:
    out = io.StringIO()
    Session(stdout=out, limits=Limits(**BUDGET)).run(source, "names.grad")
    return out.getvalue()


@pytest.mark.parametrize("source", [SYM, BUFFER], ids=["sym", "buffer"])
def test_programs_print_as_pytorch(source):
    assert _gradcli_prints(source) == _pytorch_prints(source)


def test_crawl_of_the_new_names_finds_nothing_unsafe():
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    s.run(BUFFER + "\nsyms = [torch.sym_max, torch.sym_min, torch.sym_float, torch.sym_int, "
          "torch.sym_not, torch.sym_sqrt, torch.sym_sum, torch.sym_ite, torch.sym_fresh_size]\n"
          "more = [torch.nn.Buffer, b, m, torch.view_as_real_copy, torch.values_copy, "
          "torch.ones(2, 2).to_sparse_coo(), torch.ones(2, 2).sparse_mask(torch.ones(2, 2)"
          ".to_sparse()), torch.Tensor.sparse_mask, torch.Tensor.to_sparse_coo]\n", "c.grad")
    kept, bad = crawl([(k, s.globals[k]) for k in ("syms", "more", "Buffer")])
    assert not bad, bad[:20]
    assert len(kept) > 50


@pytest.mark.parametrize("attack", [
    "torch.nn.parameter._BUFFERS",
    "torch.nn.parameter.buffer_persistence",
    "torch.nn.parameter._BufferMeta",
    "torch.nn.Buffer.__new__",
    "torch.sym_max.__globals__",
    "type(torch.nn.Buffer).__instancecheck__",
])
def test_internals_refused(attack):
    assert_internal_refused(attack)
