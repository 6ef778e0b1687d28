"""Running ``.grad`` files as tests: the logic shared by ``gradcli test`` and
the pytest plugin (:mod:`gradcli.cli.pytest_plugin`).

``run_grad_test(path, *, timeout=60, limits=None, seed=0) -> TestOutcome``
    Runs one file in a fresh session in its own process and judges it: the
    test fails at the program's first failed ``assert``, error or syntax
    error (the outcome's ``report`` is the language's report, with the
    script's line and a caret); where ``NAME.out`` lies beside ``NAME.grad``
    the program's stdout must also equal it (object addresses ``0x...``
    normalised, trailing newlines ignored; a unified diff on mismatch). A
    file still running after ``timeout`` seconds of wall clock fails with a
    ``Timeout`` report that shows the line it was running. Ctrl-C while a
    test runs raises ``KeyboardInterrupt`` in the caller.

Isolation: on Linux the files run in children forked from one long-lived
helper process ("fork server") that has imported gradcli once, so each test
costs milliseconds instead of an interpreter start-up, every file starts from
a pristine interpreter state, and a runaway file is killed without harming
the caller. Elsewhere (or with ``GRADCLI_TEST_ISOLATION=spawn``) each file
runs in a new interpreter. A timed-out child first gets ``SIGUSR1``, which
ends the program as an uncatchable guard (so the report names the line it
was running), then ``SIGKILL`` after a grace period.

Also here: :func:`discover` (files and directories to ``*.grad`` files),
:func:`keyword_matcher` (pytest-like ``-k`` expressions) and
:func:`junit_xml` / :func:`write_junit` (JUnit XML reports, written
atomically).

This module is cheap to import: the language loads in the helper process.
"""
from __future__ import annotations

import atexit
import dataclasses
import difflib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: seconds a timed-out program gets to end itself (and report its line) before SIGKILL
GRACE = 2.0
#: the statuses of a TestOutcome
PASSED, FAILED, ERROR, TIMEOUT = "passed", "failed", "error", "timeout"

ADDR = re.compile(r"0x[0-9a-fA-F]+")
MAX_DIFF_LINES = 200


# ------------------------------------------------------------------ outcome
@dataclass
class TestOutcome:
    """The verdict on one ``.grad`` file.

    ``status`` is ``passed``, ``failed`` (failed assert, runtime error,
    resource guard, golden-output mismatch), ``error`` (the file could not
    run: syntax or forbidden-name error, unreadable file, a crash of gradcli)
    or ``timeout``. ``report`` is the whole text to show for a non-passing
    file; ``message`` its one-line summary; ``line``/``col`` the script's
    failing location (None when unknown); ``stdout``/``stderr`` what the
    program printed.
    """

    __test__ = False  # not a pytest test class

    path: str
    status: str
    duration: float = 0.0
    kind: str = ""
    message: str = ""
    report: str = ""
    line: int | None = None
    col: int | None = None
    stdout: str = ""
    stderr: str = ""
    golden: str | None = None
    diff: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    @property
    def headline(self) -> str:
        """The report's first line (``file:line:col: Kind: message``)."""
        return self.report.split("\n", 1)[0] if self.report else self.message


def normalise_output(text: str) -> str:
    """Output as golden files are compared: ``0x...`` addresses masked,
    line endings unified, trailing newlines dropped."""
    return ADDR.sub("0x?", text.replace("\r\n", "\n")).rstrip("\n")


def golden_path(path) -> Path | None:
    """``NAME.out`` beside ``NAME.grad``, if it exists."""
    out = golden_target(path)
    return out if out.is_file() else None


def format_seconds(s: float) -> str:
    return f"{s:g}"


# -------------------------------------------------------------- the one API
def run_grad_test(path, *, timeout: float | None = 60.0, limits=None, seed: int = 0,
                  runner=None, cwd=None, runner_name: str = "cli") -> TestOutcome:
    """Run one ``.grad`` file as a test (see the module docstring).

    ``path`` is opened relative to ``cwd`` (default: the current directory)
    and is the name the reports show. ``limits`` is a
    :class:`gradcli.lang.Limits` (default ``Limits.from_env()``);
    ``timeout`` None or 0 means no wall-clock limit. ``runner`` defaults to
    a process-wide one (:func:`default_runner`). ``runner_name`` ("cli" or "pytest")
    says whose options a resource guard's message names.
    """
    from gradcli.lang.limits import Limits

    path = os.fspath(path)
    cwd = os.fspath(cwd) if cwd is not None else os.getcwd()
    if limits is None:
        limits = Limits.from_env()
    request = {
        "path": path,
        "cwd": cwd,
        "seed": int(seed),
        "timeout": float(timeout) if timeout else None,
        "limits": dataclasses.asdict(limits),
        "runner_name": runner_name,
    }
    raw = (runner or default_runner()).run(request)
    if raw.get("status") == "interrupted":
        raise KeyboardInterrupt
    outcome = TestOutcome(
        path=path,
        status=raw.get("status", ERROR),
        duration=float(raw.get("duration") or 0.0),
        kind=raw.get("kind") or "",
        message=raw.get("message") or "",
        report=raw.get("report") or "",
        line=raw.get("line") or None,
        col=raw.get("col") or None,
        stdout=raw.get("stdout") or "",
        stderr=raw.get("stderr") or "",
    )
    gold = golden_path(Path(cwd, path))
    if gold is not None:
        outcome.golden = os.path.join(os.path.dirname(path), gold.name)
        if outcome.status == PASSED:
            _judge_golden(outcome, gold)
    return outcome


def _judge_golden(outcome: TestOutcome, gold: Path) -> None:
    shown = outcome.golden
    try:
        expected = gold.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        outcome.status, outcome.kind = ERROR, "Error"
        outcome.message = f"cannot read the expected output {shown}: {e}"
        outcome.report = f"{outcome.path}: {outcome.kind}: {outcome.message}"
        return
    want, got = normalise_output(expected), normalise_output(outcome.stdout)
    if want == got:
        return
    diff = list(difflib.unified_diff(want.split("\n") if want else [],
                                     got.split("\n") if got else [],
                                     f"{shown} (expected)", f"{outcome.path} (stdout)",
                                     lineterm=""))
    if len(diff) > MAX_DIFF_LINES:
        diff = diff[:MAX_DIFF_LINES] + [f"... ({len(diff) - MAX_DIFF_LINES} more diff lines)"]
    outcome.status, outcome.kind = FAILED, "OutputMismatch"
    outcome.message = f"stdout differs from {shown}"
    outcome.diff = "\n".join(diff)
    outcome.report = f"{outcome.path}: {outcome.kind}: {outcome.message}\n{outcome.diff}"


# ------------------------------------------------------------------ runners
class _RunnerBase:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def prepare(self):
        """Start whatever helper the runner needs (optional: run() does it)."""

    def close(self):  # pragma: no cover - overridden
        pass


def _child_env() -> dict:
    """The environment of helper processes: gradcli importable from where
    this process imported it."""
    import gradcli
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(gradcli.__file__)))
    parts = [root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    env.pop("PYTHONSTARTUP", None)
    return env


_HELPER = "import sys; from gradcli.cli import testing; sys.exit(testing._helper_main(sys.argv[1:]))"


class _ctrl_c_held:
    """Ctrl-C is not acted on while a helper is being stopped. A KeyboardInterrupt raised
    inside Popen.wait, between its taking and its releasing of the wait lock, leaves the
    lock taken, and the next wait on that process blocks for ever. The interrupt may come
    late: Ctrl-C reaches a thread of ours that is not the main one, and the main thread
    raises it at some later point. One still pending is raised here, before any wait (the
    handler change checks for it), and is dropped: the run is ending anyway."""

    def __enter__(self):
        self.old = None
        for _ in range(2):  # (the second try finds no interrupt pending)
            try:
                self.old = signal.signal(signal.SIGINT, signal.SIG_IGN)
                break
            except KeyboardInterrupt:
                continue
            except ValueError:  # not the main thread: it cannot be interrupted
                break
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
        return False


def _reap(proc, timeout) -> bool:
    """Wait up to `timeout` seconds (None: for ever) for helper `proc` to end; whether it
    did. It asks the system itself rather than Popen.wait: a KeyboardInterrupt inside an
    earlier Popen call (raised late, see _ctrl_c_held) can leave Popen's wait lock taken,
    and Popen.wait would then block for ever on a process long gone."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while proc.returncode is None:
        try:
            pid, status = os.waitpid(proc.pid, os.WNOHANG)
        except ChildProcessError:  # reaped already (by a Popen call that got that far)
            proc.returncode = proc.returncode if proc.returncode is not None else 0
            break
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


class ForkServerRunner(_RunnerBase):
    """Runs each request in a child forked from one helper process (POSIX)."""

    def __init__(self):
        import threading
        self._proc = None
        self._log = None
        self._lock = threading.RLock()

    def prepare(self):
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()

    def _start(self):
        self.close()
        self._log = tempfile.TemporaryFile()  # the helper's own stderr, for diagnosis
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _HELPER, "--serve"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self._log, env=_child_env(), close_fds=True)

    def _died(self, what: str) -> dict:
        tail = ""
        if self._log is not None:
            try:
                self._log.seek(0)
                tail = self._log.read()[-2000:].decode("utf-8", "replace").strip()
            except (OSError, ValueError):
                pass
        self.close()
        return _error_result(what + (f"; its last words:\n{tail}" if tail else ""))

    def run(self, request: dict) -> dict:
        with self._lock:
            return self._run(request)

    def _run(self, request: dict) -> dict:
        self.prepare()
        proc = self._proc
        timeout = request.get("timeout")
        # the helper enforces the timeout; this deadline only guards against a wedged helper
        deadline = None if not timeout else time.monotonic() + timeout + GRACE + 60
        try:
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
            fd = proc.stdout.fileno()
            while True:
                wait = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([fd], [], [], wait)
                if ready:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    return self._died("the test runner did not respond; it was stopped")
            line = proc.stdout.readline()
        except BrokenPipeError:
            line = b""
        except BaseException:
            self.close()
            raise
        if not line:
            return self._died("the test runner ended unexpectedly")
        return json.loads(line)

    def close(self):
        with _ctrl_c_held():
            self._close()

    def _close(self):
        proc, self._proc = self._proc, None
        log, self._log = self._log, None
        if log is not None:
            log.close()
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        if not _reap(proc, GRACE + 1):
            proc.terminate()  # the helper kills its child on SIGTERM
            if not _reap(proc, GRACE):
                proc.kill()
                _reap(proc, None)
        try:
            proc.stdout.close()
        except OSError:
            pass


class SpawnRunner(_RunnerBase):
    """Runs each request in a new interpreter (any platform)."""

    #: seconds an interpreter may take to start before its program's clock starts anyway
    START_LIMIT = 120.0

    def run(self, request: dict) -> dict:
        tmp = tempfile.mkdtemp(prefix="gradcli-test-")
        files = _TempFiles(tmp)
        ready_r = ready_w = None
        try:
            args = [sys.executable, "-c", _HELPER, "--child", json.dumps(request), tmp]
            extra = {}
            if os.name == "posix":  # the clock starts when the program does (_signal_ready)
                ready_r, ready_w = os.pipe()
                args.append(str(ready_w))
                extra["pass_fds"] = (ready_w,)
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=_child_env(), **extra)
            timed_out = False
            try:
                if ready_w is not None:
                    os.close(ready_w)
                    ready_w = None
                    # "." when the program starts (end of file if the child ends first),
                    # then "!" when its result is written: the program's time is between
                    select.select([ready_r], [], [], self.START_LIMIT)
                    os.read(ready_r, 1)
                    done, _, _ = select.select([ready_r], [], [],
                                               request.get("timeout") or None)
                    wait = 60.0 if done else 0.0  # (then only the teardown is left)
                else:
                    wait = request.get("timeout") or None
                try:
                    proc.wait(timeout=wait)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    if hasattr(signal, "SIGUSR1"):
                        proc.send_signal(signal.SIGUSR1)
                        try:
                            proc.wait(timeout=GRACE)
                        except subprocess.TimeoutExpired:
                            proc.kill()
                    else:
                        proc.kill()
                    proc.wait()
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            return files.collect(request, proc.returncode, timed_out)
        finally:
            for fd in (ready_r, ready_w):
                if fd is not None:
                    os.close(fd)
            files.remove()


def make_runner():
    """A new runner: the fork server on Linux, a process per file elsewhere;
    ``GRADCLI_TEST_ISOLATION=fork|spawn`` chooses."""
    how = os.environ.get("GRADCLI_TEST_ISOLATION", "").strip().lower()
    if how not in ("fork", "spawn"):
        how = "fork" if sys.platform.startswith("linux") and hasattr(os, "fork") else "spawn"
    if how == "fork" and not hasattr(os, "fork"):
        how = "spawn"
    return ForkServerRunner() if how == "fork" else SpawnRunner()


_DEFAULT = None


def default_runner():
    """The process-wide runner (closed at exit or by :func:`close_default_runner`)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = make_runner()
        atexit.register(close_default_runner)
    return _DEFAULT


def close_default_runner():
    global _DEFAULT
    runner, _DEFAULT = _DEFAULT, None
    if runner is not None:
        runner.close()


def _error_result(message: str) -> dict:
    return {"status": ERROR, "kind": "InternalError", "message": message,
            "report": f"gradcli: {message}", "duration": 0.0}


# ----------------------------------------------------- helper process side
class _TempFiles:
    """stdout, stderr and the result record of one child, in a temp dir."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.out = os.path.join(tmp, "stdout")
        self.err = os.path.join(tmp, "stderr")
        self.res = os.path.join(tmp, "result.json")

    def collect(self, request, returncode, timed_out) -> dict:
        result = None
        try:
            with open(self.res, encoding="utf-8") as f:
                result = json.load(f)
        except (OSError, ValueError):
            pass
        if result is None:
            if timed_out:
                result = _timeout_result(request, None)
            elif returncode is not None and returncode < 0:
                result = _error_result(f"the test process was killed by signal {-returncode}")
            else:
                result = _error_result(f"the test process ended without a result "
                                       f"(exit code {returncode})")
            result["report"] = result["report"].replace("gradcli: ", f"{request['path']}: ", 1)
        elif timed_out and result.get("status") != TIMEOUT:
            # it finished in the grace period, just after the deadline
            result = _timeout_result(request, result)
        result["stdout"] = _read_text(self.out)
        result["stderr"] = _read_text(self.err)
        return result

    def remove(self):
        for p in (self.out, self.err, self.res):
            try:
                os.unlink(p)
            except OSError:
                pass
        try:
            os.rmdir(self.tmp)
        except OSError:
            pass


def _read_text(path, limit=64 * 1024 * 1024) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return ""
    text = data[:limit].decode("utf-8", errors="replace")
    if len(data) > limit:
        text += f"\n[output truncated at {limit} bytes]\n"
    return text


#: how a user raises the wall-clock limit, by the runner in use (as the guards say it)
TIMEOUT_OPTION = {"cli": "--timeout", "pytest": "--grad-timeout or the grad_timeout ini option"}


def timeout_message(request) -> str:
    """``timed out after 1 s (wall clock; raise it with --timeout)``: the option named is
    the one of the runner in use (``gradcli test``'s flag, or pytest's)."""
    t = request.get("timeout") or 0
    option = TIMEOUT_OPTION.get(request.get("runner_name") or "cli", TIMEOUT_OPTION["cli"])
    return f"timed out after {format_seconds(t)} s (wall clock; raise it with {option})"


def _timeout_result(request, partial) -> dict:
    t = request.get("timeout") or 0
    msg = timeout_message(request)
    res = {"status": TIMEOUT, "kind": "Timeout", "message": msg, "duration": t,
           "report": f"{request['path']}: Timeout: {msg}"}
    if partial and partial.get("line"):
        res["line"], res["col"] = partial.get("line"), partial.get("col")
    return res


_TIMED_OUT = False


def _on_timeout(signum, frame):
    global _TIMED_OUT
    _TIMED_OUT = True
    raise _LIMIT_EXCEEDED("timed out")


_LIMIT_EXCEEDED = None


def _block_sigint() -> None:
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        # caught, not ignored (even if the caller ignores it): a pending one must survive
        signal.signal(signal.SIGINT, signal.default_int_handler)
    else:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _unblock_sigint() -> None:
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _child(request: dict, files: _TempFiles) -> int:
    """In the child process: redirect output, run the program, write the record."""
    global _LIMIT_EXCEEDED
    from gradcli.lang.limits import LimitExceeded
    _LIMIT_EXCEEDED = LimitExceeded
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "SIGUSR1"):
        signal.signal(signal.SIGUSR1, _on_timeout)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    for fd, path in ((1, files.out), (2, files.err)):
        new = os.open(path, flags, 0o600)
        os.dup2(new, fd)
        os.close(new)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    import io
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", newline="\n")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", newline="\n",
                                  line_buffering=True)
    try:
        _unblock_sigint()  # a Ctrl-C pending since the fork raises here, inside the try
        result = _run_program(request)
    except BaseException as e:  # never let anything escape the child
        if _TIMED_OUT:
            result = _timeout_result(request, None)
        elif isinstance(e, KeyboardInterrupt):
            result = {"status": "interrupted", "message": "interrupted"}
        else:
            result = _error_result(f"{type(e).__name__}: {e} (a bug in gradcli)")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    tmp = files.res + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, files.res)
    _signal_done()
    return 0


def _run_program(request: dict) -> dict:
    from gradcli.lang import limits as limits_module
    from gradcli.lang.errors import CompileError, GradcliError, InternalError, Interrupted
    from gradcli.lang.limits import LimitExceeded, Limits
    from gradcli.lang.session import Session, read_source, render_error, reset_engine

    os.chdir(request["cwd"])
    limits_module.RUNNER[0] = request.get("runner_name") or "cli"
    limits = Limits(**request["limits"]) if request.get("limits") else Limits.from_env()
    _signal_ready()
    t0 = time.perf_counter()
    try:
        try:
            source, filename = read_source(request["path"])
            session = Session(limits=limits)
            reset_engine(request.get("seed", 0))
            session.run(source, filename)
        finally:
            try:
                sys.stdout.flush()
            except (OSError, ValueError):
                pass
            duration = time.perf_counter() - t0
    except GradcliError as e:
        res = {"duration": duration, "kind": e.kind, "message": e.message,
               "line": e.line or None, "col": e.col or None}
        if _TIMED_OUT:
            t = request.get("timeout") or 0
            e.kind, e.message = "Timeout", timeout_message(request)
            e.hint = None
            res.update(status=TIMEOUT, kind=e.kind, message=e.message, duration=t)
        elif isinstance(e, Interrupted):
            res["status"] = "interrupted"
        elif isinstance(e, (CompileError, InternalError)):
            res["status"] = ERROR
        else:
            res["status"] = FAILED
        res["report"] = render_error(e)
        return res
    except LimitExceeded:
        if _TIMED_OUT:
            return _timeout_result(request, None)
        raise
    if _TIMED_OUT:  # the signal came just as the program ended
        return _timeout_result(request, None)
    return {"status": PASSED, "duration": duration}


def _serve(proto_in: int, proto_out: int) -> int:
    """The fork server: one JSON request per line in, one result per line out."""
    # Ctrl-C is the caller's and the child's. Blocked here, not ignored: a Ctrl-C that comes
    # between a fork and the child's unblocking waits for the child (an ignored one would be
    # lost, and the child would run on). Blocked before any thread starts, for all of them.
    _block_sigint()
    current = {"pid": None}

    def on_term(signum, frame):
        pid = current["pid"]
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    _warm_up()
    reader = os.fdopen(proto_in, "rb", buffering=0)
    writer = os.fdopen(proto_out, "wb")
    buf = b""
    while True:
        while b"\n" not in buf:
            chunk = reader.read(65536)
            if not chunk:
                return 0
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        try:
            request = json.loads(line)
            result = _serve_one(request, proto_in, proto_out, current)
        except Exception as e:  # e.g. fork() failed: report it, keep serving
            result = _error_result(f"the test runner failed: {type(e).__name__}: {e}")
        writer.write(json.dumps(result).encode() + b"\n")
        writer.flush()


def _serve_one(request, proto_in, proto_out, current) -> dict:
    tmp = tempfile.mkdtemp(prefix="gradcli-test-")
    files = _TempFiles(tmp)
    r, w = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:  # the child
            code = 70
            try:
                os.close(r)
                os.close(proto_in)
                os.close(proto_out)
                code = _child(request, files)
            finally:
                os._exit(code)
        current["pid"] = pid
        os.close(w)
        w = None
        timeout = request.get("timeout")
        deadline = time.monotonic() + timeout if timeout else None
        timed_out = killed = False
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([r, proto_in], [], [], wait)
            if r in ready:
                break
            if proto_in in ready:  # the caller went away (or broke the protocol)
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                files.remove()
                os._exit(0)
            if time.monotonic() < deadline:
                continue
            if not timed_out:
                timed_out = True
                os.kill(pid, signal.SIGUSR1)
                deadline = time.monotonic() + GRACE
            elif not killed:
                killed = True
                os.kill(pid, signal.SIGKILL)
                deadline = None
        _, status = os.waitpid(pid, 0)
        current["pid"] = None
        code = os.waitstatus_to_exitcode(status)
        return files.collect(request, code, timed_out)
    finally:
        os.close(r)
        if w is not None:
            os.close(w)
        files.remove()


def _warm_up():
    """Import and build what every program needs, once, before forking."""
    try:
        from gradcli.lang import runtime
        from gradcli.lang.parser import parse
        from gradcli.lang.session import Session  # noqa: F401
        parse("x = 1\n", "<warm-up>")
        runtime.facade()
    except Exception:
        pass


#: (spawned children) the pipe on which the child says its program starts ("."), then
#: that its result is written ("!"), or None
_READY_FD = None


def _signal_ready() -> None:
    """Tell a SpawnRunner the program starts now: its wall-clock limit begins here, not
    at the interpreter's start (imports take seconds on a loaded machine)."""
    if _READY_FD is not None:
        _warm_up()  # what the fork server does before forking: the language, the facade
        try:
            os.write(_READY_FD, b".")
        except OSError:
            pass


def _signal_done() -> None:
    """Tell a SpawnRunner the result is written: the interpreter's teardown is not the
    program's time either."""
    global _READY_FD
    fd, _READY_FD = _READY_FD, None
    if fd is not None:
        try:
            os.write(fd, b"!")
            os.close(fd)
        except OSError:
            pass


def _helper_main(argv) -> int:
    if argv[:1] == ["--serve"]:
        proto_in, proto_out = os.dup(0), os.dup(1)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.close(null)
        sys.stdin = open(os.devnull, encoding="utf-8")
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
        return _serve(proto_in, proto_out)
    if argv[:1] == ["--child"] and len(argv) in (3, 4):
        global _READY_FD
        if len(argv) == 4:
            _READY_FD = int(argv[3])
        return _child(json.loads(argv[1]), _TempFiles(argv[2]))
    sys.stderr.write("usage: (internal) --serve | --child REQUEST TMPDIR [READY_FD]\n")
    return 2


# ---------------------------------------------------------------- discovery
def discover(paths, patterns=None) -> tuple:
    """``(files, problems)``: the test files under ``paths``, without duplicates, in
    order. Files named in ``paths`` are taken as given; directories are searched
    recursively (skipping those pytest skips: :func:`gradcli.cli.collect.skipped_dir`)
    for files matching ``patterns`` (default: the ``grad_files`` rule of
    :mod:`gradcli.cli.collect`). ``problems`` lists paths that
    do not exist or are not ``.grad`` files."""
    from gradcli.cli.collect import (
        DEFAULT_NORECURSE,
        configured,
        configured_patterns,
        matches,
        skipped_dir,
    )

    if patterns is None:
        patterns = configured_patterns()
    norecurse = configured("norecursedirs", DEFAULT_NORECURSE)
    found, seen, problems = [], set(), []

    def add(p):
        key = os.path.realpath(p)
        if key not in seen:
            seen.add(key)
            found.append(p)

    for raw in paths:
        p = os.fspath(raw)
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs
                                 if not skipped_dir(os.path.join(root, d), norecurse))
                for name in sorted(names):
                    full = os.path.normpath(os.path.join(root, name))
                    if name.endswith(".grad") and not name.startswith(".") \
                            and matches(full, patterns):
                        add(full)
        elif os.path.exists(p):
            if p.endswith(".grad"):
                add(os.path.normpath(p))
            else:
                problems.append(f"{p}: not a .grad file (skipped)")
        else:
            problems.append(f"{p}: no such file or directory")
    return found, problems


# ------------------------------------------------------------ -k expressions
_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def keyword_matcher(expr: str | None):
    """A predicate on a path for a pytest-like ``-k`` expression: words are
    case-insensitive substrings, combined with ``and``, ``or``, ``not`` and
    parentheses. ValueError on a malformed expression."""
    if not expr or not expr.strip():
        return lambda text: True
    tokens = []
    pos = 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None:  # only trailing whitespace is left
            break
        tokens.append(m.group(1))
        pos = m.end()
    tokens.append(None)
    i = 0

    def peek():
        return tokens[i]

    def take():
        nonlocal i
        t = tokens[i]
        i += 1
        return t

    def bad(why):
        return ValueError(f"bad -k expression {expr!r}: {why}")

    def parse_joined(word, parse_operand, join):
        """Operands separated by ``word``, folded from the left with ``join``: ``or`` and
        ``and`` parse alike and differ only in precedence and meaning."""
        left = parse_operand()
        while peek() == word:
            take()
            left = join(left, parse_operand())
        return left

    def parse_or():
        return parse_joined("or", parse_and, lambda a, b: lambda s: a(s) or b(s))

    def parse_and():
        return parse_joined("and", parse_not, lambda a, b: lambda s: a(s) and b(s))

    def parse_not():
        t = peek()
        if t == "not":
            take()
            inner = parse_not()
            return lambda s: not inner(s)
        if t == "(":
            take()
            inner = parse_or()
            if take() != ")":
                raise bad("missing ')'")
            return inner
        if t is None:
            raise bad("unexpected end")
        if t in (")", "and", "or"):
            raise bad(f"unexpected {t!r}")
        take()
        word = t.lower()
        return lambda s: word in s

    pred = parse_or()
    if peek() is not None:
        raise bad(f"unexpected {peek()!r}")
    return lambda text: pred(os.fspath(text).replace(os.sep, "/").lower())


# -------------------------------------------------------------- JUnit XML
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
MAX_CAPTURE = 1024 * 1024


def _xml_safe(text: str, limit: int | None = None) -> str:
    text = text or ""
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"\n[truncated: {len(text) - limit} more characters]"
    return _ILLEGAL_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _classname(path: str) -> str:
    p = Path(path)
    try:
        rel = p.resolve().relative_to(Path.cwd().resolve()) if p.is_absolute() else p
    except ValueError:
        rel = p
    parts = [x for x in rel.with_suffix("").parts if x not in ("/", "\\", ".", "..")]
    parts = [x.rstrip(":") for x in parts]
    return ".".join(x for x in parts if x) or p.stem


def junit_xml(outcomes, *, duration: float, timestamp: str | None = None,
              suite_name: str = "gradcli", properties: dict | None = None,
              note: str | None = None) -> bytes:
    """A JUnit XML report: ``<testsuites>`` with one ``<testsuite>`` and one
    ``<testcase classname= name= time= file= line=>`` per file (classname: the path,
    dotted, without ``.grad``; name: the file name; file: the path; line: the failing
    line of the script, or 1 when there is none); a non-passing file
    has ``<failure>`` (failed assert, runtime error, golden mismatch) or
    ``<error>`` (syntax error, timeout, crash) with ``message`` (the report's
    first line), ``type`` (the kind) and the whole report as text; the
    program's output is in ``<system-out>`` / ``<system-err>``. Elements and
    attributes are those of the JUnit schema that Jenkins validates against
    (junit-10.xsd), the one pytest's ``xunit2`` family also follows."""
    import socket
    import xml.etree.ElementTree as ET
    from datetime import datetime, timezone

    outcomes = list(outcomes)
    failures = sum(o.status == FAILED for o in outcomes)
    errors = sum(o.status in (ERROR, TIMEOUT) for o in outcomes)
    if timestamp is None:
        timestamp = datetime.now(timezone.utc).astimezone().isoformat(timespec="seconds")
    counts = {"tests": str(len(outcomes)), "failures": str(failures), "errors": str(errors),
              "time": f"{duration:.3f}"}
    root = ET.Element("testsuites", {"name": suite_name, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": suite_name, **counts, "skipped": "0",
                                              "timestamp": timestamp,
                                              "hostname": socket.gethostname() or "localhost"})
    if properties:
        props = ET.SubElement(suite, "properties")
        for k, v in properties.items():
            ET.SubElement(props, "property", {"name": str(k), "value": _xml_safe(str(v))})
    for o in outcomes:
        attrs = {
            "classname": _xml_safe(_classname(o.path)),
            "name": _xml_safe(os.path.basename(o.path)),
            "time": f"{o.duration:.3f}",
            "file": _xml_safe(o.path),
            # the failing line; else 1, where the test (the whole file) begins
            "line": str(o.line or 1),
        }
        case = ET.SubElement(suite, "testcase", attrs)
        if not o.passed:
            tag = "failure" if o.status == FAILED else "error"
            el = ET.SubElement(case, tag, {"message": _xml_safe(o.headline),
                                           "type": _xml_safe(o.kind or o.status)})
            el.text = _xml_safe(o.report, MAX_CAPTURE)
        if o.stdout:
            ET.SubElement(case, "system-out").text = _xml_safe(o.stdout, MAX_CAPTURE)
        if o.stderr:
            ET.SubElement(case, "system-err").text = _xml_safe(o.stderr, MAX_CAPTURE)
    if note:
        ET.SubElement(suite, "system-err").text = _xml_safe(note)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n").encode("utf-8")


class ReportError(Exception):
    """A report file could not be written (message says why)."""


def check_report_target(path, what: str = "JUnit XML") -> None:
    """Raise ReportError if a report cannot be written to ``path``. Missing folders
    are fine (they are made when the report is written, as pytest makes them)."""
    path = os.fspath(path)
    target = os.path.abspath(path)
    if os.path.isdir(target):
        raise ReportError(f"cannot write the {what} report to {path}: it is a directory")
    directory = os.path.dirname(target)
    while not os.path.exists(directory):  # the nearest existing ancestor decides
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    if not os.path.isdir(directory):
        raise ReportError(f"cannot write the {what} report to {path}: "
                          f"{directory} is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ReportError(f"cannot write the {what} report to {path}: "
                          f"directory {directory} is not writable")


def write_report(path, data: bytes, what: str = "JUnit XML") -> None:
    """Write ``data`` to ``path`` atomically (a temp file in the same directory, then
    rename), making missing folders. ReportError with a clear message on failure."""
    check_report_target(path, what)
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.chmod(tmp, 0o666 & ~_umask())
        except OSError:
            pass
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise ReportError(f"cannot write the {what} report to {path}: "
                          f"{e.strerror or e}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_junit(path, data: bytes) -> None:
    """:func:`write_report` for a JUnit XML report."""
    write_report(path, data, "JUnit XML")


def golden_target(path) -> Path:
    """Where ``NAME.grad``'s expected output lives: ``NAME.out`` beside it."""
    p = Path(path)
    return p.with_suffix(".out") if p.suffix else p.with_name(p.name + ".out")


#: the JSON report's schema name; bump the number when a field changes meaning
JSON_SCHEMA = "gradcli.test/1"


def json_report(outcomes, *, duration: float, deselected: int = 0, interrupted: bool = False,
                exit_code: int = 0, seed: int = 0, timeout=None) -> bytes:
    """The JSON report of ``gradcli test --json FILE`` (schema ``gradcli.test/1``)::

        {"schema": "gradcli.test/1",
         "summary": {"total", "passed", "failed", "errors", "timed_out" (counts),
                     "deselected", "duration" (s), "interrupted" (bool), "exit_code"},
         "settings": {"seed", "timeout" (s per file, null: none)},
         "tests": [{"path", "status" (passed|failed|error|timeout), "duration" (s),
                    "start" (s from the start of the run to the file's start; with -n
                    files overlap),
                    "kind" (AssertionError, OutputMismatch, ...; "" when passed),
                    "message", "line", "col" (1-based, null when unknown),
                    "report" (the whole text shown for a failure), "golden" (the NAME.out
                    compared, or null), "diff", "stdout", "stderr"}, ...]}

    Tests are in the order they were given; fields are never removed within a schema.
    """
    import json

    outcomes = list(outcomes)
    def count(status):
        return sum(o.status == status for o in outcomes)

    doc = {
        "schema": JSON_SCHEMA,
        "summary": {"total": len(outcomes), "passed": count(PASSED), "failed": count(FAILED),
                    "errors": count(ERROR), "timed_out": count(TIMEOUT),
                    "deselected": deselected, "duration": round(duration, 6),
                    "interrupted": interrupted, "exit_code": exit_code},
        "settings": {"seed": seed, "timeout": timeout or None},
        "tests": [{"path": o.path, "status": o.status, "duration": round(o.duration, 6),
                   "start": round(o.extra.get("start", 0.0), 6),
                   "kind": o.kind, "message": o.message, "line": o.line, "col": o.col,
                   "report": o.report, "golden": o.golden, "diff": o.diff,
                   "stdout": o.stdout, "stderr": o.stderr} for o in outcomes],
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _workspace_path(path: str) -> str:
    """``path`` as GitHub resolves an annotation's file: relative to the checkout
    (``GITHUB_WORKSPACE``) when the run started in a folder below it."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if not workspace:
        return path
    try:
        full = os.path.realpath(path)
        rel = os.path.relpath(full, os.path.realpath(workspace))
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith(os.pardir) else rel.replace(os.sep, "/")


def github_annotation(o) -> str:
    """A GitHub Actions ``::error`` workflow command for a failed outcome: the file
    (relative to the checkout), the script's line and column, the kind as title and
    the report as message."""
    props = [f"file={_gh_escape(_workspace_path(o.path), True)}"]
    if o.line:
        props.append(f"line={o.line}")
        if o.col:
            props.append(f"col={o.col}")
    props.append(f"title={_gh_escape(o.kind or STATUS_TITLE.get(o.status, o.status), True)}")
    body = o.report or o.message or o.status
    return f"::error {','.join(props)}::{_gh_escape(body.rstrip())}"


STATUS_TITLE = {FAILED: "failed", ERROR: "error", TIMEOUT: "timeout"}


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
