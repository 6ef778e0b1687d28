"""grad_fn's `_saved_<x>` / `_raw_saved_<x>` attributes, as autograd-internals teaching
material prints them: exactly PyTorch's names per node class (dir() and AttributeError),
and the values the op received (dims, keepdim, slice bounds, sizes, exponents, alphas,
the saved tensors themselves)."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import gradcli.torch as gt  # noqa: E402
from gradcli import coverage  # noqa: E402
from gradcli.lang import Limits, run_source  # noqa: E402
from gradcli.saved_attr_coverage import compare_node, run  # noqa: E402


def _pair(*shapes):
    ts = [torch.randn(s, dtype=torch.float64, requires_grad=True) for s in shapes]
    gs = [gt.tensor(t.detach().numpy().copy(), requires_grad=True) for t in ts]
    return ts, gs


TEACHING = {
    "pow_int": (((3,),), lambda m, x: x ** 2),
    "pow_float": (((3,),), lambda m, x: x.pow(2.5)),
    "pow_tensor": (((3,), (3,)), lambda m, x, y: x.abs() ** y),
    "sum_dim_keepdim": (((3, 4),), lambda m, x: x.sum(1, keepdim=True)),
    "sum_dims": (((3, 4),), lambda m, x: x.sum((0, 1))),
    "sum_all": (((3, 4),), lambda m, x: x.sum()),
    "slice": (((5,),), lambda m, x: x[1:3]),
    "slice_step": (((3, 4),), lambda m, x: x[:, ::2]),
    "slice_all": (((3, 4),), lambda m, x: x[:]),
    "select": (((3, 4),), lambda m, x: x[1]),
    "mean_dim": (((3, 4),), lambda m, x: x.mean(0)),
    "mean_all": (((3, 4),), lambda m, x: x.mean()),
    "transpose": (((3, 4),), lambda m, x: x.transpose(0, 1)),
    "softmax": (((3, 4),), lambda m, x: x.softmax(1)),
    "log_softmax": (((3, 4),), lambda m, x: m.log_softmax(x, 0)),
    "cat": (((2, 3), (2, 2)), lambda m, x, y: m.cat([x, y], 1)),
    "mul_scalar": (((3,),), lambda m, x: x * 3),
    "mul_tensor": (((3,), (3,)), lambda m, x, y: x * y),
    "add_alpha": (((3,), (3,)), lambda m, x, y: x.add(y, alpha=2)),
    "add": (((3,), (3,)), lambda m, x, y: x + y),
    "sub_alpha": (((3,), (3,)), lambda m, x, y: m.sub(x, y, alpha=3)),
    "mm": (((2, 3), (3, 4)), lambda m, x, y: x.mm(y)),
    "exp": (((3,),), lambda m, x: x.exp()),
    "view": (((3, 4),), lambda m, x: x.view(12)),
    "tanh": (((3,),), lambda m, x: x.tanh()),
    # negative dims and indices: PyTorch's node shows what the call gave, as unsigned 64 bits
    "softmax_neg": (((3, 4),), lambda m, x: x.softmax(-1)),
    "log_softmax_neg": (((3, 4),), lambda m, x: m.log_softmax(x, -2)),
    "cumsum_neg": (((3, 4),), lambda m, x: x.cumsum(-1)),
    "sum_neg": (((3, 4),), lambda m, x: x.sum((-1, 0))),
    "mean_neg": (((3, 4),), lambda m, x: x.mean(-1, keepdim=True)),
    "amax_neg": (((3, 4),), lambda m, x: x.amax(-1)),
    "logsumexp_neg": (((3, 4),), lambda m, x: x.logsumexp(-2)),
    "cat_neg": (((2, 3), (2, 2)), lambda m, x, y: m.cat([x, y], -1)),
    "stack_neg": (((2, 3), (2, 3)), lambda m, x, y: m.stack([x, y], -1)),
    "select_neg": (((3, 4),), lambda m, x: x.select(-1, -2)),
    "index_neg": (((3, 4),), lambda m, x: x[:, -1]),
    "transpose_neg": (((2, 3, 4),), lambda m, x: x.transpose(-1, -2)),
    "mT": (((2, 3, 4),), lambda m, x: x.mT),
    "permute_neg": (((2, 3, 4),), lambda m, x: x.permute(0, -1, 1)),
    "unsqueeze_neg": (((3, 4),), lambda m, x: x.unsqueeze(-1)),
    "diagonal_neg": (((2, 3, 4),), lambda m, x: x.diagonal(-1, -2, -1)),
    "rot90_neg": (((3, 4),), lambda m, x: x.rot90(-1, (-1, -2))),
    "renorm_neg": (((3, 4),), lambda m, x: x.renorm(2, -1, 1.0)),
    "dist_int_p": (((3,), (3,)), lambda m, x, y: x.dist(y, 3)),
    "sum_0d": (((),), lambda m, x: x.sum(0)),
    "elu": (((3,),), lambda m, x: m.nn.functional.elu(x)),
    # index outputs the node keeps (sort's, topk's, max(dim)'s indices) and their dims
    "sort_default_dim": (((3, 4),), lambda m, x: x.sort()[0]),
    "topk": (((3, 4),), lambda m, x: x.topk(2)[0]),
    "kthvalue_keepdim": (((3, 4),), lambda m, x: x.kthvalue(2, 0, True)[0]),
    "max_dim": (((3, 4),), lambda m, x: x.max(1)[0]),
    "median_dim": (((3, 5),), lambda m, x: x.median(-1)[0]),
    "clamp_tensors": (((3,), (3,)), lambda m, x, y: x.clamp(y - 1, y + 1)),
    "tril_neg": (((3, 4),), lambda m, x: x.tril(-1)),
    "pad_neg": (((3, 4),), lambda m, x: m.nn.functional.pad(x, (-1, 2))),
    "relu6": (((3,),), lambda m, x: m.nn.functional.relu6(x * 1)),
    "hardtanh": (((3,),), lambda m, x: m.nn.functional.hardtanh(x, -2.0, 2.0)),
    "std_default": (((3, 4),), lambda m, x: x.std()),
    "std_dim": (((3, 4),), lambda m, x: x.std(1)),
    "var_unbiased": (((3, 4),), lambda m, x: x.var(False)),
    "var_correction": (((3, 4),), lambda m, x: x.var(-1, correction=2)),
    "var_mean_dim": (((3, 4),), lambda m, x: m.var_mean(x, -1)[0]),
    "select_scatter_neg": (((3, 4), (3,)), lambda m, x, s: m.select_scatter(x, s, -1, -1)),
    "slice_scatter_neg": (((3, 4), (3, 1)), lambda m, x, s: m.slice_scatter(x, s, -1, -1)),
    "linalg_cross": (((2, 3), (2, 3)), lambda m, x, y: m.linalg.cross(x, y)),
    "vector_norm": (((3, 4),), lambda m, x: m.linalg.vector_norm(x)),
    "vector_norm_dim": (((3, 4),), lambda m, x: m.linalg.vector_norm(x, 2.0, -1)),
    "linalg_norm_dim": (((3, 4),), lambda m, x: m.linalg.norm(x, dim=1)),
    "norm_p_dim": (((3, 4),), lambda m, x: x.norm(3, 1)),
    "cosine_similarity_neg": (((2, 3), (2, 3)),
                              lambda m, x, y: m.nn.functional.cosine_similarity(x, y, -1)),
}


@pytest.mark.parametrize("case", sorted(TEACHING))
def test_teaching_cases_match_pytorch(case):
    shapes, fn = TEACHING[case]
    ts, gs = _pair(*shapes)
    yt, yg = fn(torch, *ts), fn(gt, *gs)
    assert type(yg.grad_fn).__name__ == type(yt.grad_fn).__name__
    diff = compare_node(yg.grad_fn, yt.grad_fn, list(zip(ts, gs, strict=True)))
    assert diff is None, diff


def test_values_as_users_print_them():
    x = gt.randn(3, 4, requires_grad=True)
    n = x.sum(1, keepdim=True).grad_fn
    assert (n._saved_dim, n._saved_keepdim, n._saved_self_sym_sizes) == ((1,), True, (3, 4))
    assert type(n._saved_self_sym_sizes) is tuple
    assert (x ** 2).grad_fn._saved_exponent == 2
    assert type((x ** 2).grad_fn._saved_exponent) is int
    assert (x ** 2).grad_fn._saved_self is x
    s = x[:, 1:3].grad_fn
    assert (s._saved_dim, s._saved_start, s._saved_end, s._saved_step) == (1, 1, 3, 1)
    assert x[:, ::2].grad_fn._saved_end == 9223372036854775807
    m = x.mean(0).grad_fn
    assert (m._saved_self_sym_numel, m._saved_dim, m._saved_keepdim) == (12, (0,), False)
    t = x.transpose(0, 1).grad_fn
    assert (t._saved_dim0, t._saved_dim1) == (0, 1)
    assert x.add(x, alpha=2).grad_fn._saved_alpha == 2
    assert (x + x).grad_fn._saved_alpha == 1
    assert gt.cat([x, x], 0).grad_fn._saved_dim == 0
    mm = x.mm(x.t())
    assert mm.grad_fn._saved_self is x
    sm = x.softmax(1)
    assert gt.equal(sm.grad_fn._saved_result, sm) and sm.grad_fn._saved_dim == 1
    three = (x * 3).grad_fn
    assert three._saved_self is None and three._saved_other.item() == 3


def test_names_per_class_and_missing_ones_raise_pythons_error():
    x = gt.randn(3, 4, requires_grad=True)
    n = x.sum(0).grad_fn
    assert sorted(a for a in dir(n) if a.startswith("_saved_")) == [
        "_saved_dim", "_saved_keepdim", "_saved_self_sym_sizes"]
    assert not [a for a in dir(n) if a.startswith("_raw_saved_")]
    for name in ("_saved_self", "_saved_exponent", "_raw_saved_self", "_saved_nope"):
        with pytest.raises(AttributeError, match=f"^'SumBackward1' object has no attribute '{name}'$"):
            getattr(n, name)
    assert not hasattr(x.exp().grad_fn, "_saved_self")
    assert hasattr(x.exp().grad_fn, "_raw_saved_result")


def test_indices_kept_as_arrays_read_as_tensors_and_refuse_hooks():
    x = gt.tensor([[3., 1., 2.]], requires_grad=True)
    values, indices = x.sort()
    node = values.grad_fn
    assert node._saved_indices.tolist() == indices.tolist() == [[1, 2, 0]]
    assert type(node._raw_saved_indices).__name__ == "SavedTensor"
    with pytest.raises(RuntimeError, match="gradcli does not pack this saved tensor"):
        node._raw_saved_indices.register_hooks(lambda t: t, lambda t: t)
    values.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        node._saved_indices  # noqa: B018


def test_accumulate_grad_has_variable_and_no_saved_values():
    x = gt.randn(3, requires_grad=True)
    acc = (x * 2).grad_fn.next_functions[0][0]
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x
    assert not [a for a in dir(acc) if a.startswith(("_saved_", "_raw_saved_"))]
    xt = torch.randn(3, requires_grad=True)
    acc_t = (xt * 2).grad_fn.next_functions[0][0]
    assert not [a for a in dir(acc_t) if a.startswith(("_saved_", "_raw_saved_"))]


def test_custom_function_node_keeps_ctx_attributes():
    for m in (torch, gt):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.k = 3
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k

        x = m.randn(3, requires_grad=True)
        n = F.apply(x).grad_fn
        assert n.k == 3 and n.saved_tensors[0] is x
        assert [a for a in dir(n) if a.startswith(("_saved_", "_raw_saved_"))] == [
            "_raw_saved_tensors"], m
        assert len(n._raw_saved_tensors) == 1
        with pytest.raises(AttributeError, match="object has no attribute '_saved_tensors'"):
            n._saved_tensors  # noqa: B018


def test_freed_saved_tensor_after_backward_raises_pytorchs_error():
    for m in (torch, gt):
        x = m.randn(3, requires_grad=True)
        y = x ** 2
        y.sum().backward()
        assert y.grad_fn._saved_exponent == 2  # (a Python value survives)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.grad_fn._saved_self  # noqa: B018


# op_db: every op's nodes agree, but those listed in OPDB_KNOWN_DIFF
OPDB_AGREE = ("add", "sub", "mul", "div", "pow", "mm", "exp", "sin", "tanh", "sigmoid", "abs",
              "neg", "sqrt", "log", "matmul", "t", "view", "reshape", "softmax", "narrow",
              "cumsum", "addmm", "addcmul", "cdist", "nn.functional.gelu", "nn.functional.mse_loss",
              "gather", "index_select", "cat", "transpose", "select", "sum", "mean", "amax",
              "nn.functional.elu", "dist", "permute")
OPDB_KNOWN_DIFF: dict = {}


@pytest.mark.parametrize("op", [*OPDB_AGREE, *(
    pytest.param(op, marks=pytest.mark.xfail(strict=True, reason=why))
    for op, why in OPDB_KNOWN_DIFF.items())])
def test_op_db_nodes_agree(op):
    results = run((op,))
    assert results, op
    diffs = {name: d for name, occ in results.items() for _, d in occ if d is not None}
    assert not diffs, diffs


def _program(src: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_source(src, "saved.grad", limits=Limits(), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_programs_read_saved_values():
    code, out, err = _program(
        "import torch\nx = torch.randn(3, 4, requires_grad=True)\ny = x.sum(1, keepdim=True)\n"
        "print(y.grad_fn._saved_dim, y.grad_fn._saved_keepdim, y.grad_fn._saved_self_sym_sizes)\n"
        "print((x ** 3).grad_fn._saved_exponent, x[0:2].grad_fn._saved_end)\n")
    assert code == 0, err
    assert out == "(1,) True (3, 4)\n3 2\n"


@pytest.mark.parametrize("attack", [
    "y.grad_fn._saved_dim = (0,)",
    "del y.grad_fn._saved_keepdim",
    "y.grad_fn._saved_self_sym_sizes.__class__",
    "y.grad_fn._saved_dim.__class__.__subclasses__()",
    "y.grad_fn.__class__._saved_dim",
    "type(y.grad_fn)._saved_dim.__get__",
    "y.grad_fn._saved_dim.__getitem__.__self__",
    "print(y.grad_fn._given)",
    "print(getattr(y.grad_fn, '_given'))",
    "print(y.grad_fn._handles)",
    "y.grad_fn._raw_saved_self.register_hooks(print, print)",
])
def test_saved_values_cannot_be_written_or_reach_internals(attack):
    code, out, err = _program(
        "import torch\nx = torch.randn(3, 4, requires_grad=True)\ny = x.sum(1)\n"
        + attack + "\nprint('escaped')\n")
    assert code != 0 and "escaped" not in out
    assert "Traceback" not in err and "Error" in err
    assert "(0,)" not in out


def test_cli_run_prints_saved_values(tmp_path):
    (tmp_path / "p.grad").write_text(
        "import torch\nx = torch.ones(2, 3, requires_grad=True)\n"
        "print(x.transpose(0, 1).grad_fn._saved_dim1)\n"
        "print(x.mean().grad_fn._saved_self_sym_numel)\n"
        "print(x.sum(0).grad_fn._saved_self)\n")
    p = subprocess.run([sys.executable, "-m", "gradcli", "run", "p.grad"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.stdout == "1\n6\n"
    assert p.returncode == 1
    assert "AttributeError: 'SumBackward1' object has no attribute '_saved_self'" in p.stderr
    assert "Traceback" not in p.stderr


def test_coverage_helper_is_importable_without_running_pytorch_ops():
    assert callable(coverage.load_op_db)


def _plain(v) -> bool:
    if isinstance(v, tuple):
        return all(_plain(e) for e in v)
    return v is None or type(v) in (bool, int, float, str) or type(v).__name__ in (
        "Tensor", "SavedTensor")


@pytest.mark.parametrize("case", sorted(TEACHING))
def test_values_are_plain_python_or_tensors(case):
    """No numpy scalar or engine object reaches a program through a saved value."""
    shapes, fn = TEACHING[case]
    _, gs = _pair(*shapes)
    node = fn(gt, *gs).grad_fn
    for name in dir(node):
        if name.startswith(("_saved_", "_raw_saved_")):
            assert _plain(getattr(node, name)), name
