#!/usr/bin/env python3
"""The long fuzz run: the regular suite's strategies with large example counts.

    python tests/fuzz/run_fuzz.py                      # every fuzzer, default counts
    python tests/fuzz/run_fuzz.py --examples 20000     # per language fuzzer
    python tests/fuzz/run_fuzz.py --only grammar,diff --diff 5000 --save-mismatches m.json
    python tests/fuzz/make_regressions.py m.json       # new mismatches -> regression cases

Language fuzzers (random text, random bytes, grammar-generated, mutated
conformance programs, deep nesting, REPL sequences) check every input ends with
exit 0/1/2 and a gradcli report, never a traceback or internal error. The
differential fuzzers (random and edge-valued programs over the op table) compare
gradcli with real PyTorch 2.13; a mismatch whose (op, scenario) is listed in
tests/regressions/XFAIL.txt is a known engine bug, others are new. Prints how
many inputs each fuzzer ran and what it found; exit 1 if anything new was found.
"""
from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import fuzzlib as FZ  # noqa: E402

from gradcli.lang.session import run_file  # noqa: E402


def _settings(n):
    return settings(max_examples=n, deadline=None, database=None, derandomize=False,
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False)


def lang_fuzzer(strategy, runner):
    def run(n):
        count, failures = [0], []

        @_settings(n)
        @given(strategy)
        def body(x):
            count[0] += 1
            bad = runner(x)
            if bad:
                failures.append(bad)

        body()
        return count[0], failures
    return run


def _source(src):
    out = FZ.check_source(src)
    bad = FZ.problems(out)
    return (bad, src[:500], out.report[:500]) if bad else None


_TMP = Path(tempfile.mkdtemp(prefix="gradcli-fuzz-"))


def _bytes(data):
    path = _TMP / "fuzz.grad"
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    code = run_file(str(path), limits=FZ.FUZZ_LIMITS, stdout=out, stderr=err)
    o = FZ.Outcome(code, out.getvalue(), err.getvalue())
    bad = FZ.problems(o)
    return (bad, repr(data[:200]), o.report[:500]) if bad else None


def _repl(inputs):
    from gradcli.cli.repl_core import Repl
    repl = Repl(seed=0, limits=FZ.FUZZ_LIMITS)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        for text in inputs:
            repl.handle(text)
        repl.handle("print(20 + 22)")
    if "internal error" in err.getvalue() or not out.getvalue().rstrip().endswith("42"):
        return (["repl broke"], repr(inputs)[:500], err.getvalue()[-500:])
    return None


def diff_fuzzer(edge):
    def run(n):
        import difflib_torch as D
        from test_fuzz_diff import known
        count, new, known_n, found = [0], [], [0], {}

        @_settings(n)
        @given(D.programs(edge_bias=edge))
        def body(prog):
            name, scenario, src = prog
            count[0] += 1
            ours, theirs = D.run_gradcli(src), D.run_torch(src)
            if D.compare(ours, theirs) != "differ":
                return
            found.setdefault(f"{name}|{scenario}", []).append((src, ours, theirs))
            if known(name, scenario, ours, theirs):
                known_n[0] += 1
            else:
                new.append((name, scenario))

        body()
        run.found = found
        return count[0], new, known_n[0]
    return run


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=3000, help="per language fuzzer")
    ap.add_argument("--diff", type=int, default=3000, help="per differential fuzzer")
    ap.add_argument("--only", default="", help="comma-separated fuzzer names")
    ap.add_argument("--save-mismatches", metavar="FILE",
                    help="JSON of differential mismatches for make_regressions.py")
    args = ap.parse_args(argv)
    lang = {
        "text": (FZ.random_text, _source),
        "bytes": (FZ.random_bytes, _bytes),
        "grammar": (FZ.grammar_programs(), _source),
        "mutated": (FZ.mutated_programs(), _source),
        "nesting": (FZ.deep_nesting(), _source),
        "repl": (st.lists(st.one_of(FZ.random_text, FZ.grammar_programs(),
                                    FZ.mutated_programs()), min_size=1, max_size=4), _repl),
    }
    only = set(filter(None, args.only.split(",")))
    total_bad = 0
    mismatches = {}
    for name, (strategy, runner) in lang.items():
        if only and name not in only:
            continue
        n = args.examples if name not in ("repl", "nesting") else max(args.examples // 5, 10)
        t = time.monotonic()
        ran, failures = lang_fuzzer(strategy, runner)(n)
        total_bad += len(failures)
        print(f"{name:10s} {ran:7d} inputs  {len(failures)} failing  "
              f"({time.monotonic() - t:.0f} s)", flush=True)
        for bad, src, report in failures[:3]:
            print(f"    {bad}\n    source: {src!r}\n    report: {report!r}")
    for name, edge in (("diff", False), ("diff-edge", True)):
        if only and name not in only:
            continue
        t = time.monotonic()
        fuzzer = diff_fuzzer(edge)
        ran, new, known_n = fuzzer(args.diff)
        for k, v in fuzzer.found.items():
            mismatches.setdefault(k, []).extend(v)
        total_bad += len(new)
        print(f"{name:10s} {ran:7d} programs {known_n} known engine mismatches, "
              f"{len(new)} new {sorted(set(new))[:10]}  ({time.monotonic() - t:.0f} s)",
              flush=True)
    if args.save_mismatches:
        Path(args.save_mismatches).write_text(json.dumps(mismatches))
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
