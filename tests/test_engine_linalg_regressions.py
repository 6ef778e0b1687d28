"""Linear algebra against PyTorch: mm, bmm, mv, dot, addmm and matmul over every rank
combination — values, graph (grad_fn chains), gradients, dtype and shape errors (in
PyTorch's check order), which saved tensor an in-place change is reported on, and
reshape/view with -1 on tensors of 0 elements.

Families behind the regression cases diff_addmm_*, diff_{mm,bmm,squeeze3}_modify_saved
and diff_mm_{edge_*,grad_api,hook,twice}.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")

DTYPES = ("float64", "float32", "int64", "bool")


def _outcome(fn):
    """What a call gives: its dtype, shape and values, or its exception's type and text."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return ("raises", type(e).__name__, str(e))
    return (str(r.dtype), tuple(r.shape), np.asarray(r.detach().tolist(), dtype=float).round(5).tolist())


def _both(fn):
    return _outcome(lambda: fn(torch)), _outcome(lambda: fn(G))


def _ones(lib, shape, dtype):
    return lib.ones(shape, dtype=getattr(lib, dtype))


CALLS = {
    "mm": (lambda lib: lib.mm, [[(2, 3), (3, 4)], [(2, 3), (4, 5)], [(3,), (3, 4)], [(2, 3), (3,)],
                                [(2, 3, 1), (3, 4)]]),
    "bmm": (lambda lib: lib.bmm, [[(1, 2, 3), (1, 3, 4)], [(2, 2, 3), (3, 3, 4)], [(2, 2, 3), (2, 4, 4)],
                                  [(2, 3), (2, 3, 4)], [(2, 2, 3), (3, 4)]]),
    "mv": (lambda lib: lib.mv, [[(2, 3), (3,)], [(2, 3), (4,)], [(3,), (3,)], [(2, 3), (3, 1)]]),
    "dot": (lambda lib: lib.dot, [[(3,), (3,)], [(3,), (4,)], [(3, 1), (3,)]]),
    "addmm": (lambda lib: lib.addmm, [[(2, 4), (2, 3), (3, 4)], [(4,), (2, 3), (3, 4)], [(2, 1), (2, 3), (3, 4)],
                                      [(2, 4), (2, 3), (4, 4)], [(3, 4), (2, 3), (3, 4)], [(5,), (2, 3), (3, 4)],
                                      [(1, 2, 4), (2, 3), (3, 4)], [(2, 4), (3,), (3, 4)],
                                      [(2, 4), (2, 3), (3,)], [(2, 4), (2, 3, 1), (3, 4)]]),
    "matmul": (lambda lib: lib.matmul, [[(3,), (3, 4)], [(2, 2, 3), (3, 4)], [(2, 2, 3), (2, 3, 4)],
                                        [(3,), (2, 3, 4)], [(2, 2, 3), (3,)], [(2, 3), (2, 3, 4)],
                                        [(5,), (8, 9)], [(3, 4, 5), (7, 8, 9)], [(2, 3, 4, 5), (6, 7, 8, 9)],
                                        [(1, 4, 5), (2, 5, 6)], [(3, 4, 5), (6,)], [(2, 3, 4), (1, 3, 4, 5)]]),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_dtype_and_shape_errors_match_pytorch(name):
    op, shape_sets = CALLS[name]
    bad = []
    for shapes in shape_sets:
        combos = set(itertools.product(DTYPES[:3], repeat=len(shapes)))
        combos |= {("bool",) * len(shapes), ("float64",) * (len(shapes) - 1) + ("bool",),
                   ("bool",) + ("float64",) * (len(shapes) - 1)}
        for dts in sorted(combos):
            def call(lib, shapes=shapes, dts=dts):
                return op(lib)(*[_ones(lib, s, d) for s, d in zip(shapes, dts)])

            want, got = _both(call)
            if want != got:
                bad.append((shapes, dts, want, got))
    assert not bad, bad[:5]


def test_non_tensor_operands_raise_pytorchs_type_error():
    for expr in ("lib.mm(a, 1.0)", "lib.mm(1.0, a)", "lib.matmul(a, 1.0)", "lib.matmul(1.0, a)",
                 "lib.dot(a[0], [1.0, 2.0])", "lib.mv(a, 2)", "lib.bmm(a, None)", "lib.addmm(1.0, a, a)",
                 "lib.addmm(a, a, 1)"):
        def call(lib, expr=expr):
            a = lib.ones(2, 2)
            return eval(expr, {"lib": lib, "a": a})  # noqa: S307 - fixed test expressions

        want, got = _both(call)
        assert want == got, (expr, want, got)


@pytest.mark.parametrize("bias_shape", [(), (1,), (4,), (2, 1), (1, 4), (2, 4)])
def test_addmm_beta_alpha_values_and_gradients(bias_shape):
    for beta, alpha in [(1, 1), (0, 1), (2, 0.5), (0.5, 0), (0, 0)]:
        def call(lib, beta=beta, alpha=alpha):
            fill = float("nan") if beta == 0 else 1.5
            bias = lib.full(bias_shape, fill, dtype=lib.float64, requires_grad=True)
            a = lib.arange(6, dtype=lib.float64).reshape(2, 3).requires_grad_()
            b = lib.arange(12, dtype=lib.float64).reshape(3, 4).requires_grad_()
            r = lib.addmm(bias, a, b, beta=beta, alpha=alpha)
            assert type(r.grad_fn).__name__ == "AddmmBackward0"
            gb, ga, gm = lib.autograd.grad(r.sum(), (bias, a, b))
            return lib.cat([r.reshape(-1), gb.reshape(-1), ga.reshape(-1), gm.reshape(-1)])

        want, got = _both(call)
        assert want == got, (beta, alpha, want, got)


def test_addmm_integer_tensors_truncate_beta_and_alpha():
    for beta, alpha in [(1.7, 1), (-0.5, 1), (1, 2.5), (-1.7, -1.7), (3, 2)]:
        def call(lib, beta=beta, alpha=alpha):
            i = lib.int64
            return lib.addmm(lib.full((2, 2), 10, dtype=i), lib.full((2, 3), 2, dtype=i),
                             lib.ones(3, 2, dtype=i), beta=beta, alpha=alpha)

        want, got = _both(call)
        assert want == got, (beta, alpha, want, got)


def _chain(fn, depth=6):
    if fn is None or depth == 0:
        return None
    name = type(fn).__name__ if not hasattr(fn, "name") else fn.name()
    # PyTorch 2.13 names a viewing reshape of a non-contiguous tensor ReshapeAliasBackward0;
    # gradcli's reshape says ViewBackward0 (the reshape rule, not matmul's)
    name = name.replace("ReshapeAliasBackward0", "ViewBackward0")
    return name, tuple(_chain(f, depth - 1) for f, _ in fn.next_functions)


RANK_SHAPES = [(3,), (0,), (2, 3), (3, 4), (1, 3), (0, 3), (2, 2, 3), (1, 3, 4), (2, 3, 4), (2, 0, 3),
               (2, 1, 2, 3), (1, 2, 3, 4), (3, 2, 3, 2)]


def _matmul_case(lib, sa, sb, ra, rb, ta, tb):
    rng = np.random.default_rng(0)
    na = rng.standard_normal(sa).round(2)
    nb = rng.standard_normal(sb).round(2)
    if ta:
        na = np.ascontiguousarray(np.swapaxes(na, -1, -2))
    if tb:
        nb = np.ascontiguousarray(np.swapaxes(nb, -1, -2))
    a = lib.tensor(na, dtype=lib.float64).requires_grad_(ra)
    b = lib.tensor(nb, dtype=lib.float64).requires_grad_(rb)
    x = a.transpose(-1, -2) if ta else a
    y = b.transpose(-1, -2) if tb else b
    try:
        r = x @ y
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return ("raises", type(e).__name__, str(e))
    out = [tuple(r.shape), np.asarray(r.detach().tolist()).round(6).tolist(), _chain(r.grad_fn),
           r.is_contiguous()]
    wrt = [t for t, q in ((a, ra), (b, rb)) if q]
    grads = lib.autograd.grad(r, wrt, lib.ones_like(r) * 0.5)
    out.append([np.asarray(g.tolist()).round(6).tolist() for g in grads])
    return out


@pytest.mark.parametrize("sa", RANK_SHAPES, ids=str)
def test_matmul_every_rank_combination_matches_pytorch(sa):
    bad = []
    for sb in RANK_SHAPES:
        for ra, rb in [(True, True), (True, False), (False, True)]:
            for ta, tb in [(False, False), (True, False), (False, True)]:
                if (ta and len(sa) < 2) or (tb and len(sb) < 2):
                    continue
                want = _matmul_case(torch, sa, sb, ra, rb, ta, tb)
                got = _matmul_case(G, sa, sb, ra, rb, ta, tb)
                if want != got:
                    bad.append((sb, ra, rb, ta, tb, want, got))
    assert not bad, bad[:3]


MOD_SHAPES = [(3,), (2, 3), (3, 2), (2, 2, 3), (1, 3, 2), (2, 3, 2), (2, 1, 2, 3), (1, 2, 3, 2)]


def _modified(lib, fn, shapes, needs, which, kind):
    leaves = [lib.ones(s, dtype=lib.float64, requires_grad=q) for s, q in zip(shapes, needs)]
    if kind == "leaf":
        xs = leaves
    elif kind == "mul":
        xs = [x * 1 for x in leaves]
    else:
        xs = [x.view(x.shape) for x in leaves]
    try:
        r = fn(lib, *xs)
        with lib.no_grad():
            for i in which:
                xs[i].mul_(2)
        r.sum().backward()
        return "ok"
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return f"{type(e).__name__}: {e}"


def _modify_cases(fn, shapes):
    n = len(shapes)
    for needs in itertools.product((True, False), repeat=n):
        if not any(needs):
            continue
        for k in range(1, n + 1):
            for which in itertools.combinations(range(n), k):
                for kind in ("leaf", "mul", "view"):
                    yield needs, which, kind


@pytest.mark.parametrize("sa", MOD_SHAPES, ids=str)
def test_matmul_inplace_error_names_the_saved_tensor_pytorch_checks_first(sa):
    bad = []
    for sb in MOD_SHAPES:
        for needs, which, kind in _modify_cases(None, (sa, sb)):
            def mm(lib, x, y):
                return x @ y

            want = _modified(torch, mm, (sa, sb), needs, which, kind)
            got = _modified(G, mm, (sa, sb), needs, which, kind)
            if want != got:
                bad.append((sb, needs, which, kind, want, got))
    assert not bad, bad[:3]


@pytest.mark.parametrize("name,shapes", [
    ("mm", ((2, 3), (3, 4))), ("bmm", ((2, 2, 3), (2, 3, 4))), ("mv", ((2, 3), (3,))),
    ("dot", ((3,), (3,))), ("addmm", ((2, 4), (2, 3), (3, 4))), ("addmm", ((4,), (1, 3), (3, 4)))])
def test_direct_ops_inplace_error_order(name, shapes):
    def call(lib, *xs):
        return getattr(lib, name)(*xs)

    for needs, which, kind in _modify_cases(call, shapes):
        want = _modified(torch, call, shapes, needs, which, kind)
        got = _modified(G, call, shapes, needs, which, kind)
        assert want == got, (needs, which, kind, want, got)


@pytest.mark.parametrize("method", ["reshape", "view"])
def test_reshape_with_minus_one_on_zero_elements(method):
    cases = [((0,), (0, -1)), ((0, 3), (-1, 0)), ((0,), (-1, 0, 3)), ((6,), (0, -1)), ((0,), (2, -1)),
             ((0,), (-1,)), ((2, 0), (3, -1)), ((2, 0), (-1, 2, 0)), ((3, 0, 2), (0, 3, -1))]
    for src, shape in cases:
        def call(lib, src=src, shape=shape):
            return getattr(lib.zeros(src, requires_grad=True), method)(*shape)

        want, got = _both(call)
        assert want == got, (src, shape, want, got)


def test_mm_of_a_zero_element_reshape_matches_pytorch():
    # diff_mm_edge_*: a.reshape(a.shape[0], -1) of an empty vector
    def call(lib):
        a = lib.tensor([], dtype=lib.float64, requires_grad=True)
        return a.reshape(a.shape[0], -1) @ a.reshape(a.shape[0], -1).t()

    want, got = _both(call)
    assert want == got
    assert want[0] == "raises"


def test_outer_checks_ranks_and_promotes_like_pytorch():
    cases = [((3,), (2,), "float64", "float64"), ((3,), (2,), "int64", "float64"), ((2, 2), (2,), "float64", "float64"),
             ((3,), (2, 1), "float64", "float64"), ((3,), (2,), "bool", "bool"), ((0,), (2,), "float32", "int32")]
    for sa, sb, da, db in cases:
        def call(lib, sa=sa, sb=sb, da=da, db=db):
            a = lib.ones(sa, dtype=getattr(lib, da), requires_grad=da.startswith("float"))
            r = lib.outer(a, lib.ones(sb, dtype=getattr(lib, db)))
            assert (r.grad_fn and r.grad_fn.name()) == ("MulBackward0" if a.requires_grad else None)
            return r

        want, got = _both(call)
        assert want == got, (sa, sb, da, db, want, got)


@pytest.mark.parametrize("m, n", [(4, 4), (1, 4), (4, 1), (1, 1), (2, 3)])
def test_signed_zeros_of_an_inner_dim_of_one(m, n):
    # gemm keeps -0. products (both outer dims above 1); gemv (an outer dim of 1) gives +0.
    def run(T):
        a = T.zeros(m, 1, requires_grad=True)
        b = -T.ones(1, n, requires_grad=True)
        r = a @ b
        r.backward(T.ones_like(r))
        return str(r), str(a.grad), str(b.grad)

    assert run(G) == run(torch)
