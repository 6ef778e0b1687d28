"""Large elementwise kernels on several threads (gradcli/engine/parallel.py).

Splitting must never change a bit: every op in the table whose torch_call reads only
`a` is run on a large array with one thread and with several, forward and backward,
and the results are compared bit for bit (a new op is picked up by itself); whole-tensor
sums and large matrix products, which follow the thread count as PyTorch's do, are held
at one count (the products' own tests are at the end). Then the machinery: the caller's numpy error state holds in the helpers, a helper's exception
reaches the caller, a forked child computes without the parent's threads, and
set_num_threads/get_num_threads behave as PyTorch's.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

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


#: the table's core ops (tests/fuzz/SWEPT_OPS.txt): the split runs only in elementwise
#: kernels, and the ops added later (products, kron, cdist, block_diag ...) would build
#: results of billions of elements from this test's large inputs
_CORE = frozenset((Path(__file__).parent / "fuzz" / "SWEPT_OPS.txt").read_text().split())


def _unary_ops() -> list:
    names = []
    for name, op in sorted(OPS.items()):
        if name in _CORE and op.torch_call and \
                "b" not in compile(op.torch_call, "<torch_call>", "eval").co_names:
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


@pytest.fixture
def pinned_products(monkeypatch):
    """Large matrix products follow the thread count too, as OpenBLAS's own threads and
    PyTorch's MKL do (test_large_product_* below): kept whole here."""
    monkeypatch.setattr(parallel, "SPLIT_PRODUCT_WORK", float("inf"))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", _unary_ops())
def test_splitting_changes_no_bit(name, dtype, threads, cores, pinned_sums, pinned_products):
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
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("error")  # an op's state (engine/fpstate.py): nan silently
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
    assert max(size for _, size in calls) == parallel.chunk_size(LARGE)


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


# ------------------------------------------------------------- large matrix products


def _blas_count() -> int:
    """numpy's BLAS thread count, as threadpoolctl reads it."""
    return parallel.BLAS_THREADS.controller.select(user_api="blas").info()[0]["num_threads"]


@pytest.fixture
def openblas():
    """numpy's BLAS thread count can be set here (skips where threadpoolctl cannot)."""
    if not parallel.BLAS_THREADS.usable:
        pytest.skip("threadpoolctl is missing or cannot set this BLAS's thread count")
    return parallel.BLAS_THREADS


def _recording_pieces(monkeypatch) -> list:
    """(thread, first row, last row) of each piece blas_product runs, and the BLAS thread
    count it ran with."""
    import threading

    pieces = []
    run = parallel._product_range

    def recording(a, b, out, lo, hi):
        pieces.append((threading.get_ident(), lo, hi, _blas_count()))
        run(a, b, out, lo, hi)

    monkeypatch.setattr(parallel, "_product_range", recording)
    return pieces


def _large_operands(rng, dtype, batch: int = 0):
    """A product just above SPLIT_PRODUCT_WORK, with an odd row count."""
    side = int(round(parallel.SPLIT_PRODUCT_WORK ** (1 / 3))) + 3
    lead = (batch,) if batch else ()
    a = rng.standard_normal(lead + (side, side - 1)).astype(dtype)
    b = rng.standard_normal(lead + (side - 1, side + 2)).astype(dtype)
    return a, b


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", ["rows", "a transposed", "b transposed", "vector", "batch"])
def test_large_product_runs_in_pieces_on_every_thread(dtype, layout, threads, cores, openblas,
                                                      monkeypatch):
    """Each piece is a single-threaded BLAS call on a thread of the pool; OpenBLAS's own
    count is back as it was after, no BLAS worker is left spinning (elementwise kernels
    split at once), and the product is numpy's to rounding."""
    pieces = _recording_pieces(monkeypatch)
    rng = np.random.default_rng(11)
    a, b = _large_operands(rng, dtype, batch=4 if layout == "batch" else 0)
    if layout == "a transposed":
        a = np.ascontiguousarray(a.T).T
    elif layout == "b transposed":
        b = np.ascontiguousarray(b.T).T
    elif layout == "vector":
        a = rng.standard_normal((parallel.SPLIT_PRODUCT_WORK // 1000 + 77, 1000)).astype(dtype)
        b = rng.standard_normal(1000).astype(dtype)
    gt.set_num_threads(2)
    before = _blas_count()
    out = parallel.blas_product(a, b)
    assert _blas_count() == before
    assert out.dtype == dtype and out.shape == np.matmul(a, b).shape
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=tol, atol=tol * np.abs(out).max())
    assert len({tid for tid, *_ in pieces}) == 2 and {n for *_, n in pieces} == {1}
    rows = sorted((lo, hi) for _, lo, hi, _ in pieces)
    assert rows[0][0] == 0 and rows[0][1] == rows[1][0] and rows[-1][1] == a.shape[0]
    if layout != "batch":
        assert rows[0][1] % parallel.SPLIT_PRODUCT_ALIGN == 0
    assert parallel._blas_spin_until[0] == 0.0  # nothing holds the elementwise split back
    calls = []
    parallel.split_elementwise(_recording(calls))(np.ones(LARGE))
    assert len({tid for tid, _ in calls}) > 1


def test_large_product_gives_the_same_bits_for_the_same_thread_count(threads, cores, openblas):
    """Pieces change the last bits as BLAS threads do, never from one call to the next."""
    rng = np.random.default_rng(12)
    a, b = _large_operands(rng, np.float64)
    gt.set_num_threads(2)
    first = parallel.blas_product(a, b)
    assert all(_same_bits(first, parallel.blas_product(a, b)) for _ in range(3))


def test_large_product_through_the_engine(threads, cores, openblas, monkeypatch):
    """Forward and both gradients of a large mm, addmm and bmm go through the pieces."""
    pieces = _recording_pieces(monkeypatch)
    rng = np.random.default_rng(13)
    a, b = _large_operands(rng, np.float64)
    gt.set_num_threads(2)
    x, w = gt.tensor(a, requires_grad=True), gt.tensor(b, requires_grad=True)
    bias = gt.zeros(b.shape[1], dtype=gt.float64, requires_grad=True)
    for y in (x @ w, gt.addmm(bias, x, w), x.unsqueeze(0).bmm(w.unsqueeze(0)).squeeze(0)):
        pieces.clear()
        np.testing.assert_allclose(y.detach()._data, a @ b, rtol=1e-11, atol=1e-10)
        g = np.cos(a @ b)
        x.grad = w.grad = None
        y.backward(gt.tensor(g))
        np.testing.assert_allclose(x.grad._data, g @ b.T, rtol=1e-11, atol=1e-10)
        np.testing.assert_allclose(w.grad._data, a.T @ g, rtol=1e-11, atol=1e-10)
        assert len({tid for tid, *_ in pieces}) == 2


def test_what_stays_whole(threads, cores, openblas, monkeypatch):
    """One thread set: one piece, on the caller. x @ x.t() (BLAS's syrk, half the work),
    integers and products below SPLIT_PRODUCT_WORK: numpy's own call, OpenBLAS threads and
    all (marked as spinning, so kernels wait)."""
    import threading

    pieces = _recording_pieces(monkeypatch)
    rng = np.random.default_rng(14)
    a, b = _large_operands(rng, np.float64)
    gt.set_num_threads(1)
    np.testing.assert_allclose(parallel.blas_product(a, b), a @ b, rtol=1e-11, atol=1e-10)
    assert [(tid, n) for tid, _, _, n in pieces] == [(threading.get_ident(), 1)]
    gt.set_num_threads(2)
    pieces.clear()
    ints = (a * 10).astype(np.int64)
    for x, y in ((a, a.T), (ints, ints.T[:, :40]), (a[:100], b)):
        parallel._blas_spin_until[0] = 0.0
        assert _same_bits(parallel.blas_product(x, y), np.matmul(x, y))
        assert parallel._blas_spin_until[0] > 0.0
    assert pieces == []


def test_another_blas_takes_numpys_call(threads, cores, monkeypatch):
    """Where BLAS's thread count cannot be set (no threadpoolctl, another BLAS), the product
    is numpy's whole."""
    import sys

    monkeypatch.setattr(parallel, "BLAS_THREADS", parallel._BlasThreads())
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails
    pieces = _recording_pieces(monkeypatch)
    a, b = _large_operands(np.random.default_rng(15), np.float64)
    gt.set_num_threads(2)
    assert _same_bits(parallel.blas_product(a, b), np.matmul(a, b))
    assert pieces == [] and not parallel.BLAS_THREADS.usable


def test_products_on_several_user_threads_leave_openblas_as_it_was(threads, cores, openblas):
    """Two threads of the user's multiplying at once: OpenBLAS goes back to its own count
    when the last of them is done (one restoring the other's `1` would keep it there)."""
    import threading

    rng = np.random.default_rng(16)
    a, b = _large_operands(rng, np.float64)
    want = np.matmul(a, b)
    before = _blas_count()
    gt.set_num_threads(2)
    start = threading.Barrier(2)
    failures = []

    def multiply():
        start.wait()
        for _ in range(20):
            got = parallel.blas_product(a, b)
            if not np.allclose(got, want, rtol=1e-11, atol=1e-10):
                failures.append("wrong product")

    workers = [threading.Thread(target=multiply) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert failures == [] and openblas.holders == 0 and _blas_count() == before


# ----------------------------------------------------------------- CPU affinity


def _affinity_recording(calls: list):
    """A kernel recording (thread, its CPU set) of each call."""
    import os
    import threading

    def double(a):
        calls.append((threading.get_ident(), frozenset(os.sched_getaffinity(0))))
        return a * 2

    return _into(double)


def test_pieces_leave_every_threads_cpu_set_alone(threads, cores):
    """No pinning: the caller and the helpers run on the CPU set the process has."""
    import os

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no sched_getaffinity on this OS")
    before = frozenset(os.sched_getaffinity(0))
    calls = []
    gt.set_num_threads(2)
    out = parallel.split_elementwise(_affinity_recording(calls))(np.ones(LARGE))
    assert _same_bits(out, np.full(LARGE, 2.0))
    assert {cpus for _, cpus in calls} == {before}
    assert frozenset(os.sched_getaffinity(0)) == before
