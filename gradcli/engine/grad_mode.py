"""Grad mode (per thread, as PyTorch's) and anomaly mode (process-wide, as PyTorch's),
with torch's context managers/decorators."""

from __future__ import annotations

import functools
import inspect
import threading
import warnings


class _GradMode(threading.local):
    """Grad mode of the thread that reads it: each thread starts with it on and changes only
    its own, as PyTorch's thread-local GradMode (a thread started inside no_grad records
    graphs). A thread-local attribute, not a context variable: op forwards may run inside
    the per-thread numpy-error Context (engine/fpstate.py), which would hold a stale copy."""

    def __init__(self):
        self.enabled = True
        self.inference = False  # inside torch.inference_mode() (views made there say so)


GRAD_MODE = _GradMode()
#: how many threads are inside torch.inference_mode() now: tensor.make asks the thread's own
#: GRAD_MODE.inference (to mark an inference tensor, engine/inference.py) only when not 0
INFERENCE_ACTIVE = [0]
_INFERENCE_COUNT_LOCK = threading.Lock()
# One-element lists: the hot path reads ANOMALY[0] without attribute lookups. Anomaly mode
# (forward traces, the failing node named) and its NaN check are two switches, as PyTorch's:
# detect_anomaly(check_nan=False) traces without checking.
ANOMALY = [False]
ANOMALY_CHECK_NAN = [True]


def set_anomaly(enabled: bool, check_nan: bool = True) -> None:
    ANOMALY[0] = enabled
    ANOMALY_CHECK_NAN[0] = check_nan


def is_grad_enabled() -> bool:
    return GRAD_MODE.enabled


def is_inference_mode_enabled() -> bool:
    """True inside torch.inference_mode() (and not inside an inner inference_mode(False))."""
    return GRAD_MODE.inference


class _GradModeContext:
    """Base of the grad-mode contexts: usable in `with`, and as a decorator."""

    _target: bool

    def __enter__(self):
        self._prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = self._target
        return None

    def __exit__(self, *exc):
        GRAD_MODE.enabled = self._prev
        return False

    def __call__(self, fn):
        return _decorate(fn, self.clone)

    def clone(self):
        return type(self)()


def _decorate(fn, make_context):
    """fn run inside a fresh context from make_context() (PyTorch's context_decorator):
    a generator function holds the mode inside each of its steps only, and a class
    (deprecated in PyTorch) is wrapped as a call, with its FutureWarning."""
    if inspect.isclass(fn):
        warnings.warn(
            "Decorating classes is deprecated and will be disabled in future versions. You should "
            "only decorate functions or methods. To preserve the current behavior of class "
            "decoration, you can directly decorate the `__init__` method and nothing else.",
            FutureWarning, stacklevel=3)
        cls = fn

        def fn(*args, **kwargs):
            return cls(*args, **kwargs)

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with make_context():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with make_context():
                            gen.close()
                        raise
                    except BaseException as exc:  # noqa: BLE001 - handed to the generator
                        with make_context():
                            response = gen.throw(exc)
                    else:
                        with make_context():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with make_context():
            return fn(*args, **kwargs)

    return wrapper


class no_grad(_GradModeContext):  # noqa: N801
    _target = False

    def __new__(cls, orig_func=None):
        if orig_func is not None and callable(orig_func):
            return cls()(orig_func)  # @torch.no_grad without parentheses
        return super().__new__(cls)

    def __repr__(self):
        return "<torch.autograd.grad_mode.no_grad object>"


class enable_grad(_GradModeContext):  # noqa: N801
    _target = True

    def __new__(cls, orig_func=None):
        if orig_func is not None and callable(orig_func):
            return cls()(orig_func)
        return super().__new__(cls)

    def __repr__(self):
        return "<torch.autograd.grad_mode.enable_grad object>"


class set_grad_enabled(_GradModeContext):  # noqa: N801
    """Sets grad mode at construction (as torch does), restores on exit."""

    def __init__(self, mode: bool):
        self._target = bool(mode)
        self._prev = GRAD_MODE.enabled
        GRAD_MODE.enabled = self._target

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        GRAD_MODE.enabled = self._prev
        return False

    def __call__(self, fn):
        GRAD_MODE.enabled = self._prev  # as a decorator it must not change the mode now
        return _decorate(fn, self.clone)

    def clone(self):
        return set_grad_enabled(self._target)


class inference_mode(no_grad):  # noqa: N801
    def __new__(cls, mode_or_orig_func=True, **mode):
        """@torch.inference_mode without parentheses, or inference_mode(mode=...)."""
        if not isinstance(mode_or_orig_func, bool) and callable(mode_or_orig_func) and not mode:
            return cls()(mode_or_orig_func)
        return object.__new__(cls)

    def __init__(self, mode: bool = True):
        self._target = not mode

    def __enter__(self):
        self._prev_inference = GRAD_MODE.inference
        GRAD_MODE.inference = not self._target
        if GRAD_MODE.inference != self._prev_inference:
            with _INFERENCE_COUNT_LOCK:  # (threads entering at once must not lose a count)
                INFERENCE_ACTIVE[0] += GRAD_MODE.inference - self._prev_inference
        return super().__enter__()

    def __exit__(self, *exc):
        if GRAD_MODE.inference != self._prev_inference:
            with _INFERENCE_COUNT_LOCK:
                INFERENCE_ACTIVE[0] += self._prev_inference - GRAD_MODE.inference
        GRAD_MODE.inference = self._prev_inference
        return super().__exit__(*exc)

    def clone(self):
        return inference_mode(not self._target)


class detect_anomaly:  # noqa: N801
    """Anomaly mode: NaN produced in backward raises, naming the node."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self._prev = (ANOMALY[0], ANOMALY_CHECK_NAN[0])  # (as PyTorch: taken when made)
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        set_anomaly(True, self.check_nan)
        return None

    def __exit__(self, *exc):
        set_anomaly(*self._prev)
        return False


class set_detect_anomaly(detect_anomaly):  # noqa: N801
    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (ANOMALY[0], ANOMALY_CHECK_NAN[0])
        set_anomaly(bool(mode), bool(check_nan))

    def __enter__(self):
        return None


def is_anomaly_enabled() -> bool:
    return ANOMALY[0]


def is_anomaly_check_nan_enabled() -> bool:
    return ANOMALY_CHECK_NAN[0]


# Where the current forward op runs (file, line), asked only under detect_anomaly;
# the language runtime installs a provider, plain Python gets none.
TRACE_PROVIDER = [None]


def unsafe_set_version_counter(tensors, versions) -> None:
    """torch._C._autograd._unsafe_set_version_counter: overwrite each tensor's version
    counter (shared with its views, as PyTorch's is)."""
    for t, v in zip(tensors, versions, strict=True):
        if v < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {v}")
        t._vc[0] = v


class _unsafe_preserve_version_counter:  # noqa: N801 - torch's name
    """torch.autograd._unsafe_preserve_version_counter(t or tuple): on exit, the versions the
    tensors had on entry are put back, so autograd does not see the writes made inside."""

    def __init__(self, tensors):
        self.tensors = tensors if isinstance(tensors, tuple) else (tensors,)
        self.prev_versions = tuple(t._vc[0] for t in self.tensors)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        unsafe_set_version_counter(self.tensors, self.prev_versions)


# PyTorch's class names for type() (<class 'torch.autograd.grad_mode.no_grad'>)
no_grad.__module__ = enable_grad.__module__ = set_grad_enabled.__module__ = \
    inference_mode.__module__ = "torch.autograd.grad_mode"
detect_anomaly.__module__ = set_detect_anomaly.__module__ = "torch.autograd.anomaly_mode"
