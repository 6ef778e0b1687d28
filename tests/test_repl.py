"""The REPL driven in a real pseudo-terminal (pexpect), as a person uses it.

Each test starts ``python -m gradcli repl`` (or ``python -m gradcli``) in a pty
with TERM=xterm, NO_COLOR=1, a fixed 40x100 window and a private HOME and history
file. Nobody answers cursor-position requests (as under pexpect, ``script`` or some
IDE consoles), and PROMPT_TOOLKIT_NO_CPR is not set: the REPL itself must not ask.
The screen stream is read with ANSI sequences stripped; the one escape kept is
``ESC[?2004h``, which prompt_toolkit sends each time a prompt starts reading
keys (it turns bracketed paste on): it becomes :data:`READY`, so a test waits
for "the next prompt" exactly, never by sleeping. Every wait has a timeout and
every test a deadline (SIGALRM), so a hung REPL fails instead of blocking.
"""
from __future__ import annotations

import functools
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from process_helpers import sigint_as_in_a_terminal

pexpect = pytest.importorskip("pexpect")

REPO = Path(__file__).resolve().parents[1]
WAIT = 30          # seconds for one expected output
DEADLINE = 120     # seconds for a whole test
ROWS, COLS = 40, 100
READY = "\x00READY\x00"
PASTE_ON = "\x1b[?2004h"
ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")


def deadline(seconds: int = DEADLINE):
    """Fail the test (instead of hanging) when it runs longer than ``seconds``."""
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            def on_alarm(signum, frame):
                pytest.fail(f"test exceeded its {seconds} s deadline", pytrace=False)
            old = signal.signal(signal.SIGALRM, on_alarm)
            signal.alarm(seconds)
            try:
                return fn(*args, **kwargs)
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, old)
        return wrapper
    return decorate


class Term:
    """A gradcli process in a pty, and its screen stream as plain text."""

    def __init__(self, args, env, cwd):
        self.child = pexpect.spawn(sys.executable, ["-m", "gradcli", *args], env=env,
                                   cwd=str(cwd), dimensions=(ROWS, COLS), encoding="utf-8",
                                   codec_errors="replace", timeout=WAIT,
                                   preexec_fn=sigint_as_in_a_terminal)
        self.raw = ""
        self.pos = 0

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw.replace(PASTE_ON, READY)).replace("\r", "")

    def expect(self, pattern: str, timeout: float = WAIT) -> re.Match:
        """Wait for ``pattern`` (a regex) after the previous match."""
        regex = re.compile(pattern, re.M)
        end = time.monotonic() + timeout
        while True:
            m = regex.search(self.text, self.pos)
            if m:
                self.pos = m.end()
                return m
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out after {timeout} s waiting for {pattern!r}; "
                                     f"screen since the last match:\n{self.text[self.pos:]}")
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=min(left, 1.0))
            except pexpect.TIMEOUT:
                pass
            except pexpect.EOF:
                m = regex.search(self.text, self.pos)
                if m:
                    self.pos = m.end()
                    return m
                raise AssertionError(f"the REPL ended while waiting for {pattern!r}; "
                                     f"screen since the last match:\n{self.text[self.pos:]}"
                                     ) from None

    def ready(self) -> re.Match:
        """Wait for the next prompt to start reading keys."""
        return self.expect(re.escape(READY))

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def line(self, text: str) -> None:
        """Type a line and press Enter."""
        self.child.send(text + "\r")

    def run(self, text: str) -> str:
        """Type a line, press Enter, and return what it printed up to the
        next prompt."""
        self.line(text)
        start = self.pos
        m = self.ready()
        return self.text[start:m.start()]

    def exit_status(self) -> int:
        """Press Ctrl-D and return the exit status."""
        self.send("\x04")
        self.child.expect(pexpect.EOF, timeout=WAIT)
        self.child.close()
        return self.child.exitstatus


@pytest.fixture
def env(tmp_path):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("GRADCLI_", "XDG_", "PROMPT_TOOLKIT_"))}
    e.update(TERM="xterm", NO_COLOR="1", COLUMNS=str(COLS),
             LINES=str(ROWS), HOME=str(tmp_path), GRADCLI_HISTORY=str(tmp_path / "history"),
             PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return e


@pytest.fixture
def spawn(env, tmp_path):
    terms = []

    def start(*args, env_extra=None):
        t = Term(list(args), dict(env, **(env_extra or {})), tmp_path)
        terms.append(t)
        t.ready()
        return t
    yield start
    for t in terms:
        if t.child.isalive():
            t.child.terminate(force=True)


@deadline()
def test_values_echo_and_assignments_do_not(spawn):
    t = spawn("repl")
    assert t.run("x = ones(2)").strip().endswith(">>> x = ones(2)")  # nothing echoed
    out = t.run("x * 2")
    assert "tensor([2., 2.])" in out
    assert "tensor([1., 2., 3.])" in t.run("tensor([1., 2., 3.])")
    out = t.run("None")
    assert "None" in out and not re.search(r"^None$", out, re.M)  # typed, not echoed
    out = t.run("1; 2")
    assert re.search(r"^1\n2\n", out, re.M)
    assert t.exit_status() == 0


@deadline()
def test_gradcli_without_arguments_on_a_terminal_starts_the_repl(spawn):
    t = spawn()
    t.pos = 0
    t.expect(r"gradcli \S+ .*:help")
    t.ready()
    assert "tensor(3.)" in t.run("tensor([1., 2.]).sum()")
    assert t.exit_status() == 0


@deadline()
def test_multi_line_def_block_with_auto_indent(spawn):
    t = spawn("repl")
    t.line("def f(a):")
    t.expect(r"^\.\.\.")                     # the continuation prompt
    t.line("b = a * 3")                        # typed without indentation: the REPL
    t.expect(r"b = a \* 3")                    # indents it (or the def would not parse)
    t.expect(r"^\.\.\.")
    t.line("return b + 1")                     # same indentation as the line before
    t.expect(r"^\.\.\.")
    out = t.run("")                            # after return: dedented, empty -> run
    assert "Error" not in out
    out = t.run("f(ones(2))")
    assert "tensor([4., 4.])" in out
    t.line("for i in range(3):")
    t.expect(r"^\.\.\.")                     # (typed as a person types: auto-indented)
    t.line("print(i * 10)")
    t.expect(r"^\.\.\.")
    out = t.run("")
    assert re.search(r"^0\n10\n20\n", out, re.M)
    assert t.exit_status() == 0


@deadline()
def test_error_mid_session_keeps_the_session(spawn):
    t = spawn("repl")
    t.run("x = ones(2)")
    out = t.run("ones(3) + ones(2)")
    assert "RuntimeError: The size of tensor a (3) must match the size of tensor b (2) " \
           "at non-singleton dimension 0" in out
    assert re.search(r"^ +1 \| ones\(3\) \+ ones\(2\)\n +\| \^+$", out, re.M), out
    assert "Traceback" not in out
    out = t.run("undefined_name + 1")
    assert "NameError: name 'undefined_name' is not defined" in out
    out = t.run("x = = 1")
    assert "SyntaxError" in out
    out = t.run("x.secret_attr")                 # sandbox / attribute error
    assert "Error" in out
    assert "tensor([1., 1.])" in t.run("x")
    assert t.exit_status() == 0


@deadline()
def test_guard_errors_keep_the_session(spawn):
    t = spawn("repl", "--max-steps", "1000", "--max-depth", "20")
    t.run("x = ones(2)")
    t.line("while True:")
    t.line("pass")
    out = t.run("")
    assert "LimitError" in out
    t.line("def deep(n):")
    t.line("return deep(n + 1)")
    t.line("")
    t.ready()
    out = t.run("deep(0)")
    assert "LimitError" in out and "call chain" in out
    assert "tensor([2., 2.])" in t.run("x * 2")
    assert t.exit_status() == 0


@deadline()
def test_ctrl_c_interrupts_a_running_loop_and_keeps_the_session(spawn):
    t = spawn("repl", "--max-steps", "1000000000000")
    t.run("x = ones(2)")
    t.run("k = 0")
    t.line("while True:")
    t.line("k += 1")
    t.line("if k == 1: print('spin' + 'ning')")
    t.line("")
    t.expect(r"^spinning$")          # the loop runs (and the terminal is in cooked mode)
    t.send("\x03")
    t.expect(r"KeyboardInterrupt: interrupted at <input-\d+>:\d+ "
             r"\(the session and its variables are kept\)")
    t.ready()
    assert "True" in t.run("k > 1")
    assert "tensor([3., 3.])" in t.run("x + 2")
    assert t.exit_status() == 0


@deadline()
def test_ctrl_c_at_the_prompt_clears_the_line(spawn):
    t = spawn("repl")
    t.send("1 + 41")
    t.expect(r"1 \+ 41")
    t.send("\x03")
    t.ready()
    out = t.run("2 + 3")
    assert re.search(r"^5$", out, re.M)
    assert "42" not in out
    assert t.exit_status() == 0


@deadline()
def test_meta_commands(spawn):
    t = spawn("repl")
    t.run("w = tensor([1., 2.], requires_grad=True)")
    t.run("y = (w * w).sum()")
    out = t.run(":graph y")
    assert "SumBackward0" in out and "MulBackward0" in out
    assert re.search(r"AccumulateGrad w \[2\]", out)
    out = t.run(":explain y")
    assert "d(a*b)/da = b" in out and "[2., 4.]" in out
    out = t.run(":explain w * 2, ones(2)")
    assert "MulBackward0" in out and "[2., 2.]" in out
    t.run("y.backward()")
    out = t.run(":grads")
    assert re.search(r"^ *w +\[2\] +\[1\., 2\.\] +\[2\., 4\.\]", out, re.M), out
    out = t.run(":show w")
    assert "requires_grad" in out and "torch.float32" in out
    out = t.run(":graph nothing_here")
    assert "NameError: name 'nothing_here' is not defined" in out
    out = t.run(":frobnicate")
    assert "unknown command ':frobnicate'" in out and ":help" in out
    out = t.run(":help")
    for name in (":graph", ":grads", ":explain", ":show", ":reset", ":help", ":quit"):
        assert name in out
    out = t.run(":reset")
    assert "session reset" in out
    out = t.run("w")
    assert "NameError: name 'w' is not defined" in out
    t.line(":quit")
    t.child.expect(pexpect.EOF, timeout=WAIT)
    t.child.close()
    assert t.child.exitstatus == 0


@deadline()
def test_completion_of_methods_names_and_meta_commands(spawn):
    t = spawn("repl")
    t.run("x = ones(2)")
    t.send("x.su\t")
    t.expect(r"\bsum\b")                       # the menu lists sum (and sub, ...)
    t.send("\x03")
    t.ready()
    t.send("x.nume\t")                         # unique: completed in place
    t.expect(r"x\.numel")
    out = t.run("()")
    assert re.search(r"^2$", out, re.M)
    t.send("my_long_variable = 7\r")
    t.ready()
    t.send("my_lo\t")
    t.expect(r"my_long_variable")
    out = t.run(" + 1")
    assert re.search(r"^8$", out, re.M)
    t.send(":gra\t")
    t.expect(r":graph")
    t.send("\x03")
    t.ready()
    assert t.exit_status() == 0


@deadline()
def test_history_persists_across_sessions(spawn, tmp_path):
    t = spawn("repl")
    t.run("remembered = 123")
    assert t.exit_status() == 0
    hist = tmp_path / "history"
    assert "+remembered = 123" in hist.read_text().splitlines()
    t2 = spawn("repl")
    t2.send("\x1b[A")                          # Up: the line from the previous session
    t2.expect(r"remembered = 123")
    out = t2.run("")
    assert "NameError" not in out               # it ran: an assignment prints nothing
    assert "123" in t2.run("remembered")
    assert t2.exit_status() == 0


@deadline()
def test_history_option_and_unwritable_history(spawn, tmp_path):
    custom = tmp_path / "sub" / "my_history"
    t = spawn("repl", "--history", str(custom))
    t.run("a_line_for_the_custom_file = 1")
    assert t.exit_status() == 0
    assert "+a_line_for_the_custom_file = 1" in custom.read_text()
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    t = spawn("repl", "--history", str(blocker / "history"))
    t.pos = 0
    t.expect(r"history is not saved")
    t.ready()
    assert "tensor(2.)" in t.run("tensor(1.) * 2")    # the REPL still works
    assert t.exit_status() == 0


@deadline()
def test_ctrl_d_exits_zero(spawn):
    t = spawn("repl")
    assert t.exit_status() == 0


def test_piped_stdin_runs_as_a_script(env):
    import subprocess
    proc = subprocess.run([sys.executable, "-m", "gradcli", "repl"], input="print(1+1)\n3\n",
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == "2\n"                 # a script: no echo of the bare 3
    proc = subprocess.run([sys.executable, "-m", "gradcli", "repl"], input="x = (\n",
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2 and "SyntaxError" in proc.stderr


@deadline()
def test_colours_and_no_color(spawn):
    t = spawn("repl", env_extra={"NO_COLOR": ""})
    t.line("x = 1 + 2")
    t.ready()
    assert re.search(r"\x1b\[[0-9;]*38;5;\d+m", t.raw), "syntax highlighting expected"
    assert t.exit_status() == 0
    t = spawn("repl", "--no-color", env_extra={"NO_COLOR": ""})
    t.line("x = 1 + 2")
    t.ready()
    assert not re.search(r"\x1b\[[0-9;]*3[0-9][;m]", t.raw), "no colours with --no-color"
    assert t.exit_status() == 0


@deadline()
def test_stdout_redirected_keeps_the_prompt_on_the_terminal(env, tmp_path):
    out_file = tmp_path / "out.txt"
    cmd = f"exec {sys.executable} -m gradcli repl > {out_file}"
    child = pexpect.spawn("/bin/sh", ["-c", cmd], env=env, cwd=str(tmp_path),
                          dimensions=(ROWS, COLS), encoding="utf-8", timeout=WAIT)
    t = Term.__new__(Term)
    t.child, t.raw, t.pos = child, "", 0
    try:
        t.ready()                                  # the prompt is drawn on stderr
        t.line("ones(2) * 3")
        t.ready()
        assert t.exit_status() == 0
    finally:
        if child.isalive():
            child.terminate(force=True)
    assert out_file.read_text() == "tensor([3., 3.])\n"


# ------------------------------------------------- pastes, typing ahead, terminals
PASTED_BLOCK = ("def f(a):\n    b = a * 3\n    if b > 5:\n        return b + 1\n"
                "    return b\n\nprint(f(2), f(1))\n")


@deadline()
@pytest.mark.parametrize("newline", ["\r", "\n"])
def test_unbracketed_paste_runs_as_pythons_prompt_runs_it(spawn, newline):
    t = spawn("repl")
    t.send(PASTED_BLOCK.replace("\n", newline))  # one write: no bracketed-paste markers
    t.expect(r"^7 3$")
    t.ready()
    assert "Error" not in t.text and "Traceback" not in t.text
    assert t.exit_status() == 0


@deadline()
def test_lines_typed_while_busy_run_after_it_with_their_own_indentation(spawn):
    t = spawn("repl")
    t.line("print('busy'); s = sum(i for i in range(400000)); print('done')")
    t.expect(r"^busy$")
    # typed ahead while the loop runs: the block's lines carry their own indentation
    # (auto-indent stacked onto them would put `for` deeper than `t = 0`: IndentationError)
    t.send("def h(n):\r    t = 0\r    for i in range(n):\r        t += i\r    return t\r\r"
           "for k in range(2):\r    print('k', k)\r\rprint('after', s, h(4))\r")
    busy_from = t.pos
    m = t.expect(r"^done$")
    # the terminal did not echo the keys while the program ran: the prompt shows them
    assert "range(2)" not in t.text[busy_from:m.start()]
    t.expect(r"^k 0\nk 1$")
    t.expect(r"^after 79999800000 6$")
    t.ready()
    assert "IndentationError" not in t.text and "Error" not in t.text
    assert t.exit_status() == 0


@deadline()
def test_lines_typed_while_the_repl_starts_show_once(env, tmp_path):
    """The terminal stops echoing as soon as gradcli starts (before its imports), so a line
    typed during the start-up shows once, at the prompt that reads it."""
    import termios

    t = Term(["repl"], env, tmp_path)
    try:
        end = time.monotonic() + WAIT
        while termios.tcgetattr(t.child.child_fd)[3] & termios.ECHO:
            assert time.monotonic() < end, "the terminal's echo was never turned off"
            try:
                t.raw += t.child.read_nonblocking(65536, timeout=0.01)
            except pexpect.TIMEOUT:
                pass
        try:
            t.raw += t.child.read_nonblocking(65536, timeout=0)
        except pexpect.TIMEOUT:
            pass
        assert "gradcli" not in t.text  # echo off before the REPL printed anything
        t.line("print('early' + 'bird')")
        t.expect(r"^earlybird$")
        t.ready()
        assert t.text.count("print('early' + 'bird')") >= 1
        banner = t.text.index("type :help")
        assert "print('early'" not in t.text[:banner]  # not echoed by the terminal
        assert t.exit_status() == 0
    finally:
        if t.child.isalive():
            t.child.terminate(force=True)


@deadline()
def test_no_cursor_position_requests(spawn, env):
    assert "PROMPT_TOOLKIT_NO_CPR" not in env  # a terminal that never answers them
    t = spawn("repl")
    out = t.run("1 + 1")
    assert re.search(r"^2$", out, re.M)
    t.run("def f(a):\r    return a * 2\r")
    out = t.run("f(21)")
    assert re.search(r"^42$", out, re.M)
    assert "\x1b[6n" not in t.raw  # prompt_toolkit never asked where the cursor is
    assert "CPR" not in t.text and "WARNING" not in t.text
    assert t.exit_status() == 0


@deadline()
def test_help_call_points_to_the_help_command(spawn):
    t = spawn("repl")
    out = t.run("help()")
    assert "gradcli's help is the :help command" in out
    assert ":explain EXPR [GRAD]" in out
    out = t.run("help(ones)")  # help on a value: the command that describes one
    assert ("Python's help() is not available in gradcli: :show ones describes a value "
            "(shape, dtype, grad_fn, values, .grad); :help lists the REPL's commands") in out
    assert "Error" not in out
    assert t.exit_status() == 0


@deadline()
def test_explain_of_a_non_scalar_suggests_its_gradient_form(spawn):
    t = spawn("repl")
    t.run("x = tensor([1., 2.], requires_grad=True)")
    out = t.run(":explain x * 3")
    assert ("x * 3 has 2 elements, and backward needs a gradient for a non-scalar output: "
            "give it as a second argument, e.g. :explain x * 3, ones_like(x * 3)") in out
    out = t.run(":explain x * 3, ones_like(x * 3)")
    assert "MulBackward0" in out
    assert t.exit_status() == 0


@deadline(180)
def test_interrupted_backward_leaves_a_note(spawn):
    t = spawn("repl")
    t.line("x = ones(1, requires_grad=True)")
    t.ready()
    t.line("y = x")
    t.ready()
    t.run("for i in range(400000):\r    y = y * 1.0\r")
    t.line("print('backward'); y.backward(); print('finished')")
    t.expect(r"^backward$")
    t.send("\x03")
    t.expect(r"KeyboardInterrupt: interrupted at")
    t.expect(r"note: the backward pass was cut short: part of its graph is already freed")
    t.ready()
    assert not re.search(r"^finished$", t.text, re.M)
    assert "tensor([2.])" in t.run("x.detach() * 2")  # the session is kept
    # with retain_graph=True nothing is freed: the note says so
    t.line("y = x")
    t.ready()
    t.run("for i in range(400000):\r    y = y * 1.0\r")
    t.line("print('again'); y.backward(retain_graph=True); print('finished')")
    t.expect(r"^again$")
    t.send("\x03")
    t.expect(r"KeyboardInterrupt: interrupted at")
    m = t.expect(r"note: the backward pass was cut short: (.*)")
    assert m.group(1).startswith("its graph is kept (retain_graph)"), m.group(1)
    t.ready()
    assert t.exit_status() == 0
