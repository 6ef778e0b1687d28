"""Error reports and exit codes of the real CLI (``python -m gradcli``)."""
import os
import signal
import subprocess
import sys
import time

import pytest
from process_helpers import sigint_as_in_a_terminal

ENV = dict(os.environ, NO_COLOR="1", COLUMNS="100", TERMINAL_WIDTH="100")


def gradcli(*args, stdin=None, env=None, cwd=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "gradcli", *args], capture_output=True,
                          text=True, input=stdin, env=env or ENV, cwd=cwd, timeout=timeout)


def run_prog(tmp_path, source, *args, name="prog.grad"):
    path = tmp_path / name
    path.write_text(source)
    return gradcli("run", name, *args, cwd=tmp_path)


def assert_no_traceback(proc):
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


# ------------------------------------------------------------ syntax errors
def test_syntax_error_report_exit_2(tmp_path):
    p = run_prog(tmp_path, "x = 1\nif x > 1\n    print(x)\n")
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr == ("prog.grad:2:9: SyntaxError: expected ':'\n"
                        "    2 | if x > 1\n"
                        "      |         ^\n")


def test_unclosed_bracket_points_at_the_bracket(tmp_path):
    p = run_prog(tmp_path, "y = torch.ones(2,\nprint(y)\n")
    assert p.returncode == 2
    assert p.stderr == ("prog.grad:1:15: SyntaxError: '(' was never closed\n"
                        "    1 | y = torch.ones(2,\n"
                        "      |               ^\n")


def test_unexpected_indent(tmp_path):
    p = run_prog(tmp_path, "x = 1\n    y = 2\n")
    assert p.returncode == 2
    assert p.stderr == ("prog.grad:2:5: IndentationError: unexpected indent\n"
                        "    2 |     y = 2\n"
                        "      |     ^\n")


def test_nothing_runs_when_the_program_has_a_syntax_error(tmp_path):
    p = run_prog(tmp_path, "print('before')\nx = = 1\n")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.startswith("prog.grad:2:5: SyntaxError: invalid syntax\n")


# ------------------------------------------------------------ runtime errors
def test_runtime_error_has_pytorch_text_location_and_caret(tmp_path):
    src = ("import torch\n"
           "y = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)\n"
           "z = 2 * y + 1\n"
           "z.backward()\n")
    p = run_prog(tmp_path, src)
    assert p.returncode == 1
    assert p.stderr == ("prog.grad:4:1: RuntimeError: grad can be implicitly created only for "
                        "scalar outputs\n"
                        "    4 | z.backward()\n"
                        "      | ^^^^^^^^^^^^\n")


def test_output_before_the_error_is_kept(tmp_path):
    p = run_prog(tmp_path, "print('a')\nprint(1 / 0)\nprint('b')\n")
    assert p.returncode == 1 and p.stdout == "a\n"
    assert p.stderr == ("prog.grad:2:7: ZeroDivisionError: division by zero\n"
                        "    2 | print(1 / 0)\n"
                        "      |       ^^^^^\n")


def test_error_inside_functions_shows_the_call_chain(tmp_path):
    src = ("import torch\n"
           "def f(a, b):\n"
           "    return a + b\n"
           "\n"
           "def g(x):\n"
           "    return f(x, torch.ones(2))\n"
           "\n"
           "print(g(torch.ones(3)))\n")
    p = run_prog(tmp_path, src)
    assert p.returncode == 1
    assert p.stderr == (
        "prog.grad:3:12: RuntimeError: The size of tensor a (3) must match the size of tensor b "
        "(2) at non-singleton dimension 0\n"
        "    3 |     return a + b\n"
        "      |            ^^^^^\n"
        "call chain (most recent call last):\n"
        "  prog.grad:8 in <module>\n"
        "  prog.grad:6 in g\n"
        "  prog.grad:3 in f\n")


def test_uncaught_raise_and_failed_assert(tmp_path):
    p = run_prog(tmp_path, "raise ValueError('bad value')\n")
    assert p.returncode == 1
    assert p.stderr.splitlines()[0] == "prog.grad:1:1: ValueError: bad value"
    p = run_prog(tmp_path, "x = 2\nassert x == 3, f'x is {x}'\n")
    assert p.returncode == 1
    # the message, then what the comparison saw (as pytest shows a failed assert)
    assert p.stderr == ("prog.grad:2:1: AssertionError: x is 2\n"
                        "    2 | assert x == 3, f'x is {x}'\n"
                        "      | ^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
                        "assert 2 == 3\n"
                        "  where x = 2\n")
    p = run_prog(tmp_path, "assert 1 > 2\n")
    assert p.stderr.splitlines()[0] == "prog.grad:1:1: AssertionError: assert 1 > 2"


def test_name_error_and_unsupported_torch_name(tmp_path):
    p = run_prog(tmp_path, "print(undefined_thing)\n")
    assert p.returncode == 1
    assert p.stderr.splitlines()[0] == \
        "prog.grad:1:7: NameError: name 'undefined_thing' is not defined"
    p = run_prog(tmp_path, "import torch\nx = torch.fft.frobnicate(torch.ones(2))\n")
    assert p.returncode == 1
    assert "torch.fft.frobnicate is not supported by gradcli" in p.stderr.splitlines()[0]
    p = run_prog(tmp_path, "from torch import frobnicate\n")
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == \
        "prog.grad:1:19: ForbiddenError: torch.frobnicate is not supported by gradcli"


def test_warnings_print_short_form_on_stderr(tmp_path):
    src = ("import torch\n"
           "x = torch.ones(2, requires_grad=True)\n"
           "y = x * 2\n"
           "print(y.grad)\n")
    p = run_prog(tmp_path, src)
    assert p.returncode == 0 and p.stdout == "None\n"
    assert p.stderr.startswith("prog.grad:4: UserWarning: The .grad attribute of a Tensor that "
                               "is not a leaf Tensor is being accessed.")
    assert p.stderr.endswith(".)\n  print(y.grad)\n") and p.stderr.count("\n") == 2


# ------------------------------------------------------------ files and streams
def test_missing_file_and_non_utf8(tmp_path):
    p = gradcli("run", "nope.grad", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr == "nope.grad: Error: cannot read file: No such file or directory\n"
    (tmp_path / "bin.grad").write_bytes(b"x = 1\ny = '\xff'\n")
    p = gradcli("run", "bin.grad", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.splitlines()[0] == \
        "bin.grad:2:6: SyntaxError: the file is not valid UTF-8 (byte 0xff)"


def test_several_files_each_fresh_exit_code_is_the_worst(tmp_path):
    (tmp_path / "a.grad").write_text("x = 1\nprint('a', x)\n")
    (tmp_path / "b.grad").write_text("print(x)\n")
    (tmp_path / "c.grad").write_text("print('c'\n")
    p = gradcli("run", "a.grad", "b.grad", "c.grad", cwd=tmp_path)
    assert p.stdout == "a 1\n"
    assert p.returncode == 2
    assert "b.grad:1:7: NameError: name 'x' is not defined" in p.stderr
    p = gradcli("run", "a.grad", "b.grad", cwd=tmp_path)
    assert p.returncode == 1


def test_stdin_program():
    p = gradcli("run", "-", stdin="print(1 + 1)\n")
    assert (p.returncode, p.stdout) == (0, "2\n")
    p = gradcli("run", "-", stdin="print(1 +)\n")
    assert p.returncode == 2 and p.stderr.startswith("<stdin>:1:10: SyntaxError")


def test_closed_stdout_ends_quietly(tmp_path):
    (tmp_path / "loop.grad").write_text("for i in range(200000):\n    print(i)\n")
    cmd = f"{sys.executable} -m gradcli run loop.grad | head -1"
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd=tmp_path, env=ENV,
                       timeout=60)
    assert p.stdout == "0\n"
    assert p.stderr == ""


def test_ctrl_c_exits_130_with_a_report(tmp_path):
    (tmp_path / "spin.grad").write_text("print('started', flush=True)\nwhile True:\n    pass\n")
    proc = subprocess.Popen([sys.executable, "-m", "gradcli", "run", "spin.grad"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            preexec_fn=sigint_as_in_a_terminal)
    assert proc.stdout.readline() == "started\n"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "KeyboardInterrupt" in err and "Traceback" not in err
    assert err.startswith("spin.grad:")


def test_keyboard_interrupt_cannot_be_caught_by_the_program(tmp_path):
    src = ("print('started', flush=True)\n"
           "while True:\n"
           "    try:\n"
           "        x = 1\n"
           "    except Exception:\n"
           "        print('caught')\n")
    (tmp_path / "spin.grad").write_text(src)
    proc = subprocess.Popen([sys.executable, "-m", "gradcli", "run", "spin.grad"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
                            preexec_fn=sigint_as_in_a_terminal)
    assert proc.stdout.readline() == "started\n"
    time.sleep(0.2)  # let the loop start (not needed for correctness, only for coverage)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "caught" not in out


# ------------------------------------------------------------ eval, check, help, version
def test_eval_echoes_the_last_expression():
    p = gradcli("eval", "x = ones(2, requires_grad=True); y = (x * 3).sum(); y.backward(); x.grad")
    assert (p.returncode, p.stdout) == (0, "tensor([3., 3.])\n")
    p = gradcli("eval", "print('hi')\nNone")
    assert (p.returncode, p.stdout) == (0, "hi\n")
    p = gradcli("eval", "'a' + 'b'")
    assert p.stdout == "'ab'\n"
    p = gradcli("eval", "1 / 0")
    assert p.returncode == 1 and p.stderr.startswith("<eval>:1:1: ZeroDivisionError")


def test_run_echo_flag(tmp_path):
    p = run_prog(tmp_path, "1 + 1\nx = 3\nx\nNone\nprint('p')\n", "--echo")
    assert p.stdout == "2\n3\np\n"


def test_check_reports_every_error_and_exit_2(tmp_path):
    (tmp_path / "bad.grad").write_text(
        "x = (1 +\n\ny = x.__class__\nimport os\nif y\n    pass\nz = open('f')\n")
    (tmp_path / "good.grad").write_text("import torch\nprint(torch.ones(2))\n")
    p = gradcli("check", "good.grad", "bad.grad", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stdout == "good.grad: ok\n"
    heads = [ln for ln in p.stderr.splitlines() if ln.startswith("bad.grad:")]
    assert heads[0] == "bad.grad:1:5: SyntaxError: '(' was never closed"
    assert any(h.startswith("bad.grad:5:5: SyntaxError: expected ':'") for h in heads)
    assert any(h.startswith("bad.grad:3:") and "__class__" in h for h in heads)
    assert any(h.startswith("bad.grad:4:8: ForbiddenError: import of 'os'") for h in heads)
    assert any(h.startswith("bad.grad:7:5: ForbiddenError: 'open'") for h in heads)
    p = gradcli("check", "good.grad", cwd=tmp_path)
    assert p.returncode == 0


def test_version_help_and_usage_errors():
    p = gradcli("--version")
    assert p.returncode == 0 and p.stdout.startswith("gradcli ")
    p = gradcli("--help")
    assert p.returncode == 0 and "run" in p.stdout and "eval" in p.stdout and "Examples" in p.stdout
    p = gradcli("run", "--help")
    assert p.returncode == 0 and "--max-steps" in p.stdout
    p = gradcli("run", "--bogus", "x.grad")
    assert p.returncode == 2
    p = gradcli("run", "--max-steps", "0", "x.grad")
    assert p.returncode == 2


@pytest.mark.parametrize("var,value", [("GRADCLI_MAX_STEPS", "abc"), ("GRADCLI_MAX_DEPTH", "-1")])
def test_bad_env_limits_are_usage_errors(var, value):
    p = gradcli("eval", "1", env=dict(ENV, **{var: value}))
    assert p.returncode == 2 and var in p.stderr
    assert_no_traceback(p)
