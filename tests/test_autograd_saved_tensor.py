"""A grad_fn's `_saved_<x>` / `_raw_saved_<x>` from plain Python, SavedTensor.register_hooks,
and the few torch._C autograd internals gradcli offers, compared with PyTorch 2.13."""

from __future__ import annotations

import pytest
from scenario_log import attempt as _attempt
from scenario_log import same as _same

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def test_saved_inputs_are_the_tensors_themselves_and_freed_after_backward():
    def scenario(t, log):
        a = t.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * a
        c = a * b
        log.append(b.grad_fn._saved_self is a)
        log.append(b.grad_fn._saved_other is a)
        log.append(c.grad_fn._saved_other is b)
        p = a ** 2
        log.append(p.grad_fn._saved_exponent)
        log.append(p.grad_fn._saved_self is a)
        _attempt(log, lambda: p.grad_fn._raw_saved_exponent)
        _attempt(log, lambda: p.grad_fn._saved_nothing)
        c.sum().backward()
        _attempt(log, lambda: c.grad_fn._saved_self)
        p.sum().backward()
        log.append(p.grad_fn._saved_exponent)  # a Python operand outlives backward

    log = _same(scenario)
    assert log[:3] == ["True", "True", "True"]
    assert "second time" in log[-2]


def test_saved_result_is_a_new_tensor_on_the_same_node_and_version():
    def scenario(t, log):
        a = t.tensor([0.5, 1.0], requires_grad=True)
        b = t.exp(a)
        r = b.grad_fn._saved_result
        log.append(r)
        log.append(r is b)
        log.append(r.grad_fn is b.grad_fn)
        with t.no_grad():
            b += 1
        log.append((b._version, r._version))
        log.append(r)

    log = _same(scenario)
    assert log[1] == "False" and log[2] == "True"


def test_raw_saved_handle_is_stable_and_cannot_be_made():
    def scenario(t, log):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        y = a * a
        h = y.grad_fn._raw_saved_self
        log.append(h is y.grad_fn._raw_saved_self)
        log.append(type(h).__name__)
        log.append(isinstance(h, t.autograd.SavedTensor))
        log.append(t.autograd.SavedTensor is t._C._autograd.SavedTensor)
        _attempt(log, lambda: t.autograd.SavedTensor())

    log = _same(scenario)
    assert log[0] == "True" and "forbidden" in log[-1]


@pytest.mark.parametrize("leaf", [True, False])
def test_register_hooks_changes_what_backward_reads(leaf):
    def scenario(t, log):
        def make():
            base = t.tensor([1.0, -2.0, 3.0], requires_grad=True)
            return (base, base) if leaf else (base, base + 1)

        base, a = make()
        y = a * a
        y.grad_fn._raw_saved_self.register_hooks(lambda x: 2 * x, lambda x: x)
        log.append(y.grad_fn._saved_self)
        log.append(y.grad_fn._saved_other)
        y.sum().backward()
        log.append(base.grad)

        base, a = make()
        y = a ** 3
        y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
        (g,) = t.autograd.grad(y.sum(), (a,), create_graph=True)
        g.sum().backward()
        log.append(base.grad)

        base, a = make()
        y = a * a
        y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: 1)
        _attempt(log, lambda: y.grad_fn._saved_self)

    log = _same(scenario)
    assert "unpack_hook" in log[-1]


def test_register_hooks_errors():
    def scenario(t, log):
        a = t.tensor([1.0, 2.0], requires_grad=True)
        y = a * a
        h = y.grad_fn._raw_saved_self
        _attempt(log, lambda: h.register_hooks(lambda x: x))
        _attempt(log, lambda: h.register_hooks(1, 1))
        seen = []

        def pack(x):
            seen.append(t.is_grad_enabled())
            return x

        h.register_hooks(pack, lambda x: x)
        log.append(seen)
        _attempt(log, lambda: h.register_hooks(lambda x: x, lambda x: x))

        def inplace_double(x):
            x *= 2
            return x

        z = a * a
        _attempt(log, lambda: z.grad_fn._raw_saved_self.register_hooks(inplace_double, lambda x: x))
        e = t.exp(a.detach().requires_grad_())
        _attempt(log, lambda: e.grad_fn._raw_saved_result.register_hooks(inplace_double, lambda x: x))

    log = _same(scenario)
    assert log[0].startswith("TypeError: register_hooks(): incompatible function arguments")
    assert log[2] == "[False]"
    assert "already been set" in log[3]
    assert "pack hook is modifying its input in place" in log[4]


def test_custom_function_raw_saved_tensors():
    def scenario(t, log):
        def get_fn(save):
            class MyFn(t.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    if save:
                        ctx.save_for_backward(x, None)
                    return x * 1

                @staticmethod
                def backward(ctx, g):
                    return g

            return MyFn

        a = t.tensor([1.0, 2.0], requires_grad=True)
        y = get_fn(True).apply(a)
        saved = y.grad_fn._raw_saved_tensors
        log.append([type(s).__name__ for s in saved])
        _attempt(log, lambda: saved[1].register_hooks(lambda x: x, lambda x: x))
        saved[0].register_hooks(lambda x: 3 * x, lambda x: x)
        log.append(y.grad_fn.saved_tensors[0])
        y.sum().backward()
        _attempt(log, lambda: y.grad_fn._raw_saved_tensors)
        y = get_fn(False).apply(a)
        log.append(y.grad_fn._raw_saved_tensors)

    log = _same(scenario)
    assert "None is forbidden" in log[1]
    assert log[-1] == "()"


def test_torch_C_autograd_internals():
    def scenario(t, log):
        x = t.tensor([1.0, 2.0], requires_grad=True)
        y = t.tensor([3.0, 4.0], requires_grad=True)
        a = x + y
        log.append(isinstance(a.grad_fn.next_functions[0][0], t._C._functions.AccumulateGrad))
        log.append(t._C._current_graph_task_id())
        ids = []
        b = (a * 2)
        b.register_hook(lambda g: ids.append(t._C._current_graph_task_id()))
        b.sum().backward(retain_graph=True)
        b.sum().backward(retain_graph=True)
        log.append(ids[1] - ids[0])
        _attempt(log, lambda: t._C._will_engine_execute_node(b.grad_fn))
        acc = a.grad_fn.next_functions[0][0]

        def check(g):
            log.append(t._C._will_engine_execute_node(b.grad_fn))
            _attempt(log, lambda: t._C._will_engine_execute_node(b))
            _attempt(log, lambda: t._C._will_engine_execute_node(acc))

        c = b * 1
        c.register_hook(check)
        t.autograd.grad(c.sum(), (x,), retain_graph=True)
        t.autograd.grad(c.sum(), (a,), retain_graph=True)
        log.append(t._C._autograd._saved_tensors_hooks_is_enabled())
        with t.autograd.graph.saved_tensors_hooks(lambda v: v, lambda v: v):
            def disable():
                with t.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
                    pass
            _attempt(log, disable)

    log = _same(scenario)
    assert log[0] == "True" and log[1] == "-1" and log[2] == "1"
    assert "leaf node was passed" in log[6]


def test_torch_C_undefined_grad_delayed_error_weak_ref():
    def scenario(t, log):
        class Keep(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                log.append(g is None)
                return g

        x = t.ones(2, requires_grad=True)
        t._C._functions.UndefinedGrad()(Keep.apply(x)).sum().backward()
        log.append(x.grad)
        y = t.tensor([0.25, 0.75], requires_grad=True)
        y_safe = t._C._functions.DelayedError("Boom!", 1)(y)
        out = x * y_safe
        _attempt(log, lambda: out.sum().backward())
        out = x * y_safe
        log.append(t.autograd.grad(out.sum(), x)[0])

        def make():
            z = x * 2
            return z / 2, t._C._WeakTensorRef(z)

        w, ref = make()
        log.append(ref.expired())

    log = _same(scenario)
    assert log[0] == "True" and "Boom!" in log[2]


def test_construct_standard_basis_for():
    for mod in (gt, torch):
        ins = (mod.zeros(2, dtype=mod.float64), mod.zeros(3), mod.zeros(()))
        blocks = mod.autograd.functional._construct_standard_basis_for(ins, (2, 3, 1))
        assert [b.dtype for b in blocks] == [mod.float64, mod.float32, mod.float32]
        assert [tuple(b.shape) for b in blocks] == [(6, 2), (6, 3), (6, 1)]
        full = mod.cat([b.double() for b in blocks], dim=1)
        assert full.tolist() == mod.eye(6, dtype=mod.float64).tolist()


def test_graph_node_is_a_virtual_base_of_every_node_class():
    def facts(t):
        node_type = t.autograd.graph.Node
        a = t.rand(3, requires_grad=True)
        b = a.exp()

        class Func(t.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g

        out = Func.apply(a)
        return [
            isinstance(b.grad_fn, node_type), issubclass(type(b.grad_fn), node_type),
            node_type in type(b.grad_fn).mro(), isinstance(b.grad_fn.next_functions[0][0], node_type),
            isinstance(t._C._functions.AccumulateGrad, node_type),
            issubclass(t._C._functions.AccumulateGrad, node_type),
            issubclass(t._C._functions.DelayedError, node_type),
            isinstance(None, node_type), isinstance(node_type, node_type), issubclass(node_type, node_type),
            issubclass(t.autograd.function.BackwardCFunction, node_type),
            isinstance(out.grad_fn, node_type), node_type in type(out.grad_fn).mro(),
        ]

    assert facts(gt) == facts(torch)


def test_unsafe_version_counter_tools():
    def scenario(t, log):
        x = t.ones(2, requires_grad=True).clone()
        x.add_(1)
        x.add_(2)
        v = x[0:1]  # a view shares the counter
        with t.autograd._unsafe_preserve_version_counter(x):
            x.mul_(2)
        log.append((x._version, v._version))
        t._C._autograd._unsafe_set_version_counter((x,), (0,))
        log.append((x._version, v._version))
        y = t.ones(2, requires_grad=True).clone()
        with t.autograd._unsafe_preserve_version_counter((x, y)):
            x.mul_(2)
            y.mul_(3)
        log.append((x._version, y._version))
        _attempt(log, lambda: t._C._autograd._unsafe_set_version_counter((x,), (-1,)))

    log = _same(scenario)
    assert log[0] == "(2, 2)" and "Cannot set" in log[-1]
