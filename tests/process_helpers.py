"""Helpers for the tests that interrupt a running ``gradcli`` with Ctrl-C
(tests/test_cli_test.py, tests/test_faults.py, tests/test_lang_errors.py)."""

from __future__ import annotations

import os
import selectors
import signal
import time


def read_until(proc, marker: bytes, timeout: float) -> bytes:
    """What ``proc`` has written on stdout once ``marker`` shows (so the test knows where
    the run is before it interrupts it); fails the test if it does not show within
    ``timeout`` seconds or before the process ends."""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    data, deadline = b"", time.monotonic() + timeout
    while marker not in data:
        left = deadline - time.monotonic()
        if left <= 0 or proc.poll() is not None and not sel.select(0):
            break
        if sel.select(left):
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            data += chunk
    assert marker in data, data[-500:]
    return data


def kill_process_group(proc) -> None:
    """SIGKILL the process group of ``proc`` (started with ``start_new_session=True``) if
    it is still running, so a failing test leaves no gradcli processes behind."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def sigint_as_in_a_terminal() -> None:
    """Popen's ``preexec_fn``: the child starts with Ctrl-C's default action, as a terminal
    starts a command. A pytest started in the background (a CI script's ``&``) ignores
    SIGINT, and an ignored signal stays ignored across exec: Python would then install no
    KeyboardInterrupt handler in gradcli, and the test would test nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_program(tmp_path, source: str, *args: str):
    """``gradcli run [ARGS] prog.py`` of `source` in a real process: the CompletedProcess."""
    import subprocess
    import sys

    prog = tmp_path / "prog.py"
    prog.write_text(source)
    return subprocess.run([sys.executable, "-m", "gradcli", "run", *args, str(prog)],
                          capture_output=True, text=True, timeout=120)


def assert_runs_as_python_does(tmp_path, program: str) -> None:
    """`program` (a .grad that is also valid Python) printed by ``gradcli run`` is what the
    same file prints run by Python with PyTorch: the CLI tests of new ops end with this."""
    import subprocess
    import sys

    (tmp_path / "p.grad").write_text(program)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", "p.grad"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    expected = subprocess.run([sys.executable, "p.grad"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout, (got.stdout, expected.stdout)
