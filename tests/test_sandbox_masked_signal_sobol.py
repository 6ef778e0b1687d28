"""Attack tests for issue #23's names a program can now reach: torch.asarray (aliasing a
program's numpy array, never raw memory), torch.cond / torch.while_loop and
func.functionalize (they call program callables), the SobolEngine, masked and windows
modules: a program can use them and cannot reach through them anything the sandbox keeps
from it."""

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
        "import numpy as np\n"
        "a = np.arange(3.0)\n"
        "t = torch.asarray(a)\n"
        "a[0] = 5.0\n"
        "print(t, torch.asarray([1, 2], dtype=torch.float64))\n"
        "print(torch.cond(torch.tensor(True), lambda x: x + 1, lambda x: x - 1, (torch.ones(1),)))\n"
        "print(torch.while_loop(lambda i: i < 3, lambda i: i + 1, (torch.tensor(0),)))\n"
        "e = torch.quasirandom.SobolEngine(2)\n"
        "print(e.draw(2), e)\n"
        "print(torch.masked.sum(torch.ones(3), mask=torch.tensor([True, False, True])))\n"
        "print(torch.func.functionalize(lambda x: x * 2)(torch.ones(1)))\n")
    assert code == 0, err
    assert out.splitlines() == [
        "tensor([5., 1., 2.], dtype=torch.float64) tensor([1., 2.], dtype=torch.float64)",
        "tensor([2.])", "tensor(3)", "tensor([[0.0000, 0.0000],", "        [0.5000, 0.5000]]) "
        "SobolEngine(dimension=2)", "tensor(2.)", "tensor([2.])"]


ATTACKS = [
    ("torch.asarray(b'abcdabcd')", "SyntaxError"),
    ("torch.asarray(bytearray(8))", None),
    ("torch.asarray(memoryview(b'abcd'))", None),
    ("print(torch.asarray(torch.ones(1)).__class__.__subclasses__())", "ForbiddenError"),
    ("torch.cond(True, lambda: open('/etc/passwd'), lambda: 0, ())", "ForbiddenError"),
    ("torch.cond(True, lambda x: x.__class__.__mro__, lambda x: x, (torch.ones(1),))",
     "ForbiddenError"),
    ("torch.cond(True, eval, eval, ('1',))", None),
    ("torch.while_loop(lambda: True, lambda: (), ())", None),
    ("torch.while_loop(lambda i: i.__globals__, lambda i: i, (1,))", "ForbiddenError"),
    ("torch.func.functionalize(open)('/etc/passwd')", "ForbiddenError"),
    ("torch.func.functionalize(lambda: 1).__wrapped__", "ForbiddenError"),
    ("e = torch.quasirandom.SobolEngine(2)\nprint(e._scramble)", "ForbiddenError"),
    ("e = torch.quasirandom.SobolEngine(2)\nprint(e.__dict__)", "ForbiddenError"),
    ("print(torch.quasirandom.np)", None),
    ("print(torch.masked._torch)", "ForbiddenError"),
    ("print(torch.masked._builtins)", "ForbiddenError"),
    ("print(torch.signal.windows._torch)", "ForbiddenError"),
    ("print(torch.signal.windows.math)", None),
    ("print(torch.quasirandom.SobolEngine(21202))", "ValueError"),
]


@pytest.mark.parametrize("src,kind", ATTACKS)
def test_attack_is_refused(src, kind):
    code, out, err = run(src)
    assert code in (1, 2), (src, code, out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    assert err.startswith("attack.grad:"), err
    if kind is not None:
        assert f": {kind}: " in err.splitlines()[0], err
