"""MultiheadAttention (PyTorch keeps it in torch.nn.modules.activation) and the
NonDynamicallyQuantizableLinear its out_proj is."""

from __future__ import annotations

from gradcli.engine.grad_mode import is_grad_enabled
from gradcli.engine.ops.mha import canonical_mask, multi_head_attention_forward

from ._common import new_param
from ._init import nn_init
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name: PyTorch uses the name to keep quantization off the
    out projection, and it shows in MultiheadAttention's repr."""


class MultiheadAttention(Module):
    """Attention over num_heads heads with packed (or, for other key/value widths,
    separate) in-projection weights, as torch.nn.MultiheadAttention. Where PyTorch takes
    its fused inference kernel, the composed path gives the same values, laid out and
    NaN-ed as the kernel's."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = new_param((embed_dim, embed_dim), device, dtype)
            self.k_proj_weight = new_param((embed_dim, self.kdim), device, dtype)
            self.v_proj_weight = new_param((embed_dim, self.vdim), device, dtype)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = new_param((3 * embed_dim, embed_dim), device, dtype)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = new_param((3 * embed_dim,), device, dtype)
        else:
            self.register_parameter("in_proj_bias", None)
        # out_proj draws its Linear init here, before _reset_parameters: PyTorch's order
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = new_param((1, 1, embed_dim), device, dtype)
            self.bias_v = new_param((1, 1, embed_dim), device, dtype)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        init = nn_init()
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _takes_fast_path(self, query, key, value, key_padding_mask, attn_mask) -> bool:
        """PyTorch's conditions for its fused inference kernel (eval, self-attention,
        batch_first, an even head count, bool masks, nothing to differentiate)."""
        if any(m is not None and m.is_floating_point() for m in (attn_mask, key_padding_mask)):
            return False
        if not (query.dim() == 3 and query is key and key is value and not self.training
                and self.in_proj_weight is not None and self.in_proj_bias is not None
                and query.dtype == self.in_proj_weight.dtype == self.in_proj_bias.dtype
                and self.num_heads % 2 == 0 and self.batch_first and self.bias_k is None
                and self.bias_v is None and not self.add_zero_attn
                and self._qkv_same_embed_dim):
            return False
        tensors = (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
                   self.out_proj.bias)
        return not (is_grad_enabled() and any(t.requires_grad for t in tensors))

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                attn_mask=None, average_attn_weights: bool = True, is_causal: bool = False):
        fast = self._takes_fast_path(query, key, value, key_padding_mask, attn_mask)
        batched = query.dim() == 3
        key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask",
                                          None if attn_mask is None else attn_mask.dtype,
                                          "attn_mask", query.dtype)
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                   check_other=False)
        if self.batch_first and batched:
            # the same tensor stays the same tensor: the projection packs on identity
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        if fast:
            # the fused kernel's values are the composed path's with weights (a fully masked
            # row is NaN there, as in softmax over -inf), its output a fresh C-order tensor
            out, weights = multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
                self.in_proj_bias, None, None, False, 0.0, self.out_proj.weight,
                self.out_proj.bias, training=False, key_padding_mask=key_padding_mask,
                need_weights=True, attn_mask=attn_mask,
                average_attn_weights=average_attn_weights)
            return out.transpose(1, 0).contiguous(), (weights if need_weights else None)
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            return out.transpose(1, 0), weights
        return out, weights
