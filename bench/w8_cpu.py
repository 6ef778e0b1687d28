#!/usr/bin/env python3
"""W8's four draws measured in CPU time, for a machine that is not idle.

    python bench/w8_cpu.py [ROUNDS]

`bench/run.py -k W8` times the wall clock, which is the figure for the README but says
little while other processes share the cores. This runs the same draws (randn and rand of
10**6 float32 and of 16, through gradcli, PyTorch and numpy's own PCG64 Generator) and
takes `time.process_time` per call, the minimum over ROUNDS rounds with the peers round
robin in one process. Every peer runs on one thread (gradcli's split and PyTorch's pool
off), so CPU time is each one's own work and the ratios compare the kernels alone.
Figures are reported, never asserted.
"""

from __future__ import annotations

import sys
import time

import numpy as np


def main() -> int:
    import gradcli.torch as G
    from gradcli.engine import parallel

    parallel.set_num_threads(1)
    peers = {"gradcli": G}
    try:
        import torch

        torch.set_num_threads(1)
        peers["torch"] = torch
    except ImportError:
        pass
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    npg = np.random.Generator(np.random.PCG64(0))
    for n, reps in ((10**6, 3), (16, 3000)):
        for kind in ("randn", "rand"):
            row = {name: getattr(T, kind) for name, T in peers.items()}
            numpy_draw = npg.standard_normal if kind == "randn" else npg.random
            row["numpy"] = lambda n, f=numpy_draw: f(n, dtype=np.float32)
            best = dict.fromkeys(row, float("inf"))
            for fn in row.values():
                fn(n)
            for _ in range(rounds):
                for name, fn in row.items():
                    start = time.process_time()
                    for _ in range(reps):
                        fn(n)
                    best[name] = min(best[name], (time.process_time() - start) / reps)
            scale, unit = (1e3, "ms") if n > 16 else (1e6, "us")
            cells = "  ".join(f"{name} {t * scale:.3f} {unit}" for name, t in best.items())
            ratios = "  ".join(f"gradcli/{name} {best['gradcli'] / best[name]:.2f}x"
                               for name in best if name != "gradcli")
            print(f"W8 {kind}({n}) float32 CPU: {cells}  | {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
