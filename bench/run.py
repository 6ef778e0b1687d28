#!/usr/bin/env python3
"""Side-by-side benchmarks: gradcli vs PyTorch eager vs hand-written numpy.

    python bench/run.py            # full run, prints the table
    python bench/run.py --quick    # fewer repeats and smaller sizes (a smoke run)
    python bench/run.py --json out.json
    python bench/run.py -k W2      # only workloads whose id contains W2

Every workload runs through each path that applies -- plain Python on
`gradcli.torch`, `gradcli run` on a .grad file, `gradcli grad` -- and in the same
run through PyTorch (when importable) and a hand-written numpy version (one numpy
call per op, backward by hand: the limit for a numpy-backed engine). Each peer's
gradient is checked against numpy's, so a fast wrong answer shows. Medians over
repeats, with min-max. Memory workloads run each peer in its own process.
Figures are reported, never asserted: speed targets live here, not in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def have_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def gradcli_cmd() -> list[str]:
    """The installed console script beside this Python (a version manager's shim on PATH,
    such as pyenv's, would add its own ~100 ms to every start-up measured)."""
    here = Path(sys.executable).with_name("gradcli")
    if here.exists():
        return [str(here)]
    exe = shutil.which("gradcli")
    return [exe] if exe else [sys.executable, "-m", "gradcli"]


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def summary(times: list[float], scale: float = 1.0) -> dict:
    vals = [t * scale for t in times]
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


# ----------------------------------------------------------------- workloads
# Each engine workload takes a module with torch's API (real torch or gradcli.torch).

def w2_small_ops(T, n_ops: int):
    x = T.tensor([0.5, -1.0, 2.0], dtype=T.float64, requires_grad=True)
    t0 = time.perf_counter()
    y = x
    for _ in range(n_ops):
        y = y * 1.0001
    t1 = time.perf_counter()
    y.sum().backward()
    t2 = time.perf_counter()
    return (t1 - t0) / n_ops, (t2 - t1) / n_ops, np.asarray(x.grad.tolist())


def w2_numpy(n_ops: int):
    x = np.array([0.5, -1.0, 2.0])
    t0 = time.perf_counter()
    y = x
    for _ in range(n_ops):
        y = y * 1.0001
    t1 = time.perf_counter()
    g = np.ones(3)
    for _ in range(n_ops):
        g = g * 1.0001
    t2 = time.perf_counter()
    return (t1 - t0) / n_ops, (t2 - t1) / n_ops, g


W3_SOURCE = """\
import torch
x = torch.tensor([0.3, -1.2, 2.5], requires_grad=True)
v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
for _ in range({n}):
    y = x * 2
    while y.norm() < 1000:
        y = y * 2
    y.backward(v)
print(x.grad)
"""


def w3_engine(T, runs: int):
    x = T.tensor([0.3, -1.2, 2.5], requires_grad=True)
    v = T.tensor([0.1, 1.0, 0.0001], dtype=T.float)
    t0 = time.perf_counter()
    for _ in range(runs):
        y = x * 2
        while y.norm() < 1000:
            y = y * 2
        y.backward(v)
    return (time.perf_counter() - t0) / runs, np.asarray(x.grad.tolist())


def w3_numpy(runs: int):
    x = np.array([0.3, -1.2, 2.5], dtype=np.float32)
    v = np.array([0.1, 1.0, 0.0001], dtype=np.float32)
    grad = np.zeros(3, dtype=np.float32)
    t0 = time.perf_counter()
    for _ in range(runs):
        y = x * 2
        k = 1
        while np.sqrt((y * y).sum()) < 1000:
            y = y * 2
            k += 1
        g = v
        for _ in range(k):
            g = g * 2
        grad = grad + g
    return (time.perf_counter() - t0) / runs, grad


def w4_elementwise(T, n: int):
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal((n, n)), dtype=T.float64, requires_grad=True)
    t0 = time.perf_counter()
    out = (T.sin(x) * x + x * x).mean()
    out.backward()
    return time.perf_counter() - t0, x.grad


def w4_elementwise_numpy(n: int):
    x = np.random.default_rng(0).standard_normal((n, n))
    t0 = time.perf_counter()
    s = np.sin(x)
    a = s * x
    b = x * x
    c = a + b
    _ = c.mean()
    g = np.full(x.shape, 1.0 / x.size)
    gx = g * s + np.cos(x) * (g * x) + 2 * g * x
    return time.perf_counter() - t0, gx


def w4_matmul(T, n: int):
    rng = np.random.default_rng(1)
    A = T.tensor(rng.standard_normal((n, n)), dtype=T.float64, requires_grad=True)
    B = T.tensor(rng.standard_normal((n, n)), dtype=T.float64, requires_grad=True)
    t0 = time.perf_counter()
    T.tanh(A @ B).sum().backward()
    return time.perf_counter() - t0, A.grad


def w4_matmul_numpy(n: int):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n))
    B = rng.standard_normal((n, n))
    t0 = time.perf_counter()
    C = A @ B
    t = np.tanh(C)
    _ = t.sum()
    gC = 1 - t * t
    gA = gC @ B.T
    _ = A.T @ gC
    return time.perf_counter() - t0, gA


def as_np(x) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x.tolist() if hasattr(x, "tolist") else x, dtype=np.float64)


def close(a, b, rtol=1e-4) -> bool:
    return bool(np.allclose(as_np(a), as_np(b), rtol=rtol, atol=1e-6))


# ---------------------------------------------------- subprocess workloads

MEMORY_PROBE = textwrap.dedent("""\
    import sys, time, os
    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    peer, workload, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    import numpy as np
    if peer == "torch":
        import torch as T
    elif peer == "gradcli":
        import gradcli.torch as T
        from gradcli.engine.memory import tune_malloc
        tune_malloc()  # as the gradcli command does for its process
    base = rss()
    peak_bwd = [0]
    def sample(g=None):
        peak_bwd[0] = max(peak_bwd[0], rss())
    if workload == "W5":
        if peer == "numpy":
            x = np.array(1.0); t0 = time.perf_counter(); ys = [x]
            y = x
            for _ in range(n):
                y = y + 1.0
                ys.append(y)
            t1 = time.perf_counter(); fwd_mem = rss() - base
            g = np.array(1.0)
            for _ in range(n):
                g = g * 1.0
            t2 = time.perf_counter(); grad = float(g)
        else:
            x = T.tensor(1.0, dtype=T.float64, requires_grad=True)
            t0 = time.perf_counter(); y = x
            for _ in range(n):
                y = y + 1
            t1 = time.perf_counter(); fwd_mem = rss() - base
            y.backward(); t2 = time.perf_counter(); grad = float(x.grad)
        print(t1 - t0, t2 - t1, fwd_mem, 0, grad)
    else:  # W6: n sin ops on 1,000,000 float64 elements
        size = 1_000_000
        if peer == "numpy":
            x = np.linspace(-1, 1, size); saved = []; y = x
            for _ in range(n):
                saved.append(y); y = np.sin(y)
            end_fwd = rss() - base
            g = np.ones(size)
            for inp in reversed(saved):
                g = g * np.cos(inp); saved.pop(); sample()
            grad = float(g[:10].sum())
        else:
            x = T.linspace(-1, 1, size, dtype=T.float64, requires_grad=True); y = x
            for _ in range(n):
                y = T.sin(y)
                y.register_hook(sample)
            end_fwd = rss() - base
            y.sum().backward(); grad = float(x.grad[:10].sum())
        print(0, 0, end_fwd, peak_bwd[0] - base, grad)
""")


def run_probe(peer: str, workload: str, n: int) -> dict | None:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(MEMORY_PROBE)
        path = f.name
    try:
        proc = subprocess.run([sys.executable, path, peer, workload, str(n)],
                              capture_output=True, text=True, timeout=1800)
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
    fwd, bwd, mem, peak, grad = proc.stdout.split()
    return {"forward_s": float(fwd), "backward_s": float(bwd), "memory_bytes": int(mem),
            "backward_peak_bytes": int(peak), "grad": float(grad)}


def time_process(cmd: list[str], repeat: int, cwd=None) -> dict | None:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return summary(times)


# ----------------------------------------------------------------- the runs

W1_SEED_GRAD = [4.5] * 4  # d/dx of ((x+2)*(x+2)*3).mean() at ones(2,2)
W1_EXAMPLE = ["grad", "(x**2 * y.sin()).sum()", "--at", "x=[1,2,3]", "--at", "y=0.5"]
W1_EXAMPLE_GRAD = [0.9589, 1.9177, 2.8766, 12.2862]  # README's example, 4 decimals


def _shows(out: str, values: list[float], tol: float) -> bool:
    """Every one of ``values`` (with multiplicity) is among the numbers ``out`` prints."""
    import re

    nums = [float(m) for m in re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?", out)]
    for v in values:
        hit = next((i for i, n in enumerate(nums) if abs(n - v) <= tol), None)
        if hit is None:
            return False
        nums.pop(hit)
    return True


def time_processes(cmds: dict, repeat: int, checks: dict, cwd=None) -> dict:
    """Whole-process wall times of ``cmds`` (name -> argv), interleaved round by round so
    that a busy machine slows every peer alike, after one untimed warm-up run each.
    Children run without PYTHONDONTWRITEBYTECODE, so the warm-up writes the .pyc files a
    real install has (compiling gradcli's parser tables alone takes ~70 ms).
    ``checks[name](stdout)`` says whether the peer printed the right gradient."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    times = {name: [] for name in cmds}
    rows: dict = {}
    for name, cmd in cmds.items():
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env)
        if proc.returncode != 0:
            rows[name] = {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
        elif name in checks:
            rows[name] = {"grad_ok": bool(checks[name](proc.stdout))}
        else:
            rows[name] = {}
    live = [name for name in cmds if "error" not in rows[name]]
    for _ in range(repeat):
        for name in live:
            t0 = time.perf_counter()
            subprocess.run(cmds[name], capture_output=True, cwd=cwd, env=env)
            times[name].append(time.perf_counter() - t0)
    for name in live:
        rows[name] = {**summary(times[name]), **rows[name]}
    return rows


def bench_w1(args, results):
    """Whole processes: the seed example through `gradcli grad`, `gradcli run`, python with
    torch, python with numpy, plus `import numpy` alone (the start-up floor) and the
    README's `gradcli grad` example."""
    repeat = 3 if args.quick else 15
    tmp = Path(tempfile.mkdtemp())
    (tmp / "w1.grad").write_text(
        "import torch\nx = torch.ones(2, 2, requires_grad=True)\n"
        "out = ((x + 2) * (x + 2) * 3).mean()\nout.backward()\nprint(x.grad)\n")
    (tmp / "w1_numpy.py").write_text(
        "import numpy as np\nx = np.ones((2, 2))\ny = x + 2\nout = (y * y * 3).mean()\n"
        "print(6 * y / x.size)\n")
    gc = gradcli_cmd()
    cmds = {
        "gradcli grad": gc + ["grad", "((x + 2) * (x + 2) * 3).mean()", "--at", "x=ones(2,2)"],
        "gradcli run": gc + ["run", str(tmp / "w1.grad")],
        "numpy": [sys.executable, str(tmp / "w1_numpy.py")],
        "import numpy": [sys.executable, "-c", "import numpy"],
        "grad (README ex.)": gc + W1_EXAMPLE,
    }
    seed = lambda out: _shows(out, W1_SEED_GRAD, 1e-4)  # noqa: E731
    checks = {"gradcli grad": seed, "gradcli run": seed, "numpy": seed, "torch": seed,
              "grad (README ex.)": lambda out: _shows(out, W1_EXAMPLE_GRAD, 1e-4)}
    if have_torch():  # in the same rounds as the others: a slow spell hits every peer
        cmds["torch"] = [sys.executable, str(tmp / "w1.grad")]
    rows = time_processes(cmds, repeat, checks)
    shutil.rmtree(tmp, ignore_errors=True)
    results["W1 start-up (whole process, s)"] = rows


def bench_w2(args, results):
    n = 2000 if args.quick else 10000
    repeat = 3 if args.quick else 7
    import gradcli.torch as G

    peers = {"gradcli": lambda: w2_small_ops(G, n), "numpy": lambda: w2_numpy(n)}
    if have_torch():
        import torch

        peers["torch"] = lambda: w2_small_ops(torch, n)
    ref = w2_numpy(n)[2]
    # round robin after a warm-up, as W3 and W4: a slow spell of the VM (seconds long)
    # hits every peer alike, where each peer's repeats one after another let it fall on one
    for fn in peers.values():
        fn()
    per = {name: [] for name in peers}
    for _ in range(repeat):
        for name, fn in peers.items():
            per[name].append(fn())
    rows = {}
    for name, runs in per.items():
        fw, bw = [r[0] for r in runs], [r[1] for r in runs]
        rows[name] = {"forward": summary(fw, 1e6), "backward": summary(bw, 1e6),
                      "total_us": statistics.median(fw) * 1e6 + statistics.median(bw) * 1e6,
                      "grad_ok": close(runs[-1][2], ref)}
    results["W2 small ops (us per op)"] = rows


def bench_w3(args, results):
    # every peer's sample covers the same runs (the 2,000 of the issue, five times over):
    # a short sample's median dodges the VM's bursts that a long one has to sit through, so
    # 2,000-run numpy samples (80 ms) against 10,000-run `gradcli run` processes (2 s)
    # favoured numpy by the noise alone
    runs = 400 if args.quick else 10000
    repeat = 3 if args.quick else 7
    import gradcli.torch as G

    ref = w3_numpy(10)[1] / 10
    peers = {"gradcli (python)": lambda: w3_engine(G, runs), "numpy": lambda: w3_numpy(runs)}
    if have_torch():
        import torch

        peers["torch"] = lambda: w3_engine(torch, runs)
    # `gradcli run`: each process times its program itself (`--json`'s "seconds": reading,
    # compiling and running the file, gradcli's start-up not), so start-up, which varies by
    # ~0.1 s here, drops out exactly (timing a process minus an empty one left ~10 us a run
    # of that variation in the result)
    tmp = Path(tempfile.mkdtemp())
    (tmp / "w3.grad").write_text(W3_SOURCE.format(n=runs))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    full = gradcli_cmd() + ["run", "--json", str(tmp / "w3.grad")]
    first = subprocess.run(full, capture_output=True, text=True, env=env)  # writes the .pyc
    if first.returncode == 0:
        def run_file():
            proc = subprocess.run(full, capture_output=True, text=True, env=env)
            return json.loads(proc.stdout)["runs"][0]["seconds"] / runs, None

        peers["gradcli run"] = run_file
    # every peer round robin after a warm-up, as W2 and W4 (a slow spell hits all alike)
    for fn in peers.values():
        fn()
    per = {name: [] for name in peers}
    for _ in range(repeat):
        for name, fn in peers.items():
            per[name] += [fn() for _ in range(2 if name == "gradcli run" else 1)]
    rows = {}
    for name, ps in per.items():
        rows[name] = summary([p[0] for p in ps], 1e6)
        if name not in ("numpy", "gradcli run"):
            rows[name]["grad_ok"] = close(ps[-1][1] / runs, ref)
    if first.returncode != 0:
        rows["gradcli run"] = {"error": (first.stderr.strip().splitlines() or ["failed"])[-1]}
    else:
        grad = json.loads(first.stdout)["runs"][0]["tensors"]["x"]["grad"]
        rows["gradcli run"]["grad_ok"] = close(np.asarray(grad) / runs, ref)
    shutil.rmtree(tmp, ignore_errors=True)
    order = ["gradcli (python)", "gradcli run", "numpy", "torch"]
    results["W3 seed loop (us per run)"] = {k: rows[k] for k in order if k in rows}


W7_SOURCE = """\
import torch
import math
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
xx = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.1, -0.2, 0.05]]))
    model[0].bias.fill_(0.3)
loss_fn = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range({n}):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
w = model[0].weight
"""


def w7_model(T):
    """The polynomial fit of "Learning PyTorch with Examples" (nn + optim), built from fixed
    starting weights (so every peer agrees): `run(steps)` trains `steps` more steps and
    returns the seconds a step (the loop alone), `weights()` the weights so far."""
    import math

    x = T.linspace(-math.pi, math.pi, 2000)
    y = T.sin(x)
    xx = x.unsqueeze(-1).pow(T.tensor([1, 2, 3]))
    model = T.nn.Sequential(T.nn.Linear(3, 1), T.nn.Flatten(0, 1))
    with T.no_grad():
        model[0].weight.copy_(T.tensor([[0.1, -0.2, 0.05]]))
        model[0].bias.fill_(0.3)
    loss_fn = T.nn.MSELoss(reduction="sum")
    optimizer = T.optim.SGD(model.parameters(), lr=1e-6)

    def run(steps: int) -> float:
        t0 = time.perf_counter()
        for _ in range(steps):
            y_pred = model(xx)
            loss = loss_fn(y_pred, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return (time.perf_counter() - t0) / steps

    return run, lambda: np.asarray(model[0].weight.tolist()).ravel()


def w7_engine(T, steps: int):
    """W7's model trained `steps` steps in one go: seconds a step and the weights at the end."""
    run, weights = w7_model(T)
    return run(steps), weights()


def bench_w7(args, results):
    """W7: the tutorial's nn.Sequential + MSELoss + SGD loop, in plain Python on
    gradcli.torch, through `gradcli run` and in PyTorch.

    The VM's speed drifts by tens of percent within seconds, so peers that run in this
    process (plain Python, PyTorch) each train one model in many short batches (100 steps),
    taking turns batch by batch; each batch's seconds a step is one sample, and the median
    and the minimum of those are reported (the minimum is the least disturbed batch). The
    weights after all batches are compared. A program times the whole of itself (start-up
    excluded, as W3), including its set-up lines (`import torch` loading nn and optim, the
    model); so `gradcli run`'s step is the difference between the program with `steps`
    steps and the same program with none, over `steps`: it alternates with a PyTorch batch
    of as many steps, many times, and its median and minimum are reported the same way,
    next to those PyTorch batches ("torch (beside run)")."""
    batch, rounds = (100, 4) if args.quick else (100, 40)
    steps, run_rounds = (200, 2) if args.quick else (1000, 9)
    import gradcli.torch as G

    models = {"gradcli (python)": w7_model(G)}
    if have_torch():
        import torch

        models["torch"] = w7_model(torch)
    for run, _ in models.values():  # warm-up (first calls, caches)
        run(5)
    per = {name: [] for name in models}
    for _ in range(rounds):
        for name, (run, _) in models.items():
            per[name].append(run(batch))
    rows = {name: summary(ps, 1e6) for name, ps in per.items()}
    ref = models["torch"][1]() if "torch" in models else None
    if ref is not None:
        rows["gradcli (python)"]["grad_ok"] = close(models["gradcli (python)"][1](), ref, rtol=1e-4)

    tmp = Path(tempfile.mkdtemp())
    (tmp / "w7.grad").write_text(W7_SOURCE.format(n=steps))
    (tmp / "w7_setup.grad").write_text(W7_SOURCE.format(n=0))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    full = gradcli_cmd() + ["run", "--json", str(tmp / "w7.grad")]
    setup_only = gradcli_cmd() + ["run", "--json", str(tmp / "w7_setup.grad")]
    first = subprocess.run(full, capture_output=True, text=True, env=env)
    if first.returncode == 0:
        def program_seconds(cmd):
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            return json.loads(proc.stdout)["runs"][0]["seconds"]

        beside = w7_model(torch)[0] if "torch" in models else None
        if beside is not None:
            beside(5)
        run_per, torch_per = [], []
        for _ in range(run_rounds):
            run_per.append((program_seconds(full) - program_seconds(setup_only)) / steps)
            if beside is not None:
                torch_per.append(beside(steps))
        rows["gradcli run"] = summary(run_per, 1e6)
        if torch_per:
            rows["torch (beside run)"] = summary(torch_per, 1e6)
    else:
        rows["gradcli run"] = {"error": (first.stderr.strip().splitlines() or ["failed"])[-1]}
    shutil.rmtree(tmp, ignore_errors=True)
    order = ["gradcli (python)", "torch", "gradcli run", "torch (beside run)"]
    results["W7 nn+optim polynomial fit (us per step)"] = {k: rows[k] for k in order if k in rows}


W4_WORKLOADS = {"elementwise": (w4_elementwise, w4_elementwise_numpy),
                "matmul": (w4_matmul, w4_matmul_numpy)}


def w4_serve(peer: str, workload: str, n: int) -> None:
    """One W4 peer alone in this process (only its own library imported), taking turns:
    for each line `K` on stdin, one untimed warm-up run and K timed ones, the times printed
    as a JSON line; on `end`, a sample of the last gradient."""
    eng, ref_fn = W4_WORKLOADS[workload]
    if peer == "numpy":
        fn = lambda: ref_fn(n)  # noqa: E731
    else:
        import importlib

        T = importlib.import_module("gradcli.torch" if peer == "gradcli" else "torch")
        if peer == "gradcli":  # malloc tuned as the gradcli command tunes its process
            importlib.import_module("gradcli.engine.memory").tune_malloc()
        fn = lambda: eng(T, n)  # noqa: E731
    grad = None
    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() == "end":
            break
        fn()
        times = []
        for _ in range(int(line)):
            t, grad = fn()
            times.append(t)
        print(json.dumps(times), flush=True)
    g = as_np(grad).ravel()
    print(json.dumps({"sample": g[:256].tolist(), "sum": float(g.sum())}), flush=True)


# Between two peers' turns the machine idles this long: numpy's OpenBLAS workers spin
# ~0.1 s after a product and PyTorch's OpenMP threads a while after a parallel region, and
# spinning threads of one peer would slow the next one's turn.
W4_GAP_SECONDS = 0.25


def _w4_ask(proc, line: str):
    """Sends `line` to a W4 peer's process: (its JSON answer, None), or (None, its error)."""
    try:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        answer = proc.stdout.readline()
    except (BrokenPipeError, OSError):
        answer = ""
    if answer:
        return json.loads(answer), None
    proc.wait(timeout=60)
    return None, (proc.stderr.read().strip().splitlines() or ["failed"])[-1]


def bench_w4(args, results):
    """Each peer runs in a process of its own, as W5/W6 do (in one shared process the
    figures depended on what ran before: malloc's state, threads another peer left
    spinning). The processes stay alive and take short turns (a warm-up run, then two
    timed ones, back to back as in a loop), round robin, with an idle gap between turns:
    this VM's speed drifts by tens of percent for seconds at a time, and turns a few
    tens of milliseconds long put every peer in the same spells. Processes that ran all
    their repeats at once, one peer after another, had gradcli/torch ratios swing
    between 0.90x and 1.07x from one full run to the next."""
    n_el = 300 if args.quick else 1000
    n_mm = 128 if args.quick else 512
    turns, per_turn = (2, 2) if args.quick else (8, 2)
    peers = ["gradcli"] + (["torch"] if have_torch() else []) + ["numpy"]
    for title, workload, n in ((f"W4 elementwise {n_el}x{n_el} (ms)", "elementwise", n_el),
                               (f"W4 matmul {n_mm}x{n_mm} (ms)", "matmul", n_mm)):
        ref = as_np(W4_WORKLOADS[workload][1](n)[1]).ravel()
        procs = {peer: subprocess.Popen([sys.executable, __file__, "--w4-serve", peer, workload,
                                         str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
                 for peer in peers}
        times: dict = {peer: [] for peer in peers}
        rows: dict = {}

        for peer, proc in procs.items():  # every import done before the first turn
            if proc.stdout.readline().strip() != "ready":
                proc.wait()
                rows[peer] = {"error": (proc.stderr.read().strip().splitlines() or ["failed"])[-1]}
        for _ in range(turns):
            for peer in peers:
                if "error" in rows.get(peer, {}):
                    continue
                time.sleep(W4_GAP_SECONDS)
                got, error = _w4_ask(procs[peer], str(per_turn))
                if error:
                    rows[peer] = {"error": error}
                else:
                    times[peer] += got
        for peer in peers:
            if "error" in rows.get(peer, {}):
                procs[peer].kill()
                continue
            out, error = _w4_ask(procs[peer], "end")
            procs[peer].wait(timeout=60)
            if error:
                rows[peer] = {"error": error}
                continue
            if peer != "numpy":
                rows[peer] = {"grad_ok": bool(close(out["sample"], ref[:256]) and abs(
                    out["sum"] - ref.sum()) <= 1e-4 * max(1.0, abs(ref.sum())))}
            rows[peer] = {**summary(times[peer], 1e3), **rows.get(peer, {})}
        results[title] = rows


def _median_round(rounds: list) -> dict | None:
    """The round of median forward+backward time, with the range over all rounds."""
    ok = [r for r in rounds if r and "error" not in r]
    if not ok:
        return rounds[0]
    total = lambda r: r["forward_s"] + r["backward_s"]  # noqa: E731
    ok.sort(key=total)
    row = dict(ok[len(ok) // 2])
    row["time_min_s"], row["time_max_s"], row["rounds"] = total(ok[0]), total(ok[-1]), len(ok)
    return row


def bench_memory(args, results):
    n5 = 100_000 if args.quick else 1_000_000
    n6 = 20 if args.quick else 200
    peers = ["gradcli", "numpy"] + (["torch"] if have_torch() else [])
    # W5 takes seconds per peer: three rounds of one process per peer, the peers taking
    # turns, so that a slow spell of the machine does not land on one peer alone; each
    # peer's row is its round of median time
    rounds = {p: [] for p in peers}
    for _ in range(1 if args.quick else 3):
        for p in peers:
            rounds[p].append(run_probe(p, "W5", n5))
    w5 = {p: _median_round(rs) for p, rs in rounds.items()}
    for r in w5.values():
        if r and "memory_bytes" in r:
            r["bytes_per_node"] = r["memory_bytes"] / n5
    results[f"W5 {n5:,}-op chain"] = w5
    results[f"W6 {n6} sin ops on 1e6 float64 (memory)"] = {p: run_probe(p, "W6", n6) for p in peers}


def bench_w8(args, results):
    """W8 random draws: randn and rand of 10**6 float32 and of 16 elements, gradcli (PyTorch's
    bits) beside PyTorch and numpy's own Generator (PCG64, other numbers: the speed a
    numpy-backed engine could have without PyTorch's bits). Round robin after a warm-up."""
    import gradcli.torch as G

    repeat = 5 if args.quick else 15
    small_reps = 200 if args.quick else 2000
    npg = np.random.Generator(np.random.PCG64(0))
    peers = {"gradcli": G}
    if have_torch():
        import torch

        peers["torch"] = torch
    cases = {}
    for n, reps in ((10**6, 1), (16, small_reps)):
        for kind in ("randn", "rand"):
            row = {}
            for name, T in peers.items():
                fn = getattr(T, kind)
                row[name] = (lambda fn=fn, n=n, reps=reps: [fn(n) for _ in range(reps)])
            np_fn = npg.standard_normal if kind == "randn" else npg.random
            row["numpy"] = (lambda f=np_fn, n=n, reps=reps: [f(n, dtype=np.float32) for _ in range(reps)])
            cases[(kind, n, reps)] = row
    for (kind, n, reps), row in cases.items():
        for fn in row.values():
            fn()
        per = {name: [] for name in row}
        for _ in range(repeat):
            for name, fn in row.items():
                per[name].append(timed(fn, 1)[0] / reps)
        scale, unit = (1e3, "ms") if n > 16 else (1e6, "us")
        results[f"W8 {kind}({n}) float32 ({unit} per call)"] = {
            name: summary(times, scale) for name, times in per.items()}


def fmt_row(name: str, cell) -> str:
    if cell is None:
        return f"  {name:18s} n/a"
    if "error" in cell:
        return f"  {name:18s} error: {cell['error']}"
    if "forward" in cell:
        return (f"  {name:18s} fwd {cell['forward']['median']:8.2f}  bwd {cell['backward']['median']:8.2f}"
                f"  total {cell['total_us']:8.2f}  grad_ok={cell['grad_ok']}")
    if "memory_bytes" in cell:
        extra = f"  per node {cell['bytes_per_node']:.0f} B" if "bytes_per_node" in cell else ""
        if cell.get("rounds", 1) > 1:
            extra += (f"  (fwd+bwd {cell['time_min_s']:.2f}-{cell['time_max_s']:.2f}s"
                      f" over {cell['rounds']} rounds)")
        return (f"  {name:18s} fwd {cell['forward_s']:.3f}s bwd {cell['backward_s']:.3f}s "
                f"mem {cell['memory_bytes'] / 1e6:8.1f} MB  bwd-peak {cell['backward_peak_bytes'] / 1e6:8.1f} MB{extra}")
    ok = f"  grad_ok={cell['grad_ok']}" if "grad_ok" in cell else ""
    return f"  {name:18s} {cell['median']:10.3f}  ({cell['min']:.3f}-{cell['max']:.3f}){ok}"


def ratio(results: dict, title: str, a: str, b: str, key=lambda c: c["median"]) -> str:
    rows = results.get(title, {})
    try:
        return f"{key(rows[a]) / key(rows[b]):.2f}x"
    except (KeyError, TypeError, ZeroDivisionError):
        return "n/a"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("-k", default="")
    ap.add_argument("--w4-serve", nargs=3, metavar=("PEER", "WORKLOAD", "N"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.w4_serve:
        peer, workload, n = args.w4_serve
        w4_serve(peer, workload, int(n))
        return 0
    results: dict = {}
    for wid, fn in (("W1", bench_w1), ("W2", bench_w2), ("W3", bench_w3), ("W4", bench_w4),
                    ("W5W6", bench_memory), ("W7", bench_w7), ("W8", bench_w8)):
        if args.k in wid:
            fn(args, results)
    for title, rows in results.items():
        print(title)
        for name, cell in rows.items():
            print(fmt_row(name, cell))
    print("\nRatios")
    for title, rows in results.items():
        if title.startswith("W2"):
            tot = lambda c: c["total_us"]  # noqa: E731
            print(f"  {title}: gradcli/torch {ratio(results, title, 'gradcli', 'torch', tot)}, "
                  f"gradcli/numpy {ratio(results, title, 'gradcli', 'numpy', tot)}")
        elif title.startswith("W1"):
            print(f"  {title}: grad/torch {ratio(results, title, 'gradcli grad', 'torch')}, "
                  f"grad/import-numpy {ratio(results, title, 'gradcli grad', 'import numpy')}, "
                  f"run/import-numpy {ratio(results, title, 'gradcli run', 'import numpy')}, "
                  f"README example/import-numpy "
                  f"{ratio(results, title, 'grad (README ex.)', 'import numpy')}")
        elif title.startswith("W3"):
            print(f"  {title}: run/torch {ratio(results, title, 'gradcli run', 'torch')}, "
                  f"run/numpy {ratio(results, title, 'gradcli run', 'numpy')}, "
                  f"run/python {ratio(results, title, 'gradcli run', 'gradcli (python)')}, "
                  f"python/torch {ratio(results, title, 'gradcli (python)', 'torch')}")
        elif title.startswith("W7"):
            low = lambda c: c["min"]  # noqa: E731
            print(f"  {title}: python/torch {ratio(results, title, 'gradcli (python)', 'torch')} "
                  f"(minimum {ratio(results, title, 'gradcli (python)', 'torch', low)}), "
                  f"run/torch {ratio(results, title, 'gradcli run', 'torch (beside run)')} "
                  f"(minimum {ratio(results, title, 'gradcli run', 'torch (beside run)', low)})")
        elif title.startswith("W4"):
            print(f"  {title}: gradcli/torch {ratio(results, title, 'gradcli', 'torch')}, "
                  f"gradcli/numpy {ratio(results, title, 'gradcli', 'numpy')}")
        elif title.startswith("W8"):
            print(f"  {title}: gradcli/torch {ratio(results, title, 'gradcli', 'torch')}, "
                  f"gradcli/numpy {ratio(results, title, 'gradcli', 'numpy')}")
        elif title.startswith("W5"):
            t = lambda c: c["forward_s"] + c["backward_s"]  # noqa: E731
            per = lambda c: c["bytes_per_node"]  # noqa: E731
            print(f"  {title}: time gradcli/torch {ratio(results, title, 'gradcli', 'torch', t)}, "
                  f"bytes/node gradcli/torch {ratio(results, title, 'gradcli', 'torch', per)}")
        elif title.startswith("W6"):
            rows = results[title]
            g = rows.get("gradcli") or {}
            if "backward_peak_bytes" in g:
                extra = (g["backward_peak_bytes"] - g["memory_bytes"]) / 1e6
                print(f"  {title}: gradcli backward peak - end-of-forward = {extra:.1f} MB "
                      f"(target <= 16 MB); end-of-forward gradcli/numpy "
                      f"{ratio(results, title, 'gradcli', 'numpy', lambda c: c['memory_bytes'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
