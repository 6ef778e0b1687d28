"""``gradcli test``: the real CLI as a subprocess over fixture trees in tmp_path.

Fixtures are the files of tests/fixtures/ci (see its README): ``test_*.grad``
pass, ``fails_*.grad`` fail, ``slow_loop.grad`` never ends.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from process_helpers import kill_process_group, read_until, sigint_as_in_a_terminal

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ci"
HUGE_STEPS = "1000000000000"  # so that only the wall clock can stop slow_loop.grad


def gradcli_test(*args, cwd, timeout=120, env=None):
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "gradcli", "test", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=e)


def every_grad_file_a_test(tmp_path):
    """tmp_path's pytest.ini makes every .grad file under it a test (grad_files = *.grad):
    the failing fixtures are not named test_*, so pytest's own run does not collect them."""
    ini = tmp_path / "pytest.ini"
    if not ini.exists():
        ini.write_text("[pytest]\ngrad_files = *.grad\n")


def tree(tmp_path, *names, sub="t"):
    """Copy fixtures (and their .out files) into tmp_path/sub (every .grad file a test)."""
    every_grad_file_a_test(tmp_path)
    d = tmp_path / sub
    d.mkdir(parents=True, exist_ok=True)
    for name in names:
        src = FIXTURES / name
        shutil.copy(src, d / name)
        out = src.with_suffix(".out")
        if out.exists():
            shutil.copy(out, d / out.name)
    return d


def junit(path):
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    return root, suites[0], {c.get("name"): c for c in suites[0].findall("testcase")}


# ------------------------------------------------------------- outcomes
def test_all_pass_exit_0(tmp_path):
    tree(tmp_path, "test_gradient.grad", "test_golden.grad")
    r = gradcli_test("t", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout and "FAIL" not in r.stdout
    assert "2 passed" in r.stdout.splitlines()[-1]
    # the summary table: file, result, time, message
    header = next(line for line in r.stdout.splitlines() if line.startswith("file"))
    assert header.split() == ["file", "result", "time", "message"]
    assert r.stderr == ""


def test_failing_assert_shows_script_line_and_caret(tmp_path):
    tree(tmp_path, "test_gradient.grad", "fails_assert.grad")
    r = gradcli_test("t", cwd=tmp_path)
    assert r.returncode == 1
    out = r.stdout
    assert "t/fails_assert.grad:5:1: AssertionError: gradient sum should be 5" in out
    lines = out.splitlines()
    i = lines.index('    5 | assert x.grad.sum().item() == 5, "gradient sum should be 5"')
    assert lines[i + 1].startswith("      | ^^^^^^")
    assert "grad is tensor([2., 2.])" in out  # the captured stdout of the failed file
    assert "not reached" not in out           # stopped at the first failed assert
    assert "Traceback" not in out + r.stderr
    assert "1 passed, 1 failed" in lines[-1]


def test_runtime_error_with_call_chain(tmp_path):
    tree(tmp_path, "fails_runtime.grad")
    r = gradcli_test("t", cwd=tmp_path)
    assert r.returncode == 1
    assert ("t/fails_runtime.grad:2:5: RuntimeError: grad can be implicitly created only "
            "for scalar outputs") in r.stdout
    assert "    2 |     t.backward()" in r.stdout
    assert "t/fails_runtime.grad:5 in <module>" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr


def test_syntax_error_is_an_error(tmp_path):
    tree(tmp_path, "fails_syntax.grad", "test_gradient.grad")
    r = gradcli_test("t", cwd=tmp_path)
    assert r.returncode == 1
    assert "t/fails_syntax.grad:2:5: SyntaxError:" in r.stdout
    assert "    2 | y = (x +" in r.stdout
    assert "1 passed, 1 error" in r.stdout.splitlines()[-1]


def test_golden_output_match_and_mismatch(tmp_path):
    tree(tmp_path, "test_golden.grad", "fails_golden.grad")
    r = gradcli_test("t", cwd=tmp_path)
    assert r.returncode == 1
    out = r.stdout
    # test_golden.out has another object address: 0x... is normalised
    assert any(line.startswith("t/test_golden.grad") and "PASS" in line
               for line in out.splitlines())
    assert "stdout differs from t/fails_golden.out" in out
    assert "--- t/fails_golden.out (expected)" in out
    assert "+++ t/fails_golden.grad (stdout)" in out
    assert "-tensor(5., grad_fn=<SumBackward0>)" in out
    assert "+tensor(6., grad_fn=<SumBackward0>)" in out
    assert " second line" in out


def test_golden_file_alone_passes_when_equal(tmp_path):
    every_grad_file_a_test(tmp_path)
    d = tmp_path / "t"
    d.mkdir()
    (d / "hello.grad").write_text('print("hello", 0x10)\nprint(ones(2))\n')
    (d / "hello.out").write_text("hello 16\ntensor([1., 1.])\n")
    assert gradcli_test("t", cwd=tmp_path).returncode == 0
    (d / "hello.out").write_text("hello 16\n")
    r = gradcli_test("t", cwd=tmp_path)
    assert r.returncode == 1 and "+tensor([1., 1.])" in r.stdout


# ------------------------------------------------------ selection, exits
def test_k_selection(tmp_path):
    tree(tmp_path, "test_gradient.grad", "test_golden.grad", "fails_assert.grad",
         "fails_syntax.grad")
    r = gradcli_test("t", "-k", "golden or gradient", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    assert "2 passed, 2 deselected" in r.stdout.splitlines()[-1]
    r = gradcli_test("t", "-k", "fails and not SYNTAX", cwd=tmp_path)
    assert r.returncode == 1
    assert "fails_assert.grad" in r.stdout and "fails_syntax.grad" not in r.stdout
    assert "1 failed, 3 deselected" in r.stdout.splitlines()[-1]
    r = gradcli_test("t", "-k", "(nothing)", cwd=tmp_path)
    assert r.returncode == 2 and "no .grad file matches" in r.stderr
    r = gradcli_test("t", "-k", "golden and (", cwd=tmp_path)
    assert r.returncode == 2 and "bad -k expression" in r.stderr


def test_no_grad_file_exit_2(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    r = gradcli_test("empty", cwd=tmp_path)
    assert r.returncode == 2
    assert "no .grad file found" in r.stderr
    assert r.stdout == ""
    r = gradcli_test("missing_dir", cwd=tmp_path)
    assert r.returncode == 2 and "missing_dir: no such file or directory" in r.stderr


def test_usage_errors_exit_2(tmp_path):
    tree(tmp_path, "test_gradient.grad")
    assert gradcli_test("t", "--timeout", "-1", cwd=tmp_path).returncode == 2
    assert gradcli_test("t", "--max-steps", "0", cwd=tmp_path).returncode == 2
    assert gradcli_test("t", "--bogus", cwd=tmp_path).returncode == 2


def test_explicit_files_and_duplicates(tmp_path):
    d = tree(tmp_path, "test_gradient.grad", "fails_assert.grad")
    r = gradcli_test("t/test_gradient.grad", "t", "t/test_gradient.grad", cwd=tmp_path)
    assert r.returncode == 1
    assert "1 passed, 1 failed" in r.stdout.splitlines()[-1]
    assert (d / "test_gradient.grad").exists()


def test_limit_flag_and_seed(tmp_path):
    every_grad_file_a_test(tmp_path)
    d = tmp_path / "t"
    d.mkdir()
    (d / "loop.grad").write_text("for i in range(1000):\n    pass\n")
    (d / "rand.grad").write_text("print(randn(3))\n")
    r = gradcli_test("t", "--max-steps", "100", cwd=tmp_path)
    assert r.returncode == 1
    assert "t/loop.grad:" in r.stdout and "LimitError" in r.stdout
    a = gradcli_test("t", "-k", "rand", "--seed", "3", "--junit-xml", "a.xml", cwd=tmp_path)
    b = gradcli_test("t", "-k", "rand", "--seed", "3", "--junit-xml", "b.xml", cwd=tmp_path)
    c = gradcli_test("t", "-k", "rand", "--seed", "4", "--junit-xml", "c.xml", cwd=tmp_path)
    assert a.returncode == b.returncode == c.returncode == 0
    outs = [junit(tmp_path / f)[2]["rand.grad"].findtext("system-out") for f in
            ("a.xml", "b.xml", "c.xml")]
    assert outs[0] == outs[1] != outs[2]


def test_timeout_fails_that_file_and_the_run_continues(tmp_path):
    tree(tmp_path, "test_gradient.grad", "slow_loop.grad", "test_golden.grad")
    t0 = time.monotonic()
    r = gradcli_test("t", "--timeout", "1", "--max-steps", HUGE_STEPS, "--junit-xml",
                     "report.xml", cwd=tmp_path, timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode == 1, r.stdout + r.stderr
    assert elapsed < 20
    out = r.stdout
    # the report shows where the loop was when the time was up
    assert re.search(r"^t/slow_loop\.grad:[23]:\d+: Timeout: timed out after 1 s \(wall clock; raise it with --timeout\)$",
                     out, re.M), out
    assert "    3 |     n = n + 1" in out or "    2 | while True:" in out
    assert "2 passed, 1 timed out" in out.splitlines()[-1]
    root, suite, cases = junit(tmp_path / "report.xml")
    assert_junit_schema(root)
    err = cases["slow_loop.grad"].find("error")
    assert err is not None and err.get("type") == "Timeout"
    assert 0.9 <= float(cases["slow_loop.grad"].get("time")) < 10


# ------------------------------------------------------------ JUnit XML
def test_junit_xml(tmp_path):
    tree(tmp_path, "test_gradient.grad", "test_golden.grad", "fails_assert.grad",
         "fails_syntax.grad", "fails_golden.grad")
    (tmp_path / "reports").mkdir()
    r = gradcli_test("t", "--junit-xml", "reports/grad.xml", cwd=tmp_path)
    assert r.returncode == 1
    root, suite, cases = junit(tmp_path / "reports" / "grad.xml")
    assert suite.get("tests") == root.get("tests") == "5"
    assert suite.get("failures") == "2" and suite.get("errors") == "1"
    assert suite.get("skipped") == "0"
    assert float(suite.get("time")) >= 0 and suite.get("timestamp")
    assert sorted(cases) == ["fails_assert.grad", "fails_golden.grad", "fails_syntax.grad",
                             "test_golden.grad", "test_gradient.grad"]
    for case in cases.values():
        assert case.get("classname").startswith("t.")
        assert float(case.get("time")) >= 0
    assert cases["fails_assert.grad"].get("classname") == "t.fails_assert"

    fail = cases["fails_assert.grad"].find("failure")
    assert fail.get("message") == ("t/fails_assert.grad:5:1: AssertionError: gradient sum "
                                   "should be 5")
    assert fail.get("type") == "AssertionError"
    assert '    5 | assert x.grad.sum().item() == 5, "gradient sum should be 5"' in fail.text
    assert "^^^^" in fail.text
    assert cases["fails_assert.grad"].findtext("system-out") == "grad is tensor([2., 2.])\n"

    gold = cases["fails_golden.grad"].find("failure")
    assert gold.get("type") == "OutputMismatch"
    assert "+tensor(6., grad_fn=<SumBackward0>)" in gold.text

    err = cases["fails_syntax.grad"].find("error")
    assert err is not None and err.get("type") == "SyntaxError"
    assert cases["fails_syntax.grad"].find("failure") is None

    for ok in ("test_gradient.grad", "test_golden.grad"):
        assert cases[ok].find("failure") is None and cases[ok].find("error") is None
    assert "grad_fn=<SumBackward0>" in cases["test_golden.grad"].findtext("system-out")
    # written atomically: no temp file left beside it
    assert os.listdir(tmp_path / "reports") == ["grad.xml"]
    assert_junit_schema(root)


# The elements and attributes the JUnit schema allows (Jenkins' junit-10.xsd,
# which pytest's xunit2 reports follow), with the required attributes.
SCHEMA = {
    "testsuites": ({"testsuite"}, {"name", "time", "tests", "failures", "errors"}, set()),
    "testsuite": ({"testsuite", "properties", "testcase", "system-out", "system-err"},
                  {"name", "tests", "failures", "errors", "group", "time", "skipped",
                   "timestamp", "hostname", "id", "package", "file", "log", "url"},
                  {"name", "tests", "failures", "errors"}),
    "properties": ({"property"}, set(), set()),
    "property": (set(), {"name", "value"}, {"name", "value"}),
    # file and line: the attributes of pytest's xunit1 family, which CI systems
    # (GitLab, GitHub test reporters) read to point at the script's failing line
    "testcase": ({"skipped", "error", "failure", "system-out", "system-err"},
                 {"name", "time", "classname", "group", "file", "line"}, {"name"}),
    "failure": (set(), {"type", "message"}, set()),
    "error": (set(), {"type", "message"}, set()),
    "skipped": (set(), {"type", "message"}, set()),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}
TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")


def assert_junit_schema(el):
    children, allowed, required = SCHEMA[el.tag]
    assert set(el.attrib) <= allowed, (el.tag, el.attrib)
    assert required <= set(el.attrib), (el.tag, el.attrib)
    if el.tag in ("testsuites", "testsuite") and "time" in el.attrib:
        assert TIME.fullmatch(el.get("time")), el.get("time")
    if el.tag == "testcase":
        float(el.get("time"))
    for child in el:
        assert child.tag in children, (el.tag, child.tag)
        assert_junit_schema(child)


def test_junit_xml_escapes_control_characters(tmp_path):
    every_grad_file_a_test(tmp_path)
    d = tmp_path / "t"
    d.mkdir()
    (d / "ctl.grad").write_text('print("bell\\x07 esc\\x1b[31m <&> ]]>")\nassert False, "a<b"\n')
    r = gradcli_test("t", "--junit-xml", "out.xml", cwd=tmp_path)
    assert r.returncode == 1
    _, _, cases = junit(tmp_path / "out.xml")
    case = cases["ctl.grad"]
    assert "<&> ]]>" in case.findtext("system-out")
    assert "\\x07" in case.findtext("system-out")
    assert "a<b" in case.find("failure").get("message")


def test_junit_target_directory_missing_is_made(tmp_path):
    tree(tmp_path, "test_gradient.grad", "fails_assert.grad")
    r = gradcli_test("t", "--junit-xml", "no/such/dir/report.xml", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stderr == ""
    _, _, cases = junit(tmp_path / "no" / "such" / "dir" / "report.xml")
    assert cases["fails_assert.grad"].get("file") == "t/fails_assert.grad"
    assert cases["fails_assert.grad"].get("line") == "5"
    # every testcase has a file and a line: a passing file's test begins at its line 1
    assert cases["test_gradient.grad"].get("file") == "t/test_gradient.grad"
    assert cases["test_gradient.grad"].get("line") == "1"
    assert "1 passed, 1 failed" in r.stdout.splitlines()[-1]


def test_junit_target_under_a_file_exit_2(tmp_path):
    tree(tmp_path, "test_gradient.grad")
    (tmp_path / "afile").write_text("x")
    r = gradcli_test("t", "--junit-xml", "afile/report.xml", cwd=tmp_path)
    assert r.returncode == 2
    assert "cannot write the JUnit XML report to afile/report.xml" in r.stderr
    assert "is not a directory" in r.stderr
    assert "1 passed" in r.stdout.splitlines()[-1]


def test_junit_target_not_writable(tmp_path):
    tree(tmp_path, "test_gradient.grad")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        if not os.path.isdir("/proc/self"):
            pytest.skip("root can write anywhere; no /proc to try")
        target = "/proc/gradcli-report.xml"  # even root cannot create files here
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        target = "ro/report.xml"
    try:
        r = gradcli_test("t", "--junit-xml", target, cwd=tmp_path)
    finally:
        if not target.startswith("/"):
            (tmp_path / "ro").chmod(0o700)
    assert r.returncode == 2
    assert f"cannot write the JUnit XML report to {target}" in r.stderr
    assert "Traceback" not in r.stderr
    assert "1 passed" in r.stdout.splitlines()[-1]
    r = gradcli_test("t", "--junit-xml", "t/test_gradient.grad/x.xml", cwd=tmp_path)
    assert r.returncode == 2 and "is not a directory" in r.stderr


# ---------------------------------------------------------------- Ctrl-C
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")
def test_ctrl_c_writes_partial_junit_and_exits_130(tmp_path):
    tree(tmp_path, "test_gradient.grad", "test_golden.grad")
    shutil.copy(FIXTURES / "slow_loop.grad", tmp_path / "t" / "zz_slow_loop.grad")
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradcli", "test", "t", "--timeout", "0", "--max-steps",
         HUGE_STEPS, "--junit-xml", "partial.xml"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        start_new_session=True, preexec_fn=sigint_as_in_a_terminal)
    try:
        seen = read_until(proc, b"zz_slow_loop.grad ... ", timeout=60)
        os.killpg(proc.pid, signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
    finally:
        kill_process_group(proc)
    out = (seen + rest).decode()
    assert proc.returncode == 130, out + err.decode()
    assert "interrupted" in err.decode()
    assert "Traceback" not in out + err.decode()
    assert "interrupted after 2 of 3 files" in out
    root, suite, cases = junit(tmp_path / "partial.xml")
    assert_junit_schema(root)
    assert sorted(cases) == ["test_golden.grad", "test_gradient.grad"]
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert "interrupted" in suite.findtext("system-err")
    # nothing of the run is left behind (helper and test processes)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("processes of the interrupted run are still alive")


# ------------------------------------------------- isolation, display, help
def test_spawn_isolation_same_results(tmp_path):
    """GRADCLI_TEST_ISOLATION=spawn: a new interpreter per file, same verdicts."""
    tree(tmp_path, "test_gradient.grad", "test_golden.grad", "fails_assert.grad",
         "slow_loop.grad")
    r = gradcli_test("t", "--timeout", "2", "--max-steps", HUGE_STEPS, "--junit-xml", "s.xml",
                     cwd=tmp_path, env={"GRADCLI_TEST_ISOLATION": "spawn"})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 passed, 1 failed, 1 timed out" in r.stdout.splitlines()[-1]
    assert "t/fails_assert.grad:5:1: AssertionError: gradient sum should be 5" in r.stdout
    assert "Timeout: timed out after 2 s" in r.stdout
    _, suite, cases = junit(tmp_path / "s.xml")
    assert suite.get("tests") == "4"


def test_spawn_isolation_starts_the_clock_when_the_program_starts(tmp_path):
    """A new interpreter per file may take seconds to start on a loaded machine (here a
    sitecustomize makes it 2 s): the wall-clock limit is the program's, not the start's."""
    site = tmp_path / "slow_start"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import time\ntime.sleep(2)\n")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "test_quick.grad").write_text("assert 1 + 1 == 2\n")
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    r = gradcli_test("t", "--timeout", "1", cwd=tmp_path,
                     env={"GRADCLI_TEST_ISOLATION": "spawn", "PYTHONPATH": path})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1].startswith("1 passed in ")


def test_files_do_not_share_state(tmp_path):
    every_grad_file_a_test(tmp_path)
    d = tmp_path / "t"
    d.mkdir()
    (d / "a.grad").write_text("shared = 1\nset_printoptions(precision=1)\n"
                              "print(ones(1) / 3)\n")
    (d / "b.grad").write_text("print(ones(1) / 3)\n"
                              "try:\n    shared\n    assert False, 'leaked'\n"
                              "except NameError:\n    pass\n")
    r = gradcli_test("t", "--junit-xml", "o.xml", cwd=tmp_path)
    _, _, cases = junit(tmp_path / "o.xml")
    assert cases["a.grad"].findtext("system-out") == "tensor([0.3])\n"
    assert cases["b.grad"].findtext("system-out") == "tensor([0.3333])\n", r.stdout
    assert r.returncode == 0, r.stdout


def test_help_has_examples():
    r = subprocess.run([sys.executable, "-m", "gradcli", "test", "--help"],
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"})
    assert r.returncode == 0
    for text in ("Examples", "gradcli test tests/", "--junit-xml", "--timeout", "-k",
                 "--max-steps", "--seed", "--no-color", "Exit codes"):
        assert text in r.stdout, text


def test_closed_stdout_is_quiet(tmp_path):
    tree(tmp_path, "test_gradient.grad", "fails_assert.grad", "test_golden.grad")
    p = subprocess.Popen([sys.executable, "-m", "gradcli", "test", "t", "--junit-xml", "x.xml"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=60)
    assert first.startswith(b"[1/3] t/fails_assert.grad")
    assert b"Traceback" not in err and b"BrokenPipe" not in err
    assert p.returncode == 1  # still the verdict of the run
    assert junit(tmp_path / "x.xml")[1].get("tests") == "3"


COLOUR = re.compile(r"\x1b\[(?:\d+;)*3[0-7](?:;\d+)*m")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("no_color", [False, True])
def test_terminal_progress_and_table(tmp_path, no_color):
    pexpect = pytest.importorskip("pexpect")
    tree(tmp_path, "test_gradient.grad", "fails_assert.grad")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    args = ["-m", "gradcli", "test", "t"] + (["--no-color"] if no_color else [])
    child = pexpect.spawn(sys.executable, args, cwd=str(tmp_path), env=env,
                          dimensions=(40, 120), timeout=60, encoding="utf-8")
    child.expect(pexpect.EOF)
    child.close()
    out = child.before
    assert child.exitstatus == 1, out
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out)
    assert "testing" in plain                       # the live progress line
    assert re.search(r"PASS\s+t/test_gradient\.grad", plain)
    assert re.search(r"FAIL\s+t/fails_assert\.grad", plain)
    assert re.search(r"file\s+result\s+time\s+message", plain)  # the summary table
    assert "1 passed, 1 failed" in plain
    assert 'assert x.grad.sum().item() == 5, "gradient sum should be 5"' in plain
    assert bool(COLOUR.search(out)) is (not no_color)
