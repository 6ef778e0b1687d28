"""The REPL's logic in-process: Enter and indentation rules, completion,
meta-commands, error survival, history location, and the real PromptSession
fed through prompt_toolkit's pipe input (keys in, accepted text out)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gradcli.cli import repl as repl_mod
from gradcli.cli.repl_core import (
    META_COMMANDS,
    Repl,
    completions,
    enter_action,
    help_text,
    next_indent,
    split_explain_args,
)


@pytest.fixture
def repl(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    return Repl(seed=0)


def run(repl, capsys, text):
    capsys.readouterr()
    assert repl.handle(text) is True
    return capsys.readouterr()


# ------------------------------------------------------------------ Enter
@pytest.mark.parametrize("text, action", [
    ("x = 1", "accept"),
    ("x * 2", "accept"),
    ("for i in range(3): print(i)", "accept"),
    ("def f(a):", "newline"),
    ("def f(a):\n    return a", "newline"),
    ("def f(a):\n    return a\n", "accept"),          # an empty line ends the block
    ("def f(a):\n    return a\n    ", "accept"),      # ... also an indented empty line
    ("for i in x:\n    ", "accept"),                  # Python's prompt would also stop here
    ("x = (1,", "newline"),
    ("x = (1,\n", "newline"),                          # empty line inside brackets: continue
    ("s = '''abc", "newline"),
    ("s = '''abc\n", "newline"),
    ("x = 1 + \\", "newline"),
    ("@no_grad()", "newline"),
    ("class A:\n    @staticmethod", "newline"),            # a decorator inside a block
    ("class A:\n    def f(a):\n        return 1\n    @staticmethod  # g", "newline"),
    ("if x:\n    pass\nelse:", "newline"),
    ("for i in x:\n    if i:", "newline"),               # nested block headers
    ("def f():\n    y = (1,", "newline"),                # brackets inside a block
    ("def f():\n    return 1\n", "accept"),
    (":graph x", "accept"),
    ("   :help", "accept"),
    ("", "accept"),
    ("x = = 1", "accept"),                             # a syntax error is reported at once
])
def test_enter_action(text, action):
    assert enter_action(text) == action


def test_enter_inside_a_multi_line_input_opens_a_line():
    text = "def f(a):\n    return a\n"
    assert enter_action(text, cursor=3) == "newline"


@pytest.mark.parametrize("line, indent", [
    ("def f(a):", "    "),
    ("    for i in range(3):", "        "),
    ("    y = a * 2", "    "),
    ("        return y", "    "),
    ("    pass", ""),
    ("    break  # done", ""),
    ("x = 1", ""),
    ("if a:  # comment", "    "),
    ("s = 'a:'", ""),
    ("xs = [", "    "),
    ("if s == 'a\\'b':  # an escaped quote stays inside the string", "    "),
    ("s = 'a\\'b'  # then the comment ends with a colon:", ""),
])
def test_next_indent(line, indent):
    assert next_indent(line) == indent


# ------------------------------------------------------------------ completion
def test_completion_of_tensor_methods(repl):
    repl.handle("x = ones(2)")
    prefix, names = completions(repl.session, "x.su")
    assert prefix == "su"
    assert {"sum", "sub", "sub_"} <= set(names)
    assert all(n.startswith("su") for n in names)
    _, names = completions(repl.session, "x.st")
    assert {"std", "stride"} <= set(names)
    assert "stft" in names
    _, names = completions(repl.session, "x.to_")
    assert "to_mkldnn" not in names and "to_sparse" in names  # one gradcli lacks, one it has
    prefix, names = completions(repl.session, "y = x.grad.nu")
    assert prefix == "nu" and "numel" in names
    _, names = completions(repl.session, "x.")
    assert "backward" in names and "requires_grad" in names
    assert not any(n.startswith("_") for n in names)
    assert "numpy" not in names                       # the sandbox never exposes it


def test_completion_of_names_keywords_and_modules(repl):
    repl.handle("my_variable = 3")
    assert completions(repl.session, "my_v") == ("my_v", ["my_variable"])
    _, names = completions(repl.session, "on")
    assert "ones" in names and "ones_like" in names
    _, names = completions(repl.session, "whi")
    assert "while" in names
    _, names = completions(repl.session, "torch.ze")
    assert {"zeros", "zeros_like"} <= set(names)
    _, names = completions(repl.session, "torch.nn.functional.re")
    assert "relu" in names
    repl.handle("import torch.nn.functional as F")
    _, names = completions(repl.session, "F.softm")
    assert names == ["softmax", "softmin"]
    repl.handle("import math")
    _, names = completions(repl.session, "math.sq")
    assert names == ["sqrt"]


def test_completion_evaluates_nothing_and_skips_strings(repl):
    repl.handle("n = 0")
    assert completions(repl.session, "'abc'.up") == ("up", [])
    assert completions(repl.session, "print('on") == ("", [])
    assert completions(repl.session, "# on") == ("", [])
    assert completions(repl.session, "1.") == ("", [])
    assert completions(repl.session, "undefined_thing.su") == ("su", [])
    assert repl.session.globals["n"] == 0


def test_completion_of_meta_commands(repl):
    assert completions(repl.session, ":gr") == (":gr", [":grads", ":graph"])
    assert completions(repl.session, ":") [1][0].startswith(":")
    repl.handle("x = ones(2)")
    _, names = completions(repl.session, ":graph x.su")
    assert "sum" in names


# ------------------------------------------------------------------ running inputs
def test_values_are_echoed_and_none_is_not(repl, capsys):
    assert run(repl, capsys, "x = ones(2)").out == ""
    assert run(repl, capsys, "x * 2").out == "tensor([2., 2.])\n"
    assert run(repl, capsys, "None").out == ""
    assert run(repl, capsys, "1; 2").out == "1\n2\n"
    assert run(repl, capsys, "'a'").out == "'a'\n"
    assert run(repl, capsys, "def f(a):\n    return a * 3").out == ""
    assert run(repl, capsys, "f(x)").out == "tensor([3., 3.])\n"


def test_errors_keep_the_session(repl, capsys):
    repl.handle("x = ones(2)")
    res = run(repl, capsys, "ones(3) + ones(2)")
    assert res.out == ""
    assert "RuntimeError: The size of tensor a (3) must match the size of tensor b (2)" in res.err
    assert "    1 | ones(3) + ones(2)\n      | ^^^^^^^^^^^^^^^^^" in res.err
    assert "Traceback" not in res.err
    res = run(repl, capsys, "open('f')")
    assert "ForbiddenError" in res.err or "not available" in res.err
    assert run(repl, capsys, "x").out == "tensor([1., 1.])\n"


def test_errors_in_functions_defined_earlier_show_their_own_source(repl, capsys):
    repl.handle("def g(a):\n    return a + ones(3)")
    res = run(repl, capsys, "g(ones(2))")
    assert "return a + ones(3)" in res.err
    assert "call chain" in res.err


def test_guard_errors_keep_the_session(monkeypatch, capsys):
    from gradcli.lang import Limits
    r = Repl(limits=Limits.from_env(max_steps=500))
    r.handle("x = 5")
    res = run(r, capsys, "while True:\n    pass\n")
    assert "LimitError" in res.err
    assert run(r, capsys, "x + 1").out == "6\n"


def test_keyboard_interrupt_in_a_program_keeps_the_session(repl, capsys, monkeypatch):
    from gradcli.engine.tensor import Tensor
    repl.handle("x = ones(2)")

    def interrupted(self, *a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(Tensor, "sum", interrupted)
    res = run(repl, capsys, "y = x.sum()")
    assert "KeyboardInterrupt: interrupted at <input-" in res.err
    assert "variables are kept" in res.err
    monkeypatch.undo()
    assert run(repl, capsys, "x.sum()").out == "tensor(2.)\n"


def test_internal_errors_keep_the_session(repl, capsys, monkeypatch):
    repl.handle("x = ones(2)")

    def broken(*a, **k):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(repl.session, "run", broken)
    res = run(repl, capsys, "x")
    assert "internal error" in res.err and "a bug" in res.err
    monkeypatch.undo()
    assert run(repl, capsys, "x").out == "tensor([1., 1.])\n"


# ------------------------------------------------------------------ meta-commands
def test_meta_graph_grads_explain_show(repl, capsys):
    repl.handle("w = tensor([1., 2.], requires_grad=True)")
    repl.handle("y = (w * w).sum()")
    out = run(repl, capsys, ":graph y").out
    assert "SumBackward0" in out and "MulBackward0" in out and "AccumulateGrad w" in out
    out = run(repl, capsys, ":explain y").out
    assert "d(a*b)/da = b" in out
    assert repl.session.lookup("w").grad is None         # explain has no side effects
    out = run(repl, capsys, ":explain w * 2, ones(2)").out
    assert "[2., 2.]" in out
    out = run(repl, capsys, ":explain w * 2 ones(2)").out
    assert "[2., 2.]" in out
    res = run(repl, capsys, ":explain w * 2")
    assert ("w * 2 has 2 elements, and backward needs a gradient for a non-scalar output: "
            "give it as a second argument, e.g. :explain w * 2, ones_like(w * 2)") in res.err
    repl.handle("y.backward()")
    out = run(repl, capsys, ":grads").out
    assert "w" in out and "[2., 4.]" in out
    out = run(repl, capsys, ":show w").out
    assert "torch.float32" in out and "requires_grad" in out


def test_meta_arguments_are_sandboxed_expressions(repl, capsys):
    res = run(repl, capsys, ":graph open('x')")
    assert "open" in res.err and res.out == ""
    res = run(repl, capsys, ":graph y = 2")
    assert "expected an expression" in res.err
    assert "y" not in repl.session.globals
    res = run(repl, capsys, ":graph 3")
    assert ":graph: TypeError" in res.err
    res = run(repl, capsys, ":graph")
    assert "usage: :graph EXPR" in res.err
    res = run(repl, capsys, ":grads now")
    assert "takes no argument" in res.err


def test_unknown_meta_command(repl, capsys):
    res = run(repl, capsys, ":nope")
    assert "unknown command ':nope'" in res.err and ":help" in res.err
    res = run(repl, capsys, ":gr")
    assert ":graph" in res.err and ":grads" in res.err


def test_help_reset_and_quit(repl, capsys):
    out = run(repl, capsys, ":help").out
    for name in META_COMMANDS:
        assert name in out
    assert out.strip() == help_text().strip()
    repl.handle("x = ones(2)")
    repl.handle("set_printoptions(precision=2)")
    assert "session reset" in run(repl, capsys, ":reset").out
    assert "NameError" in run(repl, capsys, "x").err
    assert run(repl, capsys, "tensor([1.23456])").out == "tensor([1.2346])\n"
    assert repl.handle(":quit") is False
    assert repl.handle(":q") is False
    assert repl.handle("exit") is False
    repl.handle("quit = 3")
    assert repl.handle("quit") is True                   # a user's own name wins


def test_split_explain_args():
    assert split_explain_args("y") == ("y", None)
    assert split_explain_args("y, ones(3)") == ("y, ones(3)", None)   # a tuple: split later
    assert split_explain_args("a + b ones(2)") == ("a + b", "ones(2)")
    assert split_explain_args("f(a, b) tensor([1., 2.])") == ("f(a, b)", "tensor([1., 2.])")


# ------------------------------------------------------------------ history location
def test_history_path(monkeypatch, tmp_path):
    monkeypatch.delenv("GRADCLI_HISTORY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert repl_mod.history_path() == str(tmp_path / ".local/share/gradcli/history")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert repl_mod.history_path() == str(tmp_path / "data/gradcli/history")
    monkeypatch.setenv("GRADCLI_HISTORY", str(tmp_path / "h"))
    assert repl_mod.history_path() == str(tmp_path / "h")
    assert repl_mod.history_path(str(tmp_path / "opt")) == str(tmp_path / "opt")
    assert repl_mod.history_path("") is None
    monkeypatch.setenv("GRADCLI_HISTORY", "")
    assert repl_mod.history_path() is None


def test_unwritable_history_falls_back_to_memory(tmp_path):
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    from gradcli.cli.repl_ui import make_history
    h, notice = make_history(str(tmp_path / "new" / "dir" / "history"))
    assert isinstance(h, FileHistory) and notice is None
    blocker = tmp_path / "file"
    blocker.write_text("")
    h, notice = make_history(str(blocker / "history"))
    assert isinstance(h, InMemoryHistory) and "history is not saved" in notice
    h, notice = make_history(None)
    assert isinstance(h, InMemoryHistory) and notice is None


# ------------------------------------------------------------------ the PromptSession
def prompt_with_keys(repl, keys, tmp_path, history=None):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from gradcli.cli.repl_ui import make_prompt_session
    with create_pipe_input() as inp:
        inp.send_text(keys)
        session = make_prompt_session(repl, history_path=history, color=False, input=inp,
                                      output=DummyOutput())
        return session.prompt()


def test_prompt_session_multi_line_block_keys_arriving_at_once(repl, tmp_path):
    # keys that are all there at once are a paste (or typed ahead): they carry their own
    # indentation and get none added, so they read as Python's prompt reads them (the
    # auto-indent of keys typed one by one is tested in a real pty: tests/test_repl.py)
    text = prompt_with_keys(repl, "def f(a):\r    b = a * 2\r    return b\r\r", tmp_path)
    assert text == "def f(a):\n    b = a * 2\n    return b"
    text = prompt_with_keys(repl, "for i in range(2):\n    if i:\n        print(i)\n\n",
                            tmp_path)
    assert text == "for i in range(2):\n    if i:\n        print(i)"
    text = prompt_with_keys(repl, "x = (1,\r\r2)\r", tmp_path)
    assert text == "x = (1,\n\n2)"   # an empty line inside brackets continues


def test_prompt_session_tab_completes(repl, tmp_path):
    repl.handle("x = ones(2)")
    assert prompt_with_keys(repl, "x.nume\t()\r", tmp_path) == "x.numel()"
    text = prompt_with_keys(repl, "def f():\r\tpass\r\r", tmp_path)
    assert text == "def f():\n    pass"                 # Tab in indentation indents


def test_prompt_session_history_file(repl, tmp_path):
    hist = tmp_path / "h"
    assert prompt_with_keys(repl, "first_line = 1\r", tmp_path, history=str(hist)) == \
        "first_line = 1"
    assert "+first_line = 1" in hist.read_text().splitlines()
    assert prompt_with_keys(repl, "\x1b[A\r", tmp_path, history=str(hist)) == "first_line = 1"


# ------------------------------------------------------------------ the command
def test_repl_help_lists_options():
    proc = subprocess.run([sys.executable, "-m", "gradcli", "repl", "--help"],
                          capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, NO_COLOR="1", COLUMNS="120"))
    assert proc.returncode == 0
    for opt in ("--seed", "--no-color", "--history", "--max-steps", "--max-elements",
                "--max-depth", "--max-length", ":graph"):
        assert opt in proc.stdout


def test_bad_limit_is_a_usage_error():
    proc = subprocess.run([sys.executable, "-m", "gradcli", "repl", "--max-steps", "0"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2


def test_importing_the_repl_command_is_cheap():
    code = ("import sys, gradcli.cli.repl; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('prompt_toolkit', 'pygments', 'rich', 'numpy', 'lark')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.strip() == "[]"


def test_seed_and_reset_reseed(capsys):
    r = Repl(seed=3)
    first = run(r, capsys, "randn(3)").out
    assert first.startswith("tensor([")
    assert run(r, capsys, "randn(3)").out != first
    run(r, capsys, ":reset")
    assert run(r, capsys, "randn(3)").out == first
    assert run(Repl(seed=0), capsys, "randn(3)").out != first
