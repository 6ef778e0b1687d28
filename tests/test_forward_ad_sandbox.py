"""What forward AD adds to the language (torch.autograd.forward_ad, torch.func, a custom
Function's jvp) cannot leave the sandbox: attacks through the new objects end with a
gradcli error and no traceback, and the attribute crawler of tests/test_security_sandbox.py
finds nothing unsafe reachable from them."""

from __future__ import annotations

import io
import types

import pytest
from test_security_sandbox import BUDGET, crawl

from gradcli.lang import Limits, Session
from gradcli.lang.session import run_source

PRELUDE = """\
import torch
import torch.autograd.forward_ad as fwAD
import torch.func
import functorch as ft
from torch.func import jvp, vjp, grad, jacrev, jacfwd, hessian, vmap, functional_call
model = torch.nn.Linear(2, 2)
x = torch.ones(2)
"""

ATTACKS = [
    "fwAD._TANGENTS",
    "fwAD._LEVEL",
    "fwAD._fwad",
    "torch.func._DEPTH",
    "torch.func._fwad",
    "torch.func._swap",
    "fwAD.UnpackedDualTensor._make",
    "fwAD.UnpackedDualTensor._fields",
    "fwAD.dual_level.__enter__",
    "fwAD.dual_level().__exit__(None, None, None)",
    "fwAD.make_dual.__globals__",
    "o, f = vjp(lambda a: a * 2, x)\nf.__globals__",
    "o, f = vjp(lambda a: a * 2, x)\nf.__closure__",
    "grad(lambda a: a.sum()).__wrapped__",
    "grad(lambda a: a.sum()).__globals__",
    "getattr(grad(lambda a: a.sum()), '__wrap' + 'ped__')",
    "with fwAD.dual_level():\n    d = fwAD.make_dual(x, x)\n    fwAD.unpack_dual(d)._asdict()",
    "with fwAD.dual_level():\n    d = fwAD.make_dual(x, x)\n    d._data",
    "functional_call(model, {'__class__': x}, x)",
    "functional_call(model, {'_parameters': x}, x)",
    "functional_call(model, {'forward': x}, x)",
    "functional_call(model, {'__dict__': x}, x)",
    "functional_call(model, {'weight.__class__': x}, x)",
    "functional_call(model, {'_modules.x': x}, x)",
    "class F(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, a):\n"
    "        return a * 2\n"
    "    @staticmethod\n"
    "    def jvp(ctx, t):\n"
    "        return ctx._to_save_forward\n"
    "with fwAD.dual_level():\n    F.apply(fwAD.make_dual(x, x))",
    "ft._MOVED",
    "ft._func",
    "ft.jvp.__globals__",
    "fm, ps, bs = ft.make_functional_with_buffers(model)\nfm._module",
    "fm, ps, bs = ft.make_functional_with_buffers(model)\nfm._names",
    "fm, ps = ft.make_functional(model)\nfm.__call__.__globals__",
    "fm, ps = ft.make_functional(model)\nfm.x = 1",
    "import functorch.compile",
    "from functorch import _src",
    "class F(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, a):\n"
    "        ctx.op = 1\n"
    "        return a * 2\n"
    "F.apply(x)",
]


def _run(src: str):
    out, err = io.StringIO(), io.StringIO()
    code = run_source(PRELUDE + src, "attack.grad", limits=Limits(**BUDGET), stdout=out,
                      stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("src", ATTACKS)
def test_attack_is_refused(src, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(src)
    assert code in (1, 2), (code, out, err)
    assert "Traceback" not in err, err
    assert err.startswith("attack.grad:"), err
    assert not list(tmp_path.iterdir())


def test_tutorial_features_run_in_the_language():
    """The same objects, used as the forward-AD tutorial uses them, work (the refusals
    above are not the language refusing everything)."""
    code, out, err = _run(
        "with fwAD.dual_level():\n"
        "    d = fwAD.make_dual(x, torch.ones(2))\n"
        "    print(fwAD.unpack_dual(d * 3).tangent)\n"
        "print(jvp(lambda a: a ** 2, (x,), (x,))[1])\n"
        "print(functional_call(model, {'weight': torch.ones(2, 2), 'bias': torch.zeros(2)}, x))\n"
        "class E(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, a):\n"
        "        ctx.result = a.exp()\n"
        "        return ctx.result\n"
        "    @staticmethod\n"
        "    def jvp(ctx, t):\n"
        "        out = t * ctx.result\n"
        "        del ctx.result\n"
        "        return out\n"
        "with fwAD.dual_level():\n"
        "    print(fwAD.unpack_dual(E.apply(fwAD.make_dual(x, x))).tangent)\n")
    assert code == 0, err
    assert out == ("tensor([3., 3.])\ntensor([2., 2.])\ntensor([2., 2.])\n"
                   "tensor([2.7183, 2.7183])\n"), out


def test_functorch_as_the_tutorial_uses_it():
    """functorch.jvp and make_functional_with_buffers (deprecated: they warn) run and agree
    with torch.func."""
    code, out, err = _run(
        "fm, params, buffers = ft.make_functional_with_buffers(model)\n"
        "print(len(params), len(buffers), params[0] is model.weight)\n"
        "tangents = tuple([torch.ones_like(p) for p in params])\n"
        "o, t = ft.jvp(lambda ps: fm(ps, buffers, x), (params,), (tangents,))\n"
        "print(torch.allclose(o, model(x)), t)\n"
        "f1, p1 = ft.make_functional(model)\n"
        "print(torch.allclose(f1(p1, x), model(x)))\n")
    assert code == 0, err
    assert out.startswith("2 0 True\nTrue tensor([3., 3.]"), out
    assert out.endswith("\nTrue\n"), out
    assert "FutureWarning" in err and "functorch.jvp` is deprecated" in err


CRAWL = PRELUDE + """\
import torch.func as tfunc
level = fwAD.dual_level()
with fwAD.dual_level():
    d = fwAD.make_dual(x, torch.ones(2))
    up = fwAD.unpack_dual(d)
    upt = up.tangent
    kept = d * 2
pair = jvp(lambda a: a * 2, (x,), (x,))
o, vfn = vjp(lambda a: a * 2, x)
gfn = grad(lambda a: a.sum())
jr = jacrev(lambda a: a * 2)
jf = jacfwd(lambda a: a * 2)
hs = hessian(lambda a: a.sum())
vm = vmap(lambda a: a * 2)
fc = functional_call
UDT = fwAD.UnpackedDualTensor
fm, ps, bs = ft.make_functional_with_buffers(model)
fm1, ps1 = ft.make_functional(model)
ftj = ft.jvp(lambda a: a * 2, (x,), (x,))
"""


def test_nothing_reachable_leaves_the_sandbox():
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    s.run(CRAWL, "attack.grad")
    roots = [(k, v) for k, v in s.globals.items() if k.isidentifier()]
    kept, bad = crawl(roots)
    assert not bad, bad[:20]
    reached = {type(o).__name__ for o in kept}
    assert {"UnpackedDualTensor", "dual_level", "function", "Tensor"} <= reached, reached
    modules = {o.__name__ for o in kept if isinstance(o, types.ModuleType)}
    assert "gradcli.torch.func" in modules and "gradcli.torch.autograd.forward_ad" in modules
    assert "functorch" in modules and "FunctionalModuleWithBuffers" in reached
