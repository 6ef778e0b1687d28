"""kl_divergence(p, q) for the pairs PyTorch defines in closed form among the distributions here."""

from __future__ import annotations

import math

import gradcli.torch as torch
import gradcli.torch.nn.functional as F

from .simple import Bernoulli, Categorical, Normal, Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL: dict = {}


def register_kl(type_p, type_q):
    """Decorator: fn(p, q) computes KL(p || q) for that pair of distribution classes."""

    def decorate(fn):
        _KL[type_p, type_q] = fn
        return fn

    return decorate


def kl_divergence(p, q):
    fn = None
    for cp in type(p).__mro__:
        for cq in type(q).__mro__:
            fn = _KL.get((cp, cq))
            if fn is not None:
                break
        if fn is not None:
            break
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} "
                                  f"and q type {type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1[q.probs == 0] = float("inf")
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2[q.probs == 1] = float("inf")
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = float("inf")
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = float("inf")
    return result


@register_kl(Normal, Uniform)
def _kl_normal_uniform(p, q):
    """Infinite: a normal puts mass outside any interval."""
    return torch.full_like(p.loc, float("inf"))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
