"""Write docs/commands.md from the typer app's --help texts (run after changing a command
or an option): python docs/make_commands.py"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COMMANDS = ["grad", "graph", "run", "eval", "check", "test", "repl"]
INTRO = """# Command reference

Every command and option of `gradcli`, as `gradcli COMMAND --help` prints them. Quote
arguments that hold brackets, parentheses, `*` or spaces (`--at 'x=[1,2,3]'`): zsh, the
default shell on macOS, treats an unquoted `[...]` as a file pattern.

`gradcli` alone on a terminal starts the REPL; with stdin not a terminal it runs stdin as a
program. Exit codes: 0 ok, 1 runtime error, failed assert or resource guard, 2 syntax
error, refused construct or usage error, 130 interrupted (Ctrl-C).

Environment: `GRADCLI_MAX_STEPS`, `GRADCLI_MAX_ELEMENTS`, `GRADCLI_MAX_DEPTH`,
`GRADCLI_MAX_LENGTH` (the guards, see [language.md](language.md#the-guards)),
`GRADCLI_HISTORY` (the REPL's history file), `NO_COLOR` (plain output),
`GRADCLI_EXACT_KERNELS=0` (plain numpy kernels instead of PyTorch's bit-for-bit ones).
"""


def help_text(args: list[str]) -> str:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    out = subprocess.run([sys.executable, "-m", "gradcli", *args, "--help"], capture_output=True,
                         text=True, env=env, check=True).stdout
    lines = [re.sub(r"─+", "", re.sub(r"[│╭╰╮╯]", "", line)).rstrip() for line in out.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def main() -> int:
    parts = [INTRO, "\n## gradcli\n\n```text\n" + help_text([]) + "\n```\n"]
    for command in COMMANDS:
        parts.append(f"\n## gradcli {command}\n\n```text\n" + help_text([command]) + "\n```\n")
    (HERE / "commands.md").write_text("".join(parts), encoding="utf-8")
    print(f"wrote {HERE / 'commands.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
