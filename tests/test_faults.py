"""Faults (issue 6 item 5), with real processes; every wait is on an output marker.

Ctrl-C in the middle of a forward (numpy matmuls), of a backward (a long chain)
and of a REPL line doing either; a .grad file that is not UTF-8, a directory,
a dangling symlink, a missing file; a broken pipe on stdout for run, eval
and --json; a --junit-xml target on a full file system (file-size limit) or in
a directory that cannot be written; an interrupted ``gradcli test`` during a
backward still writes a valid report of what ran. Complements
tests/test_lang_errors.py (Ctrl-C in a Python loop, ``| head -1`` of a print
loop) and tests/test_cli_test.py (interrupted run during a loop, missing or
read-only report directory).
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from process_helpers import kill_process_group, read_until, sigint_as_in_a_terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pipes")
ENV = dict(os.environ, NO_COLOR="1", COLUMNS="100")
WAIT = 120

FORWARD = ("import torch\nx = torch.ones(600, 600)\nprint('forward', flush=True)\n"
           "while True:\n    y = x @ x\n")
BACKWARD = ("import torch\nx = torch.ones(1, requires_grad=True)\ny = x\n"
            "for i in range(400000):\n    y = y * 1.0\n"
            "print('backward', flush=True)\n"
            "for k in range(1000):\n    y.backward(retain_graph=True)\n")


def gradcli(*args, cwd, stdin=None, timeout=WAIT, env=None, **kw):
    return subprocess.run([sys.executable, "-m", "gradcli", *args], cwd=cwd, input=stdin,
                          capture_output=True, timeout=timeout, env=env or ENV, **kw)


def interrupt_after(args, marker, cwd):
    proc = subprocess.Popen([sys.executable, "-m", "gradcli", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                            start_new_session=True, preexec_fn=sigint_as_in_a_terminal)
    try:
        seen = read_until(proc, marker, WAIT)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        kill_process_group(proc)
    return proc.returncode, (seen + out).decode(), err.decode()


# ------------------------------------------------------------------ Ctrl-C
@pytest.mark.parametrize("source,marker", [(FORWARD, b"forward\n"), (BACKWARD, b"backward\n")],
                         ids=["forward", "backward"])
def test_ctrl_c_during_engine_work_exits_130_with_a_report(tmp_path, source, marker):
    (tmp_path / "work.grad").write_text(source)
    code, out, err = interrupt_after(["run", "work.grad"], marker, tmp_path)
    assert code == 130, err
    assert err.startswith("work.grad:") and "KeyboardInterrupt" in err, err
    assert "Traceback" not in err + out
    assert len(err.strip().splitlines()) <= 4, err


def test_ctrl_c_during_a_backward_in_the_repl_keeps_the_session(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_repl import READY, Term  # noqa: E402 - the REPL tests' pty driver

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRADCLI_", "XDG_"))}
    env.update(TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="100",
               LINES="40", HOME=str(tmp_path), GRADCLI_HISTORY=str(tmp_path / "history"))
    t = Term(["repl", "--max-steps", "100000000"], env, tmp_path)
    try:
        t.ready()
        t.run("x = ones(1, requires_grad=True)")
        t.run("y = x")
        t.line("for i in range(400000):")
        t.line("y = y * 1.0")
        t.line("")
        t.ready()
        # one line: the marker, then 1000 long backwards; Ctrl-C lands in a backward
        t.line("print('back' + 'ward'); [y.backward(retain_graph=True) for k in range(1000)]")
        t.expect(r"^backward$")
        t.send("\x03")
        t.expect(r"KeyboardInterrupt: interrupted at <input-\d+>:1 "
                 r"\(the session and its variables are kept\)")
        t.ready()
        assert "True" in t.run("x.grad is None or x.grad.item() >= 1.0")
        t.line("z = ones(500, 500)")
        t.ready()
        t.line("print('mat' + 'mul'); [z @ z for k in range(100000)]")
        t.expect(r"^matmul$")
        t.send("\x03")
        t.expect(r"KeyboardInterrupt: interrupted")
        t.ready()
        assert "tensor([3.])" in t.run("x.detach() + 2")
        assert "Traceback" not in t.text and READY
        assert t.exit_status() == 0
    finally:
        if t.child.isalive():
            t.child.terminate(force=True)
        del pexpect


# ------------------------------------------------------------------ bad files
def test_a_file_that_is_not_utf8(tmp_path):
    (tmp_path / "latin.grad").write_bytes(b"x = 1\nprint('caf\xe9')\n")
    p = gradcli("run", "latin.grad", cwd=tmp_path)
    err = p.stderr.decode()
    assert p.returncode == 2 and p.stdout == b""
    assert err.startswith("latin.grad:2:11: SyntaxError: the file is not valid UTF-8 (byte 0xe9)")
    p = gradcli("check", "latin.grad", cwd=tmp_path)
    assert p.returncode == 2 and b"not valid UTF-8" in p.stderr and b"Traceback" not in p.stderr
    p = gradcli("run", "-", cwd=tmp_path, stdin=b"\xff\xfe\x00print(1)\n")
    assert p.returncode == 2 and p.stderr.startswith(b"<stdin>:1:1: SyntaxError")


@pytest.mark.parametrize("kind", ["missing", "directory", "dangling", "fifo-less-dir"])
def test_unreadable_and_missing_files(tmp_path, kind):
    name = "prog.grad"
    if kind == "directory":
        (tmp_path / name).mkdir()
    elif kind == "dangling":
        (tmp_path / name).symlink_to(tmp_path / "nowhere.grad")
    elif kind == "fifo-less-dir":
        name = "no/such/dir/prog.grad"
    for cmd in (["run", name], ["check", name], ["run", "ok.grad", name]):
        (tmp_path / "ok.grad").write_text("print('ok')\n")
        p = gradcli(*cmd, cwd=tmp_path)
        err = p.stderr.decode()
        assert p.returncode == 2, (cmd, err)
        assert "Traceback" not in err and "internal error" not in err
        if kind == "directory" and cmd[0] == "check":  # (check reads the .grad files in it)
            assert err == f"{name}: no .grad files below it\n", err
            continue
        assert f"{name}" in err and "cannot read" in err or "No such file" in err, err
        if cmd[1] == "ok.grad" and cmd[0] == "run":
            assert p.stdout == b"ok\n"


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root reads any file (the directory and symlink cases still run)")
def test_a_file_without_read_permission(tmp_path):
    f = tmp_path / "secret.grad"
    f.write_text("print(1)\n")
    f.chmod(0)
    try:
        p = gradcli("run", "secret.grad", cwd=tmp_path)
    finally:
        f.chmod(0o600)
    err = p.stderr.decode()
    assert p.returncode == 2 and "cannot read file: Permission denied" in err, err


# ------------------------------------------------------------------ broken pipe
@pytest.mark.parametrize("args", [
    ["run", "big.grad"], ["run", "--json", "big.grad"], ["run", "--echo", "big.grad"],
    ["eval", "for i in range(100000): print(i)"], ["run", "big.grad", "big.grad"],
])
def test_broken_pipe_ends_quietly(tmp_path, args):
    (tmp_path / "big.grad").write_text(
        "import torch\nfor i in range(30000):\n    print(i, torch.ones(3) * i)\n")
    cmd = " ".join([f"'{sys.executable}'", "-m", "gradcli"] + [f"'{a}'" for a in args])
    p = subprocess.run(f"{cmd} | head -1; echo \"status=${{PIPESTATUS[0]}}\"", shell=True,
                       executable="/bin/bash", capture_output=True, text=True, cwd=tmp_path,
                       env=ENV, timeout=WAIT)
    lines = p.stdout.splitlines()
    assert lines[-1] == "status=0", (p.stdout[-300:], p.stderr)
    assert len(lines) == 2
    assert p.stderr == "", p.stderr


# ------------------------------------------------------------------ JUnit targets
def _limit_file_size():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # EFBIG instead of being killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))


def _tests(tmp_path):
    t = tmp_path / "t"
    t.mkdir()
    (t / "test_a.grad").write_text("x = ones(2, requires_grad=True)\n(x * x).sum().backward()\n"
                                   "assert x.grad.tolist() == [2.0, 2.0]\n")
    (t / "test_b.grad").write_text("assert 1 + 1 == 2\n")
    return t


def test_junit_target_on_a_full_file_system(tmp_path):
    """A report that cannot be written (EFBIG past a 64-byte file-size limit,
    the same path as ENOSPC): exit 2, the reason, the results still shown, no
    partial or temporary file left."""
    _tests(tmp_path)
    p = subprocess.run([sys.executable, "-m", "gradcli", "test", "t", "--junit-xml", "r.xml"],
                       cwd=tmp_path, capture_output=True, text=True, env=ENV, timeout=WAIT,
                       preexec_fn=_limit_file_size)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "cannot write the JUnit XML report to r.xml: File too large" in p.stderr
    assert "Traceback" not in p.stderr
    assert "2 passed" in p.stdout
    assert sorted(x.name for x in tmp_path.iterdir()) == ["t"]


def test_junit_target_is_a_device_or_special_path(tmp_path):
    _tests(tmp_path)
    (tmp_path / "ro").mkdir()
    p = gradcli("test", "t", "--junit-xml", "t", cwd=tmp_path)
    assert p.returncode == 2 and b"it is a directory" in p.stderr


@pytest.mark.parametrize("when", ["backward"])
def test_interrupted_test_run_writes_a_valid_report(tmp_path, when):
    t = _tests(tmp_path)
    (t / "test_zz_long.grad").write_text(BACKWARD)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradcli", "test", "t", "--timeout", "0", "--junit-xml",
         "partial.xml", "--max-steps", "100000000"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
        start_new_session=True, preexec_fn=sigint_as_in_a_terminal)
    try:
        seen = read_until(proc, b"test_zz_long.grad ... ", WAIT)
        # the long file is running (its forward, then 1000 backwards): interrupt it
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                rest, err = proc.communicate(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
    finally:
        kill_process_group(proc)
    out = (seen + rest).decode()
    assert proc.returncode == 130, out + err.decode()
    assert "Traceback" not in out + err.decode()
    root = ET.parse(tmp_path / "partial.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    names = sorted(c.get("name") for c in suite.iter("testcase"))
    assert names == ["test_a.grad", "test_b.grad"], names
    assert suite.get("tests") == "2" and suite.get("failures") == "0"
    assert not list(tmp_path.glob(".partial.xml.*"))


def test_exit_status_survives_an_interrupt_that_ended_a_string_exec(tmp_path):
    """`python -m gradcli` keeps the exit status it chose even after some string exec in
    the process ended in a KeyboardInterrupt (CPython then kills a `-m` run by SIGINT at
    exit; gradcli's Ctrl-C report and its 130 would be lost when Ctrl-C lands while a
    namedtuple or dataclass is being made). A sitecustomize runs the interrupted exec as
    gradcli's main returns (the last string exec counts), so the test does not depend on
    timing."""
    (tmp_path / "sitecustomize.py").write_text(
        "import gradcli.cli.app as app\n"
        "real = app.main\n"
        "def main(*a, **k):\n"
        "    try:\n"
        "        return real(*a, **k)\n"
        "    finally:\n"
        "        try:\n"
        "            exec('raise KeyboardInterrupt', {})\n"
        "        except KeyboardInterrupt:\n"
        "            pass\n"
        "app.main = main\n")
    env = dict(ENV, PYTHONPATH=os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]))
    ok = subprocess.run([sys.executable, "-m", "gradcli", "eval", "1 + 1"], cwd=tmp_path,
                        capture_output=True, env=env, timeout=WAIT)
    assert (ok.returncode, ok.stdout.strip()) == (0, b"2"), ok
    (tmp_path / "bad.grad").write_text("x = (\n")
    bad = subprocess.run([sys.executable, "-m", "gradcli", "run", "bad.grad"], cwd=tmp_path,
                         capture_output=True, env=env, timeout=WAIT)
    assert bad.returncode == 2, bad
