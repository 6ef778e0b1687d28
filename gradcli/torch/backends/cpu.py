"""torch.backends.cpu: the kernel level PyTorch's dispatcher picks on this machine, which
environment cells print."""

from __future__ import annotations

import os

__all__ = ["get_cpu_capability"]


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def get_cpu_capability() -> str:
    """"AVX512" where the CPU has avx512f/bw/vl/dq, "AVX2" where it has avx2 and fma, else
    "DEFAULT"; ATEN_CPU_CAPABILITY lowers it, as PyTorch's dispatcher lets it (never
    raises it)."""
    flags = _cpu_flags()
    levels = ["DEFAULT"]
    if {"avx2", "fma"} <= flags:
        levels.append("AVX2")
        if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
            levels.append("AVX512")
    asked = os.environ.get("ATEN_CPU_CAPABILITY", "").upper()
    return asked if asked in levels else levels[-1]
