"""PyTorch as the oracle for the bit-for-bit tests of gradcli's summation orders.

gradcli adds in the order PyTorch 2.13's CPU kernels add (engine/kernels/summation.py) and sums
small float32 products in the order its MKL does (engine/kernels/mkl.py), as measured on
this project's machines: PyTorch's AVX2 kernels (8 float32 / 4 float64 lanes), and MKL
on an AMD CPU. tests/conftest.py asks PyTorch for its AVX2 kernels on every machine
(ATEN_CPU_CAPABILITY); where it runs others all the same (a caller's own setting, a CPU
without AVX2) a comparison says nothing about gradcli, and these tests skip, saying why.
MKL's matrix products follow the CPU's vendor whatever is pinned (its Intel paths sum in
other orders): gradcli picks the orders of the kernels MKL runs (kernels/mkl_intel.isa(), the
same vendor, flags and MKL_ENABLE_INSTRUCTIONS on both sides); the tests of the AMD orders
(`mkl=True`) skip where MKL runs others, saying so, and tests/test_kernels_mkl_intel.py checks
the Intel ones.
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest

import gradcli.torch as gradcli_torch
from gradcli.engine.kernels import mkl_intel

MEASURED_CAPABILITY = "AVX2"
MEASURED_MKL_VENDOR = "AuthenticAMD"


def _cpu_vendor() -> str:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def torch_with_measured_kernels(mkl: bool = False):
    """The torch module, or a skip when it is missing or runs kernels other than those the
    orders were measured on (`mkl`: its matrix products too)."""
    torch = pytest.importorskip("torch")
    capability = torch.backends.cpu.get_cpu_capability()
    if capability != MEASURED_CAPABILITY:
        pytest.skip(f"PyTorch runs its {capability} kernels here; the orders were measured "
                    f"on its {MEASURED_CAPABILITY} ones", allow_module_level=True)
    if mkl and mkl_intel.isa() != "amd":
        pytest.skip(f"these are the orders of MKL's kernels on a {MEASURED_MKL_VENDOR} CPU; this "
                    f"one is {_cpu_vendor()}, where MKL runs its own (its gemv orders are "
                    f"tests/test_kernels_mkl_intel.py's)", allow_module_level=True)
    return torch


@contextmanager
def both_on_threads(torch, threads: int):
    """PyTorch and gradcli set to the same thread count (their sums and products follow
    it), both put back after."""
    before, before_ours = torch.get_num_threads(), gradcli_torch.get_num_threads()
    torch.set_num_threads(threads)
    gradcli_torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
        gradcli_torch.set_num_threads(before_ours)
