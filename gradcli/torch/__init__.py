"""`import gradcli.torch as torch`: PyTorch's names over gradcli's engine.

Every name here is also what a `.grad` program sees, bare (`ones(2, 2)`) and as
`torch.ones`. A torch name gradcli does not implement raises AttributeError
saying so, rather than pretending torch lacks it.
"""

from __future__ import annotations

from types import SimpleNamespace as _SimpleNamespace

from gradcli.engine import dtypes as _dtypes
from gradcli.engine import ops as _ops  # noqa: F401  (installs the Tensor methods)
from gradcli.engine.formatting import get_printoptions, printoptions, set_printoptions  # noqa: F401
from gradcli.engine.grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from gradcli.engine.ops.reductions import RETURN_TYPES as _RETURN_TYPES
from gradcli.engine.parallel import get_num_threads, set_num_threads  # noqa: F401
from gradcli.engine.random import initial_seed, manual_seed, seed  # noqa: F401
from gradcli.engine.size import Size, device  # noqa: F401
from gradcli.engine.tensor import Tensor  # noqa: F401

from . import autograd, linalg, nn, random, special, version  # noqa: F401
from ._namespace import fill as _fill
from ._namespace import unsupported as _unsupported
from .autograd import Variable  # noqa: F401
from .version import __version__  # noqa: F401  (PyTorch 2.13 CPU's own string; compares as a version)

set_default_dtype = _dtypes.set_default_dtype
# is_grad_enabled, get_default_dtype, result_type, promote_types... with PyTorch's checks
# of their arguments (the engine's own functions take what they are given)
from ._facade_checks import FUNCTIONS as _CHECKED  # noqa: E402  # isort: skip

globals().update(_CHECKED)

dtype = _dtypes.dtype
float32 = float = _dtypes.float32
float64 = double = _dtypes.float64
int64 = long = _dtypes.int64
int32 = int = _dtypes.int32
bool = _dtypes.bool_


return_types = _SimpleNamespace(**_RETURN_TYPES)


def is_grad_enabled_():  # pragma: no cover - alias kept private
    return is_grad_enabled()


def detect_anomaly(check_nan=True):
    return autograd.detect_anomaly(check_nan)


def set_printoptions_(**kw):  # pragma: no cover
    return set_printoptions(**kw)


class _UnsupportedNamespace:
    """torch.linalg & co: every name under it says it is not supported by gradcli."""

    def __init__(self, path: str):
        self._path = path

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"{self._path}.{name} is not supported by gradcli")

    def __repr__(self) -> str:
        return f"<module '{self._path}' (not supported by gradcli)>"


from . import accelerator, backends, cuda, functional, optim  # noqa: E402,F401  (no GPU; real optim)

_fill(globals(), "torch.")


#: loaded on first use (torch.func pulls in forward-mode AD; torch.utils is data loading)
_LAZY_SUBMODULES = ("func", "utils", "distributions", "testing", "masked", "signal", "quasirandom",
                    "sparse", "fft")
__getattr__ = _unsupported("torch", __name__, _LAZY_SUBMODULES)


__all__ = sorted(
    n for n, v in list(globals().items())
    if not n.startswith("_") and n not in ("annotations", "is_grad_enabled_", "set_printoptions_")
)
