#!/usr/bin/env python3
"""The long run of the nn/optim differential fuzzer (tests/fuzz/nn_fuzz.py).

    python tests/fuzz/nn_fuzz_run.py --programs 300 --start 0 --save m.json
    python tests/fuzz/nn_fuzz_run.py --errors 300 --save e.json

Each program runs with real torch, gradcli's facade as plain Python and the gradcli
language; prints how many were the same, close (float32 last-digit printing drift only)
and different, with the first differing line of each difference, grouped. Exit 1 if any
program differs.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import difflib_torch as D  # noqa: E402
import nn_fuzz as NF  # noqa: E402


def first_diff(ours: str, theirs: str) -> str:
    a, b = D.normalise(ours).splitlines(), D.normalise(theirs).splitlines()
    for x, y in zip(a, b):
        if D.compare(x, y) == "differ":
            return f"ours {x[:100]!r} | torch {y[:100]!r}"
    return f"lengths {len(a)} vs {len(b)}: ours {a[len(b):][:1]} torch {b[len(a):][:1]}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=0)
    ap.add_argument("--errors", type=int, default=0)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--save", default=None)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    counts, groups, saved = collections.Counter(), collections.defaultdict(list), []
    t0 = time.time()
    for seed in range(args.start, args.start + args.programs):
        src = NF.program(NF.RandomChooser(seed))
        verdict, outs = NF.compare3(src)
        counts[verdict] += 1
        if verdict == "differ":
            which = "facade" if outs["facade_verdict"] == "differ" else "language"
            key = re.sub(r"\d+", "#", first_diff(outs[which], outs["torch"]))
            groups[key].append(seed)
            saved.append({"seed": seed, "source": src, **outs})
    for seed in range(args.start, args.start + args.errors):
        name, src = NF.error_program(NF.RandomChooser(seed))
        expected = NF.torch_error(src)
        code, err = NF.language_error(src)
        problems = NF.check_error_report(src, expected, code, err)
        counts["error-ok" if not problems else "error-bad"] += 1
        if problems:
            groups[re.sub(r"\d+", "#", f"[{name}] {problems[0][:160]}")].append(seed)
            saved.append({"seed": seed, "case": name, "source": src, "problems": problems,
                          "stderr": err})
    print(f"{sum(counts.values())} programs in {time.time() - t0:.0f}s: {dict(counts)}")
    for key, seeds in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(seeds):4d}  {key}  seeds {seeds[:6]}")
    if args.save:
        Path(args.save).write_text(json.dumps(saved, indent=1))
    return 1 if counts["differ"] or counts["error-bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
