"""Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD and LBFGS (gradcli/torch/optim/more_algorithms.py)
against real PyTorch: parameters after several steps, the state each keeps, repr and
state_dict, type names; and a 0-d tensor as `alpha` (what L-BFGS passes to add_)."""

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")

# elementwise losses only, so no matrix-product kernel (whose last bits vary by CPU) is involved
OPTIONS = [
    ("Adadelta", {}), ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1}),
    ("Adamax", {}), ("Adamax", {"lr": 0.01, "weight_decay": 0.05, "maximize": True}),
    ("NAdam", {}), ("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {}), ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Rprop", {}), ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("ASGD", {}), ("ASGD", {"lr": 0.05, "t0": 3, "lambd": 0.01, "weight_decay": 0.01}),
]


def _train(T, name, options, steps=12, dtype="float32"):
    w = T.nn.Parameter(T.tensor([1.5, -0.7, 0.2, 2.0], dtype=getattr(T, dtype)))
    b = T.nn.Parameter(T.tensor([0.3], dtype=getattr(T, dtype)))
    target = T.tensor([0.5, 0.25, -1.0, 1.0], dtype=getattr(T, dtype))
    opt = getattr(T.optim, name)([w, b], **options)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((w * b.exp() - target) ** 2).sum() + (w.sin() * b).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return opt, [w, b], losses


@pytest.mark.parametrize("name, options", OPTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_steps_match_pytorch(name, options, dtype):
    g_opt, g_params, g_losses = _train(gt, name, options, dtype=dtype)
    t_opt, t_params, t_losses = _train(torch, name, options, dtype=dtype)
    for g, t in zip(g_params, t_params):
        torch.testing.assert_close(torch.tensor(g.tolist(), dtype=t.dtype), t.detach())
    torch.testing.assert_close(torch.tensor(g_losses, dtype=torch.float64),
                               torch.tensor(t_losses, dtype=torch.float64), rtol=1.3e-6, atol=1e-5)
    g_state, t_state = g_opt.state_dict(), t_opt.state_dict()
    assert g_state["param_groups"] == t_state["param_groups"]
    for i, t_values in t_state["state"].items():
        g_values = g_state["state"][i]
        assert list(g_values) == list(t_values)
        for key, value in t_values.items():
            assert repr(g_values[key].dtype) == repr(value.dtype), key
            torch.testing.assert_close(torch.tensor(g_values[key].tolist(), dtype=value.dtype),
                                       value)


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD",
                                  "LBFGS"])
def test_repr_and_type_as_pytorch(name):
    texts = []
    for T in (gt, torch):
        opt = getattr(T.optim, name)([T.nn.Parameter(T.ones(2))])
        texts.append((repr(opt), str(type(opt))))
    assert texts[0] == texts[1]


def _lbfgs(T, steps=4, **options):
    """L-BFGS on a smooth convex loss (float64): well-conditioned, so rounding does not grow
    (on Rosenbrock's valley PyTorch's own results drift with the CPU's kernels)."""
    xy = T.nn.Parameter(T.tensor([-1.5, 2.0, 0.5, 3.0], dtype=T.float64))
    scale = T.tensor([1.0, 3.0, 0.5, 2.0], dtype=T.float64)
    opt = T.optim.LBFGS([xy], **options)

    def closure():
        opt.zero_grad()
        loss = (scale * (xy - 1) ** 2).sum() + 0.1 * (xy ** 4).sum() + (xy[0] * xy[1]).exp()
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(steps)]
    state = opt.state[xy]
    return xy.tolist(), losses, state["func_evals"], state["n_iter"], list(state)


@pytest.mark.parametrize("options", [{}, {"lr": 0.5, "history_size": 3, "max_iter": 7},
                                     {"lr": 0.1, "max_iter": 30, "max_eval": 12},
                                     {"steps": 1, "max_iter": 3},
                                     {"line_search_fn": "strong_wolfe"},
                                     {"line_search_fn": "strong_wolfe", "lr": 2.0,
                                      "history_size": 4, "max_eval": 9},
                                     {"line_search_fn": "strong_wolfe", "steps": 1,
                                      "max_iter": 50, "tolerance_grad": 1e-12}])
def test_lbfgs_matches_pytorch(options):
    g = _lbfgs(gt, **options)
    t = _lbfgs(torch, **options)
    torch.testing.assert_close(torch.tensor(g[0]), torch.tensor(t[0]), rtol=1e-7, atol=1e-7)
    torch.testing.assert_close(torch.tensor(g[1]), torch.tensor(t[1]), rtol=1e-7, atol=1e-7)
    assert g[2:] == t[2:]


def test_lbfgs_refusals():
    p = gt.nn.Parameter(gt.ones(2))
    with pytest.raises(ValueError, match="per-parameter options"):
        gt.optim.LBFGS([{"params": [p]}, {"params": [gt.nn.Parameter(gt.ones(1))]}])
    for T in (gt, torch):  # a line search other than strong_wolfe: refused at step
        q = T.nn.Parameter(T.ones(2))
        opt = T.optim.LBFGS([q], line_search_fn="backtracking")

        def closure():
            loss = (q ** 2).sum()  # noqa: B023 (called at once)
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match="^only 'strong_wolfe' is supported$"):
            opt.step(closure)


def test_tensor_alpha_as_pytorch():
    for T in (gt, torch):
        x = T.ones(2)
        y = T.zeros(2)
        y.add_(x, alpha=T.tensor(-1.5))
        assert y.tolist() == [-1.5, -1.5]
        assert T.sub(x, x, alpha=T.tensor(3.0)).tolist() == [-2.0, -2.0]
    messages = []
    for T in (gt, torch):
        with pytest.raises(TypeError) as info:
            T.ones(2).add(T.ones(2), alpha=T.ones(2))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
