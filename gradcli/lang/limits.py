"""Resource guards: the one place that holds their defaults and settings.

``Limits`` is shared by the CLI flags (``--max-steps`` ...), the environment
variables (``GRADCLI_MAX_STEPS`` ...) and the pytest ini keys. A guard that
trips raises :class:`LimitExceeded`, a ``BaseException`` so that neither the
program's ``try/except`` nor the engine's ``except Exception`` can swallow
it: it always ends the run (exit 1, reported as ``LimitError``).
"""
from __future__ import annotations

import os

ENV_VARS = {
    "max_steps": "GRADCLI_MAX_STEPS",
    "max_elements": "GRADCLI_MAX_ELEMENTS",
    "max_depth": "GRADCLI_MAX_DEPTH",
    "max_length": "GRADCLI_MAX_LENGTH",
}

#: the guards and their defaults, in order
DEFAULTS = {
    #: executed statements (loop iterations and comprehension items included)
    "max_steps": 10_000_000,
    #: elements of one tensor allocation
    "max_elements": 100_000_000,
    #: length of one string, list or tuple
    "max_length": 10_000_000,
    #: nested calls of user functions (def/lambda)
    "max_depth": 500,
    #: Python-int `**` with |base| >= 2: the exponent at most this (the result's size is
    #: checked against max_int_bits)
    "max_power": 4_000_000,
    #: Python-int `<<`/`>>`: shift count at most this (simpleeval's MAX_SHIFT)
    "max_shift": 10_000,
    #: bits of a Python int produced by `**`, `<<` or `*`
    "max_int_bits": 4_000_000,
    #: nesting of brackets, operators and blocks in the source
    "max_nesting": 200,
}


#: how a user raises each guard, by the runner that runs the program: a guard's message
#: names the option of the runner in use (`gradcli run --max-steps`, pytest's ini key)
RAISE_WITH = {
    "cli": {name: f"--{name.replace('_', '-')} or {var}" for name, var in ENV_VARS.items()},
    "pytest": {name: f"--grad-{name.replace('_', '-')} or the grad_{name} ini option"
               for name in ENV_VARS},
}
#: the runner in use (set by the pytest plugin's child processes)
RUNNER = ["cli"]


def raise_with(name: str) -> str:
    """``--max-steps or GRADCLI_MAX_STEPS`` (or the pytest spelling): how to raise a guard."""
    return RAISE_WITH.get(RUNNER[0], RAISE_WITH["cli"])[name]


class LimitExceeded(BaseException):
    """A resource guard tripped. Not an ``Exception``: programs cannot catch it."""


class _DataclassFields:
    """``Limits.__dataclass_fields__``, built on first use, so that ``dataclasses.asdict``,
    ``fields`` and ``replace`` work on Limits while start-up never imports dataclasses
    (with inspect, ~6 ms of ``gradcli grad``)."""

    def __get__(self, obj, cls):
        from dataclasses import make_dataclass

        shape = make_dataclass("Limits", [(n, int, v) for n, v in DEFAULTS.items()], frozen=True)
        cls.__dataclass_fields__ = shape.__dataclass_fields__
        cls.__dataclass_params__ = shape.__dataclass_params__
        return shape.__dataclass_fields__


class Limits:
    """The resource guards (an immutable value; fields and defaults in DEFAULTS).

    Behaves as the frozen dataclass it used to be: keyword or positional fields,
    equality, hashing, repr, and the ``dataclasses`` functions."""

    __slots__ = tuple(DEFAULTS)
    __dataclass_fields__ = _DataclassFields()
    __match_args__ = tuple(DEFAULTS)

    def __init__(self, *args, **kwargs):
        if len(args) > len(DEFAULTS):
            raise TypeError(f"Limits() takes at most {len(DEFAULTS)} positional arguments")
        values = dict(DEFAULTS)
        for name, value in zip(DEFAULTS, args):
            values[name] = value
        for name, value in kwargs.items():
            if name not in DEFAULTS:
                raise TypeError(f"Limits.__init__() got an unexpected keyword argument {name!r}")
            if list(DEFAULTS).index(name) < len(args):
                raise TypeError(f"Limits.__init__() got multiple values for argument {name!r}")
            values[name] = value
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _values(self) -> tuple:
        return tuple(getattr(self, n) for n in DEFAULTS)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self):
        return hash(self._values())

    def __repr__(self):
        return "Limits(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in DEFAULTS) + ")"

    def __reduce__(self):
        return (Limits, self._values())

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    @classmethod
    def from_env(cls, environ=None, **overrides) -> "Limits":
        """Defaults, then the GRADCLI_MAX_* environment variables, then
        ``overrides`` whose value is not None (command-line flags)."""
        environ = os.environ if environ is None else environ
        values = {}
        for name, var in ENV_VARS.items():
            raw = environ.get(var)
            if raw not in (None, ""):
                values[name] = parse_limit(raw, var)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_overrides(self, **overrides) -> "Limits":
        values = {n: getattr(self, n) for n in DEFAULTS}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Limits(**values)

    @classmethod
    def names(cls) -> tuple:
        return tuple(DEFAULTS)


def parse_limit(raw: str, what: str) -> int:
    """``"10_000"``, ``"1e6"`` or ``"1000000"`` as a positive int; ValueError otherwise."""
    text = str(raw).strip().replace("_", "")
    try:
        value = int(text)
    except ValueError:
        try:
            f = float(text)
        except ValueError:
            raise ValueError(f"{what} must be a positive integer, not {raw!r}") from None
        if f != f or f in (float("inf"), float("-inf")) or f != int(f):
            raise ValueError(f"{what} must be a positive integer, not {raw!r}") from None
        value = int(f)
    if value <= 0:
        raise ValueError(f"{what} must be a positive integer, not {raw!r}")
    return value
