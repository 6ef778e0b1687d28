"""torch.nn.Module and containers against real PyTorch: registration, traversal order and
names, repr, state_dict, hooks, modes, conversions; subclasses written as plain Python."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")


def both(build):
    """build(lib) for gradcli and torch, with torch's initial weights copied into gradcli's."""
    torch.manual_seed(0)
    theirs = build(torch)
    ours = build(G)
    state = OrderedDict((k, G.tensor(v.detach().numpy().copy()))
                        for k, v in theirs.state_dict().items())
    ours.load_state_dict(state)
    return ours, theirs


def close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a._data), b.detach().numpy(), rtol=1.3e-6, atol=1e-5,
                               **kw)


def net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lib.nn.Linear(4, 3)
            self.act = lib.nn.ReLU()
            self.fc2 = lib.nn.Linear(3, 2, bias=False)
            self.register_buffer("scale", lib.ones(2))
            self.plain = lib.zeros(1)  # a plain tensor attribute: not registered

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x))) * self.scale

    return Net()


def test_registration_traversal_and_names():
    ours, theirs = both(net)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert repr(ours) == repr(theirs).replace("Net(", "Net(")
    assert isinstance(ours.fc1.weight, G.nn.Parameter)
    assert ours.fc1.weight.is_leaf and ours.fc1.weight.requires_grad


def test_forward_backward_matches():
    ours, theirs = both(net)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    out_o, out_t = ours(G.tensor(x)), theirs(torch.tensor(x))
    close(out_o, out_t)
    assert str(out_o.grad_fn.name()) == out_t.grad_fn.name()
    out_o.sum().backward()
    out_t.sum().backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        close(p.grad, q.grad)


def test_parameter_prints_and_ops_return_tensors():
    p = G.nn.Parameter(G.tensor([1.0, 2.0]))
    q = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    assert repr(p) == repr(q)
    assert type(p * 2) is G.Tensor
    assert repr(p * 2) == repr(q * 2)
    assert repr(G.nn.Parameter(G.ones(2), requires_grad=False)) == \
        repr(torch.nn.Parameter(torch.ones(2), requires_grad=False))


def test_reprs_of_containers_and_layers():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(OrderedDict([
            ("conv", nn.Sequential(nn.Linear(2, 2), nn.Tanh())),
            ("list", nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Linear(2, 1), nn.Sigmoid()])),
            ("dict", nn.ModuleDict({"a": nn.LeakyReLU(0.2), "b": nn.ELU(inplace=True)})),
            ("gelu", nn.GELU(approximate="tanh")), ("soft", nn.Softmax(dim=1)),
            ("ls", nn.LogSoftmax(1)), ("sp", nn.Softplus()), ("ht", nn.Hardtanh(-2, 2)),
            ("silu", nn.SiLU()), ("flat", nn.Flatten()), ("un", nn.Unflatten(1, (2, 1))),
            ("id", nn.Identity()), ("drop", nn.Dropout(0.2)), ("bil", nn.Bilinear(2, 3, 4)),
            ("loss", nn.CrossEntropyLoss(label_smoothing=0.1)), ("mse", nn.MSELoss()),
            ("plist", nn.ParameterList([nn.Parameter(lib.zeros(2, 3)), lib.ones(2)])),
            ("pdict", nn.ParameterDict({"w": nn.Parameter(lib.zeros(2))})),
        ]))

    ours, theirs = both(build)
    assert repr(ours) == repr(theirs)
    assert repr(ours[1:3]) == repr(theirs[1:3])
    assert repr(ours[-1]) == repr(theirs[-1])
    assert len(ours) == len(theirs)
    assert repr(G.nn.Sequential()) == repr(torch.nn.Sequential())


def test_state_dict_load_errors_match():
    ours, theirs = both(lambda lib: lib.nn.Linear(3, 2))
    sd_o, sd_t = ours.state_dict(), theirs.state_dict()
    assert repr(ours.load_state_dict(sd_o)) == repr(theirs.load_state_dict(sd_t))
    del sd_o["bias"], sd_t["bias"]
    sd_o["extra"] = G.zeros(1)
    sd_t["extra"] = torch.zeros(1)
    with pytest.raises(RuntimeError) as e_o:
        ours.load_state_dict(sd_o)
    with pytest.raises(RuntimeError) as e_t:
        theirs.load_state_dict(sd_t)
    assert str(e_o.value) == str(e_t.value)
    res_o = ours.load_state_dict(sd_o, strict=False)
    res_t = theirs.load_state_dict(sd_t, strict=False)
    assert repr(res_o) == repr(res_t)
    bad_o = OrderedDict(weight=G.zeros(3, 3), bias=G.zeros(2))
    bad_t = OrderedDict(weight=torch.zeros(3, 3), bias=torch.zeros(2))
    with pytest.raises(RuntimeError) as e_o:
        ours.load_state_dict(bad_o)
    with pytest.raises(RuntimeError) as e_t:
        theirs.load_state_dict(bad_t)
    assert str(e_o.value) == str(e_t.value)


def test_assignment_errors_match():
    for lib in (G, torch):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(TypeError) as err:
            m.weight = lib.zeros(2, 2)
        assert "cannot assign 'torch.FloatTensor' as parameter 'weight'" in str(err.value)

    class Early(G.nn.Module):
        def __init__(self):
            self.w = G.nn.Parameter(G.zeros(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):
        Early()
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        G.nn.Linear(1, 1).nope  # noqa: B018


def test_modes_hooks_apply_and_zero_grad():
    ours, theirs = both(net)
    for m in (ours, theirs):
        m.eval()
    assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]
    calls = []
    h1 = ours.fc1.register_forward_pre_hook(lambda mod, args: calls.append("pre"))
    ours.fc1.register_forward_hook(lambda mod, args, out: out * 0)
    out = ours(G.ones(1, 4))
    assert calls == ["pre"]
    h1.remove()
    ours(G.ones(1, 4))
    assert calls == ["pre"]
    assert float(out.abs().sum()) == 0.0  # the post hook replaced fc1's output
    names = []
    ours.apply(lambda m: names.append(type(m).__name__))
    assert names == ["Linear", "ReLU", "Linear", "Net"]
    ours.fc1.weight.grad = G.ones(3, 4)
    ours.zero_grad()
    assert ours.fc1.weight.grad is None
    ours.fc1.weight.grad = G.ones(3, 4)
    ours.zero_grad(set_to_none=False)
    assert float(ours.fc1.weight.grad.sum()) == 0.0
    ours.requires_grad_(False)
    assert not any(p.requires_grad for p in ours.parameters())


def test_conversions_keep_parameter_objects():
    m = G.nn.Linear(2, 1)
    w = m.weight
    m.double()
    assert m.weight is w and w.dtype == G.float64
    assert m.to(G.float32) is m and w.dtype == G.float32
    assert m.to("cpu") is m and m.cpu() is m
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        m.to("cuda")


def test_sequential_training_loop_matches_pytorch_w7():
    """The tutorial's polynomial fit: 2000 SGD steps agree with PyTorch's."""
    res = {}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # (PyTorch's threads only slow a 2000-row problem down)
    try:
        _fit(res)
    finally:
        torch.set_num_threads(threads)
    np.testing.assert_allclose(res[G][0], res[torch][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[G][1], res[torch][1], rtol=1e-4)


def _fit(res):
    import math

    for lib in (torch, G):
        x = lib.linspace(-math.pi, math.pi, 2000)
        y = lib.sin(x)
        xx = x.unsqueeze(-1).pow(lib.tensor([1, 2, 3]))
        model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1))
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor([[0.1, -0.2, 0.05]]))
            model[0].bias.fill_(0.3)
        loss_fn = lib.nn.MSELoss(reduction="sum")
        opt = lib.optim.SGD(model.parameters(), lr=1e-6)
        losses = []
        for _ in range(2000):
            loss = loss_fn(model(xx), y)
            losses.append(loss.item())
            opt.zero_grad()
            loss.backward()
            opt.step()
        res[lib] = (np.array(model[0].weight.tolist()), losses)


def test_utils_clip_and_vector():
    ours, theirs = both(net)
    for m in (ours, theirs):
        for p in m.parameters():
            p.grad = p.detach() * 3 + 1
    n_o = G.nn.utils.clip_grad_norm_(ours.parameters(), 0.5)
    n_t = torch.nn.utils.clip_grad_norm_(theirs.parameters(), 0.5)
    close(n_o, n_t)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        close(p.grad, q.grad)
    G.nn.utils.clip_grad_value_(ours.parameters(), 0.01)
    torch.nn.utils.clip_grad_value_(theirs.parameters(), 0.01)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        close(p.grad, q.grad)
    v_o = G.nn.utils.parameters_to_vector(ours.parameters())
    v_t = torch.nn.utils.parameters_to_vector(theirs.parameters())
    close(v_o, v_t)
    G.nn.utils.vector_to_parameters(v_o * 2, ours.parameters())
    torch.nn.utils.vector_to_parameters(v_t * 2, theirs.parameters())
    for p, q in zip(ours.parameters(), theirs.parameters()):
        close(p, q)


def test_idioms_cuda_device_version():
    assert G.cuda.is_available() is False
    assert G.backends.mps.is_available() is False
    assert G.cuda.device_count() == 0
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        G.cuda.current_device()
