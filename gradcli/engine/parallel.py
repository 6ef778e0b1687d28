"""Large elementwise kernels split across the machine's cores.

PyTorch runs an elementwise kernel on all cores once a tensor has 32,768 elements or
more (at::parallel_for with its GRAIN_SIZE); numpy runs every ufunc on one. For the
costly math functions (exp, sin, tanh...: 10-20 ns per float64 element here) that is
a factor of the core count on large tensors, so the ops that use them wrap their numpy
kernel in `split_elementwise`: an array of MIN_ELEMENTS or more is cut into one
contiguous piece per thread, and the calling thread computes the first piece while
helper threads compute the others.

Every element is computed by the same kernel on its own, so the result is bit for bit
what one call on the whole array gives (tests/test_engine_parallel.py checks it per op).
Reductions are never split: that would change their summation order.

numpy's OpenBLAS keeps its worker threads spinning, each on a core, for about 0.1 s
after a multi-threaded matrix product; a split started then competes with them and
runs slower than one call (tanh after a 512x512 matmul here: 6.3 ms against 5.3). So
the matrix-product ops report their calls (`blas_called`) and for BLAS_SPIN_SECONDS
after a large one kernels run whole. (PyTorch has no such gap: its BLAS and its
elementwise kernels share one OpenMP pool.)

The helper threads start on the first large array, are daemons, and run each piece in
the caller's context (numpy's error state lives in a context variable: the caller's
`errstate` holds in the helpers too). After a fork the child starts its own.
`set_num_threads` (torch.set_num_threads) sets the count; 1 turns splitting off.
"""

from __future__ import annotations

import os
from time import perf_counter

import numpy as np

MIN_ELEMENTS = 32768  # PyTorch's GRAIN_SIZE: below it the hand-off costs more than it saves
_CHUNK = 16384  # elements per call of a function kernel (its temporaries stay in cache)

# OpenBLAS's workers spin this long after a threaded call (its default THREAD_TIMEOUT,
# 2^28 cycles, measured as ~0.11 s of a core's time here); it threads a matrix product
# of this many multiply-adds or more (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD)
BLAS_SPIN_SECONDS = 0.1
BLAS_THREADED_WORK = 65536 * 4
_blas_spin_until = [0.0]

_ndarray = np.ndarray
_ufunc = np.ufunc


def blas_called(work: int) -> None:
    """A matrix product of `work` multiply-adds has just run through numpy's BLAS."""
    if work >= BLAS_THREADED_WORK:
        _blas_spin_until[0] = perf_counter() + BLAS_SPIN_SECONDS


def _default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class _Pool:
    """The helper threads: `tasks` feeds them (fn, args, context, done) tuples."""

    def __init__(self) -> None:
        self.cores = _default_threads()
        self.threads = self.cores  # as set_num_threads set it; splitting uses at most `cores`
        self.tasks = None  # a SimpleQueue once the helpers run
        self.started = 0

    def helpers(self, wanted: int):
        """The task queue, with at least `wanted` helper threads reading it."""
        if self.started < wanted:
            import threading
            from queue import SimpleQueue

            if self.tasks is None:
                self.tasks = SimpleQueue()
            while self.started < wanted:
                threading.Thread(target=_serve, args=(self.tasks,), daemon=True,
                                 name=f"gradcli-elementwise-{self.started}").start()
                self.started += 1
        return self.tasks

    def forget(self) -> None:
        """In a forked child: the parent's threads do not exist here."""
        self.tasks = None
        self.started = 0


POOL = _Pool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=POOL.forget)


def _serve(tasks) -> None:
    while True:
        fn, args, context, done = tasks.get()
        try:
            context.run(fn, *args)
            failure = None
        except BaseException as exc:  # handed to the caller, which raises it
            failure = exc
        # drop the task's arrays before the caller goes on: held here until the next
        # task, an input the engine has released (a saved tensor) would stay allocated
        fn = args = context = None
        done.put(failure)
        done = failure = None


def set_num_threads(n: int) -> None:
    """How many threads a large elementwise kernel uses (the caller's included)."""
    if type(n) is bool or not isinstance(n, (int, np.integer)):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    POOL.threads = int(n)


def get_num_threads() -> int:
    return POOL.threads


def _ufunc_range(kernel, src, dst, lo: int, hi: int) -> None:
    kernel(src[lo:hi], out=dst[lo:hi])


def _chunked_range(kernel, src, dst, lo: int, hi: int) -> None:
    for start in range(lo, hi, _CHUNK):
        stop = min(start + _CHUNK, hi)
        kernel(src[start:stop], out=dst[start:stop])


def split_elementwise(kernel):
    """`kernel(a)` for an elementwise `kernel`, computed on several threads when `a` is a
    large C-contiguous array. `kernel` is a one-input numpy ufunc, or a function
    `kernel(x, out=None)` of a float array that keeps its dtype and writes into `out`
    when given; such a function is called on chunks of _CHUNK elements (its
    temporaries stay in cache), the same chunks on one thread or several."""
    is_ufunc = type(kernel) is _ufunc

    def forward(a):
        if (type(a) is not _ndarray or a.size < MIN_ELEMENTS or not a.flags.c_contiguous
                or not (is_ufunc or a.dtype.kind == "f")):
            return kernel(a)
        if POOL.threads < 2 or POOL.cores < 2 or perf_counter() < _blas_spin_until[0]:
            if is_ufunc:
                return kernel(a)
            return _split(kernel, False, a, 1)  # still in cache-sized chunks
        return _split(kernel, is_ufunc, a, POOL.threads)

    forward.__name__ = getattr(kernel, "__name__", "kernel")
    forward.__doc__ = kernel.__doc__ if not is_ufunc else f"numpy.{kernel.__name__}, split"
    return forward


def _split(kernel, is_ufunc: bool, a: np.ndarray, threads: int) -> np.ndarray:
    from contextvars import copy_context
    from queue import SimpleQueue

    # `out` comes first, before any temporary: a temporary allocated earlier could take a
    # piece of the free block `out` would have reused, and the process would grow by one
    # array (seen as +8 MB at the backward peak of bench W6)
    if is_ufunc:
        out = np.empty(a.shape, dtype=kernel.resolve_dtypes((a.dtype, None))[1])
        run_range = _ufunc_range
    else:
        out = np.empty(a.shape, dtype=a.dtype)
        run_range = _chunked_range
    src, dst = a.reshape(-1), out.reshape(-1)
    n = src.size
    pieces = max(1, min(threads, POOL.cores, n // (MIN_ELEMENTS // 2)))
    # a kernel of ours sees the same chunks however many pieces there are
    step = 1 if is_ufunc else _CHUNK
    bounds = [n * k // pieces // step * step for k in range(pieces)] + [n]
    done = SimpleQueue()
    if pieces > 1:
        tasks = POOL.helpers(pieces - 1)
        context = copy_context()
        for k in range(1, pieces):
            tasks.put((run_range, (kernel, src, dst, bounds[k], bounds[k + 1]), context, done))
    run_range(kernel, src, dst, bounds[0], bounds[1])
    failure = None
    for _ in range(pieces - 1):
        exc = done.get()
        if exc is not None and failure is None:
            failure = exc
    if failure is not None:
        raise failure
    return out
