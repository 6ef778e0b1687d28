"""InstanceNorm1d/2d/3d and F.instance_norm compared with PyTorch: the graph ATen builds
(ViewBackward0 over NativeBatchNormBackward0 with RepeatBackward0 parameters), values and
gradients (also twice differentiated), running statistics in train and eval mode, the
layers' repr, parameters and buffers, the warnings and errors; and batch_norm's checks of
its per-channel tensors."""

from __future__ import annotations

import pytest
from scenario_log import attempt, same, same_recording_warnings

torch = pytest.importorskip("torch")


def rounded(t, digits: int = 4) -> list:
    return [round(v, digits) + 0.0 for v in t.detach().reshape(-1).tolist()]


def sample(t, *shape, dtype=None):
    """A deterministic input of `shape` with distinct values per channel."""
    n = 1
    for s in shape:
        n *= s
    x = t.arange(n, dtype=dtype or t.float32).reshape(shape)
    return (x * 0.37).sin() * 2 + x.remainder(3) * 0.25


LAYERS = {"InstanceNorm1d": (2, 3, 5), "InstanceNorm2d": (2, 3, 2, 3),
          "InstanceNorm3d": (2, 3, 2, 2, 2)}


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("track", [False, True])
def test_layer_forward_backward_and_state(name, affine, track):
    shape = LAYERS[name]

    def scenario(t, log):
        m = getattr(t.nn, name)(3, affine=affine, track_running_stats=track, momentum=0.3)
        log.append(repr(m))
        log.append([n for n, _ in m.named_parameters()])
        log.append([(n, None if b is None else rounded(b)) for n, b in m.named_buffers()])
        log.append(sorted(m.state_dict().keys()))
        if affine:
            with t.no_grad():
                m.weight.copy_(t.tensor([0.5, -1.5, 2.0]))
                m.bias.copy_(t.tensor([0.1, 0.2, -0.3]))
        x = sample(t, *shape).requires_grad_()
        y = m(x)
        fn = y.grad_fn
        log.append((fn.name(), fn.next_functions[0][0].name(),
                    [None if f is None else f.name()
                     for f, _ in fn.next_functions[0][0].next_functions]))
        log.append(rounded(y))
        (y * sample(t, *shape).cos()).sum().backward()
        log.append(rounded(x.grad))
        if affine:
            log.append((rounded(m.weight.grad, 3), rounded(m.bias.grad, 3)))
        if track:
            log.append((rounded(m.running_mean), rounded(m.running_var),
                        m.num_batches_tracked.item(), m.running_mean._version))
        m.eval()
        z = m(sample(t, *shape) * 3)
        log.append((z.grad_fn.name() if z.grad_fn is not None else None, rounded(z)))
        if track:
            log.append(m.running_mean._version)

    same(scenario)


def test_double_backward_and_unbatched_inputs():
    def scenario(t, log):
        x = sample(t, 2, 2, 4, dtype=t.float64).requires_grad_()
        y = t.nn.functional.instance_norm(x, weight=t.tensor([1.5, -0.5], dtype=t.float64))
        g, = t.autograd.grad(y.pow(3).sum(), x, create_graph=True)
        log.append(rounded(g, 6))
        gg, = t.autograd.grad(g.sum(), x)
        log.append(rounded(gg, 6))
        m = t.nn.InstanceNorm2d(2, affine=True)
        u = m(sample(t, 2, 3, 2).requires_grad_())
        log.append((tuple(u.shape), u.grad_fn.name(), rounded(u)))
        m = t.nn.InstanceNorm1d(3, track_running_stats=True)
        m.eval()
        log.append(rounded(m(sample(t, 3, 1))))  # (eval mode: one element is fine)
        c = sample(t, 4, 3, 2).transpose(0, 2).requires_grad_()  # not contiguous
        out = t.nn.functional.instance_norm(c)
        log.append(out.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
                   .name())

    same(scenario)


def test_threshold_relu_chain_in_place_twice_differentiated():
    """An in-place ReLU on the normalised view (CopySlices over the view), differentiated
    twice: the saved output of the in-place op unpacks with the view's history."""
    def scenario(t, log):
        net = t.nn.Sequential(t.nn.InstanceNorm2d(2), t.nn.ReLU(True))
        x = sample(t, 1, 2, 2, 3).requires_grad_()
        y = net(x)
        log.append((y.grad_fn.name(), y._base.grad_fn.name()))
        g, = t.autograd.grad(y.pow(2), [x], grad_outputs=t.ones_like(x), create_graph=True)
        log.append(rounded(g))
        log.append(rounded(t.autograd.grad(g.sum(), [x])[0]))

    same(scenario)


def test_warnings_and_errors():
    def scenario(t, log):
        F = t.nn.functional
        attempt(log, lambda: t.nn.InstanceNorm1d(4)(sample(t, 2, 3, 5)).shape)
        attempt(log, lambda: t.nn.InstanceNorm1d(4, affine=True)(sample(t, 2, 3, 5)))
        attempt(log, lambda: t.nn.InstanceNorm2d(3)(sample(t, 3, 4)))
        attempt(log, lambda: t.nn.InstanceNorm3d(3)(sample(t, 1, 2, 3, 4, 5, 6)))
        attempt(log, lambda: t.nn.InstanceNorm2d(3)(sample(t, 1, 3, 1, 1)))
        attempt(log, lambda: F.instance_norm(sample(t, 2, 3), use_input_stats=True))
        attempt(log, lambda: F.instance_norm(sample(t, 2, 3, 4), use_input_stats=False))
        attempt(log, lambda: F.instance_norm(sample(t, 2, 3, 4), weight=t.ones(4)))
        attempt(log, lambda: F.instance_norm(sample(t, 2, 3, 4), t.zeros(3), t.ones(4)))
        attempt(log, lambda: F.instance_norm(sample(t, 2, 3, 4, dtype=t.float64),
                                             weight=t.ones(3)))
        attempt(log, lambda: F.instance_norm(sample(t, 0, 3, 4)).shape)
        m = t.nn.InstanceNorm2d(3, affine=True, bias=False, momentum=None)
        log.append((repr(m), m.bias))

    same_recording_warnings(scenario)


def test_batch_norm_checks_its_per_channel_tensors():
    def scenario(t, log):
        F = t.nn.functional
        x = sample(t, 4, 3)
        for args in [(None, None, t.ones(4)), (None, None, None, t.ones(2)),
                     (t.ones(4), t.ones(3)), (t.ones(3), t.ones(5)),
                     (None, None, t.ones(3, dtype=t.float64)),
                     (t.zeros(3, dtype=t.float64), t.ones(3, dtype=t.float64))]:
            attempt(log, lambda args=args: rounded(F.batch_norm(x, *args, training=True)))
        attempt(log, lambda: F.batch_norm(x.double(), None, None, t.ones(3), training=True))

    same(scenario)
