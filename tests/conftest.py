"""Pins the CPU kernels of numpy and PyTorch for the whole test session.

gradcli reproduces PyTorch's CPU results bit for bit as PyTorch computes them with its
AVX2 kernels, and computes with numpy's kernels. Both libraries pick their kernels by the
CPU at run time: on an AVX-512 machine PyTorch adds float32 sums in 16 lanes instead of 8,
and numpy's AVX-512 float32 `log`/`exp`/`pow` round some results differently. A test that
compares last bits would then pass or fail by the machine it runs on. So before either
library is imported (this file is loaded before any test module, and the plugins pytest
loads before it import neither), the session asks both for the kernels every x86-64 CPU
in use has: PyTorch through `ATEN_CPU_CAPABILITY=avx2` (and its MKL, whose AVX-512 `log`
gives `log(float32(e))` as 1.0000001, through `MKL_ENABLE_INSTRUCTIONS=AVX2`), numpy by
switching off its AVX-512 dispatch targets (`NPY_DISABLE_CPU_FEATURES`). MKL's matrix
products still follow the CPU's vendor: tests/torch_kernels.py skips the tests of their
order, saying so, on a CPU other than the one they were measured on. The settings are environment
variables, so the gradcli and python processes the tests start inherit them.

A variable the caller already set is left alone (e.g. `ATEN_CPU_CAPABILITY=default` to
see what a machine without AVX2 does).
"""

from __future__ import annotations

import os
import subprocess
import sys

if "numpy" in sys.modules or "torch" in sys.modules:  # pragma: no cover - a plugin's doing
    import warnings

    warnings.warn("a pytest plugin imported numpy or torch before tests/conftest.py: their "
                  "kernels in this process are the CPU's own, and last-bit tests may differ "
                  "on AVX-512 machines (the processes the tests start are still pinned)",
                  stacklevel=1)

# numpy's names for its dispatch targets changed across versions (AVX512F, AVX512_SKX, ...
# up to 2.3; X86_V4, AVX512_ICL, AVX512_SPR from 2.4), and naming one it does not dispatch
# prints a warning in every process. So ask this numpy (in a child, since importing it
# here would fix its choice) which targets it has.
_PROBE = """
try:
    from numpy._core._multiarray_umath import __cpu_dispatch__
except ImportError:
    from numpy.core._multiarray_umath import __cpu_dispatch__
print(" ".join(t for t in __cpu_dispatch__ if "AVX512" in t or t == "X86_V4"))
"""


def _numpy_avx512_targets() -> str:
    env = {k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          env=env, timeout=120)
    return proc.stdout.strip() if proc.returncode == 0 else ""


os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
os.environ.setdefault("MKL_ENABLE_INSTRUCTIONS", "AVX2")
if "NPY_DISABLE_CPU_FEATURES" not in os.environ:
    _targets = _numpy_avx512_targets()
    if _targets:
        os.environ["NPY_DISABLE_CPU_FEATURES"] = _targets
