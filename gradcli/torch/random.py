"""torch.random: the default generator's seed and state, and fork_rng."""

from __future__ import annotations

import contextlib

from gradcli.engine.ops.build_queries import thread_safe_generator  # noqa: F401
from gradcli.engine.random import (  # noqa: F401
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Run the block with the default generator's state saved and restored afterwards, so
    draws inside it leave the numbers drawn after it unchanged (as torch.random.fork_rng;
    gradcli has only the CPU generator)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed",
           "seed", "set_rng_state", "thread_safe_generator"]
