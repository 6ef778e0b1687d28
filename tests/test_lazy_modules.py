"""The lazy conv and batch-norm layers of d2l's CNN chapters (nn.LazyConv1d/2d,
nn.LazyBatchNorm1d/2d/3d) against PyTorch: their printing before and after the first
input, the class they turn into, the initialisation drawn at that moment, an optimizer
made before it, and what follows."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import gradcli.torch as gt  # noqa: E402
from tests.test_parametrize import _both  # noqa: E402


@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.LazyConv2d(4, kernel_size=3, padding=1), (2, 3, 5, 5)),
    (lambda nn: nn.LazyConv2d(4, 3, stride=2, bias=False, groups=2), (1, 4, 6, 6)),
    (lambda nn: nn.LazyConv2d(2, (1, 2)), (3, 5, 4)),
    (lambda nn: nn.LazyConv1d(3, 2, dilation=2), (2, 5, 7)),
], ids=["conv2d", "conv2d-groups", "conv2d-unbatched", "conv1d"])
def test_lazy_conv(make, shape):
    def scenario(lib):
        conv = make(lib.nn)
        before = [repr(conv), repr(conv.weight), type(conv).__name__]
        opt = lib.optim.SGD(conv.parameters(), lr=0.5)
        x = lib.randn(*shape)
        out = conv(x)
        out.pow(2).sum().backward()
        opt.step()
        return before + [repr(conv), type(conv).__name__, str(type(conv)), out, conv.weight,
                         conv.weight.grad, list(conv.state_dict()), lib.rand(2)]

    _both(scenario)


@pytest.mark.parametrize("make,shape", [
    (lambda nn: nn.LazyBatchNorm2d(), (3, 4, 2, 2)),
    (lambda nn: nn.LazyBatchNorm1d(momentum=0.3), (5, 3)),
    (lambda nn: nn.LazyBatchNorm1d(affine=False), (4, 2, 3)),
    (lambda nn: nn.LazyBatchNorm3d(track_running_stats=False), (2, 2, 2, 2, 2)),
], ids=["bn2d", "bn1d", "bn1d-no-affine", "bn3d-no-stats"])
def test_lazy_batch_norm(make, shape):
    def scenario(lib):
        bn = make(lib.nn)
        before = [repr(bn), [repr(t) for _, t in bn.named_buffers()],
                  [repr(p) for p in bn.parameters()]]
        x = lib.randn(*shape, requires_grad=True)
        out = bn(x)
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        bn.eval()
        again = bn(x)
        return before + [repr(bn), type(bn).__name__, out, x.grad, again,
                         sorted(bn.state_dict())] + [t for _, t in bn.named_buffers()]

    _both(scenario)


def test_lazy_layers_in_a_d2l_lenet():
    def scenario(lib):
        nn = lib.nn
        net = nn.Sequential(nn.LazyConv2d(2, kernel_size=3, padding=1), nn.LazyBatchNorm2d(),
                            nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
                            nn.LazyLinear(5), nn.LazyBatchNorm1d(), nn.LazyLinear(3))
        text = repr(net)
        loss = net(lib.randn(4, 1, 6, 6)).logsumexp(1).sum()
        loss.backward()
        return [text, repr(net), loss, net[0].weight.grad, net[1].weight.grad,
                net[6].running_var]

    _both(scenario)


def test_uninitialized_buffer_prints_as_pytorch():
    assert repr(gt.nn.LazyBatchNorm2d().running_mean) == \
        repr(torch.nn.LazyBatchNorm2d().running_mean)
    assert str(type(gt.nn.LazyBatchNorm2d().running_var)) == \
        str(type(torch.nn.LazyBatchNorm2d().running_var))
