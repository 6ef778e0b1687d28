"""Resource guards: the one place that holds their defaults and settings.

``Limits`` is shared by the CLI flags (``--max-steps`` ...), the environment
variables (``GRADCLI_MAX_STEPS`` ...) and the pytest ini keys. A guard that
trips raises :class:`LimitExceeded`, a ``BaseException`` so that neither the
program's ``try/except`` nor the engine's ``except Exception`` can swallow
it: it always ends the run (exit 1, reported as ``LimitError``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace

ENV_VARS = {
    "max_steps": "GRADCLI_MAX_STEPS",
    "max_elements": "GRADCLI_MAX_ELEMENTS",
    "max_depth": "GRADCLI_MAX_DEPTH",
    "max_length": "GRADCLI_MAX_LENGTH",
}


class LimitExceeded(BaseException):
    """A resource guard tripped. Not an ``Exception``: programs cannot catch it."""


@dataclass(frozen=True)
class Limits:
    #: executed statements (loop iterations and comprehension items included)
    max_steps: int = 10_000_000
    #: elements of one tensor allocation
    max_elements: int = 100_000_000
    #: length of one string, list or tuple
    max_length: int = 10_000_000
    #: nested calls of user functions (def/lambda)
    max_depth: int = 500
    #: Python-int `**`: |base| and |exponent| at most this (simpleeval's MAX_POWER)
    max_power: int = 4_000_000
    #: Python-int `<<`/`>>`: shift count at most this (simpleeval's MAX_SHIFT)
    max_shift: int = 10_000
    #: bits of a Python int produced by `**`, `<<` or `*`
    max_int_bits: int = 4_000_000
    #: nesting of brackets, operators and blocks in the source
    max_nesting: int = 200

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
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    @classmethod
    def names(cls) -> tuple:
        return tuple(f.name for f in fields(cls))


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
