"""PyTorch as the oracle for the random-number tests.

gradcli draws what PyTorch's AVX2 and AVX-512 builds draw: the float32 normal kernel is
registered for AVX2 only (PyTorch keeps it off AVX-512 on purpose, so both run it), and
the uniform kernel's multiply-add is fused on both. A PyTorch running its plain kernels
(ATEN_CPU_CAPABILITY=default, or a CPU without AVX2) takes libm's float log/sin/cos and
unfused arithmetic, so a comparison there says nothing about gradcli: skip, saying why.
"""

from __future__ import annotations

import pytest

VECTOR_CAPABILITIES = ("AVX2", "AVX512")


def torch_with_vector_kernels():
    torch = pytest.importorskip("torch")
    capability = torch.backends.cpu.get_cpu_capability()
    if capability not in VECTOR_CAPABILITIES:
        pytest.skip(f"PyTorch runs its {capability} kernels here; gradcli draws as its "
                    f"{' and '.join(VECTOR_CAPABILITIES)} ones do", allow_module_level=True)
    return torch
