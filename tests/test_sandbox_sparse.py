"""Attack tests for the sparse COO names a program can reach (torch.sparse_coo_tensor,
torch.sparse.mm / addmm / sum, torch.sparse_coo, Tensor.to_sparse / to_dense / indices /
values / coalesce / is_coalesced / sparse_dim / dense_dim): a program can use them, gets
one clear error for bad input, and cannot reach through a sparse tensor or the
torch.sparse module anything the sandbox keeps from it."""

import io

import pytest

from gradcli.lang import Limits
from gradcli.lang.session import run_source

BUDGET = dict(max_steps=20_000, max_depth=60, max_elements=1_000_000, max_length=100_000)


def run(src: str):
    out, err = io.StringIO(), io.StringIO()
    code = run_source("import torch\n" + src, "attack.grad", limits=Limits(**BUDGET), stdout=out,
                      stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_programs_use_sparse_tensors():
    torch = pytest.importorskip("torch")
    src = ("x = torch.tensor([[0., 2.], [3., 0.]], requires_grad=True)\n"
           "s = x.to_sparse()\n"
           "print(s)\n"
           "torch.sparse.mm(s, torch.ones(2, 2)).sum().backward()\n"
           "print(x.grad)\n"
           "S = torch.sparse_coo_tensor([[0, 1, 1], [1, 0, 0]], [1., 2., 3.], (2, 2), "
           "requires_grad=True)\n"
           "torch.sparse.sum(S).backward()\n"
           "print(S.grad, S.layout, S.is_sparse, S.is_coalesced(), S.sparse_dim(), S.dense_dim())\n"
           "print(S.coalesce().indices(), S.coalesce().values(), torch.sparse_coo)\n")
    code, out, err = run(src)
    assert code == 0, err
    expected = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(expected):
        exec(src, {"torch": torch})  # noqa: S102 - the same program, run by PyTorch
    assert out == expected.getvalue()


ATTACKS = [
    ("s = torch.ones(2).to_sparse()\nprint(s.__class__)", "ForbiddenError"),
    ("s = torch.ones(2).to_sparse()\nprint(s._data)", "ForbiddenError"),
    ("s = torch.ones(2).to_sparse()\nprint(s._nnz())", "ForbiddenError"),
    ("s = torch.ones(2).to_sparse()\nprint(s.__getattribute__('_data'))", "ForbiddenError"),
    ("s = torch.ones(2).to_sparse()\nprint(getattr(s, '_data'))", None),
    ("print(torch.sparse.__dict__)", "ForbiddenError"),
    ("print(torch.sparse._fill)", "ForbiddenError"),
    ("print(torch.sparse._ops)", "ForbiddenError"),
    ("print(torch.sparse.np)", "AttributeError"),
    ("print(torch.sparse.importlib)", "AttributeError"),
    ("print(torch.sparse_coo.__reduce__())", "ForbiddenError"),
    ("print(torch.sparse.mm.__globals__)", "ForbiddenError"),
    ("s = torch.ones(2).to_sparse()\nprint(s.indices().__class__.__subclasses__())",
     "ForbiddenError"),
    # input the sparse functions refuse with one message, never a traceback
    ("torch.sparse_coo_tensor([[0], [0]], [1.], (100000, 100000))", "LimitError"),
    ("torch.sparse_coo_tensor([[0, 5]], [1., 2.], (3,))", "RuntimeError"),
    ("torch.sparse_coo_tensor([[0, -1]], [1., 2.], (3,))", "RuntimeError"),
    ("torch.sparse_coo_tensor([[0, 1]], [1., 2., 3.], (3,))", "RuntimeError"),
    ("torch.sparse_coo_tensor([[0, 1]], [1., 2.], (-3,))", "RuntimeError"),
    ("torch.sparse_coo_tensor('ab', [1., 2.], (3,))", None),
    ("torch.sparse_coo_tensor([[0, 1]], ['a', 'b'], (3,))", None),
    ("torch.sparse.mm(torch.ones(2, 2).to_sparse(), 'x')", None),
    ("torch.sparse.mm(torch.ones(2, 2).to_sparse(), torch.ones(2, 2).to_sparse())",
     "NotImplementedError"),
    ("torch.sparse.sum(torch.ones(2, 2).to_sparse(), 5)", "IndexError"),
    ("torch.ones(2, 2).to_sparse().exp()", "NotImplementedError"),
    ("torch.ones(2, 2).to_sparse().numpy()", "TypeError"),
    ("torch.ones(2, 2).to_sparse()[0:1]", "NotImplementedError"),
    # the sparse functions reached through a sparse tensor's methods and torch.*
    ("s = torch.ones(2, 2).to_sparse()\nprint(s.sin.__func__)", "ForbiddenError"),
    ("s = torch.ones(2, 2).to_sparse()\nprint(s.sin.__globals__)", "ForbiddenError"),
    ("s = torch.ones(2, 2).to_sparse()\nprint(s.sin.__self__)", "ForbiddenError"),
    ("print(torch.sin.__wrapped__)", "ForbiddenError"),
    ("print(torch.cat.__closure__)", "ForbiddenError"),
    ("s = torch.ones(2, 2).to_sparse()\nm = s.neg\nprint(m._PATTERNS)", None),
    ("s = torch.ones(2, 2).to_sparse()\nprint(torch.cat([s, torch.ones(2, 2)]))",
     "RuntimeError"),
    ("s = torch.ones(2, 2).to_sparse()\nprint(s + 1)", "RuntimeError"),
    ("s = torch.ones(2, 2).to_sparse()\nprint(s.transpose(0, 5))", "IndexError"),
    ("s = torch.ones(2, 2).to_sparse()\nprint(s.index_select(0, torch.tensor([7])))", None),
    ("s = torch.ones(2, 2).to_sparse()\nprint(torch.stack([s, s], 9))", "IndexError"),
    ("s = torch.ones(2, 2).to_sparse()\nprint(s.narrow_copy(0, 0, 9))", None),
    ("for r in torch.ones(2, 2).to_sparse():\n    print(r)", "NotImplementedError"),
    ("torch.ones(2, 2).to_sparse().add_(1)", "NotImplementedError"),
    ("torch.ones(2, 2).to_sparse(layout=torch.sparse_csr)", None),
    ("torch.ones(2, 2).to_sparse(blocksize=(1, 1))", None),
]


@pytest.mark.parametrize("src,kind", ATTACKS)
def test_attack_is_refused(src, kind):
    code, out, err = run(src)
    assert code in (1, 2), (src, code, out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    assert err.startswith("attack.grad:"), err
    # (a program's first sparse_coo_tensor may first give PyTorch's invariants warning)
    # (each warning is followed by the program's line it points at)
    lines = err.splitlines()
    report = [line for i, line in enumerate(lines) if ": UserWarning: " not in line
              and not (i and ": UserWarning: " in lines[i - 1])]
    if kind is not None:
        assert f": {kind}: " in report[0], err


CSR_ATTACKS = [
    ("c = torch.ones(2, 2).to_sparse_csr()\nprint(c.__class__)", "ForbiddenError"),
    ("c = torch.ones(2, 2).to_sparse_csr()\nprint(c._nnz())", "ForbiddenError"),
    ("print(torch.sparse_csr.__reduce__())", "ForbiddenError"),
    ("print(torch.sparse.sampled_addmm.__globals__)", "ForbiddenError"),
    ("torch.sparse_csr_tensor([0, 5], [0], [1.], (1, 2))", "RuntimeError"),
    ("torch.sparse_csr_tensor([0, 1], [9], [1.], (1, 2))", "RuntimeError"),
    ("torch.sparse_csr_tensor([0, 2], [1, 0], [1., 2.], (1, 2))", "RuntimeError"),
    ("torch.sparse_csr_tensor([0, 1], [0], [1.], (100000, 100000))", "RuntimeError"),
    ("torch.sparse_csr_tensor([0] + [1] * 99999, [0], [1.], (99999, 100000))", "LimitError"),
    ("torch.sparse_csr_tensor('ab', [0], [1.], (1, 2))", None),
    ("torch.sparse.mm(torch.ones(2, 2).to_sparse_csr(), torch.ones(2, 2), 'prod')",
     "NotImplementedError"),
    ("torch.sparse.mm(torch.ones(2, 2).to_sparse_csr(), 'x', 'sum')", "TypeError"),
    ("torch.sparse.sampled_addmm(torch.ones(2, 2).to_sparse_csr(), torch.ones(2, 3), "
     "torch.ones(2, 2))", "RuntimeError"),
    ("torch.ones(2, 2, 2).to_sparse_csr()", "RuntimeError"),
    ("torch.ones(2, 2).to_sparse_csr()[0]", "NotImplementedError"),
]


@pytest.mark.parametrize("src,kind", CSR_ATTACKS)
def test_csr_attack_is_refused(src, kind):
    test_attack_is_refused(src, kind)


@pytest.mark.parametrize("src", [
    "torch.sparse.mm(torch.ones(20000, 1).to_sparse(), torch.ones(1, 20000))",
    "torch.ones(20000, 1).to_sparse() @ torch.ones(1, 20000)",
    "torch.sparse.addmm(torch.ones(1), torch.ones(20000, 1).to_sparse(), torch.ones(1, 20000))",
    "torch.sparse.mm(torch.ones(20000, 1).to_sparse_csr(), torch.ones(1, 20000), 'sum')",
])
def test_products_respect_the_element_limit(src):
    code, out, err = run(src)
    assert code in (1, 2) and ": LimitError: " in err.splitlines()[0], err
