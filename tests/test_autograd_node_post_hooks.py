"""Node.register_hook (a hook on a grad_fn): what it returns replaces the gradients the
node computed for its inputs, with PyTorch's checks of the returned tuple (compared with
PyTorch on the same scenarios)."""

from __future__ import annotations

from scenario_log import attempt, same


def test_a_node_hook_may_replace_the_gradients_it_sees():
    def scenario(torch, log):
        x = torch.ones(2, requires_grad=True)
        y = x * 3
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, None))
        y.sum().backward()
        log.append(x.grad)
        a, b = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
        c = a * b
        c.grad_fn.register_hook(lambda gi, go: (None, gi[1] * 5))  # None: nothing flows
        c.sum().backward()
        log.append((a.grad, b.grad))
        p = torch.ones(2, requires_grad=True)
        q = (p * 2).exp()
        q.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
        q.grad_fn.register_hook(lambda gi, go: log.append(gi) or None)  # sees the replacement
        q.sum().backward()
        log.append(p.grad)

    assert len(same(scenario)) == 4


def test_a_node_hook_returning_the_wrong_thing_is_refused():
    def scenario(torch, log):
        for hook in (lambda gi, go: (gi[0] * 10,), lambda gi, go: gi[0] * 10,
                     lambda gi, go: [gi[0], None], lambda gi, go: (gi[0], None, None),
                     lambda gi, go: (torch.ones(3), None)):
            x = torch.ones(2, requires_grad=True)
            y = x * 3
            y.grad_fn.register_hook(hook)
            attempt(log, lambda y=y: y.sum().backward())

    log = same(scenario)
    assert all("Error" in line for line in log)
