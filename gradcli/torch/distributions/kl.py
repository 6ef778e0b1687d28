"""kl_divergence(p, q) for the pairs PyTorch defines in closed form among the distributions here."""

from __future__ import annotations

import math
import warnings

import gradcli.torch as torch
import gradcli.torch.nn.functional as F

from .distribution import Distribution
from .simple import Bernoulli, Categorical, Normal, Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL: dict = {}
_CHOSEN: dict = {}  # (type_p, type_q) -> the function dispatch picked; cleared on register_kl


def register_kl(type_p, type_q):
    """Decorator: fn(p, q) computes KL(p || q) for that pair of distribution classes (and
    their subclasses, unless a more specific pair is registered)."""
    # (PyTorch's own checks, as written: a class that is no Distribution passes them)
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorate(fn):
        _KL[type_p, type_q] = fn
        _CHOSEN.clear()  # a new pair can change what the others dispatch to
        return fn

    return decorate


class _Specificity:
    """A registered pair of classes, ordered as PyTorch orders them: lexicographically by
    subclass (one pair precedes another when its first class is a subclass of the other's,
    or they are the same class and the rest so compare)."""

    __slots__ = ("types",)

    def __init__(self, *types):
        self.types = types

    def __le__(self, other):
        for mine, theirs in zip(self.types, other.types):
            if not issubclass(mine, theirs):
                return False
            if mine is not theirs:
                break
        return True

    def __lt__(self, other):
        return self.types != other.types and self <= other


def _dispatch(type_p, type_q):
    """The function for the most specific registered pair both types derive from (the
    first class deciding, then the second; when deciding by the second first would pick
    another function, PyTorch's ambiguity warning); None when no pair applies."""
    matches = [pair for pair in _KL if issubclass(type_p, pair[0]) and issubclass(type_q, pair[1])]
    if not matches:
        return None
    left_p, left_q = min(_Specificity(*pair) for pair in matches).types
    right_q, right_p = min(_Specificity(*reversed(pair)) for pair in matches).types
    chosen, other = _KL[left_p, left_q], _KL[right_p, right_q]
    if chosen is not other:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=3)
    return chosen


def kl_divergence(p, q):
    pair = (type(p), type(q))
    try:
        fn = _CHOSEN[pair]
    except KeyError:
        fn = _CHOSEN[pair] = _dispatch(*pair)
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
