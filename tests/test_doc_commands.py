"""Every `gradcli` command in the README, in docs/ and in the examples of `gradcli COMMAND
--help` runs as pasted, in bash and in zsh (the default shell on macOS, which rejects an
unquoted `--at x=[1,2,3]`), and prints what the text shows after it.

Commands are the lines of ```console blocks that start with `$ gradcli` (the lines up to
the next `$` are their output; `...` stands for lines left out) and the lines of ```bash
blocks that start with `gradcli`. A `$ cat NAME` line's output is the file NAME, written
into the scratch directory the commands run in. zsh is skipped where it is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def _commands():
    """(document, files to write, command, expected output lines or None)."""
    found = []
    for doc in DOCS:
        files = {}
        for kind, body in FENCE.findall(doc.read_text(encoding="utf-8")):
            lines = body.splitlines()
            if kind == "bash":
                found += [(doc, dict(files), line, None) for line in lines
                          if line.startswith("gradcli ")]
            elif kind == "console":
                starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
                for n, i in enumerate(starts):
                    command = lines[i][2:]
                    output = lines[i + 1:starts[n + 1] if n + 1 < len(starts) else len(lines)]
                    if command.startswith("cat "):
                        files[command[4:].strip()] = "\n".join(output) + "\n"
                    elif command.startswith("gradcli "):
                        found.append((doc, dict(files), command, output or None))
    return found


# the files the --help examples name, so that they run (and their globs match in zsh)
HELP_FILES = {"prog.grad": "x = ones(2)\nprint(x)\n", "a.grad": "print(1)\n",
              "b.grad": "print(2)\n", "examples/seed_demo.grad": "assert 1 + 1 == 2\n",
              "tests/test_demo.grad": "assert 2 * 2 == 4\n"}


def _help_commands():
    """The example command lines of the --help texts (what follows an example on its line,
    after two spaces or more, is its explanation)."""
    import subprocess
    import sys

    found = []
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    for command in ["", "grad", "graph", "run", "eval", "check", "test", "repl"]:
        args = [sys.executable, "-m", "gradcli", *command.split(), "--help"]
        text = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120).stdout
        for line in text.splitlines():
            line = line.strip(" │")
            if line.startswith("Example: "):
                line = line[len("Example: "):]
            if line.startswith("gradcli ") and line not in ("gradcli run -",):
                found.append((Path(f"--help of gradcli {command}".strip()), HELP_FILES,
                              re.split(r"\s{2,}", line)[0], None))
    return found


COMMANDS = _commands() + _help_commands()
SHELLS = ["bash", "zsh"]


def test_the_docs_have_commands():
    assert len(COMMANDS) >= 10
    assert {doc.name for doc, *_ in COMMANDS} >= {"README.md", "language.md"}
    assert sum(doc.name.startswith("--help") for doc, *_ in COMMANDS) >= 10


def _matches(expected: list[str], got: str) -> bool:
    """The shown lines are the output's; `...` leaves lines out: the runs of lines between
    `...`s appear in the output in order (the first at its start unless `...` leads)."""
    got_lines = [line.rstrip() for line in got.rstrip("\n").splitlines()]
    want = [line.rstrip() for line in expected]
    if "..." not in want:
        return got_lines == want
    runs, run = [], []
    for line in want:
        if line == "...":
            runs.append(run)
            run = []
        else:
            run.append(line)
    runs.append(run)
    at = 0
    for k, run in enumerate(runs):
        if not run:
            continue
        if k == 0:  # no leading `...`: the output starts so
            if got_lines[:len(run)] != run:
                return False
            at = len(run)
            continue
        for start in range(at, len(got_lines) - len(run) + 1):
            if got_lines[start:start + len(run)] == run:
                at = start + len(run)
                break
        else:
            return False
    return True


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("doc,files,command,expected", COMMANDS,
                         ids=[f"{d.name}:{c[:60]}" for d, _, c, _ in COMMANDS])
def test_command_runs_as_pasted(shell, doc, files, command, expected, tmp_path):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    if shutil.which("gradcli") is None:
        pytest.skip("the gradcli command is not on PATH")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    proc = subprocess.run([shell, "-c", command], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=300, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1, 2), f"{shell}: exit {proc.returncode}\n{out}"
    assert "Traceback" not in out and "no matches found" not in out, out
    assert "Usage:" not in proc.stderr, f"{shell} passed other arguments:\n{out}"
    if expected is not None:
        assert _matches(expected, out), f"{shell}: printed\n{out}\nthe text shows\n" + \
            "\n".join(expected)
