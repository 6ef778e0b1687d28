"""torch.autograd.forward_ad, custom Function jvp, gradcheck(check_forward_ad=True) and
torch.func, each scenario run with PyTorch 2.13 and with gradcli: what it prints must be
the same text (object addresses aside), errors included."""

from __future__ import annotations

import io
import re
import textwrap
import warnings

import pytest
from process_helpers import assert_runs_as_python_does

import gradcli.torch as gt
import gradcli.torch.func as gfunc

torch = pytest.importorskip("torch")
pytest.importorskip("torch.func")  # (torch.func.hessian and co. below)

ADDR = re.compile(r"0x[0-9a-f]+")


def _run(module, source: str) -> str:
    out = io.StringIO()

    def show(*args, **kwargs):
        print(*args, **kwargs, file=out)

    names = {"torch": module, "fwAD": module.autograd.forward_ad, "print": show,
             "func": torch.func if module is torch else gfunc}
    module.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(textwrap.dedent(source), names)  # noqa: S102 - this file's own scenarios
    return ADDR.sub("0x?", out.getvalue())


def _same(source: str) -> str:
    expected = _run(torch, source)
    got = _run(gt, source)
    assert got == expected
    return got


SCENARIOS = {
    "make_and_unpack": """
        p = torch.randn(3); t = torch.randn(3)
        with fwAD.dual_level() as level:
            print(level)
            d = fwAD.make_dual(p, t)
            print(d)
            print(d.grad_fn, d.requires_grad, d.is_leaf, d._base is p)
            u = fwAD.unpack_dual(d)
            print(u)
            print(u.primal is p, u.primal._base is p, u.tangent is t, u[1] is t)
            print(fwAD.unpack_dual(p))
            print(fwAD.make_dual(torch.randn(2, 3), torch.randn(2, 3)))
            print(fwAD.make_dual(torch.randn(2, 3, dtype=torch.double), torch.randn(2, 3)))
            print(fwAD.make_dual(torch.randn(2, 3), torch.randn(2, 3, dtype=torch.double)))
            print(fwAD.make_dual(torch.randn(()), torch.randn(())))
            print(fwAD.make_dual(torch.randn(40), torch.randn(40)))
        print(fwAD.unpack_dual(d))
        print(d)
    """,
    "layout_of_tangent": """
        p = torch.randn(4, 3); t = torch.randn(3, 4)
        with fwAD.dual_level():
            d = fwAD.make_dual(p, t.T)
            got = fwAD.unpack_dual(d).tangent
            print(got is t, got.is_contiguous(), got)
            same = torch.randn(4, 3)
            print(fwAD.unpack_dual(fwAD.make_dual(p, same)).tangent is same)
    """,
    "errors": """
        p = torch.randn(3)
        for call in (lambda: fwAD.make_dual(p, torch.randn(3)),
                     lambda: fwAD.exit_dual_level()):
            try:
                call()
            except RuntimeError as e:
                print("RuntimeError:", e)
        with fwAD.dual_level():
            d = fwAD.make_dual(p, torch.randn(3))
            for call in (lambda: fwAD.make_dual(p, torch.randn(4)),
                         lambda: fwAD.make_dual(d, torch.randn(3)),
                         lambda: fwAD.enter_dual_level(),
                         lambda: fwAD.make_dual(p, torch.randn(3), level=1),
                         lambda: fwAD.exit_dual_level(level=1)):
                try:
                    call()
                except RuntimeError as e:
                    print("RuntimeError:", e)
            for call in (lambda: fwAD.make_dual(torch.arange(3), torch.randn(3)),
                         lambda: fwAD.make_dual(p, torch.arange(3))):
                try:
                    call()
                except ValueError as e:
                    print("ValueError:", e)
        try:
            fwAD.make_dual(p, torch.randn(3), level=0)
        except RuntimeError as e:
            print("RuntimeError:", e)
        print(fwAD.unpack_dual(p, level=0) if False else fwAD.unpack_dual(p))
        level = fwAD.enter_dual_level()
        print(level)
        fwAD.exit_dual_level(level=level)
        try:
            with fwAD.dual_level():
                d = fwAD.make_dual(p, torch.ones(3))
                raise ValueError("inside")
        except ValueError as e:
            print("ValueError:", e)
        print(fwAD.unpack_dual(d).tangent)
        with fwAD.dual_level():
            print(fwAD.unpack_dual(d).tangent)
    """,
    "ops_and_dtypes": """
        p = torch.randn(3); t = torch.randn(3)
        with fwAD.dual_level():
            d = fwAD.make_dual(p, t)
            print(d * 2, (d * 2).grad_fn)
            print(d.exp(), d.sin().cos(), d ** 2 + p ** 2)
            print(d.sum(), d.mean(), d @ d, d.norm())
            print(torch.stack([d, p]), torch.cat([p, d]))
            print(torch.ones(2, 3) + d)
            print(d + torch.ones(3, dtype=torch.double))
            print(d.argmax(), d > 0, d.long(), d.double(), d.to(torch.float64))
            print(d.max(), d.sort())
            print(torch.where(d > 0, d, p * 3))
            print(d.clone(), d.detach(), fwAD.unpack_dual(d.detach()).tangent)
            print(torch.nn.functional.softmax(d, 0), torch.nn.functional.relu(d))
            with torch.no_grad():
                print(d * 3)
            x = torch.tensor([[2.0, 0.5, -1.0], [0.25, 1.5, 1.0]], dtype=torch.double)
            m = fwAD.make_dual(x, torch.arange(6.).reshape(2, 3).double())
            print(m.T @ m, m.sum(1), m.unbind(0), m.split(2, 1), m.chunk(3, 1)[2])
            print(torch.linalg.norm(m), torch.linalg.svdvals(m))
    """,
    "views": """
        p = torch.randn(2, 3); t = torch.randn(2, 3)
        with fwAD.dual_level():
            d = fwAD.make_dual(p, t)
            for v in (d[1:], d[0], d.T, d.view(6), d.reshape(3, 2), d.unsqueeze(0),
                      d[:, 1], d.expand(2, 2, 3), d.narrow(1, 0, 2), d.flatten()):
                vt = fwAD.unpack_dual(v).tangent
                print(v, vt._base is t)
            pieces = d.unbind(1)
            print(pieces[2])
    """,
    "inplace": """
        p = torch.randn(3); t = torch.randn(3)
        with fwAD.dual_level():
            d = fwAD.make_dual(p, t)
            x = torch.zeros(3)
            x.add_(d)
            print(x)
            y = torch.ones(3); yt = torch.ones(3) * 5
            yd = fwAD.make_dual(y, yt)
            yd.mul_(d)
            print(yd, yt, fwAD.unpack_dual(yd).tangent is yt)
            b = torch.zeros(4)
            v = b[1:]
            v.copy_(d)
            print(b, v)
            z = fwAD.make_dual(torch.ones(2, 2), torch.ones(2, 2))
            z[0] = d[:2]
            print(z)
            z[1, 1] = 7.0
            print(z)
            z.zero_()
            print(z)
            w = fwAD.make_dual(torch.ones(3), torch.ones(3) * 2)
            w.exp_().sin_()
            print(w)
            r = torch.ones(3, requires_grad=True)
            q = r * 1
            q.mul_(d)
            print(q)
            print(fwAD.unpack_dual(torch.mm(fwAD.make_dual(r.reshape(3, 1), torch.ones(3, 1)),
                                            r.reshape(1, 3))).tangent)
    """,
    "reverse_through_tangent": """
        w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        x = torch.tensor([1.0, 2.0, 3.0])
        with fwAD.dual_level():
            d = fwAD.make_dual(w, torch.tensor([1.0, 0.0, 0.5]))
            out = (d.sin() * x).sum()
            jvp = fwAD.unpack_dual(out).tangent
        print(round(jvp.item(), 4))
        jvp.backward()
        print(w.grad)
    """,
    "module_with_dual_params": """
        model = torch.nn.Linear(4, 3)
        inp = torch.randn(5, 4)
        params = {name: p for name, p in model.named_parameters()}
        tangents = {name: torch.rand_like(p) for name, p in params.items()}
        with fwAD.dual_level():
            for name, p in params.items():
                delattr(model, name)
                setattr(model, name, fwAD.make_dual(p, tangents[name]))
            out = model(inp)
            jvp = fwAD.unpack_dual(out).tangent
        print(out)
        model2 = torch.nn.Linear(4, 3)
        with fwAD.dual_level():
            duals = {name: fwAD.make_dual(p, tangents[name]) for name, p in params.items()}
            out2 = func.functional_call(model2, duals, inp)
            jvp2 = fwAD.unpack_dual(out2).tangent
        print(torch.allclose(jvp, jvp2), torch.allclose(out, out2))
        print(func.functional_call(model2, {"weight": torch.ones(3, 4)}, (inp[:2],)))
        print(model2.weight.shape, type(model2.weight).__name__)
        print(func.functional_call(model2, ({"weight": torch.ones(3, 4)}, {"bias": torch.zeros(3)}),
                                   inp[:1]))
        try:
            func.functional_call(model2, ({"weight": torch.ones(3, 4)}, {"weight": torch.zeros(3)}),
                                 inp[:1])
        except ValueError as e:
            print("ValueError:", e)
    """,
    "custom_function_jvp": """
        class Exp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                result = torch.exp(foo)
                ctx.result = result
                return result

            @staticmethod
            def jvp(ctx, gI):
                gO = gI * ctx.result
                del ctx.result
                return gO

        class Mul(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                ctx.save_for_forward(x, y)
                ctx.k = k
                print("forward sees a dual:", fwAD.unpack_dual(x).tangent is not None)
                return x * y * k

            @staticmethod
            def jvp(ctx, xt, yt, kt):
                print("jvp got", xt, yt, kt)
                x, y = ctx.saved_tensors
                return (xt * y + x * yt) * ctx.k

        class NoJvp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class TwoOut(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def jvp(ctx, t):
                return t * 2

        class BadShape(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def jvp(ctx, t):
                return t[:1]

        class Both(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                r = x.exp()
                ctx.save_for_backward(r)
                return r

            @staticmethod
            def backward(ctx, g):
                r, = ctx.saved_tensors
                return g * r

            @staticmethod
            def jvp(ctx, t):
                print("saved in jvp:", ctx.saved_tensors)
                return t * 5

        x = torch.tensor([1.0, 2.0]); y = torch.tensor([3.0, 4.0])
        with fwAD.dual_level():
            d = fwAD.make_dual(x, torch.ones(2))
            print(Exp.apply(d))
            o = Mul.apply(d, y, 2)
            print(o, o.grad_fn)
            print(NoJvp.apply(x))
            for fn in (NoJvp, TwoOut, BadShape):
                try:
                    fn.apply(d)
                except NotImplementedError as e:
                    print("NotImplementedError:", e)
                except RuntimeError as e:
                    print("RuntimeError:", e)
            pr = torch.tensor([1.0, 2.0], requires_grad=True)
            out = Both.apply(fwAD.make_dual(pr, torch.ones(2)))
            print(out)
        print(Exp.apply(x))
    """,
    "gradcheck_forward": """
        class Exp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                result = torch.exp(foo)
                ctx.result = result
                return result

            @staticmethod
            def jvp(ctx, gI):
                gO = gI * ctx.result
                del ctx.result
                return gO

        class Wrong(torch.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                return foo.exp()

            @staticmethod
            def jvp(ctx, gI):
                return gI * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        primal = torch.randn(3, 2, dtype=torch.double, requires_grad=True)
        print(torch.autograd.gradcheck(Exp.apply, (primal,), check_forward_ad=True,
                                       check_backward_ad=False, check_undefined_grad=False,
                                       check_batched_grad=False))
        print(torch.autograd.gradcheck(lambda a, b: (a * b.sin(), a.sum()),
                                       (primal, primal.detach().clone().requires_grad_()),
                                       check_forward_ad=True))
        x = torch.tensor([0.5, 1.5], dtype=torch.double, requires_grad=True)
        try:
            torch.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True,
                                     check_backward_ad=False, check_undefined_grad=False)
        except RuntimeError as e:
            print("RuntimeError:", e)
        print(torch.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True,
                                       check_backward_ad=False, check_undefined_grad=False,
                                       raise_exception=False))
    """,
    "func_transforms": """
        x = torch.tensor([1.0, 2.0, 3.0])
        xr = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        f = lambda x: (x.sin() * x).sum()
        g = lambda x: x.sin() * x
        print(func.jvp(g, (x,), (torch.ones(3),)))
        print(func.jvp(lambda a, b: a * b, (x, x * 2), (torch.ones(3), torch.zeros(3))))
        o, vjp_fn = func.vjp(g, x)
        print(o, vjp_fn(torch.ones(3)))
        o, vjp_fn = func.vjp(lambda a, b: (a * b, a + b), x, x * 3)
        print(o, vjp_fn((torch.ones(3), torch.ones(3))))
        print(func.grad(f)(x), func.grad_and_value(f)(x))
        print(func.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, x * 2))
        print(func.grad(lambda a: ((a ** 2).sum(), a.mean()), has_aux=True)(x))
        print(func.grad(func.grad(lambda a: a.sin()))(torch.tensor(1.0)))
        print(func.jacrev(g)(x))
        print(func.jacfwd(g)(x))
        print(func.jacrev(lambda a, b: a * b, argnums=(0, 1))(x, x))
        print(func.jacfwd(lambda a: a.reshape(3, 1) * a)(x).shape)
        h = func.hessian(lambda a: (a ** 3).sum())(x)
        print(h.grad_fn, h.shape, func.jacfwd(func.jacrev(torch.sin))(x).grad_fn)
        print(func.vmap(lambda r: r.sum() * r)(torch.arange(6.).reshape(2, 3)))
        print(func.vmap(torch.dot)(torch.ones(2, 3), torch.arange(6.).reshape(2, 3)))
        ys = func.jvp(g, (xr,), (torch.ones(3),))
        print(ys[0].requires_grad, ys[1].requires_grad)
        for call in (lambda: func.grad(g)(x), lambda: func.jvp(g, x, (x,)),
                     lambda: func.jvp(g, (x,), [x]), lambda: func.grad(f, argnums=3)(x),
                     lambda: func.grad(f, argnums=(0, 0))(x)):
            try:
                call()
            except RuntimeError as e:
                print("RuntimeError:", e)
    """,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_prints_as_pytorch(name):
    _same(SCENARIOS[name])


def test_hessian_and_jacobians_values():
    """hessian (jacfwd over jacrev) and the Jacobians, against PyTorch's values (the sign of
    a zero in them depends on the formulas PyTorch's kernels use: compared as values)."""
    import numpy as np

    funcs = {
        "poly": lambda m, x: (x.sin() * x).sum() + (x ** 3).prod(),
        "softmax_dot": lambda m, x: (m.nn.functional.softmax(x, 0) * x.exp()).sum(),
        "matrix": lambda m, x: (x.reshape(2, 2) @ x.reshape(2, 2).tanh()).sum(),
    }
    data = [0.3, -0.7, 1.1, 0.4]
    for name, fn in funcs.items():
        expected = torch.func.hessian(lambda x, fn=fn: fn(torch, x))(
            torch.tensor(data, dtype=torch.double))
        got = gfunc.hessian(lambda x, fn=fn: fn(gt, x))(gt.tensor(data, dtype=gt.float64))
        np.testing.assert_allclose(got._data, expected.numpy(), rtol=1e-7, atol=1e-7, err_msg=name)
        for mode in ("jacrev", "jacfwd"):
            e = getattr(torch.func, mode)(lambda x, fn=fn: fn(torch, x).reshape(1) * x)(
                torch.tensor(data, dtype=torch.double))
            g = getattr(gfunc, mode)(lambda x, fn=fn: fn(gt, x).reshape(1) * x)(
                gt.tensor(data, dtype=gt.float64))
            np.testing.assert_allclose(g._data, e.numpy(), rtol=1e-7, atol=1e-7,
                                       err_msg=f"{name} {mode}")


def test_no_level_costs_nothing_and_leaves_no_hook():
    """Outside a dual level every hook slot is empty again (the ops pay one global read)."""
    from gradcli.engine import custom_function, tensor
    from gradcli.engine.ops import registry

    with gt.autograd.forward_ad.dual_level():
        assert registry.FORWARD_AD is not None
    assert registry.FORWARD_AD is None and registry.FORWARD_AD_MULTI is None
    assert tensor.FORWARD_AD_INPLACE is None and tensor.FORWARD_AD_TANGENT is None
    assert custom_function.FORWARD_AD is None


def test_forward_ad_and_func_are_attributes_without_an_import_in_a_program(tmp_path):
    """`torch.autograd.forward_ad` and `torch.func` load on first use, yet a program
    reaches them as PyTorch's do after a bare `import torch`; plain `gradcli grad` does
    not load them."""
    import subprocess
    import sys

    program = ("import torch\nx = torch.ones(2)\n"
               "with torch.autograd.forward_ad.dual_level():\n"
               "    d = torch.autograd.forward_ad.make_dual(x, x * 3)\n"
               "    print(torch.autograd.forward_ad.unpack_dual(d.exp()).tangent)\n"
               "print(torch.func.grad(lambda a: (a * a).sum())(x))\n")
    assert_runs_as_python_does(tmp_path, program)
    probe = ("import sys\nfrom gradcli.cli.app import main\n"
             "try:\n    main(['grad', 'x**2', '--at', 'x=1'])\nexcept SystemExit:\n    pass\n"
             "print([m for m in sys.modules if m.endswith(('forward_ad', 'torch.func'))])\n")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=120)
    assert loaded.stdout.strip().splitlines()[-1] == "[]", loaded.stdout + loaded.stderr
