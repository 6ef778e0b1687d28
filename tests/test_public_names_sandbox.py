"""Attack tests for the names of this batch that take callables or hold objects
(torch.compile, torch.testing.assert_close's msg, the OptimizedModule): a program can
use them, and cannot reach through them anything the sandbox keeps from it."""

import io

import pytest

from gradcli.lang import Limits
from gradcli.lang.session import run_source

BUDGET = dict(max_steps=20_000, max_depth=60, max_elements=1_000_000, max_length=100_000)


def run(src: str):
    out, err = io.StringIO(), io.StringIO()
    code = run_source("import torch\n" + src, "attack.grad", limits=Limits(**BUDGET), stdout=out,
                      stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_programs_use_the_new_names():
    code, out, err = run(
        "def double(x):\n    return x * 2\n"
        "f = torch.compile(double)\n"
        "print(f(torch.ones(2)))\n"
        "m = torch.compile(torch.nn.Linear(2, 1))\n"
        "print(m)\n"
        "print(list(m.state_dict().keys()))\n"
        "print(m.in_features)\n"
        "torch.testing.assert_close(torch.ones(2), torch.ones(2))\n"
        "t = torch.arange(3.)\nt.apply_(lambda v: v * 10)\nprint(t)\n"
        "print(torch.hann_window(4), torch.gcd(torch.tensor([12]), torch.tensor([8])))\n")
    assert code == 0, err
    assert out.splitlines() == [
        "tensor([2., 2.])", "OptimizedModule(",
        "  (_orig_mod): Linear(in_features=2, out_features=1, bias=True)", ")",
        "['_orig_mod.weight', '_orig_mod.bias']", "2", "tensor([ 0., 10., 20.])",
        "tensor([0.0000, 0.5000, 1.0000, 0.5000]) tensor([4])"]


ATTACKS = [
    ("f = torch.compile(lambda x: x)\nprint(f.__wrapped__)", "ForbiddenError"),
    ("f = torch.compile(lambda x: x)\nprint(f.__globals__)", "ForbiddenError"),
    ("f = torch.compile(lambda x: x)\nprint(getattr(f, '__globals__'))", None),
    ("m = torch.compile(torch.nn.Linear(1, 1))\nprint(m._orig_mod)", "ForbiddenError"),
    ("m = torch.compile(torch.nn.Linear(1, 1))\nprint(m.forward.__func__)", "ForbiddenError"),
    ("m = torch.compile(torch.nn.Linear(1, 1))\nprint(m.__dict__)", "ForbiddenError"),
    ("torch.compile(open)", "ForbiddenError"),
    ("compile(lambda x: x)", "ForbiddenError"),
    ("f = compile\nf('1', 'f', 'eval')", "ForbiddenError"),
    ("torch.compile(eval)('1')", None),
    ("torch.compile(__import__)('os')", None),
    ("torch.compile(exec)('1')", None),
    ("torch.compile(mode=None)(open)", "ForbiddenError"),
    ("print(torch._compile)", "ForbiddenError"),
    ("print(torch.testing.np)", "AttributeError"),
    ("print(torch.testing.warnings)", "AttributeError"),
    ("print(torch.testing.collections)", "AttributeError"),
    ("print(torch.testing.Tensor)", "AttributeError"),
    ("print(torch.testing._dtypes)", "ForbiddenError"),
    ("torch.testing.assert_close(1, 2, msg=lambda m: m.__class__)", "ForbiddenError"),
    ("def loop(m):\n    return loop(m)\ntorch.testing.assert_close(1, 2, msg=loop)", None),
    ("t = torch.ones(2)\nt.apply_(lambda v: v.__class__)", "ForbiddenError"),
    ("t = torch.ones(2)\nt.map_(torch.ones(2), lambda a, b: a.__globals__)", "ForbiddenError"),
    ("t = torch.ones(2)\nt.map2_(t, t, lambda a, b, c: b.__class__.__subclasses__())",
     "ForbiddenError"),
    ("t = torch.ones(2)\nt.apply_(open)", "ForbiddenError"),
    ("t = torch.ones(2)\nt.apply_(eval)", None),
    ("def spin(v):\n    while True:\n        v = v\ntorch.ones(2).apply_(spin)", None),
    ("def spin(x):\n    while True:\n        x = x\nf = torch.compile(spin)\nf(1)", None),
]


@pytest.mark.parametrize("src,kind", ATTACKS)
def test_attack_is_refused(src, kind):
    code, out, err = run(src)
    assert code in (1, 2), (src, code, out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    assert err.startswith("attack.grad:"), err
    if kind is not None:
        assert f": {kind}: " in err.splitlines()[0], err
