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


#: text after a command's --help: what a help screen is too short to hold
APPENDIX = {"test": """
### The JSON report of `gradcli test --json FILE` (schema `gradcli.test/1`)

One document per run (`-` writes it to stdout and the human report to stderr). Fields are
never removed or changed in meaning within a schema; a new field may be added.

```json
{
  "schema": "gradcli.test/1",
  "summary": {"total": 2, "passed": 1, "failed": 1, "errors": 0, "timed_out": 0,
              "deselected": 0, "duration": 0.41, "interrupted": false, "exit_code": 1},
  "settings": {"seed": 0, "timeout": 60.0},
  "tests": [
    {"path": "tests/test_square.grad", "status": "failed", "duration": 0.02, "start": 0.01,
     "kind": "AssertionError", "message": "assert tensor(4.) == 13", "line": 4, "col": 1,
     "report": "tests/test_square.grad:4:1: AssertionError: ...", "golden": null,
     "diff": "", "stdout": "", "stderr": ""}
  ]
}
```

- `summary`: counts by status (`errors`: files that could not run, such as a syntax error;
  `timed_out`: over `--timeout`), the files left out by `-k` (`deselected`), the run's
  wall-clock seconds, whether Ctrl-C cut it short, and the exit code.
- `settings`: the seed every file started from and the per-file timeout (null: none).
- `tests`: one entry per file, in the order the files were given (also with `-n`).
  `status` is `passed`, `failed` (a failed assert, a runtime error, a resource guard, a
  golden-output mismatch), `error` or `timeout`; `start` is when the file began, in
  seconds from the start of the run, and `duration` how long its program ran (with `-n N`,
  files overlap); `kind` is the error's kind (`AssertionError`, `OutputMismatch`, `Timeout`,
  ...; empty when passed), `message` its one-line text, `line`/`col` the script's failing
  place (1-based; null when there is none), `report` the whole text the terminal shows
  (with a failed assert's values), `golden` the `NAME.out` compared (or null), `diff` the
  unified diff of a golden mismatch, `stdout`/`stderr` what the program printed.
"""}


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
        parts.append(APPENDIX.get(command, ""))
    (HERE / "commands.md").write_text("".join(parts), encoding="utf-8")
    print(f"wrote {HERE / 'commands.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
