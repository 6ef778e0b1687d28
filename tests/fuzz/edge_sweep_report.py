#!/usr/bin/env python3
"""List the edge sweep's differences from PyTorch 2.13, all of them (known ones too).

    python tests/fuzz/edge_sweep_report.py [--json m.json] [OP ...]

Runs tests/test_edge_sweep.py's programs (every op of the table, or the named ones) and
prints each differing (op, scenario) pair with the shapes that differ, grouped by op
family; --json writes them as tests/fuzz/make_regressions.py reads them (the known
ones' regression cases exist already and are left alone).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import difflib_torch as D  # noqa: E402
import test_edge_sweep as T  # noqa: E402

FAMILIES = [("kthvalue", "sorting"), ("median", "sorting"), ("mode", "sorting"),
            ("topk", "sorting"), ("cummax", "sorting"), ("cummin", "sorting"),
            ("sort", "sorting"), ("unique", "sorting"), ("logcumsumexp", "sorting"),
            ("pool", "pooling"), ("upsample", "interpolation"), ("linear_map", "interpolation"),
            ("grid_sampler", "interpolation"), ("pad", "padding"), ("im2col", "padding"),
            ("col2im", "padding"), ("linalg", "linalg"), ("lu_", "linalg"),
            ("cholesky", "linalg"), ("triangular", "linalg"), ("special", "special"),
            ("gamma", "special"), ("erf", "special"), ("sinc", "special"), ("i0", "special"),
            ("scatter", "indexing"), ("index", "indexing"), ("gather", "indexing"),
            ("embedding", "indexing"), ("loss", "losses"), ("ctc", "losses"),
            ("norm", "norms"), ("_mean", "norms"), ("dist", "distances"),
            ("_backward", "activations"), ("lu", "activations"), ("gelu", "activations"),
            ("swish", "activations")]


def family(op: str) -> str:
    return next((f for key, f in FAMILIES if key in op), "other")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("ops", nargs="*")
    args = ap.parse_args(argv)
    diffs = defaultdict(list)
    for op, kind, src, ours, theirs in T.sweep(args.ops or T.NAMES):
        if D.compare(ours, theirs, signed_zeros=True) == "differ":
            diffs[f"{op}|edge_{kind}"].append([src, ours, theirs])
    by_family = defaultdict(list)
    for key, cases in sorted(diffs.items()):
        by_family[family(key.split("|")[0])].append((key, len(cases)))
    for fam, keys in sorted(by_family.items()):
        print(f"{fam}: {len(keys)} pairs, {sum(n for _, n in keys)} programs")
        for key, n in keys:
            print(f"    {key} ({n} of 3 shapes)")
    ops = {k.split("|")[0] for k in diffs}
    print(f"total: {len(diffs)} (op, scenario) pairs, {sum(map(len, diffs.values()))} "
          f"programs, {len(ops)} ops")
    if args.json:
        Path(args.json).write_text(json.dumps(diffs, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
