"""Language overhead benchmarks (not a test; run ``python tests/lang/bench_lang.py``).

1. Start-up: wall time of ``gradcli run one_line.grad`` against
   ``python -c "import numpy"`` (target <= 1.5x), best of N alternating runs.
2. Interpreter overhead: the seed loop (``y = x * 2; while y.norm() < 1000:
   y = y * 2; y.backward(v)``) repeated 2,000 times, run by the gradcli
   interpreter and as plain Python on ``gradcli.torch``, in one process,
   start-up excluded (target <= 1.3x), best of N.
3. A 1,000,000-iteration pure-Python loop under both (for reference).
"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N = int(sys.argv[1]) if len(sys.argv) > 1 else 7

SEED_LOOP = """\
x = torch.tensor([0.3, -1.2, 2.5], requires_grad=True)
v = torch.tensor([0.1, 1.0, 0.0001])
for i in range(2000):
    y = x * 2
    while y.norm() < 1000:
        y = y * 2
    y.backward(v)
"""

PURE_LOOP = """\
n = 0
for i in range(1000000):
    n += i % 7
"""


def wall(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, capture_output=True, check=False)
    return time.perf_counter() - t


def startup():
    with tempfile.TemporaryDirectory() as d:
        prog = Path(d) / "one.grad"
        prog.write_text("print(1)\n")
        base = [sys.executable, "-c", "import numpy"]
        ours = [sys.executable, "-m", "gradcli", "run", str(prog)]
        wall(ours)  # warm the grammar cache
        b = min(wall(base) for _ in range(N))
        o = min(wall(ours) for _ in range(N))
    print(f"start-up: python -c 'import numpy' {b * 1e3:.0f} ms, gradcli run one-line "
          f"{o * 1e3:.0f} ms, ratio {o / b:.2f} (target <= 1.5)")


def interp(src, label, target=None):
    import gradcli.torch as torch
    from gradcli.lang import Session
    code = compile(src, "<plain>", "exec")
    py, gc = [], []
    for _ in range(N):
        g = {"torch": torch}
        t = time.perf_counter()
        exec(code, g)
        py.append(time.perf_counter() - t)
        s = Session()
        prog = s.compile("import torch\n" + src, "bench.grad")
        t = time.perf_counter()
        s.execute(prog)
        gc.append(time.perf_counter() - t)
    ratio = min(gc) / min(py)
    tail = f" (target <= {target})" if target else ""
    print(f"{label}: plain Python {min(py) * 1e3:.0f} ms, gradcli {min(gc) * 1e3:.0f} ms, "
          f"ratio {ratio:.2f}{tail}")


if __name__ == "__main__":
    startup()
    interp(SEED_LOOP, "seed loop x2000", 1.3)
    interp(PURE_LOOP, "1e6-iteration Python loop")
