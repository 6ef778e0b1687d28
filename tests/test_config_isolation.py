"""Process-wide configuration and the test session: conftest's per-test fixture puts
gradcli's and PyTorch's configuration back after each test, so a test that leaves the
default dtype, determinism, matmul precision, print options, grad mode or an autocast
region changed cannot change the tests after it. (The two tests below run in file order:
the first leaves everything changed, the second sees the defaults.) And the language's
own rule, as a Python session's: the state persists across one session's inputs; a new
program (reset_engine) starts from the defaults."""

from __future__ import annotations

import io

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as G  # noqa: E402
from gradcli.engine import autocast_state  # noqa: E402
from gradcli.lang import Session  # noqa: E402
from gradcli.lang.session import run_source  # noqa: E402


def _state(lib):
    return (str(lib.get_default_dtype()), lib.is_grad_enabled(),
            lib.are_deterministic_algorithms_enabled(), lib.get_float32_matmul_precision(),
            lib.is_autocast_enabled("cpu"), repr(lib.ones(2) / 3))


DEFAULTS = ("torch.float32", True, False, "highest", False, "tensor([0.3333, 0.3333])")


def test_1_leaves_the_configuration_changed():
    for lib in (G, torch):
        assert _state(lib) == DEFAULTS
        lib.set_default_dtype(lib.float64)
        lib.use_deterministic_algorithms(True)
        lib.set_float32_matmul_precision("medium")
        lib.set_printoptions(precision=2)
        lib.autocast("cpu").__enter__()  # (never left)
        lib.set_grad_enabled(False)
    assert autocast_state.ENABLED == 1


def test_2_sees_the_defaults_again():
    for lib in (G, torch):
        assert _state(lib) == DEFAULTS
    assert autocast_state.ENABLED == 0 and autocast_state.STATE.nesting == 0


def test_state_persists_across_one_sessions_inputs_and_resets_per_program():
    out = io.StringIO()
    session = Session(stdout=out)
    session.run("torch.set_default_dtype(torch.float64)\n", "<input-1>")
    session.run("print(torch.ones(1).dtype)\n", "<input-2>")
    assert out.getvalue() == "torch.float64\n"
    out = io.StringIO()
    run_source("print(torch.ones(1).dtype)\n", "<prog>", stdout=out)
    assert out.getvalue() == "torch.float32\n"


def test_a_new_program_starts_from_the_defaults():
    first = ("torch.use_deterministic_algorithms(True)\n"
             "torch.set_float32_matmul_precision('medium')\n"
             "torch.set_printoptions(precision=2)\n")
    run_source(first, "<prog-1>", stdout=io.StringIO())
    out = io.StringIO()
    run_source("print(torch.are_deterministic_algorithms_enabled(), "
               "torch.get_float32_matmul_precision(), torch.ones(1) / 3)\n", "<prog-2>",
               stdout=out)
    assert out.getvalue() == "False highest tensor([0.3333])\n"
