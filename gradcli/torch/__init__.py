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
    no_grad,
    set_grad_enabled,
)
from gradcli.engine.ops.creation import (  # noqa: F401
    BoolTensor,
    DoubleTensor,
    FloatTensor,
    IntTensor,
    LongTensor,
    allclose,
    arange,
    as_tensor,
    empty,
    empty_like,
    equal,
    eye,
    full,
    full_like,
    is_floating_point,
    is_tensor,
    isclose,
    linspace,
    numel,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from gradcli.engine.ops.elementwise import (  # noqa: F401
    abs,
    add,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    ceil,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    cos,
    div,
    eq,
    exp,
    floor,
    floor_divide,
    fmod,
    ge,
    gt,
    isfinite,
    isinf,
    isnan,
    le,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mul,
    ne,
    neg,
    pow,
    reciprocal,
    relu,
    remainder,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    sub,
    tan,
    tanh,
    trunc,
    where,
)
from gradcli.engine.ops.linalg import addmm, bmm, dot, ger, matmul, mm, mv, outer  # noqa: F401
from gradcli.engine.ops.nn import log_softmax, softmax  # noqa: F401
from gradcli.engine.ops.nn import (  # noqa: F401
    torch_binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
)
from gradcli.engine.ops.reductions import RETURN_TYPES as _RETURN_TYPES
from gradcli.engine.ops.reductions import (  # noqa: F401
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    count_nonzero,
    cumprod,
    cumsum,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    std,
    sum,
    var,
)
from gradcli.engine.ops.shape import (  # noqa: F401
    cat,
    chunk,
    clone,
    concat,
    concatenate,
    flip,
    hstack,
    nonzero,
    split,
    split_with_sizes,
    stack,
    unbind,
    vstack,
)
from gradcli.engine.ops.views import (  # noqa: F401
    flatten,
    index_put,
    index_put_,
    narrow,
    permute,
    reshape,
    select,
    squeeze,
    t,
    transpose,
    unsqueeze,
)
from gradcli.engine.parallel import get_num_threads, set_num_threads  # noqa: F401
from gradcli.engine.random import initial_seed, manual_seed, seed  # noqa: F401
from gradcli.engine.size import Size, device  # noqa: F401
from gradcli.engine.tensor import Tensor  # noqa: F401

from . import autograd, linalg, nn, random, special  # noqa: F401
from ._namespace import fill as _fill
from .autograd import Variable  # noqa: F401

absolute = abs
negative = neg
subtract = sub
multiply = mul
divide = div
true_divide = div
swapaxes = transpose
get_default_dtype = _dtypes.get_default_dtype
set_default_dtype = _dtypes.set_default_dtype
result_type = _dtypes.result_type
promote_types = _dtypes.promote

dtype = _dtypes.dtype
float32 = float = _dtypes.float32
float64 = double = _dtypes.float64
int64 = long = _dtypes.int64
int32 = int = _dtypes.int32
bool = _dtypes.bool_

__version__ = "2.13.0+gradcli"

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


fft = _UnsupportedNamespace("torch.fft")
optim = _UnsupportedNamespace("torch.optim")
cuda = _UnsupportedNamespace("torch.cuda")


_fill(globals(), "torch.")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"torch.{name} is not supported by gradcli")


__all__ = sorted(
    n for n, v in list(globals().items())
    if not n.startswith("_") and n not in ("annotations", "is_grad_enabled_", "set_printoptions_")
)
