"""Large elementwise kernels on several threads (gradcli/engine/parallel.py).

Splitting must never change a bit: every op in the table whose torch_call reads only
`a` is run on a large array with one thread and with several, forward and backward,
and the results are compared bit for bit (a new op is picked up by itself); whole-tensor
sums, which follow the thread count as PyTorch's do, are held at one count. Then the
machinery: the caller's numpy error state holds in the helpers, a helper's exception
reaches the caller, a forked child computes without the parent's threads, and
set_num_threads/get_num_threads behave as PyTorch's.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import gradcli.torch as gt
from gradcli.engine import parallel
from gradcli.engine.ops.registry import OPS

LARGE = parallel.MIN_ELEMENTS * 2 + 4099  # odd: pieces of unequal, unaligned lengths
DOMAINS = {"real": (0.3, 2.0, True), "positive": (0.3, 2.0, False), "small": (0.2, 1.2, True)}


@pytest.fixture
def threads():
    """Restores the thread count a test changes."""
    before = gt.get_num_threads()
    yield
    parallel.POOL.threads = before


@pytest.fixture
def cores(monkeypatch):
    """At least two cores as far as splitting knows, so the split runs on any machine, and
    no recent matrix product holding splitting back."""
    monkeypatch.setattr(parallel.POOL, "cores", max(2, parallel.POOL.cores))
    monkeypatch.setattr(parallel, "_blas_spin_until", [0.0])


@pytest.fixture
def pinned_sums(monkeypatch):
    """Whole-tensor sums follow torch.get_num_threads() on purpose, as PyTorch's do (a
    chunk per thread: tests/test_engine_summation.py checks both counts against it);
    pinned here, so that only the elementwise split varies between the two runs."""
    import types

    from gradcli.engine.ops import reductions

    monkeypatch.setattr(reductions, "POOL", types.SimpleNamespace(threads=2))


def _unary_ops() -> list:
    names = []
    for name, op in sorted(OPS.items()):
        if op.torch_call and "b" not in compile(op.torch_call, "<torch_call>", "eval").co_names:
            names.append(name)
    return names


def _run(op, values: np.ndarray, dtype):
    a = gt.tensor(values, dtype=dtype, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = eval(op.torch_call, {"torch": gt}, {"a": a, "b": None})  # noqa: S307 - the table's own text
        outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, gt.Tensor)]
        diff = [o for o in outs if o.requires_grad and o.dtype.is_floating_point]
        if diff:
            try:
                sum(o.sum() for o in diff).backward()
            except RuntimeError as exc:  # no derivative (remainder...): the forward alone
                assert "not implemented" in str(exc)
    return [o.detach().tolist() for o in outs], None if a.grad is None else a.grad.tolist()


def _same_bits(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "f":
        return x.shape == y.shape and np.array_equal(x.view(np.int64 if x.itemsize == 8 else np.int32),
                                                     y.view(np.int64 if y.itemsize == 8 else np.int32))
    return np.array_equal(x, y)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", _unary_ops())
def test_splitting_changes_no_bit(name, dtype, threads, cores, pinned_sums):
    op = OPS[name]
    lo, hi, signed = DOMAINS[op.domain]
    rng = np.random.default_rng(7)
    values = rng.uniform(lo, hi, size=(266, 266))  # square and even: every torch_call takes it
    if signed:
        values *= rng.choice([-1.0, 1.0], size=values.shape)
    dt = getattr(gt, dtype)
    try:
        gt.set_num_threads(1)
        alone = _run(op, values, dt)
        gt.set_num_threads(4)
        split = _run(op, values, dt)
    except RuntimeError as exc:  # an op whose torch_call needs another shape
        pytest.skip(str(exc))
    assert len(alone[0]) == len(split[0])
    for x, y in zip(alone[0], split[0]):
        assert _same_bits(np.asarray(x, dtype=dtype if np.asarray(x).dtype.kind == "f" else None),
                          np.asarray(y, dtype=dtype if np.asarray(y).dtype.kind == "f" else None))
    if alone[1] is not None:
        assert _same_bits(np.asarray(alone[1], dtype=dtype), np.asarray(split[1], dtype=dtype))


def _into(fn):
    """A function kernel as split_elementwise takes one: kernel(x, out=None)."""
    def kernel(a, out=None):
        r = fn(a)
        if out is None:
            return r
        out[...] = r
        return out

    return kernel


def _recording(calls: list):
    """A kernel that doubles and records (thread, size) of each call."""
    import threading

    def double(a):
        calls.append((threading.get_ident(), np.size(a)))
        return a * 2

    return _into(double)


def _kernels():
    return [np.sin, np.tanh, _into(lambda a: np.exp(a) * 2 - a)]


@pytest.mark.parametrize("kernel", _kernels(), ids=["ufunc-sin", "ufunc-tanh", "function"])
@pytest.mark.parametrize("size", [parallel.MIN_ELEMENTS - 1, parallel.MIN_ELEMENTS, LARGE, 10**6 + 3])
def test_split_kernel_equals_one_call(kernel, size, threads, cores):
    values = np.random.default_rng(size).standard_normal(size).reshape(-1, 1)
    gt.set_num_threads(3)
    out = parallel.split_elementwise(kernel)(values)
    assert out.shape == values.shape and out.dtype == values.dtype
    assert _same_bits(out, kernel(values))


def test_non_contiguous_and_small_inputs_take_the_plain_call(threads, cores):
    calls = []
    split = parallel.split_elementwise(_recording(calls))
    big = np.ones((LARGE, 2))
    gt.set_num_threads(2)
    assert _same_bits(split(big[:, 0]), big[:, 0] * 2)  # strided: one call on the whole
    assert [size for _, size in calls] == [LARGE]
    assert split(3.0) == 6.0
    calls.clear()
    assert _same_bits(split(big), big * 2)  # contiguous: in pieces
    assert len(calls) > 2 and sum(size for _, size in calls) == big.size


def test_the_callers_error_state_holds_in_the_helpers(threads, cores):
    negatives = -np.ones(LARGE)
    gt.set_num_threads(2)
    log = parallel.split_elementwise(np.log)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gradcli's default state: nan silently, as PyTorch
        assert np.isnan(log(negatives)).all()
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        log(negatives)


def test_a_helpers_exception_reaches_the_caller(threads, cores):
    @_into
    def kernel(a):
        if a[0] < 0:  # only the helper's piece (the second half) holds negatives
            raise ValueError("negative piece")
        return a + 1

    values = np.ones(LARGE)
    values[LARGE // 2:] = -1
    gt.set_num_threads(2)
    with pytest.raises(ValueError, match="negative piece"):
        parallel.split_elementwise(kernel)(values)
    assert _same_bits(parallel.split_elementwise(kernel)(np.ones(LARGE)), np.full(LARGE, 2.0))


def test_a_forked_child_starts_threads_of_its_own():
    program = textwrap.dedent(f"""
        import os, sys
        import numpy as np
        import gradcli.torch as torch
        from gradcli.engine import parallel
        parallel.POOL.cores = max(2, parallel.POOL.cores)
        x = torch.linspace(-3, 3, {LARGE}, dtype=torch.float64)
        want = x.sin().tolist()
        pid = os.fork()
        if pid == 0:
            ok = x.sin().tolist() == want and parallel.POOL.started >= 1
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
    """)
    if not hasattr(__import__("os"), "fork"):
        pytest.skip("no fork here")
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_set_num_threads_as_pytorch(threads):
    gt.set_num_threads(3)
    assert gt.get_num_threads() == 3
    for bad, message in ((0, "expects a positive integer"), (-2, "expects a positive integer"),
                         (2.5, "expects an int, but got float"), ("3", "expects an int, but got str"),
                         (True, "expects an int, but got bool")):
        with pytest.raises(RuntimeError, match=message):
            gt.set_num_threads(bad)
    assert gt.get_num_threads() == 3


def _all_on_this_thread(calls: list) -> bool:
    import threading

    return bool(calls) and {tid for tid, _ in calls} == {threading.get_ident()}


def test_one_thread_turns_splitting_off(threads, cores):
    """The calling thread computes it all (a function kernel still in chunks)."""
    calls = []
    gt.set_num_threads(1)
    assert _same_bits(parallel.split_elementwise(_recording(calls))(np.ones(LARGE)), np.full(LARGE, 2.0))
    assert _all_on_this_thread(calls) and sum(size for _, size in calls) == LARGE
    assert max(size for _, size in calls) == parallel._CHUNK


@pytest.mark.parametrize("kernel", _kernels()[1:], ids=["ufunc", "function"])
def test_helpers_hold_no_array_once_the_call_returns(kernel, threads, cores):
    """A helper keeping its last task's arrays kept a released saved tensor allocated
    (bench W6's backward peak grew by one array)."""
    import weakref

    gt.set_num_threads(2)
    values = np.linspace(-1, 1, LARGE)
    out = parallel.split_elementwise(kernel)(values)
    gone_in, gone_out = weakref.ref(values), weakref.ref(out)
    del values, out
    assert gone_in() is None and gone_out() is None


@pytest.mark.parametrize("product", ["mm", "matmul", "addmm", "bmm", "mv", "dot"])
def test_no_split_while_blas_threads_spin(product, threads, cores, monkeypatch):
    """After a large matrix product numpy's OpenBLAS workers spin on the cores for ~0.1 s:
    kernels run whole until then, and split again after."""
    calls = []
    kernel = _recording(calls)
    gt.set_num_threads(2)
    monkeypatch.setattr(parallel, "BLAS_SPIN_SECONDS", 3600.0)
    m = gt.ones(80, 80, dtype=gt.float64)
    v = gt.ones(parallel.BLAS_THREADED_WORK, dtype=gt.float64)
    {"mm": lambda: m @ m, "matmul": lambda: gt.matmul(m, m), "addmm": lambda: gt.addmm(m, m, m),
     "bmm": lambda: m.unsqueeze(0).bmm(m.unsqueeze(0)), "mv": lambda: gt.ones(4, v.numel(), dtype=gt.float64) @ v,
     "dot": lambda: v @ v}[product]()
    parallel.split_elementwise(kernel)(np.ones(LARGE))
    assert _all_on_this_thread(calls)
    parallel._blas_spin_until[0] = 0.0
    calls.clear()
    parallel.split_elementwise(kernel)(np.ones(LARGE))
    assert len({tid for tid, _ in calls}) > 1


def test_a_small_product_does_not_hold_splitting_back(threads, cores, monkeypatch):
    calls = []
    gt.set_num_threads(2)
    monkeypatch.setattr(parallel, "BLAS_SPIN_SECONDS", 3600.0)
    m = gt.ones(8, 8)
    m @ m  # OpenBLAS runs it on one thread: nothing spins
    parallel.split_elementwise(_recording(calls))(np.ones(LARGE))
    assert len({tid for tid, _ in calls}) > 1
