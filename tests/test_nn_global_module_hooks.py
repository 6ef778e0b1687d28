"""Global module hooks (torch.nn.modules.module.register_module_*_hook), forward hooks
with always_call, and module backward hooks around outputs that are not tensors or tuples,
checked against PyTorch: each program runs in a fresh process under PyTorch, as plain
Python on gradcli.torch and under `gradcli run` (global hooks are process-wide state, so
no program runs inside the test process), and every side must print the same."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

CALL_ORDER = """
import torch
from torch import nn
from torch.nn.modules.module import (
    register_module_forward_pre_hook, register_module_forward_hook,
    register_module_full_backward_hook, register_module_full_backward_pre_hook,
    register_module_backward_hook)

torch.manual_seed(0)
log = []
def pre(m, args):
    log.append(("pre", type(m), len(args)))
def post(m, args, out):
    log.append(("post", type(m), tuple(out.shape)))
def post_kwargs(m, args, kwargs, out):
    log.append(("post-kwargs", type(m), sorted(kwargs)))
def full(m, grad_in, grad_out):
    log.append(("full", type(m), [None if g is None else tuple(g.shape) for g in grad_in],
                [tuple(g.shape) for g in grad_out]))
def full_pre(m, grad_out):
    log.append(("full-pre", type(m), len(grad_out)))
handles = [register_module_forward_pre_hook(pre), register_module_forward_hook(post),
           register_module_forward_hook(post_kwargs, with_kwargs=True),
           register_module_full_backward_hook(full),
           register_module_full_backward_pre_hook(full_pre)]
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
model[0].register_forward_hook(lambda m, a, o: log.append(("own-post", type(m))))
model[0].register_forward_pre_hook(lambda m, a: log.append(("own-pre", type(m))))
x = torch.randn(2, 3, requires_grad=True)
model(x).sum().backward()
for entry in log:
    print(entry)
print(x.grad)
for handle in handles:
    handle.remove()
log.clear()
model(x)
print(log)
try:
    register_module_backward_hook(full)
except RuntimeError as e:
    print("RuntimeError:", e)
"""

REGISTRATION = """
import torch
from torch import nn
from torch.nn.modules.module import (
    register_module_parameter_registration_hook, register_module_module_registration_hook,
    register_module_buffer_registration_hook)

seen = []
def on_param(m, name, p):
    seen.append(("param", type(m), name, tuple(p.shape)))
def on_module(m, name, sub):
    seen.append(("module", type(m), name, type(sub)))
def on_buffer(m, name, b):
    seen.append(("buffer", type(m), name, None if b is None else tuple(b.shape)))
    if b is not None:
        return b * 2
handles = [register_module_parameter_registration_hook(on_param),
           register_module_module_registration_hook(on_module),
           register_module_buffer_registration_hook(on_buffer)]
net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
net.extra = nn.Tanh()
net.add_module("more", nn.ReLU())
net[1].running_mean = torch.ones(2)
net[1].register_buffer("mine", torch.ones(3))
print(net[1].running_mean, net[1].mine, net[1].running_var)
for entry in seen:
    print(entry)
for handle in handles:
    handle.remove()
seen.clear()
nn.Linear(1, 1)
print(seen)
"""

ALWAYS_CALL = """
import torch
from torch import nn
from torch.nn.modules.module import (register_module_forward_hook,
                                     register_module_forward_pre_hook)

def stop(m, args):
    raise ValueError("stopped in a pre-hook")
def always(m, args, out):
    print("global always_call hook ran:", type(m), out)
def broken(m, args, out):
    raise KeyError("the hook's own error")
first = register_module_forward_hook(always, always_call=True)
second = register_module_forward_pre_hook(stop)
lin = nn.Linear(1, 1)
try:
    lin(torch.ones(1))
except ValueError as e:
    print("ValueError:", e)
first.remove()
second.remove()
print(lin(torch.ones(1)).shape)

own = nn.Linear(1, 1)
own.register_forward_hook(lambda m, a, o: print("own always_call hook ran:", o), always_call=True)
own.register_forward_hook(broken, always_call=True)
own.register_forward_pre_hook(stop)
try:
    own(torch.ones(1))
except ValueError as e:
    print("ValueError:", e)

class Twice(nn.Module):
    def forward(self, x):
        return x * 2
twice = Twice()
calls = []
twice.register_forward_hook(lambda m, a, o: calls.append("hook"), always_call=True)
twice(torch.ones(1))
print(calls)
"""

NON_TENSOR_OUTPUTS = """
import collections
import torch
from torch import nn

class Listed(nn.Module):
    def forward(self, x):
        return [x * 2, x * 3]
class Named(nn.Module):
    def forward(self, x):
        return Pair(x * 2, x * 3)
Pair = collections.namedtuple("Pair", "a b")
x = torch.ones(2, requires_grad=True)
listed = Listed()
listed.register_full_backward_hook(lambda m, gi, go: print("listed hook", gi, go))
out = listed(x)
print(out[0].grad_fn.name())
(out[0] + out[1]).sum().backward()
print(x.grad)
named = Named()
named.register_full_backward_hook(lambda m, gi, go: print("named hook", gi, go))
pair = named(x)
print(type(pair), type(pair.a.grad_fn), pair.b.grad_fn.name())
(pair.a + pair.b).sum().backward()
print(x.grad)
"""

PROGRAMS = {"call_order": CALL_ORDER, "registration": REGISTRATION,
            "always_call": ALWAYS_CALL, "non_tensor_outputs": NON_TENSOR_OUTPUTS}

ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _run(args, cwd) -> str:
    proc = subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return ADDRESS.sub(" at 0x", proc.stdout)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_prints_what_pytorch_prints(name, tmp_path):
    source = textwrap.dedent(PROGRAMS[name])
    program = tmp_path / f"{name}.py"
    program.write_text(source)
    theirs = _run([sys.executable, str(program)], tmp_path)
    plain = tmp_path / f"{name}_on_gradcli.py"
    plain.write_text("import sys\nimport gradcli.torch\nsys.modules['torch'] = gradcli.torch\n"
                     "sys.modules['torch.nn'] = gradcli.torch.nn\n"
                     "import gradcli.torch.nn.modules.module\n"
                     "sys.modules['torch.nn.modules.module'] = gradcli.torch.nn.modules.module\n"
                     + source)
    assert _run([sys.executable, str(plain)], tmp_path) == theirs
    assert _run([sys.executable, "-m", "gradcli", "run", str(program)], tmp_path) == theirs


def test_global_hooks_end_with_their_program(tmp_path):
    """`gradcli run a b`: the hooks a registered (and never removed) do not run in b."""
    first = tmp_path / "first.py"
    first.write_text("import torch\nfrom torch.nn.modules.module import "
                     "register_module_forward_hook, register_module_full_backward_hook\n"
                     "register_module_forward_hook(lambda m, a, o: print('hooked', type(m)))\n"
                     "register_module_full_backward_hook(lambda m, gi, go: None)\n"
                     "torch.nn.Identity()(torch.ones(1))\n")
    second = tmp_path / "second.py"
    second.write_text("import torch\nfrom torch.nn.modules.module import "
                      "register_module_backward_hook\n"
                      "print(torch.nn.Identity()(torch.ones(1)))\n"
                      "register_module_backward_hook(lambda m, gi, go: None)\nprint('mixed ok')\n")
    out = _run([sys.executable, "-m", "gradcli", "run", str(first), str(second)], tmp_path)
    assert out.count("hooked") == 1
    assert "tensor([1.])\nmixed ok" in out


def test_global_tables_are_out_of_a_programs_reach(tmp_path):
    """The tables themselves are `_` names: a program registers and removes hooks only
    through the public functions and handles."""
    program = tmp_path / "reach.py"
    program.write_text("import torch\nimport torch.nn.modules.module as M\n"
                       "print(M._global_forward_hooks)\n")
    proc = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)],
                          capture_output=True, text=True, env=ENV, timeout=300)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "attribute '_global_forward_hooks' is not allowed" in proc.stderr
