"""torch.quasirandom.SobolEngine against PyTorch, bit for bit: the direction numbers, the
unscrambled and seeded scrambled points (float32 and float64), draw / draw_base2 /
fast_forward / reset, scrambling from the default generator after manual_seed, errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402
from gradcli.torch.quasirandom import _initial_state  # noqa: E402


@pytest.mark.parametrize("dimension", [1, 2, 9, 300, 21201])
def test_direction_numbers(dimension):
    theirs = torch.zeros(dimension, 30, dtype=torch.long)
    torch._sobol_engine_initialize_state_(theirs, dimension)
    assert np.array_equal(_initial_state(dimension, 30), theirs.numpy())


@pytest.mark.parametrize("kwargs", [{}, {"scramble": True, "seed": 0},
                                    {"scramble": True, "seed": 12345}])
@pytest.mark.parametrize("dimension", [1, 6, 50])
def test_draws_bit_for_bit(kwargs, dimension):
    engines = [lib.quasirandom.SobolEngine(dimension, **kwargs) for lib in (gt, torch)]
    draws = []
    for engine, lib in zip(engines, (gt, torch)):
        out = [engine.draw(1), engine.draw(6), engine.draw(4, dtype=lib.float64)]
        engine.fast_forward(5)
        out.append(engine.draw(3))
        engine.reset()
        out.append(engine.draw_base2(3))
        out.append(engine.draw_base2(3, dtype=lib.float64))
        fresh = lib.quasirandom.SobolEngine(dimension, **kwargs).fast_forward(3)
        out.append(fresh.draw(2))
        target = lib.empty(0)
        engine.draw(2, out=target)
        out.append(target)
        draws.append(out)
    for ours, theirs in zip(*draws):
        assert str(ours.dtype) == str(theirs.dtype)
        assert np.array_equal(ours.numpy(), theirs.numpy())
    assert repr(engines[0]) == repr(engines[1])
    assert engines[0].num_generated == engines[1].num_generated


def test_scramble_uses_the_default_generator():
    for lib in (gt, torch):
        lib.manual_seed(11)
    a = gt.quasirandom.SobolEngine(4, scramble=True).draw(5)
    b = torch.quasirandom.SobolEngine(4, scramble=True).draw(5)
    assert np.array_equal(a.numpy(), b.numpy())
    assert np.array_equal(gt.rand(4).numpy(), torch.rand(4).numpy())  # (as many draws used)


def test_errors():
    for lib in (gt, torch):
        for bad in (0, 21202):
            with pytest.raises(ValueError, match=r"Supported range of dimensionality for "
                                                 r"SobolEngine is \[1, 21201\]"):
                lib.quasirandom.SobolEngine(bad)
        engine = lib.quasirandom.SobolEngine(2)
        engine.draw(3)
        with pytest.raises(ValueError, match=r"n=3\+2\*\*2=7"):
            engine.draw_base2(2)
