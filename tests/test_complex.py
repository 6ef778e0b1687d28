"""Complex tensors (complex64/cfloat, complex128/cdouble) against PyTorch: dtypes and
promotion, creation, the complex-only functions, printing, arithmetic and autograd."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402


def _run(mod, src: str):
    """Evaluate `src` (statements; the value of `out`) with `torch` bound to mod: the
    printed result, or the error's type and text."""
    env = {"torch": mod}
    try:
        exec(src, env)  # noqa: S102 - test sources written here
        return repr(env["out"])
    except Exception as err:  # noqa: BLE001 - the error text is compared
        return f"{type(err).__name__}: {err}"


def same(src: str):
    expected = _run(torch, src)
    got = _run(gt, src)
    assert got == expected, f"\n{src}\n gradcli: {got}\n pytorch: {expected}"


DTYPES = [
    "out = (torch.cfloat, torch.complex64, torch.cdouble, torch.complex128)",
    "out = [torch.complex64.is_complex, torch.float32.is_complex, torch.complex64.is_floating_point,"
    " torch.complex64.is_signed, torch.complex64.itemsize, torch.complex128.to_real(),"
    " torch.float64.to_complex(), torch.float32.to_complex()]",
    "out = [torch.promote_types(a, b) for a in (torch.float16, torch.bfloat16, torch.float32,"
    " torch.float64, torch.int64, torch.bool, torch.complex64, torch.complex128)"
    " for b in (torch.complex64, torch.complex128)]",
    "out = [(torch.ones(2, dtype=d) * o).dtype for d in (torch.bfloat16, torch.float32, torch.float64,"
    " torch.int64, torch.int32, torch.bool) for o in (1j, torch.tensor(1j),"
    " torch.tensor(1j, dtype=torch.complex128), torch.ones(2, dtype=torch.complex64))]",
    "out = [torch.tensor([1+2j]).dtype, torch.tensor([1, 2.5, 1j]).dtype, torch.tensor(1j).is_complex(),"
    " torch.ones(1).is_complex(), torch.is_complex(torch.zeros(1, dtype=torch.cdouble))]",
    "torch.set_default_dtype(torch.float64)\n"
    "try:\n out = [torch.tensor([1j]).dtype, (torch.ones(2, dtype=torch.int64) * 1j).dtype,"
    " repr(torch.tensor([1j])), repr(torch.tensor([1j], dtype=torch.cfloat))]\n"
    "finally:\n torch.set_default_dtype(torch.float32)",
    "out = (torch.ones(2) + 2j, torch.ones(2, dtype=torch.float64) * (1 - 1j), 3j - torch.arange(3))",
    "out = torch.ones(2).to(torch.cfloat), torch.ones(2).cdouble(), torch.ones(2).cfloat().dtype",
]


@pytest.mark.parametrize("src", DTYPES)
def test_dtypes_and_promotion(src):
    same(src)


CREATION = [
    "out = torch.zeros(2, dtype=torch.cfloat)",
    "out = torch.ones(2, 2, dtype=torch.cdouble)",
    "out = torch.full((2,), 1 + 1j)",
    "out = torch.full((2,), 2., dtype=torch.cdouble)",
    "out = torch.arange(3, dtype=torch.cfloat)",
    "out = torch.empty(0, dtype=torch.cfloat)",
    "out = torch.zeros(2, 0, dtype=torch.complex128)",
    "out = torch.tensor([[1+2j, 3], [4j, -5.5]], requires_grad=True)",
    "out = torch.zeros(2, dtype=torch.cfloat, requires_grad=True)",
    "out = torch.zeros_like(torch.ones(2, dtype=torch.cfloat))",
]


@pytest.mark.parametrize("src", CREATION)
def test_creation(src):
    same(src)


PARTS = [
    "r = torch.tensor([1., 2.], requires_grad=True)\nout = torch.complex(r, r * 2)",
    "r = torch.tensor([1., 2.])\nout = torch.complex(r, r.double())",
    "out = torch.complex(torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.long))",
    "r = torch.tensor([1., 2.], requires_grad=True)\nout = torch.polar(r, r)",
    "out = torch.view_as_complex(torch.arange(4.).reshape(2, 2))",
    "out = torch.view_as_complex(torch.ones(2, 3))",
    "out = torch.view_as_complex(torch.ones(3, 2).t())",
    "out = torch.view_as_complex(torch.ones(2, 2, dtype=torch.long))",
    "out = torch.view_as_complex(torch.ones(2, 2).t().contiguous()[:, :])",
    "out = torch.view_as_real(torch.ones(2))",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nout = torch.view_as_real(z)",
    "z = torch.tensor([1+2j, 3-4j])\nv = torch.view_as_real(z)\nv[0, 1] = 7\nout = z",
    "a = torch.arange(4.).reshape(2, 2)\nc = torch.view_as_complex(a)\nc[1] = 5j\nout = a",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nout = (z.real, z.imag)",
    "z = torch.tensor([1+2j, 3-4j])\nout = (z.real.stride(), z.imag.stride(), z.real.dtype)",
    "z = torch.tensor([1+2j, 3-4j])\nz.real[0] = 9\nz.imag.mul_(2)\nout = z",
    "z = torch.tensor([1+2j, 3-4j])\nz.real = torch.tensor([5., 6.])\nout = z",
    "out = torch.ones(2).real",
    "out = torch.ones(2).imag",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nc = z.conj()\nout = (c, c.is_conj(), z.is_conj())",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nc = z.conj().resolve_conj()\nout = (c, c.is_conj())",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nout = (z.conj_physical(), z.conj_physical().is_conj())",
    "x = torch.ones(2)\nout = (x.conj() is x, x.conj().is_conj(), x.resolve_conj() is x)",
    "z = torch.tensor([1+2j, 3-4j])\nout = torch.view_as_real(z.conj())",
    "z = torch.tensor([1+2j, 3-4j])\nout = (z.conj().real, z.conj().imag)",
    "z = torch.tensor([1+2j, 3-4j, 0j], requires_grad=True)\nout = (z.abs(), z.angle(), z.sgn(), abs(z))",
    "out = torch.tensor([1., -2., 0.]).angle(), torch.tensor([1., -2., 0.]).sgn()",
]


@pytest.mark.parametrize("src", PARTS)
def test_parts_views_conj(src):
    same(src)


PRINTS = [
    "out = torch.tensor(1+2j)",
    "out = torch.tensor(-0.5j)",
    "out = torch.tensor([1+2j, -3.25-4j, 0j])",
    "out = torch.tensor([[1.5+2j, -3e-5j], [100, 2]])",
    "out = torch.tensor([[1.5+2j, -3e-5j], [100, 2]], dtype=torch.complex128)",
    "out = torch.tensor([1e10+1j, 1-1e-10j])",
    "out = torch.tensor([float('nan') + 1j, complex(float('inf'), -2), 1 + float('nan') * 1j])",
    "out = torch.arange(30.).reshape(3, 10) * (1 + 1j)",
    "out = torch.arange(2000.) * 1j",
    "out = torch.arange(12.).reshape(2, 3, 2) * (0.123456 - 7j)",
    "out = str(torch.tensor([1+2j]))",
    "out = torch.tensor([1+2j]).item() if False else torch.tensor(1+2j).item()",
    "out = torch.tensor([[1+2j], [3j]]).tolist()",
    "out = torch.tensor([-0.0 - 0.0j, 0.0 + 0.0j])",
    "torch.set_printoptions(sci_mode=True)\ntry:\n out = repr(torch.tensor([1+2j, 3j]))\n"
    "finally:\n torch.set_printoptions(sci_mode=None)",
    "torch.set_printoptions(precision=2)\ntry:\n out = repr(torch.tensor([1.23456+2j, 3j]))\n"
    "finally:\n torch.set_printoptions(precision=4)",
    "out = float(torch.tensor(1+2j))",
    "out = int(torch.tensor(1+0j))",
    "out = f'{torch.tensor(1+2j)}'",
]


@pytest.mark.parametrize("src", PRINTS)
def test_printing(src):
    same(src)


RANDOM = [
    "torch.manual_seed({seed})\nout = torch.randn({shape}, dtype=torch.{dt})",
    "torch.manual_seed({seed})\nout = torch.rand({shape}, dtype=torch.{dt})",
    "torch.manual_seed({seed})\na = torch.randn(5)\nb = torch.randn({shape}, dtype=torch.{dt})\n"
    "out = (b, torch.randn(3))",
]


@pytest.mark.parametrize("dt", ["cfloat", "cdouble"])
@pytest.mark.parametrize("shape", ["3", "2, 9", "17", "(40,)"])
@pytest.mark.parametrize("template", RANDOM)
def test_random_draws_bit_for_bit(template, shape, dt):
    """randn/rand of a complex dtype draw PyTorch's numbers exactly (2n real draws,
    normal with std 1/sqrt(2)), and leave the generator where PyTorch's is."""
    src = template.format(seed=7, shape=shape, dt=dt)

    def values(mod):
        env = {"torch": mod}
        exec(src, env)  # noqa: S102
        out = env["out"]
        outs = out if isinstance(out, tuple) else (out,)
        return [o.detach().numpy().tobytes() if mod is torch else o._data.tobytes() for o in outs]

    assert values(gt) == values(torch)


ARITH = [
    "z = torch.tensor([1+2j, 3-4j])\nw = torch.tensor([0.5-1j, 2j])\nout = (z + w, z - w, z * w, z / w)",
    "z = torch.tensor([1+2j, 3-4j])\nout = (z + 1, z * 2.5, z / 2, 1 - z, 2 / z, z * 1j, z ** 2, z ** 0.5, 2 ** z)",
    "z = torch.tensor([1+2j, 3-4j])\nout = (-z, z.neg(), z.reciprocal(), z.exp(), z.log(), z.sqrt())",
    "z = torch.tensor([1+2j, 3-4j])\nout = (z.sin(), z.cos(), z.tanh(), z.sigmoid())",
    "z = torch.tensor([[1+2j, 3-4j], [1j, 2]])\nout = (z @ z, z.mm(z), torch.matmul(z, z[0]))",
    "z = torch.tensor([[1+2j, 3-4j], [1j, 2]])\nout = (z.sum(), z.mean(), z.prod(), z.sum(0), z.mean(1))",
    "z = torch.tensor([1+2j, 3-4j])\nout = (z == z, z != 1+2j, z.eq(z.conj()))",
    "z = torch.tensor([1+2j, 3-4j])\nout = z < z",
    "z = torch.tensor([1+2j, 3-4j])\nout = z >= 1",
    "z = torch.tensor([1+2j, 3-4j])\nout = z.max()",
    "z = torch.tensor([[1+2j, 3-4j], [1j, 2]])\nout = torch.ones(2, 2) @ z",
    "z = torch.tensor([1+2j, 3-4j])\nz += 1j\nz *= 2\nout = z",
    "z = torch.tensor([1+2j, 3-4j])\nout = (z.clone(), z.reshape(2, 1), z.flip(0), torch.cat([z, z]), torch.stack([z, z]))",
    "z = torch.tensor([[1+2j, 3-4j], [1j, 2]])\nout = (z.t(), z.T, z.mT, z.H, z.mH, z.transpose(0, 1), z[0], z[:, 1])",
    "out = torch.linalg.eigvals(torch.tensor([[0., 1.], [-1., 0.]]))",
    "out = torch.linalg.eig(torch.tensor([[2., 1.], [1., 2.]]))",
    "out = torch.tensor([1+2j]).exp().abs()",
]


@pytest.mark.parametrize("src", ARITH)
def test_arithmetic(src):
    same(src)


AUTOGRAD = [
    # holomorphic ops: z.grad = g * conj(f'(z))
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nl = (z * z).abs().sum()\nl.backward()\nout = (l, z.grad)",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nw = torch.tensor([0.5-1j, 2j], requires_grad=True)\n"
    "l = (z * w + z / w - w).abs().sum()\nl.backward()\nout = (z.grad, w.grad)",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nl = z.exp().real.sum() + z.log().imag.sum()\nl.backward()\nout = z.grad",
    "z = torch.tensor([1+2j, 0.5-0.25j], requires_grad=True)\nl = (z.sin() + z.cos() + z.tanh() + z.sigmoid()).abs().sum()\n"
    "l.backward()\nout = z.grad",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nl = (z.sqrt() + z.reciprocal() + z ** 2 + 2 ** z).abs().sum()\n"
    "l.backward()\nout = z.grad",
    "z = torch.tensor([[1+2j, 3-4j], [1j, 2]], requires_grad=True)\nl = (z @ z).abs().sum() + z.sum().abs() + z.mean().abs()\n"
    "l.backward()\nout = z.grad",
    # mixed real and complex inputs: the real one gets the real part
    "x = torch.tensor([1., 2.], requires_grad=True)\nz = torch.tensor([1+2j, 3-4j], requires_grad=True)\n"
    "l = (x * z).abs().sum() + (x * 1j + 2).abs().sum()\nl.backward()\nout = (x.grad, z.grad)",
    "x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)\nz = torch.tensor([1+2j, 3-4j], requires_grad=True)\n"
    "l = (x + z).abs().sum()\nl.backward()\nout = (x.grad, z.grad)",
    # the non-holomorphic ones
    "z = torch.tensor([1+2j, 3-4j, 0j], requires_grad=True)\nl = z.abs().sum()\nl.backward()\nout = (l, z.grad)",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nl = z.angle().sum()\nl.backward()\nout = z.grad",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nl = (z.sgn() * torch.tensor([2-1j, 1j])).real.sum()\nl.backward()\nout = z.grad",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nl = (z.conj() * torch.tensor([2-1j, 1j])).real.sum()\nl.backward()\nout = z.grad",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nl = (z.conj_physical() * z).real.sum()\nl.backward()\nout = z.grad",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nl = (z.real * 3 + z.imag * 5).sum()\nl.backward()\nout = z.grad",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nv = torch.view_as_real(z)\nl = (v * torch.tensor([[1., 2.], [3., 4.]])).sum()\n"
    "l.backward()\nout = (v.grad_fn, z.grad)",
    "a = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)\nc = torch.view_as_complex(a)\nl = (c * c).abs().sum()\n"
    "l.backward()\nout = (c.grad_fn, a.grad)",
    "r = torch.tensor([1., 2.], requires_grad=True)\ni = torch.tensor([0.5, -1.], requires_grad=True)\n"
    "l = (torch.complex(r, i) ** 2).abs().sum()\nl.backward()\nout = (r.grad, i.grad)",
    "r = torch.tensor([1., 2.], requires_grad=True)\nt = torch.tensor([0.5, -1.], requires_grad=True)\n"
    "p = torch.polar(r, t)\nl = (p * torch.tensor([1+1j, 2-1j])).real.sum()\nl.backward()\nout = (p, r.grad, t.grad)",
    # grad_fn names and the complex root's refusal
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nout = [type(f).__name__ for f in (z * 2, z + z, z.abs(), z.angle(), "
    "z.conj(), z.real, z.sum(), z.exp(), z.sgn(), torch.view_as_real(z))]",
    "A = torch.tensor([[2., 1., 0.], [0.5, 3., 1.], [0., -1., 1.]], dtype=torch.float64, requires_grad=True)\n"
    "L, V = torch.linalg.eig(A)\nl = (L * torch.tensor([1., 2., 3.])).real.sum() + (V.abs() ** 2 * torch.arange(9.)"
    ".reshape(3, 3)).sum()\nl.backward()\nout = (L, A.grad)",
    "A = torch.tensor([[0., 1.], [-1., 0.5]], requires_grad=True)\nL = torch.linalg.eigvals(A)\n"
    "(L.imag.sum() + L.real.prod()).backward()\nout = (L, A.grad)",
    "A = torch.tensor([[1+1j, 2], [0.5j, -1]], dtype=torch.cdouble, requires_grad=True)\nL = torch.linalg.eigvals(A)\n"
    "L.abs().sum().backward()\nout = (L, A.grad)",
    "out = torch.linalg.eig(torch.ones(2, 3))",
    "out = torch.linalg.eigvals(torch.ones(2, 2, dtype=torch.long))",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nz.sum().backward()",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\n(z * 2).backward(torch.tensor([1+1j, 1j]))\nout = z.grad",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\ny = z * z\nout = torch.autograd.grad(y, z, torch.tensor([1-1j, 2+0j]))",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\ny = (z * z).abs().sum()\n"
    "g, = torch.autograd.grad(y, z, create_graph=True)\nout = torch.autograd.grad(g.abs().sum(), z)",
]


@pytest.mark.parametrize("src", AUTOGRAD)
def test_autograd(src):
    src = src if "out =" in src else src + "\nout = None"
    expected = _run(torch, src)
    got = _run(gt, src)
    if "Error" not in expected:
        # values within float32 tolerance: compare the numbers the prints hold
        env_t, env_g = {"torch": torch}, {"torch": gt}
        exec(src, env_t)  # noqa: S102
        exec(src, env_g)  # noqa: S102
        outs_t = env_t["out"] if isinstance(env_t["out"], tuple) else (env_t["out"],)
        outs_g = env_g["out"] if isinstance(env_g["out"], tuple) else (env_g["out"],)
        for a, b in zip(outs_t, outs_g, strict=True):
            if isinstance(a, torch.Tensor):
                torch.testing.assert_close(torch.from_numpy(b.detach()._data.copy()), a.detach())
            else:
                assert repr(a).split(" object")[0] == repr(b).split(" object")[0]
        assert "Error" not in got, got
    else:
        assert got == expected, f"\n{src}\n gradcli: {got}\n pytorch: {expected}"


GRADCHECKS = [
    ("z", "(z * z).abs()"), ("z", "z.exp()"), ("z", "z.conj() * z"), ("z", "torch.view_as_real(z * z)"),
    ("z", "z.angle()"), ("z", "z.sgn()"), ("z", "z.real * z.imag"), ("z", "z @ z.conj()"),
    ("z", "(z / (z + 1j)).sin().sqrt()"), ("x", "torch.polar(x, x * 2)"),
    ("x", "torch.complex(x, x * x)"), ("x", "(x * 1j).exp()"),
]


@pytest.mark.parametrize(("arg", "expr"), GRADCHECKS)
def test_gradcheck_complex(arg, expr):
    """gradcheck of complex inputs and outputs passes where PyTorch's does."""
    results = []
    for mod in (torch, gt):
        z = mod.tensor([1 + 2j, 3 - 4j], dtype=mod.cdouble, requires_grad=True)
        x = mod.tensor([1.0, 2.0], dtype=mod.float64, requires_grad=True)
        fn = eval(f"lambda {arg}: {expr}", {"torch": mod})  # noqa: S307
        results.append(mod.autograd.gradcheck(fn, (z if arg == "z" else x,)))
    assert results == [True, True]


def test_gradcheck_catches_a_wrong_complex_formula():
    """The complex check can fail: a function whose backward drops the conjugate."""
    class Bad(gt.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            return g * 2 * z  # (right: g * conj(2 z))

    z = gt.tensor([1 + 2j, 3 - 4j], dtype=gt.cdouble, requires_grad=True)
    assert gt.autograd.gradcheck(Bad.apply, (z,), raise_exception=False) is False


REFUSED = ["z.max()", "z.min()", "z.max(0)", "torch.max(z)", "z.amax()", "z.argmax()", "z.argmin()",
           "z.sort()", "z.topk(1)", "z.floor()", "z.ceil()", "z.sign()", "torch.maximum(z, z)",
           "torch.minimum(z, z)", "z.round()", "z.trunc()", "z.fmod(2)", "z.remainder(2)",
           "torch.atan2(z, z)", "z.erf()", "z.lgamma()", "z.frac()", "z.median()", "z.kthvalue(1)",
           "z.floor_divide(2)", "z.hypot(z)", "z.digamma()", "z.logit()", "z.heaviside(z)",
           "torch.ones(2).max()", "torch.ones(3).sort()"]


@pytest.mark.parametrize("expr", REFUSED)
def test_refusals(expr):
    same(f"z = torch.tensor([1+2j, 3-4j])\nout = {expr}")


@pytest.mark.parametrize("fill", ["normal_()", "normal_(1., 2.)", "uniform_()", "uniform_(-1, 3)"])
@pytest.mark.parametrize("dt", ["cfloat", "cdouble"])
@pytest.mark.parametrize("n", [3, 20])
def test_inplace_fills_of_complex_bit_for_bit(fill, dt, n):
    def values(mod):
        mod.manual_seed(5)
        t = getattr(mod.empty(n, dtype=getattr(mod, dt)), fill.split("(")[0])(
            *eval("(" + fill.split("(")[1].rstrip(")") + ",)" if fill.split("(")[1] != ")" else "()"))
        return t._data.tobytes() if mod is gt else t.numpy().tobytes()

    assert values(gt) == values(torch)


MISC = [
    "out = torch.tensor([1+2j], dtype=torch.float32)",
    "out = torch.tensor([1+2j], dtype=torch.int64)",
    "z = torch.tensor([1+2j, 3-4j])\nout = z.masked_fill(torch.tensor([True, False]), 5j)",
    "out = torch.finfo(torch.cfloat), torch.finfo(torch.cdouble).eps",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nw = torch.tensor([2-1j, 1j], requires_grad=True)\n"
    "v = torch.vdot(z, w)\nv.abs().backward()\nout = (v, z.grad, w.grad)",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nn = torch.linalg.vector_norm(z)\nn.backward()\n"
    "out = (n, z.grad, z.norm(), torch.norm(z, 1), torch.linalg.norm(z))",
    "z = torch.tensor([1+2j, 3-4j], requires_grad=True)\nout = (z.dot(z), z.square(), z.cumsum(0), z.cumprod(0))",
    "z = torch.tensor([1+2j, 3-4j])\nout = (z.isnan(), z.isfinite(), torch.where(z.real > 2, z, 0j), z.clone().fill_(1j))",
    "out = torch.ones(2, 2, dtype=torch.cfloat) @ torch.ones(2, 2)",
    "out = torch.cat([torch.ones(1), torch.ones(1, dtype=torch.cfloat)])",
    "z = torch.tensor([1+2j, 3-4j])\nout = (z.type(), z.element_size(), z.new_zeros(2), z.is_signed())",
]


MISC += [
    "z = torch.tensor([1+2j])\ny = z\nz += 1j\nout = (y is z, z)",
    "x = torch.ones(2)\nx += 1j\nout = x",
    "x = torch.ones(2)\nx.add_(torch.tensor([1j, 2j]))\nout = x",
    "z = torch.ones(2, dtype=torch.cfloat, requires_grad=True)\nw = z * 1\nw.mul_(1j)\n"
    "w.abs().sum().backward()\nout = (type(w.grad_fn).__name__, z.grad)",
]


# gradients printed exactly (the signed zeros of their imaginary parts included)
MISC += [
    f"z = torch.tensor([1+0j, 2j, -1-1j], requires_grad=True)\n(({expr}) * torch.tensor([1j, 1, -1j])).real.sum()"
    f".backward()\nout = z.grad"
    for expr in ("z * 1j", "z * z", "z / (2 + 0j)", "z.exp()", "z * torch.tensor([1j, 2, 0j])", "-z + 1j",
                 "z.sum() * z", "z @ torch.tensor([[1j, 0, 1], [2, 1j, 0], [0, 0, 1]], dtype=torch.cfloat)")
]


MISC += [  # Python's complex() of a tensor (Tensor.__complex__)
    "out = complex(torch.tensor(1 + 2j)), complex(torch.tensor([3.5])), complex(torch.tensor(2))",
    "out = complex(torch.tensor([1j, 2j]))",
    "out = complex(torch.tensor(1.5, dtype=torch.float64)) * 2j",
]


@pytest.mark.parametrize("src", MISC)
def test_misc(src):
    same(src)


@pytest.mark.parametrize(("arg", "expr"), GRADCHECKS + [("z", "torch.vdot(z, z.exp())"),
                                                        ("z", "torch.linalg.vector_norm(z)")])
def test_gradgradcheck_complex(arg, expr):
    """Second derivatives through complex ops (create_graph through the complex formulas)."""
    results = []
    for mod in (torch, gt):
        z = mod.tensor([1 + 2j, 3 - 4j], dtype=mod.cdouble, requires_grad=True)
        x = mod.tensor([1.0, 2.0], dtype=mod.float64, requires_grad=True)
        fn = eval(f"lambda {arg}: {expr}", {"torch": mod})  # noqa: S307
        results.append(mod.autograd.gradgradcheck(fn, (z if arg == "z" else x,)))
    assert results == [True, True]
