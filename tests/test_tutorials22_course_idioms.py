"""Idioms from the d2l chapters (builders' guide, optimisation, CNNs, batch norm), the
makemore lectures and the torch.func tutorials, each in a small case of its own, compared
live with PyTorch: what the printed lines of those programs depend on."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402


def _both(fn):
    return fn(torch), fn(gt)


def test_row_assignment_takes_a_one_row_result():
    """out[i] = model(x[[i]]): a (1, n) value written into an (n,) row."""
    def run(lib):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 5)
        x = lib.randn(3, 4)
        out = lib.zeros(3, 5)
        for i in range(3):
            out[i] = lin(x[[i]])
        return str(out)
    ref, got = _both(run)
    assert got == ref


def test_lazy_batchnorm_buffers_after_a_forward():
    def run(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.LazyConv2d(3, kernel_size=3), lib.nn.LazyBatchNorm2d(),
                                lib.nn.Sigmoid(), lib.nn.Flatten(), lib.nn.LazyLinear(4),
                                lib.nn.LazyBatchNorm1d())
        y = net(lib.randn(5, 1, 6, 6))
        return [str(y.shape), str(net[1].running_mean), str(net[1].num_batches_tracked),
                str(net[5].running_var), repr(net)]
    ref, got = _both(run)
    assert got == ref


def test_multisteplr_last_lr_through_training_steps():
    def run(lib):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.5)
        sch = lib.optim.lr_scheduler.MultiStepLR(opt, milestones=[3, 6], gamma=0.5)
        lrs = []
        for _ in range(8):
            lrs.append(sch.get_last_lr()[0])
            opt.step()
            sch.step()
        return lrs, isinstance(sch, lib.optim.lr_scheduler.LRScheduler)
    ref, got = _both(run)
    assert got == ref


def test_sgd_weight_decay_on_one_group_only():
    def run(lib):
        lib.manual_seed(0)
        lin = lib.nn.Linear(6, 1)
        opt = lib.optim.SGD([{"params": lin.weight, "weight_decay": 3},
                             {"params": lin.bias}], lr=0.01)
        x, y = lib.randn(8, 6), lib.randn(8, 1)
        for _ in range(5):
            opt.zero_grad()
            lib.nn.MSELoss(reduction="none")(lin(x), y).mean().backward()
            opt.step()
        return [str(lin.weight), str(lin.bias), str(lin.weight.norm())]
    ref, got = _both(run)
    assert got == ref


def test_optimizer_state_dict_after_momentum_steps():
    def run(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU(), lib.nn.Linear(2, 1))
        opt = lib.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
        lines = [f"{k} \t {v}" for k, v in opt.state_dict().items()]
        net(lib.randn(4, 3)).sum().backward()
        opt.step()
        state = opt.state_dict()
        lines.append(str(state["state"][0]["momentum_buffer"]))
        lines.append(str(sorted(state["state"])))
        lines += [f"{k} \t {v.size()}" for k, v in net.state_dict().items()]
        return lines
    ref, got = _both(run)
    assert got == ref


def test_dropout2d_network_repr_and_log_softmax_output():
    def run(lib):
        lib.manual_seed(0)
        nn = lib.nn
        net = nn.Sequential(nn.Conv2d(1, 4, 3, 1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Dropout2d(0.25), nn.Flatten(start_dim=1), nn.Linear(36, 3),
                            nn.Dropout2d(0.5), nn.LogSoftmax(dim=1))
        return [repr(net), str(net(lib.rand((2, 1, 8, 8))))]
    ref, got = _both(run)
    assert got == ref


def test_one_hot_of_a_transposed_batch_as_float():
    def run(lib):
        x = lib.tensor([[0, 2, 1], [3, 3, 0]])
        h = lib.nn.functional.one_hot(x.T, 4).type(lib.float32)
        return [str(h), str(h.dtype), str(lib.nn.functional.one_hot(lib.tensor([0, 2]), 5))]
    ref, got = _both(run)
    assert got == ref


def test_manual_cross_entropy_gradient_written_in_place():
    """dlogits = softmax; dlogits[range(n), y] -= 1; dlogits /= n, checked against the
    gradient of F.cross_entropy as makemore's exercise checks it."""
    def run(lib):
        F = lib.nn.functional
        lib.manual_seed(0)
        logits = lib.randn(6, 5, requires_grad=True)
        y = lib.tensor([1, 0, 4, 2, 2, 3])
        F.cross_entropy(logits, y).backward()
        d = F.softmax(logits, 1)
        d[range(6), y] -= 1
        d /= 6
        return [str(d), lib.allclose(d, logits.grad), str((d - logits.grad).abs().max() < 1e-7)]
    ref, got = _both(run)
    assert got == ref


def test_histogram_with_density_of_activations():
    def run(lib):
        lib.manual_seed(0)
        t = lib.tanh(lib.randn(200) * 2)
        hy, hx = lib.histogram(t, density=True)
        return [str(hy), str(hx), "%+.2f %.2f %.2f%%" % (t.mean(), t.std(),
                                                        (t.abs() > 0.97).float().mean() * 100)]
    ref, got = _both(run)
    assert got == ref


def test_batchnorm_statistics_over_two_dims():
    """BatchNorm1d of a (B, T, C) input in makemore's WaveNet: mean/var over dims (0, 1)."""
    def run(lib):
        lib.manual_seed(0)
        x = lib.randn(4, 3, 5)
        return [str(x.mean((0, 1), keepdim=True)), str(x.var((0, 1), keepdim=True)),
                str(x.var(0, keepdim=True, unbiased=True))]
    ref, got = _both(run)
    assert got == ref


def test_ensemble_of_stacked_modules_under_vmap():
    def run(lib):
        lib.manual_seed(0)
        models = [lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))
                  for _ in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        base = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(), lib.nn.Linear(3, 2))

        def fmodel(params, buffers, x):
            return lib.func.functional_call(base, (params, buffers), (x,))

        x = lib.randn(3, 5, 4)
        out = lib.vmap(fmodel)(params, buffers, x)
        same = lib.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x[0])
        loop = lib.stack([m(x[0]) for m in models])
        return [str(out), str(same), lib.allclose(same, loop, atol=1e-6),
                [p.size(0) for p in params.values()]]
    ref, got = _both(run)
    assert got == ref
