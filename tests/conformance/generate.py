#!/usr/bin/env python3
"""Regenerate the golden outputs of the conformance corpus from real PyTorch.

Every ``cases/NAME.grad`` is a program that is also valid Python; its
``cases/NAME.out`` is exactly the stdout of ``python NAME.grad`` with
PyTorch 2.13 (CPU). This script runs each case with ``sys.executable`` in a
subprocess and writes (or, with ``--check``, compares) the ``.out`` files.

    python tests/conformance/generate.py             # rewrite every .out
    python tests/conformance/generate.py --check     # report stale/missing .out, exit 1 if any
    python tests/conformance/generate.py -k reduce_  # only cases whose name contains reduce_

A full run that finds every golden fresh (or writes them) records a hash of the cases, the
goldens and the PyTorch version in ``FRESH.sha256`` beside this file (commit it):
``tests/test_conformance.py`` re-runs the cases under PyTorch only when that hash no longer
matches, since running ~130 programs under PyTorch is most of the suite's time otherwise.
Cases run with PyTorch's and MKL's AVX2 kernels (``ATEN_CPU_CAPABILITY=avx2``,
``MKL_ENABLE_INSTRUCTIONS=AVX2`` unless set), the ones gradcli reproduces, so the goldens
are the same on every x86-64 CPU (MKL's AVX-512 log gives ``log(float32(e))`` as 1.0000001).

It refuses to run (exit 2) unless ``import torch`` in ``sys.executable``
gives the real PyTorch 2.13, since the goldens are that version's output.
A case that exits non-zero is an error in the corpus (exit 1): every case
must run to completion under real PyTorch.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
TORCH_VERSION = "2.13"
TIMEOUT = 120
ADDR = re.compile(r"0x[0-9a-fA-F]+")
STAMP = HERE / "FRESH.sha256"

_PROBE = (
    "import torch, sys\n"
    "real = hasattr(torch, '_C') and 'gradcli' not in (getattr(torch, '__file__', '') or '')\n"
    "sys.stdout.write(str(getattr(torch, '__version__', '?')) + ('' if real else ' (not real torch)'))\n"
)


def normalise(text: str) -> str:
    """Object addresses vary from run to run; trailing newlines don't matter."""
    return ADDR.sub("0x?", text).rstrip("\n")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONIOENCODING"] = "utf-8"
    env.setdefault("ATEN_CPU_CAPABILITY", "avx2")
    env.setdefault("MKL_ENABLE_INSTRUCTIONS", "AVX2")
    return env


def corpus_hash(cases_dir: Path = CASES) -> str:
    """A hash of every case, every golden and the installed PyTorch's version: when it is
    the one in STAMP, the goldens were last found fresh against exactly these inputs."""
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = "none"
    digest = hashlib.sha256(f"torch {torch_version}\n".encode())
    for path in sorted(cases_dir.glob("*.grad")) + sorted(cases_dir.glob("*.out")):
        digest.update(f"{path.name} {len(path.read_bytes())}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def stamp_is_current() -> bool:
    return STAMP.is_file() and STAMP.read_text(encoding="ascii").strip() == corpus_hash()


def torch_problem() -> str | None:
    """None if ``import torch`` in sys.executable is real PyTorch 2.13, else why not."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE], capture_output=True, text=True,
            timeout=TIMEOUT, env=_env(), cwd=str(HERE),
        )
    except subprocess.TimeoutExpired:
        return "`import torch` timed out"
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1:] or ["no error text"]
        return f"`import torch` failed in {sys.executable}: {last[0]}"
    version = proc.stdout.strip()
    if "not real torch" in version:
        return f"`import torch` in {sys.executable} is not PyTorch ({version})"
    if version.split("+")[0].split(".")[:2] != TORCH_VERSION.split("."):
        return f"`import torch` gives PyTorch {version}, the goldens need {TORCH_VERSION}.x"
    return None


def run_case(case: Path) -> tuple[str, str, int | None]:
    """(stdout, stderr, exit code) of `python case` under real torch; exit None on timeout."""
    try:
        proc = subprocess.run(
            [sys.executable, str(case)], capture_output=True, text=True,
            timeout=TIMEOUT, env=_env(), cwd=str(case.parent),
        )
    except subprocess.TimeoutExpired:
        return "", f"timed out after {TIMEOUT} s", None
    return proc.stdout, proc.stderr, proc.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing; report cases whose .out is missing or stale")
    ap.add_argument("-k", default="", help="only cases whose file name contains this")
    ap.add_argument("--cases", default=str(CASES), help="folder of NAME.grad files")
    ap.add_argument("-j", "--jobs", type=int, default=max(2, os.cpu_count() or 2))
    args = ap.parse_args(argv)

    problem = torch_problem()
    if problem:
        print(f"generate.py: refusing to run: {problem}", file=sys.stderr)
        return 2

    cases = sorted(p for p in Path(args.cases).glob("*.grad") if args.k in p.name)
    if not cases:
        print(f"generate.py: no .grad cases in {args.cases} matching {args.k!r}", file=sys.stderr)
        return 2

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(run_case, cases))

    errors, stale, written = [], [], 0
    for case, (out, err, rc) in zip(cases, results, strict=True):
        golden = case.with_suffix(".out")
        if rc != 0:
            tail = "\n    ".join(err.strip().splitlines()[-6:])
            errors.append(f"{case.name}: exit {rc} under real torch\n    {tail}")
            continue
        if args.check:
            if not golden.exists():
                stale.append(f"{case.name}: {golden.name} is missing")
            elif normalise(golden.read_text(encoding="utf-8")) != normalise(out):
                stale.append(f"{case.name}: {golden.name} is stale")
        elif not golden.exists() or golden.read_text(encoding="utf-8") != out:
            golden.write_text(out, encoding="utf-8")
            written += 1

    if args.check and not args.k:
        stale += [f"{orphan.name}: has no {orphan.stem}.grad"
                  for orphan in sorted(Path(args.cases).glob("*.out"))
                  if not orphan.with_suffix(".grad").exists()]
    for line in errors + stale:
        print(line)
    if args.check:
        print(f"{len(cases)} cases checked, {len(stale)} stale, {len(errors)} errors")
    else:
        print(f"{len(cases)} cases run, {written} .out written, {len(errors)} errors")
    failed = bool(errors or stale)
    if not failed and not args.k and Path(args.cases).resolve() == CASES:
        STAMP.write_text(corpus_hash() + "\n", encoding="ascii")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
