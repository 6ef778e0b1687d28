"""``gradcli test`` as a CI engineer uses it: failed asserts that show their values,
workers, quiet output, goldens, JSON and JUnit reports, GitHub annotations, colour,
and the collection rule shared with the pytest plugin. Real processes throughout."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def gradcli(*args, cwd, env=None, stdin=None):
    e = {k: v for k, v in os.environ.items()
         if k not in ("NO_COLOR", "FORCE_COLOR", "GITHUB_ACTIONS", "GITHUB_WORKSPACE")}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "gradcli", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120, env=e)


GRAD_WRONG = """import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
(x ** 2).sum().backward()
assert x.grad[1] == 13
"""


def write(d, files: dict):
    for name, text in files.items():
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


# ------------------------------------------------------------ introspection
def test_failed_comparison_shows_both_operands_and_where_they_came_from(tmp_path):
    write(tmp_path, {"test_g.grad": GRAD_WRONG})
    r = gradcli("test", ".", cwd=tmp_path)
    assert r.returncode == 1
    assert "test_g.grad:4:1: AssertionError: assert tensor(4.) == 13" in r.stdout
    assert "  where x.grad[1] = tensor(4.)" in r.stdout
    # the one-line summary has the values too, with no stray colon or double space
    assert "AssertionError: assert tensor(4.) == 13 (line 4)" in r.stdout
    assert "AssertionError:  " not in r.stdout


def test_allclose_failure_reports_the_largest_difference(tmp_path):
    write(tmp_path, {"test_c.grad": "import torch\na = torch.tensor([1.0, 2.0, 3.0])\n"
                                    "b = torch.tensor([1.0, 2.5, 3.0])\n"
                                    "assert torch.allclose(a, b)\n"})
    r = gradcli("run", "test_c.grad", cwd=tmp_path)
    assert r.returncode == 1
    assert "AssertionError: assert torch.allclose(a, b)" in r.stderr
    assert "largest difference 0.5 at index (1,) (2 vs 2.5" in r.stderr
    assert "1 of 3 elements differ beyond the tolerance" in r.stderr


@pytest.mark.parametrize("call,allowed", [
    ("torch.allclose(a, b, atol=1e-3)", "allowed 0.001025 = atol 0.001 + rtol 1e-05 * |b|"),
    ("torch.allclose(a, b, rtol=0.01, atol=0.0)", "allowed 0.025 = atol 0 + rtol 0.01 * |b|"),
    ("a.allclose(b, 0.01)", "allowed 0.025 = atol 1e-08 + rtol 0.01 * |b|"),
    ("torch.allclose(input=a, other=b, atol=0.1)", "allowed 0.100025 = atol 0.1 + rtol 1e-05"),
])
def test_allclose_with_its_tolerances_given_reports_against_them(tmp_path, call, allowed):
    write(tmp_path, {"test_c.grad": "import torch\na = torch.tensor([1.0, 2.0, 3.0])\n"
                                    "b = torch.tensor([1.0, 2.5, 3.0])\n"
                                    f"assert {call}\n"})
    r = gradcli("test", ".", cwd=tmp_path)
    assert r.returncode == 1
    assert f"AssertionError: assert {call}" in r.stdout
    assert "largest difference 0.5 at index (1,) (2 vs 2.5; " + allowed in r.stdout
    assert "where torch =" not in r.stdout and "<module" not in r.stdout


def test_allclose_nan_and_infinity_rules(tmp_path):
    write(tmp_path, {"test_c.grad": "import torch\nnan, inf = float('nan'), float('inf')\n"
                                    "a = torch.tensor([nan, inf, 1.0])\n"
                                    "b = torch.tensor([nan, inf, 1.5])\n"
                                    "assert torch.allclose(a, b, equal_nan=True)\n"})
    r = gradcli("test", ".", cwd=tmp_path)
    # equal NaNs (asked for) and equal infinities are close: only the last element is not
    assert "largest difference 0.5 at index (2,) (1 vs 1.5; " in r.stdout, r.stdout
    assert "1 of 3 elements differ beyond the tolerance" in r.stdout


def test_allclose_reports_the_largest_difference_among_the_elements_not_close(tmp_path):
    # element 0 misses its (larger) tolerance by less than element 1 misses its own, but
    # its difference is the largest: that is the one shown, as torch.testing ranks them
    write(tmp_path, {"test_c.grad": "import torch\n"
                                    "a = torch.tensor([1000.0, 1.0, 5.0], dtype=torch.float64)\n"
                                    "b = torch.tensor([1000.02, 1.015, 5.0], dtype=torch.float64)\n"
                                    "assert torch.allclose(a, b, rtol=1e-5, atol=0.0)\n"})
    r = gradcli("test", ".", cwd=tmp_path)
    assert "largest difference 0.02 at index (0,) (1000 vs 1000.02; allowed 0.0100002" \
        in r.stdout, r.stdout
    assert "2 of 3 elements differ beyond the tolerance" in r.stdout


def test_a_chained_comparison_shows_the_link_that_failed(tmp_path):
    write(tmp_path, {"test_k.grad": "import torch\nx = torch.tensor(0.5)\nlo, hi = 0, 0.25\n"
                                    "calls = []\n"
                                    "def f():\n    calls.append(1)\n    return 9\n"
                                    "assert lo <= x <= hi < f()\n"})
    r = gradcli("test", ".", cwd=tmp_path)
    assert "AssertionError: assert tensor(0.5000) <= 0.25" in r.stdout, r.stdout
    assert "  where x = tensor(0.5000)" in r.stdout and "  where hi = 0.25" in r.stdout
    # evaluated as Python does: f() after the failed link never ran
    src = ("calls = []\ndef f():\n    calls.append(1)\n    return 9\n"
           "try:\n    assert 1 < 0 < f()\nexcept AssertionError:\n    print(calls)\n"
           "assert 0 < 1 < f() < 20\nprint(calls)\n")
    r = gradcli("run", "-", cwd=tmp_path, stdin=src)
    assert r.stdout == "[]\n[1]\n" and r.returncode == 0, r.stderr


def test_modules_and_functions_are_not_listed_as_values(tmp_path):
    write(tmp_path, {"test_m.grad": "import torch\nimport math\ndef f(v):\n    return v\n"
                                    "x = torch.ones(2)\n"
                                    "assert torch.equal(f(x), x * math.pi)\n"})
    r = gradcli("test", ".", cwd=tmp_path)
    assert "  where x = tensor([1., 1.])" in r.stdout
    assert "where torch" not in r.stdout and "where math" not in r.stdout
    assert "where f " not in r.stdout


def test_other_failed_expressions_list_the_names_they_read(tmp_path):
    write(tmp_path, {"test_n.grad": "import torch\nx = torch.ones(2)\nlimit = 1\n"
                                    "assert x.sum() < limit and x.max() > 0, 'too big'\n"})
    r = gradcli("run", "test_n.grad", cwd=tmp_path)
    assert "AssertionError: too big" in r.stderr
    assert "assert x.sum() < limit and x.max() > 0" in r.stderr
    assert "  where x = tensor([1., 1.])" in r.stderr
    assert "  where limit = 1" in r.stderr


@pytest.mark.parametrize("body,shown", [
    ("        while True:\n            pass\n",
     "<repr failed: LimitExceeded: step limit exceeded: the program ran more than 2000 "
     "statements (raise it with --max-steps or GRADCLI_MAX_STEPS)>"),
    ("        return 1 / 0\n", "<repr failed: ZeroDivisionError: division by zero>"),
    ("        return 'v' * 5000\n", "v" * 600 + "... (4400 more characters)"),
])
def test_a_value_whose_repr_misbehaves_is_named_not_a_traceback(tmp_path, body, shown):
    src = f"class A:\n    def __repr__(self):\n{body}\nassert A() == 1\n"
    r = gradcli("run", "--max-steps", "2000", "-", cwd=tmp_path, stdin=src)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"AssertionError: assert {shown} == 1" in r.stderr
    assert f"  where A() = {shown}" in r.stderr


def test_the_program_still_sees_pythons_assertion_message(tmp_path):
    src = ("try:\n    assert 1 == 2\nexcept AssertionError as e:\n    print(repr(str(e)))\n"
           "try:\n    assert [1][0] == 3, 'msg'\nexcept AssertionError as e:\n"
           "    print(repr(str(e)))\n")
    r = gradcli("run", "-", cwd=tmp_path, stdin=src)
    assert r.stdout == "''\n'msg'\n" and r.returncode == 0


def test_operands_are_evaluated_once(tmp_path):
    src = ("calls = []\ndef f():\n    calls.append(1)\n    return len(calls)\n"
           "try:\n    assert f() == 5\nexcept AssertionError:\n    pass\nprint(calls)\n"
           "import torch\nx = torch.ones(2)\n"
           "def g():\n    calls.append(2)\n    return x\n"
           "try:\n    assert torch.allclose(g(), x + 1)\nexcept AssertionError:\n    pass\n"
           "print(calls)\n")
    r = gradcli("run", "-", cwd=tmp_path, stdin=src)
    assert r.stdout == "[1]\n[1, 2]\n", r.stderr


# ------------------------------------------------------------------ workers
def test_workers_give_the_serial_runs_report(tmp_path):
    files = {f"test_{i:02d}.grad": f"print({i})\nassert {i} % 4 != 3, 'bad {i}'\n"
             for i in range(12)}
    write(tmp_path, files)
    serial = gradcli("test", ".", cwd=tmp_path)
    parallel = gradcli("test", ".", "-n", "3", cwd=tmp_path)
    assert serial.returncode == parallel.returncode == 1

    def stable(text):  # durations vary from run to run; nothing else may
        import re
        return re.sub(r"\d+\.\d\d s", "T s", text)

    assert stable(serial.stdout) == stable(parallel.stdout)
    assert "9 passed, 3 failed" in parallel.stdout.splitlines()[-1]


def test_workers_run_files_at_once_and_report_them_in_order(tmp_path):
    """The JSON report says when each file started: with -n 2 the quick second file starts
    while the first still runs (it runs until its 2 s timeout), in a serial run after."""
    write(tmp_path, {"test_a.grad": "while True:\n    pass\n", "test_b.grad": "print('b')\n"})
    args = ("test", ".", "--timeout", "2", "--max-steps", str(10**12), "--json", "-")
    parallel = gradcli(*args, "-n", "2", cwd=tmp_path)
    serial = gradcli(*args, cwd=tmp_path)
    for r in (parallel, serial):
        a, b = json.loads(r.stdout)["tests"]  # in the files' order either way
        assert (a["path"], a["status"], b["path"], b["status"]) == (
            "test_a.grad", "timeout", "test_b.grad", "passed")
    a, b = json.loads(parallel.stdout)["tests"]
    assert b["start"] < a["start"] + a["duration"]
    a, b = json.loads(serial.stdout)["tests"]
    assert b["start"] >= a["start"] + a["duration"]


def test_workers_must_be_positive(tmp_path):
    r = gradcli("test", ".", "-n", "0", cwd=tmp_path)
    assert r.returncode == 2 and "must be a positive integer" in r.stderr


# -------------------------------------------------------------------- quiet
def test_quiet_lists_failures_only(tmp_path):
    write(tmp_path, {f"test_ok{i}.grad": "pass\n" for i in range(30)})
    write(tmp_path, {"test_bad.grad": GRAD_WRONG})
    r = gradcli("test", ".", "-q", cwd=tmp_path)
    assert r.returncode == 1
    assert "test_ok" not in r.stdout
    assert "FAIL test_bad.grad  AssertionError: assert tensor(4.) == 13 (line 4)" in r.stdout
    assert r.stdout.splitlines()[-1].startswith("30 passed, 1 failed in ")
    assert len(r.stdout.splitlines()) < 20


def test_many_passing_files_print_one_line_each_and_a_summary(tmp_path):
    write(tmp_path, {f"test_ok{i:03d}.grad": "pass\n" for i in range(40)})
    r = gradcli("test", ".", "-q", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.splitlines() == [r.stdout.splitlines()[-1]]
    assert r.stdout.startswith("40 passed in ")


# ------------------------------------------------------------------ goldens
def test_update_goldens_writes_out_files_and_then_they_pass(tmp_path):
    write(tmp_path, {"test_p.grad": "import torch\nprint(torch.ones(2) * 3)\n",
                     "test_q.grad": "print('new')\n", "test_q.out": "old\n",
                     "test_r.grad": "assert False\n", "test_s.grad": "assert True\n",
                     "test_t.grad": "pass\n", "test_t.out": "was here\n"})
    r = gradcli("test", ".", "--update-goldens", cwd=tmp_path)
    assert r.returncode == 1  # test_r still fails: its assert is not a golden
    assert (tmp_path / "test_p.out").read_text() == "tensor([3., 3.])\n"
    assert (tmp_path / "test_q.out").read_text() == "new\n"
    assert not (tmp_path / "test_r.out").exists()
    assert not (tmp_path / "test_s.out").exists()  # printed nothing, had no golden
    assert (tmp_path / "test_t.out").read_text() == ""  # had one: now it prints nothing
    assert "wrote 3 golden files" in r.stderr
    assert gradcli("test", "test_p.grad", "test_q.grad", cwd=tmp_path).returncode == 0
    (tmp_path / "test_q.grad").write_text("print('changed')\n")
    assert gradcli("test", "test_q.grad", cwd=tmp_path).returncode == 1


# --------------------------------------------------------------- JSON report
def test_json_report_schema(tmp_path):
    write(tmp_path, {"test_a.grad": "print('hi')\n", "test_b.grad": GRAD_WRONG})
    r = gradcli("test", ".", "--json", "reports/deep/r.json", cwd=tmp_path)
    assert r.returncode == 1
    doc = json.loads((tmp_path / "reports" / "deep" / "r.json").read_text())
    assert doc["schema"] == "gradcli.test/1"
    assert doc["summary"] | {"duration": 0} == {
        "total": 2, "passed": 1, "failed": 1, "errors": 0, "timed_out": 0, "deselected": 0,
        "duration": 0, "interrupted": False, "exit_code": 1}
    assert doc["settings"] == {"seed": 0, "timeout": 60.0}
    a, b = doc["tests"]
    assert (a["path"], a["status"], a["stdout"], a["line"]) == ("test_a.grad", "passed",
                                                               "hi\n", None)
    assert (b["status"], b["kind"], b["line"], b["col"]) == ("failed", "AssertionError", 4, 1)
    assert b["message"] == "assert tensor(4.) == 13"
    assert 0 <= a["start"] <= b["start"] and a["duration"] >= 0
    assert set(a) == {"path", "status", "duration", "start", "kind", "message", "line", "col",
                      "report", "golden", "diff", "stdout", "stderr"}
    assert "where x.grad[1] = tensor(4.)" in b["report"]


def test_json_to_stdout_keeps_stdout_pure(tmp_path):
    write(tmp_path, {"test_a.grad": "print('hi')\n"})
    r = gradcli("test", ".", "--json", "-", cwd=tmp_path)
    assert r.returncode == 0
    assert json.loads(r.stdout)["summary"]["passed"] == 1
    assert "1 passed" in r.stderr


# ---------------------------------------------------------------- annotations
def test_github_actions_annotations(tmp_path):
    write(tmp_path, {"sub/test_b.grad": GRAD_WRONG, "test_ok.grad": "pass\n"})
    r = gradcli("test", ".", cwd=tmp_path, env={"GITHUB_ACTIONS": "true"})
    lines = [x for x in r.stdout.splitlines() if x.startswith("::error ")]
    assert len(lines) == 1
    assert lines[0].startswith("::error file=sub/test_b.grad,line=4,col=1,"
                               "title=AssertionError::sub/test_b.grad:4:1: AssertionError: "
                               "assert tensor(4.) == 13%0A")
    plain = gradcli("test", ".", cwd=tmp_path)
    assert "::error" not in plain.stdout
    # run from a folder below the checkout: GitHub wants the path from the checkout's root
    r = gradcli("test", ".", cwd=tmp_path / "sub",
                env={"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path)})
    lines = [x for x in r.stdout.splitlines() if x.startswith("::error ")]
    assert len(lines) == 1 and lines[0].startswith(
        "::error file=sub/test_b.grad,line=4,col=1,title=AssertionError::test_b.grad:4:1: ")


def test_force_color_colours_a_pipe_and_no_color_wins(tmp_path):
    write(tmp_path, {"test_ok.grad": "pass\n"})
    r = gradcli("test", ".", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert "\x1b[" in r.stdout
    r = gradcli("test", ".", cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in r.stdout
    r = gradcli("test", ".", "--no-color", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in r.stdout
    assert "\x1b[" not in gradcli("test", ".", cwd=tmp_path).stdout


# ------------------------------------------------------------------ collection
def test_collection_follows_grad_files_like_pytest(tmp_path):
    write(tmp_path, {"checks/test_a.grad": "pass\n", "checks/helper.grad": "assert False\n",
                     "checks/check_b.grad": "pass\n"})
    r = gradcli("test", "checks", cwd=tmp_path)
    assert r.returncode == 0 and "1 passed" in r.stdout and "helper" not in r.stdout
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ngrad_files = ["test_*.grad", "check_*.grad"]\n')
    r = gradcli("test", "checks", cwd=tmp_path)
    assert r.returncode == 0 and "2 passed" in r.stdout
    # pytest collects exactly the same files
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "checks",
                        "-p", "no:cacheprovider"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    collected = sorted(x.split("::")[0] for x in p.stdout.splitlines() if "::" in x)
    assert collected == ["checks/check_b.grad", "checks/test_a.grad"], p.stdout
    # a helper named on the command line runs
    assert gradcli("test", "checks/helper.grad", cwd=tmp_path).returncode == 1


def pytest_collects(cwd, *args):
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only",
                        "-p", "no:cacheprovider", *args], cwd=cwd, capture_output=True,
                       text=True, timeout=120)
    return sorted(x.split("::")[0] for x in p.stdout.splitlines() if "::" in x)


def gradcli_runs(cwd, *args):
    r = gradcli("test", *args, "--json", "-", cwd=cwd)
    assert r.returncode in (0, 1), r.stderr
    return sorted(t["path"] for t in json.loads(r.stdout)["tests"])


def test_both_runners_skip_the_folders_pytest_skips(tmp_path):
    write(tmp_path, {f"{d}/test_x.grad": "pass\n"
                     for d in ("keep", "build", "dist", "venv", "lib.egg", ".hidden",
                               "__pycache__", "env1", "skip_me")})
    (tmp_path / "env1" / "pyvenv.cfg").write_text("home = /usr\n")  # a virtualenv
    expected = ["keep/test_x.grad", "skip_me/test_x.grad"]
    assert gradcli_runs(tmp_path, ".") == pytest_collects(tmp_path) == expected
    # norecursedirs of the configuration replaces pytest's default list, for both
    (tmp_path / "pytest.ini").write_text("[pytest]\nnorecursedirs = skip_* .*\n")
    expected = ["build/test_x.grad", "dist/test_x.grad", "keep/test_x.grad",
                "lib.egg/test_x.grad", "venv/test_x.grad"]
    assert gradcli_runs(tmp_path, ".") == pytest_collects(tmp_path) == expected


def test_both_runners_run_a_file_named_on_the_command_line(tmp_path):
    write(tmp_path, {"checks/helper.grad": "assert 1 + 1 == 3\n", "checks/test_a.grad": "pass\n"})
    assert gradcli_runs(tmp_path, "checks") == pytest_collects(tmp_path, "checks") == [
        "checks/test_a.grad"]
    named = ("checks/helper.grad", "checks/test_a.grad")
    assert gradcli_runs(tmp_path, *named) == pytest_collects(tmp_path, *named) == list(named)


def test_without_a_path_both_runners_search_the_testpaths(tmp_path):
    write(tmp_path, {"pytest.ini": "[pytest]\ntestpaths = tests\n",
                     "tests/test_a.grad": "pass\n", "examples/test_b.grad": "pass\n"})
    assert gradcli_runs(tmp_path) == pytest_collects(tmp_path) == ["tests/test_a.grad"]
    # in another folder than the configuration's, both search where they run
    assert gradcli_runs(tmp_path / "examples") == ["test_b.grad"]
    assert pytest_collects(tmp_path / "examples") == ["examples/test_b.grad"]


@pytest.mark.parametrize("name,text", [
    ("pytest.ini", "[pytest]\ngrad_files = spec_*.grad\n"),
    ("tox.ini", "[pytest]\ngrad_files = spec_*.grad\n"),
    ("setup.cfg", "[tool:pytest]\ngrad_files = spec_*.grad\n"),
])
def test_ini_files_set_the_pattern(tmp_path, name, text):
    write(tmp_path, {name: text, "d/spec_a.grad": "pass\n", "d/test_b.grad": "pass\n"})
    r = gradcli("test", ".", cwd=tmp_path / "d")  # the nearest configuration upwards
    assert r.returncode == 0 and "spec_a.grad" in r.stdout and "test_b" not in r.stdout


def test_piped_stdin_without_a_command_runs_the_program(tmp_path):
    r = gradcli(cwd=tmp_path, stdin="import torch\nprint(torch.ones(2) * 2)\n")
    assert r.returncode == 0 and r.stdout == "tensor([2., 2.])\n", r.stderr
    r = gradcli(cwd=tmp_path, stdin="print(1 +)\n")
    assert r.returncode == 2 and "<stdin>:1:" in r.stderr
    # with the top-level options too: the program runs, no help screen
    r = gradcli("--no-color", cwd=tmp_path, stdin="print(2 * 21)\n")
    assert r.returncode == 0 and r.stdout == "42\n", r.stdout + r.stderr
