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
runs slower than one call (tanh after a 512x512 matmul here: 6.3 ms against 5.3).
PyTorch has no such gap: its BLAS and its elementwise kernels share one OpenMP pool.
So large products (`blas_product`, SPLIT_PRODUCT_WORK multiply-adds or more) take the
same road as the kernels here: the rows are cut into one piece per thread, each piece a
BLAS call with BLAS held at one thread for the while (threadpoolctl, imported on the
first such product; BLAS's own count is put back after), and no BLAS worker is left
spinning. As with OpenBLAS's own threads (and PyTorch's MKL), the last bits of a product
can change with the thread count: BLAS blocks a piece's rows differently from a whole
matrix's (the same inputs and thread count always give the same bits). Smaller
products, where OpenBLAS's own threads (awake, spinning) start faster than ours, and
everything where threadpoolctl is missing, go to numpy as they are; for
BLAS_SPIN_SECONDS after a large one of those, kernels run whole.

Nothing here changes the process for good: no CPU affinity is set, and BLAS's thread
count is what it was once a product returns.

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
# Elements per call of a function kernel: chunk_size(n) of an array of n, from CHUNK_MIN
# to CHUNK_MAX. Its float64 temporaries stay in a 1 MB L2; tanh of 512x512 on two threads
# took 1.81 ms in chunks of 16,384 and 1.60 in chunks of 65,536 (fewer numpy calls, each
# handing the GIL over).
CHUNK_MIN, CHUNK_MAX = 16384, 65536

# OpenBLAS's workers spin this long after a threaded call (its default THREAD_TIMEOUT,
# 2^28 cycles, measured as ~0.11 s of a core's time here); it threads a matrix product
# of this many multiply-adds or more (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD)
BLAS_SPIN_SECONDS = 0.1
BLAS_THREADED_WORK = 65536 * 4
_blas_spin_until = [0.0]

# from this many multiply-adds (a 256x256 square product) a product is cut by rows over
# the threads here. Handing a piece to a helper costs ~30 us more than OpenBLAS's own
# (awake, spinning) workers take: 0.44 ms against 0.41 at 256x256, 1.34 against 1.30 at
# 384x384, 128x128 0.09 against 0.07; the gain is in what follows, the elementwise kernels
# on the product then run on every core at once (tanh of 512x512: 1.7 ms, not 2.5).
SPLIT_PRODUCT_WORK = 1 << 24
SPLIT_PRODUCT_MIN_ROWS = 32  # rows of a piece, at least
SPLIT_PRODUCT_ALIGN = 16  # pieces start at a multiple of this many rows: whole BLAS blocks

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


def _env_count(text: str | None, mkl: bool) -> int | None:
    """A thread count read from OMP_NUM_THREADS (`mkl` False: libgomp's reading, the first
    item of a comma list, a positive decimal; anything else is ignored) or MKL_NUM_THREADS
    (MKL's: 0 or empty means unset, a value it cannot read means 1)."""
    if text is None:
        return None
    text = text.strip()
    if not mkl:
        text = text.partition(",")[0].strip()
        return int(text) if text.isdigit() and int(text) > 0 else None
    if text == "" or (text.isdigit() and int(text) == 0):
        return None
    return int(text) if text.isdigit() else 1


def _requested_threads(environ=os.environ) -> int:
    """torch.get_num_threads() at start-up: PyTorch's CPU build sizes its pool with MKL's
    count, which is MKL_NUM_THREADS, else OMP_NUM_THREADS, else the CPUs this process may
    run on; with MKL_DYNAMIC on (its default) a count asked for is capped at the
    machine's cores."""
    asked = _env_count(environ.get("MKL_NUM_THREADS"), True)
    if asked is None:
        asked = _env_count(environ.get("OMP_NUM_THREADS"), False)
    if asked is None:
        return _default_threads()
    if environ.get("MKL_DYNAMIC", "").strip().lower() in ("false", "no", "0"):
        return asked
    return max(1, min(asked, os.cpu_count() or 1))


class _Pool:
    """The helper threads: `tasks` feeds them (fn, args, context, done) tuples."""

    def __init__(self) -> None:
        self.cores = _default_threads()
        # as torch.get_num_threads() gives it (the environment's count, or what
        # set_num_threads set): the sums split their additions by it as PyTorch's do;
        # splitting work over threads uses at most `cores`
        self.threads = _requested_threads()
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
    """A helper thread: runs the tasks it takes from `tasks`."""
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


def chunk_size(n: int) -> int:
    """The chunk of an array of n elements: a quarter of it, so that the threads share
    four chunks or more, within CHUNK_MIN..CHUNK_MAX. It depends on n alone: the same
    chunks on any thread count."""
    return max(CHUNK_MIN, min(CHUNK_MAX, n // 4 // CHUNK_MIN * CHUNK_MIN))


def _chunked_range(kernel, src, dst, lo: int, hi: int) -> None:
    step = chunk_size(src.size)
    for start in range(lo, hi, step):
        stop = min(start + step, hi)
        kernel(src[start:stop], out=dst[start:stop])


def split_elementwise(kernel):
    """`kernel(a)` for an elementwise `kernel`, computed on several threads when `a` is a
    large C-contiguous array. `kernel` is a one-input numpy ufunc, or a function
    `kernel(x, out=None)` of a float array that keeps its dtype and writes into `out`
    when given; such a function is called on chunks of chunk_size(a.size) elements (its
    temporaries stay in cache), the same chunks on one thread or several."""
    is_ufunc = type(kernel) is _ufunc

    def forward(a):
        if (type(a) is not _ndarray or a.size < MIN_ELEMENTS or not a.flags.c_contiguous
                or not (is_ufunc or a.dtype.kind in "fV")):
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
    step = 1 if is_ufunc else chunk_size(n)
    bounds = [n * k // pieces // step * step for k in range(pieces)] + [n]
    _run_pieces(run_range, (kernel, src, dst), bounds)
    return out


def _run_pieces(run_range, args: tuple, bounds: list) -> None:
    """run_range(*args, lo, hi) for each piece [bounds[k], bounds[k+1]): the first on the
    calling thread, the others on helpers; a helper's exception is raised here."""
    from contextvars import copy_context
    from queue import SimpleQueue

    pieces = len(bounds) - 1
    if pieces == 1:
        run_range(*args, bounds[0], bounds[1])
        return
    done = SimpleQueue()
    tasks = POOL.helpers(pieces - 1)
    context = copy_context()
    for k in range(1, pieces):
        tasks.put((run_range, (*args, bounds[k], bounds[k + 1]), context, done))
    run_range(*args, bounds[0], bounds[1])
    failure = None
    for _ in range(pieces - 1):
        exc = done.get()
        if exc is not None and failure is None:
            failure = exc
    if failure is not None:
        raise failure


class _BlasThreads:
    """BLAS held at one thread while a split product's pieces run, through threadpoolctl
    (imported on the first large product; `usable` is False without it or without a BLAS
    it knows). Nested holds (threads of the user's multiplying too) keep the first count."""

    def __init__(self) -> None:
        self.controller = None
        self.checked = False
        self.lock = None
        self.holders = 0
        self.limit = None  # threadpoolctl's limiter while held

    @property
    def usable(self) -> bool:
        if not self.checked:
            self.checked = True
            import threading

            self.lock = threading.Lock()
            try:
                from threadpoolctl import ThreadpoolController

                controller = ThreadpoolController()
                if controller.select(user_api="blas").lib_controllers:
                    self.controller = controller
            except Exception:  # not installed, or failing: numpy's BLAS as it is
                self.controller = None
        return self.controller is not None

    def hold_single(self) -> None:
        with self.lock:
            if self.holders == 0:
                self.limit = self.controller.limit(limits=1, user_api="blas")
            self.holders += 1

    def release_single(self) -> None:
        with self.lock:
            self.holders -= 1
            if self.holders == 0:
                self.limit.restore_original_limits()
                self.limit = None


BLAS_THREADS = _BlasThreads()


def _product_range(a, b, out, lo: int, hi: int) -> None:
    np.matmul(a[lo:hi], b if b.ndim < 3 else b[lo:hi], out=out[lo:hi])


def _splittable(a: np.ndarray, b: np.ndarray) -> bool:
    """A float matrix @ matrix or vector, or a batch @ a batch as long: a's first axis can
    be cut. Not x @ x.t() (b is a.T itself): numpy hands that to BLAS's syrk, which
    computes half of the result and mirrors it; pieces of it would do the whole work."""
    if a.dtype.kind not in "fV" or b.dtype.kind not in "fV" or not 2 <= a.ndim <= 3 or b.ndim > a.ndim:
        return False
    if b.ndim == 3:
        return b.shape[0] == a.shape[0]
    return not (b.ndim == 2 and a.shape == b.shape[::-1] and a.strides == b.strides[::-1]
                and a.ctypes.data == b.ctypes.data)


def blas_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.matmul(a, b) (numpy's BLAS for floats), with a large product of a matrix or a batch
    cut along a's first axis over the threads here (see the top)."""
    work = a.size * (b.shape[-1] if b.ndim > 1 else 1)
    if a.dtype.kind == "V":  # bfloat16: ml_dtypes sums in float32 (and returns float32);
        out = np.matmul(a, b).astype(a.dtype)  # PyTorch's CPU gemm rounds once at the end too
        blas_called(work)
        return out
    if work < SPLIT_PRODUCT_WORK or not _splittable(a, b) or not BLAS_THREADS.usable:
        out = np.matmul(a, b)
        blas_called(work)
        return out
    if a.ndim == 3 and a.shape[0] == 1:  # a batch of one: its matrix's rows
        return blas_product(a[0], b[0] if b.ndim == 3 else b)[None]
    rows = a.shape[0]  # of a matrix; of a batch, its matrices
    per_piece, per_align = (SPLIT_PRODUCT_MIN_ROWS, SPLIT_PRODUCT_ALIGN) if a.ndim == 2 else (1, 1)
    pieces = max(1, min(POOL.threads, POOL.cores, rows // per_piece))
    shape = a.shape[:-1] + b.shape[-1:] if b.ndim > 1 else a.shape[:-1]
    out = np.empty(shape, np.result_type(a, b))
    bounds = [0, *(rows * k // pieces // per_align * per_align for k in range(1, pieces)), rows]
    BLAS_THREADS.hold_single()
    try:
        _run_pieces(_product_range, (a, b, out), bounds)
    finally:
        BLAS_THREADS.release_single()
    return out
