"""Forward-mode AD where it meets the rest of autograd, compared with PyTorch 2.13 by
what each scenario prints (object addresses aside): a reverse pass inside a dual level
(the gradients a backward computes from dual tensors carry tangents: Hessian-vector
products; .grad and retained gradients take PyTorch's tangent, none when the engine took
the gradient over, a copy when it cloned it, a sum when it added to a .grad)."""

from __future__ import annotations

import pytest
from test_forward_ad_api import _same

torch = pytest.importorskip("torch")

BACKWARD_IN_LEVEL = {
    "grad_is_hessian_vector_product": """
        w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(w, torch.tensor([1.0, 0.0, 0.5]))
            y = (d.sin() * d).sum()
            g, = torch.autograd.grad(y, w, retain_graph=True)
            print(g, fwAD.unpack_dual(g))
            print(g.requires_grad, fwAD.unpack_dual(g).tangent.requires_grad)
            g2, = torch.autograd.grad(y, d, retain_graph=True)
            print(g2)
            for fn in (lambda x: (x * x).sum(), lambda x: (x * x * x).sum(),
                       lambda x: x.exp().sum(), lambda x: x.sin().sum(), lambda x: x.cos().sum(),
                       lambda x: (x ** 3).sum(), lambda x: (x * 2).sum(),
                       lambda x: (x.tanh() * x).sum() + x.sigmoid().prod(),
                       lambda x: torch.nn.functional.softmax(x, 0)[0] * x.norm(),
                       lambda x: (x.reshape(3, 1) @ x.reshape(1, 3)).logsumexp(1).sum(),
                       lambda x: x.abs().max() + x.clamp(-0.7, 0.7).sum()):
                print(torch.autograd.grad(fn(d), w))
    """,
    "grad_outputs_with_tangent": """
        a = torch.tensor([1.0, 2.0], requires_grad=True)
        with fwAD.dual_level():
            v = fwAD.make_dual(torch.ones(2), torch.tensor([3.0, 4.0]))
            print(torch.autograd.grad(a * a, a, v))
            print(torch.autograd.grad(a.sin(), a, v))
            print(torch.autograd.grad(a.sin() * a, a, v))
            print(torch.autograd.grad([a.exp(), a * 3], [a], [v, torch.ones(2)]))
    """,
    "dot_grad_accumulation": """
        with fwAD.dual_level():
            v = fwAD.make_dual(torch.ones(2), torch.tensor([3.0, 4.0]))
            a = torch.tensor([1.0, 2.0], requires_grad=True)
            a.exp().backward(v)
            print("taken over:", a.grad)
            a.exp().backward(v)
            print("added:", a.grad)
            a.grad = None
            (a * 2).backward(v)
            print(a.grad)
            b = torch.tensor([1.0, 2.0], requires_grad=True)
            b.grad = torch.zeros(2)
            b.exp().backward(v)
            print("into a .grad:", b.grad)
            c = torch.tensor([1.0, 2.0], requires_grad=True)
            c.backward(v)
            print("cloned:", c.grad)
            c.backward(v)
            print(c.grad)
            e = torch.tensor([1.0, 2.0], requires_grad=True)
            e.grad = fwAD.make_dual(torch.zeros(2), torch.ones(2))
            (e * 3).sum().backward()
            print(e.grad)
            e.grad = fwAD.make_dual(torch.zeros(2), torch.ones(2))
            (e * v).sum().backward()
            print(e.grad)
            k = torch.tensor([1.0, 2.0], requires_grad=True)
            (k.expand(3, 2) * v).sum().backward()
            print(k.grad)
            m = torch.tensor([[1.0, 2.0]], requires_grad=True)
            (m.t() * v).sum().backward()
            print(m.grad)
            n = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
            (n.t() * fwAD.make_dual(torch.ones(2, 2), torch.eye(2) * 2)).sum().backward()
            print(n.grad)
            w = torch.tensor([0.5, 1.5], requires_grad=True)
            wd = fwAD.make_dual(w, torch.ones(2))
            (wd ** 3).sum().backward()
            print(w.grad)
        print(a.grad, b.grad, c.grad)
    """,
    "retain_grad_and_hooks": """
        with fwAD.dual_level():
            v = fwAD.make_dual(torch.ones(2), torch.tensor([3.0, 4.0]))
            b = torch.tensor([1.0, 2.0], requires_grad=True)
            c = b * 1
            c.retain_grad()
            (c * v).sum().backward(retain_graph=True)
            print(c.grad, b.grad)
            (c * v).sum().backward()
            print(c.grad, b.grad)
            e = torch.tensor([1.0, 2.0], requires_grad=True)
            ed = fwAD.make_dual(e, torch.ones(2))
            q = ed.sin()
            q.register_hook(lambda g: print("hook", g))
            (q * ed).sum().backward()
            print(e.grad)
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            xd = fwAD.make_dual(x, torch.ones(2))
            m = xd * xd
            m.retain_grad()
            m.sum().backward()
            print(m.grad, x.grad)
    """,
    "create_graph_and_no_grad": """
        z = torch.tensor([0.5, 1.5], requires_grad=True)
        tt = torch.tensor([1.0, 2.0], requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(torch.tensor([0.5, 1.5]), tt)
            with torch.no_grad():
                print(fwAD.unpack_dual(d.sin()))
            print(fwAD.unpack_dual(d.sin()))
            zd = fwAD.make_dual(z, torch.tensor([1.0, 2.0]))
            with torch.no_grad():
                print(fwAD.unpack_dual(zd.sin()))
            g, = torch.autograd.grad((zd.tanh() * zd).sum(), z, create_graph=True)
            print(g)
            q = fwAD.make_dual(z, tt)
            g, = torch.autograd.grad((q.exp() * q).sum(), z)
            print(g, fwAD.unpack_dual(g).tangent.requires_grad)
            h = torch.tensor([1.0, 2.0], requires_grad=True)
            v = fwAD.make_dual(torch.ones(2), torch.tensor([3.0, 4.0]))
            (h.exp() * v).sum().backward(create_graph=True)
            print(h.grad)
    """,
    "double_dtype_and_shapes": """
        x = torch.tensor([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]], dtype=torch.double,
                         requires_grad=True)
        t = torch.tensor([[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]], dtype=torch.double)
        W = torch.tensor([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]], dtype=torch.double)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, t)
            loss = ((d @ W).tanh() - 0.5).pow(2).mean()
            print(loss)
            print(torch.autograd.grad(loss, x))
            out = torch.nn.functional.log_softmax(d, 1).sum(0) * d.mean(0)
            print(torch.autograd.grad(out.sum(), x))
    """,
}


@pytest.mark.parametrize("name", sorted(BACKWARD_IN_LEVEL))
def test_backward_inside_a_dual_level(name):
    _same(BACKWARD_IN_LEVEL[name])
