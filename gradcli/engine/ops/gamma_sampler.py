"""torch._standard_gamma with its StandardGammaBackward0 node and torch._standard_gamma_grad.

Only the op and its public names live here (imported with the op table); the sampler and the
gradient's approximation are in gradcli.engine.gamma_binomial, loaded on first use.
"""

from __future__ import annotations

from ..tensor import Tensor, make
from .registry import defop, public, run_op


def _standard_gamma_array(alpha):
    from ..gamma_binomial import standard_gamma_array

    return standard_gamma_array(alpha)


def _standard_gamma_backward(c, g):
    from ..gamma_binomial import gamma_grad_array

    alpha, = c.saved
    return (g * make(gamma_grad_array(alpha._data, c.result._data)),)


STANDARD_GAMMA = defop("standard_gamma", "StandardGammaBackward0", _standard_gamma_array,
                       _standard_gamma_backward,
                       "x ~ Gamma(alpha): dx/dalpha = -(dF/dalpha)/f (PyTorch's approximation)",
                       save="inputs result")


@public("torch._standard_gamma")
def standard_gamma(alpha: Tensor, generator=None) -> Tensor:
    if generator is not None:
        raise RuntimeError("torch._standard_gamma with a generator is not supported by gradcli")
    return run_op(STANDARD_GAMMA, (alpha,))


@public("torch._standard_gamma_grad")
def standard_gamma_grad(alpha: Tensor, output: Tensor) -> Tensor:
    from ..gamma_binomial import gamma_grad_array

    return make(gamma_grad_array(alpha._data, output._data))
