"""The regularized incomplete gamma functions: igamma(a, x) = P(a, x) and igammac(a, x) =
Q(a, x) (torch.special.gammainc / gammaincc), from scipy.special on first use. As in
PyTorch, only x has a derivative (d P/dx = x^(a-1) e^(-x) / Gamma(a), Q's its negative);
asking for a's raises PyTorch's NotImplementedError, and forward AD refuses both ops."""

from __future__ import annotations

from ..late import Slots
from ..tensor import Tensor
from .declare import binary, scipy_fn
from .registry import public

#: the running backward passes (engine/autograd.py's TASKS), to know whether a's gradient
#: is wanted (PyTorch raises only then: grad(y, x) with a requiring grad works)
ABOVE = Slots("gradcli.engine.ops.igamma", "tasks")

_gammainc = scipy_fn("gammainc")
_gammaincc = scipy_fn("gammaincc")


def _f64(fn):
    """fn in float64, rounded once to a float32 input's dtype."""
    import numpy as np

    def forward(a, x):
        out = np.asarray(fn(np.asarray(a, np.float64), np.asarray(x, np.float64)))
        dtype = np.result_type(a, x)
        return out.astype(dtype if dtype.kind in "fV" else np.float64)

    forward.__name__ = getattr(fn, "__name__", "forward")
    return forward


def _grads(name: str, sign: float):
    def backward(c, g):
        a, x = c.saved
        if _wanted(c, 0):
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        density = ((a - 1) * x.log() - x - a.lgamma()).exp()
        return None, (g * density if sign > 0 else -(g * density))

    return backward


def _wanted(c, i: int) -> bool:
    """Whether the running backward will use input i's gradient (its node will run)."""
    node = c.next_functions[i][0]
    if node is None:
        return False
    tasks = ABOVE.tasks()
    if not tasks:  # (a node called directly)
        return True
    will_run, stop_at = tasks[-1][1], tasks[-1][3]
    return node in will_run or bool(stop_at and node in stop_at)


igamma = binary("igamma", "IgammaBackward0", _f64(_gammainc), _grads("igamma", 1.0),
                "d igamma(a, x)/dx = x^(a-1) e^(-x) / Gamma(a) (none for a)", domain="positive",
                ints="error",
                torch_call="torch.igamma(torch.full_like(a, 1.5), a.abs() + 0.5)")
igammac = binary("igammac", "IgammacBackward0", _f64(_gammaincc), _grads("igammac", -1.0),
                 "d igammac(a, x)/dx = -x^(a-1) e^(-x) / Gamma(a) (none for a)",
                 domain="positive", ints="error",
                 torch_call="torch.igammac(torch.full_like(a, 1.5), a.abs() + 0.5)")

def _special(name: str, fn):
    """torch.special.<name>: fn, with the special_ name in its argument errors."""

    def special(input, other):
        for position, (arg, value) in enumerate((("input", input), ("other", other)), 1):
            if not isinstance(value, Tensor):
                raise TypeError(f"special_{name}(): argument '{arg}' (position {position}) must "
                                f"be Tensor, not {type(value).__name__}")
        return fn(input, other)

    special.__name__ = special.__qualname__ = name
    return public(f"torch.special.{name}")(special)


gammainc = _special("gammainc", igamma)
gammaincc = _special("gammaincc", igammac)

#: ops forward AD refuses (PyTorch has no forward formula for them): engine/forward_ad.py
NO_FORWARD_AD = ("igamma", "igammac")
