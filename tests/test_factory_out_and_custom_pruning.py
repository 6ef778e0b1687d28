"""Two things tutorial programs lean on, compared live with PyTorch:

- a creation function writing into an existing tensor (`torch.rand(2, 2, out=c)`, as the
  tensors chapters show "creation works with out= too"): the random factories draw in
  out's dtype, the factories resize out silently (arange with its own warning);
- a pruning method of the program's own (a subclass of prune.BasePruningMethod with its
  compute_mask), applied through the class's `apply` classmethod, and what such a
  subclass still cannot reach."""

from __future__ import annotations

import io
import warnings

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402
from gradcli.lang import Limits  # noqa: E402
from gradcli.lang.session import run_source  # noqa: E402


def _both(fn):
    return fn(torch), fn(gt)


def _outcome(fn):
    """fn()'s value, or its error's type and message; warnings' texts alongside."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn()
        except Exception as err:  # noqa: BLE001 - the error is the outcome compared
            value = (type(err).__name__, str(err))
    return value, [str(w.message) for w in caught]


# ------------------------------------------------------------------ creation with out=
@pytest.mark.parametrize("case", [
    "rand_same_shape", "randn_resized", "rand_double_out", "randint_int32_out",
    "randperm_float_out", "rand_into_a_column_view",
])
def test_random_factory_writes_its_draw_into_out(case):
    def run(lib):
        lib.manual_seed(0)
        if case == "rand_same_shape":
            c = lib.zeros(2, 2)
            r = lib.rand(2, 2, out=c)
            return str(c), r is c, str(lib.rand(2))  # the generator moved on by 4 draws
        if case == "randn_resized":
            c = lib.zeros(2, 2)
            lib.randn(3, out=c)
            return str(c), str(c.shape)
        if case == "rand_double_out":
            c = lib.zeros(2, dtype=lib.float64)
            lib.rand(3, out=c)
            return str(c)
        if case == "randint_int32_out":
            c = lib.zeros(5, dtype=lib.int32)
            lib.randint(0, 10, (3,), out=c)
            return str(c)
        if case == "randperm_float_out":
            c = lib.zeros(5)
            lib.randperm(4, out=c)
            return str(c)
        base = lib.zeros(2, 2)
        lib.rand(2, out=base[:, 0])
        return str(base)
    ref, got = _both(lambda lib: _outcome(lambda: run(lib)))
    assert got == ref


@pytest.mark.parametrize("case", ["integer_out", "dtype_mismatch", "out_requires_grad",
                                  "randn_out_requires_grad", "randint_out_requires_grad"])
def test_random_factory_out_refusals(case):
    def run(lib):
        if case == "integer_out":
            return lib.rand(2, out=lib.zeros(2, dtype=lib.int64))
        if case == "dtype_mismatch":
            return lib.rand(2, out=lib.zeros(2), dtype=lib.float64)
        needs_grad = lib.zeros(2, requires_grad=True)
        if case == "out_requires_grad":
            return lib.rand(2, out=needs_grad)
        if case == "randn_out_requires_grad":
            return lib.randn(2, out=needs_grad)
        return lib.randint(0, 3, (2,), out=needs_grad)
    ref, got = _both(lambda lib: _outcome(lambda: run(lib)))
    assert got == ref
    assert isinstance(ref[0], tuple)


@pytest.mark.parametrize("call", [
    lambda lib, c: lib.zeros(3, out=c), lambda lib, c: lib.ones(2, 3, out=c),
    lambda lib, c: lib.full((3,), 2.5, out=c), lambda lib, c: lib.linspace(0, 1, 5, out=c),
    lambda lib, c: lib.arange(5, out=c), lambda lib, c: lib.arange(0, 1, 0.25, out=c),
    lambda lib, c: lib.arange(4, out=c), lambda lib, c: lib.linspace(0, 1, 4, out=c),
])
def test_factory_out_resizes_with_pytorch_warnings(call):
    """The factories resize out themselves (no "An output with one or more elements was
    resized" warning); arange warns in its own words when the count changes."""
    def run(lib):
        c = lib.zeros(2, 2)
        r = call(lib, c)
        return str(c), r is c
    ref, got = _both(lambda lib: _outcome(lambda: run(lib)))
    assert got == ref


def test_factory_out_in_a_program_matches_python():
    src = ("import torch\ntorch.manual_seed(0)\nc = torch.zeros(2, 2)\n"
           "d = torch.matmul(torch.ones(2, 2), torch.ones(2, 2), out=c)\nprint(c, d is c)\n"
           "torch.rand(2, 2, out=c)\nprint(c)\ntorch.zeros(3, out=c)\nprint(c)\n")
    out, err = io.StringIO(), io.StringIO()
    assert run_source(src, "out.grad", limits=Limits(), stdout=out, stderr=err) == 0, err.getvalue()
    torch.manual_seed(0)
    c = torch.zeros(2, 2)
    d = torch.matmul(torch.ones(2, 2), torch.ones(2, 2), out=c)
    want = [f"{c} {d is c}"]
    torch.rand(2, 2, out=c)
    want.append(str(c))
    torch.zeros(3, out=c)
    want.append(str(c))
    assert out.getvalue() == "\n".join(want) + "\n"
    assert err.getvalue() == ""


@pytest.mark.parametrize("case", ["numbers_double_out", "numbers_resized", "tensor_mean",
                                  "integer_out", "out_requires_grad", "mean_requires_grad"])
def test_normal_writes_into_out(case):
    def run(lib):
        lib.manual_seed(0)
        if case == "numbers_double_out":
            c = lib.zeros(3, dtype=lib.float64)
            r = lib.normal(0.0, 1.0, (3,), out=c)
            return str(c), r is c
        if case == "numbers_resized":
            c = lib.zeros(2, 2)
            lib.normal(2.0, 0.5, (3,), out=c)
            return str(c)
        if case == "tensor_mean":
            c = lib.zeros(3)
            r = lib.normal(lib.ones(3), 2.0, out=c)
            return str(c), r is c, str(lib.randn(2))
        if case == "integer_out":
            return lib.normal(0.0, 1.0, (2,), out=lib.zeros(2, dtype=lib.int64))
        if case == "out_requires_grad":
            return lib.normal(0.0, 1.0, (2,), out=lib.zeros(2, requires_grad=True))
        return lib.normal(lib.ones(2, requires_grad=True), 1.0, out=lib.zeros(2))
    ref, got = _both(lambda lib: _outcome(lambda: run(lib)))
    assert got == ref


# ------------------------------------------------------------------ custom pruning methods
def _every_third_program(torch_name: str) -> str:
    return f"""import {torch_name} as torch
import {torch_name}.nn.utils.prune as prune
torch.manual_seed(0)

class EveryThird(prune.BasePruningMethod):
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[1::3] = 0
        return mask

lin = torch.nn.Linear(3, 4)
method = EveryThird.apply(lin, 'weight')
print(lin.weight_mask)
print(lin.weight)
print(sorted(name for name, _ in lin.named_parameters()))
print(isinstance(method, prune.BasePruningMethod), prune.is_pruned(lin))
prune.l1_unstructured(lin, 'weight', amount=2)
print(lin.weight_mask)
out = lin(torch.ones(1, 3))
print(out)
prune.remove(lin, 'weight')
print(sorted(name for name, _ in lin.named_parameters()))
print(lin.weight)
"""


def test_pruning_method_subclass_runs_as_in_pytorch():
    ns_out = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(ns_out):
        exec(compile(_every_third_program("torch"), "ref.py", "exec"), {})  # noqa: S102
    out, err = io.StringIO(), io.StringIO()
    code = run_source(_every_third_program("torch"), "prune.grad", limits=Limits(),
                      stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert out.getvalue() == ns_out.getvalue()


ATTACKS = [
    # the facade's private bookkeeping on the method object stays closed
    ("    def compute_mask(self, t, default_mask):\n"
     "        print(getattr(self, '_tensor_name'))\n"
     "        return default_mask\n"
     "EveryOther.apply(torch.nn.Linear(2, 2), 'weight')\n", 1, "is not allowed"),
    ("    def compute_mask(self, t, default_mask):\n"
     "        return self._tensor_name\n", 2, "is not allowed"),
    ("    def compute_mask(self, t, default_mask):\n        return default_mask\n"
     "EveryOther.apply.__func__\n", 2, "is not allowed"),
    ("    def compute_mask(self, t, default_mask):\n        return default_mask\n"
     "print(vars(EveryOther.apply(torch.nn.Linear(2, 2), 'weight')))\n", 2, "not available"),
    # apply on something that is not a module: PyTorch's AttributeError, no traceback
    ("    def compute_mask(self, t, default_mask):\n        return default_mask\n"
     "EveryOther.apply([1, 2], 'weight')\n", 1, "'list' object has no attribute"),
    # a private method of its own is still refused in the class body
    ("    def _helper(self):\n        return 1\n", 2, "is not allowed"),
]


@pytest.mark.parametrize("body, code, fragment", ATTACKS)
def test_pruning_method_subclass_stays_in_the_sandbox(body, code, fragment):
    src = ("import torch\nimport torch.nn.utils.prune as prune\n"
           "class EveryOther(prune.BasePruningMethod):\n    PRUNING_TYPE = 'unstructured'\n"
           + body)
    out, err = io.StringIO(), io.StringIO()
    rc = run_source(src, "attack.grad", limits=Limits(), stdout=out, stderr=err)
    assert rc == code, (rc, out.getvalue(), err.getvalue())
    assert fragment in err.getvalue(), err.getvalue()
    assert "Traceback" not in err.getvalue()


def test_other_host_classes_stay_refused_as_bases():
    src = ("import torch\nimport torch.nn.utils.prune as prune\n"
           "class C(prune.PruningContainer.__base__):\n    pass\n")
    out, err = io.StringIO(), io.StringIO()
    assert run_source(src, "attack.grad", limits=Limits(), stdout=out, stderr=err) == 2
    src = "import torch\nclass C(torch.Tensor):\n    pass\n"
    err = io.StringIO()
    assert run_source(src, "attack.grad", limits=Limits(), stdout=io.StringIO(), stderr=err) == 1
    assert "cannot derive from" in err.getvalue()


# ------------------------------------------------------------------ torch.tensor(range(n))
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(range(5)), lambda lib: lib.tensor(range(0)),
    lambda lib: lib.tensor(range(2, 9, 3), dtype=lib.float64),
    lambda lib: lib.tensor(range(4), requires_grad=True),
])
def test_tensor_from_a_range(make):
    """A range is a sequence like a list (count_to_100 = torch.tensor(range(100)))."""
    ref, got = _both(lambda lib: _outcome(lambda: repr(make(lib))))
    assert got == ref
