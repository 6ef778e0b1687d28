"""The graph frees itself by reference counting, as PyTorch's does.

A leaf and its AccumulateGrad (with or without hooks), an op's output and the node that
saved it, a tensor and the retain_grad hook of its grad_fn: each pair links both ways in a
naive design, and then every large tensor used in a graph waits for Python's cyclic
garbage collector (the bench's W4 lost 15 ms a run to the page faults of buffers it had
not yet freed).
PyTorch holds the back links weakly; so do we. These tests run programs with the cyclic
collector off and check that it has nothing left to find, for every op in the table.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.engine.ops.registry import OPS


def _cyclic_garbage(program) -> list:
    """What the cyclic collector would have to free after `program` returns.

    Only the youngest generation is collected: with the collector off, everything the
    program made stays there, and a full collection of a test process that has PyTorch and
    its OpInfo tables loaded costs seconds, for each of the table's ops."""
    gc.collect(0)
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        program()
        gc.collect(0)
        found = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    return [type(o).__name__ for o in found]


def test_the_check_finds_a_cycle_the_program_leaves():
    def program():
        x = _leaf()
        held = [x * 2]
        held.append(held)  # a cycle holding a graph: only the cyclic collector frees it

    assert "list" in _cyclic_garbage(program) and _cyclic_garbage(lambda: None) == []


def _leaf(shape=(2, 3), seed=0):
    values = np.random.default_rng(seed).uniform(0.3, 1.5, size=shape)
    return gt.tensor(values, dtype=gt.float64, requires_grad=True)


def test_a_leaf_used_in_a_graph_is_freed_when_dropped():
    x = _leaf()
    (gt.sin(x) * x + x * x).mean().backward()
    data, grad = weakref.ref(x), weakref.ref(x.grad)
    gc.disable()
    try:
        del x
        assert data() is None and grad() is None
    finally:
        gc.enable()


def test_elementwise_workload_leaves_no_cycles():
    def program():
        x = _leaf()
        (gt.sin(x) * x + x * x).mean().backward()

    assert _cyclic_garbage(program) == []


def test_an_output_its_node_saved_leaves_no_cycle_without_backward():
    def program():
        x = _leaf()
        y = x.exp().tanh().sigmoid()
        del y

    assert _cyclic_garbage(program) == []


def test_retain_grad_leaves_no_cycle_and_still_retains():
    kept = []

    def program():
        x = _leaf()
        y = x * 2
        y.retain_grad()
        y.exp_()  # the hook follows y to its new grad_fn
        y.sum().backward()
        kept.append(y.grad.tolist())

    assert _cyclic_garbage(program) == []
    assert kept == [[[1.0] * 3] * 2]  # d(sum)/dy, stored by the hook that moved


def test_double_backward_through_a_saved_output_leaves_no_cycle():
    results = []

    def program():
        x = _leaf()
        (g,) = gt.autograd.grad(x.exp().sum(), x, create_graph=True)
        (gg,) = gt.autograd.grad(g.sum(), x)
        results.append((g.grad_fn.name(), gg.tolist()))

    assert _cyclic_garbage(program) == []
    assert results[0][0] == "MulBackward0"
    np.testing.assert_allclose(results[0][1], _leaf().detach().exp().tolist())


def test_a_leaf_hook_survives_while_no_graph_holds_the_accumulator():
    x = _leaf()
    seen = []
    x.register_hook(lambda g: seen.append(g.shape) or g * 2)
    gc.collect()  # nothing but the leaf references its accumulator now
    (x * 3).sum().backward()
    assert seen == [gt.Size([2, 3])]
    assert x.grad.tolist() == [[6.0] * 3] * 2


def test_a_hooked_leaf_leaves_no_cycle_and_its_hook_can_be_removed():
    seen = []

    def hook(g):
        seen.append(g.shape)

    def program():
        x = _leaf()
        handle = x.register_hook(hook)
        (x * 3).sum().backward()
        (x * 3).sum().backward()  # a new accumulator, the same hooks
        handle.remove()
        (x * 3).sum().backward()

    assert _cyclic_garbage(program) == []
    assert seen == [gt.Size([2, 3])] * 2


def test_graphs_alive_together_share_the_leaf_accumulator():
    x = _leaf()
    y, z = x * 2, x.exp()
    acc = y.grad_fn.next_functions[0][0]
    assert z.grad_fn.next_functions[0][0] is acc
    assert acc.variable is x


def test_the_accumulator_keeps_a_dropped_leaf_reachable():
    """As PyTorch: the graph holds the leaf through AccumulateGrad.variable."""
    x = _leaf()
    y = x * 2
    del x
    y.sum().backward()
    assert y.grad_fn.next_functions[0][0].variable.grad.tolist() == [[2.0] * 3] * 2


def test_in_place_on_a_saved_output_is_still_caught():
    x = _leaf()
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match="output 0 of Exp, is at version 1"):
        y.sum().backward()


CALLED = sorted(name for name, op in OPS.items() if op.torch_call)


def _uses_b(expr: str) -> bool:
    return "b" in compile(expr, "<torch_call>", "eval").co_names


@pytest.mark.parametrize("name", CALLED)
def test_every_op_frees_its_graph_by_reference_counting(name):
    """Forward alone, then forward and backward: no cycle either way (on the first of a
    few shapes the op's torch_call accepts; a backward PyTorch does not have is skipped)."""
    op = OPS[name]
    uses_b = _uses_b(op.torch_call)

    def program(shapes, backward: bool):
        import warnings

        a = _leaf(shapes[0], seed=1)
        b = _leaf(shapes[1] if uses_b else (), seed=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = eval(op.torch_call, {"torch": gt}, {"a": a, "b": b})  # noqa: S307 - the table's own text
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if backward:
            for o in outs:
                if isinstance(o, gt.Tensor) and o.requires_grad:
                    o.sum().backward(retain_graph=True)

    shapes = (((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), ()), ((3,), (3,)), ((3, 3), (3, 3)))
    runs = [(shape, backward) for backward in (True, False) for shape in shapes]
    for shape, backward in runs:
        try:
            program(shape, backward)
        except RuntimeError as exc:  # a shape the op rejects, or a backward it does not have
            last = exc
            continue
        break
    else:
        pytest.skip(f"no shape runs: {last}")
    assert _cyclic_garbage(lambda: program(shape, False)) == []
    assert _cyclic_garbage(lambda: program(shape, backward)) == []
