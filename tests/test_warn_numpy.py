"""No numpy RuntimeWarning reaches the user ("overflow encountered in ...", "invalid value
encountered in ...", "divide by zero ...", "Degrees of freedom <= 0", "Mean of empty
slice"): PyTorch turns them into inf and nan silently (or gives its own warning).

Every op of the table with a callable spelling (tests/fuzz/difflib_torch: the core and the
op-breadth calls), forward and backward, float32 and float64, over operands filled with the
edge values (0, -0, +-inf, nan, huge, tiny), in plain Python with numpy's own defaults
("warn"); then the facade's numpy outside the ops: optimizers' steps, distributions,
modules and losses, clipping, std_mean/var_mean without degrees of freedom.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import difflib_torch as D  # noqa: E402

import gradcli.torch as torch  # noqa: E402

EDGE = D.VALUES["edge"]
#: (shape of a, shape of b, offset into EDGE): every edge value meets every other somewhere
CASES = ([((3,), (3,), 0), ((2, 3), (3,), 1), ((2, 4), (4,), 7)]
         + [((), (), o) for o in range(0, 16, 3)] + [((16,), (16,), o) for o in (0, 1, 5)]
         + [((4, 4), (4, 4), 3)])


def _edge(shape, offset, dtype):
    n = int(np.prod(shape)) if shape else 1
    values = [EDGE[(offset + 3 * i) % len(EDGE)] for i in range(n)]
    return torch.tensor(np.array(values).reshape(shape), dtype=dtype)


def _runtime_warnings(run) -> list:
    """The RuntimeWarnings `run()` lets out (its errors are not this test's business),
    under numpy's default error state whatever an earlier test left."""
    with warnings.catch_warnings(record=True) as seen, np.errstate(
            divide="warn", over="warn", invalid="warn", under="ignore"):
        warnings.simplefilter("always")
        try:
            run()
        except Exception:  # noqa: BLE001 - only the warnings are looked at
            pass
    return [f"{w.filename}:{w.lineno}: {w.message}" for w in seen
            if issubclass(w.category, RuntimeWarning)]


def _forward_backward(call, a, b):
    result = eval(call, {"torch": torch, "a": a, "b": b})
    if isinstance(result, (tuple, list)):
        result = next((t for t in result if isinstance(t, torch.Tensor) and t.requires_grad),
                      None)
    if isinstance(result, torch.Tensor) and result.requires_grad:
        result.backward(torch.ones_like(result))


CALLS = dict(D.CALLS)
CALLS.update(D.BREADTH_CALLS)


def test_no_op_lets_a_numpy_warning_out():
    escaped = {}
    for name, call in sorted(CALLS.items()):
        code = compile(call, "<call>", "eval")
        for dtype in (torch.float32, torch.float64):
            for sa, sb, offset in CASES:
                def run(code=code, sa=sa, sb=sb, offset=offset, dtype=dtype):
                    a = _edge(sa, offset, dtype).requires_grad_()
                    b = _edge(sb, offset + 2, dtype)
                    _forward_backward(code, a, b)

                for text in _runtime_warnings(run):
                    escaped.setdefault(text, set()).add(name)
    assert not escaped, "\n".join(f"{t} ({sorted(n)[:5]})" for t, n in escaped.items())
    assert len(CALLS) > 400


def _optimizer(name, **kw):
    def run(dtype, offset):
        p = _edge((8,), offset, dtype).requires_grad_()
        opt = getattr(torch.optim, name)([p], **kw)
        for i in range(3):
            p.grad = _edge((8,), offset + i + 1, dtype)
            opt.step()
    return run


def _lbfgs(dtype, offset):
    p = _edge((4,), offset, dtype).requires_grad_()
    opt = torch.optim.LBFGS([p], max_iter=3)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    opt.step(closure)


def _clip(dtype, offset):
    p = _edge((4,), offset, dtype).requires_grad_()
    p.grad = _edge((4,), offset + 1, dtype)
    torch.nn.utils.clip_grad_norm_([p], 1.0)
    torch.nn.utils.clip_grad_norm_([p], 1.0, norm_type=float("inf"))
    torch.nn.utils.clip_grad_value_([p], 1.0)


def _distribution(make):
    def run(dtype, offset):
        torch.manual_seed(0)
        x = _edge((6,), offset, dtype).requires_grad_()
        y = _edge((6,), offset + 5, dtype)
        v = _edge((6,), offset + 2, dtype)
        d = make(x, y)
        for part in (lambda: d.log_prob(v), lambda: d.log_prob(d.sample()), d.entropy,
                     lambda: d.mean, lambda: d.variance, lambda: d.cdf(v), lambda: d.sample((2,))):
            try:
                r = part()
                if isinstance(r, torch.Tensor) and r.requires_grad:
                    r.sum().backward(retain_graph=True)
            except Exception:  # noqa: BLE001 - (NotImplementedError for some parts)
                pass
    return run


def _module(make):
    def run(dtype, offset):
        torch.manual_seed(0)
        x = torch.stack([_edge((6,), offset, dtype), _edge((6,), offset + 7, dtype)])
        out = make(dtype)(x.requires_grad_())
        (out[0] if isinstance(out, tuple) else out).sum().backward()
    return run


Dist = torch.distributions
nn = torch.nn
F = torch.nn.functional
FACADE = {
    "SGD": _optimizer("SGD", lr=0.1, momentum=0.9, weight_decay=0.1, nesterov=True),
    "Adam": _optimizer("Adam", lr=0.1, weight_decay=0.1, amsgrad=True),
    "AdamW": _optimizer("AdamW", lr=0.1),
    "RMSprop": _optimizer("RMSprop", lr=0.1, momentum=0.5, centered=True),
    "Adagrad": _optimizer("Adagrad", lr=0.1), "Adadelta": _optimizer("Adadelta"),
    "Adamax": _optimizer("Adamax"), "NAdam": _optimizer("NAdam"), "RAdam": _optimizer("RAdam"),
    "ASGD": _optimizer("ASGD"), "Rprop": _optimizer("Rprop"), "LBFGS": _lbfgs, "clip": _clip,
    "Normal": _distribution(lambda x, y: Dist.Normal(x, y.abs(), validate_args=False)),
    "Gamma": _distribution(lambda x, y: Dist.Gamma(x.abs(), y.abs(), validate_args=False)),
    "Beta": _distribution(lambda x, y: Dist.Beta(x.abs(), y.abs(), validate_args=False)),
    "Dirichlet": _distribution(lambda x, y: Dist.Dirichlet(x.abs(), validate_args=False)),
    "Bernoulli": _distribution(lambda x, y: Dist.Bernoulli(logits=x, validate_args=False)),
    "Categorical": _distribution(lambda x, y: Dist.Categorical(logits=x, validate_args=False)),
    "Poisson": _distribution(lambda x, y: Dist.Poisson(x.abs(), validate_args=False)),
    "Laplace": _distribution(lambda x, y: Dist.Laplace(x, y.abs(), validate_args=False)),
    "Exponential": _distribution(lambda x, y: Dist.Exponential(y.abs(), validate_args=False)),
    "Uniform": _distribution(lambda x, y: Dist.Uniform(x, x + y.abs(), validate_args=False)),
    "Linear": _module(lambda dt: nn.Linear(6, 3).to(dt)),
    "BatchNorm1d": _module(lambda dt: nn.BatchNorm1d(6).to(dt)),
    "LayerNorm": _module(lambda dt: nn.LayerNorm(6).to(dt)),
    "GroupNorm": _module(lambda dt: nn.GroupNorm(2, 6).to(dt)),
    "LSTM": _module(lambda dt: nn.Sequential(nn.Unflatten(1, (1, 6)),
                                             nn.LSTM(6, 3, batch_first=True)).to(dt)),
    "Conv1d": _module(lambda dt: nn.Sequential(nn.Unflatten(1, (1, 6)), nn.Conv1d(1, 2, 3)).to(dt)),
    "CrossEntropy": _module(lambda dt: lambda t: F.cross_entropy(t, torch.tensor([0, 5]),
                                                                 label_smoothing=0.1)),
    "KLDiv": _module(lambda dt: lambda t: F.kl_div(t, t.softmax(1).detach(),
                                                   reduction="batchmean")),
    "Normalize": _module(lambda dt: lambda t: F.normalize(t) + F.cosine_similarity(t, t.flip(1))),
    "trunc_normal_": lambda dt, offset: nn.init.trunc_normal_(
        torch.empty(4, dtype=dt), mean=float(_edge((), offset, dt))),
    "poisson": lambda dt, offset: torch.poisson(_edge((8,), offset, dt).abs()),
    "std_mean": _module(lambda dt: lambda t: torch.std_mean(t[:1], 0)[0]
                        + torch.var_mean(t, 1, correction=6)[0].sum()),
}


@pytest.mark.parametrize("name", sorted(FACADE))
def test_no_facade_numpy_warning(name):
    escaped = set()
    for dtype in (torch.float32, torch.float64):
        for offset in range(0, 16, 3):
            escaped.update(_runtime_warnings(
                lambda dtype=dtype, offset=offset: FACADE[name](dtype, offset)))
    assert not escaped, "\n".join(sorted(escaped))


def test_user_numpy_state_is_left_alone():
    """The quiet Context is gradcli's own: numpy in the user's code still warns."""
    x = torch.tensor([1.0, -1.0], requires_grad=True)
    (x.log() * 2).sum().backward()  # (nan gradients, silently)
    with warnings.catch_warnings(record=True) as seen, np.errstate(invalid="warn"):
        warnings.simplefilter("always")
        np.log(np.array([-1.0]))
    assert [w.category for w in seen] == [RuntimeWarning]
