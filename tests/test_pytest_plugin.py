"""The pytest plugin (``pytest11`` entry point ``gradcli``), driven with pytester.

The plugin is loaded through its entry point in the inner sessions too (it
is installed), exactly as in a user's project.
"""
from __future__ import annotations

import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ci"
HUGE_STEPS = "1000000000000"


def copy(pytester, name, as_name=None):
    src = FIXTURES / name
    dst = pytester.path / (as_name or name)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    out = src.with_suffix(".out")
    if out.exists():
        shutil.copy(out, dst.with_suffix(".out"))
    return dst


def run(pytester, *args):
    return pytester.runpytest("-p", "no:cacheprovider", *args)


def test_pass_and_fail_outcomes(pytester):
    copy(pytester, "test_gradient.grad")
    copy(pytester, "fails_assert.grad", "test_assert.grad")
    copy(pytester, "fails_syntax.grad", "test_syntax.grad")
    copy(pytester, "fails_runtime.grad", "test_runtime.grad")
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=3)


def test_failure_shows_script_line_not_internals(pytester):
    copy(pytester, "fails_assert.grad", "test_assert.grad")
    copy(pytester, "fails_runtime.grad", "sub/test_runtime.grad")
    result = run(pytester)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*_ test_assert _*",
        "test_assert.grad:5:1: AssertionError: gradient sum should be 5",
        '    5 | assert x.grad.sum().item() == 5, "gradient sum should be 5"',
        "      | ^^^^^^^^^^*",
        "*Captured stdout call*",
        "grad is tensor([2., 2.])",
    ])
    result.stdout.fnmatch_lines([
        "sub/test_runtime.grad:2:5: RuntimeError: grad can be implicitly created only for "
        "scalar outputs",
        "    2 |     t.backward()",
        "call chain (most recent call last):",
        "  sub/test_runtime.grad:5 in <module>",
    ])
    result.stdout.fnmatch_lines([
        "FAILED test_assert.grad::test_assert - line 5: AssertionError: gradient sum*",
    ])
    text = result.stdout.str()
    assert "Traceback" not in text
    assert "gradcli/cli" not in text and "GradTestFailed" not in text
    assert "not reached" not in text


def test_syntax_error_report(pytester):
    copy(pytester, "fails_syntax.grad", "test_syntax.grad")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["test_syntax.grad:2:5: SyntaxError: *",
                                 "    2 | y = (x +"])
    assert "Traceback" not in result.stdout.str()


def test_golden_out_match_and_mismatch(pytester):
    copy(pytester, "test_golden.grad")
    copy(pytester, "fails_golden.grad", "test_mismatch.grad")
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "test_golden.grad::test_golden PASSED*",
        "test_mismatch.grad::test_mismatch FAILED*",
    ])
    result.stdout.fnmatch_lines([
        "test_mismatch.grad: OutputMismatch: stdout differs from test_mismatch.out",
        "--- test_mismatch.out (expected)",
        "+++ test_mismatch.grad (stdout)",
        "@@ *",
        "-tensor(5., grad_fn=<SumBackward0>)",
        "+tensor(6., grad_fn=<SumBackward0>)",
        " second line",
    ])


def test_non_matching_names_are_not_collected(pytester):
    copy(pytester, "test_gradient.grad")
    copy(pytester, "fails_assert.grad")            # fails_*.grad: a project's failing fixture
    copy(pytester, "fails_syntax.grad", "helper.grad")
    copy(pytester, "test_gradient.grad", "test_gradient.txt")
    result = run(pytester, "--collect-only", "-q")
    result.stdout.fnmatch_lines(["test_gradient.grad::test_gradient", "1 test collected*"])
    text = result.stdout.str()
    assert "fails_assert" not in text and "helper" not in text and ".txt" not in text


def test_a_file_named_on_the_command_line_is_collected_whatever_its_name(pytester):
    """As gradcli test runs a file it is given (and pytest a .py file it is given)."""
    copy(pytester, "fails_syntax.grad", "helper.grad")
    copy(pytester, "test_gradient.grad")
    run(pytester, "helper.grad").assert_outcomes(failed=1)
    result = run(pytester, "--collect-only", "-q")  # searching the folder: not collected
    result.stdout.fnmatch_lines(["test_gradient.grad::test_gradient", "1 test collected*"])
    assert "helper" not in result.stdout.str()


def test_no_grad_files_no_items(pytester):
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    result = run(pytester)
    result.assert_outcomes(passed=1)


def test_grad_files_ini_option(pytester):
    pytester.makeini("[pytest]\ngrad_files = check_*.grad *_spec.grad\n")
    copy(pytester, "test_gradient.grad", "check_gradient.grad")
    copy(pytester, "test_gradient.grad", "grads_spec.grad")
    copy(pytester, "fails_assert.grad", "test_assert.grad")  # no longer matches
    result = run(pytester, "--collect-only", "-q")
    result.stdout.fnmatch_lines(["check_gradient.grad::check_gradient",
                                 "grads_spec.grad::grads_spec", "2 tests collected*"])
    assert "test_assert" not in result.stdout.str()
    run(pytester).assert_outcomes(passed=2)


def test_grad_files_pattern_with_directory(pytester):
    pytester.makeini("[pytest]\ngrad_files = scripts/*.grad\n")
    copy(pytester, "test_gradient.grad", "scripts/gradient.grad")
    copy(pytester, "test_gradient.grad", "other/gradient.grad")
    result = run(pytester, "--collect-only", "-q")
    result.stdout.fnmatch_lines(["scripts/gradient.grad::gradient", "1 test collected*"])


def test_ini_guards(pytester):
    pytester.makeini("[pytest]\ngrad_max_steps = 100\n")
    pytester.path.joinpath("test_loop.grad").write_text("for i in range(1000):\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["test_loop.grad:*: LimitError: *"])


def test_ini_timeout(pytester):
    pytester.makeini(f"[pytest]\ngrad_timeout = 1\ngrad_max_steps = {HUGE_STEPS}\n")
    copy(pytester, "slow_loop.grad", "test_slow.grad")
    copy(pytester, "test_gradient.grad")
    t0 = time.monotonic()
    result = run(pytester)
    assert time.monotonic() - t0 < 20
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["test_slow.grad:*: Timeout: timed out after 1 s (wall clock; raise it with "
                                 "--grad-timeout or the grad_timeout ini option)"])


def test_bad_ini_value_is_a_usage_error(pytester):
    pytester.makeini("[pytest]\ngrad_timeout = soon\n")
    copy(pytester, "test_gradient.grad")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*grad_timeout must be a number of seconds*"])


def test_seed_ini(pytester):
    from gradcli.cli.testing import run_grad_test
    pytester.path.joinpath("test_rand.grad").write_text("print(randn(2))\n")
    outs = []
    for seed in (5, 6):
        pytester.makeini(f"[pytest]\ngrad_seed = {seed}\n")
        result = run(pytester, "-rP")
        result.assert_outcomes(passed=1)
        printed = [line for line in result.stdout.lines if line.startswith("tensor(")]
        direct = run_grad_test("test_rand.grad", seed=seed, cwd=pytester.path)
        assert printed == direct.stdout.splitlines() and printed
        outs.append(printed)
    assert outs[0] != outs[1]


def test_reportinfo_gives_script_and_failing_line(pytester):
    pytester.makeconftest("""
        import pytest

        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_makereport(item, call):
            rep = yield
            if call.when == "call":
                path, line, domain = item.reportinfo()
                rep.user_properties.append(("info", (str(path), line, domain)))
            return rep

        def pytest_runtest_logreport(report):
            if report.when == "call":
                print("INFO", dict(report.user_properties)["info"])
    """)
    copy(pytester, "fails_assert.grad", "test_assert.grad")
    copy(pytester, "test_gradient.grad")
    result = run(pytester, "-s")
    result.assert_outcomes(passed=1, failed=1)
    script = pytester.path / "test_assert.grad"
    result.stdout.fnmatch_lines([f"*INFO ('{script}', 4, 'test_assert')*"])
    result.stdout.fnmatch_lines([f"*INFO ('{pytester.path / 'test_gradient.grad'}', 0, "
                                 "'test_gradient')*"])


def test_marker_and_keyword_selection(pytester):
    copy(pytester, "test_gradient.grad")
    copy(pytester, "test_golden.grad")
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    run(pytester, "-m", "grad").assert_outcomes(passed=2, deselected=1)
    run(pytester, "-k", "golden").assert_outcomes(passed=1, deselected=2)


def test_junitxml_of_pytest(pytester):
    copy(pytester, "fails_assert.grad", "test_assert.grad")
    copy(pytester, "test_gradient.grad")
    result = run(pytester, "--junitxml=report.xml")
    result.assert_outcomes(passed=1, failed=1)
    root = ET.parse(pytester.path / "report.xml").getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"test_assert", "test_gradient"}
    failure = cases["test_assert"].find("failure")
    assert "AssertionError: gradient sum should be 5" in failure.get("message")
    assert "    5 | assert" in failure.text


def test_in_a_real_subprocess(pytester):
    """The entry point loads the plugin in a fresh interpreter too."""
    copy(pytester, "test_gradient.grad")
    copy(pytester, "fails_assert.grad", "test_assert.grad")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    assert "Traceback" not in result.stdout.str()


# ------------------------------------------------- flags, guard wording, summary
def test_guard_message_names_the_pytest_option(pytester):
    pytester.makeini("[pytest]\ngrad_max_steps = 100\n")
    pytester.path.joinpath("test_loop.grad").write_text("for i in range(1000):\n    pass\n")
    result = run(pytester)
    result.stdout.fnmatch_lines(["*step limit exceeded*(raise it with --grad-max-steps or "
                                 "the grad_max_steps ini option)"])
    assert "GRADCLI_MAX_STEPS" not in result.stdout.str()


def test_command_line_flags_override_the_ini_file(pytester):
    pytester.makeini("[pytest]\ngrad_max_steps = 100\n")
    pytester.path.joinpath("test_loop.grad").write_text("for i in range(1000):\n    pass\n")
    run(pytester, "--grad-max-steps", "100000").assert_outcomes(passed=1)
    run(pytester, "--grad-max-steps", "10").assert_outcomes(failed=1)
    copy(pytester, "slow_loop.grad", "test_slow.grad")
    result = run(pytester, "--grad-timeout", "1", "--grad-max-steps", HUGE_STEPS)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["test_slow.grad:*: Timeout: timed out after 1 s (wall clock; raise it with "
                                 "--grad-timeout or the grad_timeout ini option)"])
    bad = run(pytester, "--grad-seed", "x")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR


def test_flags_are_listed_in_pytest_help(pytester):
    result = run(pytester, "--help")
    for flag in ("--grad-timeout", "--grad-seed", "--grad-max-steps", "--grad-max-elements",
                 "--grad-max-depth", "--grad-max-length"):
        result.stdout.fnmatch_lines([f"*{flag}*"])


def test_short_summary_is_the_failure_without_the_file_name_again(pytester):
    pytester.path.joinpath("test_g.grad").write_text(
        "import torch\nx = torch.ones(2, requires_grad=True)\nx.sum().backward()\n"
        "assert x.grad[1] == 13\n")
    result = run(pytester, "-rf")
    result.stdout.fnmatch_lines(
        ["FAILED test_g.grad::test_g - line 4: AssertionError: assert tensor(1.) == 13"])


def test_the_report_and_short_summary_read_the_same_under_xdist(pytester):
    """With -n the failure travels from a worker to the controller: it must keep gradcli's
    report and the one-line short summary (not the report's first line, file name again)."""
    pytest.importorskip("xdist")
    pytester.path.joinpath("test_g.grad").write_text(
        "import torch\nx = torch.ones(2, requires_grad=True)\nx.sum().backward()\n"
        "assert x.grad[1] == 13\n")
    copy(pytester, "test_gradient.grad")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "test_g.grad:4:1: AssertionError: assert tensor(1.) == 13",
        "    4 | assert x.grad[1] == 13",
        "  where x.grad[1] = tensor(1.)",
        "FAILED test_g.grad::test_g - line 4: AssertionError: assert tensor(1.) == 13"])
    assert "Traceback" not in result.stdout.str()
