"""torch.linspace in float32 gives PyTorch's values bit for bit (tutorials build their data
with it; a last-bit difference there shows in every full-precision loss they print).
PyTorch's AVX2 and AVX-512 kernels agree here (checked on an AVX-512 machine with and
without ATEN_CPU_CAPABILITY=avx2); only its forced non-vector build
(ATEN_CPU_CAPABILITY=default) differs, which no CPU selects by itself."""
from __future__ import annotations

import math

import numpy as np
import pytest

import gradcli.torch as G


@pytest.mark.parametrize("ends", [(-math.pi, math.pi), (0.0, 1.0), (-2.0, 2.0), (1.0, -3.5),
                                  (0.1, 7.3)])
def test_float32_linspace_matches_pytorch_bitwise(ends):
    torch = pytest.importorskip("torch")
    for steps in [*range(1, 40), 100, 101, 999, 2000]:
        ref = torch.linspace(*ends, steps).numpy()
        got = G.linspace(*ends, steps).numpy()
        assert np.array_equal(ref, got), (ends, steps)
