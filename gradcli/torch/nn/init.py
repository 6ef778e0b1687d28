"""torch.nn.init. The functions live in gradcli/engine/rng_init.py and load on the first
call (start-up of a run that initialises nothing stays as it was)."""

from __future__ import annotations

from importlib import import_module

__all__ = ["calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_",
           "ones_", "orthogonal_", "sparse_", "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_",
           "zeros_"]


def _forward(name: str):
    target = []

    def call(*args, **kwargs):
        if not target:
            target.append(getattr(import_module("gradcli.engine.rng_init"), name))
        return target[0](*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


calculate_gain = _forward("calculate_gain")
constant_ = _forward("constant_")
dirac_ = _forward("dirac_")
eye_ = _forward("eye_")
kaiming_normal_ = _forward("kaiming_normal_")
kaiming_uniform_ = _forward("kaiming_uniform_")
normal_ = _forward("normal_")
ones_ = _forward("ones_")
orthogonal_ = _forward("orthogonal_")
sparse_ = _forward("sparse_")
trunc_normal_ = _forward("trunc_normal_")
uniform_ = _forward("uniform_")
xavier_normal_ = _forward("xavier_normal_")
xavier_uniform_ = _forward("xavier_uniform_")
zeros_ = _forward("zeros_")
_calculate_fan_in_and_fan_out = _forward("_calculate_fan_in_and_fan_out")


def _deprecated(new_name: str):
    """The old spelling without the trailing underscore: warns, then initialises."""
    old_name = new_name[:-1]
    target = globals()[new_name]

    def deprecated_init(*args, **kwargs):
        import warnings

        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return target(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    return deprecated_init


uniform = _deprecated("uniform_")
normal = _deprecated("normal_")
constant = _deprecated("constant_")
eye = _deprecated("eye_")
dirac = _deprecated("dirac_")
xavier_uniform = _deprecated("xavier_uniform_")
xavier_normal = _deprecated("xavier_normal_")
kaiming_uniform = _deprecated("kaiming_uniform_")
kaiming_normal = _deprecated("kaiming_normal_")
orthogonal = _deprecated("orthogonal_")
sparse = _deprecated("sparse_")
__all__ += ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
            "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]
