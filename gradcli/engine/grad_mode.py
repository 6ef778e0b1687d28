"""Global grad mode and anomaly mode, with torch's context managers/decorators."""

from __future__ import annotations

import functools

# One-element lists: the hot path reads STATE[0] without attribute lookups.
GRAD_ENABLED = [True]
ANOMALY = [False]


def is_grad_enabled() -> bool:
    return GRAD_ENABLED[0]


class _GradModeContext:
    """Base of the grad-mode contexts: usable in `with`, and as a decorator."""

    _target: bool

    def __enter__(self):
        self._prev = GRAD_ENABLED[0]
        GRAD_ENABLED[0] = self._target
        return None

    def __exit__(self, *exc):
        GRAD_ENABLED[0] = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)() if not isinstance(self, set_grad_enabled) else set_grad_enabled(self._target):
                return fn(*args, **kwargs)

        return wrapper

    def clone(self):
        return type(self)()


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
        self._prev = GRAD_ENABLED[0]
        GRAD_ENABLED[0] = self._target

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        GRAD_ENABLED[0] = self._prev
        return False

    def __call__(self, fn):
        GRAD_ENABLED[0] = self._prev  # as a decorator it must not change the mode now
        return _GradModeContext.__call__(self, fn)

    def clone(self):
        return set_grad_enabled(self._target)


class inference_mode(no_grad):  # noqa: N801
    def __init__(self, mode: bool = True):
        self._target = not mode


class detect_anomaly:  # noqa: N801
    """Anomaly mode: NaN produced in backward raises, naming the node."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = ANOMALY[0]
        ANOMALY[0] = self.check_nan
        return None

    def __exit__(self, *exc):
        ANOMALY[0] = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly(detect_anomaly):  # noqa: N801
    def __init__(self, mode: bool, check_nan: bool = True):
        self.check_nan = bool(mode) and check_nan
        self._prev = ANOMALY[0]
        ANOMALY[0] = self.check_nan

    def __enter__(self):
        return None


def is_anomaly_enabled() -> bool:
    return ANOMALY[0]


# Where the current forward op runs (file, line), asked only under detect_anomaly;
# the language runtime installs a provider, plain Python gets none.
TRACE_PROVIDER = [None]
