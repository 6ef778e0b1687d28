"""Views, split/unbind, indexing and index_put against PyTorch 2.13 (regression families).

Each scenario takes a torch-like module and returns a log of what it saw (values,
flags, node names, exception types and texts); it runs with gradcli.torch and
with real PyTorch, and the logs must be identical.
"""

from __future__ import annotations

import re

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

ADDR = re.compile(r"0x[0-9a-fA-F]+")


def _try(log: list, label: str, fn) -> None:
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the exception is what we compare
        log.append(f"{label}: {type(e).__name__}: {e}")
        return
    if isinstance(out, tuple):
        out = tuple(tuple(o.shape) if hasattr(o, "shape") else o for o in out)
    log.append(f"{label}: {ADDR.sub('0x?', str(out))}")


def _same(scenario, *args) -> None:
    ours, theirs = [], []
    scenario(gt, ours, *args)
    scenario(torch, theirs, *args)
    assert ours == theirs


def _name(t):
    fn = t.grad_fn
    return None if fn is None else type(fn).__name__


# ------------------------------------------------------------ no_grad views

VIEWS = {
    "alias": lambda a: a[...],
    "select": lambda a: a[0],
    "slice": lambda a: a[1:],
    "view": lambda a: a.view(-1),
    "reshape": lambda a: a.reshape(-1),
    "squeeze0": lambda a: a.unsqueeze(0).squeeze(),
    "squeeze1": lambda a: a.unsqueeze(0).squeeze(0),
    "squeeze2": lambda a: a.unsqueeze(0).squeeze((0,)),
    "unsqueeze": lambda a: a.unsqueeze(0),
    "transpose": lambda a: a.transpose(0, -1),
    "t": lambda a: a.t() if a.dim() <= 2 else a.mT,
    "permute": lambda a: a.permute(*reversed(range(a.dim()))),
    "expand": lambda a: a.expand(2, *a.shape),
    "narrow": lambda a: a.narrow(0, 0, 1),
    "split": lambda a: a.split(1)[-1],
    "split_with_sizes": lambda a: a.split([1, len(a) - 1])[1],
    "chunk": lambda a: a.chunk(2)[0],
    "unbind": lambda a: a.unbind(0)[0],
}
SHAPES = [(3,), (2, 3), (1, 2, 2)]


def _leaf(mod, shape, dtype="float32"):
    n = 1
    for s in shape:
        n *= s
    return mod.arange(float(n), dtype=getattr(mod, dtype)).reshape(shape).clone().requires_grad_()


def _no_grad_view(mod, log, view, shape, dtype, base_kind):
    a = _leaf(mod, shape, dtype)
    base = a if base_kind == "leaf" else a * 2
    with mod.no_grad():
        v = VIEWS[view](base)
    log.append((v.requires_grad, v.is_leaf, _name(v), repr(v)))
    _try(log, "op", lambda: (lambda r: (r.requires_grad, _name(r),
                                         [None if f is None else type(f).__name__
                                          for f, _ in r.grad_fn.next_functions]))(v * 2))
    _try(log, "backward through", lambda: ((v * 2).sum().backward(), a.grad))
    _try(log, "grad wrt view", lambda: mod.autograd.grad((v * 2).sum(), v))
    _try(log, "grad wrt leaf", lambda: mod.autograd.grad((v * 2).sum(), a, allow_unused=True))
    _try(log, "view.backward", lambda: v.backward(mod.ones_like(v)))
    _try(log, "retain_grad", lambda: (v.retain_grad(), v.retains_grad))
    _try(log, "hook", lambda: (v.register_hook(lambda g: None) is not None))
    _try(log, "set requires_grad", lambda: (setattr(v, "requires_grad", False), v.requires_grad))
    _try(log, "inplace grad mode", lambda: v.add_(1))
    _try(log, "view of view", lambda: (lambda w: (w.requires_grad, _name(w), w.is_leaf))(v[...]))
    _try(log, "inplace on view of view", lambda: v[...].mul_(2))
    with mod.no_grad():
        _try(log, "inplace no_grad", lambda: v.mul_(2) is v)
    _try(log, "requires_grad after", lambda: v.requires_grad)
    _try(log, "grad_fn after", lambda: v.grad_fn)
    _try(log, "is_leaf after", lambda: v.is_leaf)
    _try(log, "repr after", lambda: repr(v))
    _try(log, "use after", lambda: v * 2)
    _try(log, "base grad_fn", lambda: _name(base))


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("shape", SHAPES)
def test_no_grad_view_of_tensor_requiring_grad(view, shape):
    for dtype in ("float32", "float64"):
        for base_kind in ("leaf", "nonleaf"):
            _same(_no_grad_view, view, shape, dtype, base_kind)


def _no_grad_view_plain_base(mod, log, view):
    e = mod.ones(2, 3)
    with mod.no_grad():
        q = VIEWS[view](e)
    log.append((q.requires_grad, _name(q)))
    a = mod.ones(q.shape, requires_grad=True)
    _try(log, "inplace with an operand that requires grad", lambda: q.mul_(a))
    _try(log, "inplace plain", lambda: q.mul_(2) is q)
    e.mul_(2)
    _try(log, "grad_fn after base change", lambda: _name(q))
    e.requires_grad_()
    _try(log, "requires grad through base", lambda: (q.requires_grad, _name(q), q.is_leaf))
    _try(log, "inplace now", lambda: q.add_(1))


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_no_grad_view_of_plain_tensor(view):
    _same(_no_grad_view_plain_base, view)


def _no_grad_view_of_a_view_that_requires_grad(mod, log):
    a = mod.arange(6.0).reshape(2, 3).requires_grad_()  # a view, requiring grad itself
    with mod.no_grad():
        v = a[0]
    log.append((a.requires_grad, a.is_leaf, v.requires_grad, v.is_leaf, _name(v * 2)))
    _try(log, "inplace", lambda: v.add_(1))


def test_no_grad_view_of_a_view_that_requires_grad():
    _same(_no_grad_view_of_a_view_that_requires_grad)


# --------------------------------------------------- multi-output views

MULTI = {
    "split": lambda b: b.split(2),
    "split_with_sizes": lambda b: b.split([1, 3]),
    "chunk": lambda b: b.chunk(2),
    "unbind": lambda b: b.unbind(0),
    "unbind1": lambda b: b.reshape(2, 2).unbind(1),
}


def _multi(mod, log, kind):
    a = mod.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = a * 1
    s = MULTI[kind](b)
    _try(log, "inplace", lambda: s[-1].mul_(2))
    _try(log, "inplace on a view of a piece", lambda: s[0][0:1].mul_(2))
    _try(log, "detached piece", lambda: s[0].detach().add_(1))
    with mod.no_grad():
        s[-1].mul_(2)
    _try(log, "after no_grad write: grad_fn", lambda: _name(s[-1]))
    _try(log, "other piece", lambda: _name(s[0]))
    _try(log, "requires_grad", lambda: s[0].requires_grad)
    _try(log, "repr", lambda: repr(s[0]))
    _try(log, "base", lambda: _name(b))
    # saved pieces, base changed: backward names the piece
    b = a * 1
    s = MULTI[kind](b)
    r = s[0] * 3
    _try(log, "saved piece", lambda: (r.sum().backward(), a.grad))
    r = s[0] * 3
    with mod.no_grad():
        b.mul_(2)
    _try(log, "saved piece, base changed", lambda: r.sum().backward())
    _try(log, "piece as root, base changed", lambda: s[-1].sum().backward())
    # pieces of a tensor that does not require grad
    e = mod.ones(4)
    p = MULTI[kind](e)
    _try(log, "plain inplace", lambda: p[0].mul_(2) is p[0])
    _try(log, "plain inplace, operand requires grad", lambda: p[0].mul_(mod.ones_like(p[0]).requires_grad_()))
    with mod.no_grad():
        p = MULTI[kind](a)
    _try(log, "no_grad pieces", lambda: [(t.requires_grad, _name(t)) for t in p])
    _try(log, "no_grad pieces inplace", lambda: p[0].add_(1))
    x = mod.ones(4, dtype=mod.int64)
    _try(log, "int pieces inplace", lambda: MULTI[kind](x)[0].add_(1))


@pytest.mark.parametrize("kind", sorted(MULTI))
def test_multi_output_views(kind):
    _same(_multi, kind)


def _inplace_with_grad_operand(mod, log):
    a = mod.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    e = mod.ones(4)
    _try(log, "plain tensor, operand requires grad", lambda: e.mul_(a))
    _try(log, "then", lambda: (_name(e), e.requires_grad, e.is_leaf))
    e = mod.ones(4)
    v = e[:2]
    _try(log, "view, operand requires grad", lambda: v.mul_(a[:2]))
    _try(log, "then", lambda: (_name(v), _name(e)))
    e = mod.ones(4)
    e += a
    _try(log, "+=", lambda: _name(e))
    e.sum().backward()
    log.append(str(a.grad))


def test_inplace_recorded_when_only_the_operand_requires_grad():
    _same(_inplace_with_grad_operand)


# ------------------------------------------------------------- split arguments

SPLIT_ARGS = [
    (1,), (2,), (3,), (5,), (0,), (-1,), ([1, 3],), ([4],), ([0, 4, 0],), ([1, -1],), ([-1, 5],),
    ([5, -1],), ([-1, 2],), ([1, 2],), ([],), ((1, 3),), ([1, 3], 1), ([1, 2], 1), ([1, 1], -1),
    (1, 2), ([1, -1], 5), (-1, 5), (0, 5), (1.5,), ([1.5, 2.5],), ([1, 2.0],), ([1, "x"],),
    ([1, True, 2],), ([True, 3],), (True,), ("a",), (None,), (1, 0.5), ([1, 3], 0.5),
    ([1, 3], True), (1, True),
]


def _split(mod, log, shape, args):
    x = mod.zeros(shape)
    _try(log, f"split{args}", lambda: x.split(*args))
    _try(log, f"torch.split{args}", lambda: mod.split(x, *args))


@pytest.mark.parametrize("shape", [(4, 3), (0,), (4,), (0, 3), ()])
def test_split_arguments(shape):
    for args in SPLIT_ARGS:
        _same(_split, shape, args)


def _split_tensor_sizes(mod, log):
    x = mod.zeros(4, 3)
    for size in (mod.tensor(2), mod.tensor([2]), mod.tensor(2.5), mod.tensor([1, 3])):
        _try(log, "tensor size", lambda size=size: x.split(size))
    _try(log, "tensor elements", lambda: x.split([mod.tensor(1), 3]))


def test_split_tensor_sizes():
    _same(_split_tensor_sizes)


def _chunk(mod, log, shape):
    x = mod.zeros(shape)
    for args in ((1,), (2,), (3,), (5,), (0,), (-1,), (2, 1), (2, -1), (1.5,), (True,), (2, 0.5)):
        _try(log, f"chunk{args}", lambda args=args: x.chunk(*args))


@pytest.mark.parametrize("shape", [(4, 3), (5,), (6,), (0, 3), ()])
def test_chunk_arguments(shape):
    _same(_chunk, shape)
