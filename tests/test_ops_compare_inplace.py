"""The in-place comparisons (eq_ ne_ lt_ le_ gt_ ge_ and their aliases) compared with
PyTorch: values in self's dtype, the recorded nodes (EqBackward0 against a number,
EqBackward1 against a tensor) with zero gradients, forward AD's zero tangent, errors;
and as gradcli programs use them (no way out of the sandbox through them)."""

from __future__ import annotations

import io

import pytest
from scenario_log import attempt, same

from gradcli.lang import Limits
from gradcli.lang.session import run_source

torch = pytest.importorskip("torch")

NAMES = ["eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_",
         "less_equal_", "not_equal_"]


@pytest.mark.parametrize("name", NAMES)
def test_values_nodes_and_gradients(name):
    def scenario(t, log):
        x = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        other = t.tensor([1.0, 5.0, 0.0], requires_grad=True)
        y = x * 1
        getattr(y, name)(other)
        log.append((y.tolist(), y.grad_fn.name(), y._version,
                    [type(f).__name__ for f, _ in y.grad_fn.next_functions]))
        (y * 3).sum().backward()
        log.append((x.grad.tolist(), other.grad.tolist()))
        z = x * 1
        getattr(z, name)(2)
        log.append((z.tolist(), z.grad_fn.name()))
        log.append(getattr(t.tensor([1, 2, 3]), name)(2.5).tolist())
        log.append(getattr(t.tensor([True, False]), name)(0.5).tolist())
        log.append(getattr(t.tensor([[1.0, 2.0], [3.0, 4.0]]), name)(t.tensor([1.0, 4.0])).tolist())
        attempt(log, lambda: getattr(t.ones(2), name)(t.ones(3, 2)))
        attempt(log, lambda: getattr(t.ones(2, requires_grad=True), name)(1))
        fwAD = t.autograd.forward_ad
        with fwAD.dual_level():
            dual = fwAD.make_dual(t.tensor([1.0, 2.0]), t.tensor([3.0, 4.0]))
            getattr(dual, name)(t.tensor([1.0, 0.0]))
            log.append(fwAD.unpack_dual(dual).tangent.tolist())

    same(scenario)


def test_wrong_operand_type_message():
    def scenario(t, log):
        attempt(log, lambda: t.ones(2).eq_("a"))

    same(scenario)


def run(src):
    out, err = io.StringIO(), io.StringIO()
    code = run_source(src, "cmp.grad", limits=Limits(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_programs_use_them():
    code, out, err = run("x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
                         "y = x * 1\n"
                         "y.ge_(2)\n"
                         "print(y)\n"
                         "m = y.lt_\n"
                         "print(m(torch.tensor([1., 1., 1.])))\n")
    assert code == 0, err
    assert "tensor([0., 1., 1.], grad_fn=<GeBackward0>)" in out
    assert "tensor([1., 0., 0.], grad_fn=<LtBackward1>)" in out


@pytest.mark.parametrize("attack", ["torch.ones(2).eq_.__globals__",
                                    "torch.ones(2).lt_.__code__",
                                    "torch.ones(2).ge_.__closure__",
                                    "getattr(torch.ones(2).ne_, '__glo' + 'bals__')"])
def test_programs_cannot_leave_through_them(attack):
    code, out, err = run("print(" + attack + ")\n")
    assert code != 0
    assert "Traceback" not in err and "{" not in out
