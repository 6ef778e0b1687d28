"""torch.convolution (ATen's one entry point behind every conv / conv_transpose) and
torch.conv_tbc (a 1-D convolution over time-batch-channel inputs, fairseq's layout).

conv_tbc is one op with PyTorch's node (ConvTbcBackward0); its gradients are written with
differentiable ops (conv_tbc itself for the input, per-tap contractions for the weight),
so create_graph works, though its second-order nodes are not PyTorch's CopySlices ones.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .registry import PUBLIC, defop, public, run_op


@public("torch.convolution")
def convolution(input: Tensor, weight: Tensor, bias, stride, padding, dilation,
                transposed: bool, output_padding, groups: int) -> Tensor:
    """conv{1,2,3}d or conv_transpose{1,2,3}d by the input's dims and `transposed`."""
    dims = input.dim() - 2
    if dims not in (1, 2, 3):
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(input.shape)}")
    F = "torch.nn.functional."
    if transposed:
        return PUBLIC[f"{F}conv_transpose{dims}d"](input, weight, bias, stride, padding,
                                                   output_padding, groups, dilation)
    return PUBLIC[f"{F}conv{dims}d"](input, weight, bias, stride, padding, dilation, groups)


def _conv_tbc_forward(x, w, b, pad):
    padded = np.pad(x, ((pad, pad), (0, 0), (0, 0)))
    kernel = w.shape[0]
    steps = padded.shape[0] - kernel + 1
    out = np.broadcast_to(b.astype(x.dtype), (max(steps, 0), x.shape[1], w.shape[2])).copy()
    for k in range(kernel):
        out += np.einsum("tbi,io->tbo", padded[k:k + steps], w[k])
    return out


def _conv_tbc_backward(ctx, grad):
    x, w, b = ctx.saved
    pad = ctx.meta[0]
    kernel = w.shape[0]
    flipped = w.flip(0).transpose(1, 2)
    zeros = PUBLIC["torch.zeros"](w.shape[1], dtype=grad.dtype)
    grad_x = conv_tbc(grad, flipped, zeros, kernel - 1 - pad)
    padded = PUBLIC["torch.nn.functional.pad"](x, (0, 0, 0, 0, pad, pad))
    steps = grad.shape[0]
    taps = [PUBLIC["torch.einsum"]("tbi,tbo->io", padded[k:k + steps], grad)
            for k in range(kernel)]
    grad_w = PUBLIC["torch.stack"](taps)
    return grad_x, grad_w, grad.sum((0, 1))


CONV_TBC = defop("conv_tbc", "ConvTbcBackward0", _conv_tbc_forward, _conv_tbc_backward,
                 "y[t] = b + sum_k x[t + k - pad] @ w[k]: dx by conv_tbc of the flipped "
                 "weights, dw[k] = sum_t x[t + k - pad]^T g[t], db = sum g",
                 save="inputs",
                 torch_call="torch.conv_tbc(a.reshape(-1, 1, 1).repeat(1, 2, 3), "
                            "a[:2].reshape(2, 1, 1).repeat(1, 3, 2), a[:2], 1)")


@public("torch.conv_tbc", "torch.nn.functional.conv_tbc")
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of a (time, batch, channels) input with a (kernel, in, out) weight,
    zero-padded by `pad` steps at both ends of time."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    steps = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if steps < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {steps}: "
                           f"[{steps}, {input.shape[1]}, {weight.shape[2]}]")
    return run_op(CONV_TBC, (input, weight, bias), (int(pad),))


# ------------------------------------------------------------------ the RNNs' ATen forms


def _rnn_form(name: str):
    def function(*args, **kwargs):
        from gradcli.torch.nn.modules import rnn_functional

        return getattr(rnn_functional, name)(*args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"torch.{name}: the ATen form behind nn's recurrent layers (loaded with "
                        "them on first use).")
    return function


for _name in ("lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
              "rnn_relu_cell"):
    public(f"torch.{_name}")(_rnn_form(_name))


@public("torch.lobpcg")
def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """torch.lobpcg (gradcli.torch._lobpcg, loaded on first call)."""
    from gradcli.torch import _lobpcg

    return _lobpcg.lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker,
                          ortho_iparams, ortho_fparams, ortho_bparams)
