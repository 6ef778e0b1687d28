"""autograd.grad's argument edge cases, post-accumulate-grad hooks that return a value, and
custom Functions' setup_context defaults / non-differentiable output gradients, compared with
PyTorch 2.13."""

from __future__ import annotations

import pytest

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _outcome(f):
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001 - the error is the behaviour compared
        return (type(e).__name__, str(e))


def _both(scenario):
    mine, theirs = _outcome(lambda: scenario(gt)), _outcome(lambda: scenario(torch))
    assert mine == theirs
    return mine


def test_grad_with_no_inputs_is_refused():
    def scenario(t):
        x = t.tensor([1.0], requires_grad=True)
        return t.autograd.grad(2 * x, [], grad_outputs=t.tensor([1.0]))

    kind, msg = _both(scenario)
    assert kind == "RuntimeError" and "cannot be empty" in msg


def test_materialized_zero_grads_can_be_differentiated_again():
    def scenario(t):
        x = t.tensor(0.5, requires_grad=True)
        a = t.tensor(1.0, requires_grad=True)
        (dydx,) = t.autograd.grad(x * a, x, create_graph=True)
        (d2,) = t.autograd.grad(dydx, x, create_graph=True, materialize_grads=True)
        (d3,) = t.autograd.grad(d2, x, materialize_grads=True)
        return d2.item(), d2.requires_grad, d3.item()

    assert _both(scenario) == ("ok", (0.0, True, 0.0))


def test_materialize_grads_refuses_an_unreached_gradient_edge():
    def scenario(t):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = t.tensor([3.0], requires_grad=True)
        edge = t.autograd.graph.get_gradient_edge(y * 1)
        return t.autograd.grad((x * 2).sum(), (x, edge), materialize_grads=True)

    kind, msg = _both(scenario)
    assert kind == "RuntimeError" and "GradientEdge" in msg


def test_post_accumulate_grad_hook_must_return_none():
    def scenario(t):
        w = t.tensor([1.0, 2.0], requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda p: p.grad)
        w.sum().backward()

    kind, msg = _both(scenario)
    assert kind == "RuntimeError" and msg == "Tensor post accumulate grad hooks should return None."


def test_setup_context_sees_forward_defaults():
    def scenario(t):
        class Pow(t.autograd.Function):
            @staticmethod
            def forward(x, y=3):
                return t.pow(x, y)

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y = inputs
                ctx.save_for_backward(x)
                ctx.y = y

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.y * t.pow(x, ctx.y - 1), None

        x = t.tensor(2.0, requires_grad=True)
        out = Pow.apply(x)
        return out.item(), t.autograd.grad(out, x)[0].item()

    assert _both(scenario) == ("ok", (8.0, 12.0))


@pytest.mark.parametrize("materialize_non_diff", [True, False])
def test_non_differentiable_output_gradient_materialization(materialize_non_diff):
    def scenario(t):
        seen = []

        class Func(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                out0, out1 = x.clone(), x.clone()
                ctx.mark_non_differentiable(out1)
                ctx._materialize_non_diff_grads = materialize_non_diff
                return out0, out1

            @staticmethod
            def backward(ctx, g0, g1):
                seen.append(None if g1 is None else g1.tolist())
                return g0

        Func.apply(t.tensor(1.0, requires_grad=True))[0].backward()
        return seen

    assert _both(scenario) == ("ok", [0.0 if materialize_non_diff else None])


def _hook_counts(t):
    a = t.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    counts = []
    cnt = {"tensor": 0, "pre": 0, "post": 0}

    def bump(key):
        cnt[key] += 1

    a.register_hook(lambda g: bump("tensor"))
    b.register_hook(lambda g: bump("tensor"))
    acc = b.grad_fn.next_functions[0][0]
    for node in (acc, b.grad_fn):
        node.register_hook(lambda gi, go: bump("post"))
        node.register_prehook(lambda go: bump("pre"))
    runs = [lambda: t.autograd.grad(c, inputs=(b,), retain_graph=True),
            lambda: t.autograd.grad(c, inputs=(a, b), retain_graph=True),
            lambda: c.backward(retain_graph=True),
            lambda: c.backward(inputs=(a, b), retain_graph=True)]
    for run in runs:
        cnt.update(tensor=0, pre=0, post=0)
        run()
        counts.append(dict(cnt))
    return counts


def test_which_hooks_run_for_grad_and_backward_with_inputs():
    mine = _hook_counts(gt)
    assert mine == _hook_counts(torch)
    assert mine[3] == {"tensor": 2, "pre": 2, "post": 2}  # the leaf's AccumulateGrad ran


def test_numpy_of_a_tensor_requiring_grad_is_allowed_under_no_grad():
    def scenario(t):
        x = t.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        with t.no_grad():
            arr = x.numpy()
            arr[0, 0] = 5.0  # the same memory
        return x.tolist(), (x * 1).requires_grad

    assert _both(scenario) == ("ok", ([[5.0, 2.0], [3.0, 4.0]], True))
    kind, msg = _both(lambda t: t.ones(2, requires_grad=True).numpy())
    assert kind == "RuntimeError" and "Can't call numpy()" in msg


def test_backward_inputs_may_be_gradient_edges():
    def scenario(t):
        edge_of = t.autograd.graph.get_gradient_edge
        x = t.tensor([1.0, 2.0], requires_grad=True).clone()
        y = t.tensor([3.0, 4.0], requires_grad=True).clone()
        y.retain_grad()
        out = x.clone() * y
        t.autograd.backward(out.sum(), inputs=(edge_of(x), y), retain_graph=True)
        t.autograd.backward(out.sum(), inputs=(edge_of(x), edge_of(y)))
        leaf = t.tensor([1.0, 2.0], requires_grad=True)
        t.autograd.backward((leaf * 3).sum(), inputs=(edge_of(leaf),))
        return x.grad, y.grad.tolist(), leaf.grad.tolist()

    assert _both(scenario) == ("ok", (None, [2.0, 4.0], [3.0, 3.0]))  # (y retains its grad)


def _anomaly_warnings(t, warnings_are_errors):
    import contextlib
    import io
    import warnings

    err = io.StringIO()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            with t.autograd.detect_anomaly():
                if warnings_are_errors:
                    warnings.simplefilter("error")
                a = t.tensor([1.0, 2.0], requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
                with contextlib.redirect_stderr(err):
                    t.autograd.grad(d2.sum(), a)
        except RuntimeError as e:
            raised = str(e)[:60]
    return raised, [str(x.message)[:40] for x in w], "Error detected in PowBackward0" in err.getvalue()


@pytest.mark.parametrize("warnings_are_errors", [False, True])
def test_detect_anomaly_names_the_failing_node(warnings_are_errors):
    mine = _anomaly_warnings(gt, warnings_are_errors)
    assert mine == _anomaly_warnings(torch, warnings_are_errors)
    assert len(mine[1]) == (1 if warnings_are_errors else 2)
