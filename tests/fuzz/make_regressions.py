#!/usr/bin/env python3
"""Turn differential-fuzzing mismatches into regression cases.

    python tests/fuzz/run_fuzz.py --diff 3000 --save-mismatches m.json
    python tests/fuzz/make_regressions.py m.json [--reason-file reasons.txt]

For each (op, scenario) key, the shortest failing program becomes
``tests/regressions/diff_<op>_<scenario>.grad`` and its ``.out`` is the stdout
of ``python FILE`` under real PyTorch 2.13 (the program is plain Python).
Existing cases are left alone; new keys are listed so that their reason can be
added to tests/regressions/XFAIL.txt (``name: engine: ...``) until fixed.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE.parent / "regressions"


def golden(path: Path) -> str:
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=120, cwd=str(path.parent))
    if proc.returncode:
        raise SystemExit(f"{path.name}: real torch exited {proc.returncode}: {proc.stderr}")
    return proc.stdout


def main(argv):
    data = json.loads(Path(argv[0]).read_text())
    for key, cases in sorted(data.items()):
        op, scenario = key.split("|")
        name = f"diff_{op}_{scenario}"
        grad = OUT_DIR / f"{name}.grad"
        if grad.exists():
            continue
        src = min((c[0] for c in cases), key=len)
        grad.write_text(src)
        grad.with_suffix(".out").write_text(golden(grad))
        print("new:", name)


if __name__ == "__main__":
    main(sys.argv[1:])
