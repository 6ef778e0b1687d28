"""torch.func's refusals are per-thread state read by the Tensor methods concerned, not
methods swapped on the Tensor class: they apply alike to plain Python and to a `gradcli
run` program, a second thread running while a transform runs sees nothing of it, and
after any transform (also one that raised) Tensor, torch and torch.autograd.functional
hold the objects they held before. Texts compared with PyTorch's."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

import gradcli.torch as gt
from gradcli.engine import tensor as tensor_mod
from gradcli.torch import func_guards

torch = pytest.importorskip("torch")

# each case is one expression; the program prints what became of each
CASES = [
    "grad(lambda u: u.requires_grad_().sum())(x)",
    "grad(lambda u: (u * 2).retain_grad() or u.sum())(x)",
    "grad(lambda u: torch.autograd.functional.jacobian(lambda a: a * 2, u).sum())(x)",
    "vmap(lambda u: torch.autograd.functional.vjp(lambda a: a * 2, u)[0])(x)",
    "vmap(lambda t: t + (1 if t > 0 else 2))(x)",
    "vmap(lambda t: t.item())(x)",
    "vmap(lambda t: t * float(t))(x)",
    "vmap(lambda t: t * int(t))(x)",
    "vmap(lambda t: t.tolist())(x)",
    "vmap(lambda t: torch.zeros(()).mul_(t))(x)",
    "vmap(lambda t: torch.zeros(()).copy_(t))(x)",
    "vmap(mul_into_zeros)(x)",
    "vmap(lambda t: t * torch.tensor(2.0).item())(x)",
    "vmap(lambda t: t.clone().mul_(2))(x)",
    "grad(lambda u: u.sin().sum() * float(u.sum()))(x)",
    "jacrev(lambda u: u.detach().requires_grad_(False) * u)(x)",
]
PROGRAM = """\
import torch
from torch.func import grad, jacrev, vmap
x = torch.tensor([1.0, -2.0, 3.0])
def mul_into_zeros(t):
    z = torch.zeros(())
    z *= t
    return z
cases = [
{cases}
]
for i, case in enumerate(cases):
    try:
        case()
        print(i, "ok")
    except RuntimeError as e:
        print(i, "RuntimeError", str(e))
"""


def _source() -> str:
    return PROGRAM.format(cases="\n".join(f"    lambda: {c}," for c in CASES))


def _in_python(module) -> list[str]:
    """The program's lines, run as plain Python with `module` as torch."""
    import contextlib
    import io

    body = _source().split("\n", 2)[2]  # (without the two import lines)
    out = io.StringIO()
    names = {"torch": module, "grad": module.func.grad, "jacrev": module.func.jacrev,
             "vmap": module.func.vmap}
    with contextlib.redirect_stdout(out):
        exec(compile(body, "program", "exec"), names)  # noqa: S102 - our own test source
    return out.getvalue().splitlines()


def test_refusals_are_pytorchs_in_python_and_in_a_program(tmp_path):
    expected = _in_python(torch)
    assert sum("RuntimeError" in line for line in expected) >= 10  # (the cases do refuse)
    assert _in_python(gt) == expected
    program = tmp_path / "refusals.grad"
    program.write_text(_source())
    done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected


def _other_thread_work(m) -> list:
    """What a thread does with its own tensors: conversions, requires_grad_/retain_grad,
    in-place writes of one tensor into another, comparisons, autograd.functional."""
    t = m.tensor([1.5])
    leaf = m.tensor([1.0, 2.0]).requires_grad_()
    y = leaf * 2
    y.retain_grad()
    y.sum().backward()
    z = m.zeros(1)
    z *= t
    jac = m.autograd.functional.jacobian(lambda a: a * 3, m.ones(2))
    m.manual_seed(0)  # (random ops: a vmap's randomness mode is its own thread's)
    drawn = [m.randn(2).tolist(), m.ones(2).normal_().tolist(),
             m.nn.functional.rrelu(m.ones(2)).tolist()]
    return [drawn, t.item(), bool(t > 0), float(t), int(t), t.tolist(), t.numpy().tolist(),
            leaf.grad.tolist(), y.grad.tolist(), z.tolist(), jac.tolist(),
            [1, 2, 3][m.tensor(1)], m.nonzero(m.tensor([0.0, 2.0])).tolist()]


@pytest.mark.parametrize("transform", ["vmap", "grad", "jacfwd"])
def test_a_second_thread_is_unaffected_while_a_transform_runs(transform):
    started, release = threading.Event(), threading.Event()
    failures = []

    def f(u):
        started.set()
        if not release.wait(60):  # (the other thread's work happens while f runs)
            failures.append("never released")
        return u.sin().sum() if transform == "grad" else u.sin()

    def run_transform():
        try:
            getattr(gt.func, transform)(f)(gt.ones(2) if transform == "grad" else gt.ones(2, 3))
        except Exception as err:  # noqa: BLE001 - reported below
            failures.append(repr(err))

    runner = threading.Thread(target=run_transform)
    runner.start()
    try:
        assert started.wait(60)
        assert func_guards.STATE.kinds == []  # (this thread runs no transform)
        assert tensor_mod.TRANSFORM_GUARD is not None  # (another thread does)
        got = _other_thread_work(gt)
    finally:
        release.set()
        runner.join(60)
    assert failures == []
    assert got == _other_thread_work(torch)
    assert tensor_mod.TRANSFORM_GUARD is None


def test_two_threads_each_in_their_own_vmap():
    """Each thread's vmap batches its own tensors only: one thread's refusal is its own."""
    barrier = threading.Barrier(2, timeout=60)
    results = {}

    def worker(name, fn):
        def body(t):
            barrier.wait()  # (both vmaps are running)
            try:
                return fn(t)
            finally:
                barrier.wait()  # (neither ends before the other has converted)
        try:
            results[name] = ("ok", gt.vmap(body)(gt.ones(1)).tolist())
        except RuntimeError as err:
            results[name] = ("RuntimeError", str(err))

    threads = [threading.Thread(target=worker, args=("item", lambda t: t.item() + t)),
               threading.Thread(target=worker, args=("fine", lambda t: t * gt.tensor(2.0).item()))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert results["fine"] == ("ok", [2.0])
    assert results["item"] == ("RuntimeError", func_guards.ITEM)


def _snapshot():
    return (dict(vars(gt.Tensor)), dict(vars(gt)), dict(vars(gt.autograd.functional)),
            dict(vars(gt.func)))


@pytest.mark.parametrize("run", [
    lambda: gt.func.grad(lambda u: u.sin().sum())(gt.ones(2)),
    lambda: gt.func.grad(lambda u: u.requires_grad_().sum())(gt.ones(2)),
    lambda: gt.func.jacrev(lambda u: u.retain_grad() or u)(gt.ones(2)),
    lambda: gt.func.jacfwd(lambda u: u * float(u.sum()))(gt.ones(2)),
    lambda: gt.func.hessian(lambda u: (u ** 3).sum())(gt.ones(2)),
    lambda: gt.func.vjp(lambda u: u.exp(), gt.ones(2))[1](gt.ones(2)),
    lambda: gt.func.jvp(lambda u: u.exp(), (gt.ones(2),), (gt.ones(2),)),
    lambda: gt.vmap(lambda t: t.item())(gt.ones(2)),
    lambda: gt.vmap(gt.func.grad(lambda u: u.sin() * (u > 0)))(gt.ones(2)),
    lambda: gt.vmap(lambda t: gt.vmap(lambda u: u * t.tolist())(gt.ones(2)))(gt.ones(2)),
], ids=["grad", "grad_refused", "jacrev_refused", "jacfwd_refused", "hessian", "vjp", "jvp",
        "vmap_refused", "vmap_of_grad", "nested_vmap_refused"])
def test_after_a_transform_everything_is_the_same_object(run):
    before = _snapshot()
    try:
        run()
    except RuntimeError:
        pass
    after = _snapshot()
    for was, now in zip(before, after, strict=True):
        assert set(was) == set(now)
        assert {k for k, v in now.items() if was[k] is not v} == set()
    assert tensor_mod.TRANSFORM_GUARD is None
    assert func_guards.STATE.kinds == [] and func_guards.STATE.vmaps == []
    assert func_guards.STATE.marks == {}


def test_the_refusing_methods_are_not_swapped_during_a_transform():
    """item, __bool__, tolist, numpy, requires_grad_, retain_grad... are the class's own
    methods inside a transform too: the refusal reads the thread's state."""
    names = ("item", "__bool__", "__float__", "__int__", "__index__", "tolist", "numpy",
             "requires_grad_", "retain_grad")
    outside = {n: gt.Tensor.__dict__[n] for n in names}
    functional = dict(vars(gt.autograd.functional))
    seen = {}

    def f(u):
        seen["methods"] = {n: gt.Tensor.__dict__[n] for n in names}
        seen["functional"] = dict(vars(gt.autograd.functional))
        return u.sin().sum()

    gt.func.grad(f)(gt.ones(2))
    assert seen["methods"] == outside
    assert all(seen["functional"][k] is v for k, v in functional.items())


def test_gradcli_internals_still_make_leaves_inside_a_transform():
    """Double backward formulas (detach().requires_grad_() inside gradcli) and factories'
    requires_grad= run under a transform; only the user's requires_grad_ is refused."""
    def f(u):
        made = gt.tensor([1.0, 2.0], requires_grad=True)
        return (gt.nn.functional.softplus(u) * made).sum()

    def g(m):
        return m.func.hessian(lambda u: m.nn.functional.softplus(u).sum())(m.tensor([0.5, -1.0]))

    assert gt.func.grad(f)(gt.ones(2)).tolist() == pytest.approx(
        torch.func.grad(lambda u: (torch.nn.functional.softplus(u) *
                                   torch.tensor([1.0, 2.0], requires_grad=True)).sum())(
            torch.ones(2)).tolist())
    assert gt.tensor(g(gt).tolist()).allclose(gt.tensor(g(torch).tolist()))
