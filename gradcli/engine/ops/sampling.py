"""The public names of sampling: the random fills (Tensor.uniform_, normal_, ...),
torch.normal/bernoulli/multinomial, dropout, and the generator's names.

The implementations (engine/rng_ops.py, engine/rng_dropout.py, engine/rng_sample.py)
load when a program first calls one, so that the start-up of every run, which draws no
random number, does not grow; until then each name here is a small forwarding function.
"""

from __future__ import annotations

from importlib import import_module

from .. import dtypes
from ..random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from .registry import PUBLIC

for _name, _value in (("torch.Generator", Generator), ("torch.default_generator", default_generator),
                      ("torch.uint8", dtypes.uint8), ("torch.manual_seed", manual_seed),
                      ("torch.seed", seed), ("torch.initial_seed", initial_seed),
                      ("torch.get_rng_state", get_rng_state), ("torch.set_rng_state", set_rng_state)):
    PUBLIC[_name] = _value


def _forward(module: str, attr: str):
    """A function that calls `module.attr`, importing the module on the first call."""
    target = []

    def call(*args, **kwargs):
        if not target:
            target.append(getattr(import_module(module), attr))
        return target[0](*args, **kwargs)

    call.__name__ = call.__qualname__ = attr
    return call


_OPS = "gradcli.engine.rng_ops"
_DROPOUT = "gradcli.engine.rng_dropout"
for _module, _attr, _names in (
    (_OPS, "uniform_", ("Tensor.uniform_",)),
    (_OPS, "normal_", ("Tensor.normal_",)),
    (_OPS, "random_", ("Tensor.random_",)),
    (_OPS, "bernoulli_", ("Tensor.bernoulli_",)),
    (_OPS, "bernoulli", ("torch.bernoulli", "Tensor.bernoulli")),
    (_OPS, "exponential_", ("Tensor.exponential_",)),
    (_OPS, "geometric_", ("Tensor.geometric_",)),
    (_OPS, "log_normal_", ("Tensor.log_normal_",)),
    (_OPS, "cauchy_", ("Tensor.cauchy_",)),
    (_OPS, "normal", ("torch.normal",)),
    (_OPS, "multinomial", ("torch.multinomial", "Tensor.multinomial")),
    (_DROPOUT, "dropout", ("torch.nn.functional.dropout",)),
    (_DROPOUT, "torch_dropout", ("torch.dropout",)),
    (_DROPOUT, "torch_dropout_", ("torch.dropout_",)),
    (_DROPOUT, "torch_alpha_dropout", ("torch.alpha_dropout",)),
    (_DROPOUT, "torch_alpha_dropout_", ("torch.alpha_dropout_",)),
    (_DROPOUT, "torch_feature_dropout", ("torch.feature_dropout",)),
    (_DROPOUT, "torch_feature_dropout_", ("torch.feature_dropout_",)),
    (_DROPOUT, "torch_feature_alpha_dropout", ("torch.feature_alpha_dropout",)),
    (_DROPOUT, "torch_feature_alpha_dropout_", ("torch.feature_alpha_dropout_",)),
    (_DROPOUT, "alpha_dropout", ("torch.nn.functional.alpha_dropout",)),
    (_DROPOUT, "feature_alpha_dropout", ("torch.nn.functional.feature_alpha_dropout",)),
    (_DROPOUT, "dropout1d", ("torch.nn.functional.dropout1d",)),
    (_DROPOUT, "dropout2d", ("torch.nn.functional.dropout2d",)),
    (_DROPOUT, "dropout3d", ("torch.nn.functional.dropout3d",)),
):
    _fn = _forward(_module, _attr)
    for _public_name in _names:
        PUBLIC[_public_name] = _fn
