"""The engine's lower modules reach the modules above them only through declared slots
(gradcli/engine/late.py), filled by the modules that own the functions. These tests
check that every slot is filled once the engine is imported, whichever engine module a
program imports first, and that a slot cannot be filled with an undeclared name."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import gradcli.engine
from gradcli.engine.late import Slots


def _engine_modules():
    for info in pkgutil.walk_packages(gradcli.engine.__path__, "gradcli.engine."):
        yield importlib.import_module(info.name)


def test_every_declared_slot_is_filled():
    found = 0
    for module in _engine_modules():
        for value in vars(module).values():
            if isinstance(value, Slots):
                found += 1
                for name in value._names:
                    assert callable(getattr(value, name)) or name == "PACKED", (
                        f"{module.__name__}: slot {name} is empty")
    assert found >= 3  # dtypes, node, tensor


@pytest.mark.parametrize("first", ["gradcli.engine.tensor", "gradcli.engine.node",
                                   "gradcli.engine.dtypes", "gradcli.engine.formatting",
                                   "gradcli.engine.saved_hooks"])
def test_any_engine_module_imported_first_gives_a_whole_engine(first):
    program = (f"import {first}\n"
               "import numpy as np\n"
               "from gradcli.engine.tensor import make\n"
               "x = make(np.array([1.0, 2.0]), True)\n"
               "y = x * x\n"
               "y.sum().backward()\n"
               "print(repr(y), repr(x.grad))\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("tensor([1., 4.], dtype=torch.float64, grad_fn=<MulBackward0>) "
                                  "tensor([2., 4.], dtype=torch.float64)")


def test_slots_take_only_their_declared_names():
    slots = Slots("owner", "f")
    with pytest.raises(RuntimeError, match="owner.f is provided by a module that is not loaded"):
        slots.f  # noqa: B018
    with pytest.raises(AttributeError, match="declares no slot"):
        slots.install(g=len)
    with pytest.raises(AttributeError, match="install"):
        slots.f = len
    slots.install(f=len)
    assert slots.f is len
